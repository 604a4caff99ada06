#pragma once
// The profiler's outputs of one analysed profile: the HTML report, the DOT dependency graph
// and the per-op CSV, each written when its path is non-empty. Shared by `sohusim report`
// and `sohusim run --report`. A path that cannot be written is a UsageError.
#include <string>

#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::tools {

void write_report(const profiler::RunProfile& profile, const profiler::Analysis& analysis, const std::string& html,
                  const std::string& dot, const std::string& csv, const std::string& subtitle = {});

}  // namespace sohusim::tools
