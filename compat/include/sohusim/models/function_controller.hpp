#pragma once
// Previous release's path: the unit is sohusim/device/frontend/function_controller.hpp, namespace sohusim::device.
#include "sohusim/device/frontend/function_controller.hpp"

namespace sohusim::models {
using namespace sohusim::device;  // NOLINT(google-build-using-namespace): the old qualified names
}  // namespace sohusim::models
