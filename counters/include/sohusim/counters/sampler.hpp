#pragma once
// Sampler: the registry sampled at an interval into a time series.
//
// The sampler does not own a clock: whoever drives simulated time calls
// sample(now) (sim/'s StatsSampler does it every `stats.sample_interval` of
// simulated time). Each stat matching one of the patterns becomes a column,
// frozen at the first sample so every row has the same shape. Counters are
// sampled as rates (increase per second of simulated time since the previous
// sample) unless asked for raw values; gauges, distributions (mean) and formulas
// as values. Rows go to sinks as they are taken — a CSV stream, trace counter
// tracks — and are kept in memory only if asked, so a long run stays bounded.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"

namespace sohusim::counters {

struct SampleColumn {
  enum class Mode { Value, Rate };
  std::string name;  // stat name
  std::string unit;  // the stat's unit, or "<unit>/s" for rates
  Mode mode = Mode::Value;
};

class Sampler {
 public:
  using Sink = std::function<void(std::uint64_t time_ns, const std::vector<SampleColumn>& columns,
                                  const std::vector<double>& row)>;

  Sampler(const Registry& registry, std::vector<std::string> patterns, bool counters_as_rates = true,
          bool keep_in_memory = true);

  // Take one sample at simulated time `time_ns` (must not go backwards: throws
  // std::invalid_argument). The first sample fixes the columns; a rate column's
  // first value is its increase since time 0 over time_ns (NaN at time 0).
  void sample(std::uint64_t time_ns);

  void add_sink(Sink sink) { sinks_.push_back(std::move(sink)); }
  const std::vector<SampleColumn>& columns() const { return columns_; }
  const std::vector<std::uint64_t>& times() const { return times_; }
  const std::vector<std::vector<double>>& rows() const { return rows_; }
  std::size_t samples() const { return samples_; }

  // CSV of the rows kept in memory: time_ns,<col>,<col>... (header has units).
  void write_csv(std::ostream& os) const;
  static void write_csv_header(std::ostream& os, const std::vector<SampleColumn>& columns);
  static void write_csv_row(std::ostream& os, std::uint64_t time_ns, const std::vector<double>& row);

 private:
  void resolve_columns();

  const Registry& registry_;
  std::vector<std::string> patterns_;
  bool counters_as_rates_;
  bool keep_;
  bool resolved_ = false;
  std::vector<SampleColumn> columns_;
  std::vector<const Stat*> stats_;
  std::vector<double> previous_;
  std::uint64_t previous_time_ = 0;
  std::size_t samples_ = 0;
  std::vector<std::uint64_t> times_;
  std::vector<std::vector<double>> rows_;
  std::vector<Sink> sinks_;
};

}  // namespace sohusim::counters
