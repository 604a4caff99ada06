#include "refresh/per_bank_refresh.hpp"

#include <algorithm>

#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/dram_controller.hpp"

namespace sohusim::memory {

PerBankRefresh::PerBankRefresh(Cycle step, std::uint32_t postpone, ChannelTiming& timing, std::uint32_t pc,
                               std::uint32_t banks_per_group, std::uint32_t banks, const PcStats& stats)
    : Refresh(step, postpone),
      timing_(timing),
      pc_(pc),
      banks_per_group_(banks_per_group),
      pre_(stats.pre),
      refpb_(stats.refpb),
      refreshed_(banks, 0) {}

std::uint32_t PerBankRefresh::choose_target(const ControllerState& state) {
  const auto n = static_cast<std::uint32_t>(refreshed_.size());
  if (refreshed_count_ == n) {
    std::fill(refreshed_.begin(), refreshed_.end(), 0);
    refreshed_count_ = 0;
  }
  std::uint32_t fallback = ControllerState::kNoBank;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t b = (rr_ + i) % n;
    if (refreshed_[b]) continue;
    const BankState& bank = state.banks[b];
    if (bank.queued[0] + bank.queued[1] == 0) return b;
    if (fallback == ControllerState::kNoBank) fallback = b;
  }
  return fallback;
}

void PerBankRefresh::refreshed(std::uint32_t b) {
  const auto n = static_cast<std::uint32_t>(refreshed_.size());
  if (refreshed_count_ == n) {
    std::fill(refreshed_.begin(), refreshed_.end(), 0);
    refreshed_count_ = 0;
  }
  if (!refreshed_[b]) {
    refreshed_[b] = 1;
    ++refreshed_count_;
  }
  rr_ = (b + 1) % n;
}

RefreshHold PerBankRefresh::step(ControllerState& state, Cycle t, Cycle& next) {
  if (target_ == ControllerState::kNoBank) target_ = choose_target(state);
  const std::uint32_t b = target_;
  if (may_postpone() && state.banks[b].hits[state.served()] > 0) return {};
  RefreshHold hold;
  hold.blocked_bank = b;
  const BankCoord where = coord(b);
  const bool open = state.banks[b].open_row != BankState::kClosed;
  const DramCommand cmd = open ? DramCommand::PRE : DramCommand::REFpb;
  const Cycle e = timing_.earliest(cmd, where);
  if (e > t) {
    next = std::min(next, e);
    return hold;
  }
  timing_.issue(cmd, where, t);
  hold.row_bus_used = true;
  if (open) {
    ++pre_;
    state.close_bank(b);
  } else {
    ++refpb_;
    paid();
    refreshed(b);
    target_ = ControllerState::kNoBank;
  }
  next = std::min(next, t + 1);
  return hold;
}

void PerBankRefresh::account_idle(ControllerState& state, Cycle bulk) {
  // No request is queued, so the target choice is plain round robin.
  const auto n = static_cast<std::uint32_t>(refreshed_.size());
  refpb_ += bulk;
  if (bulk >= n) state.close_all();  // every bank was refreshed at least once
  for (Cycle i = 0; i < bulk % n; ++i) {
    const std::uint32_t b = choose_target(state);
    state.close_bank(b);
    refreshed(b);
  }
  target_ = ControllerState::kNoBank;
}

bool PerBankRefresh::issue_idle(ControllerState& state, Cycle at, Cycle now) {
  const std::uint32_t b = choose_target(state);
  const BankCoord where = coord(b);
  if (state.banks[b].open_row != BankState::kClosed) {
    at = std::max(at, timing_.earliest_in_pc(DramCommand::PRE, where));
    if (at > now) return false;
    timing_.issue(DramCommand::PRE, where, at);
    ++pre_;
    state.close_bank(b);
  }
  at = std::max(at, timing_.earliest_in_pc(DramCommand::REFpb, where));
  if (at > now) return false;
  timing_.issue(DramCommand::REFpb, where, at);
  ++refpb_;
  refreshed(b);
  return true;
}

}  // namespace sohusim::memory
