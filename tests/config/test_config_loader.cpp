// Loading configurations: layering (preset < file < extends order < --set), open maps,
// lists of sections, every error kind with its exact location and allowed values,
// schema checks, source_of, and the to_yaml()/to_json() output.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sohusim/config/config.hpp"
#include "sohusim/sim/core_schema.hpp"

namespace sohusim::config {
namespace {
namespace fs = std::filesystem;

Schema host_schema() {
  Schema host;
  host.section("")
      .string("name", "", "host name")
      .required()
      .integer("cores", 4, 1, 256, "CPU cores")
      .quantity("memory", Dimension::Bytes, "16 GiB", "1 GiB", "4 TiB", "host DRAM");
  host.section("pcie")
      .enumeration("gen", "gen5", {"gen4", "gen5", "gen6"}, "PCIe generation")
      .integer("lanes", 16, 1, 16, "link width");
  host.add_check([](const Config& config, std::vector<ConfigDiagnostic>& out) {
    if (config.get_string("name") == "reserved") out.push_back(config.diagnose("name", "the name is reserved"));
  });
  return host;
}

// The core schema plus an HBM layer and a platform layer, merged the way the tool will.
Schema test_schema() {
  Schema schema = sim::core_schema();

  Schema hbm;
  hbm.section("hbm", "HBM3E stacks")
      .integer("stacks", 6, 1, 12, "stacks per chip")
      .quantity("capacity", Dimension::Bytes, "24 GiB", "1 GiB", "64 GiB", "capacity per stack")
      .bare_number()
      .enumeration("page_policy", "open", {"open", "closed", "adaptive"}, "row buffer policy")
      .real("efficiency", 0.9, 0.0, 1.0, "bus efficiency")
      .integers("channel_map", {0, 1, 2, 3}, 0, 63, "channel order")
      .boolean("refresh", true, "model refresh")
      .string("label", "", "free text");
  hbm.section("hbm.timing", "HBM3E timing")
      .quantity("tCK", Dimension::Time, "312.5 ps", "200 ps", "2 ns", "clock period")
      .unit("ps")
      .quantity("tRAS", Dimension::Time, "32 ns", "10 ns", "100 ns", "row active time")
      .unit("ns")
      .quantity("tRP", Dimension::Time, "15 ns", "5 ns", "50 ns", "row precharge time")
      .unit("ns")
      .quantity("tRC", Dimension::Time, "48 ns", "30 ns", "100 ns", "row cycle time")
      .unit("ns");
  hbm.add_check([](const Config& config, std::vector<ConfigDiagnostic>& out) {
    const double ras_rp = config.get_quantity("hbm.timing.tRAS") + config.get_quantity("hbm.timing.tRP");
    if (config.get_quantity("hbm.timing.tRC") < ras_rp) {
      out.push_back(config.diagnose("hbm.timing.tRC", "must be at least tRAS + tRP",
                                    ">= " + format_quantity(ras_rp, Dimension::Time, "ns")));
    }
  });
  schema.merge(hbm);

  Schema platform;
  platform.section("platform", "machines")
      .string("name", "sohu-server", "platform name")
      .section_list("hosts", host_schema(), "host machines");
  schema.merge(platform);
  return schema;
}

class ConfigLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("sohusim-config-" + test + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "presets");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }
  fs::path preset(const std::string& name, const std::string& text) { return write("presets/" + name + ".yaml", text); }

  // The name diagnostics give a file.
  std::string shown(const std::string& name) const { return (dir_ / name).lexically_normal().generic_string(); }

  ConfigLoader loader() const { return ConfigLoader(test_schema(), {dir_ / "presets"}); }

  static std::vector<std::string> errors(const std::function<void()>& action) {
    try {
      action();
    } catch (const ConfigError& error) {
      std::vector<std::string> lines;
      for (const ConfigDiagnostic& diagnostic : error.diagnostics()) lines.push_back(diagnostic.to_string());
      return lines;
    }
    return {"no error"};
  }

  std::vector<std::string> resolve_errors(const std::string& yaml) {
    const fs::path file = write("x.yaml", yaml);
    return errors([&] { loader().load_file(file).resolve(); });
  }

  fs::path dir_;
};

// ---- values and layering ---------------------------------------------------------------

