#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/device/sohu_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "hex.hpp"
#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::device {

using detail::hex;

namespace {
std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
constexpr std::uint64_t kHostAddressSpace = 1ULL << 52;  // what the device may name as a host IOVA
constexpr std::uint64_t kBar2LatencyPs = 300'000;        // device-side turnaround of an aperture access (assumption)
// A VF's ID register: the PF's vendor, the VF Device ID of the SR-IOV capability.
constexpr std::uint32_t kVfId = (SOHU_ID_RESET & 0xFFFFu) | (((SOHU_ID_RESET >> 16) + 1) << 16);
}  // namespace

// A VF as the device sees it: its controller, and what the controller's CommandBackend and
// FunctionDevice mean for a VF. Its DMA carries the VF's requester ID and its I/O commands
// run in the device-MMU context the PF assigned it; its admin queue answers IDENTIFY and
// FW_STATUS only; its interrupts go out with its requester ID; its reset is its own.
class SohuDevice::VfFunction final : public CommandBackend, public FunctionDevice {
 public:
  VfFunction(SohuDevice& device, unsigned index, pcie::RequesterId rid)
      : device_(device), index_(index), rid_(rid), host_(device.host_dma, kHostAddressSpace, true, rid) {
    // Built once the adapter is whole: the controller calls fill_identity() as it is built.
    ctl_ = std::make_unique<FunctionController>(device.vf_params_, "VF " + std::to_string(index), true, host_,
                                                device.clock_, *this, *this,
                                                device.scope_.sub("vf" + std::to_string(index)), nullptr, 0);
  }

  FunctionController& controller() { return *ctl_; }
  MemoryPort& host() { return host_; }

  Outcome execute_io(const Sqe& sqe, std::uint16_t qid) override {
    return device_.run_io(sqe, qid, Issuer{&host_, static_cast<int>(index_), device_.vf_context_[index_]});
  }
  Outcome execute_admin(const Sqe& sqe) override { return device_.admin_device(sqe, static_cast<int>(index_)); }
  // One power state for the whole device: the PF's register.
  std::uint32_t power_state() override { return device_.power_state(); }
  // The trace unit's command records and the PMU's overflow interrupt follow the PF's
  // commands only.
  void command_started(const Sqe&, std::uint16_t) override {}
  void command_completed(const Sqe&, std::uint16_t, std::uint16_t) override {}

  bool send_msix(unsigned vector) override { return device_.deliver_msix(rid_, vector); }
  void request_reset(const char*) override { ctl_->reset(); }
  // The executor's waiters (semaphores, rendezvous) may be other functions' commands: a
  // VF's disable leaves them waiting.
  void function_disabled() override {}
  void fill_identity(RegisterFile& regs) override { device_.write_identity(regs, true); }

 private:
  SohuDevice& device_;
  unsigned index_;
  pcie::RequesterId rid_;
  TlmMemoryPort host_;  // DMA with the VF's requester ID
  std::unique_ptr<FunctionController> ctl_;
};

SohuDevice::SohuDevice(sc_core::sc_module_name name, const config::Config& config, const sim::Instrumentation& inst,
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
      clock_(p_.timestamp, index),
      mmu_(p_.mmu),
      bar2_reads_(scope_.counter("bar2_reads", "count", "host reads through the BAR2 device-memory aperture")),
      bar2_writes_(scope_.counter("bar2_writes", "count", "host writes through the BAR2 device-memory aperture")),
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

  // The device itself is the PF's FunctionDevice and CommandBackend.
  FunctionDevice& pf_device = *this;
  CommandBackend& pf_commands = *this;
  pf_ = std::make_unique<FunctionController>(p_, "PF", false, *host_port_, clock_, pf_device, pf_commands, scope_,
                                             tracing ? inst.trace : nullptr,
                                             tracing ? inst.trace->thread_track(proc, "command processor") : 0);
  pf_->command_processor().set_trace_summary(inst.trace_summary);
  vf_params_ = p_;
  vf_params_.max_io_queues = kVfIoQueues;
  vf_params_.msix_vectors = kVfVectors;
  install_hooks();
  bar.register_b_transport(this, &SohuDevice::bar_access);
}

SohuDevice::~SohuDevice() = default;

