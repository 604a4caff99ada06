#pragma once
// FastDram: the `fast` fidelity of the HBM. Each pseudo-channel is two servers, its data bus
// and its activation pipeline, charged a few calibrated terms per access; no command is
// simulated. It sits behind the same MemoryBackend interface as the command-level DramSystem,
// is built from the same DramSpec, AddressMapping and hbm.controller.* configuration, and
// registers the same per-pseudo-channel statistics, so nothing above it depends on the
// fidelity.
//
// Use: FastDram::from_config(config, inst, "dev0.hbm"), then enqueue() single accesses or
// enqueue_bulk() whole transfers, advance_to() and next_event() as with any MemoryBackend.
//
// The cost of a request is a small constant, whatever it is:
//   - a single access: O(1) (its bank's row state, two servers, one completion on a heap);
//   - a bulk transfer of two mapping groups or more: O(1). Every pseudo-channel gets the same
//     share (whole groups exactly, the partial groups at the ends spread), and the servers of
//     all pseudo-channels are charged at once through a lazy max-plus offset (Lanes);
//   - a smaller bulk transfer: its runs (accesses of one row of one pseudo-channel), each
//     booked as a single access is.
//
// What each access is charged (docs/memory-frontend.md states the terms; the fitted values and
// the residuals of the fit are in memory/src/fast_dram_calibration.cpp, and `sohusim config
// schema` shows them as the hbm.fast.* defaults):
//   - data bus: max(nBL, tCCD_S) cycles per access. Read/write turnarounds, which the
//     controller pays once per write batch, as averages: a single access whose direction
//     differs from the one booked before it in its pseudo-channel adds `switch_bus_cost` to
//     the data bus and `switch_act_cost` to the activation pipeline (the pseudo-channel
//     issues nothing during a turnaround); a bulk write while reads are in flight adds
//     `write_switch_cost` per access;
//   - rows: per bank the open row, as the page policy leaves it (open: until a conflict;
//     closed: never; adaptive: while an access queued before its last column hits it). A miss
//     or conflict needs an activation: its bank is ready tRC after its last ACT and after its
//     last column's recovery (tRTP, or CWL + nBL + tWR) plus tRP; the column follows tRCD
//     after the ACT;
//   - activations: a pseudo-channel's activations are spaced `act_gap` cycles apart (tFAW / 4
//     and tRRD in the standard, and the row bus the two pseudo-channels of a channel share),
//     so random traffic is activation-bound;
//   - bulk transfers (two groups or more): per pseudo-channel, their accesses on the data bus
//     plus `stream_act_cost` bus cycles per activation; the activations are the row visits of
//     the groups they touch (from the mapping's digits above the pseudo-channel ones), less
//     those a transfer before left open (per low digit, the last eight row visits);
//   - writes: a write waits in the write buffer while reads are queued in its pseudo-channel,
//     until their columns have issued or the buffer reaches write_high; then the buffered
//     writes are booked as a batch (down to write_low if reads wait, all otherwise);
//   - refresh: all-bank, a blackout of tRP + tRFCab every tREFI for single accesses, the same
//     share as a duty cycle for bulk transfers, rows closed after each; per-bank, each bank
//     blacked out tRFCpb once per tREFI in a fixed rotation and each REFpb holding the
//     activation pipeline tRREFD; off;
//   - FR-FCFS: the servers are work-conserving (an access waiting for its bank does not hold
//     the bus from the others), which is what serving ready requests first achieves, and an
//     access to one of the last four rows conflicts are closing in its bank, arriving before
//     that row's precharge, is a hit in it (served before the precharge). FCFS:
//     an access's commands wait for the column command of the access booked before it in its
//     pseudo-channel;
//   - back-pressure: an access holds its controller queue entry until its column command, a
//     buffered write until it is booked;
//   - completion: the last data beat plus hbm.controller.latency.
//
// What it cannot see (the detailed model can): which request a scheduler picks from its
// queue beyond the above (bank conflicts among queued requests, the order of a write batch),
// phases of refresh against traffic, the shared command buses cycle by cycle, reads served
// from the write queue, and the exact moment a write mode starts and ends. Its bounds
// against the detailed model are held in tests/memory/test_fast_vs_detailed.cpp and
// tests/memory/test_hbm_memory.cpp.
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "sohusim/counters/deferred_adds.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/address_mapping.hpp"
#include "sohusim/memory/dram_controller.hpp"
#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/fast_dram_calibration.hpp"
#include "sohusim/memory/memory_backend.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::memory {

struct FastDramParams {
  ControllerParams controller;
  FastDramCalibration calibration = FastDramCalibration::fitted();
};

