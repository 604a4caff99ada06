// DramSpec from the presets, and the schema's rejection of inconsistent configurations
// with diagnostics that name the key and the file:line it came from.
#include <string>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"
#include "sohusim/config/config_error.hpp"
#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {
namespace {

using hbmtest::hbm_config;
using hbmtest::hbm_loader;

TEST(DramSpec, Hbm3_6400MatchesJesd238Figures) {
  const DramSpec s = DramSpec::from_config(hbm_config("hbm/hbm3-6400"));
  EXPECT_EQ(s.name, "hbm3-6400");
  EXPECT_EQ(s.org.channels, 16u);
  EXPECT_EQ(s.org.pseudo_channels, 2u);
  EXPECT_EQ(s.org.bank_groups, 4u);
  EXPECT_EQ(s.org.banks_per_group, 4u);
  EXPECT_EQ(s.org.access_bytes(), 32u);
  EXPECT_EQ(s.org.rows, 32768u);
  EXPECT_EQ(s.org.capacity_bytes(), 16ull << 30);
  EXPECT_DOUBLE_EQ(s.timing.tCK_ps, 625.0);
  EXPECT_EQ(s.timing.burst_cycles, 2u);  // BL8 at 4 transfers per clock
  const DramTimings& t = s.timing;
  EXPECT_EQ(t.CL, 20u);
  EXPECT_EQ(t.RCDRD, 31u);
  EXPECT_EQ(t.RCDWR, 15u);
  EXPECT_EQ(t.RP, 26u);
  EXPECT_EQ(t.RAS, 45u);
  EXPECT_EQ(t.RC, 72u);
  EXPECT_EQ(t.CCD_S, 2u);
  EXPECT_EQ(t.CCD_L, 4u);
  EXPECT_EQ(t.RRD_S, 4u);
  EXPECT_EQ(t.RRD_L, 5u);
  EXPECT_EQ(t.FAW, 24u);
  EXPECT_EQ(t.WR, 33u);
  EXPECT_EQ(t.RTP, 9u);
  EXPECT_EQ(t.CWL, 10u);
  EXPECT_EQ(t.WTR_S, 7u);
  EXPECT_EQ(t.WTR_L, 10u);
  EXPECT_EQ(t.RTW, 20u);
  EXPECT_EQ(t.RFCpb, 320u);
  EXPECT_EQ(t.REFI, 6240u);
  EXPECT_EQ(t.RFCab, 560u);  // 350 ns for 16 Gb dies
  EXPECT_DOUBLE_EQ(s.peak_bytes_per_second(), 819.2e9);
  EXPECT_DOUBLE_EQ(s.clock_hz(), 1.6e9);
}

TEST(DramSpec, SchemaDefaultsAreHbm3_6400) {
  config::ConfigLoader loader = hbm_loader();
  const DramSpec defaults = DramSpec::from_config(loader.resolve());
  const DramSpec preset = DramSpec::from_config(hbm_config("hbm/hbm3-6400"));
  EXPECT_EQ(defaults.timing.RFCab, preset.timing.RFCab);
  EXPECT_EQ(defaults.org.rows, preset.org.rows);
  EXPECT_EQ(defaults.constraints.size(), preset.constraints.size());
  for (std::size_t i = 0; i < preset.constraints.size(); ++i) {
    EXPECT_EQ(defaults.constraints[i].latency, preset.constraints[i].latency) << preset.constraints[i].name;
  }
}

TEST(DramSpec, DensitySetsRowsAndRefreshCycle) {
  const DramSpec d8 = DramSpec::from_config(hbm_config("hbm/hbm3-6400", {"hbm.org.die_density=8"}));
  EXPECT_EQ(d8.org.rows, 16384u);
  EXPECT_EQ(d8.timing.RFCab, 416u);  // 260 ns / 0.625
  const DramSpec d32 = DramSpec::from_config(hbm_config("hbm/hbm3-6400", {"hbm.org.die_density=32"}));
  EXPECT_EQ(d32.org.rows, 65536u);
  EXPECT_EQ(d32.timing.RFCab, 880u);  // 550 ns
  const DramSpec fixed = DramSpec::from_config(hbm_config("hbm/hbm3-6400", {"hbm.timing.tRFCab=500"}));
  EXPECT_EQ(fixed.timing.RFCab, 500u);
}

TEST(DramSpec, Hbm3eScaledFromHbm3InNanoseconds) {
  const DramSpec e8 = DramSpec::from_config(hbm_config("hbm/hbm3e-8000"));
  EXPECT_DOUBLE_EQ(e8.peak_bytes_per_second(), 1024e9);
  EXPECT_EQ(e8.timing.burst_cycles, 2u);
  EXPECT_EQ(e8.timing.RCDRD, 39u);   // ceil(31 x 0.625 / 0.5)
  EXPECT_EQ(e8.timing.RFCab, 900u);  // 450 ns, 24 Gb
  EXPECT_EQ(e8.org.rows, 49152u);    // 24 GiB: not a power of two
  EXPECT_EQ(e8.org.capacity_bytes(), 24ull << 30);
  const DramSpec e96 = DramSpec::from_config(hbm_config("hbm/hbm3e-9600"));
  EXPECT_NEAR(e96.peak_bytes_per_second(), 1228.8e9, 1e3);
  EXPECT_EQ(e96.timing.burst_cycles, 2u);
  EXPECT_EQ(e96.timing.RFCab, 1080u);
  EXPECT_EQ(e96.timing.REFI, 9360u);
}

TEST(DramSpec, Hbm2PseudoChannelMode) {
  const DramSpec s = DramSpec::from_config(hbm_config("hbm/hbm2-2000"));
  EXPECT_EQ(s.org.channels, 8u);
  EXPECT_EQ(s.org.access_bytes(), 32u);  // 64 DQ x BL4
  EXPECT_EQ(s.timing.burst_cycles, 2u);  // BL4, DDR
  EXPECT_DOUBLE_EQ(s.peak_bytes_per_second(), 256e9);
  EXPECT_EQ(s.timing.RFCab, 220u);
  EXPECT_EQ(s.org.capacity_bytes(), 8ull << 30);
}

TEST(DramSpec, ConstraintTableCoversNamedTimings) {
  const DramSpec s = DramSpec::from_config(hbm_config("hbm/hbm3-6400"));
  for (const char* name : {"tRC", "tRCDRD", "tRCDWR", "tRAS", "tRP", "tRFCpb", "tRRD_L", "tRRD_S", "tFAW", "tRFCab"}) {
    bool found = false;
    for (const TimingConstraint& row : s.constraints) found = found || row.name == name;
    EXPECT_TRUE(found) << name;
  }
}

// ---- bad configurations ---------------------------------------------------------------

config::ConfigError resolve_error(const std::string& yaml, const std::string& preset = "hbm/hbm3-6400") {
  config::ConfigLoader loader = hbm_loader();
  loader.load_preset(preset);
  loader.load_string(yaml, "bad.yaml");
  try {
    loader.resolve();
  } catch (const config::ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << yaml;
  return config::ConfigError(std::vector<config::ConfigDiagnostic>{});
}

const config::ConfigDiagnostic* find_key(const config::ConfigError& e, const std::string& key) {
  for (const config::ConfigDiagnostic& d : e.diagnostics()) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

TEST(HbmConfigErrors, TrcBelowTrasPlusTrp) {
  const config::ConfigError e = resolve_error("hbm:\n  timing:\n    tRC: 60\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.timing.tRC");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_EQ(d->file, "bad.yaml");
  EXPECT_EQ(d->line, 3);
  EXPECT_NE(d->message.find("tRAS + tRP"), std::string::npos);
  EXPECT_EQ(d->allowed, ">= 71");
}

TEST(HbmConfigErrors, TrasBelowTrcd) {
  const config::ConfigError e = resolve_error("hbm.timing.tRAS: 30\nhbm.timing.tRC: 80\n");
  ASSERT_NE(find_key(e, "hbm.timing.tRAS"), nullptr) << e.what();
}

TEST(HbmConfigErrors, MappingNotCoveringEveryBit) {
  const config::ConfigError e =
      resolve_error("hbm:\n  mapping:\n    fields: [pseudo_channel, channel, bank_group, column, bank]\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.mapping.fields");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->message.find("`row`"), std::string::npos) << d->message;
  EXPECT_EQ(d->line, 3);
}

TEST(HbmConfigErrors, MappingCoveringBitsTwice) {
  const config::ConfigError e =
      resolve_error("hbm.mapping.fields: [pseudo_channel, channel, bank_group, column:3, column:3, bank, row]\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.mapping.fields");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->message.find("column"), std::string::npos) << d->message;
}

TEST(HbmConfigErrors, UnknownMappingField) {
  const config::ConfigError e =
      resolve_error("hbm.mapping.fields: [pseudo_channel, channel, bnak_group, column, bank, row]\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.mapping.fields");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->message.find("bnak_group"), std::string::npos);
}