FunctionController* SohuDevice::vf(unsigned index) {
  return index < vfs_.size() && vfs_[index] ? &vfs_[index]->controller() : nullptr;
}

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
  // SR-IOV: seven VFs (functions 1..7 of the device's bus, no ARI needed), each with a BAR0
  // of the PF's layout (its own registers, queues, doorbells, MSI-X table and PBA) and no
  // device-memory aperture.
  pcie::SriovSpec sriov;
  sriov.total_vfs = kVfs;
  sriov.first_vf_offset = 1;
  sriov.vf_stride = 1;
  sriov.vf_device_id = static_cast<std::uint16_t>(kVfId >> 16);
  sriov.vf_bars = {pcie::BarSpec{0, SOHU_BAR0_SIZE, true, false}};
  sriov.vf_msix = pcie::MsixSpec{kVfVectors, 0, SOHU_PAGE_MSIX_TABLE, 0, SOHU_PAGE_MSIX_PBA};
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
  endpoint.functions().set_vfs_changed_callback([this](pcie::PhysicalFunction& f) { sync_vfs(f); });
}

// ---- virtual functions ---------------------------------------------------------------

void SohuDevice::sync_vfs(pcie::PhysicalFunction& functions) {
  // VFs that went away (VF Enable cleared) lose their state, as the functions do.
  for (std::size_t i = functions.num_vfs(); i < vfs_.size(); ++i) {
    if (vfs_[i]) vfs_[i]->controller().reset();
  }
  for (std::size_t i = 0; i < functions.num_vfs() && i < kVfs; ++i) {
    pcie::PcieFunction* f = functions.vf(i);
    if (vfs_.size() <= i) vfs_.resize(i + 1);
    if (!vfs_[i]) {
      vfs_[i] = std::make_unique<VfFunction>(*this, static_cast<unsigned>(i), f->rid());
    }
    // The routing ID is the PF's + First VF Offset + i x VF Stride, both fixed on this
    // device: the VF's port keeps the one it was built with.
    f->set_reset_callback([this, i](pcie::PcieFunction&, pcie::ResetKind) { vfs_[i]->controller().reset(); });
  }
}

bool SohuDevice::deliver_msix(pcie::RequesterId rid, unsigned vector) {
  if (endpoint_ == nullptr) return false;
  // MSI-X delivery is a posted write upstream: it needs a thread (the caller may be a
  // register handler), so it goes out from its own process.
  sc_core::sc_spawn([this, rid, vector] { endpoint_->raise_msix(rid, vector); });
  return true;
}

Outcome SohuDevice::run_io(const Sqe& sqe, std::uint16_t qid, const Issuer& who) {
  const std::uint64_t hits = mmu_.hits(), misses = mmu_.misses();
  Outcome o = exec_->execute(sqe, qid, who);
  mmu_hits_.inc(mmu_.hits() - hits);
  mmu_misses_.inc(mmu_.misses() - misses);
  return o;
}

// ---- the PF's CommandBackend and FunctionDevice ------------------------------------

Outcome SohuDevice::execute_io(const Sqe& sqe, std::uint16_t qid) {
  return run_io(sqe, qid, Issuer{});
}

Outcome SohuDevice::execute_admin(const Sqe& sqe) {
  return admin_device(sqe, -1);
}

std::uint32_t SohuDevice::power_state() {
  return static_cast<std::uint32_t>(registers().peek(SOHU_POWER_STATE) & 3);
}

void SohuDevice::command_started(const Sqe& sqe, std::uint16_t qid) {
  record_command(sqe, qid, true, 0);
}

void SohuDevice::command_completed(const Sqe& sqe, std::uint16_t qid, std::uint16_t status) {
  record_command(sqe, qid, false, status);
  // The PMU's overflow interrupt is polled at command ends, not per counter increment.
  if (pmu_->irq_enabled() && pmu_->poll_overflow(now_ps()) != 0) {
    registers().poke(SOHU_INT_STATUS, registers().peek(SOHU_INT_STATUS) | SOHU_INT_STATUS_PMU_OVF_MASK);
    raise_vector(static_cast<unsigned>(registers().peek(SOHU_ERR_VECTOR) & 0x7FF));
  }
}

