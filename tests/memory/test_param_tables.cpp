// The parameter tables (config::ParamTable) of memory/: each struct's defaults are its
// schema's, the schema declares every row as the row states it, and loading fills every
// member a row names.
#include <string>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"
#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/controller_params.hpp"
#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/fast_dram_calibration.hpp"
#include "sohusim/memory/hbm_memory.hpp"
#include "sohusim/memory/hbm_schema.hpp"
#include "sohusim/memory/host_dram_params.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/memory/sram_params.hpp"
#include "sohusim/sim/core_schema.hpp"

namespace sohusim::memory {
namespace {

config::Schema full_schema() {
  config::Schema schema = sim::core_schema();
  schema.merge(memory_schema());
  return schema;
}

config::Config defaults() {
  return config::ConfigLoader(full_schema(), {std::string(SOHUSIM_SOURCE_DIR) + "/configs"}).resolve();
}

// Every member a row names holds the same value in `a` and `b`.
template <class T>
void expect_same_members(const config::ParamTable<T>& table, const T& a, const T& b) {
  for (const auto& row : table.rows()) {
    if (row.has_member()) {
      EXPECT_EQ(row.value(a), row.value(b)) << row.spec().key;
    }
  }
}

// Every row is declared in the schema as the row states it; an optional row without its
// default.
template <class T>
void expect_declared(const config::ParamTable<T>& table, const config::Schema& schema) {
  for (const auto& row : table.rows()) {
    if (row.is_section()) {
      EXPECT_EQ(schema.section_description(row.spec().key), row.spec().description) << row.spec().key;
      continue;
    }
    const config::ParamSpec* spec = schema.find(row.spec().key);
    ASSERT_NE(spec, nullptr) << row.spec().key;
    EXPECT_EQ(spec->type, row.spec().type) << row.spec().key;
    EXPECT_EQ(spec->min, row.spec().min) << row.spec().key;
    EXPECT_EQ(spec->max, row.spec().max) << row.spec().key;
    EXPECT_EQ(spec->unit, row.spec().unit) << row.spec().key;
    EXPECT_EQ(spec->description, row.spec().description) << row.spec().key;
    EXPECT_EQ(spec->choices, row.spec().choices) << row.spec().key;
    EXPECT_EQ(spec->bare_number, row.spec().bare_number) << row.spec().key;
    if (row.is_optional()) {
      EXPECT_FALSE(spec->default_value.has_value()) << row.spec().key;
    } else {
      EXPECT_EQ(spec->default_value, row.spec().default_value) << row.spec().key;
    }
  }
}

// Every member a row names holds the configuration's value of the row's key, when set.
template <class T>
void expect_loaded(const config::ParamTable<T>& table, const T& loaded, const config::Config& c) {
  for (const auto& row : table.rows()) {
    const std::string& key = row.spec().key;
    if (!row.has_member() || !c.has(key)) continue;  // an optional key unset: derived
    const config::ParamValue v = row.value(loaded);
    switch (row.spec().type) {
      case config::ParamType::UInt:
        EXPECT_EQ(std::get<std::uint64_t>(v), c.get_uint(key)) << key;
        break;
      case config::ParamType::Real:
        EXPECT_EQ(std::get<double>(v), c.get_double(key)) << key;
        break;
      case config::ParamType::Quantity:
        EXPECT_DOUBLE_EQ(std::get<double>(v), c.get_quantity(key)) << key;
        break;
      default:
        EXPECT_EQ(std::get<std::string>(v), c.get_string(key)) << key;
        break;
    }
  }
}

TEST(ParamTables, StructDefaultsAreTheSchemaDefaults) {
  const config::Config c = defaults();
  const DramSpec spec = DramSpec::from_config(c);
  expect_same_members(DramOrganization::params(), DramOrganization{}, spec.org);
  expect_same_members(DramTimings::params(), DramTimings{}, spec.timing);
  // The optional keys' defaults are what the default die density derives.
  EXPECT_EQ(DramOrganization{}.rows, spec.org.rows);
  EXPECT_EQ(DramTimings{}.RFCab, spec.timing.RFCab);
  EXPECT_EQ(DramTimings{}.burst_cycles, spec.timing.burst_cycles);
  expect_same_members(ControllerParams::params(), ControllerParams{}, ControllerParams::from_config(c));
  expect_same_members(SramParams::params(), SramParams{}, SramParams::from_config(c));
  expect_same_members(HostDramParams::params(), HostDramParams{}, HostDramParams::from_config(c));
  expect_same_members(FastDramCalibration::params(), FastDramCalibration::fitted(),
                      FastDramCalibration::from_config(c));
  // The TLM target's struct (its keys are declared by hand in memory_frontend_schema).
  const HbmMemoryParams target = HbmMemoryParams::from_config(c), plain{};
  EXPECT_EQ(plain.max_transactions, target.max_transactions);
  EXPECT_EQ(plain.staging, target.staging);
  EXPECT_EQ(plain.bandwidth_sample_ps, target.bandwidth_sample_ps);
  EXPECT_EQ(plain.use_bulk, target.use_bulk);
}

TEST(ParamTables, DefaultsAreHbm3_6400) {
  const DramTimings t;
  EXPECT_DOUBLE_EQ(t.tCK_ps, 625.0);
  EXPECT_EQ(t.RCDRD, 31u);
  EXPECT_EQ(t.RC, 72u);
  EXPECT_EQ(t.RFCab, 560u);
  EXPECT_EQ(t.REFI, 6240u);
  const DramOrganization o;
  EXPECT_EQ(o.capacity_bytes(), 16ull << 30);
  EXPECT_DOUBLE_EQ(o.data_rate_bps, 6.4e9);
  const ControllerParams p;
  EXPECT_EQ(p.scheduler, SchedulerKind::FrFcfs);
  EXPECT_EQ(p.page_policy, PagePolicy::Adaptive);
  EXPECT_EQ(p.refresh, RefreshMode::AllBank);
}

TEST(ParamTables, SchemaDeclaresEveryRow) {
  const config::Schema schema = full_schema();
  expect_declared(DramOrganization::params(), schema);
  expect_declared(DramTimings::params(), schema);
  expect_declared(ControllerParams::params(), schema);
  expect_declared(FastDramCalibration::params(), schema);
  expect_declared(SramParams::params(), schema);
  expect_declared(HostDramParams::params(), schema);
}

TEST(ParamTables, LoadingFillsEveryMember) {
  const config::Config c = hbmtest::hbm_config(
      "hbm/hbm2-2000", {"hbm.controller.scheduler=fcfs", "hbm.controller.bus_arbiter=oldest",
                        "hbm.controller.page_policy=closed", "hbm.controller.refresh=perbank",
                        "hbm.controller.write_low=7", "hbm.fast.act_gap=3.25", "hbm.timing.tRFCab=300"});
  const DramSpec spec = DramSpec::from_config(c);
  EXPECT_EQ(spec.org.channels, 8u);
  EXPECT_DOUBLE_EQ(spec.timing.tCK_ps, 1000.0);
  EXPECT_EQ(spec.timing.RFCab, 300u);
  const ControllerParams p = ControllerParams::from_config(c);
  EXPECT_EQ(p.scheduler, SchedulerKind::Fcfs);
  EXPECT_EQ(p.bus_arbiter, BusArbiter::Oldest);
  EXPECT_EQ(p.page_policy, PagePolicy::Closed);
  EXPECT_EQ(p.refresh, RefreshMode::PerBank);
  EXPECT_EQ(p.write_low, 7u);
  EXPECT_DOUBLE_EQ(FastDramCalibration::from_config(c).act_gap, 3.25);
  expect_loaded(DramOrganization::params(), spec.org, c);
  expect_loaded(DramTimings::params(), spec.timing, c);
  expect_loaded(ControllerParams::params(), p, c);
  expect_loaded(FastDramCalibration::params(), FastDramCalibration::from_config(c), c);
}

}  // namespace
}  // namespace sohusim::memory
