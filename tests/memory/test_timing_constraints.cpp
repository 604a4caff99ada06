// Probe-and-issue tests of every row of the HBM constraint table: issue the first
// command, ask the timing engine for the earliest legal cycle of the second, and check it
// is exactly the constraint (and that one cycle earlier is illegal). Expectations are
// written from the named timings here, not read back from the table, and every case
// names the table rows it exercises; a final check asserts every row was exercised.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"
#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {
namespace {

using C = DramCommand;

enum class Relation { SameBank, SameGroupOtherBank, OtherGroup, OtherPcSameChannel };

const char* relation_name(Relation r) {
  switch (r) {
    case Relation::SameBank:
      return "same bank";
    case Relation::SameGroupOtherBank:
      return "same bank group, other bank";
    case Relation::OtherGroup:
      return "other bank group";
    case Relation::OtherPcSameChannel:
      return "other pseudo-channel of the channel";
  }
  return "?";
}

struct Case {
  C first;
  C second;
  Relation relation;
  std::uint32_t expected;
  std::vector<std::string> rows;  // the table rows this case exercises
};

std::vector<Case> cases(const DramTimings& t) {
  const std::uint32_t nBL = t.burst_cycles;
  const std::uint32_t wr_rec = t.CWL + nBL + t.WR;
  using R = Relation;
  return {
      // same bank
      {C::ACT, C::ACT, R::SameBank, std::max(t.RC, t.RRD_L), {"tRC"}},
      {C::ACT, C::RD, R::SameBank, t.RCDRD, {"tRCDRD"}},
      {C::ACT, C::RDA, R::SameBank, t.RCDRD, {"tRCDRD"}},
      {C::ACT, C::WR, R::SameBank, t.RCDWR, {"tRCDWR"}},
      {C::ACT, C::WRA, R::SameBank, t.RCDWR, {"tRCDWR"}},
      {C::ACT, C::PRE, R::SameBank, std::max(t.RAS, t.ACT_bus), {"tRAS"}},
      {C::PRE, C::ACT, R::SameBank, t.RP, {"tRP"}},
      {C::PRE, C::REFpb, R::SameBank, t.RP, {"tRP"}},
      {C::RD, C::PRE, R::SameBank, t.RTP, {"tRTP (RD->PRE)"}},
      {C::WR, C::PRE, R::SameBank, wr_rec, {"tWR (WR->PRE: CWL+nBL+tWR)"}},
      {C::RDA, C::ACT, R::SameBank, t.RTP + t.RP, {"RDA->ACT (tRTP+tRP)"}},
      {C::RDA, C::REFpb, R::SameBank, t.RTP + t.RP, {"RDA->ACT (tRTP+tRP)"}},
      {C::WRA, C::ACT, R::SameBank, wr_rec + t.RP, {"WRA->ACT (CWL+nBL+tWR+tRP)"}},
      {C::WRA, C::REFpb, R::SameBank, wr_rec + t.RP, {"WRA->ACT (CWL+nBL+tWR+tRP)"}},
      {C::REFpb, C::ACT, R::SameBank, t.RFCpb, {"tRFCpb"}},
      {C::REFpb, C::REFpb, R::SameBank, t.RFCpb, {"tRFCpb"}},
      {C::WR, C::RD, R::SameBank, t.CWL + nBL + t.WTR_L, {"tWTR_L (WR->RD: CWL+nBL+tWTR_L)"}},
      {C::RD, C::WR, R::SameBank, t.RTW, {"tRTW (RD->WR)"}},
      // same bank group, another bank
      {C::RD, C::RD, R::SameGroupOtherBank, std::max(t.CCD_L, nBL), {"tCCD_L (RD)"}},
      {C::RDA, C::RD, R::SameGroupOtherBank, std::max(t.CCD_L, nBL), {"tCCD_L (RD)"}},
      {C::WR, C::WR, R::SameGroupOtherBank, std::max(t.CCD_L, nBL), {"tCCD_L (WR)"}},
      {C::WR, C::WRA, R::SameGroupOtherBank, std::max(t.CCD_L, nBL), {"tCCD_L (WR)"}},
      {C::ACT, C::ACT, R::SameGroupOtherBank, std::max(t.RRD_L, t.ACT_bus), {"tRRD_L"}},
      {C::WR, C::RD, R::SameGroupOtherBank, t.CWL + nBL + t.WTR_L, {"tWTR_L (WR->RD: CWL+nBL+tWTR_L)"}},
      {C::WRA, C::RDA, R::SameGroupOtherBank, t.CWL + nBL + t.WTR_L, {"tWTR_L (WR->RD: CWL+nBL+tWTR_L)"}},
      // another bank group
      {C::RD, C::RD, R::OtherGroup, std::max(t.CCD_S, nBL), {"tCCD_S (RD)", "data bus (RD->RD nBL)"}},
      {C::WR, C::WR, R::OtherGroup, std::max(t.CCD_S, nBL), {"tCCD_S (WR)", "data bus (WR->WR nBL)"}},
      {C::ACT, C::ACT, R::OtherGroup, std::max(t.RRD_S, t.ACT_bus), {"tRRD_S"}},
      {C::WR, C::RD, R::OtherGroup, t.CWL + nBL + t.WTR_S, {"tWTR_S (WR->RD: CWL+nBL+tWTR_S)"}},
      {C::RD, C::WR, R::OtherGroup, t.RTW, {"tRTW (RD->WR)"}},
      {C::RDA, C::WRA, R::OtherGroup, t.RTW, {"tRTW (RD->WR)"}},
      // pseudo-channel-wide commands and refresh
      {C::ACT, C::PREA, R::OtherGroup, std::max(t.RAS, t.ACT_bus), {"tRAS (ACT->PREA)"}},
      {C::RD, C::PREA, R::OtherGroup, t.RTP, {"tRTP (RD->PREA)"}},
      {C::RDA, C::PREA, R::OtherGroup, t.RTP, {"tRTP (RD->PREA)"}},
      {C::WR, C::PREA, R::OtherGroup, wr_rec, {"tWR (WR->PREA)"}},
      {C::PREA, C::ACT, R::OtherGroup, t.RP, {"tRP (PREA->ACT)"}},
      {C::PREA, C::REFab, R::OtherGroup, t.RP, {"tRP (PREA->ACT)"}},
      {C::PREA, C::REFpb, R::OtherGroup, t.RP, {"tRP (PREA->ACT)"}},
      {C::PRE, C::REFab, R::OtherGroup, t.RP, {"tRP (PRE->REFab)"}},
      {C::ACT, C::REFab, R::OtherGroup, t.RC, {"tRC (ACT->REFab)"}},
      {C::RDA, C::REFab, R::OtherGroup, t.RTP + t.RP, {"RDA->REFab (tRTP+tRP)"}},
      {C::WRA, C::REFab, R::OtherGroup, wr_rec + t.RP, {"WRA->REFab (CWL+nBL+tWR+tRP)"}},
      {C::REFab, C::ACT, R::OtherGroup, t.RFCab, {"tRFCab"}},
      {C::REFab, C::REFab, R::SameBank, t.RFCab, {"tRFCab"}},
      {C::REFab, C::REFpb, R::OtherGroup, t.RFCab, {"tRFCab"}},
      {C::REFab, C::PREA, R::OtherGroup, t.RFCab, {"tRFCab"}},
      {C::REFpb, C::REFpb, R::OtherGroup, t.RREFD, {"tRREFD (REFpb->REFpb)"}},
      {C::REFpb, C::ACT, R::OtherGroup, t.RREFD, {"tRREFD (REFpb->ACT)"}},
      {C::REFpb, C::REFab, R::OtherGroup, t.RFCpb, {"tRFCpb (REFpb->REFab)"}},
      {C::ACT, C::REFpb, R::OtherGroup, std::max(t.RRD_S, t.ACT_bus), {"tRRD_S (ACT->REFpb)"}},
      // the channel's command buses
      {C::ACT, C::ACT, R::OtherPcSameChannel, t.ACT_bus, {"row bus (ACT)"}},
      {C::ACT, C::PRE, R::OtherPcSameChannel, t.ACT_bus, {"row bus (ACT)"}},
      {C::ACT, C::REFab, R::OtherPcSameChannel, t.ACT_bus, {"row bus (ACT)"}},
      {C::PRE, C::ACT, R::OtherPcSameChannel, 1, {"row bus"}},
      {C::PREA, C::PRE, R::OtherPcSameChannel, 1, {"row bus"}},
      {C::REFab, C::REFpb, R::OtherPcSameChannel, 1, {"row bus"}},
      {C::RD, C::RD, R::OtherPcSameChannel, 1, {"column bus"}},
      {C::RD, C::WR, R::OtherPcSameChannel, 1, {"column bus"}},
      {C::WRA, C::RDA, R::OtherPcSameChannel, 1, {"column bus"}},
  };
}

BankCoord first_bank(const ChannelTiming& ct) {
  return ct.coord(0, 0, 1, 1);
}

BankCoord second_bank(const ChannelTiming& ct, Relation r) {
  switch (r) {
    case Relation::SameBank:
      return ct.coord(0, 0, 1, 1);
    case Relation::SameGroupOtherBank:
      return ct.coord(0, 0, 1, 2);
    case Relation::OtherGroup:
      return ct.coord(0, 0, 3, 1);
    case Relation::OtherPcSameChannel:
      return ct.coord(1, 0, 1, 1);
  }
  return {};
}

std::set<std::string> probe_all(const DramSpec& spec) {
  std::set<std::string> covered;
  constexpr Cycle t0 = 1000;
  for (const Case& c : cases(spec.timing)) {
    ChannelTiming ct(spec);
    ct.issue(c.first, first_bank(ct), t0);
    const BankCoord b = second_bank(ct, c.relation);
    const Cycle e = ct.earliest(c.second, b);
    SCOPED_TRACE(std::string(command_name(c.first)) + " -> " + std::string(command_name(c.second)) + ", " +
                 relation_name(c.relation) + " (" + spec.name + ")");
    EXPECT_EQ(e, t0 + c.expected);
    EXPECT_FALSE(ct.can_issue(c.second, b, t0 + c.expected - 1));
    EXPECT_TRUE(ct.can_issue(c.second, b, t0 + c.expected));
    covered.insert(c.rows.begin(), c.rows.end());
  }
  return covered;
}

std::set<std::string> all_rows(const DramSpec& spec) {
  std::set<std::string> names;
  for (const TimingConstraint& row : spec.constraints) names.insert(row.name);
  return names;
}

// Distinct values for every timing, so swapping two of them in the table shows.
DramSpec distinct_spec() {
  DramTimings t;
  t.CL = 21;
  t.CWL = 11;
  t.RCDRD = 33;
  t.RCDWR = 17;
  t.RP = 27;
  t.RAS = 47;
  t.RC = 79;
  t.CCD_S = 3;
  t.CCD_L = 5;
  t.RRD_S = 6;
  t.RRD_L = 7;
  t.FAW = 29;
  t.WR = 34;
  t.RTP = 8;
  t.WTR_S = 9;
  t.WTR_L = 12;
  t.RTW = 23;
  t.RFCab = 571;
  t.RFCpb = 331;
  t.REFI = 6000;
  t.RREFD = 14;
  t.ACT_bus = 3;
  return DramSpec::make("distinct", DramOrganization{}, t);
}

void check_faw(const DramSpec& spec) {
  const DramTimings& t = spec.timing;
  ChannelTiming ct(spec);
  Cycle at = 1000;
  const Cycle first = at;
  for (std::uint32_t g = 0; g < 4; ++g) {
    const BankCoord b = ct.coord(0, 0, g, 0);
    ASSERT_LE(ct.earliest(C::ACT, b), at);
    ct.issue(C::ACT, b, at);
    at += t.RRD_S;
  }
  const BankCoord fifth = ct.coord(0, 0, 0, 1);  // the first ACT's group, another bank
  const Cycle expected = std::max<Cycle>({first + t.FAW, at - t.RRD_S + t.RRD_S, first + t.RRD_L});
  EXPECT_EQ(ct.earliest(C::ACT, fifth), expected) << spec.name;
  EXPECT_FALSE(ct.can_issue(C::ACT, fifth, expected - 1));
  // The window is per pseudo-channel: the other pseudo-channel only sees the row bus.
  EXPECT_EQ(ct.earliest(C::ACT, ct.coord(1, 0, 0, 0)), at - t.RRD_S + t.ACT_bus);
}

TEST(TimingConstraints, EveryRowProbedOnHbm3_6400) {
  const DramSpec spec = DramSpec::from_config(hbmtest::hbm_config("hbm/hbm3-6400"));
  std::set<std::string> covered = probe_all(spec);
  check_faw(spec);
  covered.insert("tFAW");
  // The data-bus rows are tied with tCCD_S in every real preset; DataBusRowsBindWhenCcdIsShort shows them alone.
  EXPECT_EQ(covered, all_rows(spec));
}

TEST(TimingConstraints, EveryRowProbedWithDistinctTimings) {
  const DramSpec spec = distinct_spec();
  std::set<std::string> covered = probe_all(spec);
  check_faw(spec);
  covered.insert("tFAW");
  EXPECT_EQ(covered, all_rows(spec));
}

TEST(TimingConstraints, EveryRowProbedOnOtherPresets) {
  for (const char* preset : {"hbm/hbm3e-8000", "hbm/hbm3e-9600", "hbm/hbm2-2000"}) {
    const DramSpec spec = DramSpec::from_config(hbmtest::hbm_config(preset));
    probe_all(spec);
    check_faw(spec);
  }
}

TEST(TimingConstraints, DataBusRowsBindWhenCcdIsShort) {
  DramTimings t;
  t.CCD_S = 1;  // shorter than the burst: only the data-bus rows hold RD->RD apart
  t.burst_cycles = 2;
  const DramSpec spec = DramSpec::make("short-ccd", DramOrganization{}, t);
  ChannelTiming ct(spec);
  ct.issue(C::RD, ct.coord(0, 0, 0, 0), 100);
  EXPECT_EQ(ct.earliest(C::RD, ct.coord(0, 0, 1, 0)), 102u);
  ct.issue(C::WR, ct.coord(1, 0, 0, 0), 200);
  EXPECT_EQ(ct.earliest(C::WR, ct.coord(1, 0, 1, 0)), 202u);
}

TEST(TimingConstraints, RowAndColumnBusesAreSeparate) {
  const DramSpec spec = DramSpec::from_config(hbmtest::hbm_config("hbm/hbm3-6400"));
  ChannelTiming ct(spec);
  ct.issue(C::ACT, ct.coord(0, 0, 0, 0), 500);
  // A column command of the other pseudo-channel may go in the same cycle as the ACT.
  EXPECT_TRUE(ct.can_issue(C::RD, ct.coord(1, 0, 0, 0), 500));
  ct.issue(C::RD, ct.coord(1, 0, 0, 0), 500);
  // But not a second column command, nor a second row command.
  EXPECT_EQ(ct.earliest(C::RD, ct.coord(0, 0, 2, 0)), 501u);
  EXPECT_EQ(ct.earliest(C::PRE, ct.coord(1, 0, 2, 0)), 502u);
}

TEST(TimingConstraints, TableEvaluatesToIntegers) {
  const DramSpec spec = DramSpec::from_config(hbmtest::hbm_config("hbm/hbm3-6400"));
  const ConstraintTable& table = spec.table;
  EXPECT_EQ(table.latency(ConstraintScope::SameBank, C::ACT, C::RD), 31u);
  EXPECT_EQ(table.latency(ConstraintScope::SameBank, C::ACT, C::WR), 15u);
  EXPECT_EQ(table.latency(ConstraintScope::SameBankGroup, C::RD, C::RD), 4u);
  EXPECT_EQ(table.latency(ConstraintScope::OtherBankGroup, C::RD, C::RD), 2u);
  EXPECT_EQ(table.latency(ConstraintScope::SamePseudoChannel, C::RD, C::WR), 20u);
  EXPECT_EQ(table.latency(ConstraintScope::SameBankGroup, C::WR, C::RD), 10u + 2u + 10u);
  EXPECT_EQ(table.latency(ConstraintScope::OtherBankGroup, C::WR, C::RD), 10u + 2u + 7u);
  EXPECT_EQ(table.latency(ConstraintScope::SameChannel, C::ACT, C::PRE), 2u);
  EXPECT_EQ(table.latency(ConstraintScope::SameBank, C::RD, C::ACT), 0u);  // no such row
  ASSERT_EQ(table.windows().size(), 1u);
  EXPECT_EQ(table.windows()[0].latency, 24u);
  EXPECT_EQ(table.windows()[0].window, 4u);
}

TEST(TimingConstraints, WindowRowOutsidePseudoChannelIsRejected) {
  std::vector<TimingConstraint> rows = {{"bad", ConstraintScope::SameBank, {C::ACT}, {C::ACT}, 10, 4}};
  EXPECT_THROW(ConstraintTable{rows}, std::invalid_argument);
}

}  // namespace
}  // namespace sohusim::memory
