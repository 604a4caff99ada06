// FastDram's row and bank terms, to the cycle: an unloaded miss and hit, the adaptive page
// policy, a conflict waiting for its bank to precharge, activations spaced by the ACT gap,
// and hits of one bank following each other by tCCD_L.
#include <algorithm>
#include <cstdint>

#include <gtest/gtest.h>

#include "fast_dram_harness.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

using fastdramtest::Fixture;

TEST(FastDram, UnloadedMissThenHitTakeTheirCommandLatencies) {
  Fixture f({"hbm.controller.refresh=off", "hbm.controller.page_policy=open"});
  f.mem->enqueue(MemRequest{f.at(0, 0, 5), false, 1, 0});
  f.run();
  const DramTimings& t = f.t();
  // ACT at 0, RD at tRCD, the data CL later for nBL cycles, then the controller's latency.
  EXPECT_EQ(f.done[1], t.RCDRD + t.CL + t.burst_cycles + f.latency());
  const Cycle start = f.mem->now();
  f.mem->enqueue(MemRequest{f.at(0, 0, 5, 1), false, 2, 0});
  f.run();
  EXPECT_EQ(f.done[2] - start, t.CL + t.burst_cycles + f.latency());
  EXPECT_EQ(f.stat("row_hits"), 1);
  EXPECT_EQ(f.stat("row_misses"), 1);
  EXPECT_EQ(f.stat("act"), 1);
}

TEST(FastDram, AdaptivePageClosesARowNothingQueuedHits) {
  Fixture f;  // adaptive is the default
  f.mem->enqueue(MemRequest{f.at(0, 0, 5), false, 1, 0});
  f.mem->enqueue(MemRequest{f.at(0, 0, 5, 1), false, 2, 0});  // queued with the first: a hit
  f.run();
  f.mem->enqueue(MemRequest{f.at(0, 0, 5, 2), false, 3, 0});  // after the last column: closed
  f.run();
  EXPECT_EQ(f.stat("row_hits"), 1);
  EXPECT_EQ(f.stat("row_misses"), 2);
}

TEST(FastDram, AConflictWaitsForItsBankToPrecharge) {
  Fixture f({"hbm.controller.refresh=off", "hbm.controller.page_policy=open"});
  f.mem->enqueue(MemRequest{f.at(0, 0, 5), false, 1, 0});
  f.mem->enqueue(MemRequest{f.at(0, 0, 6), false, 2, 0});
  f.run();
  const DramTimings& t = f.t();
  // PRE after tRAS (the later of tRAS and the first read's tRTP), tRP, and the ACT no
  // sooner than tRC after the first: tRC = tRAS + tRP here.
  const Cycle act = std::max<Cycle>(t.RAS + t.RP, t.RC);
  EXPECT_EQ(f.done[2], act + t.RCDRD + t.CL + t.burst_cycles + f.latency());
  EXPECT_EQ(f.stat("row_conflicts"), 1);
  EXPECT_EQ(f.stat("pre"), 1);
}

TEST(FastDram, ActivationsAreSpacedByTheActGap) {
  Fixture f({"hbm.controller.refresh=off", "hbm.fast.act_gap=6"});
  // 16 misses in 16 banks, all at cycle 0: the k-th ACT at 6 k, so the last read's data
  // follows 90 cycles after the first's.
  for (std::uint32_t k = 0; k < 16; ++k) f.mem->enqueue(MemRequest{f.at(k / 4, k % 4, 1), false, k, 0});
  f.run();
  EXPECT_EQ(f.done[15] - f.done[0], 15u * 6u);
  EXPECT_EQ(f.stat("act"), 16);
}

TEST(FastDram, HitsOfOneBankFollowEachOtherByTCCDL) {
  Fixture f({"hbm.controller.refresh=off", "hbm.controller.page_policy=open"});
  // 32 columns of one row, all queued at once: one ACT, then a column every tCCD_L cycles.
  for (std::uint32_t c = 0; c < 32; ++c) f.mem->enqueue(MemRequest{f.at(0, 0, 1, c), false, c, 0});
  f.run();
  EXPECT_EQ(f.done[31] - f.done[0], 31u * f.t().CCD_L);
  EXPECT_EQ(f.stat("row_hits"), 31);
}

}  // namespace
}  // namespace sohusim::memory
