#pragma once
// Scratch trace files for the trace-writer tests: a unique path per test in the
// system temp folder, removed after the run unless SOHUSIM_KEEP_TEST_TRACES is set.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

namespace sohusim::counters::testing_files {

inline std::string unique_temp_path(const std::string& stem) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name() + "_" + stem;
  std::replace(name.begin(), name.end(), '/', '_');
  return (std::filesystem::temp_directory_path() / ("sohusim_" + std::to_string(::getpid()) + "_" + name)).string();
}

inline std::vector<std::string>& written_files() {
  static std::vector<std::string> files;
  return files;
}

class RemoveWrittenFiles : public ::testing::Environment {
 public:
  void TearDown() override {
    if (std::getenv("SOHUSIM_KEEP_TEST_TRACES") != nullptr) return;
    std::error_code ignored;
    for (const std::string& f : written_files()) std::filesystem::remove(f, ignored);
  }
};

// One registration for the whole test program, whichever test file includes this first.
inline ::testing::Environment* const kRemoveWrittenFiles = ::testing::AddGlobalTestEnvironment(new RemoveWrittenFiles);

inline std::string temp_path(const std::string& stem) {
  written_files().push_back(unique_temp_path(stem));
  return written_files().back();
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace sohusim::counters::testing_files