bool SohuDevice::send_msix(unsigned vector) {
  if (endpoint_ == nullptr) return false;
  TraceRecord r;
  r.type = TraceRecordType::Interrupt;
  r.unit = static_cast<std::uint16_t>(vector);
  trace_unit_->record(r, kTraceInterrupts);
  return deliver_msix(endpoint_->pf().rid(), vector);
}

void SohuDevice::request_reset(const char* why) {
  reset_device(why);
}

void SohuDevice::function_disabled() {
  // Commands blocked on a semaphore or a rendezvous would otherwise wait for ever.
  exec_->abort_waiters();
}

void SohuDevice::fill_identity(RegisterFile& regs) {
  write_identity(regs, false);
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
    FunctionController* vf = this->vf(ext->vf_index);
    if (vf == nullptr || bar_index != 0) {
      // A VF has BAR0 only; the endpoint routes only to VFs that exist.
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    vf->bar0_access(gp);
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
  pf_->bar0_access(gp);
}

void SohuDevice::install_hooks() {
  // The PF's device-wide registers (the common ones are FunctionController's).
  registers().on_write(SOHU_POWER_STATE, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    const std::uint64_t ps = v & 3;
    registers().poke(SOHU_POWER_STATE, ps | (ps << 16));
  });
  // PMU.
  registers().on_write(SOHU_PMU_CTRL, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    pmu_->control(static_cast<std::uint32_t>(v), now_ps());
    registers().poke(SOHU_PMU_CTRL, pmu_->ctrl());
  });
  registers().on_write(SOHU_PMU_OVF, [this](std::uint32_t, std::uint64_t old_v, std::uint64_t new_v) {
    pmu_->clear_overflow(static_cast<std::uint32_t>(old_v & ~new_v));
  });
  registers().on_read(SOHU_PMU_OVF, [this](std::uint32_t, std::uint64_t) {
    pmu_->poll_overflow(now_ps());
    registers().poke(SOHU_PMU_OVF, pmu_->overflow_status());
    return static_cast<std::uint64_t>(pmu_->overflow_status());
  });
  registers().on_read(SOHU_PMU_CYCLES, [this](std::uint32_t, std::uint64_t) { return pmu_->cycles(now_ps()); });
  registers().on_write(SOHU_PMU_EVTSEL(0), [this](std::uint32_t i, std::uint64_t old_v, std::uint64_t v) {
    if (!pmu_->select(i, static_cast<std::uint16_t>(v & 0xFFFF), now_ps())) {
      registers().poke(SOHU_PMU_EVTSEL(i), old_v);
      report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), SOHU_PMU_EVTSEL(i), 0, 0, now_ps(),
                              "PMU_EVTSEL(" + std::to_string(i) + "): event id " + std::to_string(v & 0xFFFF) +
                                  " is not in the PMU event table"});
    }
  });
  registers().on_read(SOHU_PMU_COUNTER(0),
                      [this](std::uint32_t i, std::uint64_t) { return pmu_->counter(i, now_ps()); });
  // Trace unit.
  registers().on_write(SOHU_TRC_CTRL, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    if ((v & SOHU_TRC_CTRL_EN_MASK) != 0 && trace_unit_->size() == 0) {
      const std::string err = trace_unit_->configure(registers().peek(SOHU_TRC_BASE), registers().peek(SOHU_TRC_SIZE));
      if (!err.empty()) {
        registers().poke(SOHU_TRC_CTRL, SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
        report_error(ErrorEntry{static_cast<std::uint16_t>(Status::InvalidField), registers().peek(SOHU_TRC_BASE), 0, 0,
                                now_ps(), "TRC_CTRL.EN refused: " + err});
        return;
      }
    }
    trace_unit_->set_mask(static_cast<std::uint32_t>(registers().peek(SOHU_TRC_MASK)));
    trace_unit_->set_enabled((v & SOHU_TRC_CTRL_EN_MASK) != 0);
    registers().poke(SOHU_TRC_CTRL, (v & SOHU_TRC_CTRL_EN_MASK) | SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
  });
  for (std::uint32_t r : {SOHU_TRC_BASE, SOHU_TRC_SIZE}) {
    registers().on_write(r, [this](std::uint32_t, std::uint64_t, std::uint64_t) {
      // A new ring takes effect at the next enable.
      trace_unit_->set_enabled(false);
      trace_unit_->reset();
      registers().poke(SOHU_TRC_CTRL, SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
    });
  }
  registers().on_write(SOHU_TRC_MASK, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    trace_unit_->set_mask(static_cast<std::uint32_t>(v));
  });
  registers().on_write(SOHU_TRC_TAIL, [this](std::uint32_t, std::uint64_t, std::uint64_t v) {
    trace_unit_->set_tail(static_cast<std::uint32_t>(v));
  });
  registers().on_read(SOHU_TRC_HEAD,
                      [this](std::uint32_t, std::uint64_t) { return static_cast<std::uint64_t>(trace_unit_->head()); });
  registers().on_read(SOHU_TRC_DROPS, [this](std::uint32_t, std::uint64_t) {
    return static_cast<std::uint64_t>(trace_unit_->take_drops());
  });
}

