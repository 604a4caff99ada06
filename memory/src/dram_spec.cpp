#include "sohusim/memory/dram_spec.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sohusim/config/config.hpp"
#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/hbm_schema.hpp"

namespace sohusim::memory {

std::string_view level_name(DramLevel level) {
  switch (level) {
    case DramLevel::Stack:
      return "stack";
    case DramLevel::Channel:
      return "channel";
    case DramLevel::PseudoChannel:
      return "pseudo_channel";
    case DramLevel::Sid:
      return "sid";
    case DramLevel::BankGroup:
      return "bank_group";
    case DramLevel::Bank:
      return "bank";
    case DramLevel::Row:
      return "row";
    case DramLevel::Column:
      return "column";
  }
  return "?";
}

std::string_view command_name(DramCommand command) {
  switch (command) {
    case DramCommand::ACT:
      return "ACT";
    case DramCommand::PRE:
      return "PRE";
    case DramCommand::PREA:
      return "PREA";
    case DramCommand::RD:
      return "RD";
    case DramCommand::WR:
      return "WR";
    case DramCommand::RDA:
      return "RDA";
    case DramCommand::WRA:
      return "WRA";
    case DramCommand::REFab:
      return "REFab";
    case DramCommand::REFpb:
      return "REFpb";
  }
  return "?";
}

std::string_view scope_name(ConstraintScope scope) {
  switch (scope) {
    case ConstraintScope::SameBank:
      return "same bank";
    case ConstraintScope::SameBankGroup:
      return "same bank group";
    case ConstraintScope::OtherBankGroup:
      return "other bank group";
    case ConstraintScope::SamePseudoChannel:
      return "same pseudo-channel";
    case ConstraintScope::SameChannel:
      return "same channel";
  }
  return "?";
}

std::uint64_t DramOrganization::count(DramLevel level) const {
  switch (level) {
    case DramLevel::Stack:
      return stacks;
    case DramLevel::Channel:
      return channels;
    case DramLevel::PseudoChannel:
      return pseudo_channels;
    case DramLevel::Sid:
      return sids;
    case DramLevel::BankGroup:
      return bank_groups;
    case DramLevel::Bank:
      return banks_per_group;
    case DramLevel::Row:
      return rows;
    case DramLevel::Column:
      return columns;
  }
  return 0;
}

ConstraintTable::ConstraintTable(const std::vector<TimingConstraint>& rows) {
  for (const TimingConstraint& row : rows) {
    if (row.window > 1) {
      if (row.scope != ConstraintScope::SamePseudoChannel || row.preceding.size() != 1 || row.following.size() != 1) {
        throw std::invalid_argument("timing constraint " + row.name +
                                    ": a window row must be in pseudo-channel scope with one preceding and one "
                                    "following command");
      }
      windows_.push_back({row.preceding[0], row.following[0], row.latency, row.window});
      continue;
    }
    for (DramCommand p : row.preceding) {
      for (DramCommand f : row.following) {
        std::uint32_t& slot = latency_[index(row.scope, p, f)];
        slot = std::max(slot, row.latency);
      }
    }
  }
  // Effects list only the non-zero entries, so issuing a command touches what it constrains.
  for (std::size_t s = 0; s < kConstraintScopeCount; ++s) {
    for (std::size_t p = 0; p < kDramCommandCount; ++p) {
      auto& list = effects_[s * kDramCommandCount + p];
      for (std::size_t f = 0; f < kDramCommandCount; ++f) {
        const std::uint32_t lat =
            latency_[index(static_cast<ConstraintScope>(s), static_cast<DramCommand>(p), static_cast<DramCommand>(f))];
        if (lat > 0) list.push_back({static_cast<DramCommand>(f), lat});
      }
    }
  }
}

std::vector<TimingConstraint> build_hbm_constraints(const DramTimings& t) {
  using C = DramCommand;
  using S = ConstraintScope;
  const std::uint32_t nBL = t.burst_cycles;
  const std::uint32_t write_recovery = t.CWL + nBL + t.WR;  // last write beat, then tWR
  const std::vector<C> reads = {C::RD, C::RDA};
  const std::vector<C> writes = {C::WR, C::WRA};
  const std::vector<C> columns = {C::RD, C::WR, C::RDA, C::WRA};
  const std::vector<C> row_cmds = {C::ACT, C::PRE, C::PREA, C::REFab, C::REFpb};
  const std::vector<C> non_act_row_cmds = {C::PRE, C::PREA, C::REFab, C::REFpb};

  return {
      // ---- same bank: the row cycle ------------------------------------------------
      {"tRC", S::SameBank, {C::ACT}, {C::ACT}, t.RC},
      {"tRCDRD", S::SameBank, {C::ACT}, reads, t.RCDRD},
      {"tRCDWR", S::SameBank, {C::ACT}, writes, t.RCDWR},
      {"tRAS", S::SameBank, {C::ACT}, {C::PRE}, t.RAS},
      {"tRP", S::SameBank, {C::PRE}, {C::ACT, C::REFpb}, t.RP},
      {"tRTP (RD->PRE)", S::SameBank, {C::RD}, {C::PRE}, t.RTP},
      {"tWR (WR->PRE: CWL+nBL+tWR)", S::SameBank, {C::WR}, {C::PRE}, write_recovery},
      {"RDA->ACT (tRTP+tRP)", S::SameBank, {C::RDA}, {C::ACT, C::REFpb}, t.RTP + t.RP},
      {"WRA->ACT (CWL+nBL+tWR+tRP)", S::SameBank, {C::WRA}, {C::ACT, C::REFpb}, write_recovery + t.RP},
      {"tRFCpb", S::SameBank, {C::REFpb}, {C::ACT, C::REFpb}, t.RFCpb},

      // ---- same bank group ---------------------------------------------------------
      {"tCCD_L (RD)", S::SameBankGroup, reads, reads, t.CCD_L},
      {"tCCD_L (WR)", S::SameBankGroup, writes, writes, t.CCD_L},
      {"tRRD_L", S::SameBankGroup, {C::ACT}, {C::ACT}, t.RRD_L},
      {"tWTR_L (WR->RD: CWL+nBL+tWTR_L)", S::SameBankGroup, writes, reads, t.CWL + nBL + t.WTR_L},

      // ---- another bank group of the pseudo-channel --------------------------------
      {"tCCD_S (RD)", S::OtherBankGroup, reads, reads, t.CCD_S},
      {"tCCD_S (WR)", S::OtherBankGroup, writes, writes, t.CCD_S},
      {"tRRD_S", S::OtherBankGroup, {C::ACT}, {C::ACT}, t.RRD_S},
      {"tWTR_S (WR->RD: CWL+nBL+tWTR_S)", S::OtherBankGroup, writes, reads, t.CWL + nBL + t.WTR_S},

      // ---- the pseudo-channel: data bus, turnarounds, activation window, refresh ---
      {"data bus (RD->RD nBL)", S::SamePseudoChannel, reads, reads, nBL},
      {"data bus (WR->WR nBL)", S::SamePseudoChannel, writes, writes, nBL},
      {"tRTW (RD->WR)", S::SamePseudoChannel, reads, writes, t.RTW},
      {"tFAW", S::SamePseudoChannel, {C::ACT}, {C::ACT}, t.FAW, 4},
      {"tRAS (ACT->PREA)", S::SamePseudoChannel, {C::ACT}, {C::PREA}, t.RAS},
      {"tRTP (RD->PREA)", S::SamePseudoChannel, {C::RD, C::RDA}, {C::PREA}, t.RTP},
      {"tWR (WR->PREA)", S::SamePseudoChannel, {C::WR, C::WRA}, {C::PREA}, write_recovery},
      {"tRP (PREA->ACT)", S::SamePseudoChannel, {C::PREA}, {C::ACT, C::REFab, C::REFpb}, t.RP},
      {"tRP (PRE->REFab)", S::SamePseudoChannel, {C::PRE}, {C::REFab}, t.RP},
      {"tRC (ACT->REFab)", S::SamePseudoChannel, {C::ACT}, {C::REFab}, t.RC},
      {"RDA->REFab (tRTP+tRP)", S::SamePseudoChannel, {C::RDA}, {C::REFab}, t.RTP + t.RP},
      {"WRA->REFab (CWL+nBL+tWR+tRP)", S::SamePseudoChannel, {C::WRA}, {C::REFab}, write_recovery + t.RP},
      {"tRFCab", S::SamePseudoChannel, {C::REFab}, {C::ACT, C::REFab, C::REFpb, C::PREA}, t.RFCab},
      {"tRREFD (REFpb->REFpb)", S::SamePseudoChannel, {C::REFpb}, {C::REFpb}, t.RREFD},
      {"tRREFD (REFpb->ACT)", S::SamePseudoChannel, {C::REFpb}, {C::ACT}, t.RREFD},
      {"tRFCpb (REFpb->REFab)", S::SamePseudoChannel, {C::REFpb}, {C::REFab}, t.RFCpb},
      {"tRRD_S (ACT->REFpb)", S::SamePseudoChannel, {C::ACT}, {C::REFpb}, t.RRD_S},

      // ---- the channel's command buses (shared by its pseudo-channels) -------------
      {"row bus (ACT)", S::SameChannel, {C::ACT}, row_cmds, t.ACT_bus},
      {"row bus", S::SameChannel, non_act_row_cmds, row_cmds, 1},
      {"column bus", S::SameChannel, columns, columns, 1},
  };
}

DramSpec DramSpec::make(std::string name, const DramOrganization& org, const DramTimings& timing) {
  DramSpec spec;
  spec.name = std::move(name);
  spec.org = org;
  spec.timing = timing;
  spec.constraints = build_hbm_constraints(timing);
  spec.table = ConstraintTable(spec.constraints);
  return spec;
}

std::uint32_t hbm3_trfcab_ns(std::uint32_t die_density_gbit) {
  switch (die_density_gbit) {
    case 8:
      return 260;
    case 16:
      return 350;
    case 24:
      return 450;
    case 32:
      return 550;
    default:
      return 0;
  }
}

DramSpec DramSpec::from_config(const config::Config& config) {
  const DramOrganization org = organization_from_config(config);
  DramTimings t;
  DramTimings::params().load(config, t);
  t.burst_cycles = burst_cycles_from_config(config);
  t.RFCab = trfcab_cycles_from_config(config);
  return make(config.get_string("hbm.name"), org, t);
}

}  // namespace sohusim::memory
