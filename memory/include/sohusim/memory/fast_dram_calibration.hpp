#pragma once
// FastDramCalibration: the fast HBM model's calibrated terms (FastDram charges them per
// access), plain data without SystemC so that the hbm.* schema can offer them as keys.

namespace sohusim::config {
class Config;
template <class T>
class ParamTable;
}  // namespace sohusim::config

namespace sohusim::memory {

// The calibrated terms, in memory-clock cycles. `fitted()` is the table that
// scripts/calibrate_fast_hbm.py writes (memory/src/fast_dram_calibration.cpp) from runs of
// both fidelities; the hbm.fast.* keys override each term. `params()` lists them once, with
// range and meaning (memory/src/fast_dram_terms.cpp), for the schema, the loading and the
// checks; its defaults are fitted(). The defaults below are an uncalibrated model's.
struct FastDramCalibration {
  double act_gap = 6.0;            // cycles between a pseudo-channel's activations
  double switch_bus_cost = 0.0;    // data-bus cycles per change of direction between single accesses
  double switch_act_cost = 0.0;    // activation-pipeline cycles per change of direction, likewise
  double write_switch_cost = 0.0;  // cycles per bulk write access among reads, on both servers
  double stream_act_cost = 0.0;    // data-bus cycles a bulk transfer loses per activation

  /// hbm.fast.*: one row per term. A term whose minimum is above 0 (act_gap) must be above
  /// 0 in an embedder's calibration too; the schema's minimum is the least worth writing.
  static const config::ParamTable<FastDramCalibration>& params();
  static FastDramCalibration fitted();
  // Reads hbm.fast.* over the fitted values.
  static FastDramCalibration from_config(const config::Config& config);
};

}  // namespace sohusim::memory
