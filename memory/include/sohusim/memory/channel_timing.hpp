#pragma once
// ChannelTiming: when each command may next issue on one channel, from the evaluated
// constraint table — the timing engine the controllers ask and the probe-and-issue
// tests check.
//
// It keeps, per scope instance, the earliest legal cycle of every following command:
// one array per bank, per bank group (a SID's bank group), per pseudo-channel and one for
// the channel. Issuing a command pushes those arrays forward by the table's effect list
// (for OtherBankGroup: every other bank group of the pseudo-channel), and keeps the
// history the windowed rows (tFAW) need. Asking is then a max of four loads and the
// window check: the question is asked far more often than commands issue.
//
// The engine knows timing only, not state: whether a bank is open is the controller's
// business. A channel's pseudo-channels share it because they share the row and column
// command buses (channel-scope rows).
#include <cstdint>
#include <vector>

#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

/// A bank's place within its channel, flattened for indexing.
struct BankCoord {
  std::uint32_t pc = 0;     // pseudo-channel within the channel
  std::uint32_t group = 0;  // sid * bank_groups + bank_group
  std::uint32_t bank = 0;   // bank within the pseudo-channel: group * banks_per_group + bank
};

class ChannelTiming {
 public:
  explicit ChannelTiming(const DramSpec& spec);

  BankCoord coord(std::uint32_t pc, std::uint32_t sid, std::uint32_t bank_group, std::uint32_t bank) const {
    const std::uint32_t group = sid * bank_groups_ + bank_group;
    return {pc, group, group * banks_per_group_ + bank};
  }

  /// The earliest cycle at which `command` to `at` satisfies every constraint (0 when
  /// nothing was issued yet). PC-wide commands (PREA, REFab) ignore at.group/at.bank.
  Cycle earliest(DramCommand command, const BankCoord& at) const {
    return max(channel_next_[static_cast<std::size_t>(command)], earliest_in_pc(command, at));
  }
  bool can_issue(DramCommand command, const BankCoord& at, Cycle t) const { return earliest(command, at) <= t; }

  /// earliest() without the channel's buses: for a command of an idle pseudo-channel
  /// accounted after the fact (a refresh that fell due while it held nothing). The buses'
  /// state is their latest use, by the other pseudo-channel maybe long after the due time,
  /// which says nothing about whether they were free then (they were busy for a cycle or
  /// two per command at most).
  Cycle earliest_in_pc(DramCommand command, const BankCoord& at) const {
    const auto c = static_cast<std::size_t>(command);
    Cycle t = pc_next_[at.pc * kDramCommandCount + c];
    t = max(t, group_next_[(at.pc * groups_per_pc_ + at.group) * kDramCommandCount + c]);
    t = max(t, bank_next_[(at.pc * banks_per_pc_ + at.bank) * kDramCommandCount + c]);
    if (command == DramCommand::ACT && has_act_window_) t = max(t, window_earliest(command, at.pc));
    return t;
  }

  /// A lower bound of earliest(command, b) for every bank b of pseudo-channel `pc`: the
  /// channel, pseudo-channel and window constraints. Lets a controller rule out a whole
  /// command class (every ACT while tFAW holds) without asking bank by bank.
  Cycle floor(DramCommand command, std::uint32_t pc) const {
    const auto c = static_cast<std::size_t>(command);
    Cycle t = max(channel_next_[c], pc_next_[pc * kDramCommandCount + c]);
    if (command == DramCommand::ACT && has_act_window_) t = max(t, window_earliest(command, pc));
    return t;
  }

  /// Records `command` at cycle t. The caller has checked can_issue(); issuing earlier
  /// is not detected here (tests probe earliest() instead).
  void issue(DramCommand command, const BankCoord& at, Cycle t);

  std::uint32_t pseudo_channels() const { return pcs_; }
  std::uint32_t banks_per_pc() const { return banks_per_pc_; }

 private:
  static Cycle max(Cycle a, Cycle b) { return a > b ? a : b; }
  Cycle window_earliest(DramCommand following, std::uint32_t pc) const;
  static void push(Cycle* next, const std::vector<ConstraintTable::Effect>& effects, Cycle t) {
    for (const auto& e : effects) {
      Cycle& slot = next[static_cast<std::size_t>(e.following)];
      const Cycle v = t + e.latency;
      if (v > slot) slot = v;
    }
  }

  ConstraintTable table_;  // a copy: the engine outlives no spec
  std::uint32_t pcs_;
  std::uint32_t bank_groups_;
  std::uint32_t banks_per_group_;
  std::uint32_t groups_per_pc_;
  std::uint32_t banks_per_pc_;
  bool has_act_window_ = false;

  std::vector<Cycle> bank_next_;     // [pc][bank][command]
  std::vector<Cycle> group_next_;    // [pc][group][command]
  std::vector<Cycle> pc_next_;       // [pc][command]
  std::vector<Cycle> channel_next_;  // [command]

  // Per pseudo-channel and window rule: a ring of the last `window` issue times of the
  // rule's preceding command.
  struct WindowHistory {
    std::vector<Cycle> ring;
    std::uint32_t pos = 0;
    std::uint32_t filled = 0;
  };
  std::vector<WindowHistory> windows_;  // [pc][rule]
};

}  // namespace sohusim::memory
