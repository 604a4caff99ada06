#pragma once
// TrafficGenerator: a TLM-2.0 initiator that plays an address pattern against a
// memory-mapped target, the way DRAMSys' and Ramulator's front ends drive a
// memory under test.
//
// Patterns: `stream` (sequential requests wrapping in the window), `strided`
// (every `stride` bytes), `random` (uniform, aligned to the request size, from a
// seeded std::mt19937_64 so runs repeat bit for bit). Each request is a
// blocking-transport call: the generator waits the annotated delay before the
// next one, so one generator has one request in flight and concurrency comes
// from several generators. Every request carries a correlation id (from a
// counter the caller shares between generators) so its hops can be followed in
// the trace, and is a slice on the generator's track when the trace category
// "generator" is on.
//
// Stats (under the scope given): requests, reads, writes, bytes_read,
// bytes_written, errors, read_latency / write_latency distributions (ns).

#include <cstdint>
#include <random>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/memory_manager.hpp"

namespace sohusim::sim {

struct TrafficPattern {
  enum class Kind { Stream, Strided, Random };
  Kind kind = Kind::Stream;
  std::uint64_t base = 0;          // first address of the window
  std::uint64_t window = 1 << 20;  // bytes; addresses wrap inside [base, base + window)
  std::uint64_t request_bytes = 64;
  std::uint64_t stride = 4096;  // for Strided
  double read_fraction = 1.0;   // 1 = all reads, 0 = all writes; chosen per request (seeded)
  std::uint64_t requests = 1000;
  std::uint64_t seed = 1;
  sc_core::sc_time gap = sc_core::SC_ZERO_TIME;  // think time between requests

  // Throws std::invalid_argument naming the bad field (zero sizes, a window
  // smaller than a request, a fraction outside [0, 1]).
  void validate() const;
  static const char* to_string(Kind kind);
};

class TrafficGenerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  TrafficGenerator(sc_core::sc_module_name name, const TrafficPattern& pattern, const Instrumentation& inst,
                   const std::string& stats_prefix, MemoryManager& mm, std::uint64_t& next_correlation_id,
                   std::uint32_t requester_id = 0);

  // A run that stops before the generator finishes (sim.stop_time) leaves its
  // thread suspended inside a transport call for good; the destructor hands the
  // payload it holds back to the memory manager, which must outlive the generator.
  ~TrafficGenerator() override;

  bool done() const { return done_; }
  const sc_core::sc_event& done_event() const { return done_event_; }
  std::uint64_t completed() const { return completed_; }
  sc_core::sc_time finish_time() const { return finish_time_; }

 private:
  void run();
  std::uint64_t next_address(std::uint64_t i);

  TrafficPattern pattern_;
  Instrumentation inst_;
  MemoryManager& mm_;
  std::uint64_t& next_correlation_id_;
  std::uint32_t requester_id_;
  std::mt19937_64 rng_;
  counters::Counter& requests_;
  counters::Counter& reads_;
  counters::Counter& writes_;
  counters::Counter& bytes_read_;
  counters::Counter& bytes_written_;
  counters::Counter& errors_;
  counters::Distribution& read_latency_;
  counters::Distribution& write_latency_;
  counters::TrackId track_ = 0;
  counters::NameId rd_name_ = 0;
  counters::NameId wr_name_ = 0;
  sc_core::sc_event done_event_;
  bool done_ = false;
  std::uint64_t completed_ = 0;
  tlm::tlm_generic_payload* in_flight_ = nullptr;
  sc_core::sc_time finish_time_;
};

}  // namespace sohusim::sim
