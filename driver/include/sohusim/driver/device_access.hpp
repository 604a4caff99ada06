#pragma once
// DeviceAccess: everything the driver needs from the machine it runs on, and nothing more.
//
// The driver (device.hpp) and the runtime (runtime.hpp) are written against this interface
// only, so that the same code drives the simulated device and, on silicon, a real one:
//
//   here                          in simulation (platform/)        on Linux with VFIO
//   ----------------------------  -------------------------------  -----------------------------------
//   functions()                   the endpoints of the host's       /sys/bus/pci/devices + the VFIO
//                                 root ports (and enabled VFs)      group's devices
//   config_read32/write32         ECAM accesses by the host CPU     VFIO config region pread/pwrite
//   bar()                         the address enumeration gave      VFIO_DEVICE_GET_REGION_INFO
//   mmio_read*/mmio_write*        CPU loads/stores over PCIe (a     loads/stores into the region's mmap
//                                 read stalls for the round trip)
//   alloc_dma()                   host DRAM + IOMMU mapping         mmap'd anonymous memory +
//                                                                   VFIO_IOMMU_MAP_DMA (IOVA chosen)
//   host_read/host_write          CPU loads/stores to host DRAM     memcpy into the mapping
//   enable_msix/wait_interrupt    MSI-X table programmed, the       VFIO_DEVICE_SET_IRQS with one
//                                 interrupt controller's vector     eventfd per vector; read() blocks
//   now_ns/spend_ns/poll_ns       the host's simulated clock        clock_gettime / real work /
//                                                                   a polling loop's pause
//   host_clock_ns                 the host's clock model (offset,   clock_gettime(CLOCK_MONOTONIC)
//                                 drift, read jitter)
//
// Every call is made from the host thread that runs the driver and may block it for the
// time the operation takes on the modelled machine. Calls throw
// AccessError (errors.hpp) for requests that cannot be served (unknown function, address
// outside every BAR, DMA memory exhausted).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/driver/errors.hpp"  // AccessError, which implementations throw

namespace sohusim::driver {

/// One PCI function the host can see. For a VF the IDs are what Linux's sysfs shows: the
/// PF's vendor and the VF Device ID of the PF's SR-IOV capability (the VF's own config
/// header reads 0xFFFF for both).
struct PciFunction {
  std::uint16_t rid = 0;  // requester id: bus << 8 | device << 3 | function
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  bool virtual_function = false;   // an SR-IOV VF
  std::uint16_t physical_rid = 0;  // for a VF, its PF; for a PF, itself
  std::string name;                // the platform's name for it ("host0/dev3")
};

/// A BAR as enumeration placed it. size 0: the BAR is not implemented.
struct BarInfo {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  bool is_64bit = false;
  bool prefetchable = false;
};

/// Host memory the device may DMA to: `iova` is what the device is given, and what
/// host_read/host_write take.
struct DmaBuffer {
  std::uint64_t iova = 0;
  std::uint64_t size = 0;
};

class DeviceAccess {
 public:
  virtual ~DeviceAccess() = default;

  // ---- discovery and configuration space ----
  virtual std::vector<PciFunction> functions() = 0;
  virtual std::uint32_t config_read32(std::uint16_t rid, std::uint16_t offset) = 0;
  virtual void config_write32(std::uint16_t rid, std::uint16_t offset, std::uint32_t value) = 0;

  // ---- BARs ----
  /// A VF's BAR i is its window in the PF's SR-IOV VF BAR i (the VF's header BARs read 0).
  virtual BarInfo bar(std::uint16_t rid, unsigned index) = 0;
  /// Reads stall the calling thread for the PCIe round trip (about 1.5 us); writes are
  /// posted (the caller pays only the store) and stay ordered before later reads.
  virtual std::uint32_t mmio_read32(std::uint64_t address) = 0;
  virtual std::uint64_t mmio_read64(std::uint64_t address) = 0;
  virtual void mmio_write32(std::uint64_t address, std::uint32_t value) = 0;
  virtual void mmio_write64(std::uint64_t address, std::uint64_t value) = 0;

  // ---- DMA memory ----
  /// Allocates host memory mapped for function `rid` only (align: a power of two): a VF's
  /// buffers are in its own IOMMU domain, not its PF's.
  virtual DmaBuffer alloc_dma(std::uint16_t rid, std::uint64_t bytes, std::uint64_t align = 4096) = 0;
  /// The CPU's own accesses to DMA memory (cached stores and loads; cost host time).
  virtual void host_write(std::uint64_t iova, const void* data, std::size_t bytes) = 0;
  virtual void host_read(std::uint64_t iova, void* data, std::size_t bytes) = 0;

  // ---- interrupts ----
  /// Routes vectors 0..count-1 of `rid`'s MSI-X table to this host and enables MSI-X. Every
  /// function (PF or VF) has vectors of its own: vector v of one never wakes another's wait.
  virtual void enable_msix(std::uint16_t rid, unsigned count) = 0;
  /// Blocks until vector `vector` of `rid` has fired (an interrupt that fired before the
  /// call counts; each wait consumes one). false on timeout (timeout_ns 0 = forever).
  virtual bool wait_interrupt(std::uint16_t rid, unsigned vector, std::uint64_t timeout_ns) = 0;

  // ---- host time ----
  /// Time for the driver's own bookkeeping (timeouts, costs): in simulation the simulator's
  /// time itself.
  virtual std::uint64_t now_ns() = 0;
  /// The calling host thread computes for `ns` (the driver's and runtime's own CPU costs).
  virtual void spend_ns(std::uint64_t ns) = 0;
  /// The host's clock as software reads it (CLOCK_MONOTONIC): a clock of its own, with an
  /// offset, a drift and read jitter against true time, never going backwards. What a
  /// profiler stamps host events with and aligns device time to (clock_sampler.hpp). The
  /// default, for machines without a clock model, is now_ns().
  virtual std::uint64_t host_clock_ns() { return now_ns(); }
  /// The calling thread spins for `ns` waiting for something (a polling pass over a
  /// completion queue): the CPU is occupied but does no work a faster CPU would finish
  /// sooner. A profiler keeps it apart from spend_ns() when it asks whether a run was
  /// host-bound. The default is spend_ns().
  virtual void poll_ns(std::uint64_t ns) { spend_ns(ns); }
};

}  // namespace sohusim::driver
