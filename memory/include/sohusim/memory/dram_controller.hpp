#pragma once
// DramController: the memory controller of one pseudo-channel, event-driven. Its parts,
// each a class of its own under memory/src/:
//
//  * queues and bank state (ControllerState): a read queue and a write queue of configurable
//    depth in arrival order, each bank's open row and the queued requests that hit it. A
//    read whose address matches a queued write is served from that write: it completes
//    write_forward_latency + latency cycles after arrival without touching the DRAM
//    (counted in reads_from_write_queue);
//  * read/write mode (scheduler/read_write_mode): the queue served, switched by the
//    write_high/write_low watermarks and read starvation;
//  * command selection (scheduler/, one class per hbm.controller.scheduler: frfcfs, fcfs):
//    per step, at most one row command and one column command (separate buses), chosen
//    from the queue served;
//  * refresh (refresh/, one class per hbm.controller.refresh: allbank, perbank, off): when
//    refreshes fall due, what a due one blocks and issues, and the accounting of an idle
//    controller's refreshes (catch_up).
//
// The controller itself issues the chosen commands and applies the page policy: open (rows
// stay open until a conflict), closed (every access is RDA/WRA: no row hits), adaptive
// (RDA/WRA when no other queued request hits the row).
//
// Event-driven. step(t) issues what may issue at t and computes next_cycle(): the
// earliest cycle any queued request's next command (or a due refresh, or a read
// starvation switch) can issue, from the timing engine. The owner calls step() only
// then; no cycle is visited for nothing. Completion time: RD at t completes at
// t + CL + nBL + latency (its last data beat, plus controller/PHY latency); WR at
// t + CWL + nBL + latency.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/address_mapping.hpp"
#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/controller_params.hpp"
#include "sohusim/memory/controller_state.hpp"
#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

/// Throws std::invalid_argument, naming the timings, if `refresh` would leave a
/// pseudo-channel no time to serve requests: all-bank, tREFI below min_refresh_interval
/// with tRFCab; per-bank, a bank's interval (banks x (tREFI / banks)) below it with
/// tRFCpb, or tREFI / banks not above tRRD_S + tRREFD. `who` starts the message. The
/// hbm.* schema reports the same per key; this guards models built from a DramSpec.
void check_refresh_timings(const DramSpec& spec, RefreshMode refresh, const char* who);

/// Where a controller delivers finished requests (the DramSystem orders them).
class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual void on_complete(const MemRequest& request, Cycle done) = 0;
};

/// The statistics of one pseudo-channel, registered once; increments are plain adds.
struct PcStats {
  PcStats(const counters::Scope& scope, double tck_ns);

  counters::Counter& act;
  counters::Counter& pre;
  counters::Counter& rd;
  counters::Counter& wr;
  counters::Counter& refab;
  counters::Counter& refpb;
  counters::Counter& row_hits;
  counters::Counter& row_misses;
  counters::Counter& row_conflicts;
  counters::Counter& bytes_read;
  counters::Counter& bytes_written;
  counters::Counter& busy_cycles;
  counters::Counter& reads_from_write_queue;
  counters::Distribution& read_queue;
  counters::Distribution& write_queue;
  counters::Distribution& read_latency;
  double tck_ns;
};

class CommandScheduler;
class ReadWriteMode;
class Refresh;

class DramController {
 public:
  DramController(const DramSpec& spec, const ControllerParams& params, ChannelTiming& timing, std::uint32_t pc,
                 PcStats stats, CompletionSink& sink);
  DramController(DramController&&) noexcept;
  DramController& operator=(DramController&&) = delete;
  ~DramController();

  bool can_accept(bool write) const {
    return write ? state_.writes.size() < params_.write_queue : state_.reads.size() < params_.read_queue;
  }
  /// Precondition: can_accept(request.write); `at` decodes to this pseudo-channel.
  void enqueue(const MemRequest& request, const DecodedAddress& at, Cycle now);

  /// Issues what may issue at cycle t (t >= the last step's cycle).
  void step(Cycle t);
  /// The next cycle step() has work; kNever when no request is queued.
  Cycle next_cycle() const { return held() == 0 ? kNever : next_; }
  /// Accounts the refreshes that fell due up to `now` while nothing was queued.
  void catch_up(Cycle now);

  std::size_t held() const { return state_.held(); }
  /// The arrival of the oldest request of the direction being served (of the other when
  /// none of it is queued); kNever when nothing is. What BusArbiter::Oldest compares.
  Cycle oldest_arrival() const {
    const RequestQueue& first = state_.queue(state_.writing);
    const RequestQueue& second = state_.queue(!state_.writing);
    return !first.empty() ? first.at(0).request.arrival : !second.empty() ? second.at(0).request.arrival : kNever;
  }
  bool writing() const { return state_.writing; }
  /// The open row of a bank (flat index within the pseudo-channel), or kClosed.
  std::uint32_t open_row(std::uint32_t bank) const { return state_.banks[bank].open_row; }
  static constexpr std::uint32_t kClosed = BankState::kClosed;
  static constexpr std::uint32_t kNoBank = ControllerState::kNoBank;

 private:
  void serve(RequestQueue& q, std::size_t position, bool auto_precharge, Cycle t);

  ControllerParams params_;
  ChannelTiming& timing_;
  std::uint32_t pc_;
  PcStats stats_;
  CompletionSink& sink_;
  std::uint32_t CL_, CWL_, nBL_, access_bytes_;

  ControllerState state_;
  std::unique_ptr<ReadWriteMode> mode_;
  std::unique_ptr<CommandScheduler> scheduler_;
  std::unique_ptr<Refresh> refresh_;
  Cycle next_ = 0;
};

}  // namespace sohusim::memory
