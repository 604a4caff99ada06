// The fast HBM model's calibrated terms, each stated once: name, range and meaning. The
// hbm.fast.* schema keys, the checks and scripts/calibrate_fast_hbm.py follow this list;
// the fitted values are in fast_dram_calibration.cpp. Plain data: nothing here needs SystemC.
#include "sohusim/memory/fast_dram_calibration.hpp"

namespace sohusim::memory {

const std::vector<FastDramCalibration::Term>& FastDramCalibration::terms() {
  using C = FastDramCalibration;
  static const std::vector<Term> list = {
      {"act_gap", &C::act_gap, 0.0, true, "cycles between a pseudo-channel's activations (tFAW / 4 in theory)"},
      {"switch_bus_cost", &C::switch_bus_cost, 0.0, false,
       "data-bus cycles per change of direction between single accesses of a pseudo-channel"},
      {"switch_act_cost", &C::switch_act_cost, 0.0, false,
       "activation-pipeline cycles per change of direction between single accesses"},
      {"write_switch_cost", &C::write_switch_cost, 0.0, false,
       "cycles per bulk write access while reads are in flight, on the data bus and the activation pipeline"},
      {"stream_act_cost", &C::stream_act_cost, 0.0, false, "data-bus cycles a bulk transfer loses per activation"},
  };
  return list;
}

}  // namespace sohusim::memory
