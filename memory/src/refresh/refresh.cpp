#include "refresh/refresh.hpp"

#include <algorithm>

#include "refresh/all_bank_refresh.hpp"
#include "refresh/no_refresh.hpp"
#include "refresh/per_bank_refresh.hpp"
#include "sohusim/memory/dram_controller.hpp"
#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {

void Refresh::catch_up(ControllerState& state, Cycle now) {
  if (due_ > now) return;
  const Cycle k = (now - due_) / interval_ + 1;
  const Cycle last_due = due_ + (k - 1) * interval_;
  const Cycle bulk = owed_ + k - 1;  // every owed refresh but the last, counted without simulation
  due_ = last_due + interval_;
  owed_ = 1;
  account_idle(state, bulk);
  if (issue_idle(state, last_due, now)) owed_ = 0;
}

std::unique_ptr<Refresh> make_refresh(RefreshMode mode, const DramSpec& spec, std::uint32_t postpone,
                                      ChannelTiming& timing, std::uint32_t pc, const PcStats& stats) {
  switch (mode) {
    case RefreshMode::AllBank:
      return std::make_unique<AllBankRefresh>(spec.timing.REFI, postpone, timing, pc, stats);
    case RefreshMode::PerBank: {
      const std::uint32_t banks = spec.org.banks_per_pc();
      return std::make_unique<PerBankRefresh>(std::max<std::uint32_t>(1, spec.timing.refi_per_bank(banks)), postpone,
                                              timing, pc, spec.org.banks_per_group, banks, stats);
    }
    case RefreshMode::Off:
      break;
  }
  return std::make_unique<NoRefresh>();
}

}  // namespace sohusim::memory
