#pragma once
// HostSystem: one host with its Sohu devices, each on a root port of its own: host DRAM, the
// root complex (one root port and PCIe link per device) with the IOMMU and the interrupt
// controller they share, a CPU agent issuing MMIO, and per device its link, endpoint and the
// device, wired as on a real machine. Software reaches it only through the CPU agent (MMIO, config space, its DRAM),
// DMA buffers mapped in the IOMMU, and interrupt vectors; platform/ assembles hosts into
// systems and puts the driver on top.
//
// Addresses. Device i sits on bus i + 1 (requester id i+1:00.0); its SR-IOV virtual
// functions, once enabled, are functions 1..7 of the same bus. Its BARs are placed by
// whoever enumerates (HostAgent, platform/) at bar0_address(i) (16 MiB apart from
// 0xF0000000, below 4 GiB) and bar2_address(i) (1 TiB apart from 1 TiB); the VFs' BAR0
// windows (the PF's SR-IOV VF BAR0) go to vf_bar0_address(i), the upper half of the same
// 16 MiB window. The CPU's MMIO path decodes those windows and the device's ECAM bus
// window to the device's root port, which is all a VF needs: the endpoint decodes the VF
// windows itself.
//
// IOMMU domains are per requester id, as on a real host: each device's PF has its own
// domain (created with the host), and each VF gets one of its own the first time it is
// attached (attach_function, or alloc_dma_for on the VF). A DMA buffer is mapped for one
// function only (alloc_dma's `device` for a PF, alloc_dma_for's `rid` for any function), so
// a VF's DMA into a PF's buffer, or into another VF's, faults in the IOMMU.
//
// Host DRAM always holds bytes here, whatever sim.data_mode says: queues, completion
// entries and trace records are real data the driver reads (a timing run moves no tensor
// bytes through it unless asked to).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/config/config.hpp"
#include "sohusim/device/sohu_device.hpp"
#include "sohusim/host/cpu_agent.hpp"
#include "sohusim/memory/host_dram.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/pcie/pcie_endpoint.hpp"
#include "sohusim/pcie/pcie_link.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/pcie/root_complex.hpp"
#include "sohusim/sim/address_router.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::platform {

class HostSystem {
 public:
  static constexpr pcie::RequesterId kDeviceRid = pcie::make_rid(1, 0, 0);  // device 0
  static constexpr std::uint64_t kBar0 = 0xF000'0000ULL;                    // device 0's BAR0
  static constexpr std::uint64_t kBar0Stride = 16ULL << 20;
  static constexpr std::uint64_t kBar2 = 0x100'0000'0000ULL;  // device 0's BAR2 (64-bit, above 1 TiB)
  static constexpr std::uint64_t kBar2Stride = 1ULL << 40;
  static constexpr unsigned kMaxDevices = 14;                  // BAR0 windows end below the MSI window (0xFEE00000)
  static constexpr std::uint64_t kCpuMemoryAccessPs = 20'000;  // a CPU load/store to cached DRAM (assumption)

  /// One device of the host: its stats prefix (dev3), its index among the devices its
  /// chip-to-chip ports reach, its configuration (null: the host's) and instrumentation
  /// (registry null: the host's).
  struct DeviceSlot {
    std::string name;
    unsigned index = 0;
    const config::Config* config = nullptr;
    sim::Instrumentation inst{};
  };

  /// Builds the host from `config` (tools'/platform's full schema: core, memory, pcie and
  /// device) with the given devices (1 .. kMaxDevices). `host` is the stats prefix (host0).
  HostSystem(const config::Config& config, const sim::Instrumentation& inst, const std::string& host,
             const std::vector<DeviceSlot>& devices);
  /// One host with one device (the device tests' and `sohusim gemm`'s machine).
  HostSystem(const config::Config& config, const sim::Instrumentation& inst, const std::string& host = "host0",
             const std::string& device = "dev0", unsigned index = 0);
  ~HostSystem();

  const std::string& name() const { return host_; }
  host::CpuAgent& cpu() { return *cpu_; }
  memory::HostDram& dram() { return *dram_; }
  pcie::Iommu* iommu() { return iommu_.get(); }
  pcie::InterruptController& irq() { return *irq_; }

