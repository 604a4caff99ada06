#include "sohusim/memory/hbm_memory.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "payload_data.hpp"
#include "sohusim/memory/dram_system.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {

struct HbmMemory::Txn {
  tlm::tlm_generic_payload* gp = nullptr;
  int socket_id = -1;
  bool blocking = false;  // b_transport: the caller waits on done_event
  bool write = false;
  std::uint64_t next = 0;         // next access to split off
  std::uint64_t end = 0;          // end of the aligned range
  std::uint32_t outstanding = 0;  // split off (staged or in the backend), not completed
  std::uint64_t arrival_ps = 0;
  std::uint64_t seq = 0;  // acceptance order: requests arriving at the same time are split in it
  Cycle done = 0;
  sc_core::sc_event done_event;
};

HbmMemoryParams HbmMemoryParams::from_config(const config::Config& config) {
  HbmMemoryParams p;
  p.functional = config.get_string("sim.data_mode") == "functional";
  p.stacks = static_cast<std::uint32_t>(config.get_uint("hbm.stacks"));
  p.max_transactions = static_cast<std::uint32_t>(config.get_uint("hbm.target.max_transactions"));
  p.staging = static_cast<std::uint32_t>(config.get_uint("hbm.target.staging"));
  p.bandwidth_sample_ps =
      static_cast<std::uint64_t>(std::llround(config.get_quantity("hbm.target.bandwidth_sample") * 1e12));
  p.use_bulk = config.get_bool("hbm.target.bulk");
  return p;
}

std::string hbm_fidelity(const config::Config& config) {
  const std::string& own = config.get_string("hbm.target.fidelity");
  return own == "inherit" ? config.get_string("sim.fidelity") : own;
}

std::unique_ptr<MemoryBackend> make_hbm_backend(const config::Config& config, const std::string& fidelity,
                                                const sim::Instrumentation& inst, const std::string& stats_prefix) {
  if (fidelity == "detailed") return DramSystem::from_config(config, inst.scope(stats_prefix));
  if (fidelity == "fast") return FastDram::from_config(config, inst, stats_prefix);
  throw std::invalid_argument("unknown HBM fidelity `" + fidelity + "`; allowed: detailed, fast");
}

namespace {

counters::DistributionSpec latency_spec() {
  return counters::DistributionSpec::log(1.0, 1.0e7, 140);
}

}  // namespace