class FastDram final : public MemoryBackend {
 public:
  FastDram(const DramSpec& spec, const AddressMapping& mapping, const FastDramParams& params,
           const sim::Instrumentation& inst, const std::string& stats_prefix);
  static std::unique_ptr<FastDram> from_config(const config::Config& config, const sim::Instrumentation& inst,
                                               const std::string& stats_prefix);
  ~FastDram() override;

  std::uint64_t capacity_bytes() const override { return spec_.org.capacity_bytes(); }
  std::uint32_t access_bytes() const override { return spec_.org.access_bytes(); }
  double clock_hz() const override { return spec_.clock_hz(); }
  double peak_bytes_per_second() const override { return spec_.peak_bytes_per_second(); }

  bool can_accept(std::uint64_t addr, bool write) const override;
  void enqueue(MemRequest request) override;
  void advance_to(Cycle cycle) override;
  Cycle now() const override { return now_; }
  Cycle next_event() const override;
  std::size_t pending() const override { return pending_; }

  // A transfer of `bytes` (a whole number of aligned accesses) from `addr`, completed as one
  // request (id) when its last access is. No queue back-pressure: the owner bounds what it
  // has in flight.
  void enqueue_bulk(std::uint64_t addr, std::uint64_t bytes, bool write, std::uint64_t id);

  const DramSpec& spec() const { return spec_; }
  const AddressMapping& mapping() const { return mapping_; }
  const FastDramParams& params() const { return params_; }
  // The end of work needing `cost` cycles from `from` that loses `window` cycles at every
  // refresh it reaches (the first at `first`, then one every `interval`), in closed form.
  static Cycle stretched_by_refreshes(Cycle from, Cycle cost, Cycle first, Cycle interval, Cycle window);

