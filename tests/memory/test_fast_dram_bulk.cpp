// FastDram's bulk transfers: charged per pseudo-channel (the whole groups at once, exactly as
// their accesses one by one would be on the data bus), activations from the address mapping,
// and the write switch term paid only while reads are in flight.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "fast_dram_harness.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

using fastdramtest::Fixture;

TEST(FastDram, ABulkTransferCostsWhatItsAccessesWouldOnTheDataBus) {
  // Refresh off, no activations charged to the bus: 1 MiB over one stack's 32
  // pseudo-channels is 1024 accesses each, one per burst, whether booked as whole groups
  // (O(1)) or as the head and tail runs around them.
  for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{96}}) {
    Fixture f({"hbm.controller.refresh=off", "hbm.fast.stream_act_cost=0"});
    const std::uint64_t bytes = 1 << 20;
    f.mem->enqueue_bulk(offset, bytes, false, 7);
    f.run();
    const DramTimings& t = f.t();
    const Cycle per_pc = bytes / 32 / 32 * t.burst_cycles;
    EXPECT_NEAR(static_cast<double>(f.done[7]), static_cast<double>(per_pc + t.CL + f.latency()), 4.0) << offset;
    double accesses = 0;
    for (std::uint32_t ch = 0; ch < 16; ++ch) {
      for (std::uint32_t pc = 0; pc < 2; ++pc) {
        accesses += f.reg.value("f.s0.ch" + std::to_string(ch) + ".pc" + std::to_string(pc) + ".rd");
      }
    }
    EXPECT_EQ(accesses, bytes / 32) << offset;
  }
}

TEST(FastDram, ActivationsOfABulkStreamComeFromTheMapping) {
  Fixture f;
  // The default mapping walks a whole row of a bank before the next: 32 accesses of a
  // pseudo-channel per activation.
  f.mem->enqueue_bulk(0, 1 << 20, false, 1);
  f.run();
  EXPECT_EQ(f.stat("act"), 1024 / 32);
  EXPECT_EQ(f.stat("row_hits") + f.stat("row_misses"), 1024);
}

TEST(FastDram, WritesPayTheSwitchTermOnlyWhileReadsAreInFlight) {
  const auto span = [](bool with_reads) {
    Fixture f({"hbm.controller.refresh=off", "hbm.fast.write_switch_cost=3", "hbm.controller.page_policy=open"});
    if (with_reads) f.mem->enqueue_bulk(16 << 20, 1 << 20, false, 100);
    const Cycle start = f.mem->now();
    f.mem->enqueue_bulk(0, 1 << 20, true, 1);
    f.run();
    return f.done[1] - start;
  };
  // 1024 writes per pseudo-channel: 3 more cycles each behind the reads.
  EXPECT_GE(span(true), span(false) + 1024 * 3);
}

}  // namespace
}  // namespace sohusim::memory
