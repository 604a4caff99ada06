#pragma once
// The device timestamp counter (BAR0 TIME page): the device's own notion of time, in
// nanoseconds, as a free-running counter on a crystal that is neither synchronised with the
// host nor exact. Device-side records (trace unit, PMU snapshots, TIMESTAMP commands) carry
// this time, as silicon's would; the profiler has to align it with host time from sync
// samples (docs/clock-sync.md), and tests compare its estimate with the ground truth this
// class also gives.
//
//   device_ns(t) = offset_ns + t_ns * (1 + drift_ppm * 1e-6)        (t: simulated time)
//
// Truncated to an integer nanosecond, as a counter register reads. The offset models the
// power-on moment relative to the host's epoch; the drift a crystal's frequency error
// (tens of ppm is typical for uncompensated oscillators).
//
// Read jitter: a read of the TIMESTAMP register (read_ns) latches the counter through a
// clock-domain synchroniser, so the value is the counter at a moment up to `jitter_ns` after
// the read arrives, uniformly distributed. The draw is a hash of (seed, stream, the read's
// simulated time): deterministic, and independent of how many reads came before. Records the
// device stamps itself (trace unit, TIMESTAMP commands) use device_ns, without it.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sohusim/sim/clock_jitter.hpp"

namespace sohusim::device {

struct TimestampParams {
  double offset_ns = 0;    // device time at simulated time 0
  double drift_ppm = 0;    // frequency error of the device clock
  double jitter_ns = 0;    // read jitter of the TIMESTAMP register (0: none)
  std::uint64_t seed = 1;  // of the read jitter
  void validate() const {
    if (!(offset_ns >= 0) || offset_ns > 1e18)
      throw std::invalid_argument("device.timestamp.offset must be in 0 .. 1e9 s");
    if (!(std::fabs(drift_ppm) <= 1000)) {
      throw std::invalid_argument("device.timestamp.drift_ppm must be in -1000 .. 1000, not " +
                                  std::to_string(drift_ppm));
    }
    if (!(jitter_ns >= 0) || jitter_ns > 1e6) {
      throw std::invalid_argument("device.timestamp.jitter must be in 0 .. 1 ms, not " + std::to_string(jitter_ns) +
                                  " ns");
    }
  }
};

class TimestampCounter {
 public:
  /// `stream` tells apart the jitter of counters that share a seed (the device's index).
  explicit TimestampCounter(const TimestampParams& p, std::uint64_t stream = 0) : p_(p), stream_(stream) {
    p_.validate();
  }
  /// The counter's value at simulated time `sim_ps` (picoseconds).
  std::uint64_t device_ns(std::uint64_t sim_ps) const {
    const long double t_ns = static_cast<long double>(sim_ps) / 1000.0L;
    const long double v =
        static_cast<long double>(p_.offset_ns) + t_ns * (1.0L + static_cast<long double>(p_.drift_ppm) * 1e-6L);
    return static_cast<std::uint64_t>(std::floor(v));
  }
  /// What a read of the TIMESTAMP register arriving at `sim_ps` returns: the counter up to
  /// jitter_ns later (device_ns itself when there is no jitter).
  std::uint64_t read_ns(std::uint64_t sim_ps) const {
    if (!(p_.jitter_ns > 0)) return device_ns(sim_ps);
    const double u = sim::clock_jitter_unit(p_.seed, stream_, sim_ps);
    return device_ns(sim_ps + static_cast<std::uint64_t>(u * p_.jitter_ns * 1000.0));
  }
  const TimestampParams& params() const noexcept { return p_; }

 private:
  TimestampParams p_;
  std::uint64_t stream_ = 0;
};

}  // namespace sohusim::device