TEST_F(ConfigLoaderTest, NothingLoadedGivesTheSchemaDefaults) {
  const Config config = loader().resolve();
  EXPECT_EQ(config.get_uint("sim.seed"), 1U);
  EXPECT_EQ(config.get_string("sim.fidelity"), "fast");
  EXPECT_EQ(config.get_quantity("sim.stop_time"), 1.0);
  EXPECT_EQ(config.get_quantity("hbm.timing.tCK"), 312.5e-12);
  EXPECT_EQ(config.get_strings("trace.categories"), std::vector<std::string>{"all"});
  EXPECT_EQ(config.get_ints("hbm.channel_map"), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(config.get_bool("hbm.refresh"));
  EXPECT_EQ(config.get_double("hbm.efficiency"), 0.9);
  EXPECT_TRUE(config.section_list("platform.hosts").empty());
  EXPECT_EQ(config.source_of("sim.seed"), "default");
}

TEST_F(ConfigLoaderTest, LaterLayersOverrideEarlierOnesAndSetOverridesAll) {
  preset("first", "sim.data_mode: functional\nsim.seed: 5\ntrace.file: first.json\n");
  preset("base", "sim:\n  seed: 10\n  fidelity: detailed\nhbm.stacks: 4\n");
  write("more.yaml", "sim.seed: 20\nhbm.stacks: 8\ntrace.file: more.json\n");
  const fs::path run = write("run.yaml", "extends: [base, ./more.yaml]\nsim.seed: 30\n");

  ConfigLoader layered = loader();
  layered.load_preset("first").load_file(run);
  Config config = layered.resolve();
  EXPECT_EQ(config.get_string("sim.data_mode"), "functional");  // only the first preset says it
  EXPECT_EQ(config.get_string("sim.fidelity"), "detailed");     // base, above the preset
  EXPECT_EQ(config.get_int("hbm.stacks"), 8);                   // the later base wins
  EXPECT_EQ(config.get_string("trace.file"), "more.json");
  EXPECT_EQ(config.get_uint("sim.seed"), 30U);  // the file itself, above its bases
  EXPECT_EQ(config.source_of("sim.seed"), shown("run.yaml") + ":2:11");
  EXPECT_EQ(config.source_of("sim.fidelity"), shown("presets/base.yaml") + ":3:13");
  EXPECT_EQ(config.source_of("hbm.stacks"), shown("more.yaml") + ":2:13");
  EXPECT_EQ(config.source_of("sim.data_mode"), shown("presets/first.yaml") + ":1:16");

  // --set is the user's last word, even when given before the files.
  ConfigLoader overridden = loader();
  overridden.set("sim.seed=99").load_preset("first").load_file(run);
  config = overridden.resolve();
  EXPECT_EQ(config.get_uint("sim.seed"), 99U);
  EXPECT_EQ(config.source_of("sim.seed"), "--set");
  EXPECT_EQ(config.get_int("hbm.stacks"), 8);
}

TEST_F(ConfigLoaderTest, PresetsMayLiveInSubfoldersAndExtendEachOther) {
  preset("hbm/hbm3-6400", "extends: hbm/common\nhbm.timing.tCK: 312.5 ps\n");
  preset("hbm/common", "hbm:\n  stacks: 8\n  timing.tCK: 1 ns\n");
  ConfigLoader l = loader();
  const Config config = l.load_preset("hbm/hbm3-6400").resolve();
  EXPECT_EQ(config.get_int("hbm.stacks"), 8);
  EXPECT_EQ(config.get_quantity("hbm.timing.tCK"), 312.5e-12);
  EXPECT_EQ(l.available_presets(), (std::vector<std::string>{"hbm/common", "hbm/hbm3-6400"}));
}

TEST_F(ConfigLoaderTest, DottedAndNestedKeysAreTheSame) {
  ConfigLoader dotted = loader();
  dotted.load_string("hbm.timing.tRC: 50 ns\nsim.seed: 3\n");
  ConfigLoader nested = loader();
  nested.load_string("hbm:\n  timing:\n    tRC: 50 ns\nsim: {seed: 3}\n");
  EXPECT_EQ(dotted.resolve().to_json(), nested.resolve().to_json());
}

TEST_F(ConfigLoaderTest, AnEmptySectionDoesNotEraseItsBase) {
  preset("base", "sim.seed: 5\n");
  const fs::path file = write("x.yaml", "extends: base\nsim:\n");
  EXPECT_EQ(loader().load_file(file).resolve().get_uint("sim.seed"), 5U);
}

TEST_F(ConfigLoaderTest, SetParsesYamlValues) {
  ConfigLoader l = loader();
  l.set("trace.categories=[hbm, pcie]")
      .set("trace.file=")
      .set("sim.clocks.dma=800 MHz")
      .set("hbm.label='a: b'")
      .set(" sim.seed = 7");
  const Config config = l.resolve();
  EXPECT_EQ(config.get_strings("trace.categories"), (std::vector<std::string>{"hbm", "pcie"}));
  EXPECT_EQ(config.get_string("trace.file"), "");
  EXPECT_EQ(config.get_quantity("sim.clocks.dma"), 800e6);
  EXPECT_EQ(config.get_string("hbm.label"), "a: b");
  EXPECT_EQ(config.get_uint("sim.seed"), 7U);
}

TEST_F(ConfigLoaderTest, AFailedLoadLeavesEarlierLayersIntact) {
  const fs::path good = write("good.yaml", "sim.seed: 4\n");
  const fs::path bad = write("bad.yaml", "sim.seed: 5\nsim: [\n");
  ConfigLoader l = loader();
  l.load_file(good);
  EXPECT_THROW(l.load_file(bad), ConfigError);
  EXPECT_EQ(l.resolve().get_uint("sim.seed"), 4U);
}

// ---- open maps and lists of sections ---------------------------------------------------

TEST_F(ConfigLoaderTest, OpenMapsAcceptAnyNameOfTheDeclaredKind) {
  const fs::path file = write("x.yaml", "sim.clocks:\n  dma: 800 MHz\n  host: 2 GHz\n");
  const Config config = loader().load_file(file).resolve();
  EXPECT_EQ(config.keys_under("sim.clocks"), (std::vector<std::string>{"dma", "engine", "hbm", "host", "link"}));
  EXPECT_EQ(config.get_quantity("sim.clocks.dma"), 800e6);
  EXPECT_EQ(config.get_quantity("sim.clocks.host"), 2e9);
  EXPECT_EQ(config.get_quantity("sim.clocks.engine"), 1.5e9);
  EXPECT_EQ(config.source_of("sim.clocks.dma"), shown("x.yaml") + ":2:8");
  EXPECT_EQ(config.source_of("sim.clocks.engine"), "default");
  EXPECT_EQ(config.keys_under(""), (std::vector<std::string>{"hbm", "platform", "sim", "stats", "trace"}));

  EXPECT_EQ(resolve_errors("sim.clocks:\n  dma: 8 ns\n  \"my clock\": 1 GHz\n"),
            (std::vector<std::string>{
                shown("x.yaml") + ":2:8: sim.clocks.dma: expected a frequency such as \"1.5 GHz\" (units: Hz, kHz, "
                                  "MHz, GHz), got a time \"8 ns\"; allowed: 1 MHz .. 10 GHz",
                shown("x.yaml") + ":3:3: sim.clocks.my clock: invalid key name \"my clock\"; names are letters, "
                                  "digits, '_' and '-'",
            }));
}

TEST_F(ConfigLoaderTest, AStarSectionDeclaresAMapOfSections) {
  Schema schema;
  schema.section("devices.*", "one device")
      .integer("stacks", 6, 1, 12, "HBM stacks")
      .enumeration("fidelity", "fast", {"detailed", "fast"}, "model fidelity");
  ConfigLoader l(schema);
  l.load_string("devices:\n  d0: {}\n  d1: {stacks: 4}\n  d2:\n", "x.yaml");
  const Config config = l.resolve();
  EXPECT_EQ(config.keys_under("devices"), (std::vector<std::string>{"d0", "d1", "d2"}));
  EXPECT_EQ(config.get_int("devices.d0.stacks"), 6);
  EXPECT_EQ(config.get_int("devices.d1.stacks"), 4);
  EXPECT_EQ(config.get_string("devices.d2.fidelity"), "fast");
  EXPECT_EQ(errors([&] { ConfigLoader(schema).load_string("devices.d0.stcks: 4\n", "x.yaml").resolve(); }),
            std::vector<std::string>{"x.yaml:1:1: devices.d0.stcks: unknown key; did you mean `devices.d0.stacks`?; "
                                     "allowed: keys of `devices.d0`: stacks, fidelity"});
}

TEST_F(ConfigLoaderTest, ListsOfSectionsValidateEachElement) {
  const fs::path file = write("x.yaml",
                              "platform:\n"
                              "  name: lab\n"
                              "  hosts:\n"
                              "    - name: h0\n"
                              "      cores: 8\n"
                              "      pcie: {gen: gen6}\n"
                              "    - name: h1\n"
                              "      memory: 64 GiB\n");
  const Config config = loader().load_file(file).resolve();
  const std::vector<Config>& hosts = config.section_list("platform.hosts");
  ASSERT_EQ(hosts.size(), 2U);
  EXPECT_EQ(hosts[0].get_string("name"), "h0");
  EXPECT_EQ(hosts[0].get_int("cores"), 8);
  EXPECT_EQ(hosts[0].get_string("pcie.gen"), "gen6");
  EXPECT_EQ(hosts[0].source_of("cores"), shown("x.yaml") + ":5:14");
  EXPECT_EQ(hosts[0].path(), "platform.hosts[0]");
  EXPECT_EQ(hosts[1].get_int("cores"), 4);
  EXPECT_EQ(hosts[1].source_of("cores"), "default");
  EXPECT_EQ(hosts[1].get_quantity("memory"), 64.0 * (1ULL << 30));
  EXPECT_EQ(hosts[1].keys_under(""), (std::vector<std::string>{"cores", "memory", "name", "pcie"}));

  // A later layer replaces the whole list; --set reaches into it by index.
  const fs::path later = write("later.yaml", "platform.hosts:\n  - name: only\n");
  ConfigLoader l = loader();
  l.load_file(file).set("platform.hosts.1.cores=16");
  EXPECT_EQ(l.resolve().section_list("platform.hosts")[1].get_int("cores"), 16);
  EXPECT_EQ(l.resolve().section_list("platform.hosts")[1].source_of("cores"), "--set");
  l.load_file(later);
  EXPECT_EQ(errors([&] { l.resolve(); }),
            std::vector<std::string>{"--set: platform.hosts.1.cores: index 1 is out of range: `platform.hosts` has 1 "
                                     "element(s)"});
}

TEST_F(ConfigLoaderTest, ElementErrorsNameTheElement) {
  EXPECT_EQ(
      resolve_errors("platform:\n"
                     "  hosts:\n"
                     "    - cores: 8\n"
                     "    - name: h1\n"
                     "      cores: 999\n"
                     "      gpus: 2\n"
                     "    - just text\n"
                     "    - name: reserved\n"),
      (std::vector<std::string>{
          shown("x.yaml") + ":3:7: platform.hosts[0].name: required key is missing; allowed: a string",
          shown("x.yaml") + ":5:14: platform.hosts[1].cores: value \"999\" is above the maximum; allowed: 1 .. 256",
          shown("x.yaml") + ":6:7: platform.hosts[1].gpus: unknown key; allowed: keys of `platform.hosts[1]`: "
                            "name, cores, memory, pcie",
          shown("x.yaml") + ":7:7: platform.hosts[2]: expected a section (a map of keys), got the value \"just "
                            "text\"",
          // The element's own check, pointing at the element's key.
          shown("x.yaml") + ":8:13: platform.hosts[3].name: the name is reserved",
      }));
}

// ---- every error kind ------------------------------------------------------------------

TEST_F(ConfigLoaderTest, UnknownKeySuggestsTheClosestKey) {
  EXPECT_EQ(resolve_errors("sim:\n  sed: 3\nhbmm: {stacks: 2}\n"),
            (std::vector<std::string>{
                shown("x.yaml") + ":2:3: sim.sed: unknown key; did you mean `sim.seed`?; allowed: keys of `sim`: "
                                  "seed, fidelity, data_mode, stop_time, clocks",
                shown("x.yaml") + ":3:1: hbmm: unknown key; did you mean `hbm`?; allowed: top-level keys: sim, "
                                  "trace, stats, hbm, platform",
            }));
}

TEST_F(ConfigLoaderTest, WrongTypeSaysWhatWasExpected) {
  EXPECT_EQ(resolve_errors("hbm:\n  stacks: abc\n  refresh: maybe\n  channel_map: [1, x]\n  efficiency: {a: 1}\n"),
            (std::vector<std::string>{
                shown("x.yaml") + ":2:11: hbm.stacks: expected an integer, got \"abc\"; allowed: 1 .. 12",
                shown("x.yaml") + ":3:12: hbm.refresh: expected true or false, got \"maybe\"",
                shown("x.yaml") + ":4:20: hbm.channel_map[1]: expected an integer, got \"x\"; allowed: 0 .. 63",
                shown("x.yaml") + ":5:15: hbm.efficiency: expected a number, got a map; allowed: 0 .. 1",
            }));
}

TEST_F(ConfigLoaderTest, OutOfRangeShowsTheRangeInTheParameterUnit) {
  EXPECT_EQ(
      resolve_errors("hbm:\n  timing:\n    tRC: 20 ns\n    tCK: 0.1 ns\n"),
      (std::vector<std::string>{
          shown("x.yaml") + ":3:10: hbm.timing.tRC: value \"20 ns\" is below the minimum; allowed: 30 ns .. 100 ns",
          shown("x.yaml") + ":4:10: hbm.timing.tCK: value \"0.1 ns\" is below the minimum; allowed: 200 ps .. "
                            "2000 ps",
      }));
}

TEST_F(ConfigLoaderTest, WrongDimensionAndBadUnitAreNamed) {
  EXPECT_EQ(resolve_errors("sim:\n  clocks:\n    host: 5 ns\n  stop_time: 3 parsecs\nhbm.capacity: 12\n"),
            (std::vector<std::string>{
                shown("x.yaml") + ":3:11: sim.clocks.host: expected a frequency such as \"1.5 GHz\" (units: Hz, kHz, "
                                  "MHz, GHz), got a time \"5 ns\"; allowed: 1 MHz .. 10 GHz",
                shown("x.yaml") + ":4:14: sim.stop_time: expected a time such as \"120 ns\" (units: ps, ns, us, ms, "
                                  "s), got \"3 parsecs\" (unknown unit \"parsecs\"); allowed: 1 ns .. 3600 s",
                // A bare number is accepted here (4096 would be fine) but is out of range.
                shown("x.yaml") + ":5:15: hbm.capacity: value \"12\" is below the minimum; allowed: 1 GiB .. 64 GiB",
            }));
}

TEST_F(ConfigLoaderTest, UnknownEnumChoiceListsTheChoices) {
  EXPECT_EQ(resolve_errors("hbm.page_policy: clsoed\n"),
            std::vector<std::string>{shown("x.yaml") + ":1:18: hbm.page_policy: unknown choice \"clsoed\"; did you "
                                                       "mean `closed`?; allowed: open, closed, adaptive"});
}

TEST_F(ConfigLoaderTest, MissingRequiredKeyIsReported) {
  Schema schema = sim::core_schema();
  schema.section("device").string("serial", "", "board serial number").required();
  schema.section("device").integer("slot", 0, 0, 7, "PCIe slot").required();
  EXPECT_EQ(errors([&] { ConfigLoader(schema).resolve(); }),
            (std::vector<std::string>{"device.serial: required key is missing; allowed: a string",
                                      "device.slot: required key is missing; allowed: an integer in 0 .. 7"}));
  ConfigLoader l(schema);
  l.set("device.serial=A1").set("device.slot=2");
  EXPECT_EQ(l.resolve().get_string("device.serial"), "A1");
}

TEST_F(ConfigLoaderTest, MalformedYamlGivesTheParserMessageAndLine) {
  const fs::path file = write("x.yaml", "sim:\n  seed: 1\n  fidelity: [fast\ntrace:\n  file: a\n");
  const std::vector<std::string> lines = errors([&] { loader().load_file(file); });
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0].rfind(shown("x.yaml") + ":4:", 0), 0U) << lines[0];
  EXPECT_NE(lines[0].find(": malformed YAML: "), std::string::npos) << lines[0];

  const fs::path two = write("two.yaml", "sim.seed: 1\n---\nsim.seed: 2\n");
  EXPECT_EQ(errors([&] { loader().load_file(two); }),
            std::vector<std::string>{shown("two.yaml") + ": holds 2 YAML documents; a config file holds one"});
  const fs::path list = write("list.yaml", "- sim.seed: 1\n");
  EXPECT_EQ(
      errors([&] { loader().load_file(list); }),
      std::vector<std::string>{shown("list.yaml") +
                               ":1:1: the top level of a config file must be a map of keys, not a list or a value"});
}

