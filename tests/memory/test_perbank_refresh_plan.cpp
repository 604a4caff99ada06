// PerBankRefreshPlan: the bank each REFpb of a pseudo-channel goes to, chosen as the
// detailed controller chooses it (PerBankRefresh::choose_target): the next bank in round
// robin not yet refreshed in this round and with nothing queued, else the first not yet
// refreshed.
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/memory/perbank_refresh_plan.hpp"

namespace sohusim::memory {
namespace {

constexpr Cycle kStep = 100;
constexpr std::uint32_t kBanks = 4;

// The bank each decided REFpb up to slot `slots` went to (latest() at its due time).
std::vector<std::uint32_t> targets(const PerBankRefreshPlan& plan, Cycle slots) {
  std::vector<std::uint32_t> out;
  for (Cycle k = 1; k <= slots; ++k) {
    std::uint32_t which = kBanks;
    for (std::uint32_t b = 0; b < kBanks; ++b) {
      if (plan.latest(b, k * kStep) == k * kStep) which = b;
    }
    out.push_back(which);
  }
  return out;
}

TEST(PerBankRefreshPlan, IdleBanksAreRefreshedInRoundRobin) {
  PerBankRefreshPlan plan(kBanks, kStep);
  plan.decide_through(6 * kStep + 50, [](std::uint32_t, Cycle) { return false; });
  EXPECT_EQ(targets(plan, 6), (std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(plan.decided_through(), 7 * kStep - 1);
  EXPECT_EQ(plan.latest(0, 5 * kStep - 1), kStep);
  EXPECT_EQ(plan.latest(0, 5 * kStep), 5 * kStep);
  EXPECT_EQ(plan.latest(3, 3 * kStep), 0u);  // its first is at 4 x step
}

// Bank 0 is busy at the first due time: the REFpb goes to bank 1, the round goes on from
// bank 2, and bank 0 is refreshed last in it (it is the only one left); the next round
// starts after it, from bank 1.
TEST(PerBankRefreshPlan, ABusyBankIsRefreshedWhenItIsIdle) {
  PerBankRefreshPlan plan(kBanks, kStep);
  plan.decide_through(6 * kStep, [](std::uint32_t b, Cycle due) { return b == 0 && due == kStep; });
  EXPECT_EQ(targets(plan, 6), (std::vector<std::uint32_t>{1, 2, 3, 0, 1, 2}));
}

// When every bank left in the round is busy, the first of them in round robin goes.
TEST(PerBankRefreshPlan, WithEveryBankLeftBusyTheFirstGoes) {
  PerBankRefreshPlan plan(kBanks, kStep);
  plan.decide_through(3 * kStep, [](std::uint32_t b, Cycle due) { return due >= 2 * kStep || b == 0; });
  // 1st: bank 0 busy -> bank 1; 2nd and 3rd: all busy -> banks 2, 3 (round robin from rr).
  EXPECT_EQ(targets(plan, 3), (std::vector<std::uint32_t>{1, 2, 3}));
}

// A decision is kept: what the predicate says later does not change it, and deciding
// again up to an earlier time does nothing.
TEST(PerBankRefreshPlan, DecisionsAreKept) {
  PerBankRefreshPlan plan(kBanks, kStep);
  plan.decide_through(2 * kStep, [](std::uint32_t, Cycle) { return false; });
  int asked = 0;
  plan.decide_through(2 * kStep, [&](std::uint32_t, Cycle) { return ++asked, true; });
  EXPECT_EQ(asked, 0);
  plan.decide_through(3 * kStep, [](std::uint32_t, Cycle) { return true; });
  EXPECT_EQ(targets(plan, 3), (std::vector<std::uint32_t>{0, 1, 2}));
}

// The caller hears of each REFpb as it is decided, once, in due order (FastDram's FCFS
// bookings are settled against them).
TEST(PerBankRefreshPlan, ReportsEachDecisionOnce) {
  PerBankRefreshPlan plan(kBanks, kStep);
  std::vector<std::pair<std::uint32_t, Cycle>> heard;
  const auto hear = [&](std::uint32_t b, Cycle due) { heard.emplace_back(b, due); };
  plan.decide_through(
      2 * kStep + 50, [](std::uint32_t b, Cycle) { return b == 0; }, hear);
  plan.decide_through(
      2 * kStep + 99, [](std::uint32_t, Cycle) { return false; }, hear);
  plan.decide_through(
      3 * kStep, [](std::uint32_t, Cycle) { return false; }, hear);
  const std::vector<std::pair<std::uint32_t, Cycle>> expected{{1, kStep}, {2, 2 * kStep}, {3, 3 * kStep}};
  EXPECT_EQ(heard, expected);
}

TEST(PerBankRefreshPlan, RefreshedInLooksAtTheDueTimesInTheInterval) {
  PerBankRefreshPlan plan(kBanks, kStep);
  plan.decide_through(10 * kStep, [](std::uint32_t, Cycle) { return false; });
  // Bank 1: due at 200, 600, 1000.
  EXPECT_FALSE(plan.refreshed_in(1, 200, 599));  // (from, to]: 200 itself is before
  EXPECT_TRUE(plan.refreshed_in(1, 199, 200));
  EXPECT_TRUE(plan.refreshed_in(1, 500, 700));
  EXPECT_EQ(plan.first_after(1, 100, 1000), 200u);
  EXPECT_EQ(plan.first_after(1, 200, 1000), 600u);
  EXPECT_EQ(plan.first_after(1, 1000, 5000), kNever);  // none decided after 1000
}

// Each bank remembers its last kHistory due times only.
TEST(PerBankRefreshPlan, KeepsTheLastDueTimesOfEachBank) {
  PerBankRefreshPlan plan(kBanks, kStep);
  const Cycle rounds = PerBankRefreshPlan::kHistory + 1;
  plan.decide_through(rounds * kBanks * kStep, [](std::uint32_t, Cycle) { return false; });
  EXPECT_EQ(plan.latest(0, (kBanks + 1) * kStep), (kBanks + 1) * kStep);  // remembered
  EXPECT_EQ(plan.latest(0, kStep), 0u);                                   // the first was forgotten
  EXPECT_EQ(plan.latest(0, kNever - 1), ((rounds - 1) * kBanks + 1) * kStep);
}

TEST(PerBankRefreshPlan, RejectsAnEmptyGeometry) {
  EXPECT_THROW(PerBankRefreshPlan(0, kStep), std::invalid_argument);
  EXPECT_THROW(PerBankRefreshPlan(kBanks, 0), std::invalid_argument);
}

}  // namespace
}  // namespace sohusim::memory
