#pragma once
// CommandScheduler: which queued requests of the direction served get the two command
// buses of a step — the column bus (the RD or WR of a row hit) and the row bus (the ACT of
// a closed bank, the PRE of another row) — and when that choice can next change. One class
// per hbm.controller.scheduler: FrFcfsScheduler (row hits first, then oldest) and
// FcfsScheduler (the oldest request only).
//
// Use (DramController): choose() at each step; the controller issues the row command, then
// the column command (if the row command left it legal), and applies the page policy.
// next() is the earliest cycle a queued request can issue its next command, the cycle the
// controller sleeps until; wake() says whether a request just queued may bring it forward.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "sohusim/memory/controller_params.hpp"
#include "sohusim/memory/controller_state.hpp"
#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

class ChannelTiming;

/// The queue positions (in the queue of the direction served) that take the buses.
struct CommandChoice {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t row = kNone;
  DramCommand row_command = DramCommand::ACT;  // ACT or PRE
  std::size_t column = kNone;
};

class CommandScheduler {
 public:
  virtual ~CommandScheduler() = default;

  /// The commands that may issue at t. A refresh may hold `blocked_bank` and may have taken
  /// the row bus (`row_bus_used`).
  virtual CommandChoice choose(const ControllerState& state, Cycle t, std::uint32_t blocked_bank,
                               bool row_bus_used) = 0;
  /// The earliest cycle a queued request of the direction served can issue its next
  /// command; kNever if none can.
  virtual Cycle next(const ControllerState& state, std::uint32_t blocked_bank) const = 0;
  /// For a request just queued at `where` in the direction served (`hit`: it hits the open
  /// row): the earliest cycle its next command may issue, not before `now`, if that may
  /// come before what the controller scheduled already; kNever if it cannot.
  virtual Cycle wake(const ControllerState& state, const BankCoord& where, bool write, bool hit, Cycle now) const = 0;
};

/// The scheduler of pseudo-channel `pc` of a channel, whose banks (`banks` per
/// pseudo-channel) are numbered group by group.
std::unique_ptr<CommandScheduler> make_scheduler(SchedulerKind kind, ChannelTiming& timing, std::uint32_t pc,
                                                 std::uint32_t banks_per_group, std::uint32_t banks);

}  // namespace sohusim::memory
