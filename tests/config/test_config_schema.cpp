// Schema declaration: the builder, declaration mistakes, value parsing per type, lookups
// through open maps, merging layers, and the core schema.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/config/config_schema.hpp"
#include "sohusim/sim/core_schema.hpp"

namespace sohusim::config {
namespace {

Schema timing_schema() {
  Schema schema;
  schema.section("hbm.timing", "HBM3E timing")
      .quantity("tCK", Dimension::Time, "312.5 ps", "200 ps", "2 ns", "clock period")
      .unit("ps")
      .quantity("tRC", Dimension::Time, "48 ns", "30 ns", "100 ns", "row cycle time")
      .unit("ns");
  schema.section("hbm")
      .integer("stacks", 6, 1, 12, "stacks per chip")
      .enumeration("page_policy", "open", {"open", "closed", "adaptive"}, "row buffer policy")
      .quantity("capacity", Dimension::Bytes, "24 GiB", "stack capacity")
      .bare_number();
  return schema;
}

TEST(ConfigSchema, BuilderRecordsEveryField) {
  const Schema schema = timing_schema();
  const ParamSpec* tck = schema.find("hbm.timing.tCK");
  ASSERT_NE(tck, nullptr);
  EXPECT_EQ(tck->type, ParamType::Quantity);
  EXPECT_EQ(tck->dimension, Dimension::Time);
  EXPECT_EQ(std::get<double>(*tck->default_value), 312.5e-12);
  EXPECT_EQ(std::get<double>(*tck->min), 200e-12);
  EXPECT_EQ(std::get<double>(*tck->max), 2e-9);
  EXPECT_EQ(tck->unit, "ps");
  EXPECT_EQ(tck->description, "clock period");
  EXPECT_FALSE(tck->required);

  const ParamSpec* stacks = schema.find("hbm.stacks");
  ASSERT_NE(stacks, nullptr);
  EXPECT_EQ(stacks->type, ParamType::Int);
  EXPECT_EQ(std::get<std::int64_t>(*stacks->default_value), 6);
  EXPECT_EQ(stacks->allowed(), "1 .. 12");
  EXPECT_TRUE(schema.find("hbm.capacity")->bare_number);
  EXPECT_EQ(schema.section_description("hbm.timing"), "HBM3E timing");
  EXPECT_EQ(schema.find("hbm.nope"), nullptr);
}

TEST(ConfigSchema, DeclarationMistakesAreLogicErrors) {
  Schema schema = timing_schema();
  EXPECT_THROW(schema.section("hbm").integer("stacks", 1, "again"), std::logic_error);
  EXPECT_THROW(schema.section("x").integer("n", 100, 1, 64, "default out of range"), std::logic_error);
  EXPECT_THROW(schema.section("x").integer("m", 1, 64, 1, "min above max"), std::logic_error);
  EXPECT_THROW(schema.section("x").enumeration("e", "c", {"a", "b"}, "default not a choice"), std::logic_error);
  EXPECT_THROW(schema.section("x").enumeration("f", "", {}, "no choices"), std::logic_error);
  EXPECT_THROW(schema.section("x").quantity("q", Dimension::Time, "3 GHz", "wrong dimension"), std::logic_error);
  EXPECT_THROW(schema.section("x").quantity("r", Dimension::Time, "1 ns", "t").unit("GHz"), std::logic_error);
  EXPECT_THROW(schema.section("x").boolean("b", true, "flag").bare_number(), std::logic_error);
  EXPECT_THROW(schema.section("x").entry("host", "3 GHz", "no open map here"), std::logic_error);
  EXPECT_THROW(schema.section("x").integer("bad name", 1, "space"), std::logic_error);
  // A key cannot be a parameter and a section at once.
  EXPECT_THROW(schema.section("hbm.stacks").integer("count", 1, "below a parameter"), std::logic_error);
  EXPECT_THROW(schema.section("").integer("hbm", 1, "above parameters"), std::logic_error);
}

TEST(ConfigSchema, ParsesEachTypeAndReportsWhatWasExpected) {
  Schema schema;
  schema.section("t")
      .boolean("flag", false, "a flag")
      .integer("count", 4, -8, 64, "a count")
      .uinteger("seed", 1, "a seed")
      .real("factor", 0.5, 0.0, 1.0, "a factor")
      .string("name", "", "a name")
      .enumeration("mode", "fast", {"detailed", "fast"}, "a mode")
      .quantity("period", Dimension::Time, "1 ns", "1 ns", "10 ns", "a period")
      .strings("tags", {}, "tags")
      .integers("ids", {}, 0, 9, "ids");
  const auto parse = [&schema](const char* key, const char* text) { return schema.find(key)->parse(text); };

  EXPECT_EQ(std::get<bool>(*parse("t.flag", "yes").value), true);
  EXPECT_EQ(std::get<bool>(*parse("t.flag", "False").value), false);
  EXPECT_EQ(parse("t.flag", "maybe").error, "expected true or false, got \"maybe\"");

  EXPECT_EQ(std::get<std::int64_t>(*parse("t.count", "-8").value), -8);
  EXPECT_EQ(std::get<std::int64_t>(*parse("t.count", "0x20").value), 32);
  EXPECT_EQ(std::get<std::int64_t>(*parse("t.count", "1_6").value), 16);
  EXPECT_EQ(parse("t.count", "abc").error, "expected an integer, got \"abc\"");
  EXPECT_EQ(parse("t.count", "1.5").error, "expected an integer, got \"1.5\"");
  EXPECT_EQ(parse("t.count", "99999999999999999999").error,
            "\"99999999999999999999\" does not fit in a 64-bit integer");
  const ParamSpec::Parsed above = parse("t.count", "65");
  EXPECT_EQ(above.error, "value \"65\" is above the maximum");
  EXPECT_EQ(above.allowed, "-8 .. 64");

  EXPECT_EQ(std::get<std::uint64_t>(*parse("t.seed", "18446744073709551615").value), 18446744073709551615ULL);
  EXPECT_EQ(parse("t.seed", "-1").error, "expected a non-negative integer, got \"-1\"");

  EXPECT_EQ(std::get<double>(*parse("t.factor", "0.25").value), 0.25);
  EXPECT_EQ(parse("t.factor", "nan").error, "expected a number, got \"nan\"");
  EXPECT_EQ(parse("t.factor", "1.5").allowed, "0 .. 1");

  EXPECT_EQ(std::get<std::string>(*parse("t.name", "a b").value), "a b");

  const ParamSpec::Parsed mode = parse("t.mode", "detailled");
  EXPECT_EQ(mode.error, "unknown choice \"detailled\"; did you mean `detailed`?");
  EXPECT_EQ(mode.allowed, "detailed, fast");

  // Range errors quote the text as written and show the range in the parameter's unit.
  const ParamSpec::Parsed period = parse("t.period", "500 ps");
  EXPECT_EQ(period.error, "value \"500 ps\" is below the minimum");
  EXPECT_EQ(period.allowed, "1 ns .. 10 ns");
  EXPECT_EQ(parse("t.period", "5 GHz").error,
            "expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got a frequency \"5 GHz\"");
  EXPECT_EQ(parse("t.period", "5").error,
            "expected a time such as \"120 ns\" (units: ps, ns, us, ms, s), got the bare number \"5\"; write it "
            "with a unit");

  EXPECT_EQ(std::get<std::vector<std::string>>(*parse("t.tags", "hbm").value), std::vector<std::string>{"hbm"});
  EXPECT_EQ(parse("t.ids", "10").error, "value \"10\" is above the maximum");
}

TEST(ConfigSchema, BareNumberIsAPerParameterChoice) {
  const Schema schema = timing_schema();
  EXPECT_EQ(std::get<double>(*schema.find("hbm.capacity")->parse("4096").value), 4096.0);
  EXPECT_FALSE(schema.find("hbm.timing.tRC")->parse("48").value);
  EXPECT_EQ(schema.find("hbm.capacity")->expected(),
            "a size such as \"64 KiB\" (units: B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), or a bare number of B");
}

TEST(ConfigSchema, FormatsValuesInTheDeclaredUnit) {
  const Schema schema = timing_schema();
  const ParamSpec& tck = *schema.find("hbm.timing.tCK");
  EXPECT_EQ(tck.format(312.5e-12), "312.5 ps");
  EXPECT_EQ(tck.format(1e-9), "1000 ps");
  EXPECT_EQ(tck.allowed(), "200 ps .. 2000 ps");
  EXPECT_EQ(schema.find("hbm.timing.tRC")->allowed(), "30 ns .. 100 ns");
  EXPECT_EQ(schema.find("hbm.capacity")->format(24.0 * (1ULL << 30)), "24 GiB");
}

TEST(ConfigSchema, OpenMapsMatchAnyNameAndEntriesCopyTheirSpec) {
  Schema schema;
  schema.section("clocks", "clock domains")
      .quantity("*", Dimension::Frequency, "", "1 MHz", "10 GHz", "a clock")
      .entry("host", "3 GHz", "host clock");
  const ParamSpec* any = schema.find("clocks.dma");
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->key, "clocks.*");
  EXPECT_FALSE(any->default_value);
  const ParamSpec* host = schema.find("clocks.host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->key, "clocks.host");
  EXPECT_EQ(std::get<double>(*host->default_value), 3e9);
  EXPECT_EQ(std::get<double>(*host->max), 10e9);
  EXPECT_EQ(host->description, "host clock");
  EXPECT_EQ(schema.find("clocks.dma.x"), nullptr);
  EXPECT_THROW(schema.section("clocks").entry("fast", "20 GHz", "out of range"), std::logic_error);
}

TEST(ConfigSchema, SectionsAndChildNamesFollowDeclarationOrder) {
  const Schema schema = timing_schema();
  EXPECT_TRUE(schema.is_section("hbm"));
  EXPECT_TRUE(schema.is_section("hbm.timing"));
  EXPECT_TRUE(schema.is_section(""));
  EXPECT_FALSE(schema.is_section("hbm.stacks"));
  EXPECT_FALSE(schema.is_section("pcie"));
  EXPECT_EQ(schema.child_names(""), std::vector<std::string>{"hbm"});
  EXPECT_EQ(schema.child_names("hbm"), (std::vector<std::string>{"timing", "stacks", "page_policy", "capacity"}));
  EXPECT_EQ(schema.child_names("hbm.timing"), (std::vector<std::string>{"tCK", "tRC"}));
}

TEST(ConfigSchema, ModifiersMakeParametersRequiredOrOptional) {
  Schema schema;
  schema.section("dev").integer("id", 0, "device id").required().string("label", "x", "label").optional();
  EXPECT_TRUE(schema.find("dev.id")->required);
  EXPECT_FALSE(schema.find("dev.id")->default_value);
  EXPECT_FALSE(schema.find("dev.label")->required);
  EXPECT_FALSE(schema.find("dev.label")->default_value);
  Schema empty;
  EXPECT_THROW(empty.section("a").unit("ns"), std::logic_error);
}

TEST(ConfigSchema, MergeCombinesLayersAndRejectsDuplicates) {
  Schema merged = sim::core_schema();
  const std::size_t core_checks = merged.checks().size();  // the core's own (stats.sample_interval)
  merged.merge(timing_schema());
  merged.add_check([](const Config&, std::vector<ConfigDiagnostic>&) {});
  EXPECT_NE(merged.find("sim.seed"), nullptr);
  EXPECT_NE(merged.find("hbm.timing.tRC"), nullptr);
  EXPECT_EQ(merged.section_description("hbm.timing"), "HBM3E timing");
  EXPECT_EQ(merged.checks().size(), core_checks + 1);
  EXPECT_THROW(merged.merge(timing_schema()), std::logic_error);
}

TEST(ConfigSchema, SectionListsCarryTheirElementSchema) {
  Schema host;
  host.section("").string("name", "", "host name").required().integer("cores", 4, 1, 256, "cores");
  Schema schema;
  schema.section("platform").section_list("hosts", host, "hosts on the platform");
  const ParamSpec* hosts = schema.find("platform.hosts");
  ASSERT_NE(hosts, nullptr);
  EXPECT_EQ(hosts->type, ParamType::SectionList);
  ASSERT_TRUE(hosts->element_schema);
  EXPECT_NE(hosts->element_schema->find("cores"), nullptr);
}

TEST(ConfigSchema, ClosestMatchSuggestsPlausibleTypos) {
  const std::vector<std::string> keys = {"sim.seed", "sim.fidelity", "trace.format", "trace.file"};
  EXPECT_EQ(closest_match("sim.sed", keys), "sim.seed");
  EXPECT_EQ(closest_match("trace.fromat", keys), "trace.format");
  EXPECT_EQ(closest_match("SIM.SEED", keys), "sim.seed");
  EXPECT_EQ(closest_match("hbm.stacks", keys), std::nullopt);
  EXPECT_EQ(closest_match("x", {}), std::nullopt);
}

TEST(ConfigSchema, CoreSchemaDeclaresTheSimulationParameters) {
  const Schema schema = sim::core_schema();
  const auto default_of = [&schema](const char* key) { return *schema.find(key)->default_value; };
  EXPECT_EQ(std::get<std::uint64_t>(default_of("sim.seed")), 1U);
  EXPECT_EQ(std::get<std::string>(default_of("sim.fidelity")), "fast");
  EXPECT_EQ(schema.find("sim.fidelity")->choices, (std::vector<std::string>{"detailed", "fast"}));
  EXPECT_EQ(std::get<std::string>(default_of("sim.data_mode")), "timing");
  EXPECT_EQ(std::get<double>(default_of("sim.stop_time")), 1.0);
  EXPECT_EQ(std::get<double>(default_of("sim.clocks.host")), 3e9);
  EXPECT_EQ(std::get<double>(default_of("sim.clocks.engine")), 1.5e9);
  EXPECT_EQ(std::get<double>(default_of("sim.clocks.hbm")), 1.6e9);
  EXPECT_EQ(std::get<double>(default_of("sim.clocks.link")), 1e9);
  EXPECT_NE(schema.find("sim.clocks.dma"), nullptr);
  EXPECT_EQ(std::get<std::string>(default_of("trace.file")), "");
  EXPECT_EQ(schema.find("trace.format")->choices, (std::vector<std::string>{"auto", "perfetto", "json"}));
  EXPECT_EQ(std::get<std::vector<std::string>>(default_of("trace.categories")), std::vector<std::string>{"all"});
  EXPECT_EQ(std::get<std::string>(default_of("stats.format")), "json");
  EXPECT_EQ(std::get<double>(default_of("stats.sample_interval")), 0.0);
  EXPECT_EQ(schema.find("stats.sample_interval")->allowed(), "0 s .. 1 s");
  for (const ParamSpec& spec : schema.params()) {
    EXPECT_FALSE(spec.description.empty()) << spec.key;
  }
}

}  // namespace
}  // namespace sohusim::config
