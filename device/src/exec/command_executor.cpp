#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/device/exec/command_executor.hpp"

#include "hex.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "sohusim/device/compute/gemm_plan.hpp"
#include "sohusim/device/compute/kernels.hpp"
#include "sohusim/device/compute/numerics.hpp"
#include "sohusim/device/compute/systolic.hpp"
#include "sohusim/device/compute/vector_cost.hpp"
#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::device {

using detail::hex;

namespace {

/// a * b * c with overflow detection (element counts and byte sizes of operands).
bool mul_ok(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

std::uint64_t now_ps() {
  return sc_core::sc_time_stamp().value();
}

/// The cycles `issued` MACs take at the array's peak (`rate` MACs per PE per cycle), at most
/// the tile's `compute` cycles.
std::uint64_t mac_cycles(std::uint64_t issued, ArrayShape array, double rate, std::uint64_t compute) {
  const double per_cycle = static_cast<double>(array.rows) * array.cols * rate;
  if (per_cycle <= 0) return 0;
  return std::min(compute, static_cast<std::uint64_t>(std::llround(static_cast<double>(issued) / per_cycle)));
}

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
      scope_(scope),
      shared_(std::make_shared<ReplayCache>()) {
  const std::uint64_t period = w_.params->period_ps();
  const auto add_engine = [&](std::vector<std::unique_ptr<EngineCounters>>& list, const std::string& name) {
    const counters::Scope s = scope.sub(name);
    list.push_back(std::make_unique<EngineCounters>(s));
    EngineCounters* c = list.back().get();
    // The rest of elapsed time: the buckets add up to elapsed cycles (DESIGN.md section 6).
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
  if (ps > 0) sc_core::wait(sc_core::sc_time::from_value(ps));
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
    if (w_.params->replay && replayable(sqe)) return execute_with_replay(sqe, qid);
    ++in_flight_;
    ++started_;
    struct Done {
      unsigned& n;
      ~Done() { --n; }
    } done{in_flight_};
    return dispatch(sqe, qid, false, who);
  } catch (const std::exception& e) {
    return Outcome::fail(Status::InternalError, std::string("command ") + hex(sqe.opcode()) + ": " + e.what());
  }
}

bool CommandExecutor::replayable(const Sqe& sqe) {
  const std::uint8_t op = sqe.opcode();
  return op == SOHU_IO_OP_GEMM || op == SOHU_IO_OP_ATTENTION || op == SOHU_IO_OP_VECTOR;
}

std::vector<std::uint32_t> CommandExecutor::signature(const Sqe& sqe) {
  std::vector<std::uint32_t> k(sqe.dw.begin(), sqe.dw.end());
  k[0] &= 0xFFFFu;  // CID
  k[2] = k[3] = 0;  // correlation
  // The address operands: GEMM A, B, C, D and ATTENTION Q, K, V, O are dwords 4-11;
  // VECTOR X, Y, OUT dwords 4-9.
  const unsigned last = sqe.opcode() == SOHU_IO_OP_VECTOR ? 9 : 11;
  for (unsigned i = 4; i <= last; ++i) k[i] = 0;
  return k;
}

void CommandExecutor::refresh_own_counters() {
  // The device's counters, looked up again only when the registry has grown (a glob over a
  // multi-device registry is far dearer than reading the values), and by name below the
  // device's prefix (a shared record names its counters so).
  counters::Registry& r = scope_.registry();
  if (r.size() == counters_seen_) return;
  counters_seen_ = r.size();
  own_counters_.clear();
  by_suffix_.clear();
  const std::size_t prefix = scope_.prefix().empty() ? 0 : scope_.prefix().size() + 1;
  // The trace unit's counters are left out: its writer streams records queued before and
  // during a command on its own schedule, so what it wrote while a command was recorded is
  // not that command's work (replaying it counted records the ring never received).
  const std::string trace_unit = scope_.prefix().empty() ? "trace_unit." : scope_.prefix() + ".trace_unit.";
  for (const counters::Stat* s : r.glob(scope_.prefix() + ".**")) {
    if (s->kind() != counters::StatKind::Counter) continue;
    if (s->name().rfind(trace_unit, 0) == 0) continue;
    auto* c = static_cast<counters::Counter*>(r.find(s->name()));
    own_counters_.push_back(c);
    by_suffix_.emplace(s->name().substr(prefix), c);
  }
}

std::vector<std::pair<counters::Counter*, std::uint64_t>> CommandExecutor::device_counters() {
  refresh_own_counters();
  std::vector<std::pair<counters::Counter*, std::uint64_t>> out;
  out.reserve(own_counters_.size());
  for (counters::Counter* c : own_counters_) out.emplace_back(c, c->count());
  return out;
}

const CommandExecutor::Replay* CommandExecutor::find_replay(const std::vector<std::uint32_t>& key) {
  const auto it = replays_.find(key);
  if (it != replays_.end()) return &it->second;
  const ReplayCache::Record* rec = shared_->find(key);
  if (rec == nullptr) return nullptr;
  // Recorded by a device of the same configuration: its counters, under this device's prefix.
  Replay r;
  r.duration_ps = rec->duration_ps;
  r.work = rec->work;
  refresh_own_counters();
  for (const auto& [suffix, n] : rec->increments) {
    const auto c = by_suffix_.find(suffix);
    if (c == by_suffix_.end()) return nullptr;  // not this shape of device
    r.increments->adds.emplace_back(c->second->slot(), n);
  }
  std::sort(r.increments->adds.begin(), r.increments->adds.end());  // ascending slots: a sequential walk
  return &replays_.emplace(key, std::move(r)).first->second;
}

Outcome CommandExecutor::execute_with_replay(const Sqe& sqe, std::uint16_t qid) {
  const bool idle = in_flight_ == 0;
  ++in_flight_;
  const std::uint64_t my_start = ++started_;
  struct Done {
    unsigned& n;
    ~Done() { --n; }
  } done{in_flight_};
  std::vector<std::uint32_t> key = signature(sqe);
  const std::uint64_t t0 = sc_core::sc_time_stamp().value();
  const Replay* replay = idle ? find_replay(key) : nullptr;
  if (replay == nullptr && idle) {
    if (const std::shared_ptr<ReplayCache::Pending> p = shared_->pending(key)) {
      // Another device of this configuration is recording the shape: check, wait for its
      // record, then end at this command's own start plus the recorded duration.
      Outcome o = dispatch(sqe, qid, true);
      if (!o.ok()) return o;
      while (!p->finished) sc_core::wait(p->done);
      replay = find_replay(key);
      if (replay == nullptr) return dispatch(sqe, qid);  // no clean record: simulate (late)
      const std::uint64_t now = sc_core::sc_time_stamp().value();
      if (t0 + replay->duration_ps > now) wait_ps(t0 + replay->duration_ps - now);
      apply(*replay);
      replayed(sqe, sc_core::sc_time_stamp().value() - t0, replay->work);
      return o;
    }
  }
  if (replay != nullptr) {
    // The same checks as a simulated run, then the recorded time and counters.
    Outcome o = dispatch(sqe, qid, true);
    if (!o.ok()) return o;
    wait_ps(replay->duration_ps);
    apply(*replay);
    replayed(sqe, replay->duration_ps, replay->work);
    return o;
  }
  const std::vector<std::pair<counters::Counter*, std::uint64_t>> before =
      idle ? device_counters() : decltype(device_counters()){};
  std::shared_ptr<ReplayCache::Pending> recording;
  if (idle) recording = shared_->begin(key);
  Outcome o;
  CommandWork work;
  try {
    o = dispatch(sqe, qid, false, {}, &work);
  } catch (...) {
    if (recording) shared_->end(key, recording, std::nullopt);  // followers must not wait forever
    throw;
  }
  std::optional<ReplayCache::Record> shared;
  // Record only a clean run that had the device to itself from start to end.
  if (idle && o.ok() && started_ == my_start && in_flight_ == 1) {
    Replay r;
    shared.emplace();
    r.duration_ps = shared->duration_ps = sc_core::sc_time_stamp().value() - t0;
    r.work = shared->work = work;
    std::map<counters::Counter*, std::uint64_t> base;  // counters created meanwhile start at 0
    for (const auto& [c, v] : before) base[c] = v;
    const std::size_t prefix = scope_.prefix().empty() ? 0 : scope_.prefix().size() + 1;
    for (const auto& [c, v] : device_counters()) {
      const auto b = base.find(c);
      const std::uint64_t was = b == base.end() ? 0 : b->second;
      if (v > was && c != &commands_) {
        r.increments->adds.emplace_back(c->slot(), v - was);
        shared->increments.emplace_back(c->name().substr(prefix), v - was);
      }
    }
    std::sort(r.increments->adds.begin(), r.increments->adds.end());
    replays_.emplace(key, std::move(r));
  }
  if (recording) shared_->end(key, recording, std::move(shared));
  return o;
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

bool CommandExecutor::run_engines(bool matrix, std::vector<std::vector<EngineTile>>& per_engine, DataType dt,
                                  std::uint64_t correlation, const char* tile_name, CommandWork& work) {
  // A tile's operand stream is modelled as one range from its first block; near the end of
  // HBM that range may run past it: slide it back inside (same bytes, same channels spread).
  const std::uint64_t hbm_size = w_.hbm->size();
  for (auto& list : per_engine) {
    for (EngineTile& t : list) {
      if (t.load_bytes <= hbm_size && t.load_address > hbm_size - t.load_bytes)
        t.load_address = hbm_size - t.load_bytes;
      if (t.store_bytes <= hbm_size && t.store_address > hbm_size - t.store_bytes)
        t.store_address = hbm_size - t.store_bytes;
    }
  }
  sc_core::sc_mutex& unit = matrix ? matrix_unit_ : vector_unit_;
  auto& engines = matrix ? me_ : ve_;
  const auto& tracks = matrix ? w_.matrix_tracks : w_.vector_tracks;
  const std::uint64_t period = w_.params->period_ps();
  const sc_core::sc_time asked = sc_core::sc_time_stamp();
  unit.lock();
  const std::uint64_t waited = (sc_core::sc_time_stamp() - asked).value() / period;
  struct Join {
    unsigned running = 0;
    bool ok = true;
    sc_core::sc_event done;
  };
  auto join = std::make_shared<Join>();
  for (unsigned e = 0; e < per_engine.size() && e < engines.size(); ++e) {
    if (per_engine[e].empty()) continue;
    // The command's work, as run_engine_tiles counts it on the engine.
    for (const EngineTile& t : per_engine[e]) {
      (matrix ? work.matrix_flops : work.vector_flops) += t.flops != 0 ? t.flops : 2 * t.useful_macs;
      work.hbm_bytes += t.load_bytes + (t.store_to_sram ? 0 : t.store_bytes);
      work.sram_bytes += t.sram_read_bytes + (t.store_to_sram ? t.store_bytes : 0);
    }
    engines[e]->stall_dependency_cycles.inc(waited);
    ++join->running;
    EngineTrace tr;
    if (w_.trace != nullptr && e < tracks.size()) {
      tr.recorder = w_.trace;
      tr.track = tracks[e];
      tr.tile_name = tile_name;
    }
    sc_core::sc_spawn([this, e, &per_engine, &engines, dt, correlation, period, tr, join] {
      const bool ok = run_engine_tiles(per_engine[e], *w_.hbm, w_.sram, period, dt, *engines[e], tr, correlation);
      if (!ok) join->ok = false;
      if (w_.engine_activity) w_.engine_activity(e, static_cast<std::uint32_t>(per_engine[e].size()), correlation);
      if (--join->running == 0) join->done.notify(sc_core::SC_ZERO_TIME);
    });
  }
  if (join->running > 0) sc_core::wait(join->done);
  unit.unlock();
  return join->ok;
}

bool CommandExecutor::read_tensor(std::uint64_t addr, std::uint64_t count, DataType t, std::vector<float>& out) {
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(count * bytes_of(t)));
  if (!w_.hbm->debug(false, addr, raw.data(), raw.size())) return false;
  out.resize(static_cast<std::size_t>(count));
  decode(t, raw.data(), out.data(), out.size());
  return true;
}

bool CommandExecutor::write_tensor(std::uint64_t addr, const std::vector<float>& v, DataType t) {
  std::vector<std::uint8_t> raw(v.size() * bytes_of(t));
  encode(t, v.data(), raw.data(), v.size());
  return w_.hbm->debug(true, addr, raw.data(), raw.size());
}

Outcome CommandExecutor::exec_gemm(const Sqe& sqe, bool validate_only, CommandWork& work) {
  GemmCmd g{};
  Outcome o = decode(sqe, g);
  if (!o.ok()) return o;
  const unsigned ib = bytes_of(g.in), ob = bytes_of(g.out);
  std::uint64_t mk = 0, kn = 0, mn = 0;
  if (!mul_ok(g.m, g.k, mk) || !mul_ok(g.k, g.n, kn) || !mul_ok(g.m, g.n, mn) || mk > (UINT64_MAX >> 3) ||
      kn > (UINT64_MAX >> 3) || mn > (UINT64_MAX >> 3)) {
    return Outcome::fail(Status::InvalidDimensions, "GEMM: M x K x N overflows 64-bit sizes");
  }
  Operand a, b, c, d;
  const unsigned ctx = sqe.context();
  if (!(o = check_device_range(ctx, Space::Hbm, g.a, mk * ib, false, ib, "GEMM A", a)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, g.b, kn * ib, false, ib, "GEMM B", b)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, g.c, mn * ob, true, ob, "GEMM C", c)).ok()) return o;
  if (g.bias || g.residual) {
    if (!(o = check_device_range(ctx, Space::Hbm, g.d, (g.bias ? g.n : mn) * ob, false, ob, "GEMM D", d)).ok())
      return o;
  }
  if (validate_only) return {};
  const DeviceParams& p = *w_.params;
  GemmPlanInput in;
  in.shape = GemmShape{g.m, g.k, g.n};
  in.in_bytes = ib;
  in.out_bytes = ob;
  in.acc_bytes = 4;
  in.engine = p.matrix;
  if (g.dataflow) in.engine.dataflow = *g.dataflow;
  in.dtype = g.in;
  in.sram_bytes = p.sram_bytes;
  in.hbm_bytes_per_second = p.hbm_peak_bytes_per_s * p.hbm_sustained_fraction;
  in.vector = p.vector;
  const GemmPlan plan = plan_gemm(in);
  // Split-K partials (gemm_plan.hpp): FP32 blocks, partial j of output tile (m0, n0) at
  // (j*M*N + m0*N + n0*tm) * 4 of a workspace (block rows of height tm, blocks in a row one
  // after the other): at the top of SRAM when they fit, else in HBM, where the workspace is
  // modelled inside C's range (timing only: no bytes move; in functional mode the port writes
  // back what is there, and C is computed after the timing).
  const std::uint64_t split = plan.split_k;
  const std::uint64_t acc = in.acc_bytes;
  const std::uint64_t partial_region = split > 1 ? mn * split * acc : 0;
  const std::uint64_t sram_region = plan.partials_in_sram ? p.sram_bytes - partial_region : 0;
  const auto partial_address = [&](std::uint64_t part, std::uint64_t m0, std::uint64_t n0, std::uint64_t tm,
                                   std::uint64_t bytes) {
    const std::uint64_t off = (part * mn + m0 * g.n + n0 * tm) * acc;
    if (plan.partials_in_sram) return sram_region + off;
    const std::uint64_t cb = mn * ob;
    return c.phys + (bytes >= cb ? 0 : std::min(off % cb, cb - bytes));
  };
  // Tiles in HBM: A rows m0.. at columns k0.., B rows k0.. at columns n0.. (row-major);
  // each tile's operand blocks are streamed as one range starting at the block's first
  // element (the interleaved address mapping spreads a 2-D block's rows over the channels
  // much as it spreads a contiguous range).
  std::vector<std::vector<EngineTile>> tiles(plan.per_engine.size());
  const ArrayShape arr = in.engine.array;
  for (std::size_t e = 0; e < plan.per_engine.size(); ++e) {
    tiles[e].reserve(plan.per_engine[e].size());
    for (const GemmTile& t : plan.per_engine[e]) {
      EngineTile et;
      const std::uint64_t a_off = (g.trans_a ? t.k0 * g.m + t.m0 : t.m0 * g.k + t.k0) * ib;
      const std::uint64_t b_off = (g.trans_b ? t.n0 * g.k + t.k0 : t.k0 * g.n + t.n0) * ib;
      et.load_address = t.a_bytes > 0 ? a.phys + a_off : b.phys + b_off;
      et.load_bytes = t.a_bytes + t.b_bytes;
      const FoldStats fs = fold_stats(in.engine.dataflow, arr, GemmShape{t.tm, t.tk, t.tn});
      // SRAM operand reads: the stationary block once per fold, the streamed operand once
      // per fold (what the array consumes).
      const std::uint64_t col_folds = (t.tn + arr.cols - 1) / arr.cols;
      const std::uint64_t row_folds = (t.tm + arr.rows - 1) / arr.rows;
      switch (in.engine.dataflow) {
        case Dataflow::WeightStationary:
          et.sram_read_bytes = (t.tk * t.tn + t.tm * t.tk * col_folds) * ib;
          break;
        case Dataflow::OutputStationary:
          et.sram_read_bytes = (t.tm * t.tk * col_folds + t.tk * t.tn * row_folds) * ib;
          break;
        case Dataflow::InputStationary:
          et.sram_read_bytes = (t.tm * t.tk + t.tk * t.tn * ((t.tm + arr.cols - 1) / arr.cols)) * ib;
          break;
      }
      et.sram_address = (e * (p.sram_bytes / std::max<std::size_t>(1, plan.per_engine.size()))) %
                        std::max<std::uint64_t>(1, p.sram_bytes);
      et.compute_cycles = t.compute_cycles;
      et.useful_macs = fs.useful_macs;
      et.issued_macs = fs.issued_macs;
      et.mac_cycles = mac_cycles(fs.issued_macs, arr, in.engine.rate[static_cast<unsigned>(g.in)], t.compute_cycles);
      if (t.partial_bytes > 0) {
        et.store_address = partial_address(t.part, t.m0, t.n0, t.tm, t.partial_bytes);
        et.store_bytes = t.partial_bytes;
        et.store_to_sram = plan.partials_in_sram;
      }
      if (t.c_bytes > 0) {
        et.store_address = c.phys + (t.m0 * g.n + t.n0) * ob;
        et.store_bytes = t.c_bytes;
        // The epilogue's operand comes with the last K step: a bias row or a residual block.
        if (g.bias) et.load_bytes += t.tn * ob;
        if (g.residual) et.load_bytes += t.tm * t.tn * ob;
      }
      tiles[e].push_back(et);
    }
  }
  if (!run_engines(true, tiles, g.in, sqe.correlation(), "gemm tile", work)) {
    return Outcome::fail(Status::InternalError, "GEMM: an operand stream failed in HBM");
  }
  if (split > 1) {
    // The reduction phase, once every partial is done: one tile per output tile on the vector
    // engines, reading its partials, adding them, writing the output (with the epilogue's
    // bias row or residual block loaded alongside).
    std::vector<std::vector<EngineTile>> reduce(plan.per_vector_engine.size());
    for (std::size_t v = 0; v < plan.per_vector_engine.size(); ++v) {
      const std::uint64_t ve_sram = v * (p.sram_bytes / std::max<std::size_t>(1, plan.per_vector_engine.size()));
      for (const GemmReduction& r : plan.per_vector_engine[v]) {
        EngineTile et;
        const std::uint64_t partials = r.parts * r.tm * r.tn * acc;
        const std::uint64_t first = partial_address(0, r.m0, r.n0, r.tm, partials);
        et.load_bytes = r.hbm_read_bytes;
        et.load_address = first;
        if (g.bias || g.residual) {
          if (et.load_bytes == 0) et.load_address = d.phys + (g.bias ? r.n0 : r.m0 * g.n + r.n0) * ob;
          if (g.bias) et.load_bytes += r.tn * ob;
          if (g.residual) et.load_bytes += r.tm * r.tn * ob;
        }
        et.sram_address = plan.partials_in_sram ? first : ve_sram;
        et.sram_read_bytes = r.sram_read_bytes;
        et.compute_cycles = r.cycles;
        et.flops = r.adds;
        et.store_address = c.phys + (r.m0 * g.n + r.n0) * ob;
        et.store_bytes = r.c_bytes;
        reduce[v].push_back(et);
      }
    }
    if (!run_engines(false, reduce, DataType::FP32, sqe.correlation(), "gemm split-k reduce", work)) {
      return Outcome::fail(Status::InternalError, "GEMM: a split-K partial stream failed");
    }
  }
  if (w_.hbm->holds_data()) {
    std::vector<float> A, B, D, C(static_cast<std::size_t>(mn));
    if (!read_tensor(a.phys, mk, g.in, A) || !read_tensor(b.phys, kn, g.in, B) ||
        ((g.bias || g.residual) && !read_tensor(d.phys, g.bias ? g.n : mn, g.out, D))) {
      return Outcome::fail(Status::InternalError, "GEMM: functional read of operands failed");
    }
    GemmArgs args;
    args.m = g.m;
    args.k = g.k;
    args.n = g.n;
    args.trans_a = g.trans_a;
    args.trans_b = g.trans_b;
    args.act = g.act;
    args.bias = g.bias;
    args.residual = g.residual;
    gemm(args, A.data(), B.data(), g.bias ? D.data() : nullptr, g.residual ? D.data() : nullptr, C.data());
    write_tensor(c.phys, C, g.out);
    functional_ops_.inc();
  }
  return {};
}

