#pragma once
// Previous release's path: the unit is sohusim/platform/host_agent.hpp, namespace sohusim::platform.
#include "sohusim/platform/host_agent.hpp"

namespace sohusim::models {
using namespace sohusim::platform;  // NOLINT(google-build-using-namespace): the old qualified names
}  // namespace sohusim::models
