#include "sohusim/device/frontend/function_controller.hpp"

#include <cstring>

#include <systemc>

#include "hex.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::device {

using detail::hex;

FunctionController::FunctionController(const DeviceParams& params, std::string label, bool pf_only_pages,
                                       MemoryPort& host, const TimestampCounter& clock, FunctionDevice& device,
                                       CommandBackend& commands, const counters::Scope& scope,
                                       counters::TraceRecorder* trace, counters::TrackId track)
    : label_(std::move(label)),
      pf_only_pages_(pf_only_pages),
      clock_(clock),
      device_(device),
      errlog_(params.error_log_entries),
      errors_(
          scope.counter("errors", "count", "errors logged (bad commands, doorbells, register accesses, DMA faults)")),
      errors_dropped_(scope.counter("errors_dropped", "count", "errors not logged because the error log was full")),
      msix_raised_(scope.counter("msix_raised", "count", "MSI-X vectors raised (delivered or left pending)")),
      resets_(scope.counter("resets", "count", "resets (CTRL.EN cleared, CTRL.RST, FLR)")) {
  FunctionSignals& signals = *this;
  cp_ = std::make_unique<CommandProcessor>(params, host, signals, commands, scope.sub("cp"), trace, track);
  install_hooks();
}

std::uint64_t FunctionController::now_ps() const {
  return sc_core::sc_time_stamp().value();
}

bool FunctionController::pf_only(std::uint32_t offset) {
  return (offset >= SOHU_PAGE_PMU && offset < SOHU_PAGE_PMU + SOHU_PAGE_PMU_SIZE) ||
         (offset >= SOHU_PAGE_TRACE && offset < SOHU_PAGE_TRACE + SOHU_PAGE_TRACE_SIZE) ||
         (offset >= SOHU_POWER_STATE && offset < SOHU_POWER_STATE + 4);
}

void FunctionController::bar0_access(tlm::tlm_generic_payload& gp) {
  const std::uint64_t offset = gp.get_address();
  const unsigned len = gp.get_data_length();
  unsigned char* data = gp.get_data_ptr();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (len != 4 && len != 8) {
    report_error(
        ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), offset, 0, 0, now_ps(),
                   label_ + " BAR0 access of " + std::to_string(len) + " bytes at " + hex(offset) + " (4 or 8 only)"});
    if (gp.is_read()) std::memset(data, 0xFF, len);
    return;
  }
  if (pf_only_pages_ && pf_only(static_cast<std::uint32_t>(offset))) {
    // The PMU, the trace unit and the power state are the device's, programmed by the PF.
    if (gp.is_read()) {
      std::memset(data, 0, len);
    } else {
      report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), offset, 0, 0, now_ps(),
                              label_ + " BAR0 write at " + hex(offset) +
                                  ": the PMU, trace-unit and power-state registers belong to the PF"});
    }
    return;
  }
  std::uint64_t value = 0;
  if (gp.is_write()) {
    std::memcpy(&value, data, len);
    const AccessResult r = regs_.write(static_cast<std::uint32_t>(offset), len, value);
    if (!r.ok() && r.error != AccessError::ReadOnly) {
      report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), offset, 0, 0, now_ps(),
                              label_ + " BAR0 write: " + r.message});
    }
  } else {
    const AccessResult r = regs_.read(static_cast<std::uint32_t>(offset), len);
    value = r.value;
    std::memcpy(data, &value, len);
  }
}

