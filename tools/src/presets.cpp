#include <cstdlib>

#include "cli.hpp"

namespace sohusim::tools {

std::vector<std::filesystem::path> preset_dirs(const GlobalOptions& global) {
  std::vector<std::filesystem::path> dirs(global.config_dirs.begin(), global.config_dirs.end());
  if (const char* env = std::getenv("SOHUSIM_CONFIGS"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  for (const char* d : {SOHUSIM_SOURCE_CONFIGS, SOHUSIM_INSTALLED_CONFIGS}) {
    if (std::filesystem::is_directory(d, ec)) dirs.emplace_back(d);
  }
  return dirs;
}

}  // namespace sohusim::tools
