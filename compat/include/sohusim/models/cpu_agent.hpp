#pragma once
// Previous release's path: the unit is sohusim/host/cpu_agent.hpp, namespace sohusim::host.
#include "sohusim/host/cpu_agent.hpp"

namespace sohusim::models {
using namespace sohusim::host;  // NOLINT(google-build-using-namespace): the old qualified names
}  // namespace sohusim::models
