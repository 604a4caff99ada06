#pragma once
// The transaction layer at one end of a link: turns requests into TLPs and TLPs back into
// requests.
//
// As a requester (the CPU's MMIO path at the root port, a function's DMA at the endpoint):
// transact() cuts a request into TLPs (writes by MPS, reads by MRRS; 4DW headers above
// 4 GiB or when the link asks for them), takes a tag from the pool for every read request
// (a read stream with too few tags waits for them: it becomes latency-bound), tracks the
// completions, and fails a read whose completions stop arriving for completion_timeout.
// Posted requests finish when their last TLP has left the transmitter; non-posted ones
// when their last completion has arrived.
//
// As a completer: requests arriving over the link go to a Completer (the root complex,
// the endpoint), which answers non-posted ones with a status and the time their data is
// ready; the port returns the data as completions cut at the Read Completion Boundary
// (merged up to MPS when allowed). Receive buffers drain at once: credits go back to the
// far transmitter with the UpdateFC latency.
//
// Bulk path: a memory request of bulk_threshold bytes or more (with no bit errors
// injected) travels as aggregates of bulk_chunk bytes, each one event on the link that
// stands for all its TLPs: the same bytes on the wire (headers, framing, DLLP and SKP
// shares), the same counters, and for reads a duration no shorter than the tag-limited
// rate allows. It keeps the throughput of the TLP-by-TLP model within 1 % (tests) at a
// fraction of the events; what it loses is interleaving finer than a chunk.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/flow_control.hpp"
#include "sohusim/pcie/link_direction.hpp"
#include "sohusim/pcie/link_params.hpp"
#include "sohusim/pcie/tlp.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie {

/// What a port's owner does with requests that arrive over the link.
class Completer {
 public:
  virtual ~Completer() = default;
  struct Answer {
    CplStatus status = CplStatus::SC;
    std::uint64_t latency_ps = 0;  // from arrival until the data is ready
    bool poisoned = false;
    // Bulk reads: the latency one request of the aggregate would see (its first piece),
    // which bounds a tag-limited stream; 0: use latency_ps.
    std::uint64_t unit_latency_ps = 0;
  };
  /// A posted request (MWr, Msg): `data` holds tlp.length bytes when the TLP carries data.
  /// Returns how long (ps) the receive buffer stays occupied beyond arrival (0: drained at
  /// once); the credits go back that much later, which is how a slow sink back-pressures
  /// the link.
  virtual std::uint64_t posted(const Tlp& tlp, const std::uint8_t* data) = 0;
  /// A non-posted request (MRd, CfgRd, CfgWr): `read_out` (nullable) receives tlp.length
  /// bytes for reads; `write_data` holds the bytes of a CfgWr.
  virtual Answer nonposted(const Tlp& tlp, std::uint8_t* read_out, const std::uint8_t* write_data) = 0;
};

/// Transaction-layer errors a port reports, for AER and for the error log.
enum class PortError : std::uint8_t { CompletionTimeout, UnexpectedCompletion, PoisonedReceived };

struct PortParams {
  std::uint64_t bulk_threshold = 1ULL << 20;  // bytes; 0 disables the bulk path
  std::uint64_t bulk_chunk = 1ULL << 20;      // bytes per aggregate (19 us at Gen5 x16)
};

class PciePort : public sc_core::sc_module {
 public:
  struct Request {
    TlpType type = TlpType::MWr;  // MWr, MRd, CfgRd, CfgWr or Msg
    RequesterId requester = 0;
    RequesterId completer = 0;  // config requests: the target function
    std::uint64_t address = 0;  // memory: address; config: register offset
    std::uint64_t length = 0;
    std::uint8_t* data = nullptr;  // write source / read destination; null: timing only
    bool poisoned = false;
    std::uint64_t correlation = 0;
    bool allow_bulk = true;
  };
  struct Result {
    CplStatus status = CplStatus::SC;
    bool timed_out = false;
    bool poisoned = false;
    std::uint64_t tlps = 0;
  };

  PciePort(sc_core::sc_module_name name, const LinkParams& link, const PortParams& params, LinkDirection& tx,
           LinkDirection& rx, const sim::Instrumentation& inst, const std::string& stats_prefix);

  void set_completer(Completer* c) { completer_ = c; }
  void set_error_listener(std::function<void(PortError, const Tlp&)> l) { error_listener_ = std::move(l); }

  /// Blocking: call from an SC_THREAD. Never throws on a protocol error: the status says it.
  Result transact(const Request& request);

  /// Non-blocking posted write (MSI-X messages, fire-and-forget DMA writes).
  void post(const Request& request, std::function<void()> on_sent = {});

  const TagPool& tags() const noexcept { return tags_; }
  std::uint64_t outstanding_high_water() const noexcept { return high_water_; }

 private:
  struct Txn {
    std::uint64_t id = 0;
    TlpType type = TlpType::MRd;
    std::uint64_t base = 0;
    std::uint64_t remaining = 0;  // bytes still to arrive (reads)
    unsigned outstanding = 0;     // requests with a tag
    Segmenter reads;              // the MRRS cut still to issue
    Request request;
    Result result;
    bool bulk = false;
    std::uint64_t last_progress_ps = 0;
    sc_core::sc_event done;
    bool finished = false;
  };
  struct TagEntry {
    Txn* txn = nullptr;
    std::uint64_t expected = 0;  // bytes this request still waits for
  };

  void receive(Tlp& tlp);
  void receive_completion(Tlp& tlp);
  void receive_request(Tlp& tlp);
  void issue_reads(Txn& txn);
  void issue_waiting();
  void finish_if_done(Txn& txn);
  void schedule(std::uint64_t at_ps, TxItem item);
  bool use_bulk(const Request& r) const;
  Tlp make_request_tlp(const Request& r, TlpType type, std::uint64_t address, std::uint32_t length) const;

  LinkParams link_;
  PortParams params_;
  LinkDirection& tx_;
  LinkDirection& rx_;
  Completer* completer_ = nullptr;
  std::function<void(PortError, const Tlp&)> error_listener_;
  TagPool tags_;
  std::vector<TagEntry> tag_table_;
  std::deque<Txn*> tag_waiters_;
  std::uint64_t next_txn_ = 1;
  std::uint64_t high_water_ = 0;
  std::uint64_t min_unit_latency_ps_ = ~0ULL;

  void trace_transfer(const Request& r, std::uint64_t start_ps, const Result& res);
  counters::TraceRecorder* trace_ = nullptr;
  counters::TrackId transfers_track_ = 0;

  counters::Counter& requests_;
  counters::Counter& completions_received_;
  counters::Counter& timeouts_;
  counters::Counter& unexpected_;
  counters::Counter& ur_sent_;
  counters::Counter& poisoned_received_;
  counters::Gauge& outstanding_;
  counters::Distribution& read_latency_;
};

}  // namespace sohusim::pcie
