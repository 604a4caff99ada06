#pragma once
// DramController: the memory controller of one pseudo-channel, event-driven.
//
// Queues. A read queue and a write queue of configurable depth (fixed arrays, kept in
// arrival order; no allocation per request). A read whose address matches a queued write
// is served from that write: it completes write_forward_latency + latency cycles after
// arrival without touching the DRAM (counted in reads_from_write_queue).
//
// Read/write mode. The controller serves one queue at a time. It switches to writes when
// the write queue reaches write_high, or when no read waits and a write does; it returns
// to reads when the write queue falls to write_low (and a read waits), when it empties,
// or when the oldest read has waited read_starvation cycles.
//
// Scheduling (per step, one row command and one column command at most: separate buses):
//  * frfcfs: the oldest request whose column command is ready and whose row is open
//    (a row hit) gets the column bus; the oldest request whose ACT (bank closed) or PRE
//    (another row open) is ready gets the row bus. A PRE is not issued for a conflict
//    while queued requests still hit the open row, so hits are served first.
//  * fcfs: only the oldest request of the active queue is considered.
// Page policy: open (rows stay open until a conflict), closed (every access is RDA/WRA:
// no row hits), adaptive (RDA/WRA when no other queued request hits the row).
//
// Refresh. allbank: a REFab falls due every tREFI; perbank: a REFpb every tREFI/banks.
// Per-bank refreshes go in rounds: each bank once per round of `banks` refreshes (so each
// bank once per tREFI), and within a round the controller picks, from the rr pointer on,
// the first bank not yet refreshed that has no queued request, else the first not yet
// refreshed (JEDEC lets the controller choose the REFpb bank). A due refresh is owed;
// while more than refresh_postpone are owed it is forced: for REFab the pseudo-channel
// issues nothing else, precharges all (PREA) and refreshes; for REFpb only the target
// bank is blocked, precharged and refreshed while the others keep working. Up to
// refresh_postpone owed refreshes wait until no row hit is queued (for REFpb: to the
// target bank). Refresh never wakes an idle controller: catch_up() accounts the
// refreshes that fell due while it held no request in bulk (counts, rows closed) and
// issues the last one at its due time, so the owner of an idle memory sleeps.
//
// Event-driven. step(t) issues what may issue at t and computes next_cycle(): the
// earliest cycle any queued request's next command (or a due refresh, or a read
// starvation switch) can issue, from the timing engine. The owner calls step() only
// then; no cycle is visited for nothing. The decision walks the active queue in age
// order only until both buses have their command; the next cycle is computed per bank
// (what the bank's queued requests need: column command for hits, ACT or PRE for the
// others), so a step costs O(banks), not O(queue depth), once the choice is made. Completion time: RD at t completes at
// t + CL + nBL + latency (its last data beat, plus controller/PHY latency); WR at
// t + CWL + nBL + latency.
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/address_mapping.hpp"
#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::config {
class Config;
}

namespace sohusim::memory {

enum class SchedulerKind : std::uint8_t { FrFcfs, Fcfs };
enum class PagePolicy : std::uint8_t { Open, Closed, Adaptive };
enum class RefreshMode : std::uint8_t { AllBank, PerBank, Off };
enum class BusArbiter : std::uint8_t { Fixed, Oldest };  // see DramSystem, "Arbitration"

struct ControllerParams {
  std::uint32_t read_queue = 64;
  std::uint32_t write_queue = 64;
  std::uint32_t write_high = 48;
  std::uint32_t write_low = 16;
  std::uint32_t read_starvation = 2000;  // cycles
  SchedulerKind scheduler = SchedulerKind::FrFcfs;
  BusArbiter bus_arbiter = BusArbiter::Fixed;
  PagePolicy page_policy = PagePolicy::Adaptive;
  RefreshMode refresh = RefreshMode::AllBank;
  std::uint32_t refresh_postpone = 0;
  std::uint32_t latency = 16;               // controller + PHY, cycles
  std::uint32_t write_forward_latency = 4;  // cycles, before `latency`

  static ControllerParams from_config(const config::Config& config);
};

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

class DramController {
 public:
  DramController(const DramSpec& spec, const ControllerParams& params, ChannelTiming& timing, std::uint32_t pc,
                 PcStats stats, CompletionSink& sink);

  bool can_accept(bool write) const {
    return write ? writes_.size() < params_.write_queue : reads_.size() < params_.read_queue;
  }
  /// Precondition: can_accept(request.write); `at` decodes to this pseudo-channel.
  void enqueue(const MemRequest& request, const DecodedAddress& at, Cycle now);

