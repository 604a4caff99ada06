#include "sohusim/pcie/interrupt_controller.hpp"

namespace sohusim::pcie {

InterruptController::InterruptController(const sim::Instrumentation& inst, const std::string& prefix)
    : inst_(inst),
      prefix_(prefix),
      total_(inst.registry->counter(prefix + ".interrupts", "interrupts", "MSI/MSI-X messages delivered")) {
  if (inst_.tracing("pcie")) track_ = inst_.trace->thread_track(inst_.process_track, "interrupts");
}

InterruptController::Vector& InterruptController::vector(std::uint32_t v) {
  Vector& vec = vectors_[v];
  if (!vec.event) {
    vec.event = std::make_unique<sc_core::sc_event>();
    vec.count = &inst_.registry->counter(prefix_ + ".vector" + std::to_string(v) + ".count", "interrupts",
                                         "messages delivered with this vector");
  }
  return vec;
}

void InterruptController::deliver(std::uint64_t address, std::uint32_t data, RequesterId source) {
  (void)address;
  Vector& v = vector(data);
  ++v.pending;
  ++v.delivered;
  v.last_source = source;
  total_.inc();
  v.count->inc();
  if (track_ != 0) {
    inst_.trace->instant(track_, sim::Instrumentation::now_ns(), "MSI-X vector " + std::to_string(data));
  }
  v.event->notify(sc_core::SC_ZERO_TIME);
}

void InterruptController::wait_for(std::uint32_t v) {
  Vector& vec = vector(v);
  while (vec.pending == 0) sc_core::wait(*vec.event);
  --vec.pending;
}

bool InterruptController::wait_for(std::uint32_t v, const sc_core::sc_time& timeout) {
  Vector& vec = vector(v);
  const sc_core::sc_time deadline = sc_core::sc_time_stamp() + timeout;
  while (vec.pending == 0) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (now >= deadline) return false;
    sc_core::wait(deadline - now, *vec.event);
  }
  --vec.pending;
  return true;
}

std::uint64_t InterruptController::pending(std::uint32_t v) const {
  auto it = vectors_.find(v);
  return it == vectors_.end() ? 0 : it->second.pending;
}

std::uint64_t InterruptController::delivered(std::uint32_t v) const {
  auto it = vectors_.find(v);
  return it == vectors_.end() ? 0 : it->second.delivered;
}

RequesterId InterruptController::last_source(std::uint32_t v) const {
  auto it = vectors_.find(v);
  return it == vectors_.end() ? 0 : it->second.last_source;
}

}  // namespace sohusim::pcie