HbmMemory::HbmMemory(sc_core::sc_module_name name, std::unique_ptr<MemoryBackend> backend,
                     const HbmMemoryParams& params, const sim::Instrumentation& inst, const std::string& stats_prefix)
    : sc_core::sc_module(name),
      socket("socket"),
      backend_(std::move(backend)),
      params_(params),
      inst_(inst),
      period_ps_(0),
      access_bytes_(0),
      requests_(inst.scope(stats_prefix).counter("port.requests", "1", "TLM requests accepted")),
      reads_(inst.scope(stats_prefix).counter("port.reads", "1", "TLM read requests accepted")),
      writes_(inst.scope(stats_prefix).counter("port.writes", "1", "TLM write requests accepted")),
      bytes_read_(inst.scope(stats_prefix).counter("port.bytes_read", "B", "bytes requested by TLM reads")),
      bytes_written_(inst.scope(stats_prefix).counter("port.bytes_written", "B", "bytes requested by TLM writes")),
      accesses_(
          inst.scope(stats_prefix).counter("port.accesses", "1", "backend accesses the TLM requests were split into")),
      address_errors_(
          inst.scope(stats_prefix).counter("port.address_errors", "1", "requests answered TLM_ADDRESS_ERROR_RESPONSE")),
      other_errors_(
          inst.scope(stats_prefix).counter("port.other_errors", "1", "requests answered with another error response")),
      backpressure_(
          inst.scope(stats_prefix)
              .counter("port.backpressure", "1", "BEGIN_REQs whose END_REQ was withheld because the target was full")),
      read_latency_(
          inst.scope(stats_prefix)
              .distribution("port.read_latency", "ns", "TLM read latency, arrival to response", latency_spec())),
      write_latency_(
          inst.scope(stats_prefix)
              .distribution("port.write_latency", "ns", "TLM write latency, arrival to response", latency_spec())),
      occupancy_(inst.scope(stats_prefix).gauge("port.occupancy", "1", "transactions held by the target")) {
  sim::ensure_time_resolution();
  if (!backend_) throw std::invalid_argument("HbmMemory '" + std::string(this->name()) + "': no backend");
  if (params_.max_transactions == 0) {
    throw std::invalid_argument("HbmMemory '" + std::string(this->name()) + "': max_transactions must be >= 1");
  }
  if (params_.staging == 0) {
    throw std::invalid_argument("HbmMemory '" + std::string(this->name()) + "': staging must be >= 1");
  }
  // The same rounding as sim::ClockDomain: the period to the nearest picosecond.
  period_ps_ = static_cast<std::uint64_t>(std::llround(1e12 / backend_->clock_hz()));
  if (period_ps_ == 0) throw std::invalid_argument("HbmMemory: memory clock above 2 THz");
  access_bytes_ = backend_->access_bytes();
  if (params_.use_bulk) fast_ = dynamic_cast<FastDram*>(backend_.get());
  // Which controller queue an address waits in, for the models whose mapping is known:
  // a transaction blocked on a full queue is retried only when that queue drains.
  const AddressMapping* mapping = nullptr;
  std::uint32_t queues = 1;
  DramOrganization org;
  if (auto* d = dynamic_cast<DramSystem*>(backend_.get())) {
    mapping = &d->mapping();
    org = d->spec().org;
  } else if (auto* f = dynamic_cast<FastDram*>(backend_.get())) {
    mapping = &f->mapping();
    org = f->spec().org;
  }
  if (mapping != nullptr) {
    queues = org.total_pcs();
    queue_key_ = [mapping, org](std::uint64_t addr) {
      const DecodedAddress d = mapping->decode(addr);
      return (d.stack * org.channels + d.channel) * org.pseudo_channels + d.pseudo_channel;
    };
  }
  staged_.resize(2 * std::size_t{queues});
  active_.resize(2 * std::size_t{queues}, 0);
  if (params_.functional) store_ = std::make_unique<sim::SparseStore>(backend_->capacity_bytes());
  backend_->set_completion([this](const MemRequest& r, Cycle done) { on_complete(r, done); });

  register_rollups(stats_prefix);

  socket.register_b_transport(this, &HbmMemory::b_transport);
  socket.register_nb_transport_fw(this, &HbmMemory::nb_transport_fw);
  socket.register_transport_dbg(this, &HbmMemory::transport_dbg);
  SC_HAS_PROCESS(HbmMemory);
  SC_THREAD(run);
}

HbmMemory::HbmMemory(sc_core::sc_module_name name, const config::Config& config, const sim::Instrumentation& inst,
                     const std::string& stats_prefix)
    : HbmMemory(name, make_hbm_backend(config, hbm_fidelity(config), inst, stats_prefix),
                HbmMemoryParams::from_config(config), inst, stats_prefix) {}

HbmMemory::~HbmMemory() {
  // Payloads still held when the simulation stopped go back to their managers.
  for (auto& w : waiting_) {
    if (w.second->has_mm()) w.second->release();
  }
  for (auto& t : txns_) {
    if (t->gp != nullptr && !t->blocking && t->gp->has_mm()) t->gp->release();
  }
}

// ---- roll-ups and the bandwidth track -----------------------------------------------

