#include "sohusim/memory/channel_timing.hpp"

namespace sohusim::memory {

ChannelTiming::ChannelTiming(const DramSpec& spec)
    : table_(spec.table),
      pcs_(spec.org.pseudo_channels),
      bank_groups_(spec.org.bank_groups),
      banks_per_group_(spec.org.banks_per_group),
      groups_per_pc_(spec.org.sids * spec.org.bank_groups),
      banks_per_pc_(spec.org.banks_per_pc()),
      bank_next_(std::size_t{pcs_} * banks_per_pc_ * kDramCommandCount, 0),
      group_next_(std::size_t{pcs_} * groups_per_pc_ * kDramCommandCount, 0),
      pc_next_(std::size_t{pcs_} * kDramCommandCount, 0),
      channel_next_(kDramCommandCount, 0) {
  for (const auto& rule : table_.windows()) {
    if (rule.following == DramCommand::ACT) has_act_window_ = true;
  }
  windows_.resize(std::size_t{pcs_} * table_.windows().size());
  for (std::size_t pc = 0; pc < pcs_; ++pc) {
    for (std::size_t r = 0; r < table_.windows().size(); ++r) {
      windows_[pc * table_.windows().size() + r].ring.assign(table_.windows()[r].window, 0);
    }
  }
}

Cycle ChannelTiming::window_earliest(DramCommand following, std::uint32_t pc) const {
  Cycle t = 0;
  const auto& rules = table_.windows();
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (rules[r].following != following) continue;
    const WindowHistory& h = windows_[pc * rules.size() + r];
    if (h.filled < rules[r].window) continue;
    // The ring's oldest entry is the window-th most recent preceding command.
    const Cycle v = h.ring[h.pos] + rules[r].latency;
    if (v > t) t = v;
  }
  return t;
}

void ChannelTiming::issue(DramCommand command, const BankCoord& at, Cycle t) {
  const std::size_t group_base = std::size_t{at.pc} * groups_per_pc_;
  push(&bank_next_[(std::size_t{at.pc} * banks_per_pc_ + at.bank) * kDramCommandCount],
       table_.effects(ConstraintScope::SameBank, command), t);
  push(&group_next_[(group_base + at.group) * kDramCommandCount],
       table_.effects(ConstraintScope::SameBankGroup, command), t);
  const auto& other = table_.effects(ConstraintScope::OtherBankGroup, command);
  if (!other.empty()) {
    for (std::uint32_t g = 0; g < groups_per_pc_; ++g) {
      if (g != at.group) push(&group_next_[(group_base + g) * kDramCommandCount], other, t);
    }
  }
  push(&pc_next_[std::size_t{at.pc} * kDramCommandCount], table_.effects(ConstraintScope::SamePseudoChannel, command),
       t);
  push(channel_next_.data(), table_.effects(ConstraintScope::SameChannel, command), t);

  const auto& rules = table_.windows();
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (rules[r].preceding != command) continue;
    WindowHistory& h = windows_[std::size_t{at.pc} * rules.size() + r];
    h.ring[h.pos] = t;
    h.pos = (h.pos + 1) % rules[r].window;
    if (h.filled < rules[r].window) ++h.filled;
  }
}

}  // namespace sohusim::memory