 private:
  // One value per pseudo-channel, read as max(own[p], floor) + offset: charging every
  // pseudo-channel the same cost from the same arrival is O(1) (floor and offset move),
  // one pseudo-channel's update is O(1) too. Exact, not an approximation.
  struct Lanes {
    std::vector<double> own;
    double floor = 0, offset = 0, own_max = 0;
    double get(std::size_t p) const { return (own[p] > floor ? own[p] : floor) + offset; }
    void set(std::size_t p, double v) {  // precondition: v >= get(p)
      own[p] = v - offset;
      if (own[p] > own_max) own_max = own[p];
    }
    void charge_all(double arrival, double cost) {  // every lane: max(arrival, lane) + cost
      if (arrival - offset > floor) floor = arrival - offset;
      offset += cost;
    }
    double max() const { return (own_max > floor ? own_max : floor) + offset; }
  };
  struct Bank {
    std::uint32_t row = 0xffffffffu;  // open row (kClosed: none)
    bool write = false;               // its last column was a write
    Cycle act = 0;                    // its last ACT
    Cycle last_col = 0;               // its last column command
    // The rows conflicts are closing, newest first: FR-FCFS still serves their queued hits
    // until the precharge before the ACT that closes each (close).
    struct Past {
      std::uint32_t row = 0xffffffffu;
      Cycle act = 0, col = 0, close = 0;
    };
    static constexpr int kPast = 4;
    Past past[kPast];
  };
  // A run of accesses in one row of one pseudo-channel waiting in the write buffer: a single
  // write (parent 0) or a run of a bulk transfer (its parent).
  struct Item {
    MemRequest request;
    DecodedAddress where;
    std::uint32_t n;
    std::uint32_t parent;  // index + 1 into parents_; 0: a single access
  };
  struct Pc {
    std::uint32_t reads = 0;     // single reads in flight
    bool last_write = false;     // the direction of the last access booked by book_run
    Cycle last_col = 0;          // the last column booked (FCFS serves in that order)
    Cycle read_col = 0;          // the last column of the reads booked
    std::deque<Item> writes;     // the write buffer: writes wait here while reads are queued
    std::uint64_t buffered = 0;  // accesses in `writes`
    Cycle drain_check = kNever;  // when a drain check is scheduled
    using MinHeap = std::priority_queue<Cycle, std::vector<Cycle>, std::greater<Cycle>>;
    mutable MinHeap cols[2];  // column cycles of booked accesses not issued yet [write]
  };
  // A bulk transfer: completed when its last part (runs, whole groups) is.
  struct Parent {
    MemRequest request;
    std::uint64_t parts = 0;  // not completed yet
  };
  enum class Kind : std::uint8_t { Single, Part, DrainCheck };
  struct Done {
    Cycle at;
    std::uint64_t seq;
    MemRequest request;
    std::uint32_t pc;
    std::uint32_t parent;  // Part: index + 1 into parents_
    Kind kind;
    bool operator>(const Done& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void check(std::uint64_t addr, std::uint64_t bytes) const;
  std::uint32_t pc_index(const DecodedAddress& d) const {
    return (d.stack * spec_.org.channels + d.channel) * spec_.org.pseudo_channels + d.pseudo_channel;
  }
  std::size_t queued(const Pc& pc, bool write) const;
  Cycle bus_start(Cycle t) const;  // t, or the end of the all-bank window it falls in
  static double stretched(double from, double cost, Cycle interval, Cycle window);
  double bus_after(double start, double cost) const;          // start + cost, stretched over all-bank windows
  double act_after(double start, double cost) const;          // the same for the activation pipeline (and REFpbs)
  Cycle bank_refresh_end(std::uint32_t bank, Cycle t) const;  // per-bank: t, or its window's end
  bool refreshed_between(std::uint32_t bank, Cycle a, Cycle b) const;  // a refresh closed its rows
  bool row_open(const Bank& bk, std::uint32_t bank, Cycle arrive, Cycle use) const;
  // Books `n` accesses of one row of pseudo-channel `pc` (a single access, or a run of a
  // bulk transfer) at the current cycle; returns when the last completes.
  Cycle book_run(std::uint32_t pc, const DecodedAddress& d, std::uint64_t n, bool write);
  // A read is booked at once; a write goes through the write buffer.
  void submit(std::uint32_t pc, const Item& item);
  void finish(std::uint32_t pc, const Item& item, Cycle at);  // its completion event
  void drain(std::uint32_t pc, std::uint64_t keep);           // books buffered writes down to `keep`
  void schedule_drain(std::uint32_t pc, Cycle at);
  void count_refreshes(Cycle cycle);

  DramSpec spec_;
  AddressMapping mapping_;
  FastDramParams params_;
  std::vector<Pc> pcs_;
  std::vector<PcStats> stats_;
  std::vector<Bank> banks_;  // pc * banks_per_pc + bank
  Lanes bus_, act_;          // per pseudo-channel: data bus and activation pipeline free from
  std::priority_queue<Done, std::vector<Done>, std::greater<Done>> done_;
  std::vector<Parent> parents_;
  std::vector<std::uint32_t> free_parents_;
  std::uint64_t seq_ = 0;
  Cycle now_ = 0;
  std::size_t pending_ = 0;
  mutable Cycle wake_ = kNever;  // when a queue that refused a request has room again

  // Timing, derived once.
  Cycle burst_ = 2;         // data-bus cycles per access
  Cycle window_ = 0;        // all-bank blackout (tRP + tRFCab); 0 without all-bank refresh
  Cycle refpb_step_ = 0;    // per-bank: tREFI / banks; 0 without per-bank refresh
  double bulk_duty_ = 1.0;  // whole-group bulk costs are divided by this (refresh's share)
  double act_duty_ = 1.0;   // the same for their activations
  // The mapping: accesses in a row of the same pseudo-channel (below its digits), the
  // accesses of one group that visits every pseudo-channel the same (0: no such groups).
  std::uint64_t run_ = 1;
  std::uint64_t group_ = 0;
  // Above the pseudo-channel digits, group index u = L x (C x block + column) + low: the
  // row visits (bank and row) of whole groups [u0, u1) are the distinct (low, block) pairs.
  std::uint64_t visit_low_ = 1, visit_columns_ = 1;
  // Per low digit: the blocks (row visits) whole groups last visited with it, and until when
  // each stays open (its transfer's end; the adaptive policy closes it then). Several, as
  // transfers of several streams come interleaved, each going on where its last one ended.
  struct StreamRow {
    std::uint64_t block = ~std::uint64_t{0};
    Cycle until = 0;
  };
  static constexpr std::size_t kStreamRows = 8;
  std::vector<std::array<StreamRow, kStreamRows>> stream_rows_;
  // Row activations per pseudo-channel of whole groups [u0, u1) arriving at `arrival` (a
  // visit of the row a bulk transfer left open costs none); remembers the rows it leaves open
  // until `until`.
  std::uint64_t activations(std::uint64_t u0, std::uint64_t u1, Cycle arrival, Cycle until);
  double act_carry_ = 0;             // fractional activations of uniform bulk transfers, not counted yet
  std::uint64_t carry_[2] = {0, 0};  // [write]: their accesses not counted yet (fewer than the pseudo-channels)
  Cycle bulk_reads_until_ = 0;       // bulk reads complete by then
  std::size_t single_reads_ = 0;     // single reads in flight, all pseudo-channels

  counters::Counter* cycles_ = nullptr;
  counters::Registry* registry_ = nullptr;
  Cycle refreshes_counted_ = 0;
  std::shared_ptr<counters::AddBatch> refresh_adds_ = std::make_shared<counters::AddBatch>();
  // Per access of a uniform bulk transfer, on every pseudo-channel: [write][activation].
  std::shared_ptr<counters::AddBatch> bulk_adds_[2][2];
};

}  // namespace sohusim::memory
