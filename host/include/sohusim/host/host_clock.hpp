#pragma once
// A host's own clock (what CLOCK_MONOTONIC reads on Linux): like the device timestamp counter
// (timestamp_counter.hpp), a crystal that is neither exact nor synchronised with anything,
//
//   host_ns(t) = offset_ns + t_ns * (1 + drift_ppm * 1e-6)        (t: simulated time)
//
// and software reads it with jitter: each read returns the clock up to `jitter_ns` later
// than the moment asked (the time the read itself takes, cache and pipeline effects),
// uniformly drawn from a hash of (seed, read number), so runs repeat exactly. Reads never go
// backwards (a monotonic clock): a read below the previous one returns the previous one.
// true_ns() is the ground truth the simulator knows and a profiler does not.
// Plain C++: it takes simulated time in picoseconds, it does not read it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sohusim/sim/clock_jitter.hpp"

namespace sohusim::host {

struct HostClockParams {
  double offset_ns = 0;    // the clock's value at simulated time 0 (>= 0)
  double drift_ppm = 0;    // frequency error
  double jitter_ns = 0;    // read jitter (0: none)
  std::uint64_t seed = 0;  // of the read jitter
  /// Throws std::invalid_argument naming `where` (e.g. "hosts[1].clock") and the range.
  void validate(const std::string& where = "host clock") const {
    if (!(offset_ns >= 0) || offset_ns > 1e15)
      throw std::invalid_argument(where + ".offset must be in 0 .. 1000000 s, not " + std::to_string(offset_ns) +
                                  " ns");
    if (!(std::fabs(drift_ppm) <= 1000))
      throw std::invalid_argument(where + ".drift_ppm must be in -1000 .. 1000, not " + std::to_string(drift_ppm));
    if (!(jitter_ns >= 0) || jitter_ns > 1e6)
      throw std::invalid_argument(where + ".jitter must be in 0 .. 1 ms, not " + std::to_string(jitter_ns) + " ns");
  }
};

class HostClock {
 public:
  explicit HostClock(const HostClockParams& p = {}) : p_(p) { p_.validate(); }

  /// The clock at simulated time `sim_ps`, without read jitter (ground truth).
  std::uint64_t true_ns(std::uint64_t sim_ps) const {
    const long double t_ns = static_cast<long double>(sim_ps) / 1000.0L;
    const long double v =
        static_cast<long double>(p_.offset_ns) + t_ns * (1.0L + static_cast<long double>(p_.drift_ppm) * 1e-6L);
    return static_cast<std::uint64_t>(std::floor(v));
  }
  /// The simulated time (ps, fractional) at which the clock reads `host_ns` (ground truth).
  long double sim_ps_at(long double host_ns) const {
    return (host_ns - static_cast<long double>(p_.offset_ns)) * 1000.0L /
           (1.0L + static_cast<long double>(p_.drift_ppm) * 1e-6L);
  }
  /// A read by software at simulated time `sim_ps`: jittered, never below the previous read.
  std::uint64_t read_ns(std::uint64_t sim_ps) {
    std::uint64_t at = sim_ps;
    if (p_.jitter_ns > 0) {
      at += static_cast<std::uint64_t>(sim::clock_jitter_unit(p_.seed, 0x486F7374ULL, reads_) * p_.jitter_ns * 1000.0);
    }
    ++reads_;
    last_ = std::max(last_, true_ns(at));
    return last_;
  }
  std::uint64_t reads() const noexcept { return reads_; }
  const HostClockParams& params() const noexcept { return p_; }

 private:
  HostClockParams p_;
  std::uint64_t reads_ = 0;
  std::uint64_t last_ = 0;
};

}  // namespace sohusim::host
