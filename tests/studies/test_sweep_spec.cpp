// SweepSpec: parsing with errors that name the line and key, and expansion (crossing, zips,
// exclusions, repetitions) into the sohusim arguments of each point.
#include <string>

#include <gtest/gtest.h>

#include "sohusim/studies/sweep_spec.hpp"

namespace sohusim::studies {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    SweepSpec::parse(yaml, "s.yaml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, CrossesAxesFirstSlowestAndBuildsTheArguments) {
  const SweepSpec s = SweepSpec::parse(
      "command: run\n"
      "fixed: {model: gpt2, decode-only: true, upload-weights: false, sim.stop_time: 5 s}\n"
      "axes:\n"
      "  - {name: hbm, values: [hbm3e-8000, hbm3e-9600]}\n"
      "  - {name: device.c2c.bandwidth, values: [100 GB/s, 400 GB/s, 800 GB/s]}\n",
      "s.yaml");
  const std::vector<SweepPoint> p = expand(s);
  ASSERT_EQ(p.size(), 6U);
  EXPECT_EQ(p[0].params, (std::vector<std::pair<std::string, std::string>>{{"hbm", "hbm3e-8000"},
                                                                           {"device.c2c.bandwidth", "100 GB/s"}}));
  EXPECT_EQ(p[4].params[0].second, "hbm3e-9600");
  EXPECT_EQ(p[4].params[1].second, "400 GB/s");
  EXPECT_EQ(p[1].args,
            (std::vector<std::string>{"run", "--model", "gpt2", "--decode-only", "--set", "sim.stop_time=5 s", "--hbm",
                                      "hbm3e-8000", "--set", "device.c2c.bandwidth=400 GB/s", "--json"}));
  for (unsigned i = 0; i < p.size(); ++i) EXPECT_EQ(p[i].index, i);
}

TEST(SweepSpec, ZippedAxesMoveTogetherAndExclusionsDropPoints) {
  const SweepSpec s = SweepSpec::parse(
      "command: serve\n"
      "axes:\n"
      "  - zip:\n"
      "      - {name: batch, values: [1, 64]}\n"
      "      - {name: prompt, values: [128, 2048]}\n"
      "  - {name: tp, values: [1, 8]}\n"
      "exclude:\n"
      "  - {batch: 64, tp: 1}\n",
      "s.yaml");
  const std::vector<SweepPoint> p = expand(s);
  ASSERT_EQ(p.size(), 3U);
  EXPECT_EQ(p[0].params,
            (std::vector<std::pair<std::string, std::string>>{{"batch", "1"}, {"prompt", "128"}, {"tp", "1"}}));
  EXPECT_EQ(p[2].params,
            (std::vector<std::pair<std::string, std::string>>{{"batch", "64"}, {"prompt", "2048"}, {"tp", "8"}}));
  EXPECT_EQ(p[2].index, 2U);
}

TEST(SweepSpec, RepetitionsSetTheSeed) {
  const SweepSpec s = SweepSpec::parse("command: serve\nrepeat: 3\naxes: [{name: rate, values: [10]}]\n", "s.yaml");
  const std::vector<SweepPoint> p = expand(s);
  ASSERT_EQ(p.size(), 3U);
  EXPECT_EQ(p[2].params.back(), (std::pair<std::string, std::string>{"repeat", "3"}));
  const std::vector<std::string>& a = p[2].args;
  EXPECT_NE(std::find(a.begin(), a.end(), "--seed"), a.end());
  EXPECT_EQ(*(std::find(a.begin(), a.end(), "--seed") + 1), "3");
}

TEST(SweepSpec, TimeoutsTakeSecondsMinutesAndHours) {
  EXPECT_EQ(SweepSpec::parse("timeout: 90 s\n", "s.yaml").timeout_s, 90);
  EXPECT_EQ(SweepSpec::parse("timeout: 10 min\n", "s.yaml").timeout_s, 600);
  EXPECT_EQ(SweepSpec::parse("timeout: 2 h\n", "s.yaml").timeout_s, 7200);
  EXPECT_EQ(SweepSpec::parse("timeout: 250 ms\n", "s.yaml").timeout_s, 0.25);
}

TEST(SweepSpec, ErrorsNameTheLineColumnAndKey) {
  EXPECT_EQ(error_of("command: run\nfixd: {}\n").rfind("s.yaml:2:1: fixd: unknown key", 0), 0U)
      << error_of("command: run\nfixd: {}\n");
  EXPECT_NE(error_of("command: simulate\n").find("s.yaml:1:10: command: `simulate` (allowed: run, serve, gemm)"),
            std::string::npos);
  EXPECT_NE(error_of("axes:\n  - {name: batch, values: []}\n").find("s.yaml:2:27: axes[0].values"), std::string::npos)
      << error_of("axes:\n  - {name: batch, values: []}\n");
  EXPECT_NE(error_of("axes:\n  - {name: trace, values: [a.json]}\n").find("cannot vary"), std::string::npos);
  EXPECT_NE(
      error_of("fixed: {batch: 1}\naxes:\n  - {name: batch, values: [2]}\n").find("s.yaml:3:5: batch: named twice"),
      std::string::npos);
  EXPECT_NE(error_of("axes:\n  - zip: [{name: a, values: [1, 2]}, {name: b, values: [1]}]\n").find("equal lengths"),
            std::string::npos);
  EXPECT_NE(error_of("axes: [{name: a, values: [1]}]\nexclude: [{b: 1}]\n").find("exclude[0].b: not an axis"),
            std::string::npos);
  EXPECT_NE(error_of("timeout: 3 parsecs\n").find("s.yaml:1:10: timeout:"), std::string::npos);
  EXPECT_NE(error_of("repeat: 0\n").find("repeat: `0` (allowed: 1 .. 1000)"), std::string::npos);
  EXPECT_NE(error_of("a: &x 1\nb: *x\n").find("aliases are not accepted"), std::string::npos);
  EXPECT_NE(error_of("axes: [\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(error_of("fixed: {batch: [1, [2]]}\n").find("expected a single value"), std::string::npos);
}

TEST(SweepSpec, PlaceOfFindsTheValueThatCausedAProblem) {
  const SweepSpec s = SweepSpec::parse("fixed: {model: gpt2}\naxes:\n  - {name: batch, values: [1, 0]}\n", "s.yaml");
  EXPECT_EQ(s.place_of("batch", "0").line, 3);
  EXPECT_EQ(s.place_of("batch", "0").column, 31);
  EXPECT_EQ(s.place_of("model", "gpt2").line, 1);
  EXPECT_EQ(s.where(s.place_of("batch", "0")), "s.yaml:3:31: ");
}

}  // namespace
}  // namespace sohusim::studies