void HbmMemory::register_rollups(const std::string& prefix) {
  counters::Registry& reg = *inst_.registry;
  // The backend's per-pseudo-channel counters, found by their names
  // (`<prefix>.s0.ch0.pc0.<leaf>`), summed per stack and per device. Derived rates
  // (bandwidth, efficiency, row_hit_rate) are the backend's own at every level.
  const std::string pc0 = prefix + ".s0.ch0.pc0.";
  std::set<std::string> leaves;
  for (const counters::Stat* s : reg.glob(pc0 + "*")) {
    if (s->kind() == counters::StatKind::Counter) leaves.insert(s->name().substr(pc0.size()));
  }
  std::vector<std::vector<const counters::Counter*>> byte_counters;  // per stack: its pseudo-channels' bytes
  for (std::uint32_t k = 0; k <= params_.stacks; ++k) {
    const bool device = k == params_.stacks;  // `<prefix>.<leaf>` over every stack
    const std::string scope = device ? prefix : prefix + ".s" + std::to_string(k);
    const std::string pcs = device ? prefix + ".s*.ch*.pc*." : scope + ".ch*.pc*.";
    const std::string what = device ? "all stacks" : "stack " + std::to_string(k);
    for (const std::string& leaf : leaves) {
      const std::string name = scope + "." + leaf;
      if (reg.find(name) != nullptr) continue;
      const counters::Stat* proto = reg.find(pc0 + leaf);
      reg.formula(name, proto->unit(), proto->description() + " (sum over " + what + ")", "sum(" + pcs + leaf + ")");
    }
    if (!device && leaves.count("bytes_read") != 0 && leaves.count("bytes_written") != 0) {
      // The pseudo-channel counters themselves, found once: the per-stack formulas would
      // re-resolve their globs over the whole registry whenever a stat is added (every new
      // queue of a run), which cost a traced decode step of the 70B request ~10 % of its
      // wall time.
      std::vector<const counters::Counter*> pcs_of_stack;
      for (const char* leaf : {".ch*.pc*.bytes_read", ".ch*.pc*.bytes_written"}) {
        for (const counters::Stat* s : reg.glob(scope + leaf)) {
          if (const auto* c = dynamic_cast<const counters::Counter*>(s)) pcs_of_stack.push_back(c);
        }
      }
      byte_counters.push_back(std::move(pcs_of_stack));
    }
  }
  if (inst_.tracing() && params_.bandwidth_sample_ps > 0 && byte_counters.size() == params_.stacks) {
    for (std::uint32_t k = 0; k < params_.stacks; ++k) {
      bw_tracks_.push_back(inst_.trace->counter_track(
          inst_.process_track, std::string(name()) + " s" + std::to_string(k) + " bandwidth", "GB/s"));
    }
    last_bytes_.assign(params_.stacks, 0.0);
    // The tracks read these counters at every bin: watched sums, read without settling every
    // replayed command's owed increments (counters/deferred_adds.hpp) a bin at a time.
    for (const auto& stack : byte_counters) stack_sums_.push_back(reg.watch_sum(stack));
  }
}

double HbmMemory::stack_bytes(std::uint32_t k) const {
  return static_cast<double>(inst_.registry->watched_sum(stack_sums_[k]));
}

void HbmMemory::sample_bandwidth(std::uint64_t now, bool idle) {
  if (bw_tracks_.empty()) return;
  const std::uint64_t interval = inst_.trace_summary
                                     ? std::max(params_.bandwidth_sample_ps, sim::Instrumentation::kSummaryBinPs)
                                     : params_.bandwidth_sample_ps;
  auto emit = [&](std::uint64_t at_ps, std::uint64_t span_ps) {
    for (std::uint32_t k = 0; k < params_.stacks; ++k) {
      const double bytes = stack_bytes(k);
      const double gbps = span_ps > 0 ? (bytes - last_bytes_[k]) / (static_cast<double>(span_ps) * 1e-12) / 1e9 : 0.0;
      inst_.trace->counter(bw_tracks_[k], at_ps / 1000, gbps);
      last_bytes_[k] = bytes;
    }
  };
  if (inst_.trace_summary) {
    // Whole bins only, no edges at each busy/idle change, and no wake-up of its own (the
    // process never stays awake for a boundary: `sampling_` stays false): a bin's average is
    // written at its start when traffic first lands past its end (bytes of that first
    // request count in the bin before: a request's worth of error); a stretch of empty bins
    // reads 0. The last bin of a run is not written.
    if (next_sample_ps_ == 0) {
      for (std::uint32_t k = 0; k < params_.stacks; ++k) last_bytes_[k] = stack_bytes(k);
      next_sample_ps_ = (now / interval + 1) * interval;
      return;
    }
    if (now < next_sample_ps_) return;
    emit(next_sample_ps_ - interval, interval);
    if (now >= next_sample_ps_ + interval) {
      for (auto track : bw_tracks_) inst_.trace->counter(track, next_sample_ps_ / 1000, 0.0);
    }
    next_sample_ps_ = (now / interval + 1) * interval;
    return;
  }
  if (!sampling_) {
    if (idle) return;
    // Busy again: a 0 at the start, then a sample at every interval boundary.
    sampling_ = true;
    for (std::uint32_t k = 0; k < params_.stacks; ++k) {
      last_bytes_[k] = stack_bytes(k);
      inst_.trace->counter(bw_tracks_[k], now / 1000, 0.0);
    }
    next_sample_ps_ = (now / interval + 1) * interval;
    return;
  }
  if (now >= next_sample_ps_) {
    emit(next_sample_ps_, interval);
    next_sample_ps_ += interval;
  }
  if (idle) {
    // The partial interval up to now, then 0: the track drops when the work ends, and the
    // process does not stay awake for a boundary that would only extend simulated time.
    const std::uint64_t start = next_sample_ps_ - interval;
    if (now > start) emit(now, now - start);
    for (auto track : bw_tracks_) inst_.trace->counter(track, now / 1000, 0.0);
    sampling_ = false;
  }
}

