#include "sohusim/memory/dram_controller.hpp"

#include <algorithm>
#include <stdexcept>

#include "sohusim/config/config.hpp"

namespace sohusim::memory {

namespace {
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

counters::DistributionSpec occupancy_buckets(std::uint32_t depth) {
  return counters::DistributionSpec::linear(0.0, static_cast<double>(depth) + 1.0, std::min(depth + 1, 64u));
}
}  // namespace

ControllerParams ControllerParams::from_config(const config::Config& c) {
  ControllerParams p;
  const auto u32 = [&](const char* k) { return static_cast<std::uint32_t>(c.get_uint(k)); };
  p.read_queue = u32("hbm.controller.read_queue");
  p.write_queue = u32("hbm.controller.write_queue");
  p.write_high = u32("hbm.controller.write_high");
  p.write_low = u32("hbm.controller.write_low");
  p.read_starvation = u32("hbm.controller.read_starvation");
  p.scheduler = c.get_string("hbm.controller.scheduler") == "fcfs" ? SchedulerKind::Fcfs : SchedulerKind::FrFcfs;
  p.bus_arbiter = c.get_string("hbm.controller.bus_arbiter") == "oldest" ? BusArbiter::Oldest : BusArbiter::Fixed;
  const std::string& page = c.get_string("hbm.controller.page_policy");
  p.page_policy = page == "closed" ? PagePolicy::Closed : page == "adaptive" ? PagePolicy::Adaptive : PagePolicy::Open;
  const std::string& refresh = c.get_string("hbm.controller.refresh");
  p.refresh = refresh == "perbank" ? RefreshMode::PerBank : refresh == "off" ? RefreshMode::Off : RefreshMode::AllBank;
  p.refresh_postpone = u32("hbm.controller.refresh_postpone");
  p.latency = u32("hbm.controller.latency");
  p.write_forward_latency = u32("hbm.controller.write_forward_latency");
  return p;
}

PcStats::PcStats(const counters::Scope& s, double tck)
    : act(s.counter("act", "commands", "ACT commands issued")),
      pre(s.counter("pre", "commands", "PRE and PREA commands issued (auto-precharge not counted)")),
      rd(s.counter("rd", "commands", "RD and RDA commands issued")),
      wr(s.counter("wr", "commands", "WR and WRA commands issued")),
      refab(s.counter("refab", "commands", "all-bank refreshes (REFab), idle ones included")),
      refpb(s.counter("refpb", "commands", "per-bank refreshes (REFpb), idle ones included")),
      row_hits(s.counter("row_hits", "accesses", "accesses served from an already open row")),
      row_misses(s.counter("row_misses", "accesses", "accesses that needed an ACT of a closed bank")),
      row_conflicts(s.counter("row_conflicts", "accesses", "accesses that needed a PRE of another open row")),
      bytes_read(s.counter("bytes_read", "B", "bytes read from the DRAM")),
      bytes_written(s.counter("bytes_written", "B", "bytes written to the DRAM")),
      busy_cycles(s.counter("busy_cycles", "cycles", "cycles the data bus carried a burst")),
      reads_from_write_queue(
          s.counter("reads_from_write_queue", "requests", "reads served from a queued write to the same address")),
      read_queue(s.distribution("read_queue", "entries", "read-queue occupancy seen by each arriving read",
                                occupancy_buckets(1024))),
      write_queue(s.distribution("write_queue", "entries", "write-queue occupancy seen by each arriving write",
                                 occupancy_buckets(1024))),
      read_latency(s.distribution("read_latency", "ns", "read latency, arrival to completion",
                                  counters::DistributionSpec::log(1.0, 1.0e6, 96))),
      tck_ns(tck) {}

// ---- Queue ------------------------------------------------------------------------

DramController::Queue::Queue(std::uint32_t capacity) : slots_(capacity) {
  order_.reserve(capacity);
  free_.reserve(capacity);
  for (std::uint32_t i = capacity; i > 0; --i) free_.push_back(static_cast<std::uint16_t>(i - 1));
}

void DramController::Queue::push(const Entry& e) {
  const std::uint16_t slot = free_.back();
  free_.pop_back();
  slots_[slot] = e;
  order_.push_back(slot);
}

void DramController::Queue::erase(std::size_t position) {
  free_.push_back(order_[position]);
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(position));
}