TEST_F(ConfigLoaderTest, YamlAliasesAreRefusedBeforeAnythingIsExpanded) {
  // Ten levels of ten references: 10^10 nodes once expanded ("billion laughs").
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int n = 1; n <= 10; ++n) {
    bomb += "a" + std::to_string(n) + ": &a" + std::to_string(n) + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *a" : "*a") + std::to_string(n - 1);
    bomb += "]\n";
  }
  const fs::path file = write("bomb.yaml", bomb);
  EXPECT_EQ(errors([&] { loader().load_file(file); }),
            std::vector<std::string>{shown("bomb.yaml") +
                                     ":2:10: YAML aliases (*name) are not allowed in a config file; write the value "
                                     "out"});
  EXPECT_EQ(errors([&] { loader().set("sim.seed=*a"); }).size(), 1U);
  // An anchor alone is data like any other.
  const fs::path anchored = write("anchored.yaml", "sim:\n  seed: &s 5\n");
  EXPECT_EQ(loader().load_file(anchored).resolve().get_uint("sim.seed"), 5U);
}

TEST_F(ConfigLoaderTest, KeyGivenTwiceInOneFileIsAnError) {
  const fs::path file = write("x.yaml", "sim:\n  seed: 1\nsim.seed: 2\n");
  EXPECT_EQ(
      errors([&] { loader().load_file(file); }),
      std::vector<std::string>{shown("x.yaml") + ":3:1: sim.seed: key given twice in this file (first at line 2)"});
}

