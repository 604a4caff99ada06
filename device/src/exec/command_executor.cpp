// CommandExecutor (command_executor.hpp): the entry point of every I/O command, its
// operand checks, the dispatch by opcode, DMA_COPY and the small commands (TIMESTAMP,
// PMU_SNAPSHOT, EXEC_PROGRAM). The compute commands are in command_compute.cpp, the
// synchronisation and collectives in command_collectives.cpp, replay in command_replay.cpp.
#include "sohusim/device/exec/command_executor.hpp"

#include <algorithm>
#include <cstring>

#include "exec/executor_detail.hpp"
#include "hex.hpp"
#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::device {

using detail::hex;
using detail::now_ps;

namespace {

/// One end of a DMA copy, as work on the unit that end is in.
void add_dma_side(CommandWork& w, Space space, std::uint64_t bytes, bool written) {
  switch (space) {
    case Space::Host:
      (written ? w.host_write_bytes : w.host_read_bytes) += bytes;
      break;
    case Space::Hbm:
      w.hbm_bytes += bytes;
      break;
    case Space::Sram:
      w.sram_bytes += bytes;
      break;
    default:
      break;  // a peer's HBM: the link carries it (counted by the caller)
  }
}

}  // namespace

CommandExecutor::CommandExecutor(ExecutorWiring wiring, unsigned device_index, const counters::Scope& scope)
    : w_(std::move(wiring)),
      index_(device_index),
      commands_(scope.counter("exec.commands", "count", "I/O commands executed (any status)")),
      functional_ops_(
          scope.counter("exec.functional_ops", "count", "commands whose data was computed (functional mode)")),
      replayed_(
          scope.counter("exec.replayed", "count",
                        "commands whose time and counters were replayed from an identical-shape run (device.replay)")),
      replay_(scope, commands_) {
  const std::uint64_t period = w_.params->period_ps();
  const auto add_engine = [&](std::vector<std::unique_ptr<EngineCounters>>& list, const std::string& name) {
    const counters::Scope s = scope.sub(name);
    list.push_back(std::make_unique<EngineCounters>(s));
    EngineCounters* c = list.back().get();
    // The rest of elapsed time: the buckets add up to elapsed cycles (docs/profiler.md).
    s.registry().formula(
        s.join("idle_cycles"), "cycles", "cycles with no work (elapsed minus active and stalls)", [c, period] {
          const double elapsed = static_cast<double>(sc_core::sc_time_stamp().value() / period);
          const double busy = c->active_cycles.value() + c->stall_hbm_cycles.value() + c->stall_sram_cycles.value() +
                              c->stall_store_cycles.value() + c->stall_dependency_cycles.value();
          return std::max(0.0, elapsed - busy);
        });
  };
  for (const WorkClass& c : work_classes()) work_[c.opcode] = std::make_unique<WorkCounters>(scope, c);
  for (unsigned e = 0; e < w_.params->matrix.engines; ++e) add_engine(me_, "me" + std::to_string(e));
  for (unsigned e = 0; e < w_.params->vector.engines; ++e) add_engine(ve_, "ve" + std::to_string(e));
}

void CommandExecutor::wait_ps(std::uint64_t ps) {
  detail::wait_ps(ps);
}

void CommandExecutor::abort_waiters() {
  ++abort_generation_;
  inbox_.clear();
  arrived_.notify(sc_core::SC_ZERO_TIME);
  w_.semaphores->reset();
}

