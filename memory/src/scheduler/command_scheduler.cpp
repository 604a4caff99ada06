#include "scheduler/command_scheduler.hpp"

#include "scheduler/fcfs_scheduler.hpp"
#include "scheduler/fr_fcfs_scheduler.hpp"

namespace sohusim::memory {

std::unique_ptr<CommandScheduler> make_scheduler(SchedulerKind kind, ChannelTiming& timing, std::uint32_t pc,
                                                 std::uint32_t banks_per_group, std::uint32_t banks) {
  if (kind == SchedulerKind::Fcfs) return std::make_unique<FcfsScheduler>(timing, pc);
  return std::make_unique<FrFcfsScheduler>(timing, pc, banks_per_group, banks);
}

}  // namespace sohusim::memory
