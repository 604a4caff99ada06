// prepare_points: every point checked before any runs (arguments, configuration, model),
// problems reported at the spec line of the value that caused them; keys that follow the
// simulated configuration and options, not their spelling.
#include <string>

#include <gtest/gtest.h>

#include "sohusim/studies/sweep_validation.hpp"

namespace sohusim::studies {
namespace {

const std::vector<std::string> kDirs = {std::string(SOHUSIM_SOURCE_DIR) + "/configs"};

std::vector<SweepPoint> prepared(const SweepSpec& s, const ArgsCheck& check = nullptr) {
  std::vector<SweepPoint> p = expand(s);
  prepare_points(s, p, kDirs, check);
  return p;
}

std::string problems(const std::string& yaml, const ArgsCheck& check = nullptr) {
  try {
    prepared(SweepSpec::parse(yaml, "s.yaml"), check);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SweepValidation, KeysDifferPerPointAndFollowTheResolvedConfiguration) {
  const std::vector<SweepPoint> p =
      prepared(SweepSpec::parse("fixed: {model: gpt2}\n"
                                "axes:\n"
                                "  - {name: hbm, values: [hbm3e-8000, hbm3e-9600]}\n"
                                "  - {name: batch, values: [1, 2]}\n",
                                "s.yaml"));
  ASSERT_EQ(p.size(), 4U);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i].key.size(), 16U);
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(p[i].key, p[j].key);
  }
  // hbm3e-8000 is the sohu arch's own: naming it or not is the same machine, the same key.
  const std::vector<SweepPoint> q =
      prepared(SweepSpec::parse("fixed: {model: gpt2}\naxes:\n  - {name: batch, values: [1, 2]}\n", "s.yaml"));
  EXPECT_EQ(q[0].key, p[0].key);
  EXPECT_EQ(q[1].key, p[1].key);
}

TEST(SweepValidation, EveryBadValueIsReportedAtItsLineWithItsKey) {
  const std::string text = problems(
      "fixed: {model: gpt2}\n"
      "axes:\n"
      "  - {name: device.matrix.engines, values: [32, 0]}\n"
      "  - {name: hbm, values: [hbm3e-8000, hbm9]}\n"
      "  - {name: device.matrix.engnes, values: [1]}\n");
  EXPECT_NE(text.find("s.yaml:3:48: device.matrix.engines: value \"0\" is below the minimum"), std::string::npos)
      << text;
  EXPECT_NE(text.find("s.yaml:4:38: hbm: HBM preset `hbm9`"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:5:43: device.matrix.engnes: unknown key; did you mean `device.matrix.engines`?"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("s.yaml:3:"), text.find("s.yaml:4:"));  // in file order
  EXPECT_LT(text.find("s.yaml:4:"), text.find("s.yaml:5:"));
}

TEST(SweepValidation, ModelsAndArgumentsAreCheckedToo) {
  EXPECT_NE(problems("fixed: {model: gpt-5}\n").find("s.yaml:1:16: model: unknown model 'gpt-5'"), std::string::npos)
      << problems("fixed: {model: gpt-5}\n");
  const ArgsCheck check = [](const std::vector<std::string>& args) -> std::string {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "--batch" && args[i + 1] == "0") return "--batch: Value 0 not in range [1 - 65535]";
    return "";
  };
  EXPECT_NE(problems("axes:\n  - {name: batch, values: [1, 0]}\n", check)
                .find("s.yaml:2:31: batch: --batch: Value 0 not in range"),
            std::string::npos)
      << problems("axes:\n  - {name: batch, values: [1, 0]}\n", check);
}

TEST(SweepValidation, TwoPointsOfOneConfigurationAreRefused) {
  const std::string text = problems("axes:\n  - {name: hbm, values: [hbm3e-8000, hbm/hbm3e-8000]}\n");
  EXPECT_NE(text.find("simulate the same configuration"), std::string::npos) << text;
}

}  // namespace
}  // namespace sohusim::studies
