#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/counters/distribution.hpp"

using namespace sohusim::counters;

TEST(Distribution, ExactMomentsAndBucketedPercentiles) {
  Distribution d("lat", "ns", "read latency", DistributionSpec::linear(0, 100, 100));
  for (int i = 1; i <= 100; ++i) d.sample(i - 0.5);  // one sample in the middle of each bucket
  EXPECT_EQ(d.count(), 100U);
  EXPECT_DOUBLE_EQ(d.min(), 0.5);
  EXPECT_DOUBLE_EQ(d.max(), 99.5);
  EXPECT_DOUBLE_EQ(d.mean(), 50.0);
  EXPECT_NEAR(d.percentile(0.5), 50.0, 1.0);
  EXPECT_NEAR(d.percentile(0.99), 99.0, 1.0);
  EXPECT_DOUBLE_EQ(d.percentile(0.0), 0.5);
  EXPECT_DOUBLE_EQ(d.percentile(1.0), 99.5);
}

TEST(Distribution, LogScaleSpansDecades) {
  Distribution d("lat", "ns", "x", DistributionSpec::log(1, 1e6, 60));
  for (int i = 0; i < 90; ++i) d.sample(100);
  for (int i = 0; i < 10; ++i) d.sample(100000);
  EXPECT_NEAR(d.percentile(0.5), 100, 100 * 0.25);  // within one log bucket (~26%)
  EXPECT_NEAR(d.percentile(0.95), 100000, 100000 * 0.25);
}

TEST(Distribution, OutOfRangeSamplesStillCountExactly) {
  Distribution d("x", "1", "x", DistributionSpec::linear(10, 20, 10));
  d.sample(1);
  d.sample(1000);
  EXPECT_EQ(d.count(), 2U);
  EXPECT_DOUBLE_EQ(d.min(), 1);
  EXPECT_DOUBLE_EQ(d.max(), 1000);
  EXPECT_DOUBLE_EQ(d.percentile(1.0), 1000);
  EXPECT_DOUBLE_EQ(d.percentile(0.0), 1);
  auto b = d.buckets();
  ASSERT_EQ(b.size(), 2U);
  EXPECT_TRUE(std::isinf(b[0].lo));
  EXPECT_TRUE(std::isinf(b[1].hi));
}

TEST(Distribution, WeightsEmptyAndReset) {
  Distribution d("x", "1", "x", DistributionSpec::linear(0, 10, 10));
  EXPECT_TRUE(std::isnan(d.mean()));
  EXPECT_TRUE(std::isnan(d.percentile(0.5)));
  d.sample(2, 3);
  d.sample(8, 1);
  EXPECT_EQ(d.count(), 4U);
  EXPECT_DOUBLE_EQ(d.mean(), 3.5);
  d.reset();
  EXPECT_EQ(d.count(), 0U);
  EXPECT_TRUE(d.buckets().empty());
}

TEST(Distribution, BadSpecIsRejected) {
  EXPECT_THROW(Distribution("x", "1", "x", DistributionSpec::log(0, 10, 10)), std::invalid_argument);
  EXPECT_THROW(Distribution("x", "1", "x", DistributionSpec::linear(5, 5, 10)), std::invalid_argument);
  EXPECT_THROW(Distribution("x", "1", "x", DistributionSpec::linear(0, 5, 0)), std::invalid_argument);
}

// Each sample lands in the bucket whose reported [lo, hi) holds it: values on the edges, just
// below them; those below the first edge (zero and negative ones on a log axis too) in the
// underflow bucket.
TEST(Distribution, EachSampleIsInTheBucketThatHoldsIt) {
  for (const DistributionSpec spec : {DistributionSpec::log(1, 1e6, 60), DistributionSpec::linear(0, 100, 7)}) {
    Distribution d("x", "1", "x", spec);
    std::vector<double> values = {0.0, -3.0, 1e12, spec.lo, spec.hi};
    {
      Distribution probe("p", "1", "p", spec);
      for (double v = spec.lo; v < spec.hi; v = v * 1.37 + 0.3) probe.sample(v);
      for (const auto& b : probe.buckets()) {
        if (std::isfinite(b.lo)) values.push_back(b.lo), values.push_back(std::nextafter(b.lo, -1e300));
      }
    }
    for (double v : values) {
      Distribution one("one", "1", "one", spec);
      one.sample(v, 2);
      const auto b = one.buckets();
      ASSERT_EQ(b.size(), 1U) << v;
      EXPECT_EQ(b[0].count, 2U);
      if (v < spec.lo) {
        EXPECT_EQ(b[0].hi, spec.lo) << v;  // the underflow bucket (a log axis reports its lo as 0)
      } else {
        EXPECT_LE(b[0].lo, v) << v;
        EXPECT_GT(b[0].hi, v) << v;
      }
      d.sample(v);
    }
    std::uint64_t total = 0;
    for (const auto& b : d.buckets()) total += b.count;
    EXPECT_EQ(total, values.size());
  }
}
