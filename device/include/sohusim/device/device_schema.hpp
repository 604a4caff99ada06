#pragma once
// The device's parameters (`device.*`), declared next to the model that uses them, as
// gem5 declares Params. An architecture preset (configs/arch/*.yaml: sohu, a100-like,
// h100-like) sets them together with the HBM (`hbm.*`, through `extends:`), the SRAM
// (`sram.*`), the engine clock (`sim.clocks.engine`) and the PCIe link (`pcie.link.*`).
// docs/device.md lists every key with its assumption or source.
#include "sohusim/config/config_schema.hpp"

namespace sohusim::device {

config::Schema device_schema();

}  // namespace sohusim::device
