#include "refresh/all_bank_refresh.hpp"

#include <algorithm>

#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/dram_controller.hpp"

namespace sohusim::memory {

AllBankRefresh::AllBankRefresh(Cycle refi, std::uint32_t postpone, ChannelTiming& timing, std::uint32_t pc,
                               const PcStats& stats)
    : Refresh(refi, postpone), timing_(timing), pc_(pc), pre_(stats.pre), refab_(stats.refab) {}

RefreshHold AllBankRefresh::step(ControllerState& state, Cycle t, Cycle& next) {
  if (may_postpone() && state.total_hits[state.served()] > 0) return {};
  RefreshHold hold;
  hold.whole_pc = true;
  const BankCoord any{pc_, 0, 0};
  const bool any_open = state.any_open();
  const DramCommand cmd = any_open ? DramCommand::PREA : DramCommand::REFab;
  const Cycle e = timing_.earliest(cmd, any);
  if (e > t) {
    next = std::min(next, e);
    return hold;
  }
  timing_.issue(cmd, any, t);
  if (any_open) {
    ++pre_;
    state.close_all();
  } else {
    ++refab_;
    paid();
  }
  next = std::min(next, t + 1);
  return hold;
}

void AllBankRefresh::account_idle(ControllerState& state, Cycle bulk) {
  refab_ += bulk;
  if (bulk > 0) state.close_all();
}

bool AllBankRefresh::issue_idle(ControllerState& state, Cycle at, Cycle now) {
  const BankCoord any{pc_, 0, 0};
  if (state.any_open()) {
    at = std::max(at, timing_.earliest_in_pc(DramCommand::PREA, any));
    if (at > now) return false;
    timing_.issue(DramCommand::PREA, any, at);
    ++pre_;
    state.close_all();
  }
  at = std::max(at, timing_.earliest_in_pc(DramCommand::REFab, any));
  if (at > now) return false;
  timing_.issue(DramCommand::REFab, any, at);
  ++refab_;
  return true;
}

}  // namespace sohusim::memory
