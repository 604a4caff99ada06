#pragma once
// The configuration keys of pcie/: `pcie.link.*` (the link, see link_params.hpp),
// `pcie.root.*` (root complex, host-memory path, MMIO) and `pcie.iommu.*`.
#include "sohusim/config/config.hpp"
#include "sohusim/config/config_schema.hpp"
#include "sohusim/pcie/iommu.hpp"

namespace sohusim::pcie {

config::Schema pcie_schema();

/// `pcie.iommu.*`; the page tables live in the top 64 MiB of host memory
/// (`host_dram.capacity`), where the walks' reads land in the host DRAM model.
IommuParams iommu_params_from_config(const config::Config& config);

}  // namespace sohusim::pcie
