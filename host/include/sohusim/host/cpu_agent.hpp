#pragma once
// CpuAgent: a host CPU core as device software sees the machine — MMIO loads and stores to
// BARs (through the root complex: a load stalls its thread for the PCIe round trip, a store
// is posted), configuration space through ECAM, and its own DRAM, where drivers keep queues
// and DMA buffers. CPU accesses to DRAM go through the cache hierarchy, which is coherent
// with device DMA; they cost `memory_access_ps` each (an assumption: a cache-resident queue
// entry) and move bytes through the DRAM's debug path, so they never contend with DMA.
//
// Every call blocks the calling SystemC thread for the access's time.
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

namespace sohusim::host {

class CpuAgent : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<CpuAgent> mmio;    // to the root complex's CPU port
  tlm_utils::simple_initiator_socket<CpuAgent> memory;  // to host DRAM

  CpuAgent(sc_core::sc_module_name name, std::uint64_t ecam_base, std::uint64_t memory_access_ps);

  /// An MMIO load or store of `len` bytes (1..8) at `addr`: a load stalls for the round trip,
  /// a store is posted by the root complex.
  tlm::tlm_response_status mmio_access(bool write, std::uint64_t addr, void* data, unsigned len);
  std::uint32_t read32(std::uint64_t addr, tlm::tlm_response_status* status = nullptr);
  std::uint64_t read64(std::uint64_t addr, tlm::tlm_response_status* status = nullptr);
  void write32(std::uint64_t addr, std::uint32_t v, tlm::tlm_response_status* status = nullptr);
  void write64(std::uint64_t addr, std::uint64_t v, tlm::tlm_response_status* status = nullptr);
  /// Configuration space of routing ID `rid` (bus << 8 | dev << 3 | fn), 32-bit register `reg`.
  std::uint32_t cfg_read(std::uint16_t rid, unsigned reg);
  void cfg_write(std::uint16_t rid, unsigned reg, std::uint32_t v);
  /// CPU loads and stores to host DRAM.
  void mem_write(std::uint64_t addr, const void* data, std::uint64_t bytes);
  void mem_read(std::uint64_t addr, void* data, std::uint64_t bytes);

 private:
  std::uint64_t ecam_base_;
  std::uint64_t memory_access_ps_;
};

}  // namespace sohusim::host
