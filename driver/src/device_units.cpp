// driver::Device (device.hpp): the PF's units programmed by the driver — the PMU, the device
// MMU's contexts (SET_CONTEXT, VF_CONTEXT) and the trace unit's ring.
#include <stdexcept>

#include "device_detail.hpp"
#include "sohusim/driver/device.hpp"

namespace sohusim::driver {

using detail::admin_command;
using detail::hex;
using detail::rid_text;

// ---- PMU and trace unit -----------------------------------------------------------------------

void Device::require_physical(const char* call, const char* unit) const {
  if (!info_.virtual_function) return;
  throw DriverError(label() + ": " + call + ": " + unit + " belongs to the physical function (" +
                    rid_text(info_.physical_rid) + "): a VF cannot program it");
}

void Device::pmu_configure(unsigned counter, unsigned event) {
  require_physical("pmu_configure", "the PMU");
  if (counter >= SOHU_PMU_COUNTER_COUNT) {
    throw std::invalid_argument(label() + ": pmu_configure: counter " + std::to_string(counter) + " (the PMU has " +
                                std::to_string(SOHU_PMU_COUNTER_COUNT) + ")");
  }
  if (event > SOHU_GET(SOHU_ADMIN_PMU_CONFIG_EVENT_MASK, SOHU_ADMIN_PMU_CONFIG_EVENT)) {
    throw std::invalid_argument(label() + ": pmu_configure: event id " + std::to_string(event) + " does not fit");
  }
  Command c = admin_command(SOHU_ADMIN_OP_PMU_CONFIG);
  SOHU_CMD_SET(c, SOHU_ADMIN_PMU_CONFIG_COUNTER, counter);
  SOHU_CMD_SET(c, SOHU_ADMIN_PMU_CONFIG_EVENT, event);
  SOHU_CMD_SET(c, SOHU_ADMIN_PMU_CONFIG_ENABLE, pmu_enabled_ ? 1 : 0);  // PMU_CONFIG also sets PMU_CTRL.EN
  admin(c);
}

void Device::pmu_enable(bool on, bool reset_counters) {
  require_physical("pmu_enable", "the PMU");
  write32(SOHU_PMU_CTRL, (on ? SOHU_PMU_CTRL_EN_MASK : 0u) | (reset_counters ? SOHU_PMU_CTRL_RESET_MASK : 0u));
  pmu_enabled_ = on;
}

std::uint64_t Device::pmu_counter(unsigned counter) {
  require_physical("pmu_counter", "the PMU");
  if (counter >= SOHU_PMU_COUNTER_COUNT) {
    throw std::invalid_argument(label() + ": pmu_counter: counter " + std::to_string(counter) + " (the PMU has " +
                                std::to_string(SOHU_PMU_COUNTER_COUNT) + ")");
  }
  return read64(SOHU_PMU_COUNTER(counter));
}

std::uint64_t Device::pmu_cycles() {
  require_physical("pmu_cycles", "the PMU");
  return read64(SOHU_PMU_CYCLES);
}

void Device::set_context(std::uint16_t context, const std::vector<std::uint64_t>& entries) {
  require_physical("set_context", "the device MMU");
  Command c = admin_command(SOHU_ADMIN_OP_SET_CONTEXT);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_CONTEXT, context);
  if (entries.empty()) {
    admin(c);  // VALID 0: invalidate
    return;
  }
  const std::uint64_t bytes = entries.size() * sizeof(std::uint64_t);
  const DmaBuffer table = take_dma(bytes, 8);
  access_.host_write(table.iova, entries.data(), bytes);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_TABLE, table.iova);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_VALID, 1);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_ENTRIES, entries.size());
  try {
    admin(c);
  } catch (...) {
    spare_dma_.emplace(table.size, table);
    throw;
  }
  spare_dma_.emplace(table.size, table);  // the device has read it: reusable
}

void Device::assign_vf_context(unsigned vf, std::uint16_t context) {
  require_physical("assign_vf_context", "VF_CONTEXT");
  Command c = admin_command(SOHU_ADMIN_OP_VF_CONTEXT);
  SOHU_CMD_SET(c, SOHU_ADMIN_VF_CONTEXT_VF, vf);
  SOHU_CMD_SET(c, SOHU_ADMIN_VF_CONTEXT_CONTEXT, context);
  admin(c);
}

std::uint64_t Device::trace_configure(std::uint64_t ring_bytes, unsigned mask) {
  require_physical("trace_configure", "the trace unit");
  if (ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1)) != 0 ||
      ring_bytes > SOHU_GET(SOHU_ADMIN_TRACE_CONFIG_SIZE_MASK, SOHU_ADMIN_TRACE_CONFIG_SIZE)) {
    throw std::invalid_argument(label() + ": trace_configure: ring of " + std::to_string(ring_bytes) +
                                " bytes (a power of two, 4096 .. 2^31)");
  }
  const auto mask_max = SOHU_GET(SOHU_ADMIN_TRACE_CONFIG_MASK_MASK, SOHU_ADMIN_TRACE_CONFIG_MASK);
  if (mask > mask_max) {
    throw std::invalid_argument(label() + ": trace_configure: mask " + hex(mask) + " (classes are bits 0.." +
                                std::to_string(SOHU_TRC_MASK_IRQ_SHIFT) + ")");
  }
  const DmaBuffer ring = take_dma(ring_bytes, 4096);
  Command c = admin_command(SOHU_ADMIN_OP_TRACE_CONFIG);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_RING, ring.iova);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_SIZE, ring_bytes);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_MASK, mask);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_ENABLE, 1);
  try {
    admin(c);
  } catch (...) {
    spare_dma_.emplace(ring.size, ring);
    throw;
  }
  // The device writes only the new ring from here on.
  if (trace_ring_.size != 0) spare_dma_.emplace(trace_ring_.size, trace_ring_);
  trace_ring_ = ring;
  return ring.iova;
}

}  // namespace sohusim::driver
