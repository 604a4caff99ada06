#pragma once
// Device semaphores: 256 32-bit counters that SEM_SIGNAL adds to and SEM_WAIT waits on
// (until value >= the operand, without consuming it: the "acquire >= value" semantics of
// GPU timeline semaphores, so one signal can release many waiters and values only grow).
// They order work across the device's queues, and across devices: a SEM_SIGNAL naming
// another device travels over the chip-to-chip link to that device's bank.
#include <array>
#include <cstdint>

#include <systemc>

namespace sohusim::device {

class SemaphoreBank {
 public:
  static constexpr unsigned kCount = 256;
  void signal(unsigned i, std::uint32_t add) {
    value_[i] += add;
    changed_[i].notify(sc_core::SC_ZERO_TIME);
  }
  std::uint32_t value(unsigned i) const { return value_[i]; }
  /// Blocks until value(i) >= v or `timeout_ps` has passed (0: no timeout); true if reached.
  bool wait_geq(unsigned i, std::uint32_t v, std::uint64_t timeout_ps) {
    const sc_core::sc_time deadline = sc_core::sc_time_stamp() + sc_core::sc_time::from_value(timeout_ps);
    while (value_[i] < v) {
      if (timeout_ps == 0) {
        sc_core::wait(changed_[i]);
      } else {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (now >= deadline) return false;
        sc_core::wait(deadline - now, changed_[i]);
      }
    }
    return true;
  }
  void reset() {
    value_.fill(0);
    for (auto& e : changed_) e.notify(sc_core::SC_ZERO_TIME);
  }

 private:
  std::array<std::uint32_t, kCount> value_{};
  std::array<sc_core::sc_event, kCount> changed_;
};

}  // namespace sohusim::device
