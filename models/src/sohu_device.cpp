#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/models/sohu_device.hpp"

#include "hex.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::models {

using detail::hex;

namespace {
std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
constexpr std::uint64_t kHostAddressSpace = 1ULL << 52;  // what the device may name as a host IOVA
constexpr std::uint64_t kBar2LatencyPs = 300'000;        // device-side turnaround of an aperture access (assumption)
}  // namespace

SohuDevice::SohuDevice(sc_core::sc_module_name name, const sim::Config& config, const sim::Instrumentation& inst,
                       const std::string& prefix, unsigned index)
    : sc_core::sc_module(name),
      bar("bar"),
      host_dma("host_dma"),
      p_(DeviceParams::from_config(config)),
      config_key_(config.to_yaml()),
      index_(index),
      prefix_(prefix),
      inst_(inst),
      scope_(inst.scope(prefix)),
      hbm_socket_("hbm_socket"),
      sram_socket_("sram_socket"),
      errlog_(p_.error_log_entries),
      clock_(p_.timestamp),
      mmu_(p_.mmu),
      errors_(
          scope_.counter("errors", "count", "errors logged (bad commands, doorbells, register accesses, DMA faults)")),
      errors_dropped_(scope_.counter("errors_dropped", "count", "errors not logged because the error log was full")),
      msix_raised_(scope_.counter("msix_raised", "count", "MSI-X vectors raised (delivered or left pending)")),
      bar2_reads_(scope_.counter("bar2_reads", "count", "host reads through the BAR2 device-memory aperture")),
      bar2_writes_(scope_.counter("bar2_writes", "count", "host writes through the BAR2 device-memory aperture")),
      resets_(scope_.counter("resets", "count", "device resets (CTRL.EN cleared, CTRL.RST, FLR)")),
      mmu_hits_(scope_.counter("mmu.tlb_hits", "count", "device-MMU TLB hits")),
      mmu_misses_(scope_.counter("mmu.tlb_misses", "count", "device-MMU TLB misses")) {
  p_.validate();
  hbm_ = std::make_unique<memory::HbmMemory>("hbm", config, inst, prefix + ".hbm");
  p_.hbm_bytes = hbm_->backend().capacity_bytes();
  p_.hbm_peak_bytes_per_s = hbm_->backend().peak_bytes_per_second();
  memory::SramParams sp = memory::SramParams::from_config(config);
  sram_ = std::make_unique<memory::Sram>("sram", sp, inst, prefix + ".sram");
  hbm_socket_.bind(hbm_->socket);
  sram_socket_.bind(sram_->socket);
  host_port_ = std::make_unique<TlmMemoryPort>(host_dma, kHostAddressSpace, true);
  // HBM takes requests of any size and splits them into bursts itself (fast fidelity books a
  // request into every pseudo-channel at once): a collective's or a reduction's stream goes
  // in pieces of up to 256 MiB, as a DMA engine with many requests outstanding would keep
  // the memory busy, not in one-at-a-time 1 MiB pieces.
  hbm_port_ = std::make_unique<TlmMemoryPort>(hbm_socket_, p_.hbm_bytes, p_.functional, std::nullopt, 256ULL << 20);
  sram_port_ = std::make_unique<TlmMemoryPort>(sram_socket_, sp.capacity, p_.functional);
  dma_ = std::make_unique<DmaEngine>(
      p_.dma, std::array<MemoryPort*, kNumSpaces>{host_port_.get(), hbm_port_.get(), sram_port_.get(), nullptr},
      scope_.sub("dma"));
  // PMU events: the register map's table, with `dev` standing for this device's prefix.
  std::vector<PmuEvent> events;
  for (const PmuEventDesc& e : pmu_event_table()) {
    std::string glob = e.counter_glob;
    if (glob.rfind("dev.", 0) == 0) glob = prefix + glob.substr(3);
    events.push_back(PmuEvent{e.id, e.name, glob});
  }
  pmu_ = std::make_unique<Pmu>(*inst.registry, std::move(events), p_.pmu_counter_bits, p_.period_ps());
  trace_unit_ = std::make_unique<TraceUnit>(*host_port_, clock_, scope_.sub("trace_unit"));

  const bool tracing = inst.tracing("device");
  counters::TrackId proc = inst.process_track;
  if (tracing) proc = inst.trace->process_track(prefix);
  ExecutorWiring w;
  w.params = &p_;
  w.host = host_port_.get();
  w.hbm = hbm_port_.get();
  w.sram = sram_port_.get();
  w.dma = dma_.get();
  w.mmu = &mmu_;
  w.pmu = pmu_.get();
  w.clock = &clock_;
  w.semaphores = &semaphores_;
  if (tracing) {
    w.trace = inst.trace;
    for (unsigned e = 0; e < p_.matrix.engines; ++e)
      w.matrix_tracks.push_back(inst.trace->thread_track(proc, "me" + std::to_string(e)));
    for (unsigned e = 0; e < p_.vector.engines; ++e)
      w.vector_tracks.push_back(inst.trace->thread_track(proc, "ve" + std::to_string(e)));
    w.dma_track = inst.trace->async_track(proc, "dma");
  }
  w.engine_activity = [this](unsigned engine, std::uint32_t tiles, std::uint64_t correlation) {
    TraceRecord r;
    r.type = TraceRecordType::EngineActivity;
    r.unit = static_cast<std::uint16_t>(engine);
    r.correlation = correlation;
    r.arg = tiles;
    trace_unit_->record(r, kTraceEngines);
  };
  exec_ = std::make_unique<CommandExecutor>(std::move(w), index_, scope_);

  CommandProcessor::Hooks h;
  h.raise_msix = [this](unsigned v) { raise_vector(v); };
  h.error = [this](ErrorEntry e) { report_error(std::move(e)); };
  h.execute_io = [this](const Sqe& s, std::uint16_t q) {
    const std::uint64_t hits = mmu_.hits(), misses = mmu_.misses();
    Outcome o = exec_->execute(s, q);
    mmu_hits_.inc(mmu_.hits() - hits);
    mmu_misses_.inc(mmu_.misses() - misses);
    return o;
  };
  h.execute_admin_device = [this](const Sqe& s) { return admin_device(s); };
  h.command_event = [this](const Sqe& s, std::uint16_t q, bool start, std::uint16_t status) {
    on_command(s, q, start, status);
  };
  h.ready = [this](bool rdy) {
    std::uint64_t st = regs_.peek(SOHU_STATUS);
    st = rdy ? (st | SOHU_STATUS_RDY_MASK) : (st & ~static_cast<std::uint64_t>(SOHU_STATUS_RDY_MASK));
    regs_.poke(SOHU_STATUS, st);
  };
  h.power_state = [this] { return static_cast<std::uint32_t>(regs_.peek(SOHU_POWER_STATE) & 3); };
  cp_ = std::make_unique<CommandProcessor>(p_, *host_port_, std::move(h), scope_.sub("cp"),
                                           tracing ? inst.trace : nullptr,
                                           tracing ? inst.trace->thread_track(proc, "command processor") : 0);
  install_hooks();
  bar.register_b_transport(this, &SohuDevice::bar_access);
}

