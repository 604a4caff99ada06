#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

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

std::vector<std::string> preset_dir_strings(const GlobalOptions& global) {
  std::vector<std::string> out;
  for (const auto& p : preset_dirs(global)) out.push_back(p.string());
  return out;
}

void add_layer_options(CLI::App* cmd, platform::ConfigChoice& choice) {
  cmd->add_option("--arch", choice.arch,
                  "device architecture for every host: a preset (configs/arch) or a YAML file (default: the system's)");
  cmd->add_option("--hbm", choice.hbm,
                  "HBM preset (configs/hbm, e.g. hbm3e-9600): replaces the arch's HBM generation, keeps its stacks");
  cmd->add_option("--config", choice.configs,
                  "config file or preset, layered after the arch, the HBM preset and the system's set list "
                  "(repeatable, in order)");
}

std::unique_ptr<platform::Simulator> make_simulator(const platform::SimulatorOptions& options) {
  // A trace path that cannot be written is the user's to fix (exit 2), like any other output's.
  if (!options.trace_file.empty() && !std::ofstream(options.trace_file))
    throw UsageError("--trace: cannot write `" + options.trace_file + "`");
  try {
    return std::make_unique<platform::Simulator>(options);
  } catch (const config::ConfigError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::pair<std::string, std::filesystem::path>> seen;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    std::error_code ec;
    const std::filesystem::path whole = std::filesystem::absolute(path, ec).lexically_normal();
    std::filesystem::path p = std::filesystem::weakly_canonical(whole, ec);  // through symlinks
    if (ec) p = whole;
    for (const auto& [other, q] : seen) {
      if (p == q) throw UsageError(flag + " and " + other + " both write `" + path + "`; give each its own file");
    }
    seen.emplace_back(flag, p);
  }
}

void print_written(const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::string line;
  for (const auto& [flag, path] : outputs) {
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec)) continue;
    const double bytes = static_cast<double>(std::filesystem::file_size(path, ec));
    std::ostringstream size;
    size.precision(3);
    if (bytes < 1e3)
      size << bytes << " B";
    else if (bytes < 1e6)
      size << bytes / 1e3 << " kB";
    else if (bytes < 1e9)
      size << bytes / 1e6 << " MB";
    else
      size << bytes / 1e9 << " GB";
    line += (line.empty() ? "" : ", ") + path + " (" + size.str() + ", " + flag + ")";
  }
  if (!line.empty()) std::cerr << "sohusim " << command << ": wrote " << line << "\n";
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "`" + text + "` is not a number";
        } catch (const std::exception&) {
          return "`" + text + "` is not a number";
        }
        if (!std::isfinite(v) || v < lo || v > hi) {
          std::ostringstream os;
          os << "value " << text << " not in [" << lo << ", " << hi << "]";
          return os.str();
        }
        return {};
      },
      "FLOAT in a range");
}

driver::DType parse_dtype(const std::string& s) {
  try {
    return driver::parse_dtype(s);
  } catch (const std::invalid_argument&) {
    throw UsageError("--dtype: `" + s + "` (allowed: fp8, fp8_e5m2, bf16, fp16, fp32)");
  }
}

}  // namespace sohusim::tools