void FunctionController::install_hooks() {
  device_.fill_identity(regs_);
  regs_.on_write(SOHU_CTRL, [this](std::uint32_t, std::uint64_t old_v, std::uint64_t new_v) {
    if ((new_v & SOHU_CTRL_RST_MASK) != 0) {
      device_.request_reset("CTRL.RST");
      return;
    }
    const bool was = (old_v & SOHU_CTRL_EN_MASK) != 0, now = (new_v & SOHU_CTRL_EN_MASK) != 0;
    if (!was && now) {
      const std::string err =
          cp_->enable(static_cast<std::uint32_t>(regs_.peek(SOHU_AQA)), regs_.peek(SOHU_ASQ), regs_.peek(SOHU_ACQ));
      if (!err.empty()) {
        regs_.poke(SOHU_CTRL, new_v & ~static_cast<std::uint64_t>(SOHU_CTRL_EN_MASK));
        regs_.poke(SOHU_STATUS, regs_.peek(SOHU_STATUS) | SOHU_STATUS_CFS_MASK);
        report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), regs_.peek(SOHU_ASQ), 0, 0, now_ps(),
                                label_ + " enable refused: " + err});
      } else {
        regs_.poke(SOHU_STATUS, regs_.peek(SOHU_STATUS) & ~static_cast<std::uint64_t>(SOHU_STATUS_CFS_MASK));
      }
    } else if (was && !now) {
      cp_->disable();
      device_.function_disabled();
      resets_.inc();
    }
    const std::uint64_t shn = (new_v & SOHU_CTRL_SHN_MASK) >> SOHU_CTRL_SHN_SHIFT;
    if (shn != 0) {
      // Shutdown: stop taking commands; the state is complete at once (nothing to flush).
      std::uint64_t st = regs_.peek(SOHU_STATUS) & ~static_cast<std::uint64_t>(SOHU_STATUS_SHST_MASK);
      regs_.poke(SOHU_STATUS, st | (static_cast<std::uint64_t>(SOHU_STATUS_SHST_COMPLETE) << SOHU_STATUS_SHST_SHIFT));
    }
  });
  regs_.on_write(SOHU_INT_MASK, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    // Vectors raised while masked are delivered when unmasked.
    const std::uint32_t now_unmasked = masked_pending_ & ~static_cast<std::uint32_t>(v);
    masked_pending_ &= static_cast<std::uint32_t>(v);
    for (unsigned i = 0; i < 32; ++i) {
      if ((now_unmasked >> i) & 1u) raise_vector(i);
    }
  });
  regs_.on_write(SOHU_COAL_COUNT, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    cp_->set_default_coalescing(static_cast<unsigned>(v & 0xFFFF), regs_.peek(SOHU_COAL_TIME_NS));
  });
  regs_.on_write(SOHU_COAL_TIME_NS, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    cp_->set_default_coalescing(static_cast<unsigned>(regs_.peek(SOHU_COAL_COUNT) & 0xFFFF), v);
  });
  regs_.on_read(SOHU_TIMESTAMP, [this](std::uint32_t, std::uint64_t) { return clock_.read_ns(now_ps()); });
  regs_.on_write(SOHU_ERR_ACK, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    if ((v & 1) != 0) errlog_.pop();
    update_error_registers();
  });
  regs_.on_write(SOHU_SQ_TAIL_DB(0), [this](std::uint32_t q, std::uint64_t, std::uint64_t v) {
    cp_->sq_doorbell(q, static_cast<std::uint32_t>(v & 0xFFFF));
  });
  regs_.on_write(SOHU_CQ_HEAD_DB(0), [this](std::uint32_t q, std::uint64_t, std::uint64_t v) {
    cp_->cq_doorbell(q, static_cast<std::uint32_t>(v & 0xFFFF));
  });
}

void FunctionController::update_error_registers() {
  regs_.poke(SOHU_ERR_COUNT, errlog_.logged() & 0xFFFFFFFFu);
  const ErrorEntry* e = errlog_.oldest();
  regs_.poke(SOHU_ERR_CODE, e != nullptr ? e->status : 0);
  regs_.poke(SOHU_ERR_ADDR, e != nullptr ? e->address : 0);
  regs_.poke(SOHU_ERR_INFO, e != nullptr ? (e->queue | (static_cast<std::uint64_t>(e->command) << 16)) : 0);
}

void FunctionController::report_error(ErrorEntry e) {
  errors_.inc();
  if (!errlog_.push(std::move(e))) errors_dropped_.inc();
  update_error_registers();
  regs_.poke(SOHU_INT_STATUS, regs_.peek(SOHU_INT_STATUS) | SOHU_INT_STATUS_ERR_MASK);
  if (cp_ && cp_->enabled()) raise_vector(static_cast<unsigned>(regs_.peek(SOHU_ERR_VECTOR) & 0x7FF));
}

void FunctionController::raise_vector(unsigned vector) {
  if (vector < 32 && ((regs_.peek(SOHU_INT_MASK) >> vector) & 1u) != 0) {
    masked_pending_ |= 1u << vector;
    return;
  }
  if (device_.send_msix(vector)) msix_raised_.inc();
}

void FunctionController::set_ready(bool ready) {
  std::uint64_t st = regs_.peek(SOHU_STATUS);
  st = ready ? (st | SOHU_STATUS_RDY_MASK) : (st & ~static_cast<std::uint64_t>(SOHU_STATUS_RDY_MASK));
  regs_.poke(SOHU_STATUS, st);
}

void FunctionController::reset() {
  resets_.inc();
  cp_->disable();
  errlog_.clear();
  masked_pending_ = 0;
  regs_.reset();
  device_.fill_identity(regs_);
  // State the command processor keeps from register writes follows the registers back.
  cp_->set_default_coalescing(static_cast<unsigned>(regs_.peek(SOHU_COAL_COUNT) & 0xFFFF),
                              regs_.peek(SOHU_COAL_TIME_NS));
}

}  // namespace sohusim::device