Outcome CommandExecutor::check_device_range(unsigned ctx, Space space, std::uint64_t addr, std::uint64_t bytes,
                                            bool write, unsigned align, const char* what, Operand& out) {
  if (align > 1 && addr % align != 0) {
    return Outcome::fail(Status::Misaligned,
                         std::string(what) + " address " + hex(addr) + " is not aligned to " + std::to_string(align) +
                             " bytes (its element size)",
                         addr);
  }
  std::uint64_t phys = addr;
  if (space == Space::Hbm && ctx == kNoContext) {
    return Outcome::fail(Status::MmuFault,
                         std::string(what) +
                             ": context 0xFFFF maps nothing (a virtual function runs in it until its PF "
                             "assigns it a context with the VF_CONTEXT admin command)",
                         addr);
  }
  if (space == Space::Hbm && ctx != 0) {
    MmuResult m = w_.mmu->translate(ctx, addr, bytes, write);
    wait_ps(m.cost_ps);
    if (!m.ok) return Outcome::fail(Status::MmuFault, std::string(what) + ": " + m.fault, m.fault_address);
    phys = m.segments.empty() ? addr : m.segments.front().phys;
    // Tiles stream operands as contiguous ranges: a context must map each operand
    // contiguously (the driver allocates that way); a split mapping is a fault here.
    if (m.segments.size() > 1) {
      return Outcome::fail(Status::MmuFault,
                           std::string(what) + ": range " + hex(addr) + " + " + std::to_string(bytes) +
                               " is not physically contiguous in context " + std::to_string(ctx),
                           addr);
    }
  }
  MemoryPort* port = space == Space::Hbm ? w_.hbm : space == Space::Sram ? w_.sram : nullptr;
  if (port != nullptr && (phys > port->size() || bytes > port->size() - phys)) {
    return Outcome::fail(Status::OutOfRange,
                         std::string(what) + " range " + hex(phys) + " + " + std::to_string(bytes) +
                             " bytes is outside " + to_string(space) + " (" + std::to_string(port->size()) + " bytes)",
                         phys);
  }
  out = Operand{phys, bytes};
  return {};
}

Outcome CommandExecutor::execute(const Sqe& entry, std::uint16_t qid, const Issuer& who) {
  commands_.inc();
  Sqe forced;
  if (who.vf >= 0) {
    // A VF's entry runs in the context its PF assigned, whatever it names.
    forced = entry;
    forced.set_context(who.context != 0 ? who.context : kNoContext);
  }
  const Sqe& sqe = who.vf >= 0 ? forced : entry;
  // A model limit hit by a legal-looking command (a plan too large to tile, a kernel's own
  // argument check) fails that command, never the simulation.
  try {
    if (w_.params->replay && CommandReplay::replayable(sqe)) {
      return replay_.execute(
          sqe, [&](bool validate_only, CommandWork* done) { return dispatch(sqe, qid, validate_only, {}, done); },
          [&](std::uint64_t duration_ps, const CommandWork& work) { replayed(sqe, duration_ps, work); });
    }
    const CommandReplay::InFlight running(replay_);
    return dispatch(sqe, qid, false, who);
  } catch (const std::exception& e) {
    return Outcome::fail(Status::InternalError, std::string("command ") + hex(sqe.opcode()) + ": " + e.what());
  }
}

void CommandExecutor::replayed(const Sqe& sqe, std::uint64_t duration_ps, const CommandWork& work) {
  replayed_.inc();
  if (WorkCounters* c = work_[sqe.opcode()].get()) {
    c->sample_duration(duration_ps);
    if (on_command_) on_command_(sqe, duration_ps, work);
  }
}

Outcome CommandExecutor::dispatch(const Sqe& sqe, std::uint16_t qid, bool validate_only, const Issuer& who,
                                  CommandWork* done) {
  CommandWork work;
  const std::uint64_t t0 = now_ps();
  Outcome o = route(sqe, qid, validate_only, who, work);
  if (!validate_only && o.ok()) {
    if (WorkCounters* c = work_[sqe.opcode()].get()) {
      c->add(work, now_ps() - t0);
      if (on_command_) on_command_(sqe, now_ps() - t0, work);
    }
  }
  if (done != nullptr) *done = work;
  return o;
}