SohuDevice::~SohuDevice() = default;

std::uint64_t SohuDevice::now_ps() const {
  return sc_core::sc_time_stamp().value();
}

pcie::PcieFunctionSpec SohuDevice::function_spec(const DeviceParams& p, unsigned link_generation, unsigned lanes) {
  pcie::PcieFunctionSpec s;
  s.ids.vendor_id = static_cast<std::uint16_t>(SOHU_ID_RESET & 0xFFFF);
  s.ids.device_id = static_cast<std::uint16_t>(SOHU_ID_RESET >> 16);
  s.ids.class_code = 0x120000;  // processing accelerator
  s.bars = {pcie::BarSpec{0, SOHU_BAR0_SIZE, true, false},
            pcie::BarSpec{2, pow2_at_least(std::max<std::uint64_t>(p.hbm_bytes, 1ULL << 20)), true, true}};
  s.msix = pcie::MsixSpec{p.msix_vectors, 0, SOHU_PAGE_MSIX_TABLE, 0, SOHU_PAGE_MSIX_PBA};
  // SR-IOV: seven VFs (functions 1..7 of the device's bus, no ARI needed) with a 64 KiB BAR0
  // each. The VFs' register pages are not modelled yet (their BAR accesses read 0, see
  // bar_access): software can enable them and see them in configuration space.
  pcie::SriovSpec sriov;
  sriov.total_vfs = 7;
  sriov.first_vf_offset = 1;
  sriov.vf_stride = 1;
  sriov.vf_device_id = static_cast<std::uint16_t>((SOHU_ID_RESET >> 16) + 1);
  sriov.vf_bars = {pcie::BarSpec{0, 64 * 1024, true, false}};
  s.sriov = sriov;
  s.max_payload_size = 512;
  s.link_speed_gen = link_generation;
  s.link_width = lanes;
  return s;
}

