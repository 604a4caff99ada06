// The fast HBM model's calibration table. Written by scripts/calibrate_fast_hbm.py from
// runs of both fidelities (sohusim mem --preset hbm3-6400); do not edit by hand: run the
// script again. Fast against detailed bandwidth on the fitted cases:
//   random 32                -1.8 %   --pattern random --size 32 --initiators 8 --outstanding 256
//   random 32 refresh off    +2.6 %   --pattern random --size 32 --initiators 8 --outstanding 256 --refresh off
//   random 32 per-bank       +2.6 %   --pattern random --size 32 --initiators 8 --outstanding 256 --refresh perbank
//   stream 32                +1.1 %   --pattern stream --size 32 --initiators 8 --outstanding 256
//   stream 67% 32            -9.0 %   --pattern stream --reads 67 --size 32 --initiators 8 --outstanding 256
//   stream 50% 64            +3.5 %   --pattern stream --reads 50 --size 64 --initiators 8 --outstanding 256
//   random 67% 32            -3.0 %   --pattern random --reads 67 --size 32 --initiators 8 --outstanding 256
//   strided 1056 80% 32      +3.2 %   --pattern strided:1056 --reads 80 --size 32 --initiators 8 --outstanding 256
//   strided 1056 32          -4.0 %   --pattern strided:1056 --size 32 --initiators 8 --outstanding 256
//   stream 67% 256          +26.0 %   --pattern stream --reads 67 --size 256 --initiators 8 --outstanding 16
//   stream 67% 4KiB          -2.5 %   --pattern stream --reads 67 --size 4KiB --initiators 8 --outstanding 32
//   stream 67% 16KiB         +0.1 %   --pattern stream --reads 67 --size 16KiB --initiators 8 --outstanding 4
//   stream 0% 16KiB          +0.6 %   --pattern stream --reads 0 --size 16KiB --initiators 8 --outstanding 4
//   stream 0% 16KiB deep     -2.5 %   --pattern stream --reads 0 --size 16KiB --initiators 8 --outstanding 32
//   stream 32KiB deep        -0.8 %   --pattern stream --size 32KiB --initiators 8 --outstanding 32
//   random 67% 16KiB         +3.8 %   --pattern random --reads 67 --size 16KiB --initiators 8 --outstanding 4
//   random 4KiB              +9.2 %   --pattern random --size 4KiB --initiators 8 --outstanding 32
//   stream 256 few           +6.2 %   --pattern stream --size 256 --initiators 8 --outstanding 1
//   random 1KiB few          +4.7 %   --pattern random --size 1KiB --initiators 8 --outstanding 4
//   sohu stream 64KiB        +0.1 %   --preset hbm3e-8000 --stacks 6 --pattern stream --size 64KiB --initiators 16 --outstanding 1
//   sohu stream 256KiB       +0.2 %   --preset hbm3e-8000 --stacks 6 --pattern stream --size 256KiB --initiators 16 --outstanding 2
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
