#include "sohusim/models/host_system.hpp"

#include <stdexcept>

#include "sohusim/pcie/link_params.hpp"
#include "sohusim/pcie/pcie_schema.hpp"

namespace sohusim::models {

HostSystem::HostSystem(const sim::Config& config, const sim::Instrumentation& inst, const std::string& host,
                       const std::string& device, unsigned index) {
  memory::HostDramParams hp = memory::HostDramParams::from_config(config);
  hp.functional = true;
  hp.validate();
  dram_ = std::make_unique<memory::HostDram>((host + "_dram").c_str(), hp, inst, host + ".dram");
  pcie::IommuParams ip = pcie::iommu_params_from_config(config);
  ip.validate();
  if (ip.enabled) iommu_ = std::make_unique<pcie::Iommu>(ip, counters::Scope(*inst.registry, host + ".iommu"));
  dma_limit_ = ip.page_table_base;
  irq_ = std::make_unique<pcie::InterruptController>(inst, host + ".irq");
  const pcie::LinkParams lp = pcie::LinkParams::from_config(config);
  pcie::RootComplexParams rp = pcie::RootComplexParams::from_config(config);
  rp.validate();
  link_ = std::make_unique<pcie::PcieLink>((host + "_link").c_str(), lp, inst, host + ".pcie." + device);
  rc_port_ = std::make_unique<pcie::PciePort>((host + "_rc_port").c_str(), lp, pcie::PortParams{}, link_->down(),
                                              link_->up(), inst, host + ".pcie." + device + ".rc");
  ep_port_ = std::make_unique<pcie::PciePort>((device + "_ep_port").c_str(), lp, pcie::PortParams{}, link_->up(),
                                              link_->down(), inst, device + ".pcie");
  rc_ = std::make_unique<pcie::RootComplex>((host + "_rc").c_str(), rp, *rc_port_, iommu_.get(), *irq_, inst,
                                            host + ".rc");
  rc_->memory_socket.bind(dram_->socket);
  device_ = std::make_unique<SohuDevice>(device.c_str(), config, inst, device, index);
  ep_ = std::make_unique<pcie::PcieEndpoint>((device + "_ep").c_str(), kDeviceRid,
                                             SohuDevice::function_spec(device_->params(), lp.generation, lp.lanes),
                                             *ep_port_, *link_, inst, device + ".ep");
  ep_->bar_socket.bind(device_->bar);
  device_->host_dma.bind(ep_->dma_socket);
  device_->attach(*ep_);
  cpu_ = std::make_unique<CpuAgent>((host + "_cpu").c_str(), rp.ecam_base, kCpuMemoryAccessPs);
  cpu_->mmio.bind(rc_->cpu_socket);
  cpu_->memory.bind(dram_->socket);
  if (iommu_) {
    domain_ = iommu_->create_domain();
    iommu_->attach(kDeviceRid, domain_);
  }
}

HostSystem::~HostSystem() = default;

std::uint64_t HostSystem::alloc_dma(std::uint64_t bytes, std::uint64_t align) {
  if (align == 0 || (align & (align - 1)) != 0)
    throw std::invalid_argument("alloc_dma: alignment must be a power of two");
  const std::uint64_t a = (next_dma_ + align - 1) & ~(align - 1);
  const std::uint64_t size = (bytes + 4095) & ~4095ULL;
  if (bytes == 0 || a + size > dma_limit_ || a + size < a) {
    throw std::runtime_error("alloc_dma: " + std::to_string(bytes) +
                             " bytes do not fit in host DRAM below the IOMMU tables (" +
                             std::to_string(dma_limit_ - next_dma_) + " bytes left)");
  }
  next_dma_ = a + size;
  if (iommu_) iommu_->map(domain_, a, a, size, pcie::IommuPerm::ReadWrite);
  return a;
}

}  // namespace sohusim::models
