#include "sohusim/memory/dram_controller.hpp"

#include <algorithm>
#include <stdexcept>

#include "refresh/refresh.hpp"
#include "scheduler/command_scheduler.hpp"
#include "scheduler/read_write_mode.hpp"

namespace sohusim::memory {

namespace {
counters::DistributionSpec occupancy_buckets(std::uint32_t depth) {
  return counters::DistributionSpec::linear(0.0, static_cast<double>(depth) + 1.0, std::min(depth + 1, 64u));
}
}  // namespace

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
      state_(params.read_queue, params.write_queue, spec.org.banks_per_pc()),
      mode_(std::make_unique<ReadWriteMode>(params)),
      scheduler_(make_scheduler(params.scheduler, timing, pc, spec.org.banks_per_group, spec.org.banks_per_pc())),
      refresh_(make_refresh(params.refresh, spec, params.refresh_postpone, timing, pc, stats_)) {
  if (params.read_queue == 0 || params.write_queue == 0 || params.read_queue > 65535 || params.write_queue > 65535) {
    throw std::invalid_argument("DramController: queue depths must be 1 .. 65535");
  }
  check_refresh_timings(spec, params.refresh, "DramController");
}

DramController::DramController(DramController&&) noexcept = default;
DramController::~DramController() = default;

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
  if (!request.write) {
    for (std::size_t i = 0; i < state_.writes.size(); ++i) {
      if (state_.writes.at(i).request.addr == request.addr) {
        const Cycle done = now + params_.write_forward_latency + params_.latency;
        ++stats_.reads_from_write_queue;
        stats_.read_latency.sample(static_cast<double>(done - request.arrival) * stats_.tck_ns);
        sink_.on_complete(request, done);
        return;
      }
    }
    stats_.read_queue.sample(static_cast<double>(state_.reads.size()));
  } else {
    stats_.write_queue.sample(static_cast<double>(state_.writes.size()));
  }
  const bool hit = state_.push({request, where, at.row, RowKind::Hit});
  // Wake-up: the cycle already computed stays valid for what was queued before (only
  // this controller's own commands move it); the new request can only bring it forward.
  // An empty controller, a mode change or a refresh that chooses by the queues start
  // from `now`.
  if (held() == 1 || mode_->wants_writing(state_, now) != state_.writing || refresh_->wakes_on_enqueue()) {
    next_ = now;
    return;
  }
  if (request.write != state_.writing) return;  // waits for the mode switch, which wakes itself
  next_ = std::min(next_, scheduler_->wake(state_, where, request.write, hit, now));
}

void DramController::serve(RequestQueue& q, std::size_t position, bool auto_precharge, Cycle t) {
  const QueuedRequest e = q.at(position);
  const bool write = e.request.write;
  const std::size_t qi = write ? 1 : 0;
  const DramCommand cmd = write ? (auto_precharge ? DramCommand::WRA : DramCommand::WR)
                                : (auto_precharge ? DramCommand::RDA : DramCommand::RD);
  timing_.issue(cmd, e.where, t);
  BankState& bank = state_.banks[e.where.bank];
  --bank.hits[qi];
  --state_.total_hits[qi];
  --bank.queued[qi];
  if (auto_precharge) state_.close_bank(e.where.bank);
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
    case RowKind::Hit:
      ++stats_.row_hits;
      break;
    case RowKind::Miss:
      ++stats_.row_misses;
      break;
    case RowKind::Conflict:
      ++stats_.row_conflicts;
      break;
  }
  q.erase(position);
  sink_.on_complete(e.request, done);
}

void DramController::step(Cycle t) {
  refresh_->account(t);
  mode_->update(state_, t);

  Cycle next = kNever;
  RefreshHold hold;
  if (refresh_->owed() > 0) {
    hold = refresh_->step(state_, t, next);
    if (hold.whole_pc) {
      next_ = std::max(next, t + 1);
      return;
    }
  }

  const CommandChoice choice = scheduler_->choose(state_, t, hold.blocked_bank, hold.row_bus_used);
  RequestQueue& q = state_.queue(state_.writing);
  // Row command first: it never touches the column candidate's bank (that bank is open
  // with a hit; the row command is an ACT of a closed bank or a PRE of a bank with none).
  if (choice.row != CommandChoice::kNone) {
    QueuedRequest& e = q.at(choice.row);
    timing_.issue(choice.row_command, e.where, t);
    if (choice.row_command == DramCommand::ACT) {
      ++stats_.act;
      if (e.kind != RowKind::Conflict) e.kind = RowKind::Miss;
      state_.open_row(e.where.bank, e.row);
    } else {
      ++stats_.pre;
      e.kind = RowKind::Conflict;
      state_.close_bank(e.where.bank);
    }
  }
  if (choice.column != CommandChoice::kNone) {
    const QueuedRequest& e = q.at(choice.column);
    if (timing_.can_issue(state_.writing ? DramCommand::WR : DramCommand::RD, e.where, t)) {
      const BankState& bank = state_.banks[e.where.bank];
      const bool close = params_.page_policy == PagePolicy::Closed ||
                         (params_.page_policy == PagePolicy::Adaptive && bank.hits[0] + bank.hits[1] <= 1);
      serve(q, choice.column, close, t);
    }
  }

  if (held() > 0) {
    mode_->update(state_, t);  // serving may have emptied or drained a queue
    next = std::min(next, scheduler_->next(state_, hold.blocked_bank));
    next = std::min(next, refresh_->due());
    next = std::min(next, mode_->next_switch(state_, t));
    if (next == kNever) {
      throw std::logic_error("DramController: requests held but no command can ever issue (scheduler bug)");
    }
  }
  next_ = std::max(next, t + 1);
}

void DramController::catch_up(Cycle now) {
  refresh_->catch_up(state_, now);
}

}  // namespace sohusim::memory
