// FastDram's refresh windows: an all-bank refresh blacking out its window and closing rows,
// a per-bank refresh holding its bank for tRFCpb, and work stretched by refreshes in closed
// form, checked against a cycle-by-cycle walk.
#include <gtest/gtest.h>

#include "fast_dram_harness.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

using fastdramtest::Fixture;

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

}  // namespace
}  // namespace sohusim::memory
