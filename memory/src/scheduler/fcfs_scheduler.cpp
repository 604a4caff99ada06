#include "scheduler/fcfs_scheduler.hpp"

#include "sohusim/memory/channel_timing.hpp"

namespace sohusim::memory {

CommandChoice FcfsScheduler::choose(const ControllerState& state, Cycle t, std::uint32_t blocked_bank,
                                    bool row_bus_used) {
  CommandChoice choice;
  const RequestQueue& q = state.queue(state.writing);
  if (q.empty()) return choice;
  const QueuedRequest& e = q.at(0);
  if (e.where.bank == blocked_bank) return choice;
  const BankState& bank = state.banks[e.where.bank];
  if (bank.open_row == e.row) {
    const DramCommand column_cmd = state.writing ? DramCommand::WR : DramCommand::RD;
    if (timing_.floor(column_cmd, pc_) <= t && timing_.earliest(column_cmd, e.where) <= t) choice.column = 0;
  } else if (!row_bus_used) {
    const DramCommand cmd = bank.open_row == BankState::kClosed ? DramCommand::ACT : DramCommand::PRE;
    if (timing_.floor(cmd, pc_) <= t && timing_.earliest(cmd, e.where) <= t) {
      choice.row = 0;
      choice.row_command = cmd;
    }
  }
  return choice;
}

Cycle FcfsScheduler::next(const ControllerState& state, std::uint32_t blocked_bank) const {
  const RequestQueue& q = state.queue(state.writing);
  if (q.empty()) return kNever;
  const QueuedRequest& e = q.at(0);
  if (e.where.bank == blocked_bank) return kNever;
  const BankState& bank = state.banks[e.where.bank];
  const DramCommand cmd = bank.open_row == e.row                ? (state.writing ? DramCommand::WR : DramCommand::RD)
                          : bank.open_row == BankState::kClosed ? DramCommand::ACT
                                                                : DramCommand::PRE;
  return timing_.earliest(cmd, e.where);
}

}  // namespace sohusim::memory
