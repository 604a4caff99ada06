#pragma once
// LoadInitiator: an approximately-timed (AT) TLM-2.0 initiator that keeps up to
// `outstanding` requests in flight against a memory, the way a DMA engine with a deep
// request queue does. sim::TrafficGenerator is blocking (one request in flight), which
// cannot load an HBM stack: streaming at ~90 % of 819 GB/s with ~80 ns of latency needs
// hundreds of 32 B requests in flight (Little's law). `sohusim mem` and the memory tests
// drive HbmMemory with these.
//
// Patterns (addresses aligned to request_bytes inside [base, base + window)):
//   stream    initiator i of n takes requests i, i + n, i + 2n, ... of one sequential
//             stream: n initiators split one transfer, as DMA channels do;
//   strided   the same, every `stride` bytes, shifted by one request per pass;
//   random    uniform, from a seeded std::mt19937_64;
//   trace     the given requests (time, address, R/W, size), each issued at its time or
//             as soon as the outstanding limit allows.
// Reads and writes: each request is a read with probability read_fraction (seeded), except
// in a trace. Protocol: BEGIN_REQ, waits END_REQ before the next (request exclusion;
// a full target withholds it: back-pressure), answers BEGIN_RESP with TLM_COMPLETED.
// Payloads come from a sim::MemoryManager, each with a correlation id. No data buffer
// unless `with_data` (functional runs).
//
// Stats (under the scope given): requests, reads, writes, bytes_read, bytes_written,
// errors, read_latency / write_latency (ns, BEGIN_REQ to BEGIN_RESP).

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "sohusim/counters/registry.hpp"
#include "sohusim/sim/memory_manager.hpp"

namespace sohusim::memory {

struct TraceRequest {
  std::uint64_t time_ps = 0;
  std::uint64_t address = 0;
  bool write = false;
  std::uint32_t size = 0;
};

struct LoadPattern {
  enum class Kind { Stream, Strided, Random, Trace };
  Kind kind = Kind::Stream;
  std::uint64_t base = 0;
  std::uint64_t window = 1ULL << 30;
  std::uint32_t request_bytes = 64;
  std::uint64_t stride = 4096;
  double read_fraction = 1.0;
  std::uint64_t requests = 1000;  // for this initiator (ignored for a trace)
  std::uint32_t outstanding = 64;
  std::uint64_t seed = 1;
  bool with_data = false;
  std::vector<TraceRequest> trace;  // Kind::Trace: this initiator's share, in time order

  /// Throws std::invalid_argument naming the bad field.
  void validate() const;
};

class LoadInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<LoadInitiator> socket;

  /// Initiator `index` of `count` (stream and strided patterns interleave by it).
  LoadInitiator(sc_core::sc_module_name name, const LoadPattern& pattern, std::uint32_t index, std::uint32_t count,
                sim::MemoryManager& mm, const counters::Scope& stats);

  bool done() const { return done_; }
  const sc_core::sc_event& done_event() const { return done_event_; }
  std::uint64_t completed() const { return completed_; }
  /// Time of the last response.
  sc_core::sc_time finish_time() const { return finish_; }

 private:
  void run();
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void respond(tlm::tlm_generic_payload& gp, const sc_core::sc_time& at);
  std::uint64_t next_address(std::uint64_t k);

  LoadPattern pattern_;
  std::uint32_t index_;
  std::uint32_t count_;
  sim::MemoryManager& mm_;
  std::mt19937_64 rng_;
  std::uint32_t in_flight_ = 0;
  bool waiting_end_req_ = false;
  sc_core::sc_event end_req_;
  sc_core::sc_event slot_free_;
  sc_core::sc_event done_event_;
  bool done_ = false;
  std::uint64_t completed_ = 0;
  std::uint64_t total_ = 0;
  sc_core::sc_time finish_;
  std::uint64_t next_id_ = 1;
  counters::Counter& requests_;
  counters::Counter& reads_;
  counters::Counter& writes_;
  counters::Counter& bytes_read_;
  counters::Counter& bytes_written_;
  counters::Counter& errors_;
  counters::Distribution& read_latency_;
  counters::Distribution& write_latency_;
};

}  // namespace sohusim::memory