TEST_F(ConfigLoaderTest, ASectionGivenAValueIsAnError) {
  EXPECT_EQ(
      resolve_errors("sim: 3\n"),
      std::vector<std::string>{shown("x.yaml") + ":1:6: sim: this is a section, not a value; got the value \"3\"; "
                                                 "allowed: keys of `sim`: seed, fidelity, data_mode, stop_time, "
                                                 "clocks"});
}

TEST_F(ConfigLoaderTest, MissingFileAndUnknownPresetAreReported) {
  preset("a", "sim.seed: 1\n");
  preset("hbm/hbm3-6400", "hbm.stacks: 8\n");
  EXPECT_EQ(errors([&] { loader().load_file(dir_ / "nope.yaml"); }),
            std::vector<std::string>{shown("nope.yaml") + ": cannot open the config file: no such file"});
  EXPECT_EQ(errors([&] { loader().load_preset("hbm3"); }),
            std::vector<std::string>{"unknown preset `hbm3`; allowed: a, hbm/hbm3-6400"});
  EXPECT_EQ(errors([&] { loader().load_preset("../x"); }),
            std::vector<std::string>{"unknown preset `../x`; allowed: a, hbm/hbm3-6400"});

  const fs::path file = write("x.yaml", "sim.seed: 2\nextends:\n  - a\n  - hmb/hbm3-6400\n");
  EXPECT_EQ(errors([&] { loader().load_file(file); }),
            std::vector<std::string>{shown("x.yaml") +
                                     ":4:5: extends: unknown preset `hmb/hbm3-6400`; allowed: a, hbm/hbm3-6400"});
  const fs::path missing = write("y.yaml", "extends: ./base.yaml\n");
  EXPECT_EQ(errors([&] { loader().load_file(missing); }),
            std::vector<std::string>{shown("y.yaml") + ":1:10: extends: cannot open `" + shown("base.yaml") +
                                     "`: no such file"});
  EXPECT_EQ(errors([&] { ConfigLoader(sim::core_schema()).load_preset("default"); }),
            std::vector<std::string>{"unknown preset `default`; allowed: (no preset folder is configured)"});
}

