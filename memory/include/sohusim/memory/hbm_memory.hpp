#pragma once
// HbmMemory: the HBM stacks of a device as one TLM-2.0 target, in front of a
// MemoryBackend of either fidelity (detailed: DramSystem, command-level; fast: FastDram,
// transfer-level). Everything above the memory — DMA engines, `sohusim mem`, test
// benches — talks to this module; the fidelity is a configuration choice.
//
// Socket. A tlm_utils::multi_passthrough_target_socket: any number of initiators (DMA
// channels, traffic generators, an address router) bind to it directly, each binding
// being its own protocol stream with its own response-exclusion state. Requests of any
// size and alignment are accepted; the target splits them into the backend's aligned
// accesses (32 B for HBM3): a request covering [a, a + n) costs the accesses of
// [floor(a / 32) * 32, ceil((a + n) / 32) * 32). With the fast backend, a request of
// several accesses is handed over whole (FastDram::enqueue_bulk) so that KiB-sized DMA
// does not cost an event per 32 B.
//
// Front end (detailed backend, and the fast one without bulk). A request is split in
// address order; each access goes to the controller queue its address maps to (a
// pseudo-channel's read or write queue) if that queue has room and nothing is staged for
// it, else into that queue's staging FIFO, which feeds the queue in order as it drains —
// the per-channel request buffers of a real interconnect. So a request whose access to one
// pseudo-channel finds it full still gives the others their work, and each controller
// queue receives the accesses of the oldest requests first (which share rows); the
// controller's scheduler does the rest. A staging FIFO holds `staging` accesses
// (hbm.target.staging); a request whose next access finds it full stops there
// (head-of-line, as a bounded buffer does) and goes on when it drains.
// Requests are split one after another, in the order the target accepted them, whichever
// binding sent them: the next starts once the one before has handed over or staged its
// last access, as a port's request channel delivers requests in order. So each controller
// queue receives the requests' accesses in arrival order, as the fast model books them.
// Before this rule every request split on its own: once the stagings filled, many large
// requests went on a pair of accesses at a time, interleaved, and the banks' rows were
// cut. 8 initiators keeping 32 writes of 32 KiB each in flight ran at 612 GB/s over their
// first 3072 requests, 681 once that had passed; now 682 from the start (the history and
// the per-binding variant tried: docs/memory-frontend.md, "Front end").
//
// Protocols.
//   - b_transport (LT): the caller's annotated delay is waited first (the request arrives
//     then), the request is queued into the backend and the caller is blocked on an
//     event until its last access completes; it returns with delay 0 and the time
//     advanced to the completion.
//   - nb_transport_fw (AT base protocol): BEGIN_REQ takes effect at now + delay. If the
//     target holds fewer than `max_transactions` transactions and nobody is waiting, it
//     is accepted at once (TLM_UPDATED, END_REQ, delay unchanged). Otherwise the call
//     returns TLM_ACCEPTED and END_REQ comes later on the backward path when a slot frees:
//     that is the back-pressure, counted in `port.backpressure`. When the last access
//     completes the target sends BEGIN_RESP on the backward path at that time; the
//     initiator may answer TLM_COMPLETED, TLM_UPDATED/END_RESP, or TLM_ACCEPTED and send
//     END_RESP later. Per binding, one response is outstanding at a time (the rule of the
//     base protocol); completed transactions wait in order behind it.
//   - Errors complete at BEGIN_REQ (TLM_COMPLETED) or return from b_transport at once,
//     without touching the backend: TLM_ADDRESS_ERROR_RESPONSE for any byte outside the
//     memory (counted in `port.address_errors`), the other checks of
//     memory/src/payload_data.hpp (counted in `port.other_errors`).
//   - transport_dbg: moves data without time in functional mode, 0 bytes in timing mode.
//     No DMI: every access must see the DRAM timing.
//
// Data (docs/sim.md, "Fidelity, data mode and determinism"). sim.data_mode functional: bytes go through a
// sim::SparseStore at the moment a request is accepted, so the memory's contents follow the order in which requests
// were accepted whatever order the backend serves their accesses in (a read sees every write accepted before it).
// timing: no store exists; nothing is allocated.
//
// Event-driven. One SC_THREAD. It advances the backend to the current
// memory cycle, hands it every access it can take, sends due responses, then sleeps until
// the backend's next_event() (a cycle, converted to time with the memory clock period),
// the next arrival, or a kick (a new request, an END_RESP). An idle memory costs nothing.
// The memory clock is the backend's clock_hz(), rounded to the picosecond as
// sim::ClockDomain does; cycle c of the backend is time c x period.
//
// Stats, under `stats_prefix` (e.g. `dev0.hbm`):
//   - the backend's per-pseudo-channel counters (its own names, e.g.
//     `dev0.hbm.s0.ch3.pc1.row_hits`);
//   - roll-ups made here as formulas over them: `<prefix>.s<k>.<leaf>` per stack and
//     `<prefix>.<leaf>` per device, for every counter leaf the backend registers under
//     `<prefix>.s<k>.ch<c>.pc<p>.`, plus `bandwidth` (B/s over the simulated time so far),
//     `efficiency` (of the peak) and `row_hit_rate` where the leaves exist;
//   - the port's own: `port.requests`, `port.reads`, `port.writes`, `port.bytes_read`,
//     `port.bytes_written`, `port.accesses`, `port.address_errors`, `port.other_errors`,
//     `port.backpressure`, `port.read_latency` / `port.write_latency` (ns, request
//     arrival to response), `port.occupancy` (transactions held, gauge).
// Trace: when the instrumentation traces, a counter track `<name> s<k> bandwidth` (GB/s)
// per stack under the process track, sampled every `bandwidth_sample` of simulated time
// while the memory is busy (one closing 0 sample when it goes idle; no wake-ups when
// idle), from the stack's byte counters.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "sohusim/config/config.hpp"
#include "sohusim/memory/memory_backend.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/sparse_memory.hpp"

