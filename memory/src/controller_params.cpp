// The controller keys: hbm.controller.*, one row each. The rows declare the schema
// (hbm_schema), give ControllerParams its defaults and load it (from_config).
#include "sohusim/memory/controller_params.hpp"

#include "sohusim/config/param_table.hpp"

namespace sohusim::memory {

ControllerParams::ControllerParams() {
  params().set_defaults(*this);
}

const config::ParamTable<ControllerParams>& ControllerParams::params() {
  using P = config::ParamTable<ControllerParams>;
  using C = ControllerParams;
  static const P table(
      "hbm.controller", "memory controller, one per pseudo-channel",
      {
          P::uinteger("read_queue", &C::read_queue, 64, 1, 1024, "read queue entries"),
          P::uinteger("write_queue", &C::write_queue, 64, 1, 1024, "write queue entries"),
          P::uinteger("write_high", &C::write_high, 48, 1, 1024,
                      "write-queue level that switches the controller to draining writes"),
          P::uinteger("write_low", &C::write_low, 16, 0, 1024,
                      "write-queue level at which draining stops (if reads wait)"),
          P::uinteger("read_starvation", &C::read_starvation, 2000, 1, 10000000,
                      "cycles a read may wait before write draining yields to it")
              .unit("cycles"),
          P::enumeration("scheduler", &C::scheduler, "frfcfs",
                         {{"frfcfs", SchedulerKind::FrFcfs}, {"fcfs", SchedulerKind::Fcfs}},
                         "frfcfs: row hits first, then oldest; fcfs: oldest only"),
          P::enumeration("bus_arbiter", &C::bus_arbiter, "fixed",
                         {{"fixed", BusArbiter::Fixed}, {"oldest", BusArbiter::Oldest}},
                         "which pseudo-channel of a channel steps first, and so takes the shared command buses, "
                         "when both have work at the same cycle: fixed: the lower-numbered one; oldest: the one "
                         "holding the older request (detailed fidelity only)"),
          P::enumeration(
              "page_policy", &C::page_policy, "adaptive",
              {{"open", PagePolicy::Open}, {"closed", PagePolicy::Closed}, {"adaptive", PagePolicy::Adaptive}},
              "open: keep rows open; closed: auto-precharge every access; adaptive: close when no queued "
              "request hits the row"),
          P::enumeration(
              "refresh", &C::refresh, "allbank",
              {{"allbank", RefreshMode::AllBank}, {"perbank", RefreshMode::PerBank}, {"off", RefreshMode::Off}},
              "allbank: REFab every tREFI; perbank: REFpb every tREFI/banks, round robin; off"),
          P::uinteger("refresh_postpone", &C::refresh_postpone, 0, 0, 8,
                      "refreshes that may be owed while row hits are waiting; beyond it refresh is forced"),
          P::uinteger("latency", &C::latency, 16, 0, 10000, "controller + PHY cycles added to every completion")
              .unit("cycles"),
          P::uinteger("write_forward_latency", &C::write_forward_latency, 4, 0, 10000,
                      "cycles for a read served from a queued write to the same address (+ latency)")
              .unit("cycles"),
      });
  return table;
}

ControllerParams ControllerParams::from_config(const config::Config& config) {
  ControllerParams p;
  params().load(config, p);
  return p;
}

}  // namespace sohusim::memory
