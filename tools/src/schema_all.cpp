#include "schema_all.hpp"

#include "sohusim/device/device_schema.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/pcie/pcie_schema.hpp"
#include "sohusim/sim/core_schema.hpp"

namespace sohusim::tools {

config::Schema full_schema() {
  config::Schema s = sim::core_schema();
  s.merge(demo_schema());
  s.merge(memory::memory_schema());
  s.merge(pcie::pcie_schema());
  s.merge(device::device_schema());
  return s;
}

}  // namespace sohusim::tools