TEST(HbmConfigErrors, NonPowerOfTwoGeometryWhereTheMappingSplitsIt) {
  const config::ConfigError e = resolve_error(
      "hbm.org.columns: 24\nhbm.org.die_density: 24\n"
      "hbm.mapping.fields: [pseudo_channel, channel, column:2, bank_group, column, bank, row]\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.org.columns");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->message.find("power of two"), std::string::npos);
  EXPECT_EQ(d->line, 1);
}

TEST(HbmConfigErrors, NonPowerOfTwoXorTarget) {
  const config::ConfigError e =
      resolve_error("hbm.org.bank_groups: 3\nhbm.org.dies: 6\nhbm.mapping.xor: [bank_group^row]\n");
  ASSERT_NE(find_key(e, "hbm.org.bank_groups"), nullptr) << e.what();
}

TEST(HbmConfigErrors, NonPowerOfTwoWholeLevelsAreFine) {
  // Mixed-radix digits: 6 stacks and 24 Gb dies (49152 rows) need no power of two.
  const config::Config c = hbm_config("hbm/hbm3e-9600", {"hbm.stacks=6"});
  EXPECT_EQ(DramSpec::from_config(c).org.capacity_bytes(), 6 * (24ull << 30));
}

TEST(HbmConfigErrors, RefreshIntervalLeavingNoTimeToWork) {
  // HBM3-6400: tRP 26 + tRFCab 560 (16 Gb) + tRC 72 + CL 20 + nBL 2 = 680. With tREFI
  // 587-653 DramController opened rows every interval and never read them.
  config::ConfigError e = resolve_error("hbm.timing.tREFI: 679\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.timing.tREFI");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_EQ(d->line, 1);
  EXPECT_NE(d->message.find("tRP + tRFCab"), std::string::npos) << d->message;
  EXPECT_EQ(d->allowed, ">= 680");
  EXPECT_NO_THROW(hbm_config("hbm/hbm3-6400", {"hbm.timing.tREFI=680"}));
  EXPECT_NO_THROW(hbm_config("hbm/hbm3-6400", {"hbm.timing.tREFI=679", "hbm.controller.refresh=off"}));
  // Per-bank: each bank's refresh every 16 x (tREFI / 16) cycles must cover tRP + tRFCpb
  // 320 + tRC + CL + nBL = 440, so 447 (16 x 27 = 432) is refused and 448 is not.
  e = resolve_error("hbm.controller.refresh: perbank\nhbm.timing.tREFI: 447\n");
  d = find_key(e, "hbm.timing.tREFI");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->message.find("tRFCpb"), std::string::npos) << d->message;
  EXPECT_EQ(d->allowed, ">= 448");
  EXPECT_NO_THROW(hbm_config("hbm/hbm3-6400", {"hbm.controller.refresh=perbank", "hbm.timing.tREFI=448"}));
  // ... and a REFpb every tREFI / 16 cycles must leave the row bus more than tRRD_S 4 +
  // tRREFD 13 between them.
  e = resolve_error("hbm.controller.refresh: perbank\nhbm.timing.tREFI: 448\nhbm.timing.tRREFD: 24\n");
  d = find_key(e, "hbm.timing.tREFI");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->message.find("tRRD_S + tRREFD"), std::string::npos) << d->message;
  EXPECT_EQ(d->allowed, ">= 464");
}