Outcome CommandExecutor::route(const Sqe& sqe, std::uint16_t qid, bool validate_only, const Issuer& who,
                               CommandWork& work) {
  switch (sqe.opcode()) {
    case SOHU_IO_OP_NOP:
      return decode_no_operands(sqe, false);
    case SOHU_IO_OP_FENCE:
      return decode_no_operands(sqe, false);  // queues run in order: nothing earlier is pending
    case SOHU_IO_OP_DMA_COPY:
      return exec_dma(sqe, who, work);
    case SOHU_IO_OP_GEMM:
      return exec_gemm(sqe, validate_only, work);
    case SOHU_IO_OP_ATTENTION:
      return exec_attention(sqe, validate_only, work);
    case SOHU_IO_OP_VECTOR:
      return exec_vector(sqe, validate_only, work);
    case SOHU_IO_OP_COLLECTIVE:
      return exec_collective(sqe, work);
    case SOHU_IO_OP_SEM_SIGNAL:
      return exec_sem_signal(sqe);
    case SOHU_IO_OP_SEM_WAIT:
      return exec_sem_wait(sqe);
    case SOHU_IO_OP_TIMESTAMP:
      return exec_timestamp(sqe, who);
    case SOHU_IO_OP_PMU_SNAPSHOT:
      return exec_pmu_snapshot(sqe, who);
    case SOHU_IO_OP_EXEC_PROGRAM:
      return exec_program(sqe, qid, who);
    default:
      break;
  }
  return Outcome::fail(Status::InvalidOpcode, "I/O opcode " + hex(sqe.opcode()) + " is not defined");
}

// ---- DMA ---------------------------------------------------------------------------

