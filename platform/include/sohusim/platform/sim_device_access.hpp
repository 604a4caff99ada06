#pragma once
// SimDeviceAccess: driver::DeviceAccess over the simulated host (models::HostSystem), the
// seam where host software meets the virtual hardware. Each call runs in the calling host
// thread (an SC_THREAD) and blocks it for the modelled time:
//   config space    ECAM reads/writes by the CPU agent (non-posted, full round trip)
//   MMIO            CPU loads (stall for the PCIe round trip) and posted stores
//   DMA memory      host DRAM allocated and mapped in the IOMMU domain of the function
//   host_read/write CPU loads/stores to host DRAM (a cached access each)
//   interrupts      enable_msix programs the function's MSI-X table the way the kernel
//                   does for VFIO (vector v of device d -> host vector d x 1024 + v)
//   time            sc_time_stamp; spend_ns waits
// It knows no driver: it serves any software written against DeviceAccess.
#include <cstdint>
#include <map>
#include <vector>

#include "sohusim/driver/device_access.hpp"
#include "sohusim/models/host_system.hpp"

namespace sohusim::platform {

class SimDeviceAccess : public driver::DeviceAccess {
 public:
  explicit SimDeviceAccess(models::HostSystem& host) : host_(host) {}

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

  static constexpr unsigned kVectorsPerFunction = 1024;

 private:
  unsigned slot_of(std::uint16_t rid, const char* call) const;
  /// Sizes and places every device's BARs once, as firmware does before drivers load.
  void enumerate();
  struct Bars {
    driver::BarInfo bar[6];
  };
  models::HostSystem& host_;
  bool enumerated_ = false;
  std::map<std::uint16_t, Bars> bars_;
};

}  // namespace sohusim::platform