TEST(HbmConfigErrors, WatermarksOutOfOrder) {
  const config::ConfigError e = resolve_error("hbm.controller.write_low: 50\n");
  ASSERT_NE(find_key(e, "hbm.controller.write_low"), nullptr) << e.what();
}

TEST(HbmConfigErrors, DataRateNotAWholeNumberOfTransfersPerClock) {
  const config::ConfigError e = resolve_error("hbm.org.data_rate: 7 Gbps\n");
  ASSERT_NE(find_key(e, "hbm.org.data_rate"), nullptr) << e.what();
}

TEST(HbmConfigErrors, DensityWithoutRefreshEntry) {
  const config::ConfigError e = resolve_error("hbm.org.die_density: 12\n");
  ASSERT_NE(find_key(e, "hbm.org.die_density"), nullptr) << e.what();
}

TEST(HbmConfigErrors, UnknownPresets) {
  config::ConfigLoader loader = hbm_loader();
  try {
    loader.load_preset("hbm/hbm4-12800");
    FAIL() << "expected an unknown preset error";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("hbm/hbm4-12800"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("hbm/hbm3-6400"), std::string::npos) << e.what();
  }
  const config::ConfigError e = resolve_error("hbm.mapping.preset: RoBaCo\n");
  const config::ConfigDiagnostic* d = find_key(e, "hbm.mapping.preset");
  ASSERT_NE(d, nullptr) << e.what();
  EXPECT_NE(d->allowed.find("single-pc"), std::string::npos);
}

}  // namespace
}  // namespace sohusim::memory
