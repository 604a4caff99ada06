#pragma once
// The host side of the link: the root complex with its root port, the IOMMU, the CPU's
// MMIO path, host memory in NUMA nodes, and MSI delivery to the interrupt controller.
//
// CPU MMIO (cpu_socket, blocking b_transport from a CPU thread): the access pays
// cpu_mmio_latency from the core to the root port, crosses the link as a TLP, and a read
// pays it again on the way back (a CPU stalls on an MMIO read: about 1.5 us in all by
// default, docs/sources.md "MMIO read round trip"). A memory write is posted: the CPU goes on after
// cpu_posted_write (its store leaves the core) while the write travels; writes keep their
// order, and a later read waits for the writes ahead of it (reads do not pass writes). Addresses in the ECAM window
// become configuration requests (bus/device/function/register from the address, PCIe Base Spec 7.2.2); the rest become
// memory requests. A read the device answers with UR reads all ones, as on real hosts, and the TLM response says
// TLM_ADDRESS_ERROR_RESPONSE.
//
// DMA from the device (TLPs arriving on the root port): memory writes to the MSI window
// (0xFEE00000) are interrupts; other requests are translated by the IOMMU for their
// requester ID (a fault blocks the access and is logged: a read is answered with UR, a
// write is dropped) and go to host memory through memory_socket (the host DRAM model,
// loosely timed). Page-table walks are charged as 8-byte host memory reads, one after
// the other within a walk (each read arrives when the one before it has returned), on the
// IOMMU's pool of page walkers (several walks in flight); the data access starts when
// the translation is done. Memory on a NUMA node other than the device's pays remote_latency and
// shares the inter-socket link's remote_bandwidth (a device on the wrong socket is the
// classic several-times slowdown).
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie {

struct RootComplexParams {
  RequesterId rid = 0;  // the root port's requester ID (00:00.0)
  std::uint64_t cpu_mmio_latency_ps = 600'000;
  std::uint64_t cpu_posted_write_ps = 100'000;  // a CPU's own cost of an uncached store (assumption)
  std::uint64_t ecam_base = 0xE000'0000ULL;     // configuration space window (256 MiB: buses 0-255)
  std::uint64_t ecam_size = 0x1000'0000ULL;
  unsigned numa_nodes = 1;
  std::uint64_t node_bytes = 256ULL << 30;  // node n owns [n x node_bytes, (n+1) x node_bytes)
  unsigned device_node = 0;
  std::uint64_t remote_latency_ps = 120'000;
  double remote_bandwidth = 20e9;  // B/s of DMA across the inter-socket link

  /// Reads `pcie.root.*`. Throws std::invalid_argument naming the key for bad values.
  static RootComplexParams from_config(const config::Config& config);
  void validate() const;
};

class RootComplex : public sc_core::sc_module, public Completer {
 public:
  tlm_utils::simple_target_socket<RootComplex> cpu_socket;
  tlm_utils::simple_initiator_socket<RootComplex> memory_socket;

  RootComplex(sc_core::sc_module_name name, const RootComplexParams& params, PciePort& port, Iommu* iommu,
              InterruptController& interrupts, const sim::Instrumentation& inst, const std::string& prefix);

  // Completer: requests from the device.
  std::uint64_t posted(const Tlp& tlp, const std::uint8_t* data) override;
  Answer nonposted(const Tlp& tlp, std::uint8_t* read_out, const std::uint8_t* write_data) override;

  const RootComplexParams& params() const noexcept { return params_; }
  Iommu* iommu() noexcept { return iommu_; }

 private:
  void cpu_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void posted_writer();  // SC_THREAD: sends the CPU's posted writes in order
  /// Runs one host memory access; returns the time (ps from now) it completes. `blocked`:
  /// the IOMMU faulted it or it fell outside host memory.
  std::uint64_t dma(const Tlp& tlp, bool write, std::uint8_t* read_out, const std::uint8_t* write_data, bool& blocked);
  /// One host memory access arriving `after_ps` from now; returns when (ps from now) it completes.
  std::uint64_t memory_access(bool write, std::uint64_t addr, std::uint64_t bytes, std::uint8_t* data, bool& ok,
                              std::uint64_t after_ps = 0);
  std::uint64_t numa_cost(std::uint64_t addr, std::uint64_t bytes);

  RootComplexParams params_;
  PciePort& port_;
  Iommu* iommu_;
  InterruptController& interrupts_;
  std::uint64_t remote_free_ps_ = 0;
  std::vector<std::uint64_t> walker_free_ps_;  // when each IOMMU page walker is free (absolute ps)
  struct PostedWrite {
    std::uint64_t at_ps;  // when it reaches the root port
    PciePort::Request request;
    std::vector<std::uint8_t> data;
  };
  std::deque<PostedWrite> posted_writes_;
  bool writer_busy_ = false;
  sc_core::sc_event posted_queued_, posted_drained_;
  counters::Counter& mmio_reads_;
  counters::Counter& mmio_writes_;
  counters::Counter& config_reads_;
  counters::Counter& config_writes_;
  counters::Counter& mmio_ur_;
  counters::Counter& dma_reads_;
  counters::Counter& dma_writes_;
  counters::Counter& dma_bytes_;
  counters::Counter& dma_blocked_;
  counters::Counter& remote_bytes_;
  counters::Counter& msi_;
  counters::Distribution& mmio_read_latency_;
};

}  // namespace sohusim::pcie
