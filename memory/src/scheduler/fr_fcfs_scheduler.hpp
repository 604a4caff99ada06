#pragma once
// FrFcfsScheduler: first-ready, first-come first-served. The oldest request whose column
// command is ready and whose row is open (a row hit) gets the column bus; the oldest request
// whose ACT (bank closed) or PRE (another row open) is ready gets the row bus. A PRE is not
// issued for a conflict while queued requests still hit the open row, so hits are served
// first.
//
// Cost: choose() walks the queue in age order only until both buses have their command,
// asking the timing engine once per bank at most (a bank found not ready is not asked again
// for its next entry) and not at all for a command class the pseudo-channel's floor rules
// out (bus busy, tFAW). next() is computed per bank, O(banks), not O(queue depth).
#include <cstdint>
#include <vector>

#include "scheduler/command_scheduler.hpp"

namespace sohusim::memory {

class FrFcfsScheduler final : public CommandScheduler {
 public:
  FrFcfsScheduler(ChannelTiming& timing, std::uint32_t pc, std::uint32_t banks_per_group, std::uint32_t banks)
      : timing_(timing), pc_(pc), banks_per_group_(banks_per_group), asked_(banks, 0) {}

  CommandChoice choose(const ControllerState& state, Cycle t, std::uint32_t blocked_bank, bool row_bus_used) override;
  Cycle next(const ControllerState& state, std::uint32_t blocked_bank) const override;
  Cycle wake(const ControllerState& state, const BankCoord& where, bool write, bool hit, Cycle now) const override;

 private:
  ChannelTiming& timing_;
  std::uint32_t pc_;
  std::uint32_t banks_per_group_;
  std::vector<std::uint64_t> asked_;  // per bank: the choice (stamp_) that found it not ready
  std::uint64_t stamp_ = 0;
};

}  // namespace sohusim::memory