void SohuDevice::attach(pcie::PcieEndpoint& endpoint) {
  endpoint_ = &endpoint;
  endpoint.pf().set_reset_callback(
      [this](pcie::PcieFunction&, pcie::ResetKind) { reset_device("function level reset"); });
}

void SohuDevice::connect(unsigned peer_index, SohuDevice& peer, C2cChannel& tx, C2cChannel& rx) {
  exec_->connect(peer_index, PeerLink{&peer.executor(), &tx, &rx});
}

// ---- BAR accesses ------------------------------------------------------------------

void SohuDevice::bar_access(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const pcie::BarAccessExtension* ext = gp.get_extension<pcie::BarAccessExtension>();
  const unsigned bar_index = ext != nullptr ? ext->bar : 0;
  const std::uint64_t offset = gp.get_address();
  const unsigned len = gp.get_data_length();
  unsigned char* data = gp.get_data_ptr();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (ext != nullptr && ext->is_vf) {
    // VFs expose no registers of their own in this model (documented): reads 0, writes dropped.
    if (gp.is_read()) std::memset(data, 0, len);
    report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), offset, 0, 0, now_ps(),
                            "access to VF " + std::to_string(ext->vf_index) + " BAR" + std::to_string(bar_index) +
                                ": virtual functions have no device registers in this model"});
    return;
  }
  if (bar_index == 2) {
    // Device-memory aperture: bytes through HBM's debug path; timing is the aperture's turnaround.
    if (offset + len > p_.hbm_bytes) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    (gp.is_read() ? bar2_reads_ : bar2_writes_).inc();
    if (!hbm_port_->debug(gp.is_write(), offset, data, len) && gp.is_read()) std::memset(data, 0, len);
    delay += sc_core::sc_time::from_value(kBar2LatencyPs);
    return;
  }
  if (len != 4 && len != 8) {
    report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), offset, 0, 0, now_ps(),
                            "BAR0 access of " + std::to_string(len) + " bytes at " + hex(offset) + " (4 or 8 only)"});
    if (gp.is_read()) std::memset(data, 0xFF, len);
    return;
  }
  std::uint64_t value = 0;
  if (gp.is_write()) {
    std::memcpy(&value, data, len);
    const AccessResult r = regs_.write(static_cast<std::uint32_t>(offset), len, value);
    if (!r.ok() && r.error != AccessError::ReadOnly) {
      report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), offset, 0, 0, now_ps(),
                              "BAR0 write: " + r.message});
    }
  } else {
    const AccessResult r = regs_.read(static_cast<std::uint32_t>(offset), len);
    value = r.value;
    std::memcpy(data, &value, len);
  }
}

