#include "sohusim/profiler/clock_sync.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace sohusim::profiler {

namespace {

std::string num(std::int64_t v) {
  return std::to_string(v);
}

std::int64_t rounded(double v) {
  return static_cast<std::int64_t>(std::llround(v));
}

}  // namespace

std::int64_t ClockFit::to_remote(std::int64_t local_ns) const {
  const double dx = static_cast<double>(local_ns - local_ref_ns) - local_mean;
  return remote_ref_ns + rounded(remote_mean + rate * dx);
}

std::int64_t ClockFit::to_local(std::int64_t remote_ns) const {
  const double dy = static_cast<double>(remote_ns - remote_ref_ns) - remote_mean;
  return local_ref_ns + rounded(local_mean + dy / rate);
}

double ClockFit::offset_ns(std::int64_t local_ns) const {
  const double dx = static_cast<double>(local_ns - local_ref_ns) - local_mean;
  return static_cast<double>(remote_ref_ns - local_ref_ns) + (remote_mean - local_mean) + (rate - 1.0) * dx;
}

void ClockSync::Options::validate() const {
  if (group < 1 || group > 1'000'000)
    throw std::invalid_argument("ClockSync: group must be in 1 .. 1000000, not " + std::to_string(group));
  if (keep < 1 || keep > group) {
    throw std::invalid_argument("ClockSync: keep must be in 1 .. group (" + std::to_string(group) + "), not " +
                                std::to_string(keep));
  }
  if (window_ns < 0)
    throw std::invalid_argument("ClockSync: window_ns must be >= 0 (0: no limit), not " + num(window_ns));
  if (window_points == 1) throw std::invalid_argument("ClockSync: window_points must be 0 (no limit) or >= 2, not 1");
  if (min_points < 2) {
    throw std::invalid_argument("ClockSync: min_points must be >= 2 (a line needs two points), not " +
                                std::to_string(min_points));
  }
  if (window_points != 0 && min_points > window_points) {
    throw std::invalid_argument("ClockSync: min_points (" + std::to_string(min_points) +
                                ") is larger than window_points (" + std::to_string(window_points) + ")");
  }
}

ClockSync::ClockSync() : ClockSync(Options{}) {}

ClockSync::ClockSync(const Options& options) : opt_(options) {
  opt_.validate();
}

void ClockSync::add_mmio(std::int64_t host_before_ns, std::int64_t remote_ns, std::int64_t host_after_ns) {
  if (host_after_ns < host_before_ns) {
    throw std::invalid_argument("ClockSync: MMIO sample " + std::to_string(samples_) + ": host_after (" +
                                num(host_after_ns) + " ns) is earlier than host_before (" + num(host_before_ns) +
                                " ns)");
  }
  const std::int64_t rtt = host_after_ns - host_before_ns;
  accept(SyncPoint{host_before_ns + rtt / 2, remote_ns, rtt}, host_before_ns, "MMIO sample");
}

void ClockSync::add_ping(std::int64_t t1_ns, std::int64_t t2_ns, std::int64_t t3_ns, std::int64_t t4_ns) {
  const std::string which = "ClockSync: ping " + std::to_string(samples_) + ": ";
  if (t4_ns < t1_ns) {
    throw std::invalid_argument(which + "t4 (reply received, " + num(t4_ns) +
                                " ns) is earlier than t1 (request sent, " + num(t1_ns) + " ns)");
  }
  if (t3_ns < t2_ns) {
    throw std::invalid_argument(which + "t3 (reply sent, " + num(t3_ns) +
                                " ns) is earlier than t2 (request received, " + num(t2_ns) + " ns)");
  }
  // Time on the wire: the local round trip less the remote turnaround. Two clocks' jitter can
  // make it slightly negative for a turnaround as long as the round trip: it is then 0.
  const std::int64_t rtt = std::max<std::int64_t>(0, (t4_ns - t1_ns) - (t3_ns - t2_ns));
  const std::int64_t local = t1_ns + (t4_ns - t1_ns) / 2;
  const std::int64_t remote = t2_ns + (t3_ns - t2_ns) / 2;
  accept(SyncPoint{local, remote, rtt}, t1_ns, "ping");
}

void ClockSync::add_point(const SyncPoint& p) {
  if (p.rtt_ns < 0) {
    throw std::invalid_argument("ClockSync: point " + std::to_string(samples_) + ": round trip " + num(p.rtt_ns) +
                                " ns is negative");
  }
  accept(p, p.local_ns, "point");
}

void ClockSync::accept(const SyncPoint& p, std::int64_t first, const char* kind) {
  if (have_last_ && first < last_local_) {
    throw std::invalid_argument("ClockSync: " + std::string(kind) + " " + std::to_string(samples_) + ": local stamp " +
                                num(first) + " ns is earlier than the previous sample's (" + num(last_local_) +
                                " ns): local stamps must not go backwards");
  }
  have_last_ = true;
  last_local_ = first;
  ++samples_;
  pending_.push_back(p);
  if (pending_.size() >= opt_.group) {
    for (const SyncPoint& b : best_of(pending_)) push_point(b);
    pending_.clear();
  }
}