namespace sohusim::memory {

class FastDram;

struct HbmMemoryParams {
  bool functional = false;
  std::uint32_t max_transactions = 1024;          // held between acceptance and response (hbm.target.*)
  std::uint32_t staging = 1024;                   // per controller queue: split-off accesses waiting for room
  std::uint32_t stacks = 1;                       // for the per-stack roll-ups and bandwidth tracks
  std::uint64_t bandwidth_sample_ps = 1'000'000;  // 0: no bandwidth track
  bool use_bulk = true;                           // hand multi-access requests to FastDram whole

  /// sim.data_mode, hbm.stacks, hbm.target.*.
  static HbmMemoryParams from_config(const config::Config& config);
};

/// The fidelity a memory runs at: `hbm.target.fidelity` when it is not `inherit`, else
/// `sim.fidelity`. Returns "detailed" or "fast".
std::string hbm_fidelity(const config::Config& config);

/// Builds the backend of the HBM described by `config` (hbm.*) at `fidelity`, registering
/// its per-pseudo-channel stats under `stats_prefix`. Throws std::invalid_argument for an
/// unknown fidelity.
std::unique_ptr<MemoryBackend> make_hbm_backend(const config::Config& config, const std::string& fidelity,
                                                const sim::Instrumentation& inst, const std::string& stats_prefix);

class HbmMemory : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<HbmMemory> socket;

  /// Takes the backend (built with its stats under the same `stats_prefix`).
  HbmMemory(sc_core::sc_module_name name, std::unique_ptr<MemoryBackend> backend, const HbmMemoryParams& params,
            const sim::Instrumentation& inst, const std::string& stats_prefix);
  /// Builds the backend from the config (make_hbm_backend at hbm_fidelity(config)).
  HbmMemory(sc_core::sc_module_name name, const config::Config& config, const sim::Instrumentation& inst,
            const std::string& stats_prefix);
  ~HbmMemory() override;

  MemoryBackend& backend() noexcept { return *backend_; }
  const MemoryBackend& backend() const noexcept { return *backend_; }
  const HbmMemoryParams& params() const noexcept { return params_; }
  sc_core::sc_time period() const { return sim::from_ps(period_ps_); }
  /// The backing store; nullptr in the timing data mode.
  sim::SparseStore* store() noexcept { return store_.get(); }
  /// Transactions accepted and not yet answered.
  std::size_t transactions_held() const noexcept { return held_; }
  std::uint64_t address_errors() const noexcept { return address_errors_.count(); }

