#pragma once
// ClockSync: aligns a remote clock (a device's TIMESTAMP counter, another host's clock) with
// a local one (this host's clock) from sync samples, the way a profiler must on real
// machines: it never sees true time, only readings of two clocks that each have their own
// offset, drift and read jitter (docs/clock-sync.md).
//
// Two kinds of sample, both reduced to one point (local, remote, round trip):
//
//   MMIO      the host reads its clock (before), reads the remote counter over the bus, and
//             reads its clock again (after). The remote value was taken somewhere inside
//             [before, after]: the point is (midpoint, remote), the round trip after - before
//             bounds the error of the midpoint guess.
//   ping      NTP's four timestamps: t1 request sent (local clock), t2 request received and
//             t3 reply sent (remote clock), t4 reply received (local clock). The point is
//             ((t1 + t4) / 2, (t2 + t3) / 2); the round trip is (t4 - t1) - (t3 - t2), the
//             time spent on the wire.
//
// The midpoint guess is exact only when both legs take equally long; a sample delayed on
// one leg (a busy link, an interrupt, a queued packet) is off by up to half of its extra
// round trip. So the estimator keeps the lowest-round-trip samples: consecutive samples form
// groups of `group`, and of each group only the `keep` with the smallest round trip become
// points. Over a sliding window of the latest points (by local time and/or by count) it fits
//
//   remote = remote0 + rate * (local - local0)
//
// by least squares: the offset at any moment and the drift (rate - 1, in ppm) between the
// clocks. to_local()/to_remote() convert through the fit. Plain C++17; not thread-safe.
//
// Times are nanoseconds in std::int64_t (clock readings below 2^63 ns, about 292 years; a
// signed type so that offsets and extrapolations before an epoch stay representable).
// Bad input throws std::invalid_argument naming the sample and the values.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace sohusim::profiler {

/// One filtered sample: the local clock's estimate of the instant the remote clock read
/// `remote_ns`, and the round trip that bounds that estimate's error.
struct SyncPoint {
  std::int64_t local_ns = 0;
  std::int64_t remote_ns = 0;
  std::int64_t rtt_ns = 0;
};

/// A least-squares fit of remote time against local time.
struct ClockFit {
  std::int64_t local_ref_ns = 0;                       // the first point of the window: the fit is kept relative to it
  std::int64_t remote_ref_ns = 0;                      // (so that 64-bit clock values keep their precision)
  double local_mean = 0;                               // the points' mean local time, relative to local_ref_ns
  double remote_mean = 0;                              // their mean remote time, relative to remote_ref_ns
  double rate = 1;                                     // remote ns per local ns
  std::size_t points = 0;                              // points the fit used
  std::int64_t first_local_ns = 0, last_local_ns = 0;  // the local time they span
  double rms_ns = 0;                                   // residuals of the points about the line
  double max_abs_ns = 0;

  /// The remote clock's reading at local time `local_ns`.
  std::int64_t to_remote(std::int64_t local_ns) const;
  /// The local time at which the remote clock reads `remote_ns`.
  std::int64_t to_local(std::int64_t remote_ns) const;
  /// remote - local at local time `local_ns`.
  double offset_ns(std::int64_t local_ns) const;
  /// How much faster the remote clock runs than the local one, in ppm.
  double drift_ppm() const { return (rate - 1.0) * 1e6; }
};

class ClockSync {
 public:
  struct Options {
    unsigned group = 8;  // consecutive samples compared with each other (1: keep every sample)
    unsigned keep = 1;   // of each group, how many of the lowest-round-trip ones become points
    /// Sliding window: only points within `window_ns` of local time of the newest one are
    /// fitted (0: no time limit) ...
    std::int64_t window_ns = 0;
    /// ... and at most the newest `window_points` (0: no count limit).
    std::size_t window_points = 0;
    /// Fewest points a fit accepts (at least 2: a line needs two).
    std::size_t min_points = 2;
    /// Throws std::invalid_argument naming the option and its allowed range.
    void validate() const;
  };

  ClockSync();
  explicit ClockSync(const Options& options);

  /// An MMIO sample: local clock, remote counter read over the bus, local clock again.
  /// Throws if host_after < host_before, or if host_before is earlier than the previous
  /// sample's (local stamps must not go backwards).
  void add_mmio(std::int64_t host_before_ns, std::int64_t remote_ns, std::int64_t host_after_ns);
  /// A four-timestamp ping (NTP): t1 sent and t4 received on the local clock, t2 received
  /// and t3 sent on the remote one. Throws if t4 < t1, t3 < t2, or t1 is earlier than the
  /// previous sample's local stamp.
  void add_ping(std::int64_t t1_ns, std::int64_t t2_ns, std::int64_t t3_ns, std::int64_t t4_ns);
  /// A point computed elsewhere (already the local midpoint). Same monotonicity rule.
  void add_point(const SyncPoint& p);

  /// The fit over the current window (the best `keep` of a group that is not full yet
  /// take part too). Throws std::invalid_argument when fewer than max(2, min_points)
  /// points are in the window, or when they all share one local time.
  ClockFit fit() const;
  /// Through fit(): the local time at which the remote clock reads `remote_ns`, and back.
  std::int64_t to_local(std::int64_t remote_ns) const { return fit().to_local(remote_ns); }
  std::int64_t to_remote(std::int64_t local_ns) const { return fit().to_remote(local_ns); }

  /// The points of the window (filtered, oldest first), pending group included.
  std::vector<SyncPoint> window() const;
  std::size_t samples() const { return samples_; }  // samples added in all
  const Options& options() const { return opt_; }

  /// The least-squares fit of `points` (at least two, not all at one local time).
  /// `what` names the caller in error messages.
  static ClockFit fit_points(const std::vector<SyncPoint>& points, const std::string& what = "ClockSync");

 private:
  /// `first`: the sample's earliest local stamp (host_before, t1, a point's own time).
  void accept(const SyncPoint& p, std::int64_t first, const char* kind);
  /// The best min(keep, size) of `group` by round trip (ties: the earlier), in local order.
  std::vector<SyncPoint> best_of(const std::vector<SyncPoint>& group) const;
  void push_point(const SyncPoint& p);

  Options opt_;
  std::size_t samples_ = 0;
  bool have_last_ = false;
  std::int64_t last_local_ = 0;     // the previous sample's earliest local stamp
  std::vector<SyncPoint> pending_;  // the group being filled
  std::deque<SyncPoint> points_;    // kept points in the window, local order
};

}  // namespace sohusim::profiler