void SohuDevice::install_hooks() {
  fill_identity();
  regs_.on_write(SOHU_CTRL, [this](std::uint32_t, std::uint64_t old_v, std::uint64_t new_v) {
    if ((new_v & SOHU_CTRL_RST_MASK) != 0) {
      reset_device("CTRL.RST");
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
                                "enable refused: " + err});
      } else {
        regs_.poke(SOHU_STATUS, regs_.peek(SOHU_STATUS) & ~static_cast<std::uint64_t>(SOHU_STATUS_CFS_MASK));
      }
    } else if (was && !now) {
      cp_->disable();
      exec_->abort_waiters();
      resets_.inc();
    }
    const std::uint64_t shn = (new_v & SOHU_CTRL_SHN_MASK) >> SOHU_CTRL_SHN_SHIFT;
    if (shn != 0) {
      // Shutdown: stop taking commands; the state is complete at once (nothing to flush).
      std::uint64_t st = regs_.peek(SOHU_STATUS) & ~static_cast<std::uint64_t>(SOHU_STATUS_SHST_MASK);
      regs_.poke(SOHU_STATUS, st | (static_cast<std::uint64_t>(SOHU_STATUS_SHST_COMPLETE) << SOHU_STATUS_SHST_SHIFT));
    }
  });
  regs_.on_write(SOHU_POWER_STATE, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    const std::uint64_t ps = v & 3;
    regs_.poke(SOHU_POWER_STATE, ps | (ps << 16));
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
  // PMU.
  regs_.on_write(SOHU_PMU_CTRL, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    pmu_->control(static_cast<std::uint32_t>(v), now_ps());
    regs_.poke(SOHU_PMU_CTRL, pmu_->ctrl());
  });
  regs_.on_write(SOHU_PMU_OVF, [this](std::uint32_t, std::uint64_t old_v, std::uint64_t new_v) {
    pmu_->clear_overflow(static_cast<std::uint32_t>(old_v & ~new_v));
  });
  regs_.on_read(SOHU_PMU_OVF, [this](std::uint32_t, std::uint64_t) {
    pmu_->poll_overflow(now_ps());
    regs_.poke(SOHU_PMU_OVF, pmu_->overflow_status());
    return static_cast<std::uint64_t>(pmu_->overflow_status());
  });
  regs_.on_read(SOHU_PMU_CYCLES, [this](std::uint32_t, std::uint64_t) { return pmu_->cycles(now_ps()); });
  regs_.on_write(SOHU_PMU_EVTSEL(0), [this](std::uint32_t i, std::uint64_t old_v, std::uint64_t v) {
    if (!pmu_->select(i, static_cast<std::uint16_t>(v & 0xFFFF), now_ps())) {
      regs_.poke(SOHU_PMU_EVTSEL(i), old_v);
      report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), SOHU_PMU_EVTSEL(i), 0, 0, now_ps(),
                              "PMU_EVTSEL(" + std::to_string(i) + "): event id " + std::to_string(v & 0xFFFF) +
                                  " is not in the PMU event table"});
    }
  });
  regs_.on_read(SOHU_PMU_COUNTER(0), [this](std::uint32_t i, std::uint64_t) { return pmu_->counter(i, now_ps()); });
  // Trace unit.
  regs_.on_write(SOHU_TRC_CTRL, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    if ((v & SOHU_TRC_CTRL_EN_MASK) != 0 && trace_unit_->size() == 0) {
      const std::string err = trace_unit_->configure(regs_.peek(SOHU_TRC_BASE), regs_.peek(SOHU_TRC_SIZE));
      if (!err.empty()) {
        regs_.poke(SOHU_TRC_CTRL, SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
        report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), regs_.peek(SOHU_TRC_BASE), 0, 0,
                                now_ps(), "TRC_CTRL.EN refused: " + err});
        return;
      }
    }
    trace_unit_->set_mask(static_cast<std::uint32_t>(regs_.peek(SOHU_TRC_MASK)));
    trace_unit_->set_enabled((v & SOHU_TRC_CTRL_EN_MASK) != 0);
    regs_.poke(SOHU_TRC_CTRL, (v & SOHU_TRC_CTRL_EN_MASK) | SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
  });
  for (std::uint32_t r : {SOHU_TRC_BASE, SOHU_TRC_SIZE}) {
    regs_.on_write(r, [this](std::uint32_t, std::uint64_t, std::uint64_t) {
      // A new ring takes effect at the next enable.
      trace_unit_->set_enabled(false);
      trace_unit_->reset();
      regs_.poke(SOHU_TRC_CTRL, SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
    });
  }
  regs_.on_write(SOHU_TRC_MASK, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    trace_unit_->set_mask(static_cast<std::uint32_t>(v));
  });
  regs_.on_write(SOHU_TRC_TAIL, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    trace_unit_->set_tail(static_cast<std::uint32_t>(v));
  });
  regs_.on_read(SOHU_TRC_HEAD,
                [this](std::uint32_t, std::uint64_t) { return static_cast<std::uint64_t>(trace_unit_->head()); });
  regs_.on_read(SOHU_TRC_DROPS,
                [this](std::uint32_t, std::uint64_t) { return static_cast<std::uint64_t>(trace_unit_->take_drops()); });
  // Time.
  regs_.on_read(SOHU_TIMESTAMP, [this](std::uint32_t, std::uint64_t) { return clock_.device_ns(now_ps()); });
  // Error log.
  regs_.on_write(SOHU_ERR_ACK, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    if ((v & 1) != 0) errlog_.pop();
    update_error_registers();
  });
  // Doorbells.
  regs_.on_write(SOHU_SQ_TAIL_DB(0), [this](std::uint32_t q, std::uint64_t, std::uint64_t v) {
    cp_->sq_doorbell(q, static_cast<std::uint32_t>(v & 0xFFFF));
  });
  regs_.on_write(SOHU_CQ_HEAD_DB(0), [this](std::uint32_t q, std::uint64_t, std::uint64_t v) {
    cp_->cq_doorbell(q, static_cast<std::uint32_t>(v & 0xFFFF));
  });
}