Outcome CommandExecutor::exec_dma(const Sqe& sqe, const Issuer& who, CommandWork& work) {
  DmaCopyCmd c{};
  Outcome o = decode(sqe, c);
  if (!o.ok()) return o;
  Operand src{c.src, c.length}, dst{c.dst, c.length};
  MemoryPort* host = who.host != nullptr ? who.host : w_.host;
  if (who.vf >= 0 && (c.src_space == Space::PeerHbm || c.dst_space == Space::PeerHbm)) {
    // A peer's HBM is addressed physically (no context there): not for a VF.
    return Outcome::fail(Status::InvalidField, "DMA_COPY: a virtual function (VF " + std::to_string(who.vf) +
                                                   ") cannot address a peer's HBM");
  }
  if (c.src_space == Space::PeerHbm || c.dst_space == Space::PeerHbm) {
    auto it = peers_.find(c.peer);
    if (it == peers_.end() || it->second.peer == nullptr) {
      return Outcome::fail(Status::PeerUnreachable, "DMA_COPY: device " + std::to_string(index_) +
                                                        " has no chip-to-chip port to device " +
                                                        std::to_string(c.peer));
    }
    if (c.src_space == Space::PeerHbm) {
      return Outcome::fail(Status::InvalidField,
                           "DMA_COPY: reading a peer's HBM is not supported (the peer pushes: "
                           "use DST_SPACE PEER_HBM on the peer, or COLLECTIVE)");
    }
  }
  if (c.src_space != Space::Host && c.src_space != Space::PeerHbm) {
    o = check_device_range(sqe.context(), c.src_space, c.src, c.length, false, 1, "DMA_COPY source", src);
    if (!o.ok()) return o;
  }
  if (c.dst_space != Space::Host && c.dst_space != Space::PeerHbm) {
    o = check_device_range(sqe.context(), c.dst_space, c.dst, c.length, true, 1, "DMA_COPY destination", dst);
    if (!o.ok()) return o;
  }
  if (c.dst_space == Space::PeerHbm) {
    PeerLink& l = peers_[c.peer];
    MemoryPort& peer_hbm = l.peer->hbm();
    if (c.dst > peer_hbm.size() || c.length > peer_hbm.size() - c.dst) {
      return Outcome::fail(Status::OutOfRange,
                           "DMA_COPY destination " + hex(c.dst) + " + " + std::to_string(c.length) +
                               " is outside device " + std::to_string(c.peer) + "'s HBM",
                           c.dst);
    }
    // Read locally, then push over the link into the peer's HBM, chunk by chunk.
    const std::uint64_t chunk = w_.params->dma.chunk;
    std::vector<std::uint8_t> buf;
    for (std::uint64_t off = 0; off < c.length; off += chunk) {
      const std::uint64_t n = std::min(chunk, c.length - off);
      const bool data = w_.hbm->holds_data() || peer_hbm.holds_data();
      buf.assign(data ? n : 0, 0);
      MemoryPort* in = c.src_space == Space::Host ? host : c.src_space == Space::Sram ? w_.sram : w_.hbm;
      if (in->access(false, src.phys + off, data ? buf.data() : nullptr, n, sqe.correlation()) != PortStatus::Ok) {
        return Outcome::fail(c.src_space == Space::Host ? Status::HostDmaError : Status::OutOfRange,
                             "DMA_COPY: read of " + hex(src.phys + off) + " failed", src.phys + off);
      }
      const std::uint64_t arrive = l.tx->send(now_ps(), n);
      wait_ps(arrive - now_ps());
      peer_hbm.access(true, c.dst + off, data ? buf.data() : nullptr, n, sqe.correlation());
    }
    add_dma_side(work, c.src_space, c.length, false);
    work.link_bytes += c.length;
    return {};
  }
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  const DmaResult r = w_.dma->copy(c.src_space, src.phys, c.dst_space, dst.phys, c.length, sqe.correlation(), who.host);
  if (w_.trace != nullptr) {
    const counters::TimeNs start = sim::to_ns(t0);
    const std::string name = std::string("dma ") + to_string(c.src_space) + "->" + to_string(c.dst_space);
    const counters::TimeNs d = sim::to_ns(sc_core::sc_time_stamp()) - start;
    if (sqe.correlation() != 0) {
      w_.trace->complete(w_.dma_track, start, d, name, {counters::Arg{"bytes", c.length}},
                         {counters::Flow{sqe.correlation()}}, sqe.correlation());
    } else {
      w_.trace->complete(w_.dma_track, start, d, name, {counters::Arg{"bytes", c.length}});
    }
  }
  if (!r.ok()) {
    const Status s = r.failed_space == Space::Host ? Status::HostDmaError : Status::OutOfRange;
    return Outcome::fail(s,
                         std::string("DMA_COPY: ") + to_string(r.failed_space) + " access at " + hex(r.failed_address) +
                             " failed" + (r.failed_space == Space::Host ? " (IOMMU fault or unsupported request)" : ""),
                         r.failed_address);
  }
  add_dma_side(work, c.src_space, c.length, false);
  add_dma_side(work, c.dst_space, c.length, true);
  return {};
}

// ---- engines -----------------------------------------------------------------------

// ---- synchronisation, collectives ---------------------------------------------------

// ---- small commands ----------------------------------------------------------------

Outcome CommandExecutor::exec_timestamp(const Sqe& sqe, const Issuer& who) {
  AddressCmd a{};
  Outcome o = decode_timestamp(sqe, a);
  if (!o.ok()) return o;
  const std::uint64_t t = w_.clock->device_ns(now_ps());
  if (on_timestamp_) on_timestamp_(t);
  std::uint8_t bytes[8];
  std::memcpy(bytes, &t, 8);
  MemoryPort* host = who.host != nullptr ? who.host : w_.host;
  MemoryPort* port = a.space == Space::Host ? host : a.space == Space::Sram ? w_.sram : w_.hbm;
  if (a.space == Space::PeerHbm)
    return Outcome::fail(Status::InvalidField, "TIMESTAMP: SPACE must be HOST, HBM or SRAM");
  if (a.space != Space::Host) {
    Operand op;
    if (!(o = check_device_range(sqe.context(), a.space, a.addr, 8, true, 8, "TIMESTAMP address", op)).ok()) return o;
    a.addr = op.phys;
  } else if (a.addr % 8 != 0) {
    return Outcome::fail(Status::Misaligned, "TIMESTAMP: host address " + hex(a.addr) + " is not 8-byte aligned",
                         a.addr);
  }
  if (port->access(true, a.addr, bytes, 8, sqe.correlation()) != PortStatus::Ok) {
    return Outcome::fail(a.space == Space::Host ? Status::HostDmaError : Status::OutOfRange,
                         "TIMESTAMP: write to " + hex(a.addr) + " failed", a.addr);
  }
  o.result = t;
  return o;
}

