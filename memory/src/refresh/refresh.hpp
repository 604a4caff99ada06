#pragma once
// Refresh: how the controller of one pseudo-channel refreshes its banks, one class per
// hbm.controller.refresh mode: AllBankRefresh (a REFab every tREFI), PerBankRefresh (a REFpb
// every tREFI / banks, to a bank it chooses) and NoRefresh.
//
// Use (DramController): each step, account(t) counts the refreshes that fell due up to t;
// while owed() > 0, step() issues the refresh's next command (PREA or REFab, PRE or REFpb)
// if the timing allows and says what the refresh holds this step: the whole pseudo-channel,
// one bank, the row bus. due() is the next due time, a cycle the controller must wake at
// (kNever: none). catch_up() accounts the refreshes of an idle controller.
//
// A due refresh is owed. Up to refresh_postpone owed refreshes wait while row hits of the
// direction served are queued (per-bank: hits to the bank it refreshes); beyond that the
// refresh is forced.
//
// Refresh never wakes an idle controller: catch_up() accounts the refreshes that fell due
// while it held no request in bulk (counts, rows closed) and issues the last one at its due
// time, so the owner of an idle memory sleeps.
#include <cstdint>
#include <memory>

#include "sohusim/memory/controller_params.hpp"
#include "sohusim/memory/controller_state.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

class ChannelTiming;
struct DramSpec;
struct PcStats;

/// What a refresh holds in the step it runs in.
struct RefreshHold {
  bool whole_pc = false;      // all-bank: the pseudo-channel issues nothing else
  bool row_bus_used = false;  // the refresh issued a row command
  // per-bank: its bank, which takes no other command
  std::uint32_t blocked_bank = ControllerState::kNoBank;
};

class Refresh {
 public:
  virtual ~Refresh() = default;

  /// Counts the refreshes that fell due up to t.
  void account(Cycle t) {
    if (due_ <= t) {
      const Cycle k = (t - due_) / interval_ + 1;
      owed_ += static_cast<std::uint32_t>(k);
      due_ += k * interval_;
    }
  }
  std::uint32_t owed() const { return owed_; }
  /// The next due time; kNever without refresh.
  Cycle due() const { return due_; }

  /// Precondition: owed() > 0. Issues the refresh's next command at t if it may and is
  /// not postponed; lowers `next` to the cycle it wants to run again at.
  virtual RefreshHold step(ControllerState& state, Cycle t, Cycle& next) = 0;
  /// Whether an arriving request must wake the controller at once (a per-bank refresh
  /// chooses its bank by the queues).
  virtual bool wakes_on_enqueue() const { return false; }

  /// For a controller that held no request: accounts the refreshes due up to `now`, all but
  /// the last in bulk, and issues the last at its due time (or as soon after as the timing
  /// allows; if that is still ahead of `now`, step() will issue it).
  void catch_up(ControllerState& state, Cycle now);

 protected:
  /// `interval` 0: no refresh (due() is kNever).
  Refresh(Cycle interval, std::uint32_t postpone)
      : interval_(interval), due_(interval == 0 ? kNever : interval), postpone_(postpone) {}

  /// Whether owed refreshes may still wait for row hits.
  bool may_postpone() const { return owed_ <= postpone_; }
  void paid() { --owed_; }

 private:
  /// catch_up: `bulk` refreshes counted without simulation.
  virtual void account_idle(ControllerState& state, Cycle bulk) = 0;
  /// catch_up: issues the last refresh, due at `at`; false if it cannot issue by `now`.
  virtual bool issue_idle(ControllerState& state, Cycle at, Cycle now) = 0;

  Cycle interval_;
  Cycle due_;
  std::uint32_t owed_ = 0;
  std::uint32_t postpone_;
};

/// The refresh of pseudo-channel `pc` of a channel, as ControllerParams::refresh says.
std::unique_ptr<Refresh> make_refresh(RefreshMode mode, const DramSpec& spec, std::uint32_t postpone,
                                      ChannelTiming& timing, std::uint32_t pc, const PcStats& stats);

}  // namespace sohusim::memory