// ---- errors, interrupts, reset -----------------------------------------------------

void SohuDevice::update_error_registers() {
  regs_.poke(SOHU_ERR_COUNT, errlog_.logged() & 0xFFFFFFFFu);
  const ErrorEntry* e = errlog_.oldest();
  regs_.poke(SOHU_ERR_CODE, e != nullptr ? e->status : 0);
  regs_.poke(SOHU_ERR_ADDR, e != nullptr ? e->address : 0);
  regs_.poke(SOHU_ERR_INFO, e != nullptr ? (e->queue | (static_cast<std::uint64_t>(e->command) << 16)) : 0);
}

void SohuDevice::report_error(ErrorEntry e) {
  errors_.inc();
  if (!errlog_.push(std::move(e))) errors_dropped_.inc();
  update_error_registers();
  regs_.poke(SOHU_INT_STATUS, regs_.peek(SOHU_INT_STATUS) | SOHU_INT_STATUS_ERR_MASK);
  if (cp_ && cp_->enabled()) raise_vector(static_cast<unsigned>(regs_.peek(SOHU_ERR_VECTOR) & 0x7FF));
}

void SohuDevice::raise_vector(unsigned vector) {
  if (vector < 32 && ((regs_.peek(SOHU_INT_MASK) >> vector) & 1u) != 0) {
    masked_pending_ |= 1u << vector;
    return;
  }
  if (endpoint_ == nullptr) return;
  msix_raised_.inc();
  TraceRecord r;
  r.type = TraceRecordType::Interrupt;
  r.unit = static_cast<std::uint16_t>(vector);
  trace_unit_->record(r, kTraceInterrupts);
  // MSI-X delivery is a posted write upstream: it needs a thread (the caller may be a
  // register handler), so it goes out from its own process.
  sc_core::sc_spawn([this, vector] { endpoint_->raise_msix(endpoint_->pf().rid(), vector); });
}

void SohuDevice::reset_device(const char* why) {
  resets_.inc();
  cp_->disable();
  exec_->abort_waiters();
  mmu_.reset();
  pmu_->reset();
  trace_unit_->reset();
  errlog_.clear();
  masked_pending_ = 0;
  regs_.reset();
  fill_identity();
  // State the command processor keeps from register writes follows the registers back.
  cp_->set_default_coalescing(static_cast<unsigned>(regs_.peek(SOHU_COAL_COUNT) & 0xFFFF),
                              regs_.peek(SOHU_COAL_TIME_NS));
  last_reset_ = why;
}

void SohuDevice::fill_identity() {
  // Identification registers from the configuration (after construction and every reset).
  std::uint64_t cap0 = regs_.peek(SOHU_CAP0);
  cap0 = (cap0 & ~static_cast<std::uint64_t>(0xFFFFFF)) | (p_.max_io_queues & 0xFF) |
         (static_cast<std::uint64_t>((p_.max_queue_entries - 1) & 0xFFFF) << 8);
  regs_.poke(SOHU_CAP0, cap0);
  regs_.poke(SOHU_CAP1, (p_.matrix.engines & 0xFF) | ((p_.vector.engines & 0xFF) << 8) |
                            ((p_.dma.channels & 0xFF) << 16) | ((p_.c2c_ports & 0xFF) << 24));
  regs_.poke(SOHU_HBM_SIZE, p_.hbm_bytes);
  regs_.poke(SOHU_SRAM_SIZE, sram_->params().capacity);
  regs_.poke(SOHU_CLOCK_MHZ, static_cast<std::uint64_t>(std::llround(p_.clock_hz / 1e6)));
  regs_.poke(SOHU_FW_STATUS, SOHU_FW_STATUS_STATE_RUNNING);
}

