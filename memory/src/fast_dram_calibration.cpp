// The fast HBM model's calibration table. Written by scripts/calibrate_fast_hbm.py from
// runs of both fidelities (sohusim mem); do not edit by hand: run the
// script again. Fast against detailed bandwidth on the fitted cases (their arguments are the
// script's CASES):
//   random 32                -1.8 %
//   random 32 refresh off    +2.6 %
//   random 32 per-bank       +2.6 %
//   stream 32                +1.1 %
//   stream 67% 32            -9.0 %
//   stream 50% 64            +3.5 %
//   random 67% 32            -3.0 %
//   strided 1056 80% 32      +3.2 %
//   strided 1056 32          -4.0 %
//   stream 67% 256          +26.0 %
//   stream 67% 4KiB          -2.5 %
//   stream 67% 16KiB         +0.1 %
//   stream 0% 16KiB          +0.6 %
//   stream 0% 16KiB deep     -2.5 %
//   stream 32KiB deep        -0.8 %
//   random 67% 16KiB         +3.8 %
//   random 4KiB              +9.2 %
//   stream 256 few           +6.2 %
//   random 1KiB few          +4.7 %
//   sohu stream 64KiB        +0.1 %
//   sohu stream 256KiB       +0.2 %
#include "sohusim/memory/fast_dram_calibration.hpp"

namespace sohusim::memory {

FastDramCalibration FastDramCalibration::fitted() {
  FastDramCalibration c;
  c.act_gap = 5.6857;
  c.switch_bus_cost = 7.0628;
  c.switch_act_cost = 24.8503;
  c.write_switch_cost = 1.7779;
  c.stream_act_cost = 0.3014;
  return c;
}

}  // namespace sohusim::memory