TEST_F(ConfigLoaderTest, SetWithoutEqualsOrWithAnUnknownKeyIsReported) {
  EXPECT_EQ(errors([&] { loader().set("sim.seed"); }),
            std::vector<std::string>{"--set: expected key=value, got \"sim.seed\"; allowed: key.path=value, e.g. "
                                     "sim.clocks.engine=2 GHz"});
  EXPECT_EQ(errors([&] { loader().set("=3"); }),
            std::vector<std::string>{"--set: expected key=value, got \"=3\"; allowed: key.path=value, e.g. "
                                     "sim.clocks.engine=2 GHz"});
  EXPECT_EQ(errors([&] { loader().set("sim.sed=3").resolve(); }),
            std::vector<std::string>{"--set: sim.sed: unknown key; did you mean `sim.seed`?; allowed: keys of `sim`: "
                                     "seed, fidelity, data_mode, stop_time, clocks"});
  EXPECT_EQ(errors([&] { loader().set("sim.seed=[1").resolve(); }).size(), 1U);
  EXPECT_EQ(errors([&] { loader().set("hbm.stacks=99").resolve(); }),
            std::vector<std::string>{"--set: hbm.stacks: value \"99\" is above the maximum; allowed: 1 .. 12"});
}

TEST_F(ConfigLoaderTest, ExtendsCyclesAreReported) {
  write("a.yaml", "extends: b.yaml\n");
  write("b.yaml", "sim.seed: 2\nextends: ./a.yaml\n");
  EXPECT_EQ(errors([&] { loader().load_file(dir_ / "a.yaml"); }),
            std::vector<std::string>{shown("b.yaml") + ":2:10: extends: cycle of extends: " + shown("a.yaml") + " -> " +
                                     shown("b.yaml") + " -> " + shown("a.yaml")});
  write("self.yaml", "extends: self.yaml\n");
  EXPECT_EQ(errors([&] { loader().load_file(dir_ / "self.yaml"); }).size(), 1U);
  // The same base reached twice without a cycle is fine.
  write("c.yaml", "sim.seed: 3\n");
  write("d.yaml", "extends: c.yaml\n");
  const fs::path diamond = write("e.yaml", "extends: [c.yaml, d.yaml]\n");
  EXPECT_EQ(loader().load_file(diamond).resolve().get_uint("sim.seed"), 3U);
}