Outcome CommandExecutor::exec_pmu_snapshot(const Sqe& sqe, const Issuer& who) {
  AddressCmd a{};
  Outcome o = decode_pmu_snapshot(sqe, a);
  if (!o.ok()) return o;
  if (who.vf >= 0) {
    // The PMU counts for the whole device: the PF's to read, not a VF's.
    return Outcome::fail(Status::InvalidOpcode, "PMU_SNAPSHOT is not available to a virtual function (VF " +
                                                    std::to_string(who.vf) + "): the PMU belongs to the PF");
  }
  if (a.addr % 8 != 0)
    return Outcome::fail(Status::Misaligned, "PMU_SNAPSHOT: address " + hex(a.addr) + " is not 8-byte aligned", a.addr);
  std::uint64_t v[1 + Pmu::kCounters];
  v[0] = w_.pmu->cycles(now_ps());
  for (unsigned i = 0; i < Pmu::kCounters; ++i) v[1 + i] = w_.pmu->counter(i, now_ps());
  if (w_.host->access(true, a.addr, reinterpret_cast<std::uint8_t*>(v), sizeof v, sqe.correlation()) !=
      PortStatus::Ok) {
    return Outcome::fail(Status::HostDmaError, "PMU_SNAPSHOT: write to host " + hex(a.addr) + " failed", a.addr);
  }
  o.result = v[0];
  return o;
}

Outcome CommandExecutor::exec_program(const Sqe& sqe, std::uint16_t qid, const Issuer& who) {
  ExecProgramCmd pc{};
  Outcome o = decode(sqe, pc);
  if (!o.ok()) return o;
  Operand prog;
  if (!(o = check_device_range(sqe.context(), Space::Hbm, pc.addr, static_cast<std::uint64_t>(pc.count) * 64, false, 64,
                               "EXEC_PROGRAM", prog))
           .ok()) {
    return o;
  }
  if (!w_.hbm->holds_data()) {
    return Outcome::fail(Status::InvalidField,
                         "EXEC_PROGRAM: device memory holds no bytes in timing data mode (sim.data_mode: timing); "
                         "resident programs need functional mode");
  }
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(pc.count) * 64);
  // The command processor reads the program through its HBM port (timed), then runs it.
  w_.hbm->access(false, prog.phys, nullptr, raw.size(), sqe.correlation());
  w_.hbm->debug(false, prog.phys, raw.data(), raw.size());
  for (std::uint32_t i = 0; i < pc.count; ++i) {
    const Sqe inner = Sqe::from_bytes(raw.data() + i * 64);
    if (inner.opcode() == SOHU_IO_OP_EXEC_PROGRAM) {
      return Outcome::fail(Status::InvalidField,
                           "EXEC_PROGRAM: entry " + std::to_string(i) + " is itself EXEC_PROGRAM (no nesting)");
    }
    wait_ps(w_.params->command_latency_ps);
    Outcome r = execute(inner, qid, who);
    if (!r.ok()) {
      r.message = "EXEC_PROGRAM entry " + std::to_string(i) + ": " + r.message;
      return r;
    }
  }
  return {};
}

}  // namespace sohusim::device
