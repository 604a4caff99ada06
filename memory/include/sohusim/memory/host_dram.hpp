#pragma once
// Host DRAM: the server's DDR5 main memory, where the driver keeps its queues and the
// DMA buffers the device reads and writes over PCIe.
//
// Fidelity. The device model needs host memory to be right in bandwidth and in latency
// to the first order, nothing more: a PCIe link (tens of GB/s) is almost always slower
// than the host's memory, and the host's own traffic is not modelled. So this is a
// transfer-level model, stated here as the assumption it is:
//   - `channels` independent DDR5 channels, addresses interleaved over them every
//     `interleave` bytes (NUMA-agnostic: one socket's channels, or all of them);
//   - each channel is a server of `channel_bandwidth` x `efficiency` bytes per second
//     (DDR5-4800: 38.4 GB/s per 64-bit channel; the efficiency folds in refresh, bank
//     conflicts and read/write turnarounds, ~80-90 % for DMA-sized transfers);
//   - every request pays a fixed `latency` (row access, controller, on-die fabric;
//     ~80-100 ns unloaded on current servers) on top of its data transfer. The latency is
//     pipelined: overlapping requests each see it once; the bandwidth is shared: requests
//     on a channel queue behind each other, which is how latency grows under load.
//
//     done = max over the channels it touches (start_c + bytes_c / bw_c) + latency,
//     start_c = max(arrival, channel c free)
//
// Time is kept in integer picoseconds (transfer times rounded up), so runs repeat bit for
// bit. Loosely timed, like the SRAM: requests are timed in call order.
//
// TLM-2.0 target: multi_passthrough_target_socket; b_transport annotates the completion on
// the delay without waiting, nb_transport_fw completes at BEGIN_REQ (TLM_COMPLETED with the
// same annotation). Payload checks, data modes and debug transport as for the SRAM
// (see sram.hpp); an address beyond `capacity` gets TLM_ADDRESS_ERROR_RESPONSE and is
// counted.
//
// Stats (under the prefix given, e.g. `host0.dram`): reads, writes, bytes_read,
// bytes_written, address_errors, other_errors, latency (ns, distribution), and per channel
// ch<i>.busy_time (ps the channel spent transferring).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "sohusim/config/config.hpp"
#include "sohusim/memory/host_dram_params.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/sparse_memory.hpp"

namespace sohusim::memory {

/// The channel timing model, plain C++ (integer picoseconds).
class HostDramChannels {
 public:
  explicit HostDramChannels(const HostDramParams& params);

  /// Books the channels for `bytes` at `addr` arriving at `arrival_ps`; returns the time
  /// the data is complete (ps). Precondition: bytes > 0.
  std::uint64_t access(std::uint64_t arrival_ps, std::uint64_t addr, std::uint64_t bytes);

  /// Picoseconds channel `c` has spent transferring so far.
  std::uint64_t busy_ps(std::uint32_t c) const { return busy_ps_.at(c); }
  const HostDramParams& params() const noexcept { return params_; }

 private:
  std::uint64_t transfer_ps(std::uint64_t bytes) const;

  HostDramParams params_;
  std::uint64_t latency_ps_;
  std::vector<std::uint64_t> free_ps_;
  std::vector<std::uint64_t> busy_ps_;
  std::vector<std::uint64_t> scratch_;  // bytes of the current request per channel
};

class HostDram : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<HostDram> socket;

  HostDram(sc_core::sc_module_name name, const HostDramParams& params, const sim::Instrumentation& inst,
           const std::string& stats_prefix);

  const HostDramParams& params() const noexcept { return channels_.params(); }
  /// The backing store; nullptr in the timing data mode.
  sim::SparseStore* store() noexcept { return store_.get(); }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);
  void serve(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

  HostDramChannels channels_;
  std::unique_ptr<sim::SparseStore> store_;
  counters::Counter& reads_;
  counters::Counter& writes_;
  counters::Counter& bytes_read_;
  counters::Counter& bytes_written_;
  counters::Counter& address_errors_;
  counters::Counter& other_errors_;
  counters::Distribution& latency_;
};

}  // namespace sohusim::memory
