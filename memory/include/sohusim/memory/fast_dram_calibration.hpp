#pragma once
// FastDramCalibration: the fast HBM model's calibrated terms (FastDram charges them per
// access), plain data without SystemC so that the hbm.* schema can offer them as keys.
#include <vector>

namespace sohusim::config {
class Config;
}

namespace sohusim::memory {

// The calibrated terms, in memory-clock cycles. `fitted()` is the table that
// scripts/calibrate_fast_hbm.py writes (memory/src/fast_dram_calibration.cpp) from runs of
// both fidelities; the hbm.fast.* keys override each term. `terms()` lists them once, with
// range and meaning, for the schema, the checks and the script.
struct FastDramCalibration {
  double act_gap = 6.0;            // cycles between a pseudo-channel's activations
  double switch_bus_cost = 0.0;    // data-bus cycles per change of direction between single accesses
  double switch_act_cost = 0.0;    // activation-pipeline cycles per change of direction, likewise
  double write_switch_cost = 0.0;  // cycles per bulk write access among reads, on both servers
  double stream_act_cost = 0.0;    // data-bus cycles a bulk transfer loses per activation

  struct Term {
    const char* name;
    double FastDramCalibration::*value;
    double least;  // the smallest value allowed (above it, if strictly)
    bool strictly;
    const char* description;
  };
  static const std::vector<Term>& terms();
  static FastDramCalibration fitted();
  // Reads hbm.fast.* (each key the config has overrides the fitted value).
  static FastDramCalibration from_config(const config::Config& config);
};

}  // namespace sohusim::memory
