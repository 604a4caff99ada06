// sohusim/sim/sim_time.hpp — simulated time: one resolution, exact integer conversions.
//
// Every model in sohusim runs on a SystemC kernel whose time resolution is 1 ps. The
// resolution is a process-wide property of the kernel and can only be chosen before the
// first non-zero sc_time exists, so it is established by one function,
// ensure_time_resolution(), which every sohusim component calls in its constructor and
// which an embedding program may call first thing in main()/sc_main().
//
// Why 1 ps: the clocks we model (engines at 1-2 GHz, HBM3E at 3.2-4.8 GHz, PCIe symbol
// clocks) have periods of a few hundred picoseconds. A 1 ns grid would round a 3 GHz
// period (333.3 ps) to 0 ns; a 1 fs grid would limit simulated time to 5 hours
// (2^64 fs), while 1 ps allows 213 days, far longer than any run. The residual
// rounding at 1 ps is documented per clock domain (see clock_domain.hpp).
//
// The conversions below are exact integer arithmetic on sc_time::value() (which counts
// resolution units, i.e. picoseconds). They exist so that no model goes through
// sc_time::to_double()/to_seconds() and floating point to get cycle counts or trace
// timestamps: determinism (same inputs, bit-identical statistics) depends on it.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <systemc>

namespace sohusim::sim {

/// The kernel time resolution sohusim requires, in picoseconds.
inline constexpr std::uint64_t kTimeResolutionPs = 1;
inline constexpr std::uint64_t kPsPerNs = 1000;

namespace detail {

// Sets the resolution if the kernel still allows it, then checks what the kernel uses.
// sc_set_time_resolution() refuses (with an sc_report) once a resolution was set or once
// any non-zero sc_time was built; in the latter case the kernel froze its default, which
// is 1 ps, so a refusal is only an error when the resolution in force is not 1 ps.
inline void establish_time_resolution() {
  try {
    sc_core::sc_set_time_resolution(1.0, sc_core::SC_PS);
  } catch (const sc_core::sc_report&) {
    sc_core::sc_report_handler::clear_cached_report();
  }
  // Reading the resolution freezes it, which is what we want from here on.
  const double resolution_s = sc_core::sc_get_time_resolution().to_seconds();
  if (std::fabs(resolution_s - 1e-12) > 1e-18) {
    throw std::logic_error("sohusim needs a SystemC time resolution of 1 ps, but the kernel already uses " +
                           sc_core::sc_get_time_resolution().to_string() +
                           " (sc_set_time_resolution() was called with another value before "
                           "sohusim::sim::ensure_time_resolution(); remove that call or make it 1 ps)");
  }
}

}  // namespace detail

/// Makes the kernel resolution 1 ps, or confirms it already is. Idempotent and cheap after
/// the first call. Throws std::logic_error, naming the resolution in force, if the kernel
/// was already given a different one. Call it before constructing any sc_time of your own.
inline void ensure_time_resolution() {
  // One flag per process: the resolution is per kernel, and a process has one kernel.
  static std::atomic<bool> confirmed{false};
  if (confirmed.load(std::memory_order_acquire)) {
    return;
  }
  detail::establish_time_resolution();
  confirmed.store(true, std::memory_order_release);
}

/// Simulated time in whole picoseconds (exact).
inline std::uint64_t to_ps(const sc_core::sc_time& t) {
  ensure_time_resolution();
  return t.value();
}

/// Simulated time in whole nanoseconds, rounded down.
inline std::uint64_t to_ns(const sc_core::sc_time& t) {
  return to_ps(t) / kPsPerNs;
}

/// The sc_time of `ps` picoseconds (exact).
inline sc_core::sc_time from_ps(std::uint64_t ps) {
  ensure_time_resolution();
  return sc_core::sc_time::from_value(ps);
}

/// The sc_time of `ns` nanoseconds; throws std::overflow_error beyond 2^64 ps (213 days).
inline sc_core::sc_time from_ns(std::uint64_t ns) {
  if (ns > std::numeric_limits<std::uint64_t>::max() / kPsPerNs) {
    throw std::overflow_error("sohusim::sim::from_ns: " + std::to_string(ns) +
                              " ns does not fit in a 64-bit picosecond time");
  }
  return from_ps(ns * kPsPerNs);
}

/// Timestamp for trace events: integer nanoseconds, rounded down.
///
/// Perfetto timestamps are integer nanoseconds, so sub-nanosecond detail is dropped here,
/// in one place, with one rule. Rounding down is monotonic: events keep their order (ties
/// are ordered by emission), and an event is never stamped later than the simulated time
/// at which it happened. Use to_ps() for anything that is computed, not displayed.
inline std::uint64_t to_ns_trace(const sc_core::sc_time& t) {
  return to_ns(t);
}

}  // namespace sohusim::sim
