#include "sohusim/pcie/pcie_link.hpp"

namespace sohusim::pcie {

PcieLink::PcieLink(sc_core::sc_module_name name, const LinkParams& params, const sim::Instrumentation& inst,
                   const std::string& prefix)
    : sc_core::sc_module(name), params_(params) {
  params_.validate();
  down_ = std::make_unique<LinkDirection>("down", params_, inst, prefix + ".down");
  up_ = std::make_unique<LinkDirection>("up", params_, inst, prefix + ".up");
  down_->set_reverse(up_.get());
  up_->set_reverse(down_.get());
  down_->set_wake_listener([this] { on_wake(); });
  up_->set_wake_listener([this] { on_wake(); });
  if (params_.aspm_l1) {
    down_->set_idle_listener([this] { on_idle(); });
    up_->set_idle_listener([this] { on_idle(); });
  }
  SC_HAS_PROCESS(PcieLink);
  SC_METHOD(l1_method);
  sensitive << l1_event_;
  dont_initialize();
}

void PcieLink::set_aspm(bool l0s, bool l1) {
  params_.aspm_l0s = l0s;
  down_->set_aspm_l0s(l0s);
  up_->set_aspm_l0s(l0s);
  if (l1 != params_.aspm_l1) {
    params_.aspm_l1 = l1;
    // The idle timers run only while L1 is enabled (they cost a call per idle period).
    std::function<void()> listener;
    if (l1) listener = [this] { on_idle(); };
    down_->set_idle_listener(listener);
    up_->set_idle_listener(listener);
    if (l1) on_idle();
  }
}

void PcieLink::on_idle() {
  if (!params_.aspm_l1 || !down_->idle() || !up_->idle()) return;
  const std::uint64_t last = std::max(down_->last_activity_ps(), up_->last_activity_ps());
  const std::uint64_t due = last + params_.l1_idle_ps;
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  l1_event_.notify(sc_core::sc_time::from_value(due > now ? due - now : 0));
}

void PcieLink::l1_method() {
  if (!params_.aspm_l1 || down_->power_state() == LinkPowerState::L1 || !down_->idle() || !up_->idle()) return;
  const std::uint64_t last = std::max(down_->last_activity_ps(), up_->last_activity_ps());
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  if (now < last + params_.l1_idle_ps) {
    l1_event_.notify(sc_core::sc_time::from_value(last + params_.l1_idle_ps - now));
    return;
  }
  down_->enter_power_state(LinkPowerState::L1);
  up_->enter_power_state(LinkPowerState::L1);
}

void PcieLink::on_wake() {
  if (down_->power_state() != LinkPowerState::L1) return;
  const std::uint64_t ready = sc_core::sc_time_stamp().value() + params_.l1_exit_ps;
  down_->wake(ready);
  up_->wake(ready);
}

void PcieLink::retrain() {
  // Training, then the InitFC exchange: credits are re-advertised before TLPs flow again.
  const std::uint64_t ready = sc_core::sc_time_stamp().value() + params_.training_ps + params_.init_fc_ps;
  down_->enter_power_state(LinkPowerState::Training);
  up_->enter_power_state(LinkPowerState::Training);
  down_->wake(ready);
  up_->wake(ready);
}

void PcieLink::sync_stats() {
  down_->sync_stats();
  up_->sync_stats();
}

}  // namespace sohusim::pcie
