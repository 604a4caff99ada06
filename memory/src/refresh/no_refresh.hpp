#pragma once
// NoRefresh: hbm.controller.refresh: off. Nothing ever falls due.
#include "refresh/refresh.hpp"

namespace sohusim::memory {

class NoRefresh final : public Refresh {
 public:
  NoRefresh() : Refresh(0, 0) {}
  RefreshHold step(ControllerState&, Cycle, Cycle&) override { return {}; }

 private:
  void account_idle(ControllerState&, Cycle) override {}
  bool issue_idle(ControllerState&, Cycle, Cycle) override { return true; }
};

}  // namespace sohusim::memory
