// FastDram's queues: FCFS serving in arrival order where FR-FCFS overlaps, and
// back-pressure, a refused owner woken when its queue has room again.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "fast_dram_harness.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

using fastdramtest::Fixture;

TEST(FastDram, FcfsServesInArrivalOrder) {
  // Two misses to two banks: FR-FCFS overlaps the second ACT with the first access; FCFS
  // activates the second only after the first's column command.
  const auto second = [](const char* scheduler) {
    Fixture f({"hbm.controller.refresh=off", std::string("hbm.controller.scheduler=") + scheduler});
    f.mem->enqueue(MemRequest{f.at(0, 0, 1), false, 1, 0});
    f.mem->enqueue(MemRequest{f.at(1, 0, 1), false, 2, 0});
    f.run();
    return f.done[2] - f.done[1];
  };
  const Fixture probe;
  EXPECT_EQ(second("frfcfs"), static_cast<Cycle>(probe.mem->params().calibration.act_gap + 0.999));
  EXPECT_EQ(second("fcfs"), probe.t().RCDRD);
}

TEST(FastDram, RefusedOwnerIsWokenWhenTheQueueHasRoom) {
  Fixture f;
  const std::uint32_t depth = f.mem->params().controller.read_queue;
  std::uint32_t k = 0;
  for (; f.mem->can_accept(f.at(k % 4, 0, 1, k / 4 % 32), false); ++k) {
    f.mem->enqueue(MemRequest{f.at(k % 4, 0, 1 + k / 128, k / 4 % 32), false, k, 0});
  }
  EXPECT_EQ(k, depth);
  const Cycle wake = f.mem->next_event();
  EXPECT_GT(wake, 0u);
  f.mem->advance_to(wake);
  EXPECT_TRUE(f.mem->can_accept(f.at(0, 0, 1), false));
  f.run();
  EXPECT_EQ(f.done.size(), depth);
}

}  // namespace
}  // namespace sohusim::memory
