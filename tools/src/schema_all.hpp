#pragma once
// The schema the command line validates against: every layer's parameters
// merged. Each layer declares its own next to the objects that use them; this is
// the one place that knows which layers exist.

#include "sohusim/config/config_schema.hpp"

namespace sohusim::tools {

config::Schema full_schema();
// Parameters of `sohusim demo` (the `demo.*` section).
config::Schema demo_schema();

}  // namespace sohusim::tools