TEST_F(ConfigLoaderTest, AllProblemsAreReportedTogetherInFileOrder) {
  const std::string bad = std::string(SOHUSIM_SOURCE_DIR) + "/configs/examples/bad-config.yaml";
  const std::string at = fs::path(bad).lexically_normal().generic_string();
  ConfigLoader l(sim::core_schema());
  l.load_file(bad);
  EXPECT_EQ(errors([&] { l.resolve(); }),
            (std::vector<std::string>{
                at + ":5:9: sim.seed: expected a non-negative integer, got \"forty-two\"",
                at + ":6:13: sim.fidelity: unknown choice \"fastest\"; allowed: detailed, fast",
                at + ":7:14: sim.stop_time: expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got a "
                     "frequency \"5 GHz\"; allowed: 1 ns .. 3600 s",
                at + ":9:13: sim.clocks.engine: value \"20 GHz\" is above the maximum; allowed: 1 MHz .. 10 GHz",
                at + ":12:3: trace.fromat: unknown key; did you mean `trace.format`?; allowed: keys of `trace`: file, "
                     "format, categories, detail",
                at + ":15:20: stats.sample_interval: value \"2 s\" is above the maximum; allowed: 0 s .. 1 s",
            }));
}

// ---- checks, getters, sources ------------------------------------------------------------