Outcome CommandExecutor::exec_attention(const Sqe& sqe, bool validate_only, CommandWork& work) {
  AttentionCmd at{};
  Outcome o = decode(sqe, at);
  if (!o.ok()) return o;
  const unsigned eb = bytes_of(at.dtype);
  const std::uint64_t q_elems = static_cast<std::uint64_t>(at.batch) * at.q_len * at.q_heads * at.head_dim;
  const std::uint64_t kv_elems = static_cast<std::uint64_t>(at.batch) * at.kv_len * at.kv_heads * at.head_dim;
  Operand q, k, v, out;
  const unsigned ctx = sqe.context();
  if (!(o = check_device_range(ctx, Space::Hbm, at.q, q_elems * eb, false, eb, "ATTENTION Q", q)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, at.k, kv_elems * eb, false, eb, "ATTENTION K", k)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, at.v, kv_elems * eb, false, eb, "ATTENTION V", v)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, at.o, q_elems * eb, true, eb, "ATTENTION O", out)).ok()) return o;
  if (validate_only) return {};
  const DeviceParams& p = *w_.params;
  const unsigned group = at.q_heads / at.kv_heads;
  const std::uint64_t rows = static_cast<std::uint64_t>(at.q_len) * group;  // queries sharing one KV head
  const double rate = p.matrix.rate[static_cast<unsigned>(at.dtype)];
  const std::uint64_t qk = compute_cycles(p.matrix.fold_model, p.matrix.dataflow, p.matrix.array,
                                          GemmShape{rows, at.head_dim, at.kv_len}, rate);
  const std::uint64_t pv = compute_cycles(p.matrix.fold_model, p.matrix.dataflow, p.matrix.array,
                                          GemmShape{rows, at.kv_len, at.head_dim}, rate);
  const FoldStats f1 = fold_stats(p.matrix.dataflow, p.matrix.array, GemmShape{rows, at.head_dim, at.kv_len});
  const FoldStats f2 = fold_stats(p.matrix.dataflow, p.matrix.array, GemmShape{rows, at.kv_len, at.head_dim});
  // Softmax over the rows x kv_len scores on the vector lanes paired with the engine.
  const VectorWork sm =
      vector_op_cost(p.vector, VectorOp::Softmax, static_cast<std::uint32_t>(std::min<std::uint64_t>(rows, UINT32_MAX)),
                     at.kv_len, DataType::FP32, at.dtype);
  const std::uint64_t head_kv_bytes = static_cast<std::uint64_t>(at.kv_len) * at.head_dim * eb;
  const std::uint64_t head_q_bytes = rows * at.head_dim * eb;
  std::vector<std::vector<EngineTile>> tiles(p.matrix.engines);
  unsigned next = 0;
  for (std::uint32_t bi = 0; bi < at.batch; ++bi) {
    for (std::uint32_t h = 0; h < at.kv_heads; ++h) {
      EngineTile t;
      const std::uint64_t item = static_cast<std::uint64_t>(bi) * at.kv_heads + h;
      // The head's K and V rows are strided in the position-major cache (a batch apart); the
      // tile's traffic is charged as one contiguous stream of the same size, which spreads
      // over the stacks the same way under the interleaving address mapping.
      t.load_address = k.phys + item * head_kv_bytes;
      t.load_bytes = 2 * head_kv_bytes + head_q_bytes;
      t.sram_read_bytes = 2 * head_kv_bytes + head_q_bytes;
      t.compute_cycles = qk + pv + sm.cycles;
      t.useful_macs = f1.useful_macs + f2.useful_macs;
      t.issued_macs = f1.issued_macs + f2.issued_macs;
      t.mac_cycles = mac_cycles(t.issued_macs, p.matrix.array, rate, t.compute_cycles);
      t.flops = 2 * t.useful_macs + sm.flops;
      t.store_address = out.phys + item * head_q_bytes;
      t.store_bytes = head_q_bytes;
      tiles[next].push_back(t);
      next = (next + 1) % p.matrix.engines;
    }
  }
  if (!run_engines(true, tiles, at.dtype, sqe.correlation(), "attention head", work)) {
    return Outcome::fail(Status::InternalError, "ATTENTION: an operand stream failed in HBM");
  }
  if (w_.hbm->holds_data()) {
    std::vector<float> Q, K, V, O(static_cast<std::size_t>(q_elems));
    if (!read_tensor(q.phys, q_elems, at.dtype, Q) || !read_tensor(k.phys, kv_elems, at.dtype, K) ||
        !read_tensor(v.phys, kv_elems, at.dtype, V)) {
      return Outcome::fail(Status::InternalError, "ATTENTION: functional read of operands failed");
    }
    AttentionArgs args;
    args.batch = at.batch;
    args.q_len = at.q_len;
    args.kv_len = at.kv_len;
    args.q_heads = at.q_heads;
    args.kv_heads = at.kv_heads;
    args.head_dim = at.head_dim;
    args.causal = at.causal;
    attention(args, Q.data(), K.data(), V.data(), O.data());
    write_tensor(out.phys, O, at.dtype);
    functional_ops_.inc();
  }
  return {};
}