// ---- transactions -------------------------------------------------------------------

bool HbmMemory::admit(tlm::tlm_generic_payload& gp) {
  return detail::admit(gp, backend_->capacity_bytes(), store_ != nullptr, address_errors_, other_errors_);
}

std::uint32_t HbmMemory::new_txn(tlm::tlm_generic_payload& gp, int socket_id, bool blocking, std::uint64_t arrival_ps) {
  std::uint32_t index;
  if (!free_txns_.empty()) {
    index = free_txns_.back();
    free_txns_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(txns_.size());
    txns_.push_back(std::make_unique<Txn>());
  }
  Txn& t = *txns_[index];
  t.gp = &gp;
  t.socket_id = socket_id;
  t.blocking = blocking;
  t.write = gp.is_write();
  const std::uint64_t a = access_bytes_;
  t.next = gp.get_address() / a * a;
  t.end = (gp.get_address() + gp.get_data_length() + a - 1) / a * a;
  t.outstanding = 0;
  t.arrival_ps = arrival_ps;
  t.done = 0;
  return index;
}

void HbmMemory::accept(std::uint32_t index) {
  Txn& t = *txns_[index];
  tlm::tlm_generic_payload& gp = *t.gp;
  if (store_) detail::move_data(*store_, gp);
  ++requests_;
  if (t.write) {
    ++writes_;
    bytes_written_ += gp.get_data_length();
  } else {
    ++reads_;
    bytes_read_ += gp.get_data_length();
  }
  ++held_;
  occupancy_.set(static_cast<double>(held_));
  t.seq = arrival_seq_++;
  arrivals_.push(Arrival{t.arrival_ps, t.seq, index});
  kick_at(t.arrival_ps);
}

void HbmMemory::release(std::uint32_t index) {
  Txn& t = *txns_[index];
  if (!t.blocking && t.gp->has_mm()) t.gp->release();
  t.gp = nullptr;
  free_txns_.push_back(index);
  --held_;
  occupancy_.set(static_cast<double>(held_));
  slot_freed_.notify(sc_core::SC_ZERO_TIME);
}

void HbmMemory::kick_at(std::uint64_t ps) {
  const std::uint64_t now = now_ps();
  const std::uint64_t edge = cycle_at_or_after(std::max(ps, now)) * period_ps_;
  kick_.notify(sim::from_ps(edge - now));
}

void HbmMemory::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (!admit(gp)) return;
  if (delay != sc_core::SC_ZERO_TIME) {
    wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  while (held_ >= params_.max_transactions) wait(slot_freed_);
  const std::uint32_t index = new_txn(gp, id, /*blocking=*/true, now_ps());
  accept(index);
  wait(txns_[index]->done_event);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  release(index);
}

