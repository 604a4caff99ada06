// FastDram's terms one by one, to the cycle: an unloaded hit and miss, the activation
// pipeline bounding random traffic, a conflict waiting for its bank, the refresh windows,
// FCFS serving in order, back-pressure waking its owner, bulk transfers charged per
// pseudo-channel (the whole groups at once, exactly as their accesses one by one would be
// on the data bus), the write switch term, the statistics, and bad input.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hbm_test_support.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

struct Fixture {
  counters::Registry reg;
  std::unique_ptr<FastDram> mem;
  std::map<std::uint64_t, Cycle> done;  // id -> completion cycle

  explicit Fixture(const std::vector<std::string>& sets = {"hbm.controller.refresh=off"}) {
    mem =
        FastDram::from_config(hbmtest::hbm_config("hbm/hbm3-6400", sets), sim::Instrumentation{&reg, nullptr, 0}, "f");
    mem->set_completion([this](const MemRequest& r, Cycle at) {
      EXPECT_EQ(done.count(r.id), 0u) << "request " << r.id << " completed twice";
      done[r.id] = at;
    });
  }
  // Pseudo-channel 0 of stack 0, channel 0: bank group `bg`, bank `bank`, `row`, `column`.
  std::uint64_t at(std::uint32_t bg, std::uint32_t bank, std::uint32_t row, std::uint32_t column = 0) const {
    DecodedAddress d;
    d.bank_group = bg;
    d.bank = bank;
    d.row = row;
    d.column = column;
    return mem->mapping().encode(d);
  }
  void run() {
    while (mem->pending() > 0) mem->advance_to(mem->next_event());
  }
  double stat(const std::string& name) const { return reg.value("f.s0.ch0.pc0." + name); }
  const DramTimings& t() const { return mem->spec().timing; }
  Cycle latency() const { return mem->params().controller.latency; }
};

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

TEST(FastDram, AllBankRefreshBlacksOutItsWindowAndClosesRows) {
  Fixture f({"hbm.controller.refresh=allbank", "hbm.controller.page_policy=open"});
  const DramTimings& t = f.t();
  f.mem->enqueue(MemRequest{f.at(0, 0, 1), false, 1, 0});
  f.run();
  f.mem->advance_to(t.REFI + 10);  // inside the first window
  f.mem->enqueue(MemRequest{f.at(0, 0, 1, 1), false, 2, 0});
  f.run();
  // The row was closed by the refresh: an ACT at the window's end.
  EXPECT_EQ(f.done[2], t.REFI + t.RP + t.RFCab + t.RCDRD + t.CL + t.burst_cycles + f.latency());
  EXPECT_EQ(f.stat("row_misses"), 2);
  EXPECT_EQ(f.stat("refab"), 1);
}

TEST(FastDram, PerBankRefreshHoldsItsBankForTRFCpb) {
  Fixture f({"hbm.controller.refresh=perbank", "hbm.controller.page_policy=open"});
  const DramTimings& t = f.t();
  const Cycle step = t.refi_per_bank(f.mem->spec().org.banks_per_pc());
  // Bank 3 (bank group 0, bank 3) is refreshed at tREFI + 3 step.
  const Cycle refresh = t.REFI + 3 * step;
  f.mem->advance_to(refresh + 5);
  f.mem->enqueue(MemRequest{f.at(0, 3, 1), false, 1, 0});
  f.run();
  EXPECT_EQ(f.done[1], refresh + t.RFCpb + t.RCDRD + t.CL + t.burst_cycles + f.latency());
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

TEST(FastDram, WorkStretchedByRefreshesInClosedForm) {
  // Work of `cost` from `from`, losing `window` at each refresh reached: checked against a
  // cycle-by-cycle walk.
  for (Cycle from : {Cycle{0}, Cycle{100}, Cycle{6239}}) {
    for (Cycle cost : {Cycle{1}, Cycle{5000}, Cycle{6000}, Cycle{50000}}) {
      Cycle t = from, left = cost, next = 6240;
      while (next <= t) next += 6240;
      while (left > 0) {
        if (t == next) {
          t += 586;
          next += 6240;
          continue;
        }
        ++t;
        --left;
      }
      if (t == next) t += 586;
      ASSERT_EQ(FastDram::stretched_by_refreshes(from, cost, (from / 6240 + 1) * 6240, 6240, 586), t)
          << from << " " << cost;
    }
  }
}

TEST(FastDram, RejectsBadAccessesAndCalibrations) {
  Fixture f;
  EXPECT_THROW(f.mem->enqueue(MemRequest{f.mem->capacity_bytes(), false, 1, 0}), std::out_of_range);
  EXPECT_THROW(f.mem->enqueue(MemRequest{3, false, 1, 0}), std::invalid_argument);
  EXPECT_THROW(f.mem->enqueue_bulk(0, 33, false, 1), std::invalid_argument);
  f.mem->advance_to(10);
  EXPECT_THROW(f.mem->advance_to(5), std::logic_error);
}

TEST(FastDram, RejectsACalibrationOutOfRange) {
  const auto message = [](FastDramCalibration c) {
    counters::Registry reg;
    Fixture probe;
    FastDramParams params = probe.mem->params();
    params.calibration = c;
    try {
      FastDram mem(probe.mem->spec(), probe.mem->mapping(), params, sim::Instrumentation{&reg, nullptr, 0}, "x");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  FastDramCalibration c;
  c.act_gap = 0;
  EXPECT_EQ(message(c), "FastDramCalibration::act_gap is 0; it must be above 0 and at most 1e6 cycles");
  c = FastDramCalibration{};
  c.write_switch_cost = -1;
  EXPECT_EQ(message(c), "FastDramCalibration::write_switch_cost is -1; it must be from 0 to 1e6 cycles");
  EXPECT_EQ(message(FastDramCalibration::fitted()), "accepted");
}

}  // namespace
}  // namespace sohusim::memory