Outcome CommandExecutor::exec_vector(const Sqe& sqe, bool validate_only, CommandWork& work) {
  VectorCmd vc{};
  Outcome o = decode(sqe, vc);
  if (!o.ok()) return o;
  const unsigned ib = bytes_of(vc.in), ob = bytes_of(vc.out_type);
  const std::uint32_t out_cols = vector_op_out_cols(vc.op, vc.cols);
  const std::uint64_t in_elems = static_cast<std::uint64_t>(vc.rows) * vc.cols;
  const std::uint64_t out_elems = static_cast<std::uint64_t>(vc.rows) * out_cols;
  std::uint64_t y_elems = 0;
  switch (vc.op) {
    case VectorOp::RmsNorm:
      y_elems = vc.cols;
      break;
    case VectorOp::LayerNorm:
      y_elems = 2ULL * vc.cols;
      break;
    case VectorOp::Add:
      y_elems = in_elems;
      break;
    default:
      break;
  }
  Operand x, y, out;
  const unsigned ctx = sqe.context();
  if (!(o = check_device_range(ctx, Space::Hbm, vc.x, in_elems * ib, false, ib, "VECTOR X", x)).ok()) return o;
  if (y_elems > 0 && !(o = check_device_range(ctx, Space::Hbm, vc.y, y_elems * ib, false, ib, "VECTOR Y", y)).ok())
    return o;
  if (!(o = check_device_range(ctx, Space::Hbm, vc.out, out_elems * ob, true, ob, "VECTOR OUT", out)).ok()) return o;
  if (validate_only) return {};
  const DeviceParams& p = *w_.params;
  const VectorWork cost = vector_op_cost(p.vector, vc.op, vc.rows, vc.cols, vc.in, vc.out_type);
  // Rows in tiles of at most 64 KiB of input, dealt over the vector engines.
  const std::uint64_t row_bytes = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(vc.cols) * ib);
  const std::uint64_t rows_per_tile = std::max<std::uint64_t>(1, (64ULL << 10) / row_bytes);
  std::vector<std::vector<EngineTile>> tiles(p.vector.engines);
  unsigned next = 0;
  for (std::uint64_t r0 = 0; r0 < vc.rows; r0 += rows_per_tile) {
    const std::uint64_t n = std::min<std::uint64_t>(rows_per_tile, vc.rows - r0);
    EngineTile t;
    t.load_address = x.phys + r0 * vc.cols * ib;
    t.load_bytes = n * vc.cols * ib + (vc.op == VectorOp::Add ? n * vc.cols * ib : 0);
    t.compute_cycles = std::max<std::uint64_t>(1, cost.cycles * n / vc.rows);
    t.flops = cost.flops * n / vc.rows;
    t.store_address = out.phys + r0 * out_cols * ob;
    t.store_bytes = n * out_cols * ob;
    tiles[next].push_back(t);
    next = (next + 1) % p.vector.engines;
  }
  if (!run_engines(false, tiles, vc.in, sqe.correlation(), to_string(vc.op), work)) {
    return Outcome::fail(Status::InternalError, "VECTOR: an operand stream failed in HBM");
  }
  if (w_.hbm->holds_data()) {
    std::vector<float> X, Y, OUT(static_cast<std::size_t>(out_elems));
    if (!read_tensor(x.phys, in_elems, vc.in, X) || (y_elems > 0 && !read_tensor(y.phys, y_elems, vc.in, Y))) {
      return Outcome::fail(Status::InternalError, "VECTOR: functional read of operands failed");
    }
    vector_op(vc.op, vc.rows, vc.cols, X.data(), y_elems > 0 ? Y.data() : nullptr, OUT.data(), vc.scalar, vc.aux,
              vc.aux2, vc.group);
    write_tensor(out.phys, OUT, vc.out_type);
    functional_ops_.inc();
  }
  return {};
}