std::vector<SyncPoint> ClockSync::best_of(const std::vector<SyncPoint>& group) const {
  std::vector<std::size_t> idx(group.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return group[a].rtt_ns < group[b].rtt_ns; });
  idx.resize(std::min<std::size_t>(idx.size(), opt_.keep));
  std::sort(idx.begin(), idx.end());  // back in arrival (local) order
  std::vector<SyncPoint> out;
  out.reserve(idx.size());
  for (std::size_t i : idx) out.push_back(group[i]);
  return out;
}

namespace {

// Drops the oldest points beyond the window: older than `window_ns` before the newest, or
// more than `window_points`.
template <typename Seq>
void trim(Seq& pts, const ClockSync::Options& o) {
  if (pts.empty()) return;
  if (o.window_ns > 0) {
    std::int64_t newest = pts.front().local_ns;
    for (const SyncPoint& p : pts) newest = std::max(newest, p.local_ns);
    while (!pts.empty() && pts.front().local_ns < newest - o.window_ns) pts.erase(pts.begin());
  }
  if (o.window_points > 0 && pts.size() > o.window_points) {
    pts.erase(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(pts.size() - o.window_points));
  }
}

}  // namespace

void ClockSync::push_point(const SyncPoint& p) {
  points_.push_back(p);
  trim(points_, opt_);
}

std::vector<SyncPoint> ClockSync::window() const {
  std::vector<SyncPoint> w(points_.begin(), points_.end());
  for (const SyncPoint& b : best_of(pending_)) w.push_back(b);
  trim(w, opt_);
  return w;
}

ClockFit ClockSync::fit() const {
  const std::vector<SyncPoint> w = window();
  const std::size_t need = std::max<std::size_t>(2, opt_.min_points);
  if (w.size() < need) {
    throw std::invalid_argument("ClockSync: " + std::to_string(w.size()) + " point(s) in the window (" +
                                std::to_string(samples_) + " samples added; the best " + std::to_string(opt_.keep) +
                                " of every " + std::to_string(opt_.group) + " kept), a fit needs at least " +
                                std::to_string(need) + ": take more samples");
  }
  return fit_points(w);
}

ClockFit ClockSync::fit_points(const std::vector<SyncPoint>& points, const std::string& what) {
  if (points.size() < 2) {
    throw std::invalid_argument(what + ": " + std::to_string(points.size()) +
                                " point(s) to fit, a line needs at least 2");
  }
  ClockFit f;
  f.local_ref_ns = points.front().local_ns;
  f.remote_ref_ns = points.front().remote_ns;
  f.points = points.size();
  f.first_local_ns = f.last_local_ns = points.front().local_ns;
  // Relative to the first point, so the sums stay small enough for double precision.
  const auto n = static_cast<double>(points.size());
  double sx = 0, sy = 0;
  for (const SyncPoint& p : points) {
    sx += static_cast<double>(p.local_ns - f.local_ref_ns);
    sy += static_cast<double>(p.remote_ns - f.remote_ref_ns);
    f.first_local_ns = std::min(f.first_local_ns, p.local_ns);
    f.last_local_ns = std::max(f.last_local_ns, p.local_ns);
  }
  f.local_mean = sx / n;
  f.remote_mean = sy / n;
  double sxx = 0, sxy = 0;
  for (const SyncPoint& p : points) {
    const double dx = static_cast<double>(p.local_ns - f.local_ref_ns) - f.local_mean;
    const double dy = static_cast<double>(p.remote_ns - f.remote_ref_ns) - f.remote_mean;
    sxx += dx * dx;
    sxy += dx * dy;
  }
  if (!(sxx > 0)) {
    throw std::invalid_argument(what + ": all " + std::to_string(points.size()) + " points are at local time " +
                                num(f.local_ref_ns) + " ns: no drift can be fitted (spread the samples in time)");
  }
  f.rate = sxy / sxx;
  if (!(f.rate > 0)) {
    throw std::invalid_argument(what + ": the remote clock runs backwards against the local one (fitted rate " +
                                std::to_string(f.rate) + "): the samples do not belong to one pair of clocks");
  }
  double ss = 0;
  for (const SyncPoint& p : points) {
    const double dx = static_cast<double>(p.local_ns - f.local_ref_ns) - f.local_mean;
    const double r = static_cast<double>(p.remote_ns - f.remote_ref_ns) - f.remote_mean - f.rate * dx;
    ss += r * r;
    f.max_abs_ns = std::max(f.max_abs_ns, std::fabs(r));
  }
  f.rms_ns = std::sqrt(ss / n);
  return f;
}

}  // namespace sohusim::profiler