 private:
  struct Txn;
  struct Arrival {
    std::uint64_t ps;
    std::uint64_t seq;
    std::uint32_t txn;
    bool operator>(const Arrival& o) const { return ps != o.ps ? ps > o.ps : seq > o.seq; }
  };

  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);

  void run();
  // Checks gp; on error sets the response, counts it and returns false.
  bool admit(tlm::tlm_generic_payload& gp);
  std::uint32_t new_txn(tlm::tlm_generic_payload& gp, int socket_id, bool blocking, std::uint64_t arrival_ps);
  void accept(std::uint32_t txn);          // moves data, counts, schedules the arrival
  std::uint64_t issue();                   // hands the backend every access it takes now; returns how many
  std::uint64_t walk(std::uint32_t txn);   // splits txn on until it ends or meets a full staging queue
  std::uint64_t split(std::uint32_t txn);  // walks txn (the first in splitting_), then the next ones while each ends
  std::uint32_t queue_of(std::uint64_t addr, bool write) const;
  void on_complete(const MemRequest& request, Cycle done);
  void finish(std::uint32_t txn);  // the last access completed
  void send_responses(int socket_id);
  void accept_waiting();  // back-pressured BEGIN_REQs, as slots free
  void release(std::uint32_t txn);
  void kick_at(std::uint64_t ps);  // wakes run() at the first memory edge at or after ps
  void sample_bandwidth(std::uint64_t now_ps, bool force);
  void register_rollups(const std::string& prefix);

  std::uint64_t now_ps() const { return sim::to_ps(sc_core::sc_time_stamp()); }
  std::uint64_t cycle_at_or_after(std::uint64_t ps) const { return (ps + period_ps_ - 1) / period_ps_; }

  std::unique_ptr<MemoryBackend> backend_;
  FastDram* fast_ = nullptr;  // the backend when it takes bulk requests
  HbmMemoryParams params_;
  sim::Instrumentation inst_;
  std::uint64_t period_ps_;
  std::uint32_t access_bytes_;
  std::unique_ptr<sim::SparseStore> store_;

  std::vector<std::unique_ptr<Txn>> txns_;
  std::vector<std::uint32_t> free_txns_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<Arrival>> arrivals_;
  std::uint64_t arrival_seq_ = 0;
  std::vector<std::uint32_t> fresh_;  // arrived, not yet tried
  struct Staged {
    std::uint64_t addr;
    std::uint32_t txn;
  };
  std::vector<std::deque<Staged>> staged_;  // per backend queue: accesses split off, waiting for room, in order
  std::deque<std::uint32_t> splitting_;     // arrived, not yet split to the end, in order: the first splits
  static constexpr std::uint32_t kNotStopped = ~0u;
  std::uint32_t stopped_at_ = kNotStopped;    // the backend queue whose full staging stopped the first
  std::vector<std::uint32_t> active_queues_;  // queues with staged accesses, each once
  std::vector<char> active_;                  // per backend queue: listed in active_queues_
  std::size_t staged_count_ = 0;
  std::function<std::uint32_t(std::uint64_t)> queue_key_;
  std::vector<std::deque<std::uint32_t>> responses_;               // per binding, completed, not yet answered
  std::vector<bool> response_open_;                                // per binding: BEGIN_RESP sent, END_RESP awaited
  std::deque<std::pair<int, tlm::tlm_generic_payload*>> waiting_;  // back-pressured BEGIN_REQs
  std::size_t held_ = 0;
  sc_core::sc_event kick_;
  sc_core::sc_event slot_freed_;  // for b_transport callers waiting on a full target
  std::uint64_t kick_pending_ps_ = ~0ULL;

  // Bandwidth track.
  std::vector<counters::TrackId> bw_tracks_;
  double stack_bytes(std::uint32_t k) const;  // bytes moved so far by stack k
  std::vector<std::uint32_t> stack_sums_;  // per stack, when tracing: its pseudo-channels' bytes (Registry::watch_sum)
  std::vector<double> last_bytes_;
  std::uint64_t next_sample_ps_ = 0;
  bool sampling_ = false;

  counters::Counter& requests_;
  counters::Counter& reads_;
  counters::Counter& writes_;
  counters::Counter& bytes_read_;
  counters::Counter& bytes_written_;
  counters::Counter& accesses_;
  counters::Counter& address_errors_;
  counters::Counter& other_errors_;
  counters::Counter& backpressure_;
  counters::Distribution& read_latency_;
  counters::Distribution& write_latency_;
  counters::Gauge& occupancy_;
};

}  // namespace sohusim::memory
