#pragma once
// The host's interrupt controller as software sees it: MSI-X messages arrive as posted
// memory writes to the interrupt address window (0xFEE00000-0xFEEFFFFF on x86, the
// local APICs); the 32-bit data names the vector. Software waits for a vector (a driver's
// interrupt handler, an eventfd in VFIO) and acknowledges it.
//
// Counts per vector (`<prefix>.vector<N>.count`) and in all, and an instant on the
// trace track "interrupts" when tracing.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/requester_id.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie {

class InterruptController {
 public:
  static constexpr std::uint64_t kMsiBase = 0xFEE0'0000ULL;
  static constexpr std::uint64_t kMsiSize = 0x10'0000ULL;
  static bool is_msi_address(std::uint64_t a) { return a >= kMsiBase && a < kMsiBase + kMsiSize; }

  InterruptController(const sim::Instrumentation& inst, const std::string& prefix);

  /// A message arrived (called by the root complex at the time it lands).
  void deliver(std::uint64_t address, std::uint32_t data, RequesterId source);

  /// Blocks the calling SC_THREAD until `vector` has a pending interrupt, then
  /// acknowledges it (clears one pending count). Returns at once if one is pending.
  void wait_for(std::uint32_t vector);
  /// Same with a timeout; false when it expired with nothing pending.
  bool wait_for(std::uint32_t vector, const sc_core::sc_time& timeout);
  std::uint64_t pending(std::uint32_t vector) const;
  std::uint64_t delivered(std::uint32_t vector) const;
  std::uint64_t delivered_total() const { return total_.count(); }
  RequesterId last_source(std::uint32_t vector) const;

 private:
  struct Vector {
    std::uint64_t pending = 0;
    std::uint64_t delivered = 0;
    RequesterId last_source = 0;
    std::unique_ptr<sc_core::sc_event> event;
    counters::Counter* count = nullptr;
  };
  Vector& vector(std::uint32_t v);

  sim::Instrumentation inst_;
  std::string prefix_;
  std::map<std::uint32_t, Vector> vectors_;
  counters::Counter& total_;
  counters::TrackId track_ = 0;
};

}  // namespace sohusim::pcie