  /// Issues what may issue at cycle t (t >= the last step's cycle).
  void step(Cycle t);
  /// The next cycle step() has work; kNever when no request is queued.
  Cycle next_cycle() const { return held() == 0 ? kNever : next_; }
  /// Accounts the refreshes that fell due up to `now` while nothing was queued.
  void catch_up(Cycle now);

  std::size_t held() const { return reads_.size() + writes_.size(); }
  /// The arrival of the oldest request of the direction being served (of the other when
  /// none of it is queued); kNever when nothing is. What BusArbiter::Oldest compares.
  Cycle oldest_arrival() const {
    const Queue& first = writing_ ? writes_ : reads_;
    const Queue& second = writing_ ? reads_ : writes_;
    return !first.empty() ? first.at(0).request.arrival : !second.empty() ? second.at(0).request.arrival : kNever;
  }
  bool writing() const { return writing_; }
  /// The open row of a bank (flat index within the pseudo-channel), or kClosed.
  std::uint32_t open_row(std::uint32_t bank) const { return banks_[bank].open_row; }
  static constexpr std::uint32_t kClosed = 0xffffffffu;
  static constexpr std::uint32_t kNoBank = 0xffffffffu;

 private:
  enum class Kind : std::uint8_t { Hit, Miss, Conflict };
  struct Entry {
    MemRequest request;
    BankCoord where;
    std::uint32_t row;
    Kind kind;
  };
  // A fixed-capacity queue in arrival order: slots plus an order list of slot indices.
  class Queue {
   public:
    explicit Queue(std::uint32_t capacity);
    std::size_t size() const { return order_.size(); }
    bool empty() const { return order_.empty(); }
    Entry& at(std::size_t position) { return slots_[order_[position]]; }
    const Entry& at(std::size_t position) const { return slots_[order_[position]]; }
    void push(const Entry& e);
    void erase(std::size_t position);

   private:
    std::vector<Entry> slots_;
    std::vector<std::uint16_t> order_;
    std::vector<std::uint16_t> free_;
  };
  struct Bank {
    std::uint32_t open_row = kClosed;
    std::uint32_t hits[2] = {0, 0};    // queued requests (reads, writes) that hit open_row
    std::uint32_t queued[2] = {0, 0};  // queued requests (reads, writes) of this bank
    bool refreshed = false;            // in the current per-bank refresh round
  };

  void update_mode(Cycle t);
  bool wants_writing(Cycle t) const;
  bool refresh_allbank(Cycle t, Cycle& next);
  bool refresh_perbank(Cycle t, Cycle& next, bool& row_bus_used, std::uint32_t& blocked_bank);
  std::uint32_t choose_refresh_target();
  void refreshed_bank(std::uint32_t bank);
  Cycle next_from_banks(std::uint32_t blocked_bank) const;
  void open_row(std::uint32_t bank, std::uint32_t row);
  void close_bank(std::uint32_t bank);
  void close_all();
  void serve(Queue& q, std::size_t position, bool auto_precharge, Cycle t);
  BankCoord bank_coord(std::uint32_t bank) const { return {pc_, bank / spec_banks_per_group_, bank}; }

  ControllerParams params_;
  ChannelTiming& timing_;
  std::uint32_t pc_;
  PcStats stats_;
  CompletionSink& sink_;

  std::uint32_t CL_, CWL_, nBL_, access_bytes_;
  std::uint32_t spec_banks_per_group_;
  std::uint32_t refresh_interval_;  // tREFI or tREFI / banks
  std::uint32_t trp_;

  Queue reads_;
  Queue writes_;
  std::vector<Bank> banks_;
  std::vector<std::uint64_t> asked_;  // per bank: the step (stamp_) that found it not ready
  std::uint64_t stamp_ = 0;
  bool writing_ = false;
  Cycle next_ = 0;

  std::uint32_t total_hits_[2] = {0, 0};  // sum of banks' hits

  Cycle refresh_due_;
  std::uint32_t owed_ = 0;
  std::uint32_t refresh_target_;       // per-bank: the bank being refreshed, or none chosen
  std::uint32_t refresh_rr_ = 0;       // per-bank: where the search for the next target starts
  std::uint32_t refreshed_count_ = 0;  // per-bank: banks refreshed in this round
};

}  // namespace sohusim::memory
