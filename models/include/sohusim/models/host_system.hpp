#pragma once
// HostSystem: one host with one Sohu device on its root port — the host platform of
// DESIGN.md section 2 (models/): host DRAM, the root complex with its IOMMU and interrupt
// controller, a CPU agent issuing MMIO, the PCIe link, the device's endpoint and the
// device, wired as on a real machine. The driver side reaches it only through the CPU agent
// (MMIO, config space, its DRAM), DMA buffers it maps in the IOMMU, and interrupt vectors;
// platform/ (a later layer) builds multi-device, multi-host systems from the same parts.
//
// Host DRAM always holds bytes here, whatever sim.data_mode says: queues, completion
// entries and trace records are real data the driver reads (a timing run moves no tensor
// bytes through it unless asked to).
#include <cstdint>
#include <memory>
#include <string>

#include "sohusim/memory/host_dram.hpp"
#include "sohusim/models/cpu_agent.hpp"
#include "sohusim/models/sohu_device.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/pcie/pcie_endpoint.hpp"
#include "sohusim/pcie/pcie_link.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/pcie/root_complex.hpp"
#include "sohusim/sim/config.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::models {

class HostSystem {
 public:
  static constexpr pcie::RequesterId kDeviceRid = pcie::make_rid(1, 0, 0);
  static constexpr std::uint64_t kBar0 = 0xF000'0000ULL;       // where probe() places BAR0
  static constexpr std::uint64_t kBar2 = 0x100'0000'0000ULL;   // and BAR2 (64-bit, above 1 TiB)
  static constexpr std::uint64_t kCpuMemoryAccessPs = 20'000;  // a CPU load/store to cached DRAM (assumption)

  /// Builds everything from the config (which must come from tools' full schema: core,
  /// memory, pcie and device). `host` and `device` are the stats prefixes (host0, dev0).
  /// `index` is the device's number among the devices its chip-to-chip ports reach.
  HostSystem(const sim::Config& config, const sim::Instrumentation& inst, const std::string& host = "host0",
             const std::string& device = "dev0", unsigned index = 0);
  ~HostSystem();

  CpuAgent& cpu() { return *cpu_; }
  memory::HostDram& dram() { return *dram_; }
  pcie::Iommu* iommu() { return iommu_.get(); }
  pcie::InterruptController& irq() { return *irq_; }
  pcie::PcieLink& link() { return *link_; }
  pcie::PcieEndpoint& endpoint() { return *ep_; }
  SohuDevice& device() { return *device_; }

  /// Allocates `bytes` of host DRAM for DMA (`align` a power of two) and maps it for the
  /// device in the IOMMU (IOVA = physical address). Throws std::runtime_error when DRAM
  /// below the IOMMU's page tables is exhausted.
  std::uint64_t alloc_dma(std::uint64_t bytes, std::uint64_t align = 4096);
  /// Syncs the link's lazily kept statistics (call before reading link counters).
  void sync_stats() { link_->sync_stats(); }

 private:
  std::unique_ptr<memory::HostDram> dram_;
  std::unique_ptr<pcie::Iommu> iommu_;
  std::unique_ptr<pcie::InterruptController> irq_;
  std::unique_ptr<pcie::PcieLink> link_;
  std::unique_ptr<pcie::PciePort> rc_port_, ep_port_;
  std::unique_ptr<pcie::RootComplex> rc_;
  std::unique_ptr<SohuDevice> device_;
  std::unique_ptr<pcie::PcieEndpoint> ep_;
  std::unique_ptr<CpuAgent> cpu_;
  pcie::DomainId domain_ = 0;
  std::uint64_t next_dma_ = 16ULL << 20;
  std::uint64_t dma_limit_ = 0;
};

}  // namespace sohusim::models