// ---- DramController ---------------------------------------------------------------

DramController::DramController(const DramSpec& spec, const ControllerParams& params, ChannelTiming& timing,
                               std::uint32_t pc, PcStats stats, CompletionSink& sink)
    : params_(params),
      timing_(timing),
      pc_(pc),
      stats_(stats),
      sink_(sink),
      CL_(spec.timing.CL),
      CWL_(spec.timing.CWL),
      nBL_(spec.timing.burst_cycles),
      access_bytes_(spec.org.access_bytes()),
      spec_banks_per_group_(spec.org.banks_per_group),
      refresh_interval_(params.refresh == RefreshMode::PerBank
                            ? std::max<std::uint32_t>(1, spec.timing.refi_per_bank(spec.org.banks_per_pc()))
                            : spec.timing.REFI),
      trp_(spec.timing.RP),
      reads_(params.read_queue),
      writes_(params.write_queue),
      banks_(spec.org.banks_per_pc()),
      asked_(spec.org.banks_per_pc(), 0),
      refresh_due_(refresh_interval_),
      refresh_target_(kNoBank) {
  if (params.read_queue == 0 || params.write_queue == 0 || params.read_queue > 65535 || params.write_queue > 65535) {
    throw std::invalid_argument("DramController: queue depths must be 1 .. 65535");
  }
  check_refresh_timings(spec, params.refresh, "DramController");
}

void check_refresh_timings(const DramSpec& spec, RefreshMode refresh, const char* who) {
  const DramTimings& t = spec.timing;
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string(who) + ": " + what + ": refreshing would leave no time to serve requests");
  };
  const auto interval = [&](std::uint32_t rfc) {
    return min_refresh_interval(t.RP, rfc, t.RC, t.CL, t.CWL, t.burst_cycles);
  };
  if (refresh == RefreshMode::AllBank && t.REFI < interval(t.RFCab)) {
    fail("tREFI (" + std::to_string(t.REFI) + " cycles) is below tRP + tRFCab + tRC + CL|CWL + nBL (" +
         std::to_string(interval(t.RFCab)) + ")");
  }
  if (refresh == RefreshMode::PerBank && spec.org.banks_per_pc() != 0) {
    const std::uint32_t step = t.refi_per_bank(spec.org.banks_per_pc());
    if (step <= std::uint64_t{t.RRD_S} + t.RREFD) {
      fail("tREFI / banks (" + std::to_string(step) + " cycles) is not above tRRD_S + tRREFD (" +
           std::to_string(std::uint64_t{t.RRD_S} + t.RREFD) + ")");
    }
    const std::uint64_t each_bank = std::uint64_t{step} * spec.org.banks_per_pc();  // a bank's refresh interval
    if (each_bank < interval(t.RFCpb)) {
      fail("banks x (tREFI / banks) (" + std::to_string(each_bank) +
           " cycles) is below tRP + tRFCpb + tRC + CL|CWL + nBL (" + std::to_string(interval(t.RFCpb)) + ")");
    }
  }
}

void DramController::enqueue(const MemRequest& request, const DecodedAddress& at, Cycle now) {
  const BankCoord where = timing_.coord(pc_, at.sid, at.bank_group, at.bank);
  const std::size_t qi = request.write ? 1 : 0;
  if (!request.write) {
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      if (writes_.at(i).request.addr == request.addr) {
        const Cycle done = now + params_.write_forward_latency + params_.latency;
        ++stats_.reads_from_write_queue;
        stats_.read_latency.sample(static_cast<double>(done - request.arrival) * stats_.tck_ns);
        sink_.on_complete(request, done);
        return;
      }
    }
    stats_.read_queue.sample(static_cast<double>(reads_.size()));
    reads_.push({request, where, at.row, Kind::Hit});
  } else {
    stats_.write_queue.sample(static_cast<double>(writes_.size()));
    writes_.push({request, where, at.row, Kind::Hit});
  }
  Bank& bank = banks_[where.bank];
  ++bank.queued[qi];
  const bool hit = bank.open_row == at.row;
  if (hit) {
    ++bank.hits[qi];
    ++total_hits_[qi];
  }
  // Wake-up: the cycle already computed stays valid for what was queued before (only
  // this controller's own commands move it); the new request can only bring it forward.
  // An empty controller, a mode change or per-bank refresh start from `now`.
  if (held() == 1 || wants_writing(now) != writing_ || params_.refresh == RefreshMode::PerBank) {
    next_ = now;
    return;
  }
  if (request.write != writing_) return;                 // waits for the mode switch, which wakes itself
  if (params_.scheduler == SchedulerKind::Fcfs) return;  // only the head matters; it is older
  Cycle e;
  if (hit) {
    e = timing_.earliest(request.write ? DramCommand::WR : DramCommand::RD, where);
  } else if (bank.open_row == kClosed) {
    e = timing_.earliest(DramCommand::ACT, where);
  } else if (bank.hits[qi] == 0) {
    e = timing_.earliest(DramCommand::PRE, where);
  } else {
    return;  // waits behind the open row's hits, which are scheduled already
  }
  next_ = std::min(next_, std::max(now, e));
}

