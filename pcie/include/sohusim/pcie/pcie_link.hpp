#pragma once
// A PCIe link: two directions (downstream: root port -> endpoint; upstream: endpoint ->
// root port), the link-level power states and training. ASPM L1 is entered when both
// directions have been idle for l1_idle and left (l1_exit) as soon as either has a TLP;
// L0s is per direction (link_direction.hpp). retrain() models a link retrain or hot
// reset: nothing is sent for the training time. pcie.link.aspm_* is the state at start;
// the endpoint changes it when software writes its Link Control ASPM field.
//
// Counters live under the given prefix: <prefix>.down.* and <prefix>.up.*.
#include <memory>
#include <string>

#include <systemc>

#include "sohusim/pcie/link_direction.hpp"
#include "sohusim/pcie/link_params.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie {

class PcieLink : public sc_core::sc_module {
 public:
  PcieLink(sc_core::sc_module_name name, const LinkParams& params, const sim::Instrumentation& inst,
           const std::string& stats_prefix);

  LinkDirection& down() noexcept { return *down_; }
  LinkDirection& up() noexcept { return *up_; }
  const LinkParams& params() const noexcept { return params_; }

  /// Link retrain (hot reset, recovery): both directions stop for the training time plus the
  /// InitFC exchange.
  void retrain();
  /// Brings the residency counters of both directions up to now.
  void sync_stats();
  LinkPowerState state() const noexcept { return down_->power_state(); }
  /// ASPM as software enables it in Link Control (both ends are taken to follow the same
  /// policy, as operating systems set it): L0s per direction, L1 for the link.
  void set_aspm(bool l0s, bool l1);
  bool aspm_l0s() const noexcept { return params_.aspm_l0s; }
  bool aspm_l1() const noexcept { return params_.aspm_l1; }

 private:
  void l1_method();
  void on_idle();
  void on_wake();

  LinkParams params_;
  std::unique_ptr<LinkDirection> down_;
  std::unique_ptr<LinkDirection> up_;
  sc_core::sc_event l1_event_;
};

}  // namespace sohusim::pcie
