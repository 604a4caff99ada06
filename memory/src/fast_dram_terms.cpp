// The fast HBM model's calibrated terms, each stated once: name, range and meaning. The
// hbm.fast.* schema keys, the checks and scripts/calibrate_fast_hbm.py follow this list;
// the fitted values, the defaults, are in fast_dram_calibration.cpp. Plain data: nothing
// here needs SystemC.
#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/fast_dram_calibration.hpp"

namespace sohusim::memory {

const config::ParamTable<FastDramCalibration>& FastDramCalibration::params() {
  using P = config::ParamTable<FastDramCalibration>;
  using C = FastDramCalibration;
  const C fit = fitted();
  // Every term is at most 1e6 cycles; a minimum above 0 means "above 0" (see check_calibration).
  const auto term = [&fit](const char* name, double C::*member, double min, const char* description) {
    return P::real(name, member, fit.*member, min, 1e6, description).unit("cycles");
  };
  static const P table(
      "hbm.fast", "fast fidelity: calibrated terms (scripts/calibrate_fast_hbm.py fits them)",
      {
          term("act_gap", &C::act_gap, 1e-6, "cycles between a pseudo-channel's activations (tFAW / 4 in theory)"),
          term("switch_bus_cost", &C::switch_bus_cost, 0.0,
               "data-bus cycles per change of direction between single accesses of a pseudo-channel"),
          term("switch_act_cost", &C::switch_act_cost, 0.0,
               "activation-pipeline cycles per change of direction between single accesses"),
          term("write_switch_cost", &C::write_switch_cost, 0.0,
               "cycles per bulk write access while reads are in flight, on the data bus and the activation pipeline"),
          term("stream_act_cost", &C::stream_act_cost, 0.0, "data-bus cycles a bulk transfer loses per activation"),
      });
  return table;
}

FastDramCalibration FastDramCalibration::from_config(const config::Config& config) {
  FastDramCalibration c = fitted();
  params().load(config, c);
  return c;
}

}  // namespace sohusim::memory