bool DramController::wants_writing(Cycle t) const {
  const std::size_t rq = reads_.size();
  const std::size_t wq = writes_.size();
  const bool starving = rq > 0 && t >= reads_.at(0).request.arrival + params_.read_starvation;
  if (!writing_) return wq > 0 && !starving && (wq >= params_.write_high || rq == 0);
  return !(wq == 0 || starving || (rq > 0 && wq <= params_.write_low));
}

void DramController::update_mode(Cycle t) {
  writing_ = wants_writing(t);
}

void DramController::open_row(std::uint32_t b, std::uint32_t row) {
  Bank& bank = banks_[b];
  total_hits_[0] -= bank.hits[0];
  total_hits_[1] -= bank.hits[1];
  bank.open_row = row;
  bank.hits[0] = bank.hits[1] = 0;
  if (bank.queued[0] > 0) {
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      const Entry& e = reads_.at(i);
      if (e.where.bank == b && e.row == row) ++bank.hits[0];
    }
  }
  if (bank.queued[1] > 0) {
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      const Entry& e = writes_.at(i);
      if (e.where.bank == b && e.row == row) ++bank.hits[1];
    }
  }
  total_hits_[0] += bank.hits[0];
  total_hits_[1] += bank.hits[1];
}

void DramController::close_bank(std::uint32_t b) {
  Bank& bank = banks_[b];
  total_hits_[0] -= bank.hits[0];
  total_hits_[1] -= bank.hits[1];
  bank.open_row = kClosed;
  bank.hits[0] = bank.hits[1] = 0;
}

void DramController::close_all() {
  for (std::uint32_t b = 0; b < banks_.size(); ++b) close_bank(b);
}

bool DramController::refresh_allbank(Cycle t, Cycle& next) {
  if (owed_ <= params_.refresh_postpone && total_hits_[writing_ ? 1 : 0] > 0) return false;  // postponed
  const BankCoord any{pc_, 0, 0};
  const bool any_open = std::any_of(banks_.begin(), banks_.end(), [](const Bank& b) { return b.open_row != kClosed; });
  const DramCommand cmd = any_open ? DramCommand::PREA : DramCommand::REFab;
  const Cycle e = timing_.earliest(cmd, any);
  if (e > t) {
    next = std::min(next, e);
    return true;
  }
  timing_.issue(cmd, any, t);
  if (any_open) {
    ++stats_.pre;
    close_all();
  } else {
    ++stats_.refab;
    --owed_;
  }
  next = std::min(next, t + 1);
  return true;
}

std::uint32_t DramController::choose_refresh_target() {
  const auto n = static_cast<std::uint32_t>(banks_.size());
  if (refreshed_count_ == n) {
    for (Bank& bank : banks_) bank.refreshed = false;
    refreshed_count_ = 0;
  }
  std::uint32_t fallback = kNoBank;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t b = (refresh_rr_ + i) % n;
    const Bank& bank = banks_[b];
    if (bank.refreshed) continue;
    if (bank.queued[0] + bank.queued[1] == 0) return b;
    if (fallback == kNoBank) fallback = b;
  }
  return fallback;
}

