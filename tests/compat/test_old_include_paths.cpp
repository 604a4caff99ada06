// The previous release's include paths still build and name the same types (compat/).
#include <gtest/gtest.h>

#include <type_traits>

#include "sohusim/counters/analysis.hpp"
#include "sohusim/counters/clock_sync.hpp"
#include "sohusim/counters/profile.hpp"
#include "sohusim/counters/profile_export.hpp"
#include "sohusim/counters/report_html.hpp"

namespace sohusim {

static_assert(std::is_same_v<counters::RunProfile, profiler::RunProfile>);
static_assert(std::is_same_v<counters::Analysis, profiler::Analysis>);
static_assert(std::is_same_v<counters::ClockSync, profiler::ClockSync>);
static_assert(std::is_same_v<counters::DotOptions, profiler::DotOptions>);
static_assert(std::is_same_v<counters::ReportOptions, profiler::ReportOptions>);

TEST(OldIncludePaths, NameTheTypesWhereTheyLiveNow) {
  counters::RunProfile p;
  EXPECT_TRUE(p.ops.empty());
}

}  // namespace sohusim
