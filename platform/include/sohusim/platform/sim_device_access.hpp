#pragma once
// SimDeviceAccess: driver::DeviceAccess over the simulated host (platform::HostSystem), the
// seam where host software meets the virtual hardware. Each call runs in the calling host
// thread (an SC_THREAD) and blocks it for the modelled time:
//   config space    ECAM reads/writes by the CPU agent (non-posted, full round trip)
//   MMIO            CPU loads (stall for the PCIe round trip) and posted stores
//   DMA memory      host DRAM allocated and mapped in the IOMMU domain of the function
//                   (a PF: its device's domain; a VF: a domain of its own)
//   host_read/write CPU loads/stores to host DRAM (a cached access each)
//   interrupts      enable_msix programs the function's MSI-X table the way the kernel
//                   does for VFIO (vector v of function rid -> host_vector(rid, v), distinct
//                   for every PF and VF of the host)
//   time            now_ns: sc_time_stamp; spend_ns waits; host_clock_ns: the host's own
//                   clock (host::HostClock: offset, drift, read jitter; free to read)
// It knows no driver: it serves any software written against DeviceAccess.
//
// Enumeration (first use of functions(), bar() or enable_msix()) does what firmware and the
// OS do before any driver loads: it sizes each PF's BARs and places BAR0 and BAR2 in the
// windows the host decodes for the device, and sizes the PF's SR-IOV VF BAR0 and places it
// at HostSystem::vf_bar0_address (the upper half of the device's BAR0 window), so VFs have
// register windows the moment software sets VF Enable and VF MSE. Like Linux, it reports a
// VF's IDs as the PF's vendor and the SR-IOV capability's VF Device ID (a VF's own header
// reads 0xFFFF), and a VF's BARs as its slice of the PF's VF BARs (its header BARs are RO 0).
#include <cstdint>
#include <map>
#include <vector>

#include "sohusim/driver/device_access.hpp"
#include "sohusim/host/host_clock.hpp"
#include "sohusim/platform/host_system.hpp"

namespace sohusim::platform {

class SimDeviceAccess : public driver::DeviceAccess {
 public:
  explicit SimDeviceAccess(platform::HostSystem& host, const host::HostClockParams& clock = {})
      : host_(host), clock_(clock) {}

  std::vector<driver::PciFunction> functions() override;
  std::uint32_t config_read32(std::uint16_t rid, std::uint16_t offset) override;
  void config_write32(std::uint16_t rid, std::uint16_t offset, std::uint32_t value) override;
  driver::BarInfo bar(std::uint16_t rid, unsigned index) override;
  std::uint32_t mmio_read32(std::uint64_t address) override;
  std::uint64_t mmio_read64(std::uint64_t address) override;
  void mmio_write32(std::uint64_t address, std::uint32_t value) override;
  void mmio_write64(std::uint64_t address, std::uint64_t value) override;
  driver::DmaBuffer alloc_dma(std::uint16_t rid, std::uint64_t bytes, std::uint64_t align) override;
  void host_write(std::uint64_t iova, const void* data, std::size_t bytes) override;
  void host_read(std::uint64_t iova, void* data, std::size_t bytes) override;
  void enable_msix(std::uint16_t rid, unsigned count) override;
  bool wait_interrupt(std::uint16_t rid, unsigned vector, std::uint64_t timeout_ns) override;
  std::uint64_t now_ns() override;
  void spend_ns(std::uint64_t ns) override;
  std::uint64_t host_clock_ns() override;
  void poll_ns(std::uint64_t ns) override;

  /// The host's clock model: true_ns() is the ground truth host_clock_ns() reads with jitter.
  const host::HostClock& clock() const { return clock_; }

  /// Host CPU time spent on work so far: spend_ns() (the host cost table's charges, which
  /// include building entries in DMA memory) plus MMIO accesses (a read stalls the CPU for
  /// the round trip). Polling passes (poll_ns) and waiting for an interrupt are not work.
  std::uint64_t cpu_busy_ns() const { return cpu_busy_ns_; }
  /// Time spent in polling passes.
  std::uint64_t cpu_poll_ns() const { return cpu_poll_ns_; }

  static constexpr unsigned kVectorsPerFunction = 1024;
  /// The interrupt controller's vector for MSI-X vector `v` (< kVectorsPerFunction) of
  /// function `rid` (bus 1 or above, as every function of a HostSystem):
  /// (rid - 0x100) x kVectorsPerFunction + v. Device d's PF starts at d x 256 x 1024, the
  /// function on devfn f of its bus (a VF) at that + f x 1024: no two functions share one.
  static std::uint32_t host_vector(std::uint16_t rid, unsigned v);

 private:
  /// The device whose bus `rid` is on (its PF or one of its VFs); AccessError naming `call`.
  unsigned slot_of(std::uint16_t rid, const char* call) const;
  /// Sizes and places every device's BARs and SR-IOV VF BARs once, as firmware does before
  /// drivers load.
  void enumerate();
  struct EnabledVf {
    unsigned index = 0;           // VF n of its PF
    bool memory_enabled = false;  // VF MSE
  };
  /// What `rid` (not the PF of device `slot`) is among the PF's enabled VFs, read from the
  /// SR-IOV capability now (VF Enable, NumVFs, offset and stride change at run time).
  /// AccessError naming `call` if it is not an enabled VF.
  EnabledVf enabled_vf(unsigned slot, std::uint16_t rid, const char* call);
  /// VF `vf`'s window of VF BAR `index` of device `slot` (size 0: no such BAR).
  driver::BarInfo vf_bar(unsigned slot, unsigned vf, unsigned index) const;
  struct Bars {
    driver::BarInfo bar[6];
  };
  /// A PF's SR-IOV capability as enumeration found it.
  struct Sriov {
    std::uint16_t cap = 0;  // config-space offset; 0: no SR-IOV capability
    unsigned total_vfs = 0;
    driver::BarInfo vf_bar[6];  // VF 0's window and the per-VF size
  };
  platform::HostSystem& host_;
  std::uint64_t cpu_busy_ns_ = 0, cpu_poll_ns_ = 0;
  host::HostClock clock_;
  bool enumerated_ = false;
  std::map<std::uint16_t, Bars> bars_;  // by PF rid
  std::vector<Sriov> sriov_;            // by device slot
};

}  // namespace sohusim::platform