// ---- device-level admin commands ---------------------------------------------------

Outcome SohuDevice::admin_device(const Sqe& sqe) {
  switch (sqe.opcode()) {
    case SOHU_ADMIN_OP_IDENTIFY: {
      IdentifyCmd c{};
      Outcome o = decode(sqe, c);
      if (!o.ok()) return o;
      // The identity structure (docs/registers.md "IDENTIFY data").
      std::vector<std::uint8_t> page(4096, 0);
      const auto put32 = [&](std::size_t off, std::uint32_t v) { std::memcpy(page.data() + off, &v, 4); };
      const auto put64 = [&](std::size_t off, std::uint64_t v) { std::memcpy(page.data() + off, &v, 8); };
      put32(0, static_cast<std::uint32_t>(SOHU_ID_RESET));
      put32(4, static_cast<std::uint32_t>(SOHU_VERSION_RESET));
      put32(8, p_.matrix.engines);
      put32(12, p_.matrix.array.rows);
      put32(16, p_.matrix.array.cols);
      put32(20, p_.vector.engines);
      put32(24, p_.vector.lanes);
      put32(28, p_.dma.channels);
      put32(32, p_.c2c_ports);
      put32(36, p_.max_io_queues);
      put32(40, p_.max_queue_entries);
      put32(44, p_.msix_vectors);
      put64(48, p_.hbm_bytes);
      put64(56, sram_->params().capacity);
      put64(64, static_cast<std::uint64_t>(std::llround(p_.clock_hz)));
      for (unsigned t = 0; t < kNumDataTypes; ++t) {
        put64(72 + 8 * t,
              static_cast<std::uint64_t>(std::llround(peak_flops(p_.matrix, static_cast<DataType>(t)) / 1e9)));
      }
      const std::size_t n = std::min<std::size_t>(p_.name.size(), 63);
      std::memcpy(page.data() + 128, p_.name.data(), n);
      if (host_port_->access(true, c.addr, page.data(), page.size(), sqe.correlation()) != PortStatus::Ok) {
        return Outcome::fail(Status::HostDmaError, "IDENTIFY: write to host " + hex(c.addr) + " failed", c.addr);
      }
      return o;
    }
    case SOHU_ADMIN_OP_PMU_CONFIG: {
      PmuConfigCmd c{};
      Outcome o = decode(sqe, c);
      if (!o.ok()) return o;
      if (!pmu_->select(c.counter, c.event, now_ps())) {
        return Outcome::fail(Status::InvalidField,
                             "PMU_CONFIG: event id " + std::to_string(c.event) + " is not in the PMU event table");
      }
      regs_.poke(SOHU_PMU_EVTSEL(c.counter), c.event);
      const std::uint32_t ctrl = (pmu_->ctrl() & ~1u) | (c.enable ? 1u : 0u) | (c.reset ? 4u : 0u);
      pmu_->control(ctrl, now_ps());
      regs_.poke(SOHU_PMU_CTRL, pmu_->ctrl());
      return o;
    }
    case SOHU_ADMIN_OP_TRACE_CONFIG: {
      TraceConfigCmd c{};
      Outcome o = decode(sqe, c);
      if (!o.ok()) return o;
      const std::string err = trace_unit_->configure(c.ring, c.size);
      if (!err.empty()) return Outcome::fail(Status::InvalidField, "TRACE_CONFIG: " + err, c.ring);
      trace_unit_->set_mask(c.mask);
      trace_unit_->set_enabled(c.enable);
      regs_.poke(SOHU_TRC_BASE, c.ring);
      regs_.poke(SOHU_TRC_SIZE, c.size);
      regs_.poke(SOHU_TRC_MASK, c.mask);
      regs_.poke(SOHU_TRC_CTRL, (c.enable ? SOHU_TRC_CTRL_EN_MASK : 0) | SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
      return o;
    }
    case SOHU_ADMIN_OP_FW_STATUS: {
      Outcome o = decode_no_operands(sqe, true);
      if (!o.ok()) return o;
      o.result = SOHU_FW_STATUS_STATE_RUNNING | (static_cast<std::uint64_t>(now_ps() / 1'000'000'000ULL) << 32);
      return o;
    }
    case SOHU_ADMIN_OP_SET_CONTEXT: {
      SetContextCmd c{};
      Outcome o = decode(sqe, c);
      if (!o.ok()) return o;
      if (!c.valid) {
        mmu_.remove_context(c.context);
        return o;
      }
      if (c.entries > p_.mmu.max_table_entries) {
        return Outcome::fail(Status::InvalidField, "SET_CONTEXT: " + std::to_string(c.entries) + " entries (at most " +
                                                       std::to_string(p_.mmu.max_table_entries) + ")");
      }
      // The device reads the table once into its on-chip table memory.
      std::vector<std::uint64_t> entries(c.entries);
      if (host_port_->access(false, c.table, reinterpret_cast<std::uint8_t*>(entries.data()), entries.size() * 8,
                             sqe.correlation()) != PortStatus::Ok) {
        return Outcome::fail(Status::HostDmaError, "SET_CONTEXT: read of the table at " + hex(c.table) + " failed",
                             c.table);
      }
      const std::string err = mmu_.set_context(c.context, std::move(entries));
      if (!err.empty()) return Outcome::fail(Status::InvalidField, "SET_CONTEXT: " + err);
      return o;
    }
    case SOHU_ADMIN_OP_SET_FEATURES: {  // POWER_STATE (the command processor handles the rest)
      FeatureCmd f{};
      Outcome o = decode(sqe, f, true);
      if (!o.ok()) return o;
      const std::uint64_t ps = f.value & 3;
      regs_.poke(SOHU_POWER_STATE, ps | (ps << 16));
      return o;
    }
    default:
      break;
  }
  return Outcome::fail(Status::InvalidOpcode, "admin opcode " + hex(sqe.opcode()) + " is not defined");
}

void SohuDevice::on_command(const Sqe& sqe, std::uint16_t qid, bool start, std::uint16_t status) {
  TraceRecord r;
  r.type = start ? TraceRecordType::CommandStart : TraceRecordType::CommandEnd;
  r.queue = qid;
  r.command = sqe.cid();
  r.correlation = sqe.correlation();
  r.status = status;
  r.arg = sqe.opcode();
  trace_unit_->record(r, kTraceCommands);
  if (!start && pmu_->irq_enabled()) {
    if (pmu_->poll_overflow(now_ps()) != 0) {
      regs_.poke(SOHU_INT_STATUS, regs_.peek(SOHU_INT_STATUS) | SOHU_INT_STATUS_PMU_OVF_MASK);
      raise_vector(static_cast<unsigned>(regs_.peek(SOHU_ERR_VECTOR) & 0x7FF));
    }
  }
}

EnergyReport SohuDevice::energy(double seconds) const {
  const counters::Registry& reg = *inst_.registry;
  const auto sum = [&](const std::string& glob) {
    double v = 0;
    for (const counters::Stat* s : reg.glob(glob)) v += s->value();
    return static_cast<std::uint64_t>(std::llround(v));
  };
  EnergyActivity a;
  for (unsigned t = 0; t < kNumDataTypes; ++t) {
    a.macs[t] = sum(prefix_ + ".me*.flops." + to_string(static_cast<DataType>(t))) / 2;
  }
  a.sram_bytes = sum(prefix_ + ".sram.bytes_read") + sum(prefix_ + ".sram.bytes_written");
  a.hbm_activates = sum(prefix_ + ".hbm.act");
  a.hbm_bytes_read = sum(prefix_ + ".hbm.bytes_read");
  a.hbm_bytes_written = sum(prefix_ + ".hbm.bytes_written");
  a.pcie_bytes = sum(prefix_ + ".dma.host_bytes");  // bulk data; queue entries are negligible
  a.c2c_bytes = sum(prefix_ + ".c2c.*.tx.bytes");
  a.vector_ops = 0;
  for (unsigned t = 0; t < kNumDataTypes; ++t)
    a.vector_ops += sum(prefix_ + ".ve*.flops." + to_string(static_cast<DataType>(t)));
  return models::energy(p_.energy, a, seconds);
}

}  // namespace sohusim::models
