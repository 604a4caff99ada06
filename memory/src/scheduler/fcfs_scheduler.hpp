#pragma once
// FcfsScheduler: only the oldest request of the direction served is considered. It gets
// the column bus if it hits the open row and its RD/WR is ready, else the row bus for the
// ACT (bank closed) or PRE (another row open) it needs, if ready. A request arriving never
// brings the next cycle forward: the head is older.
#include <cstdint>

#include "scheduler/command_scheduler.hpp"

namespace sohusim::memory {

class FcfsScheduler final : public CommandScheduler {
 public:
  FcfsScheduler(ChannelTiming& timing, std::uint32_t pc) : timing_(timing), pc_(pc) {}

  CommandChoice choose(const ControllerState& state, Cycle t, std::uint32_t blocked_bank, bool row_bus_used) override;
  Cycle next(const ControllerState& state, std::uint32_t blocked_bank) const override;
  Cycle wake(const ControllerState&, const BankCoord&, bool, bool, Cycle) const override { return kNever; }

 private:
  ChannelTiming& timing_;
  std::uint32_t pc_;
};

}  // namespace sohusim::memory
