#include "sohusim/memory/perbank_refresh_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace sohusim::memory {

PerBankRefreshPlan::PerBankRefreshPlan(std::uint32_t banks, Cycle step)
    : banks_(banks), step_(step), refreshed_(banks, 0), dues_(banks, std::array<Cycle, kHistory>{}) {
  if (banks == 0 || step == 0) throw std::invalid_argument("PerBankRefreshPlan: banks and step must be > 0");
}

void PerBankRefreshPlan::new_round() {
  std::fill(refreshed_.begin(), refreshed_.end(), 0);
  refreshed_count_ = 0;
}

void PerBankRefreshPlan::refresh(std::uint32_t bank, Cycle due) {
  refreshed_[bank] = 1;  // decide_through chose a bank not refreshed in this round
  ++refreshed_count_;
  rr_ = (bank + 1) % banks_;
  auto& d = dues_[bank];
  std::copy_backward(d.begin(), d.end() - 1, d.end());
  d[0] = due;
}

std::uint32_t PerBankRefreshPlan::bank_due(Cycle due) const {
  for (std::uint32_t b = 0; b < banks_; ++b) {
    if (std::find(dues_[b].begin(), dues_[b].end(), due) != dues_[b].end()) return b;
  }
  return kNone;
}

Cycle PerBankRefreshPlan::latest(std::uint32_t bank, Cycle t) const {
  for (Cycle due : dues_[bank]) {
    if (due == 0) return 0;
    if (due <= t) return due;
  }
  return 0;
}

Cycle PerBankRefreshPlan::first_after(std::uint32_t bank, Cycle from, Cycle to) const {
  Cycle first = kNever;
  for (Cycle due : dues_[bank]) {
    if (due == 0 || due <= from) break;
    if (due <= to) first = due;
  }
  return first;
}

}  // namespace sohusim::memory