tlm::tlm_sync_enum HbmMemory::nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                              sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) {
    if (!admit(gp)) {
      phase = tlm::BEGIN_RESP;  // an error (or an ignore) completes at once
      return tlm::TLM_COMPLETED;
    }
    if (gp.has_mm()) gp.acquire();
    if (held_ < params_.max_transactions && waiting_.empty()) {
      accept(new_txn(gp, id, /*blocking=*/false, now_ps() + sim::to_ps(delay)));
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    // Full: END_REQ comes when a slot frees, and until then this initiator may not send
    // another request (the base protocol's request exclusion rule) — the back-pressure.
    ++backpressure_;
    waiting_.emplace_back(id, &gp);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_RESP) {
    const auto sid = static_cast<std::size_t>(id);
    if (sid < response_open_.size() && response_open_[sid]) {
      response_open_[sid] = false;
      const std::uint32_t index = responses_[sid].front();
      responses_[sid].pop_front();
      release(index);
      kick_at(now_ps() + sim::to_ps(delay));  // the next response of this binding may go
    }
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), (std::string("nb_transport_fw: unexpected phase ") + phase.get_name()).c_str());
  return tlm::TLM_COMPLETED;
}

unsigned int HbmMemory::transport_dbg(int /*id*/, tlm::tlm_generic_payload& gp) {
  return detail::debug_transport(store_.get(), gp);
}

// ---- the process --------------------------------------------------------------------

std::uint64_t HbmMemory::walk(std::uint32_t index) {
  Txn& t = *txns_[index];
  const std::uint64_t a = access_bytes_;
  if (fast_ != nullptr && t.end - t.next > a && t.outstanding == 0) {
    // One bulk request: FastDram charges its servers without an event per access.
    fast_->enqueue_bulk(t.next, t.end - t.next, t.write, index);
    accesses_ += (t.end - t.next) / a;
    t.outstanding = 1;
    t.next = t.end;
    return 1;
  }
  std::uint64_t handed = 0;
  while (t.next < t.end) {
    const std::uint32_t q = queue_of(t.next, t.write);
    std::deque<Staged>& staged = staged_[q];
    if (staged.empty() && backend_->can_accept(t.next, t.write)) {
      backend_->enqueue(MemRequest{t.next, t.write, index, 0});
      ++handed;
    } else if (staged.size() < params_.staging) {
      if (!active_[q]) {
        active_[q] = 1;
        active_queues_.push_back(q);
      }
      staged.push_back(Staged{t.next, index});
      ++staged_count_;
    } else {
      stopped_at_ = q;  // it goes on when this queue's staging has room again
      break;
    }
    ++accesses_;
    ++t.outstanding;
    t.next += a;
  }
  return handed;
}

std::uint64_t HbmMemory::issue() {
  std::uint64_t handed = 0;
  // Each queue with staged accesses takes what it has room for, then the request stopped
  // at its staging (the first in line) goes on. A queue entry frees when the controller issues a
  // command, which the backend does not announce, so every wake looks — at the queues
  // with staged work only. walk() may append queues to the list: they are looked at too.
  for (std::size_t i = 0; i < active_queues_.size(); ++i) {
    const std::uint32_t q = active_queues_[i];
    std::deque<Staged>& staged = staged_[q];
    while (!staged.empty() && backend_->can_accept(staged.front().addr, q % 2 == 1)) {
      const Staged s = staged.front();
      staged.pop_front();
      --staged_count_;
      backend_->enqueue(MemRequest{s.addr, q % 2 == 1, s.txn, 0});
      ++handed;
    }
    if (stopped_at_ == q && staged.size() < params_.staging) {
      stopped_at_ = kNotStopped;
      handed += split(splitting_.front());
    }
  }
  // Queues left with nothing staged leave the list.
  std::size_t keep = 0;
  for (std::size_t i = 0; i < active_queues_.size(); ++i) {
    const std::uint32_t q = active_queues_[i];
    if (staged_[q].empty()) {
      active_[q] = 0;
    } else {
      active_queues_[keep++] = q;
    }
  }
  active_queues_.resize(keep);
  // Requests are split in the order they arrived: a new one waits behind the one still
  // being split.
  for (const std::uint32_t index : fresh_) {
    splitting_.push_back(index);
    if (splitting_.size() == 1) handed += split(index);
  }
  fresh_.clear();
  return handed;
}

