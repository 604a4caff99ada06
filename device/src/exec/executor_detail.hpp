#pragma once
// Internal to the command executor's sources (command_executor.cpp, command_compute.cpp,
// command_collectives.cpp, command_replay.cpp): small helpers they share.
#include <cstdint>

#include <systemc>

namespace sohusim::device::detail {

/// The simulation time now, in picoseconds.
inline std::uint64_t now_ps() {
  return sc_core::sc_time_stamp().value();
}

/// Waits `ps` picoseconds of simulated time (nothing for 0); from an SC_THREAD only.
inline void wait_ps(std::uint64_t ps) {
  if (ps > 0) sc_core::wait(sc_core::sc_time::from_value(ps));
}

}  // namespace sohusim::device::detail
