// What the tests of platform/ share: the shipped configs folder, Simulator options for a
// shipped system, a substring check for error messages, the names of command slices.
#pragma once

#include <string>
#include <vector>

#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/platform/simulator.hpp"

namespace sohusim::platform::test {

inline std::vector<std::string> config_dirs() {
  return {std::string(SOHUSIM_SOURCE_DIR) + "/configs"};
}

/// `system` from configs/systems; `mode` "functional" makes bytes move (sim.data_mode),
/// "" keeps the system's.
inline SimulatorOptions options(const std::string& system, const std::string& mode = "") {
  SimulatorOptions o;
  o.system = system;
  o.mode = mode;
  o.config_dirs = config_dirs();
  return o;
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// A command processor slice of an I/O command: named by its opcode (GEMM, DMA_COPY, ...).
inline bool is_io_command_name(const std::string& name) {
  for (const device::CommandDesc& c : device::command_table())
    if (c.queue == device::CommandQueue::Io && name == c.name) return true;
  return false;
}

}  // namespace sohusim::platform::test
