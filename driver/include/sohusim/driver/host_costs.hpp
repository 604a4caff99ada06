#pragma once
// What the host's own work costs, in nanoseconds of host CPU time. The driver and the
// runtime charge these through DeviceAccess::spend_ns, so that launch overheads show in the
// timeline and a run can be host-bound, as real inference servers are at small batch.
// MMIO reads, config accesses and the CPU's loads/stores of DMA memory are not here: the
// platform charges them itself (a read stalls for the modelled PCIe round trip).
//
// Every default is an assumption, chosen against commonly quoted public ballparks for GPU
// and NVMe software stacks (a CUDA kernel launch costs a few microseconds of CPU time through
// the runtime; an NVMe submission path about a microsecond; an interrupt with its handler and
// a thread wake-up a few microseconds), not measured on any Sohu software. docs/driver.md has
// the table with the reasoning for each; platform/ reads overrides from the system file's
// `host_costs:` map (same names).
#include <cstdint>

namespace sohusim::driver {

struct HostCosts {
  std::uint64_t api_call_ns = 300;       // entering and leaving any runtime call
  std::uint64_t launch_ns = 1500;        // launch(): argument checks, program lookup
  std::uint64_t per_command_ns = 40;     // building one 64-byte entry and storing it in the SQ
  std::uint64_t doorbell_ns = 0;         // on top of the posted MMIO write itself
  std::uint64_t memcpy_setup_ns = 800;   // an async copy: pinning check, descriptor
  std::uint64_t reap_per_cqe_ns = 50;    // reading and retiring one completion entry
  std::uint64_t interrupt_ns = 2500;     // interrupt entry, handler, waking the waiting thread
  std::uint64_t poll_interval_ns = 200;  // one pass of a polling loop over a CQ (0 counts as 1)
  std::uint64_t malloc_ns = 500;         // a device-memory allocation or free, a pinned host
                                         // allocation (host-side bookkeeping)
  std::uint64_t admin_ns = 1000;         // preparing an admin command; also probe, enable,
                                         // reset, shutdown and sriov_enable once each
};

}  // namespace sohusim::driver
