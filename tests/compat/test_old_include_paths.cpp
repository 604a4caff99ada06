// The previous release's include paths still build and name the same types (compat/).
#include <type_traits>

#include <gtest/gtest.h>

#include "sohusim/counters/analysis.hpp"
#include "sohusim/counters/clock_sync.hpp"
#include "sohusim/counters/profile.hpp"
#include "sohusim/counters/profile_export.hpp"
#include "sohusim/counters/report_html.hpp"
#include "sohusim/models/cpu_agent.hpp"
#include "sohusim/models/gemm_plan.hpp"
#include "sohusim/models/host_system.hpp"
#include "sohusim/models/sohu_device.hpp"
#include "sohusim/sim/config.hpp"
#include "sohusim/sim/config_error.hpp"
#include "sohusim/sim/config_schema.hpp"
#include "sohusim/sim/units.hpp"

// The program links SystemC (through the old models/ headers), whose library refers to sc_main.
extern "C" int sc_main(int, char**) {
  return 0;
}

namespace sohusim {

static_assert(std::is_same_v<counters::RunProfile, profiler::RunProfile>);
static_assert(std::is_same_v<counters::Analysis, profiler::Analysis>);
static_assert(std::is_same_v<counters::ClockSync, profiler::ClockSync>);
static_assert(std::is_same_v<counters::DotOptions, profiler::DotOptions>);
static_assert(std::is_same_v<counters::ReportOptions, profiler::ReportOptions>);
static_assert(std::is_same_v<sim::Config, config::Config>);
static_assert(std::is_same_v<sim::ConfigLoader, config::ConfigLoader>);
static_assert(std::is_same_v<sim::ConfigError, config::ConfigError>);
static_assert(std::is_same_v<sim::Schema, config::Schema>);
static_assert(std::is_same_v<sim::Quantity, config::Quantity>);
static_assert(std::is_same_v<models::SohuDevice, device::SohuDevice>);
static_assert(std::is_same_v<models::CpuAgent, host::CpuAgent>);
static_assert(std::is_same_v<models::HostSystem, platform::HostSystem>);

TEST(OldIncludePaths, NameTheTypesWhereTheyLiveNow) {
  counters::RunProfile p;
  EXPECT_TRUE(p.ops.empty());
  EXPECT_DOUBLE_EQ(sim::parse_quantity("1.5 GHz", sim::Dimension::Frequency), 1.5e9);
}

}  // namespace sohusim
