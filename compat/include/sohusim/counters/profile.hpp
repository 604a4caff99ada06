#pragma once
// Previous release's path: the unit is sohusim/profiler/profile.hpp, namespace sohusim::profiler.
#include "sohusim/profiler/profile.hpp"

namespace sohusim::counters {
using namespace sohusim::profiler;  // NOLINT(google-build-using-namespace): the old qualified names
}  // namespace sohusim::counters
