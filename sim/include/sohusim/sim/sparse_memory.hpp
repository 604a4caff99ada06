// sohusim/sim/sparse_memory.hpp — memory contents that cost only what was written.
//
// A Sohu-class device has 144 GB of HBM and the host has more; a test or a functional
// run touches a tiny, scattered part of it (weights of one layer, a queue, a few KV-cache
// blocks). SparseStore is the backing store for all of them: a byte array of a given size
// whose pages are allocated on first write. Bytes never written read as the fill value
// (0 by default, like freshly scrubbed DRAM; a non-zero fill such as 0xA5 helps catch
// reads of uninitialised memory in tests).
//
// Writing the fill value into a page that does not exist yet allocates nothing: zeroing a
// buffer, which drivers and workloads do a lot, then keeps memory use flat.
//
// SparseMemory is the simplest TLM target over a SparseStore: fixed latency plus a
// bandwidth limit, no banks or commands. It is the "fast" memory for host
// DRAM, SRAM and test benches; the HBM models in memory/ replace it where detail matters.
//
// Timing model (b_transport, loosely timed). The memory has one data port of
// `bytes_per_second`. A request that arrives at t (sc_time_stamp() + the annotated delay)
// starts its transfer at max(t, end of the previous transfer), occupies the port for
// ceil(length / bandwidth), and completes `latency` after its transfer ends; the delay
// annotation is advanced to that completion. Latency is pipelined (overlapping requests
// each see it once), bandwidth is shared (back-to-back requests queue behind each other).
// bytes_per_second == 0 means unlimited bandwidth. Errors complete at once.
//
// Data modes (docs/sim.md, "Fidelity, data mode and determinism"). functional == true moves real bytes. functional ==
// false is the timing mode: accesses are timed and counted exactly as in functional mode, but no data moves (reads
// leave the initiator's buffer as it was), the store stays empty, DMI is refused and debug transport transfers 0 bytes,
// so memory use does not grow with the simulated footprint.
//
// Protocol details:
//   - Out of range (including an access that runs past the end): TLM_ADDRESS_ERROR_RESPONSE.
//   - Byte enables are honoured for reads and writes, repeating every byte_enable_length
//     bytes; a disabled byte is neither written to the store nor written into the
//     initiator's buffer on a read.
//   - Streaming bursts (streaming_width < data_length) wrap every streaming_width bytes.
//   - A functional access with data but no data pointer: TLM_GENERIC_ERROR_RESPONSE.
//   - DMI (functional mode, when allowed) is granted one page at a time, read-write, with
//     the fixed latency per access; the page is allocated on the grant. DMI accesses
//     bypass timing and counters, as DMI does by definition. clear() invalidates all grants.
//   - nb_transport is served by simple_target_socket's built-in conversion to b_transport,
//     which needs payloads with a memory manager (see memory_manager.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "sohusim/sim/sim_time.hpp"

namespace sohusim::sim {

class SparseStore {
 public:
  static constexpr std::size_t kDefaultPageSize = 4096;

  /// Throws std::invalid_argument unless page_size is a power of two (1 B .. 1 GiB).
  explicit SparseStore(std::uint64_t size, std::size_t page_size = kDefaultPageSize, std::uint8_t fill = 0);

  std::uint64_t size() const noexcept { return size_; }
  std::size_t page_size() const noexcept { return page_size_; }
  std::uint8_t fill() const noexcept { return fill_; }

  /// Copies [addr, addr + len) into dst, across page boundaries; unwritten bytes read as
  /// fill(). Throws std::out_of_range (naming the access and the store size) if the range
  /// does not lie inside [0, size()).
  void read(std::uint64_t addr, void* dst, std::size_t len) const;
  /// Copies src into [addr, addr + len), allocating the pages it touches unless the bytes
  /// for a missing page are all fill(). Same range check as read().
  void write(std::uint64_t addr, const void* src, std::size_t len);

  /// Pointer to the byte at `addr` inside its page, allocating the page: for DMI and
  /// bulk loaders. Valid up to the end of that page until clear() or destruction.
  unsigned char* page_data(std::uint64_t addr);
  std::uint64_t page_base(std::uint64_t addr) const noexcept { return addr & ~page_mask_; }
  bool is_allocated(std::uint64_t addr) const noexcept;

  std::size_t allocated_pages() const noexcept { return pages_.size(); }
  std::uint64_t allocated_bytes() const noexcept { return static_cast<std::uint64_t>(pages_.size()) * page_size_; }
  /// Frees every page: the whole store reads as fill() again.
  void clear() noexcept { pages_.clear(); }

 private:
  void check_range(const char* op, std::uint64_t addr, std::size_t len) const;
  unsigned char* allocate_page(std::uint64_t index);

  std::uint64_t size_;
  std::size_t page_size_;
  std::uint64_t page_mask_;
  unsigned page_shift_;
  std::uint8_t fill_;
  // Looked up by page index only, never iterated into an output: order does not matter.
  std::unordered_map<std::uint64_t, std::unique_ptr<unsigned char[]>> pages_;
};

class SparseMemory : public sc_core::sc_module {
 public:
  struct Params {
    std::uint64_t size = 0;
    sc_core::sc_time latency = sc_core::SC_ZERO_TIME;
    double bytes_per_second = 0.0;  // 0: unlimited
    bool functional = true;
    bool allow_dmi = true;
    std::size_t page_size = SparseStore::kDefaultPageSize;
    std::uint8_t fill = 0;
  };

  tlm_utils::simple_target_socket<SparseMemory> socket;

  /// Throws std::invalid_argument for a zero size, a negative or non-finite bandwidth, or
  /// an invalid page size.
  SparseMemory(sc_core::sc_module_name name, const Params& params);

  const Params& params() const noexcept { return params_; }
  bool functional() const noexcept { return params_.functional; }
  /// The backing store, for loading contents and checking them without simulated time.
  SparseStore& store() noexcept { return store_; }
  const SparseStore& store() const noexcept { return store_; }

  /// Time the port is occupied by a transfer of `bytes` (0 with unlimited bandwidth).
  sc_core::sc_time transfer_time(std::uint64_t bytes) const;

  /// Empties the store and invalidates every DMI pointer handed out.
  void clear();

  // Counters of successful b_transport accesses (debug and DMI accesses are not counted).
  std::uint64_t reads() const noexcept { return reads_; }
  std::uint64_t writes() const noexcept { return writes_; }
  std::uint64_t bytes_read() const noexcept { return bytes_read_; }
  std::uint64_t bytes_written() const noexcept { return bytes_written_; }
  /// b_transport accesses rejected with TLM_ADDRESS_ERROR_RESPONSE.
  std::uint64_t address_errors() const noexcept { return address_errors_; }
  /// b_transport accesses rejected with any other error response.
  std::uint64_t other_errors() const noexcept { return other_errors_; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

  bool in_range(std::uint64_t addr, std::uint64_t len) const noexcept;
  void move_data(tlm::tlm_generic_payload& gp);

  Params params_;
  SparseStore store_;
  std::uint64_t busy_until_ps_ = 0;  // end of the last transfer on the data port

  std::uint64_t reads_ = 0;
  std::uint64_t writes_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint64_t address_errors_ = 0;
  std::uint64_t other_errors_ = 0;
};

}  // namespace sohusim::sim