std::uint64_t HbmMemory::split(std::uint32_t index) {
  std::uint64_t handed = walk(index);
  while (!splitting_.empty() && txns_[splitting_.front()]->next == txns_[splitting_.front()]->end) {
    splitting_.pop_front();
    if (!splitting_.empty()) handed += walk(splitting_.front());
  }
  return handed;
}

std::uint32_t HbmMemory::queue_of(std::uint64_t addr, bool write) const {
  return (queue_key_ ? queue_key_(addr) : 0) * 2 + (write ? 1 : 0);
}

void HbmMemory::on_complete(const MemRequest& request, Cycle done) {
  Txn& t = *txns_[request.id];
  --t.outstanding;
  t.done = std::max(t.done, done);
  if (t.outstanding == 0 && t.next >= t.end) finish(static_cast<std::uint32_t>(request.id));
}

void HbmMemory::finish(std::uint32_t index) {
  Txn& t = *txns_[index];
  const std::uint64_t now = now_ps();
  const std::uint64_t done_ps = std::max(t.done * period_ps_, t.arrival_ps);
  const double latency_ns = static_cast<double>(done_ps - t.arrival_ps) / 1e3;
  (t.write ? write_latency_ : read_latency_).sample(latency_ns);
  t.gp->set_response_status(tlm::TLM_OK_RESPONSE);
  if (t.blocking) {
    t.done_event.notify(sim::from_ps(done_ps > now ? done_ps - now : 0));
    return;
  }
  const auto sid = static_cast<std::size_t>(t.socket_id);
  if (responses_.size() <= sid) {
    responses_.resize(sid + 1);
    response_open_.resize(sid + 1, false);
  }
  responses_[sid].push_back(index);
  send_responses(t.socket_id);
}

void HbmMemory::send_responses(int socket_id) {
  const auto sid = static_cast<std::size_t>(socket_id);
  while (!response_open_[sid] && !responses_[sid].empty()) {
    const std::uint32_t index = responses_[sid].front();
    Txn& t = *txns_[index];
    const std::uint64_t now = now_ps();
    const std::uint64_t done_ps = t.done * period_ps_;
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sim::from_ps(done_ps > now ? done_ps - now : 0);
    response_open_[sid] = true;
    const tlm::tlm_sync_enum r = socket[socket_id]->nb_transport_bw(*t.gp, phase, delay);
    if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::END_RESP)) {
      response_open_[sid] = false;
      responses_[sid].pop_front();
      release(index);
    }
    // TLM_ACCEPTED: END_RESP will come through nb_transport_fw.
  }
}

void HbmMemory::accept_waiting() {
  while (held_ < params_.max_transactions && !waiting_.empty()) {
    const auto [id, gp] = waiting_.front();
    waiting_.pop_front();
    accept(new_txn(*gp, id, /*blocking=*/false, now_ps()));
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket[id]->nb_transport_bw(*gp, phase, delay);
  }
}

void HbmMemory::run() {
  for (;;) {
    const std::uint64_t now = now_ps();
    const Cycle cycle = cycle_at_or_after(now);
    while (!arrivals_.empty() && arrivals_.top().ps <= now) {
      fresh_.push_back(arrivals_.top().txn);
      arrivals_.pop();
    }
    // Completions up to now (they send their responses), then new accesses; repeat while
    // the backend takes more at this cycle (a completion may have freed queue room).
    do {
      backend_->advance_to(cycle);
    } while (issue() > 0);
    for (std::size_t sid = 0; sid < responses_.size(); ++sid) send_responses(static_cast<int>(sid));
    accept_waiting();
    const bool idle = backend_->pending() == 0 && staged_count_ == 0 && splitting_.empty() && arrivals_.empty();
    sample_bandwidth(now, idle);

    std::uint64_t wake = ~0ULL;
    const Cycle next = backend_->next_event();
    if (next != kNever) wake = std::max(next, cycle + 1) * period_ps_;
    if (!arrivals_.empty()) wake = std::min(wake, cycle_at_or_after(arrivals_.top().ps) * period_ps_);
    if (sampling_) wake = std::min(wake, next_sample_ps_);
    if (wake == ~0ULL) {
      wait(kick_);
    } else {
      wait(sim::from_ps(wake > now ? wake - now : period_ps_), kick_);
    }
  }
}

}  // namespace sohusim::memory
