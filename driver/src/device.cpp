// driver::Device (device.hpp), the function as a whole: construction, BAR0 register access,
// and the controller's enable, reset and shutdown. The other members are defined beside it:
// device_probe.cpp (probe, SR-IOV), device_queues.cpp (queues, submit, admin commands),
// device_completion.cpp (reaping, waiting, errors), device_units.cpp (PMU, device MMU
// contexts, trace unit).
#include "sohusim/driver/device.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "device_detail.hpp"

namespace sohusim::driver {

using detail::hex;
using detail::rid_text;

Device::Device(DeviceAccess& access, std::uint16_t rid, const HostCosts& costs)
    : access_(access), rid_(rid), costs_(costs) {
  info_.rid = rid;
}

std::string Device::label() const {
  return info_.name.empty() ? "function " + rid_text(rid_) : info_.name;
}

// ---- registers ------------------------------------------------------------------------------

std::uint32_t Device::read32(std::uint32_t offset) {
  if (bar0() == 0) throw DriverError(label() + ": read32(" + hex(offset) + ") before probe()");
  return access_.mmio_read32(bar0() + offset);
}

std::uint64_t Device::read64(std::uint32_t offset) {
  if (bar0() == 0) throw DriverError(label() + ": read64(" + hex(offset) + ") before probe()");
  return access_.mmio_read64(bar0() + offset);
}

void Device::write32(std::uint32_t offset, std::uint32_t value) {
  if (bar0() == 0) throw DriverError(label() + ": write32(" + hex(offset) + ") before probe()");
  access_.mmio_write32(bar0() + offset, value);
}

void Device::write64(std::uint32_t offset, std::uint64_t value) {
  if (bar0() == 0) throw DriverError(label() + ": write64(" + hex(offset) + ") before probe()");
  access_.mmio_write64(bar0() + offset, value);
}

std::uint32_t Device::sq_doorbell(std::uint16_t qid) const {
  return SOHU_PAGE_DOORBELL + qid * info_.doorbell_stride + (SOHU_SQ_TAIL_DB(0) - SOHU_PAGE_DOORBELL);
}

std::uint32_t Device::cq_doorbell(std::uint16_t qid) const {
  return SOHU_PAGE_DOORBELL + qid * info_.doorbell_stride + (SOHU_CQ_HEAD_DB(0) - SOHU_PAGE_DOORBELL);
}

std::uint64_t Device::device_time_ns() {
  return read64(SOHU_TIMESTAMP);
}

void Device::wait_status(std::uint32_t mask, std::uint32_t value, std::uint64_t timeout_ns, const char* what) {
  const std::uint64_t start = access_.now_ns();
  for (;;) {
    const std::uint32_t st = read32(SOHU_STATUS);
    if ((st & SOHU_STATUS_CFS_MASK) != 0) {
      const std::uint32_t code = read32(SOHU_ERR_CODE);
      throw FatalError(label() + ": " + what + ": the controller reports a fatal status (STATUS " + hex(st) +
                       ", ERR_CODE " + status_name(static_cast<std::uint16_t>(code)) + "); only a reset recovers");
    }
    if ((st & mask) == value) return;
    const std::uint64_t waited = access_.now_ns() - start;
    if (waited >= timeout_ns) {
      throw TimeoutError(label() + ": " + what + ": STATUS is " + hex(st) + " after " + std::to_string(waited) +
                         " ns (waiting for STATUS & " + hex(mask) + " == " + hex(value) + ")");
    }
    // Each read stalls for the PCIe round trip; the interval keeps the loop from being only that.
    access_.poll_ns(std::max<std::uint64_t>(costs_.poll_interval_ns, 1));
  }
}

// ---- enable, reset, shutdown ------------------------------------------------------------------

void Device::enable(unsigned admin_entries, std::uint64_t timeout_ns) {
  if (!probed_) throw DriverError(label() + ": enable() before probe()");
  // AQA's size fields are 12 bits (entries - 1), and CAP0.MQES bounds every queue.
  const unsigned max_entries = std::min(4096u, info_.max_queue_entries);
  if (admin_entries < 2 || admin_entries > max_entries) {
    throw std::invalid_argument(label() + ": enable: " + std::to_string(admin_entries) +
                                " admin queue entries (allowed 2 .. " + std::to_string(max_entries) + ")");
  }
  access_.spend_ns(costs_.admin_ns);
  // A controller left enabled (by firmware or an earlier driver) is stopped first: the admin
  // queue registers are only read at the 0 -> 1 edge of CTRL.EN.
  if ((read32(SOHU_CTRL) & SOHU_CTRL_EN_MASK) != 0) {
    write32(SOHU_CTRL, 0);
    wait_status(SOHU_STATUS_RDY_MASK, 0, timeout_ns, "disable before enable");
  }
  if (admin_.entries == admin_entries && admin_.sq.size != 0) {
    reset_ring(admin_);
    admin_.in_flight.clear();
    admin_.no_irq_in_flight = 0;
  } else {
    if (admin_.sq.size != 0) {
      spare_dma_.emplace(admin_.sq.size, admin_.sq);
      spare_dma_.emplace(admin_.cq.size, admin_.cq);
    }
    admin_ = Queue{};
    admin_.entries = admin_entries;
    setup_queue_memory(admin_);
  }
  admin_.qid = 0;
  admin_.vector = 0;  // vector 0: admin completions and the device's error interrupt
  admin_.mode = CompletionMode::Interrupt;
  admin_entries_ = admin_entries;
  write32(SOHU_AQA, static_cast<std::uint32_t>(SOHU_PUT(SOHU_AQA_ASQS, admin_entries - 1) |
                                               SOHU_PUT(SOHU_AQA_ACQS, admin_entries - 1)));
  write64(SOHU_ASQ, admin_.sq.iova & SOHU_ASQ_ADDR_MASK);
  write64(SOHU_ACQ, admin_.cq.iova & SOHU_ACQ_ADDR_MASK);
  write32(SOHU_CTRL, SOHU_CTRL_EN_MASK);
  wait_status(SOHU_STATUS_RDY_MASK, SOHU_STATUS_RDY_MASK, timeout_ns, "enable");
  enabled_ = true;
}

void Device::reset(std::uint64_t timeout_ns) {
  if (!probed_) throw DriverError(label() + ": reset() before probe()");
  access_.spend_ns(costs_.admin_ns);
  write32(SOHU_CTRL, SOHU_CTRL_RST_MASK);
  enabled_ = false;
  wait_status(SOHU_STATUS_RDY_MASK, 0, timeout_ns, "reset");
  ++resets_;
  pmu_enabled_ = false;
  errlog_seen_.clear();  // the device cleared its log
  // The device abandoned every command in flight and posts nothing for them: the driver
  // completes them with ABORTED_RESET, so waiters get an error instead of a hang.
  for (auto& [qid, q] : io_) {
    for (const auto& [cid, cmd] : q.in_flight) {
      Reaped r;
      r.completion.sq_id = qid;
      r.completion.cid = cid;
      r.completion.status = SOHU_STATUS_ABORTED_RESET;
      r.command = cmd;
      r.message = std::string(opcode_name(cmd.opcode())) + " (qid " + std::to_string(qid) + ", cid " +
                  std::to_string(cid) + ", correlation " + std::to_string(cmd.correlation()) +
                  ") failed: ABORTED_RESET \xE2\x80\x94 the controller was reset (CTRL.RST) while it was in flight [" +
                  label() + "]";
      q.done[cid] = std::move(r);
      q.done_order.push_back(cid);
    }
    q.in_flight.clear();
    q.no_irq_in_flight = 0;
    reset_ring(q);
  }
  open_flows_.clear();  // their commands will never be reaped: the flows end unterminated
  enable(admin_entries_ == 0 ? 64 : admin_entries_, timeout_ns);
  for (auto& [qid, q] : io_) create_on_device(q);
}

void Device::shutdown(std::uint64_t timeout_ns) {
  if (!probed_) throw DriverError(label() + ": shutdown() before probe()");
  access_.spend_ns(costs_.admin_ns);
  write32(SOHU_CTRL, (enabled_ ? SOHU_CTRL_EN_MASK : 0u) |
                         static_cast<std::uint32_t>(SOHU_PUT(SOHU_CTRL_SHN, SOHU_CTRL_SHN_NORMAL)));
  wait_status(SOHU_STATUS_SHST_MASK, static_cast<std::uint32_t>(SOHU_PUT(SOHU_STATUS_SHST, SOHU_STATUS_SHST_COMPLETE)),
              timeout_ns, "shutdown");
  enabled_ = false;
}

void Device::require_enabled(const char* call) const {
  if (!enabled_) throw DriverError(label() + ": " + call + " while the controller is not enabled (call enable())");
}

}  // namespace sohusim::driver