TEST_F(ConfigLoaderTest, ChecksReportAtTheOffendingKey) {
  EXPECT_EQ(resolve_errors("hbm.timing:\n  tRAS: 40 ns\n  tRC: 50 ns\n"),
            std::vector<std::string>{shown("x.yaml") +
                                     ":3:8: hbm.timing.tRC: must be at least tRAS + tRP; allowed: >= 55 ns"});
  // A check does not run over values that failed their own validation.
  EXPECT_EQ(resolve_errors("hbm.timing:\n  tRAS: 4 GHz\n  tRC: 50 ns\n").size(), 1U);
}

TEST_F(ConfigLoaderTest, GettersRejectTheWrongTypeAndUnsetKeys) {
  Schema schema;
  schema.section("t")
      .integer("negative", -5, "a negative number")
      .uinteger("huge", 18446744073709551615ULL, "a large number")
      .string("maybe", "", "unset unless written")
      .optional();
  const Config config = ConfigLoader(schema).resolve();
  EXPECT_THROW(config.get_string("t.negative"), std::logic_error);
  EXPECT_THROW(config.get_uint("t.negative"), std::out_of_range);
  EXPECT_THROW(config.get_int("t.huge"), std::out_of_range);
  EXPECT_EQ(config.get_uint("t.huge"), 18446744073709551615ULL);
  EXPECT_EQ(config.get_double("t.negative"), -5.0);
  EXPECT_FALSE(config.has("t.maybe"));
  EXPECT_THROW(config.get_string("t.maybe"), std::out_of_range);
  EXPECT_THROW(config.get_int("t.nothing"), std::out_of_range);
  EXPECT_THROW(config.source_of("t.nothing"), std::out_of_range);
  EXPECT_THROW(config.get_quantity("t.negative"), std::logic_error);
  EXPECT_THROW(config.section_list("t.negative"), std::logic_error);
}

TEST_F(ConfigLoaderTest, DiagnoseLocatesAKeyBySource) {
  const fs::path file = write("x.yaml", "sim:\n  seed: 7\n");
  ConfigLoader l = loader();
  l.load_file(file).set("sim.fidelity=detailed");
  const Config config = l.resolve();
  EXPECT_EQ(config.diagnose("sim.seed", "too lucky", "anything but 7").to_string(),
            shown("x.yaml") + ":2:9: sim.seed: too lucky; allowed: anything but 7");
  EXPECT_EQ(config.diagnose("sim.fidelity", "no").to_string(), "--set: sim.fidelity: no");
  EXPECT_EQ(config.diagnose("sim.data_mode", "no").to_string(), "sim.data_mode: no");
}

// ---- output --------------------------------------------------------------------------------

