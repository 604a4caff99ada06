#include "scheduler/fr_fcfs_scheduler.hpp"

#include <algorithm>

#include "sohusim/memory/channel_timing.hpp"

namespace sohusim::memory {

CommandChoice FrFcfsScheduler::choose(const ControllerState& state, Cycle t, std::uint32_t blocked_bank,
                                      bool row_bus_used) {
  const RequestQueue& q = state.queue(state.writing);
  const std::size_t qi = state.served();
  const DramCommand column_cmd = state.writing ? DramCommand::WR : DramCommand::RD;

  // The oldest ready row hit takes the column bus, the oldest ready ACT/PRE the row bus.
  // Stop once both are chosen, or once the column is chosen and every entry that could want
  // a row command has been seen.
  const std::size_t non_hits = q.size() - state.total_hits[qi];
  std::size_t non_hits_seen = 0;
  CommandChoice choice;
  // Whole command classes that cannot issue at t (bus busy, tFAW) are not asked per bank;
  // a bank already found not ready is not asked again for the next entry of that bank.
  bool col_possible = timing_.floor(column_cmd, pc_) <= t;
  const bool act_possible = timing_.floor(DramCommand::ACT, pc_) <= t;
  const bool pre_possible = timing_.floor(DramCommand::PRE, pc_) <= t;
  bool row_possible = !row_bus_used && (act_possible || pre_possible);
  ++stamp_;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const QueuedRequest& e = q.at(i);
    const std::uint32_t b = e.where.bank;
    const BankState& bank = state.banks[b];
    const bool hit = bank.open_row == e.row;
    if (!hit) ++non_hits_seen;
    if (b != blocked_bank && asked_[b] != stamp_) {
      if (hit) {
        if (col_possible) {
          if (timing_.earliest(column_cmd, e.where) <= t) {
            choice.column = i;
            col_possible = false;
          } else {
            asked_[b] = stamp_;
          }
        }
      } else if (row_possible && (bank.open_row == BankState::kClosed || bank.hits[qi] == 0)) {
        // A PRE waits while the open row still has hits queued.
        const DramCommand cmd = bank.open_row == BankState::kClosed ? DramCommand::ACT : DramCommand::PRE;
        if ((cmd == DramCommand::ACT ? act_possible : pre_possible) && timing_.earliest(cmd, e.where) <= t) {
          choice.row = i;
          choice.row_command = cmd;
          row_possible = false;
        } else {
          asked_[b] = stamp_;
        }
      }
    }
    if (choice.column != CommandChoice::kNone &&
        (choice.row != CommandChoice::kNone || !row_possible || non_hits_seen == non_hits)) {
      break;
    }
    if (!col_possible && !row_possible && choice.column == CommandChoice::kNone && choice.row == CommandChoice::kNone) {
      break;
    }
  }
  return choice;
}

Cycle FrFcfsScheduler::next(const ControllerState& state, std::uint32_t blocked_bank) const {
  const std::size_t qi = state.served();
  const DramCommand column_cmd = state.writing ? DramCommand::WR : DramCommand::RD;
  Cycle next = kNever;
  // A bank's answer is never below its command's floor: skip the question when the floor
  // already lies at or beyond the best answer so far.
  const Cycle col_floor = timing_.floor(column_cmd, pc_);
  const Cycle act_floor = timing_.floor(DramCommand::ACT, pc_);
  const Cycle pre_floor = timing_.floor(DramCommand::PRE, pc_);
  for (std::uint32_t b = 0; b < state.banks.size(); ++b) {
    const BankState& bank = state.banks[b];
    if (bank.queued[qi] == 0 || b == blocked_bank) continue;
    const BankCoord where{pc_, b / banks_per_group_, b};
    if (bank.hits[qi] > 0 && col_floor < next) next = std::min(next, timing_.earliest(column_cmd, where));
    if (bank.queued[qi] > bank.hits[qi]) {
      if (bank.open_row == BankState::kClosed) {
        if (act_floor < next) next = std::min(next, timing_.earliest(DramCommand::ACT, where));
      } else if (bank.hits[qi] == 0) {
        if (pre_floor < next) next = std::min(next, timing_.earliest(DramCommand::PRE, where));
      }
    }
  }
  return next;
}

Cycle FrFcfsScheduler::wake(const ControllerState& state, const BankCoord& where, bool write, bool hit,
                            Cycle now) const {
  const BankState& bank = state.banks[where.bank];
  Cycle e;
  if (hit) {
    e = timing_.earliest(write ? DramCommand::WR : DramCommand::RD, where);
  } else if (bank.open_row == BankState::kClosed) {
    e = timing_.earliest(DramCommand::ACT, where);
  } else if (bank.hits[write ? 1 : 0] == 0) {
    e = timing_.earliest(DramCommand::PRE, where);
  } else {
    return kNever;  // waits behind the open row's hits, which are scheduled already
  }
  return std::max(now, e);
}

}  // namespace sohusim::memory
