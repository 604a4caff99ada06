#include "sohusim/counters/sampler.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <stdexcept>

namespace sohusim::counters {

Sampler::Sampler(const Registry& registry, std::vector<std::string> patterns, bool counters_as_rates,
                 bool keep_in_memory)
    : registry_(registry),
      patterns_(std::move(patterns)),
      counters_as_rates_(counters_as_rates),
      keep_(keep_in_memory) {
  if (patterns_.empty()) patterns_.push_back("**");
}

void Sampler::resolve_columns() {
  // Each stat once, in the order of the first pattern that names it.
  for (const std::string& p : patterns_) {
    for (const Stat* s : registry_.glob(p)) {
      bool seen = false;
      for (const Stat* t : stats_) seen = seen || t == s;
      if (seen) continue;
      SampleColumn col;
      col.name = s->name();
      const bool rate = counters_as_rates_ && s->kind() == StatKind::Counter;
      col.mode = rate ? SampleColumn::Mode::Rate : SampleColumn::Mode::Value;
      col.unit = rate ? s->unit() + "/s" : s->unit();
      columns_.push_back(std::move(col));
      stats_.push_back(s);
    }
  }
  previous_.assign(stats_.size(), 0.0);
  resolved_ = true;
}

void Sampler::sample(std::uint64_t time_ns) {
  if (samples_ > 0 && time_ns < previous_time_) {
    throw std::invalid_argument("sampler: time went backwards (" + std::to_string(time_ns) + " ns after " +
                                std::to_string(previous_time_) + " ns)");
  }
  if (!resolved_) resolve_columns();
  std::vector<double> row(stats_.size());
  const double dt_s = static_cast<double>(time_ns - previous_time_) * 1e-9;
  for (std::size_t i = 0; i < stats_.size(); ++i) {
    const double v = stats_[i]->value();
    if (columns_[i].mode == SampleColumn::Mode::Rate) {
      row[i] = dt_s > 0.0 ? (v - previous_[i]) / dt_s : std::numeric_limits<double>::quiet_NaN();
    } else {
      row[i] = v;
    }
    previous_[i] = v;
  }
  previous_time_ = time_ns;
  ++samples_;
  for (const Sink& sink : sinks_) sink(time_ns, columns_, row);
  if (keep_) {
    times_.push_back(time_ns);
    rows_.push_back(std::move(row));
  }
}

void Sampler::write_csv_header(std::ostream& os, const std::vector<SampleColumn>& columns) {
  os << "time_ns";
  for (const SampleColumn& c : columns) os << ',' << c.name << " [" << c.unit << ']';
  os << '\n';
}

void Sampler::write_csv_row(std::ostream& os, std::uint64_t time_ns, const std::vector<double>& row) {
  os << time_ns;
  for (double v : row) {
    os << ',';
    if (std::isfinite(v)) os << std::setprecision(12) << v;
  }
  os << '\n';
}

void Sampler::write_csv(std::ostream& os) const {
  write_csv_header(os, columns_);
  for (std::size_t r = 0; r < rows_.size(); ++r) write_csv_row(os, times_[r], rows_[r]);
}

}  // namespace sohusim::counters