// ---- synchronisation, collectives ---------------------------------------------------

Outcome CommandExecutor::exec_sem_signal(const Sqe& sqe) {
  SemSignalCmd s{};
  Outcome o = decode(sqe, s);
  if (!o.ok()) return o;
  if (s.device == 0xFF || s.device == index_) {
    w_.semaphores->signal(s.sem, s.value);
    return {};
  }
  auto it = peers_.find(s.device);
  if (it == peers_.end() || it->second.peer == nullptr) {
    return Outcome::fail(Status::PeerUnreachable,
                         "SEM_SIGNAL: no chip-to-chip port to device " + std::to_string(s.device));
  }
  const std::uint64_t arrive = it->second.tx->send(now_ps(), 16);  // a small message packet
  wait_ps(arrive - now_ps());
  it->second.peer->semaphores().signal(s.sem, s.value);
  return {};
}

Outcome CommandExecutor::exec_sem_wait(const Sqe& sqe) {
  SemWaitCmd s{};
  Outcome o = decode(sqe, s);
  if (!o.ok()) return o;
  const std::uint64_t gen = abort_generation_;
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  const bool reached = w_.semaphores->wait_geq(s.sem, s.value, static_cast<std::uint64_t>(s.timeout_us) * 1'000'000ULL);
  if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "SEM_WAIT: aborted by a reset");
  const std::uint64_t cycles = (sc_core::sc_time_stamp() - t0).value() / w_.params->period_ps();
  for (auto& e : me_) e->stall_dependency_cycles.inc(cycles);
  if (!reached) {
    return Outcome::fail(Status::SemTimeout, "SEM_WAIT: semaphore " + std::to_string(s.sem) + " stayed at " +
                                                 std::to_string(w_.semaphores->value(s.sem)) + " < " +
                                                 std::to_string(s.value) + " for " + std::to_string(s.timeout_us) +
                                                 " us");
  }
  return {};
}

