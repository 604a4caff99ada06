// RunConfiguration: arch, HBM preset, config layers and overrides resolved per host, the
// record results carry, and a hash that follows the simulated values only.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "platform_test_support.hpp"
#include "sohusim/config/config_error.hpp"
#include "sohusim/platform/run_configuration.hpp"

namespace sohusim::platform {
namespace {

ConfigChoice choice(const std::string& system = "sohu-1") {
  ConfigChoice c;
  c.system = system;
  c.config_dirs = test::config_dirs();
  return c;
}

TEST(RunConfiguration, RecordNamesTheSystemArchHbmAndEveryOverride) {
  ConfigChoice c = choice("sohu-8");
  c.overrides = {"device.matrix.engines=64"};
  const RunConfiguration rc = resolve_configuration(c);
  const nlohmann::json r = rc.record();
  EXPECT_EQ(r["system"], "sohu-8");
  EXPECT_EQ(r["arch"], "sohu");
  EXPECT_EQ(r["hbm"], "hbm3e-8000");
  EXPECT_EQ(r["hbm_stacks"], 6);
  EXPECT_EQ(r["devices"], 8);
  EXPECT_EQ(r["sets"], nlohmann::json({"sim.stop_time=100 s", "device.matrix.engines=64"}));
  EXPECT_EQ(r["hash"].get<std::string>().size(), 16U);
  EXPECT_FALSE(r["version"].get<std::string>().empty());
  EXPECT_FALSE(r["commit"].get<std::string>().empty());
  EXPECT_EQ(rc.host_configs.at(0).get_uint("device.matrix.engines"), 64U);
}

TEST(RunConfiguration, HbmPresetReplacesTheGenerationAndKeepsTheStacks) {
  ConfigChoice c = choice();
  c.hbm = "hbm3e-9600";
  const RunConfiguration rc = resolve_configuration(c);
  const config::Config& cfg = rc.host_configs.at(0);
  EXPECT_EQ(cfg.get_string("hbm.name"), "hbm3e-9600");
  EXPECT_EQ(cfg.get_uint("hbm.stacks"), 6U);  // the sohu arch's
  EXPECT_DOUBLE_EQ(cfg.get_quantity("hbm.org.data_rate"), 9.6e9);
  EXPECT_NE(rc.hash, resolve_configuration(choice()).hash);
}

TEST(RunConfiguration, ArchOverridesEveryHostAndConfigFilesLayerBeforeTheOverrides) {
  const std::string file = testing::TempDir() + "run_configuration_layer.yaml";
  {
    std::ofstream os(file);
    os << "device:\n  matrix:\n    engines: 7\n";
  }
  ConfigChoice c = choice("sohu-2x8");
  c.arch = "h100-like";
  c.configs = {file};
  RunConfiguration rc = resolve_configuration(c);
  ASSERT_EQ(rc.host_configs.size(), 2U);
  for (const config::Config& h : rc.host_configs) {
    EXPECT_EQ(h.get_string("device.name"), "h100-like");
    EXPECT_EQ(h.get_uint("device.matrix.engines"), 7U);
  }
  c.overrides = {"device.matrix.engines=9"};
  rc = resolve_configuration(c);
  EXPECT_EQ(rc.host_configs.at(1).get_uint("device.matrix.engines"), 9U);
  EXPECT_EQ(rc.record()["configs"], nlohmann::json({file}));
  std::remove(file.c_str());
}

TEST(RunConfiguration, HashFollowsTheSimulatedValuesNotTheirSpelling) {
  ConfigChoice named = choice();
  named.hbm = "hbm3e-8000";                    // what sohu's arch already uses
  named.overrides = {"trace.detail=summary"};  // an output setting
  EXPECT_EQ(resolve_configuration(named).hash, resolve_configuration(choice()).hash);
  ConfigChoice other = choice();
  other.overrides = {"device.c2c.bandwidth=400 GB/s"};
  EXPECT_NE(resolve_configuration(other).hash, resolve_configuration(choice()).hash);
  EXPECT_EQ(resolve_configuration(other).hash, resolve_configuration(other).hash);
}

TEST(RunConfiguration, BadChoicesNameWhatWasWrong) {
  ConfigChoice c = choice();
  c.hbm = "hbm9";
  try {
    resolve_configuration(c);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(test::contains(e.what(), "HBM preset `hbm9`")) << e.what();
    EXPECT_TRUE(test::contains(e.what(), "hbm3e-9600")) << e.what();
  }
  c = choice();
  c.arch = "sohu-2";
  EXPECT_THROW(resolve_configuration(c), std::invalid_argument);
  c = choice();
  c.overrides = {"device.matrix.engines=0"};
  try {
    resolve_configuration(c);
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1U);
    EXPECT_EQ(e.diagnostics()[0].key, "device.matrix.engines");
  }
}

TEST(RunConfiguration, Fnv1aIsTheStandardFunction) {
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");   // the offset basis
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");  // published test vector
}

}  // namespace
}  // namespace sohusim::platform
