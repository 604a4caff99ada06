#pragma once
// The configuration keys of pcie/: `pcie.link.*` (the link, see link_params.hpp),
// `pcie.root.*` (root complex, host-memory path, MMIO) and `pcie.iommu.*`.
#include "sohusim/sim/config_schema.hpp"

namespace sohusim::pcie {

sim::Schema pcie_schema();

}  // namespace sohusim::pcie