void CommandExecutor::deliver(unsigned from, std::uint32_t tag, Message m) {
  inbox_[{from, tag}].push_back(std::move(m));
  arrived_.notify(sc_core::SC_ZERO_TIME);
}

Outcome CommandExecutor::exec_all_reduce(const Sqe& sqe, const CollectiveCmd& c, CommandWork& work) {
  std::vector<unsigned> peers;
  for (unsigned d = 0; d < 32; ++d) {
    if (((c.peers >> d) & 1u) == 0) continue;
    if (d == index_) {
      return Outcome::fail(Status::InvalidField,
                           "COLLECTIVE ALL_REDUCE: PEERS names this device (" + std::to_string(d) + ") itself");
    }
    auto it = peers_.find(d);
    if (it == peers_.end() || it->second.peer == nullptr) {
      return Outcome::fail(Status::PeerUnreachable,
                           "COLLECTIVE ALL_REDUCE: no chip-to-chip port to device " + std::to_string(d));
    }
    peers.push_back(d);
  }
  Operand local;
  Outcome o = check_device_range(sqe.context(), Space::Hbm, c.addr, c.length, true, bytes_of(c.dtype),
                                 "COLLECTIVE buffer", local);
  if (!o.ok()) return o;
  const bool data = w_.hbm->holds_data();
  // One read of the buffer, then one transfer per port, all ports at once (each link
  // serialises its own transfers); the messages land in the peers' inboxes.
  std::vector<std::uint8_t> mine(data ? c.length : 0);
  w_.hbm->access(false, local.phys, data ? mine.data() : nullptr, c.length, sqe.correlation());
  for (unsigned d : peers) {
    PeerLink& l = peers_[d];
    Message m;
    m.length = c.length;
    if (data && l.peer->hbm().holds_data()) m.data = mine;
    m.arrive_ps = l.tx->send(now_ps(), c.length);
    l.peer->deliver(index_, c.tag, std::move(m));
  }
  // Every peer's buffer with this tag, in whatever order they come.
  const std::uint64_t gen = abort_generation_;
  std::vector<Message> got(peers.size());
  std::vector<bool> have(peers.size(), false);
  std::size_t missing = peers.size();
  std::uint64_t last_arrival = now_ps();
  while (missing > 0) {
    if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE ALL_REDUCE: aborted");
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (have[i]) continue;
      auto q = inbox_.find(std::make_pair(peers[i], c.tag));
      if (q == inbox_.end() || q->second.empty()) continue;
      got[i] = std::move(q->second.front());
      q->second.pop_front();
      if (q->second.empty()) inbox_.erase(q);
      if (got[i].length != c.length) {
        return Outcome::fail(Status::InvalidField, "COLLECTIVE ALL_REDUCE of " + std::to_string(c.length) +
                                                       " bytes met a message of " + std::to_string(got[i].length) +
                                                       " from device " + std::to_string(peers[i]) + " (tag " +
                                                       std::to_string(c.tag) + ")");
      }
      last_arrival = std::max(last_arrival, got[i].arrive_ps);
      have[i] = true;
      --missing;
    }
    if (missing > 0) sc_core::wait(arrived_);
  }
  if (last_arrival > now_ps()) wait_ps(last_arrival - now_ps());
  if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE ALL_REDUCE: aborted");
  // The adds, spread over every vector engine; the buffer is read again and written once.
  w_.hbm->access(false, local.phys, nullptr, c.length, sqe.correlation());
  const std::uint64_t elems = c.length / bytes_of(c.dtype);
  const VectorWork add = vector_op_cost(w_.params->vector, VectorOp::Add, static_cast<std::uint32_t>(peers.size()),
                                        std::max<std::uint64_t>(1, elems), c.dtype, c.dtype);
  const std::uint64_t engines = std::max(1u, w_.params->vector.engines);
  wait_ps((add.cycles + engines - 1) / engines * w_.params->period_ps());
  if (data) {
    // Summed in device order, the same order on every device: every device gets the same bits.
    std::vector<std::pair<unsigned, const std::vector<std::uint8_t>*>> parts{{index_, &mine}};
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (!got[i].data.empty()) parts.emplace_back(peers[i], &got[i].data);
    }
    std::sort(parts.begin(), parts.end());
    std::vector<float> total(static_cast<std::size_t>(elems), 0.0f), y(total.size());
    for (const auto& part : parts) {
      decode(c.dtype, part.second->data(), y.data(), y.size());
      for (std::size_t e = 0; e < total.size(); ++e) total[e] += y[e];
    }
    encode(c.dtype, total.data(), mine.data(), total.size());
  }
  w_.hbm->access(true, local.phys, data ? mine.data() : nullptr, c.length, sqe.correlation());
  work.hbm_bytes += 3 * c.length;  // read to send, read to add, write
  work.link_bytes += c.length * peers.size();
  work.vector_flops += add.flops;
  return {};
}

