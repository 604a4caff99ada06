#pragma once
// On-chip SRAM scratchpad: the buffer the DMA engines fill from HBM and the matrix and
// vector engines read their operands from.
//
// Organisation. `capacity` bytes in `banks` banks, address-interleaved every
// `access_width` bytes (line i of the address space lives in bank i mod banks). Each bank
// has `ports` ports; a port moves one line (`access_width` bytes) per cycle of the SRAM's
// clock. A request of any size and alignment touches the lines that cover it.
//
// Timing (per access, no cycle loop). A request arriving at time t starts at the next
// clock edge c0. Each of its lines goes to the earliest free port of its bank, no earlier
// than c0; the request's data is ready `latency` cycles after its last line was accessed:
//
//     done = max over lines (start_of_line + 1) + latency         (in SRAM cycles)
//
// A request alone in the SRAM therefore takes ceil(lines_in_busiest_bank / ports) cycles
// plus the latency: bandwidth is banks x ports x access_width bytes per cycle. A line
// that has to wait because a port of its bank is still busy with *another* request's
// line is a bank conflict: the `bank_conflicts` counter counts such lines and
// `conflict_cycles` the cycles they lost (the delay beyond the slot the line would have
// had in an idle bank). The serialisation of a request's own lines in one bank is its
// transfer time, not a conflict.
//
// Loosely timed, like every transfer-level model here: requests are timed in the order
// they are called. An initiator far ahead in its quantum (a large annotated delay) books
// ports in the future, and a later call for an earlier time waits behind it; that is
// the usual temporal-decoupling approximation and is exact when initiators do not run
// ahead.
//
// TLM-2.0 target: a multi_passthrough_target_socket, so that any number of engines and DMA
// channels bind to it directly. b_transport returns at once with the completion annotated
// on the delay (no wait: the SRAM has no queue to block on); nb_transport_fw answers
// BEGIN_REQ with TLM_COMPLETED and the same annotation (a legal early completion of the
// base protocol), so AT initiators need no response path. Payload checks (address range,
// byte enables, streaming, missing data) follow memory/src/payload_data.hpp: an address
// outside the SRAM gets TLM_ADDRESS_ERROR_RESPONSE and is counted in `address_errors`.
// Debug transport moves data without time. Data mode: functional moves bytes through a
// sim::SparseStore; timing holds no store at all.
//
// Stats (under the prefix given, e.g. `dev0.sram`): reads, writes, bytes_read,
// bytes_written, line_accesses, bank_conflicts, conflict_cycles, address_errors,
// other_errors (other error responses), latency (ns, distribution).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "sohusim/config/config.hpp"
#include "sohusim/memory/sram_params.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/sparse_memory.hpp"

namespace sohusim::memory {

/// The bank/port timing model, plain C++ so it can be tested and reused without a kernel.
class SramBanks {
 public:
  explicit SramBanks(const SramParams& params);

  struct Timing {
    std::uint64_t done_cycle = 0;       // cycle at which the data is ready
    std::uint64_t lines = 0;            // bank accesses made
    std::uint64_t conflicts = 0;        // lines delayed by another request
    std::uint64_t conflict_cycles = 0;  // cycles those lines lost
  };

  /// Books the ports for a request of `bytes` at `addr` arriving at `cycle`.
  /// Precondition: bytes > 0 (range checks are the target's).
  Timing access(std::uint64_t cycle, std::uint64_t addr, std::uint64_t bytes);

  const SramParams& params() const noexcept { return params_; }

 private:
  SramParams params_;
  std::vector<std::uint64_t> port_free_;  // banks x ports: first cycle each port is free
  std::uint64_t latest_free_ = 0;         // the latest of them (for the idle fast path)
  std::vector<std::uint32_t> scratch_;    // lines of the current request per bank
};

class Sram : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Sram> socket;

  /// `stats_prefix` is the dotted scope of this SRAM's counters (e.g. "dev0.sram").
  Sram(sc_core::sc_module_name name, const SramParams& params, const sim::Instrumentation& inst,
       const std::string& stats_prefix);

  const SramParams& params() const noexcept { return banks_.params(); }
  /// The backing store; nullptr in the timing data mode, which holds no data.
  sim::SparseStore* store() noexcept { return store_.get(); }
  sc_core::sc_time period() const { return sim::from_ps(period_ps_); }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);
  // Serves gp arriving at sc_time_stamp() + delay; sets the response and the delay.
  void serve(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

  SramBanks banks_;
  std::uint64_t period_ps_;
  std::unique_ptr<sim::SparseStore> store_;
  counters::Counter& reads_;
  counters::Counter& writes_;
  counters::Counter& bytes_read_;
  counters::Counter& bytes_written_;
  counters::Counter& line_accesses_;
  counters::Counter& bank_conflicts_;
  counters::Counter& conflict_cycles_;
  counters::Counter& address_errors_;
  counters::Counter& other_errors_;
  counters::Distribution& latency_;
};

}  // namespace sohusim::memory
