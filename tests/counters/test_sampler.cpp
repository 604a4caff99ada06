#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "sohusim/counters/sampler.hpp"

using namespace sohusim::counters;

TEST(Sampler, CountersBecomeRatesGaugesStayValues) {
  Registry reg;
  auto& bytes = reg.counter("link.bytes", "B", "bytes moved");
  auto& q = reg.gauge("link.queue", "entries", "queue depth");
  Sampler s(reg, {"link.*"});
  bytes += 1000;
  q.set(4);
  s.sample(1000);  // 1 us: 1000 B in 1 us = 1e9 B/s
  bytes += 500;
  q.set(2);
  s.sample(2000);
  ASSERT_EQ(s.columns().size(), 2U);
  EXPECT_EQ(s.columns()[0].name, "link.bytes");
  EXPECT_EQ(s.columns()[0].unit, "B/s");
  EXPECT_EQ(s.columns()[0].mode, SampleColumn::Mode::Rate);
  EXPECT_EQ(s.columns()[1].mode, SampleColumn::Mode::Value);
  ASSERT_EQ(s.rows().size(), 2U);
  EXPECT_DOUBLE_EQ(s.rows()[0][0], 1e9);
  EXPECT_DOUBLE_EQ(s.rows()[1][0], 5e8);
  EXPECT_DOUBLE_EQ(s.rows()[0][1], 4.0);
  EXPECT_DOUBLE_EQ(s.rows()[1][1], 2.0);
}

TEST(Sampler, ColumnsFreezeAtFirstSampleAndSinksSeeEveryRow) {
  Registry reg;
  reg.counter("a", "1", "x");
  Sampler s(reg, {"*"}, /*counters_as_rates=*/false, /*keep_in_memory=*/false);
  int calls = 0;
  s.add_sink([&](std::uint64_t, const std::vector<SampleColumn>& cols, const std::vector<double>& row) {
    ++calls;
    EXPECT_EQ(cols.size(), row.size());
  });
  s.sample(0);
  reg.counter("b", "1", "x");
  s.sample(10);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(s.columns().size(), 1U);
  EXPECT_TRUE(s.rows().empty()) << "keep_in_memory=false must not grow";
  EXPECT_THROW(s.sample(5), std::invalid_argument);
}

TEST(Sampler, CsvHasUnitsAndEmptyCellsForUndefined) {
  Registry reg;
  reg.counter("c", "B", "x") += 10;
  Sampler s(reg, {"c"});
  s.sample(0);
  s.sample(1000000000);
  std::ostringstream os;
  s.write_csv(os);
  EXPECT_EQ(os.str(), "time_ns,c [B/s]\n0,\n1000000000,0\n");
}
