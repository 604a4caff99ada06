#pragma once
// Previous release's path: the unit is sohusim/config/config_error.hpp, namespace sohusim::config.
#include "sohusim/config/config_error.hpp"

namespace sohusim::sim {
using namespace sohusim::config;  // NOLINT(google-build-using-namespace): the old qualified names
}  // namespace sohusim::sim
