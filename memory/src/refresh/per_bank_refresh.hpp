#pragma once
// PerBankRefresh: a REFpb falls due every tREFI / banks. Refreshes go in rounds: each bank
// once per round of `banks` refreshes (so each bank once per tREFI), and within a round the
// refresh picks, from the bank after the last refreshed on, the first bank not yet
// refreshed that has no queued request, else the first not yet refreshed (JEDEC lets the
// controller choose the REFpb bank; PerBankRefreshPlan is the same rule as FastDram sees
// it). A forced one blocks only its bank, which it precharges and refreshes while the
// others keep working; a postponed one waits while row hits to its bank are queued.
#include <cstdint>
#include <vector>

#include "refresh/refresh.hpp"
#include "sohusim/counters/registry.hpp"

namespace sohusim::memory {

class PerBankRefresh final : public Refresh {
 public:
  PerBankRefresh(Cycle step, std::uint32_t postpone, ChannelTiming& timing, std::uint32_t pc,
                 std::uint32_t banks_per_group, std::uint32_t banks, const PcStats& stats);
  RefreshHold step(ControllerState& state, Cycle t, Cycle& next) override;
  bool wakes_on_enqueue() const override { return true; }

 private:
  void account_idle(ControllerState& state, Cycle bulk) override;
  bool issue_idle(ControllerState& state, Cycle at, Cycle now) override;
  std::uint32_t choose_target(const ControllerState& state);
  void refreshed(std::uint32_t bank);
  BankCoord coord(std::uint32_t bank) const { return {pc_, bank / banks_per_group_, bank}; }

  ChannelTiming& timing_;
  std::uint32_t pc_;
  std::uint32_t banks_per_group_;
  counters::Counter& pre_;
  counters::Counter& refpb_;
  std::vector<std::uint8_t> refreshed_;  // per bank: in the current round
  std::uint32_t refreshed_count_ = 0;    // banks refreshed in the current round
  std::uint32_t rr_ = 0;                 // where the search for the next target starts
  // The bank being refreshed, or none chosen.
  std::uint32_t target_ = ControllerState::kNoBank;
};

}  // namespace sohusim::memory
