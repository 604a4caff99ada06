// What the tests of platform/ share: the shipped configs folder, Simulator options for a
// shipped system, and a substring check for error messages.
#pragma once

#include <string>
#include <vector>

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

}  // namespace sohusim::platform::test