void DramController::refreshed_bank(std::uint32_t b) {
  const auto n = static_cast<std::uint32_t>(banks_.size());
  if (refreshed_count_ == n) {
    for (Bank& bank : banks_) bank.refreshed = false;
    refreshed_count_ = 0;
  }
  if (!banks_[b].refreshed) {
    banks_[b].refreshed = true;
    ++refreshed_count_;
  }
  refresh_rr_ = (b + 1) % n;
}

bool DramController::refresh_perbank(Cycle t, Cycle& next, bool& row_bus_used, std::uint32_t& blocked_bank) {
  if (refresh_target_ == kNoBank) refresh_target_ = choose_refresh_target();
  const std::uint32_t b = refresh_target_;
  if (owed_ <= params_.refresh_postpone && banks_[b].hits[writing_ ? 1 : 0] > 0) return false;
  blocked_bank = b;
  const BankCoord where = bank_coord(b);
  const bool open = banks_[b].open_row != kClosed;
  const DramCommand cmd = open ? DramCommand::PRE : DramCommand::REFpb;
  const Cycle e = timing_.earliest(cmd, where);
  if (e > t) {
    next = std::min(next, e);
    return false;
  }
  timing_.issue(cmd, where, t);
  row_bus_used = true;
  if (open) {
    ++stats_.pre;
    close_bank(b);
  } else {
    ++stats_.refpb;
    --owed_;
    refreshed_bank(b);
    refresh_target_ = kNoBank;
  }
  next = std::min(next, t + 1);
  return true;
}

void DramController::serve(Queue& q, std::size_t position, bool auto_precharge, Cycle t) {
  const Entry e = q.at(position);
  const bool write = e.request.write;
  const std::size_t qi = write ? 1 : 0;
  const DramCommand cmd = write ? (auto_precharge ? DramCommand::WRA : DramCommand::WR)
                                : (auto_precharge ? DramCommand::RDA : DramCommand::RD);
  timing_.issue(cmd, e.where, t);
  Bank& bank = banks_[e.where.bank];
  --bank.hits[qi];
  --total_hits_[qi];
  --bank.queued[qi];
  if (auto_precharge) close_bank(e.where.bank);
  Cycle done;
  if (write) {
    ++stats_.wr;
    stats_.bytes_written += access_bytes_;
    done = t + CWL_ + nBL_ + params_.latency;
  } else {
    ++stats_.rd;
    stats_.bytes_read += access_bytes_;
    done = t + CL_ + nBL_ + params_.latency;
    stats_.read_latency.sample(static_cast<double>(done - e.request.arrival) * stats_.tck_ns);
  }
  stats_.busy_cycles += nBL_;
  switch (e.kind) {
    case Kind::Hit:
      ++stats_.row_hits;
      break;
    case Kind::Miss:
      ++stats_.row_misses;
      break;
    case Kind::Conflict:
      ++stats_.row_conflicts;
      break;
  }
  q.erase(position);
  sink_.on_complete(e.request, done);
}

Cycle DramController::next_from_banks(std::uint32_t blocked_bank) const {
  const std::size_t qi = writing_ ? 1 : 0;
  const DramCommand column_cmd = writing_ ? DramCommand::WR : DramCommand::RD;
  Cycle next = kNever;
  if (params_.scheduler == SchedulerKind::Fcfs) {
    const Queue& q = writing_ ? writes_ : reads_;
    if (q.empty()) return next;
    const Entry& e = q.at(0);
    if (e.where.bank == blocked_bank) return next;
    const Bank& bank = banks_[e.where.bank];
    const DramCommand cmd = bank.open_row == e.row     ? column_cmd
                            : bank.open_row == kClosed ? DramCommand::ACT
                                                       : DramCommand::PRE;
    return timing_.earliest(cmd, e.where);
  }
  // A bank's answer is never below its command's floor: skip the question when the floor
  // already lies at or beyond the best answer so far.
  const Cycle col_floor = timing_.floor(column_cmd, pc_);
  const Cycle act_floor = timing_.floor(DramCommand::ACT, pc_);
  const Cycle pre_floor = timing_.floor(DramCommand::PRE, pc_);
  for (std::uint32_t b = 0; b < banks_.size(); ++b) {
    const Bank& bank = banks_[b];
    if (bank.queued[qi] == 0 || b == blocked_bank) continue;
    const BankCoord where = bank_coord(b);
    if (bank.hits[qi] > 0 && col_floor < next) next = std::min(next, timing_.earliest(column_cmd, where));
    if (bank.queued[qi] > bank.hits[qi]) {
      if (bank.open_row == kClosed) {
        if (act_floor < next) next = std::min(next, timing_.earliest(DramCommand::ACT, where));
      } else if (bank.hits[qi] == 0) {
        if (pre_floor < next) next = std::min(next, timing_.earliest(DramCommand::PRE, where));
      }
    }
  }
  return next;
}

