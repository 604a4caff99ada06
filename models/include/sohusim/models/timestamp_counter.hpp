#pragma once
// The device timestamp counter (BAR0 TIME page): the device's own notion of time, in
// nanoseconds, as a free-running counter on a crystal that is neither synchronised with the
// host nor exact. Device-side records (trace unit, PMU snapshots, TIMESTAMP commands) carry
// this time, as silicon's would; the profiler has to align it with host time from sync
// samples (DESIGN.md section 6), and tests compare its estimate with the ground truth this
// class also gives.
//
//   device_ns(t) = offset_ns + t_ns * (1 + drift_ppm * 1e-6)        (t: simulated time)
//
// Truncated to an integer nanosecond, as a counter register reads. The offset models the
// power-on moment relative to the host's epoch; the drift a crystal's frequency error
// (tens of ppm is typical for uncompensated oscillators).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sohusim::models {

struct TimestampParams {
  double offset_ns = 0;  // device time at simulated time 0
  double drift_ppm = 0;  // frequency error of the device clock
  void validate() const {
    if (!(offset_ns >= 0) || offset_ns > 1e18)
      throw std::invalid_argument("device.timestamp.offset must be in 0 .. 1e9 s");
    if (!(std::fabs(drift_ppm) <= 1000)) {
      throw std::invalid_argument("device.timestamp.drift_ppm must be in -1000 .. 1000, not " +
                                  std::to_string(drift_ppm));
    }
  }
};

class TimestampCounter {
 public:
  explicit TimestampCounter(const TimestampParams& p) : p_(p) { p_.validate(); }
  /// The counter's value at simulated time `sim_ps` (picoseconds).
  std::uint64_t device_ns(std::uint64_t sim_ps) const {
    const long double t_ns = static_cast<long double>(sim_ps) / 1000.0L;
    const long double v =
        static_cast<long double>(p_.offset_ns) + t_ns * (1.0L + static_cast<long double>(p_.drift_ppm) * 1e-6L);
    return static_cast<std::uint64_t>(std::floor(v));
  }
  const TimestampParams& params() const noexcept { return p_; }

 private:
  TimestampParams p_;
};

}  // namespace sohusim::models
