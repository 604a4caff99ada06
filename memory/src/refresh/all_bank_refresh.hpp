#pragma once
// AllBankRefresh: a REFab falls due every tREFI. A forced one takes the whole
// pseudo-channel: it issues nothing else, precharges every bank (PREA) and refreshes. A
// postponed one waits while row hits of the direction served are queued.
#include <cstdint>

#include "refresh/refresh.hpp"
#include "sohusim/counters/registry.hpp"

namespace sohusim::memory {

class AllBankRefresh final : public Refresh {
 public:
  AllBankRefresh(Cycle refi, std::uint32_t postpone, ChannelTiming& timing, std::uint32_t pc, const PcStats& stats);
  RefreshHold step(ControllerState& state, Cycle t, Cycle& next) override;

 private:
  void account_idle(ControllerState& state, Cycle bulk) override;
  bool issue_idle(ControllerState& state, Cycle at, Cycle now) override;

  ChannelTiming& timing_;
  std::uint32_t pc_;
  counters::Counter& pre_;
  counters::Counter& refab_;
};

}  // namespace sohusim::memory