TEST_F(ConfigLoaderTest, ToYamlLoadsBackToTheSameConfig) {
  const fs::path file = write("x.yaml",
                              "sim:\n"
                              "  seed: 18446744073709551615\n"
                              "  clocks: {dma: 833.3333 MHz, host: 2.9 GHz}\n"
                              "hbm:\n"
                              "  capacity: 12345678901\n"
                              "  efficiency: 0.1\n"
                              "  label: \"quotes \\\" and: colons # not a comment\\n\"\n"
                              "  page_policy: adaptive\n"
                              "  channel_map: [7, 6, 5]\n"
                              "  refresh: false\n"
                              "  timing: {tCK: 333.33 ps, tRC: 47.5 ns}\n"
                              "trace.categories: [\"true\", \"[x]\", '']\n"
                              "platform:\n"
                              "  hosts:\n"
                              "    - name: h0\n"
                              "      pcie: {gen: gen4, lanes: 8}\n"
                              "    - name: 'null'\n");
  ConfigLoader l = loader();
  l.load_file(file).set("sim.stop_time=0.25 ms");
  const Config config = l.resolve();
  const std::string yaml = config.to_yaml();

  ConfigLoader again = loader();
  again.load_string(yaml, "dump.yaml");
  const Config reloaded = again.resolve();
  EXPECT_EQ(reloaded.to_json(), config.to_json()) << yaml;
  EXPECT_EQ(reloaded.get_quantity("hbm.timing.tCK"), config.get_quantity("hbm.timing.tCK"));
  EXPECT_EQ(reloaded.get_string("hbm.label"), "quotes \" and: colons # not a comment\n");
  EXPECT_EQ(reloaded.section_list("platform.hosts")[1].get_string("name"), "null");
  EXPECT_EQ(reloaded.source_of("sim.seed").rfind("dump.yaml:", 0), 0U);
  // Printing the reloaded config gives the same text but for the sources.
  const auto strip_sources = [](std::string text) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      std::string line = text.substr(start, end - start);
      const std::size_t bracket = line.rfind(" [");
      if (bracket != std::string::npos) line.resize(bracket);
      out += line + "\n";
      start = end + 1;
    }
    return out;
  };
  EXPECT_EQ(strip_sources(reloaded.to_yaml()), strip_sources(yaml));
}

TEST_F(ConfigLoaderTest, ToYamlShowsUnitsDescriptionsAndSources) {
  const fs::path file = write("x.yaml", "hbm.timing.tRC: 50 ns\nplatform.hosts: [{name: h0}]\n");
  ConfigLoader l = loader();
  l.load_file(file).set("sim.seed=3");
  const std::string yaml = l.resolve().to_yaml();
  EXPECT_NE(yaml.find("  seed: 3                               # seed of every random stream; the same seed gives "
                      "the same run [--set]\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("    tCK: 312.5 ps                       # clock period [default]\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("    tRC: 50 ns                          # row cycle time [" + shown("x.yaml") + ":1:17]\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("  capacity: 24 GiB"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  hosts:                                # host machines [" + shown("x.yaml") +
                      ":2:17]\n"
                      "    - name: \"h0\""),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("hbm:                                    # HBM3E stacks\n"), std::string::npos) << yaml;
}

TEST_F(ConfigLoaderTest, ToJsonHoldsTypedValuesInSiUnits) {
  const fs::path file = write("x.yaml", "platform.hosts: [{name: h0, memory: 2 GiB}]\n");
  const nlohmann::json json = loader().load_file(file).resolve().to_json();
  EXPECT_EQ(json["sim"]["seed"], 1);
  EXPECT_TRUE(json["sim"]["seed"].is_number_unsigned());
  EXPECT_EQ(json["sim"]["clocks"]["engine"], 1.5e9);
  EXPECT_EQ(json["hbm"]["timing"]["tCK"], 312.5e-12);
  EXPECT_EQ(json["hbm"]["refresh"], true);
  EXPECT_EQ(json["hbm"]["channel_map"], nlohmann::json({0, 1, 2, 3}));
  EXPECT_EQ(json["trace"]["categories"], nlohmann::json({"all"}));
  ASSERT_TRUE(json["platform"]["hosts"].is_array());
  EXPECT_EQ(json["platform"]["hosts"][0]["memory"], 2147483648.0);
  EXPECT_EQ(json["platform"]["hosts"][0]["pcie"]["gen"], "gen5");
}

TEST_F(ConfigLoaderTest, DefaultYamlWritesOutEveryCoreDefault) {
  ConfigLoader l(sim::core_schema(), {fs::path(SOHUSIM_SOURCE_DIR) / "configs"});
  const Config from_file = l.load_preset("default").resolve();
  EXPECT_EQ(from_file.to_json(), ConfigLoader(sim::core_schema()).resolve().to_json());
  const Schema schema = sim::core_schema();
  for (const ParamSpec& spec : schema.params()) {
    if (spec.key.find('*') != std::string::npos) continue;
    EXPECT_NE(from_file.source_of(spec.key).find("default.yaml:"), std::string::npos) << spec.key;
  }
}

}  // namespace
}  // namespace sohusim::config
