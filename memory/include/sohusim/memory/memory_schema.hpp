#pragma once
// memory_schema(): every parameter of memory/, for a tool to merge with the other layers'.
//
//   hbm.*          the HBM stacks: standard, geometry, timing, controller, mapping
//                  (hbm_schema(), declared next to the detailed model)
//   hbm.target.*   the TLM target in front of them: fidelity override, transaction limit,
//                  bulk requests, bandwidth-track interval (hbm_memory.hpp)
//   sram.*         the on-chip scratchpad (sram.hpp)
//   host_dram.*    the host's DDR5 memory (host_dram.hpp)
#include "sohusim/config/config_schema.hpp"

namespace sohusim::memory {

/// hbm_schema() merged with the parameters of the TLM target, the SRAM and host DRAM.
config::Schema memory_schema();

/// Only the parameters declared in memory_schema.cpp (hbm.target.*, sram.*, host_dram.*).
config::Schema memory_frontend_schema();

}  // namespace sohusim::memory