void DramController::step(Cycle t) {
  if (params_.refresh != RefreshMode::Off && refresh_due_ <= t) {
    const Cycle k = (t - refresh_due_) / refresh_interval_ + 1;
    owed_ += static_cast<std::uint32_t>(k);
    refresh_due_ += k * refresh_interval_;
  }
  update_mode(t);

  Cycle next = kNever;
  bool row_used = false;
  std::uint32_t blocked_bank = kNoBank;
  if (owed_ > 0) {
    if (params_.refresh == RefreshMode::AllBank) {
      if (refresh_allbank(t, next)) {
        next_ = std::max(next, t + 1);
        return;
      }
    } else if (params_.refresh == RefreshMode::PerBank) {
      refresh_perbank(t, next, row_used, blocked_bank);
    }
  }

  Queue& q = writing_ ? writes_ : reads_;
  const std::size_t qi = writing_ ? 1 : 0;
  const bool frfcfs = params_.scheduler == SchedulerKind::FrFcfs;
  const std::size_t n = frfcfs ? q.size() : std::min<std::size_t>(q.size(), 1);
  const DramCommand column_cmd = writing_ ? DramCommand::WR : DramCommand::RD;

  // Decision: the oldest ready row hit takes the column bus, the oldest ready ACT/PRE the
  // row bus. Stop once both are chosen, or once the column is chosen and every entry that
  // could want a row command has been seen.
  const std::size_t non_hits = q.size() - total_hits_[qi];
  std::size_t non_hits_seen = 0;
  std::size_t col_pos = kNone;
  std::size_t row_pos = kNone;
  DramCommand row_cmd = DramCommand::ACT;
  // Whole command classes that cannot issue at t (bus busy, tFAW) are not asked per bank;
  // a bank already found not ready is not asked again for the next entry of that bank.
  bool col_possible = timing_.floor(column_cmd, pc_) <= t;
  const bool act_possible = timing_.floor(DramCommand::ACT, pc_) <= t;
  const bool pre_possible = timing_.floor(DramCommand::PRE, pc_) <= t;
  bool row_possible = !row_used && (act_possible || pre_possible);
  ++stamp_;
  for (std::size_t i = 0; i < n; ++i) {
    const Entry& e = q.at(i);
    const std::uint32_t b = e.where.bank;
    const Bank& bank = banks_[b];
    const bool hit = bank.open_row == e.row;
    if (!hit) ++non_hits_seen;
    if (b != blocked_bank && asked_[b] != stamp_) {
      if (hit) {
        if (col_possible) {
          if (timing_.earliest(column_cmd, e.where) <= t) {
            col_pos = i;
            col_possible = false;
          } else {
            asked_[b] = stamp_;
          }
        }
      } else if (row_possible && (!frfcfs || bank.open_row == kClosed || bank.hits[qi] == 0)) {
        const DramCommand cmd = bank.open_row == kClosed ? DramCommand::ACT : DramCommand::PRE;
        if ((cmd == DramCommand::ACT ? act_possible : pre_possible) && timing_.earliest(cmd, e.where) <= t) {
          row_pos = i;
          row_cmd = cmd;
          row_possible = false;
        } else {
          asked_[b] = stamp_;
        }
      }
    }
    if (col_pos != kNone && (row_pos != kNone || !row_possible || non_hits_seen == non_hits)) break;
    if (!col_possible && !row_possible && col_pos == kNone && row_pos == kNone) break;
  }

  // Row command first: it never touches the column candidate's bank (that bank is open
  // with a hit; the row command is an ACT of a closed bank or a PRE of a bank with none).
  if (row_pos != kNone) {
    Entry& e = q.at(row_pos);
    timing_.issue(row_cmd, e.where, t);
    if (row_cmd == DramCommand::ACT) {
      ++stats_.act;
      if (e.kind != Kind::Conflict) e.kind = Kind::Miss;
      open_row(e.where.bank, e.row);
    } else {
      ++stats_.pre;
      e.kind = Kind::Conflict;
      close_bank(e.where.bank);
    }
  }
  if (col_pos != kNone) {
    const Entry& e = q.at(col_pos);
    if (timing_.can_issue(column_cmd, e.where, t)) {
      const Bank& bank = banks_[e.where.bank];
      const bool close = params_.page_policy == PagePolicy::Closed ||
                         (params_.page_policy == PagePolicy::Adaptive && bank.hits[0] + bank.hits[1] <= 1);
      serve(q, col_pos, close, t);
    }
  }

  if (held() > 0) {
    update_mode(t);  // serving may have emptied or drained a queue
    next = std::min(next, next_from_banks(blocked_bank));
    if (params_.refresh != RefreshMode::Off) next = std::min(next, refresh_due_);
    if (writing_ && !reads_.empty()) {
      const Cycle starve = reads_.at(0).request.arrival + params_.read_starvation;
      if (starve > t) next = std::min(next, starve);
    }
    if (next == kNever) {
      throw std::logic_error("DramController: requests held but no command can ever issue (scheduler bug)");
    }
  }
  next_ = std::max(next, t + 1);
}