Outcome CommandExecutor::exec_collective(const Sqe& sqe, CommandWork& work) {
  CollectiveCmd c{};
  Outcome o = decode(sqe, c);
  if (!o.ok()) return o;
  if (c.op == CollectiveOp::AllReduce) return exec_all_reduce(sqe, c, work);
  auto it = peers_.find(c.peer);
  if (it == peers_.end() || it->second.peer == nullptr) {
    return Outcome::fail(Status::PeerUnreachable,
                         "COLLECTIVE: no chip-to-chip port to device " + std::to_string(c.peer));
  }
  Operand local;
  if (!(o = check_device_range(sqe.context(), Space::Hbm, c.addr, c.length, c.op != CollectiveOp::Send,
                               bytes_of(c.dtype), "COLLECTIVE buffer", local))
           .ok()) {
    return o;
  }
  const bool data = w_.hbm->holds_data();
  if (c.op == CollectiveOp::Send) {
    // Eager: read the buffer, hand it to the link (which serialises this port's transfers)
    // and complete; the message lands in the peer's inbox when its last byte arrives.
    CommandExecutor& peer = *it->second.peer;
    Message m;
    m.length = c.length;
    if (data && peer.hbm().holds_data()) m.data.assign(c.length, 0);
    w_.hbm->access(false, local.phys, m.data.empty() ? nullptr : m.data.data(), c.length, sqe.correlation());
    m.arrive_ps = it->second.tx->send(now_ps(), c.length);
    peer.deliver(index_, c.tag, std::move(m));
    // The transfer goes on after the SEND completes: its link time is the receive's.
    work.hbm_bytes += c.length;
    return {};
  }
  // RECV / REDUCE_STEP / GATHER_STEP: wait for the peer's message with this tag, then write
  // it into the buffer (a reduce step reads the buffer and adds on the vector lanes first).
  const std::uint64_t gen = abort_generation_;
  const auto key = std::make_pair(c.peer, c.tag);
  for (;;) {
    if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE: receive aborted");
    auto q = inbox_.find(key);
    if (q != inbox_.end() && !q->second.empty()) break;
    sc_core::wait(arrived_);
  }
  std::deque<Message>& queue = inbox_[key];
  Message m = std::move(queue.front());
  queue.pop_front();
  if (queue.empty()) inbox_.erase(key);
  if (m.length != c.length) {
    return Outcome::fail(Status::InvalidField, "COLLECTIVE: a receive of " + std::to_string(c.length) +
                                                   " bytes met a SEND of " + std::to_string(m.length) +
                                                   " from device " + std::to_string(c.peer) + " (tag " +
                                                   std::to_string(c.tag) + ")");
  }
  if (m.arrive_ps > now_ps()) wait_ps(m.arrive_ps - now_ps());
  if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE: receive aborted");
  work.link_bytes += c.length;  // received: this command waited for the transfer
  if (c.op == CollectiveOp::ReduceStep) {
    w_.hbm->access(false, local.phys, nullptr, c.length, sqe.correlation());
    // The add, spread over every vector engine.
    const std::uint64_t elems = c.length / bytes_of(c.dtype);
    const VectorWork add =
        vector_op_cost(w_.params->vector, VectorOp::Add, 1, std::max<std::uint64_t>(1, elems), c.dtype, c.dtype);
    const std::uint64_t engines = std::max(1u, w_.params->vector.engines);
    wait_ps((add.cycles + engines - 1) / engines * w_.params->period_ps());
    work.hbm_bytes += c.length;
    work.vector_flops += add.flops;
    if (data && !m.data.empty()) {
      std::vector<std::uint8_t> mine(c.length, 0);
      w_.hbm->debug(false, local.phys, mine.data(), c.length);
      std::vector<float> x(static_cast<std::size_t>(elems)), y(static_cast<std::size_t>(elems));
      decode(c.dtype, mine.data(), x.data(), x.size());
      decode(c.dtype, m.data.data(), y.data(), y.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
      encode(c.dtype, x.data(), m.data.data(), x.size());
    }
  }
  w_.hbm->access(true, local.phys, m.data.empty() ? nullptr : m.data.data(), c.length, sqe.correlation());
  work.hbm_bytes += c.length;
  return {};
}

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
