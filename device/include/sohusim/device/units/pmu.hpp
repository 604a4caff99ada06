#pragma once
// PMU: the device's performance-monitoring unit as a driver or profiler programs it over
// MMIO (BAR0 PMU page) or the PMU_CONFIG admin command — the third view of the same
// counters (registry, PMU registers and trace/report agree: docs/profiler.md, "Capture
// through the driver").
//
// Eight event counters and a cycle counter. An event select names a PMU event id; each id
// maps to a glob over the device's registry counters (the table is part of the register map,
// docs/registers.md "PMU events"), e.g. ME_ACTIVE_CYCLES = the sum of `dev0.me*.active_cycles`.
// The glob is resolved when the event is selected (every counter it names exists from
// device construction on). A counter counts while the PMU is enabled and not frozen: its
// value is what the selected registry counters gained during counting periods. Counters are
// `counter_bits` wide (64 by default; narrower widths, as on Arm PMUv3, overflow sooner); crossing the
// top sets the counter's overflow bit (bit 31 for the cycle counter), which raises the PMU
// interrupt when enabled. Overflow is detected when the device looks — at every register
// read and after every command — not at the exact cycle (documented simplification).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"

namespace sohusim::device {

struct PmuEvent {
  std::uint16_t id = 0;
  std::string name;
  std::string counter_glob;  // with the device prefix already substituted
};

class Pmu {
 public:
  static constexpr unsigned kCounters = 8;
  Pmu(const counters::Registry& registry, std::vector<PmuEvent> events, unsigned counter_bits, std::uint64_t period_ps);

  /// PMU_CTRL write: bit 0 enable, bit 1 freeze, bit 2 reset counters, bit 3 overflow irq enable.
  void control(std::uint32_t value, std::uint64_t now_ps);
  /// Selects `event` on counter `i`; returns false (and selects nothing) for an unknown id.
  bool select(unsigned i, std::uint16_t event, std::uint64_t now_ps);
  std::uint16_t selected(unsigned i) const { return sel_[i]; }
  std::uint64_t counter(unsigned i, std::uint64_t now_ps);
  std::uint64_t cycles(std::uint64_t now_ps);
  /// Bits newly set in the overflow status since the last call (for the interrupt).
  std::uint32_t poll_overflow(std::uint64_t now_ps);
  std::uint32_t overflow_status() const { return ovf_; }
  void clear_overflow(std::uint32_t mask) {
    ovf_ &= ~mask;
    ovf_reported_ &= ~mask;
  }
  bool irq_enabled() const { return (ctrl_ & 8u) != 0; }
  std::uint32_t ctrl() const { return ctrl_ & ~4u; }
  const std::vector<PmuEvent>& events() const noexcept { return events_; }
  void reset();

 private:
  bool counting() const { return (ctrl_ & 1u) != 0 && (ctrl_ & 2u) == 0; }
  double source(unsigned i) const;
  void stop(std::uint64_t now_ps);
  void start(std::uint64_t now_ps);
  void check(unsigned i, std::uint64_t raw);

  const counters::Registry& registry_;
  std::vector<PmuEvent> events_;
  unsigned bits_;
  std::uint64_t period_ps_;
  std::uint32_t ctrl_ = 0;
  std::array<std::uint16_t, kCounters> sel_{};
  std::array<std::vector<const counters::Stat*>, kCounters> sources_;
  std::array<std::uint64_t, kCounters> acc_{};
  std::array<double, kCounters> base_{};
  std::array<std::uint64_t, kCounters> wraps_{};
  std::uint64_t cyc_acc_ = 0, cyc_base_ps_ = 0, cyc_wraps_ = 0;
  std::uint32_t ovf_ = 0, ovf_reported_ = 0;
};

}  // namespace sohusim::device
