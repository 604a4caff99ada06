#pragma once
// PerBankRefreshPlan: which bank each per-bank refresh (REFpb) of one pseudo-channel
// refreshes, as FastDram's single accesses see it.
//
// DramController (its PerBankRefresh) gives the k-th REFpb (k >= 1, due at k x step,
// step = tREFI / banks) to a bank it chooses when the refresh falls due: the first bank,
// in round robin from the one after the last refreshed, that has not been refreshed in the
// current round and has no request queued; if every bank left has requests queued, the
// first of those. A round ends when every bank has had its refresh. So with few requests
// in flight a REFpb goes to an idle bank and the banks being used are refreshed when they
// fall idle, rather than in a fixed rotation.
//
// FastDram books an access when it is enqueued, ahead of its commands. It decides a REFpb
// for good at the first booking after it falls due, from what is booked then (the
// caller's `busy` predicate: whether a bank has a request queued at the due time), so that
// the decision counts the requests that came before the due time and no others; a
// question about a later time is answered from a copy of the plan (plans are small values)
// that decides the REFpbs up to then from what is booked so far (FastDram::decide_refreshes).
//
// Each bank remembers the due times of its last kHistory REFpbs; a question about an
// earlier time than those answers "none".

#include <array>
#include <cstdint>
#include <vector>

#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

class PerBankRefreshPlan {
 public:
  static constexpr std::size_t kHistory = 4;

  /// `banks` per pseudo-channel (> 0); `step`: cycles between REFpbs (> 0).
  PerBankRefreshPlan(std::uint32_t banks, Cycle step);

  /// Decides every REFpb due at or before `t` not decided yet; busy(bank, due) tells
  /// whether `bank` has a request queued at `due`.
  template <class Busy>
  void decide_through(Cycle t, Busy&& busy) {
    decide_through(t, busy, [](std::uint32_t, Cycle) {});
  }
  /// The same, calling decided(bank, due) for each REFpb as it is decided.
  template <class Busy, class Decided>
  void decide_through(Cycle t, Busy&& busy, Decided&& decided) {
    while (next_k_ * step_ <= t) {
      const Cycle due = next_k_ * step_;
      if (refreshed_count_ == banks_) new_round();
      std::uint32_t target = banks_;
      for (std::uint32_t i = 0; i < banks_; ++i) {
        const std::uint32_t b = (rr_ + i) % banks_;
        if (refreshed_[b]) continue;
        if (!busy(b, due)) {
          target = b;
          break;
        }
        if (target == banks_) target = b;  // the fallback: the first busy one left
      }
      refresh(target, due);
      decided(target, due);
      ++next_k_;
    }
  }

  static constexpr std::uint32_t kNone = 0xffffffffu;
  /// The bank given the decided REFpb due at `due`; kNone if none is known.
  std::uint32_t bank_due(Cycle due) const;
  /// The due time of `bank`'s latest REFpb at or before `t` among those decided; 0 if none.
  Cycle latest(std::uint32_t bank, Cycle t) const;
  /// The due time of `bank`'s first decided REFpb in (from, to]; kNever if none.
  Cycle first_after(std::uint32_t bank, Cycle from, Cycle to) const;
  /// Whether `bank` has a decided REFpb due in (from, to].
  bool refreshed_in(std::uint32_t bank, Cycle from, Cycle to) const { return first_after(bank, from, to) != kNever; }
  /// Every REFpb due at or before this has been decided.
  Cycle decided_through() const { return next_k_ * step_ - 1; }

 private:
  void new_round();
  void refresh(std::uint32_t bank, Cycle due);

  std::uint32_t banks_;
  Cycle step_;
  Cycle next_k_ = 1;  // the first REFpb not decided yet
  std::uint32_t rr_ = 0;
  std::uint32_t refreshed_count_ = 0;
  std::vector<std::uint8_t> refreshed_;            // in the current round
  std::vector<std::array<Cycle, kHistory>> dues_;  // per bank, most recent first; 0: none
};

}  // namespace sohusim::memory
