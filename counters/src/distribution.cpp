#include "sohusim/counters/distribution.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

#include <boost/histogram.hpp>
#include <nlohmann/json.hpp>

namespace sohusim::counters {

namespace bh = boost::histogram;

namespace {
using LinearAxis = bh::axis::regular<double>;
using LogAxis = bh::axis::regular<double, bh::axis::transform::log>;
using LinearHist = decltype(bh::make_histogram(LinearAxis(1, 0.0, 1.0)));
using LogHist = decltype(bh::make_histogram(LogAxis(1, 1.0, 2.0)));

nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}
}  // namespace

struct Distribution::Impl {
  std::variant<LinearHist, LogHist> hist;
  std::vector<double> edges;  // the axis' bucket edges, buckets + 1 of them, ascending
};

Distribution::Distribution(std::string name, std::string unit, std::string description, DistributionSpec spec)
    : Stat(std::move(name), std::move(unit), std::move(description)), spec_(spec) {
  if (spec.buckets == 0 || !(spec.hi > spec.lo) || (spec.scale == DistributionSpec::Scale::Log && !(spec.lo > 0.0))) {
    throw std::invalid_argument("distribution '" + this->name() +
                                "': bucket spec needs buckets > 0, hi > lo, and lo > 0 for a log scale");
  }
  if (spec.scale == DistributionSpec::Scale::Linear) {
    impl_ = std::make_unique<Impl>(Impl{bh::make_histogram(LinearAxis(spec.buckets, spec.lo, spec.hi)), {}});
  } else {
    impl_ = std::make_unique<Impl>(Impl{bh::make_histogram(LogAxis(spec.buckets, spec.lo, spec.hi)), {}});
  }
  std::visit(
      [&](const auto& h) {
        const auto& axis = h.axis();
        for (int i = 0; i <= axis.size(); ++i) impl_->edges.push_back(axis.value(i));
      },
      impl_->hist);
}

Distribution::~Distribution() = default;

void Distribution::sample(double v, std::uint64_t weight) {
  if (weight == 0 || std::isnan(v)) return;
  // Bucket i holds [edges[i], edges[i+1]); -1 is the underflow bucket, buckets() the overflow.
  const std::vector<double>& e = impl_->edges;
  const int i = static_cast<int>(std::upper_bound(e.begin(), e.end(), v) - e.begin()) - 1;
  std::visit([&](auto& h) { h.at(i) += static_cast<double>(weight); }, impl_->hist);
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  count_ += weight;
  sum_ += v * static_cast<double>(weight);
}

double Distribution::mean() const {
  return count_ ? sum_ / static_cast<double>(count_) : std::numeric_limits<double>::quiet_NaN();
}

std::vector<Distribution::Bucket> Distribution::buckets() const {
  std::vector<Bucket> out;
  std::visit(
      [&](const auto& h) {
        for (auto&& x : bh::indexed(h, bh::coverage::all)) {
          const double c = *x;
          if (c <= 0.0) continue;
          out.push_back({x.bin().lower(), x.bin().upper(), static_cast<std::uint64_t>(std::llround(c))});
        }
      },
      impl_->hist);
  return out;
}

double Distribution::percentile(double q) const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  q = std::clamp(q, 0.0, 1.0);
  const double target = q * static_cast<double>(count_);
  double seen = 0.0;
  for (const Bucket& b : buckets()) {
    const double c = static_cast<double>(b.count);
    if (seen + c >= target) {
      // Interpolate inside the bucket; the exact min/max bound the open-ended
      // under/overflow buckets and tighten the edge ones.
      const double lo = std::max(std::isfinite(b.lo) ? b.lo : min_, min_);
      const double hi = std::min(std::isfinite(b.hi) ? b.hi : max_, max_);
      const double frac = c > 0.0 ? (target - seen) / c : 0.0;
      return std::clamp(lo + (hi - lo) * frac, min_, max_);
    }
    seen += c;
  }
  return max_;
}

void Distribution::reset() {
  std::visit([](auto& h) { h.reset(); }, impl_->hist);
  count_ = 0;
  sum_ = min_ = max_ = 0.0;
}

void Distribution::to_json(nlohmann::json& out) const {
  out["value"] = number(mean());
  out["count"] = count_;
  out["sum"] = sum_;
  out["min"] = number(min());
  out["max"] = number(max());
  out["mean"] = number(mean());
  out["p50"] = number(percentile(0.50));
  out["p90"] = number(percentile(0.90));
  out["p99"] = number(percentile(0.99));
  nlohmann::json b = nlohmann::json::array();
  for (const Bucket& x : buckets()) b.push_back({number(x.lo), number(x.hi), x.count});
  out["buckets"] = std::move(b);
}

}  // namespace sohusim::counters
