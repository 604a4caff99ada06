#include <cmath>

#include <gtest/gtest.h>

#include "sohusim/counters/registry.hpp"

using namespace sohusim::counters;

TEST(Formula, ArithmeticPrecedenceAndParentheses) {
  Registry reg;
  reg.counter("a", "1", "x") += 6;
  reg.counter("b", "1", "x") += 3;
  EXPECT_DOUBLE_EQ(reg.formula("f1", "1", "", "a + b * 2").value(), 12.0);
  EXPECT_DOUBLE_EQ(reg.formula("f2", "1", "", "(a + b) * 2").value(), 18.0);
  EXPECT_DOUBLE_EQ(reg.formula("f3", "1", "", "a / b - -1").value(), 3.0);
  EXPECT_DOUBLE_EQ(reg.formula("f4", "1", "", "1.5e3 / a").value(), 250.0);
}

TEST(Formula, GlobsAggregate) {
  Registry reg;
  reg.counter("dev0.me0.busy", "cycles", "x") += 10;
  reg.counter("dev0.me1.busy", "cycles", "x") += 30;
  reg.counter("dev0.cycles", "cycles", "x") += 40;
  EXPECT_DOUBLE_EQ(reg.formula("s", "1", "", "dev0.me*.busy").value(), 40.0);
  EXPECT_DOUBLE_EQ(reg.formula("mx", "1", "", "max(dev0.me*.busy)").value(), 30.0);
  EXPECT_DOUBLE_EQ(reg.formula("mn", "1", "", "min(dev0.me*.busy)").value(), 10.0);
  EXPECT_DOUBLE_EQ(reg.formula("av", "1", "", "avg(dev0.me*.busy)").value(), 20.0);
  EXPECT_DOUBLE_EQ(reg.formula("ct", "1", "", "count(dev0.me*.busy)").value(), 2.0);
  EXPECT_DOUBLE_EQ(reg.formula("util", "1", "", "sum(dev0.me*.busy) / (count(dev0.me*.busy) * dev0.cycles)").value(),
                   0.5);
}

TEST(Formula, ResolvesStatsRegisteredLater) {
  Registry reg;
  Formula& f = reg.formula("bw", "B/s", "", "bytes / seconds");
  EXPECT_TRUE(std::isnan(f.value()));
  reg.counter("bytes", "B", "x") += 100;
  reg.gauge("seconds", "s", "x").set(4);
  EXPECT_DOUBLE_EQ(f.value(), 25.0);
}

TEST(Formula, DivisionByZeroAndMissingNamesAreNaN) {
  Registry reg;
  reg.counter("a", "1", "x") += 1;
  reg.counter("z", "1", "x");
  EXPECT_TRUE(std::isnan(reg.formula("f", "1", "", "a / z").value()));
  EXPECT_TRUE(std::isnan(reg.formula("g", "1", "", "missing + 1").value()));
  EXPECT_DOUBLE_EQ(reg.formula("h", "1", "", "count(none.*)").value(), 0.0);
}

TEST(Formula, SyntaxErrorsNameTheFormulaAndColumn) {
  Registry reg;
  try {
    reg.formula("bad", "1", "", "a + (b");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("formula 'bad': missing ')'"), std::string::npos) << e.what();
  }
  try {
    reg.formula("bad2", "1", "", "frob(a)");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown function 'frob'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reg.formula("bad3", "1", "", "a +"), std::invalid_argument);
  EXPECT_THROW(reg.formula("bad4", "1", "", "a b"), std::invalid_argument);
  // A failed registration leaves no half-made stat behind.
  EXPECT_EQ(reg.find("bad"), nullptr);
}

TEST(Formula, SelfReferenceIsAnErrorNotARecursion) {
  Registry reg;
  reg.counter("x.a", "1", "x") += 1;
  Formula& f = reg.formula("x.total", "1", "", "sum(x.*)");
  EXPECT_THROW((void)f.value(), std::logic_error);
}

TEST(Formula, CallableFormula) {
  Registry reg;
  auto& c = reg.counter("n", "1", "x");
  Formula& f = reg.formula("twice", "1", "", [&c] { return 2.0 * static_cast<double>(c.count()); });
  c += 21;
  EXPECT_DOUBLE_EQ(f.value(), 42.0);
}