// ---- errors, interrupts, reset -----------------------------------------------------

void SohuDevice::report_error(ErrorEntry e) {
  pf_->report_error(std::move(e));
}

void SohuDevice::raise_vector(unsigned vector) {
  pf_->raise_vector(vector);
}

void SohuDevice::reset_device(const char* why) {
  // The whole device: the PF's registers and queues, every VF's, and the shared units.
  pf_->reset();
  for (const std::unique_ptr<VfFunction>& vf : vfs_) {
    if (vf) vf->controller().reset();
  }
  std::fill(std::begin(vf_context_), std::end(vf_context_), std::uint16_t{0});
  exec_->abort_waiters();
  mmu_.reset();
  pmu_->reset();
  trace_unit_->reset();
  last_reset_ = why;
}

void SohuDevice::write_identity(RegisterFile& regs, bool vf) const {
  // Identification registers from the configuration (after construction and every reset).
  const DeviceParams& q = vf ? vf_params_ : p_;
  if (vf) regs.poke(SOHU_ID, kVfId);
  std::uint64_t cap0 = regs.peek(SOHU_CAP0);
  cap0 = (cap0 & ~static_cast<std::uint64_t>(0xFFFFFF)) | (q.max_io_queues & 0xFF) |
         (static_cast<std::uint64_t>((q.max_queue_entries - 1) & 0xFFFF) << 8);
  regs.poke(SOHU_CAP0, cap0);
  regs.poke(SOHU_CAP1, (p_.matrix.engines & 0xFF) | ((p_.vector.engines & 0xFF) << 8) |
                           ((p_.dma.channels & 0xFF) << 16) | ((p_.c2c_ports & 0xFF) << 24));
  regs.poke(SOHU_HBM_SIZE, p_.hbm_bytes);
  regs.poke(SOHU_SRAM_SIZE, sram_->params().capacity);
  regs.poke(SOHU_CLOCK_MHZ, static_cast<std::uint64_t>(std::llround(p_.clock_hz / 1e6)));
  regs.poke(SOHU_FW_STATUS, SOHU_FW_STATUS_STATE_RUNNING);
}

// ---- device-level admin commands ---------------------------------------------------