void DramController::catch_up(Cycle now) {
  if (params_.refresh == RefreshMode::Off || refresh_due_ > now) return;
  const Cycle k = (now - refresh_due_) / refresh_interval_ + 1;
  const Cycle last_due = refresh_due_ + (k - 1) * refresh_interval_;
  const Cycle bulk = owed_ + k - 1;  // every owed refresh but the last, counted without simulation
  refresh_due_ = last_due + refresh_interval_;
  owed_ = 1;
  const auto nbanks = static_cast<std::uint32_t>(banks_.size());
  if (params_.refresh == RefreshMode::AllBank) {
    stats_.refab += bulk;
    if (bulk > 0) close_all();
  } else {
    // No request is queued, so the target choice is plain round robin.
    stats_.refpb += bulk;
    if (bulk >= nbanks) close_all();  // every bank was refreshed at least once
    for (Cycle i = 0; i < bulk % nbanks; ++i) {
      const std::uint32_t b = choose_refresh_target();
      close_bank(b);
      refreshed_bank(b);
    }
    refresh_target_ = kNoBank;
  }
  // The last one is issued at its due time (or as soon after as the timing allows), as an
  // idle controller would have; if that is still ahead of `now`, step() will issue it.
  Cycle at = last_due;
  if (params_.refresh == RefreshMode::AllBank) {
    const BankCoord any{pc_, 0, 0};
    if (std::any_of(banks_.begin(), banks_.end(), [](const Bank& b) { return b.open_row != kClosed; })) {
      at = std::max(at, timing_.earliest_in_pc(DramCommand::PREA, any));
      if (at > now) return;
      timing_.issue(DramCommand::PREA, any, at);
      ++stats_.pre;
      close_all();
    }
    at = std::max(at, timing_.earliest_in_pc(DramCommand::REFab, any));
    if (at > now) return;
    timing_.issue(DramCommand::REFab, any, at);
    ++stats_.refab;
  } else {
    const std::uint32_t b = choose_refresh_target();
    const BankCoord where = bank_coord(b);
    if (banks_[b].open_row != kClosed) {
      at = std::max(at, timing_.earliest_in_pc(DramCommand::PRE, where));
      if (at > now) return;
      timing_.issue(DramCommand::PRE, where, at);
      ++stats_.pre;
      close_bank(b);
    }
    at = std::max(at, timing_.earliest_in_pc(DramCommand::REFpb, where));
    if (at > now) return;
    timing_.issue(DramCommand::REFpb, where, at);
    ++stats_.refpb;
    refreshed_bank(b);
  }
  owed_ = 0;
}

}  // namespace sohusim::memory
