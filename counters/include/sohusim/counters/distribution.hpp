#pragma once
// Distribution: a histogram of samples (read latencies, queue depths at arrival,
// transfer sizes) with exact count, sum, min and max beside it.
//
// Buckets come from Boost.Histogram: linear for bounded quantities, logarithmic
// for latencies that span decades. Percentiles are interpolated inside the bucket
// that holds them and clamped to the exact min/max, so their error is at most one
// bucket width; samples outside [lo, hi) land in under/overflow bins and still
// count in count/sum/min/max exactly. A sample finds its bucket by a binary search of the
// axis' edges (a log axis would take a logarithm per sample, the dearer part of sampling a
// latency per request).

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sohusim/counters/stat.hpp"

namespace sohusim::counters {

struct DistributionSpec {
  enum class Scale { Linear, Log };
  Scale scale = Scale::Log;
  double lo = 1.0;        // lower edge of the first bucket (must be > 0 for Log)
  double hi = 1.0e9;      // upper edge of the last bucket
  unsigned buckets = 64;  // number of regular buckets between lo and hi

  static DistributionSpec linear(double lo, double hi, unsigned buckets) { return {Scale::Linear, lo, hi, buckets}; }
  static DistributionSpec log(double lo, double hi, unsigned buckets) { return {Scale::Log, lo, hi, buckets}; }
};

class Distribution final : public Stat {
 public:
  Distribution(std::string name, std::string unit, std::string description, DistributionSpec spec);
  ~Distribution() override;

  void sample(double v, std::uint64_t weight = 1);

  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ ? min_ : std::numeric_limits<double>::quiet_NaN(); }
  double max() const { return count_ ? max_ : std::numeric_limits<double>::quiet_NaN(); }
  double mean() const;
  // q in [0, 1]; NaN when empty.
  double percentile(double q) const;
  const DistributionSpec& spec() const { return spec_; }

  struct Bucket {
    double lo, hi;  // -inf / +inf for the under/overflow buckets
    std::uint64_t count;
  };
  std::vector<Bucket> buckets() const;  // non-empty buckets, in order

  StatKind kind() const override { return StatKind::Distribution; }
  double value() const override { return mean(); }
  void reset() override;
  void to_json(nlohmann::json& out) const override;

 private:
  struct Impl;
  DistributionSpec spec_;
  std::unique_ptr<Impl> impl_;
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
  double min_ = 0.0;
  double max_ = 0.0;
};

}  // namespace sohusim::counters