  unsigned device_count() const { return static_cast<unsigned>(slots_.size()); }
  device::SohuDevice& device(unsigned i = 0) { return *slots_.at(i).device; }
  pcie::PcieLink& link(unsigned i = 0) { return *slots_.at(i).link; }
  pcie::PcieEndpoint& endpoint(unsigned i = 0) { return *slots_.at(i).ep; }
  pcie::RootComplex& root_complex(unsigned i = 0) { return *slots_.at(i).rc; }
  static pcie::RequesterId device_rid(unsigned i) { return pcie::make_rid(static_cast<std::uint8_t>(i + 1), 0, 0); }
  static std::uint64_t bar0_address(unsigned i) { return kBar0 + i * kBar0Stride; }
  static std::uint64_t bar2_address(unsigned i) { return kBar2 + i * kBar2Stride; }
  /// Where device i's SR-IOV VF BAR0 goes: the upper half of its BAR0 window (VF n's
  /// registers at vf_bar0_address(i) + n x the per-VF size).
  static constexpr std::uint64_t kVfBar0Offset = kBar0Stride / 2;
  static std::uint64_t vf_bar0_address(unsigned i) { return bar0_address(i) + kVfBar0Offset; }
  /// The device whose PF is requester id `rid`, or -1 (VFs: see function_slot).
  int slot_of(pcie::RequesterId rid) const;
  /// The device `rid` belongs to, as its PF or as one of the VFs its SR-IOV capability can
  /// create (enabled or not), or -1.
  int function_slot(pcie::RequesterId rid) const;

  /// Allocates `bytes` of host DRAM for DMA (`align` a power of two) and maps it for device
  /// `device`'s PF in the IOMMU (IOVA = physical address). Throws std::runtime_error when
  /// DRAM below the IOMMU's page tables is exhausted.
  std::uint64_t alloc_dma(std::uint64_t bytes, std::uint64_t align = 4096, unsigned device = 0);
  /// The same for function `rid` (a PF, or a VF: mapped in the VF's own domain, which
  /// attach_function creates on first use). std::invalid_argument if `rid` is not a function
  /// of this host's devices.
  std::uint64_t alloc_dma_for(pcie::RequesterId rid, std::uint64_t bytes, std::uint64_t align = 4096);
  /// The IOMMU domain of function `rid`: a PF's is its device's; a VF is attached to a new
  /// domain of its own the first time (kNoDomain when the host has no IOMMU).
  /// std::invalid_argument if `rid` is not a function of this host's devices.
  pcie::DomainId attach_function(pcie::RequesterId rid);
  /// Syncs the links' lazily kept statistics (call before reading link counters).
  void sync_stats();

 private:
  struct Slot {
    std::unique_ptr<pcie::PcieLink> link;
    std::unique_ptr<pcie::PciePort> rc_port, ep_port;
    std::unique_ptr<pcie::RootComplex> rc;
    std::unique_ptr<device::SohuDevice> device;
    std::unique_ptr<pcie::PcieEndpoint> ep;
    pcie::DomainId domain = 0;
  };
  /// Takes the next DMA range of host DRAM (`align` a power of two), page-rounded.
  std::uint64_t take_dma(std::uint64_t bytes, std::uint64_t align, std::uint64_t& size);
  /// "PF 01:00.0, VFs 01:00.1 .. 01:00.7" for error messages.
  std::string describe_functions(unsigned slot) const;
  /// function_slot, or std::invalid_argument naming `call` and what the bus holds.
  unsigned checked_function_slot(pcie::RequesterId rid, const char* call) const;
  /// attach_function for a function of device `slot`.
  pcie::DomainId function_domain(pcie::RequesterId rid, unsigned slot);

  std::string host_;
  std::unique_ptr<memory::HostDram> dram_;
  std::unique_ptr<pcie::Iommu> iommu_;
  std::unique_ptr<pcie::InterruptController> irq_;
  std::unique_ptr<sim::AddressRouter> mmio_router_;
  std::vector<Slot> slots_;
  std::unique_ptr<host::CpuAgent> cpu_;
  std::uint64_t next_dma_ = 16ULL << 20;
  std::uint64_t dma_limit_ = 0;
};

}  // namespace sohusim::platform