Outcome SohuDevice::admin_device(const Sqe& sqe, int vf) {
  if (vf >= 0) {
    // A VF's admin queue: its own identity and firmware status; the rest is the device's,
    // set up by the PF.
    const std::uint8_t op = sqe.opcode();
    if (op != SOHU_ADMIN_OP_IDENTIFY && op != SOHU_ADMIN_OP_FW_STATUS) {
      return Outcome::fail(Status::InvalidOpcode, "admin opcode " + hex(op) +
                                                      " configures the whole device: the PF's to issue, not VF " +
                                                      std::to_string(vf) + "'s");
    }
  }
  switch (sqe.opcode()) {
    case SOHU_ADMIN_OP_IDENTIFY: {
      IdentifyCmd c{};
      Outcome o = decode(sqe, c);
      if (!o.ok()) return o;
      // The identity structure (docs/registers.md "IDENTIFY data").
      std::vector<std::uint8_t> page(4096, 0);
      const auto put32 = [&](std::size_t off, std::uint32_t v) { std::memcpy(page.data() + off, &v, 4); };
      const auto put64 = [&](std::size_t off, std::uint64_t v) { std::memcpy(page.data() + off, &v, 8); };
      const DeviceParams& q = vf >= 0 ? vf_params_ : p_;
      put32(0, vf >= 0 ? kVfId : static_cast<std::uint32_t>(SOHU_ID_RESET));
      put32(4, static_cast<std::uint32_t>(SOHU_VERSION_RESET));
      put32(8, p_.matrix.engines);
      put32(12, p_.matrix.array.rows);
      put32(16, p_.matrix.array.cols);
      put32(20, p_.vector.engines);
      put32(24, p_.vector.lanes);
      put32(28, p_.dma.channels);
      put32(32, p_.c2c_ports);
      put32(36, q.max_io_queues);
      put32(40, q.max_queue_entries);
      put32(44, q.msix_vectors);
      put64(48, p_.hbm_bytes);
      put64(56, sram_->params().capacity);
      put64(64, static_cast<std::uint64_t>(std::llround(p_.clock_hz)));
      for (unsigned t = 0; t < kNumDataTypes; ++t) {
        put64(72 + 8 * t,
              static_cast<std::uint64_t>(std::llround(peak_flops(p_.matrix, static_cast<DataType>(t)) / 1e9)));
      }
      const std::size_t n = std::min<std::size_t>(p_.name.size(), 63);
      std::memcpy(page.data() + 128, p_.name.data(), n);
      MemoryPort& host = vf >= 0 ? vfs_[static_cast<std::size_t>(vf)]->host() : *host_port_;
      if (host.access(true, c.addr, page.data(), page.size(), sqe.correlation()) != PortStatus::Ok) {
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
      registers().poke(SOHU_PMU_EVTSEL(c.counter), c.event);
      const std::uint32_t ctrl = (pmu_->ctrl() & ~1u) | (c.enable ? 1u : 0u) | (c.reset ? 4u : 0u);
      pmu_->control(ctrl, now_ps());
      registers().poke(SOHU_PMU_CTRL, pmu_->ctrl());
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
      registers().poke(SOHU_TRC_BASE, c.ring);
      registers().poke(SOHU_TRC_SIZE, c.size);
      registers().poke(SOHU_TRC_MASK, c.mask);
      registers().poke(SOHU_TRC_CTRL, (c.enable ? SOHU_TRC_CTRL_EN_MASK : 0) | SOHU_TRC_CTRL_DROP_ON_FULL_MASK);
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
    case SOHU_ADMIN_OP_VF_CONTEXT: {
      VfContextCmd c{};
      Outcome o = decode(sqe, c);
      if (!o.ok()) return o;
      if (c.vf >= kVfs) {
        return Outcome::fail(Status::InvalidField, "VF_CONTEXT: VF " + std::to_string(c.vf) +
                                                       " does not exist (TotalVFs " + std::to_string(kVfs) +
                                                       ", indices 0.." + std::to_string(kVfs - 1) + ")");
      }
      if (c.context >= p_.mmu.contexts) {
        return Outcome::fail(Status::InvalidField, "VF_CONTEXT: context " + std::to_string(c.context) +
                                                       " (device.mmu.contexts is " + std::to_string(p_.mmu.contexts) +
                                                       ": 1.." + std::to_string(p_.mmu.contexts - 1) +
                                                       ", or 0 for none)");
      }
      vf_context_[c.vf] = c.context;
      return o;
    }
    case SOHU_ADMIN_OP_SET_FEATURES: {  // POWER_STATE (the command processor handles the rest)
      FeatureCmd f{};
      Outcome o = decode(sqe, f, true);
      if (!o.ok()) return o;
      const std::uint64_t ps = f.value & 3;
      registers().poke(SOHU_POWER_STATE, ps | (ps << 16));
      return o;
    }
    default:
      break;
  }
  return Outcome::fail(Status::InvalidOpcode, "admin opcode " + hex(sqe.opcode()) + " is not defined");
}

void SohuDevice::record_command(const Sqe& sqe, std::uint16_t qid, bool start, std::uint16_t status) {
  TraceRecord r;
  r.type = start ? TraceRecordType::CommandStart : TraceRecordType::CommandEnd;
  r.queue = qid;
  r.command = sqe.cid();
  r.correlation = sqe.correlation();
  r.status = status;
  r.arg = sqe.opcode();
  trace_unit_->record(r, kTraceCommands);
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
  return device::energy(p_.energy, a, seconds);
}

}  // namespace sohusim::device
