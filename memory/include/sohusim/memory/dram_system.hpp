#pragma once
// DramSystem: the detailed (command-level) HBM model behind the MemoryBackend interface.
//
// One DramController per pseudo-channel of every channel of every stack; the two
// pseudo-channels of a channel share a ChannelTiming (their row and column command
// buses). An address is decoded once by the AddressMapping and handed to its controller.
//
// Event loop. Controllers sit in an indexed min-heap keyed by the next cycle they have
// work (kNever when they hold no request); finished requests sit in a min-heap keyed by
// completion cycle (then by issue order, so equal cycles complete in a fixed order).
// advance_to(T) pops whichever comes first until both lie beyond T, so the cost is per
// command and per completion, never per cycle, and an idle memory costs nothing: a
// controller's refreshes that fell due while it held nothing are accounted when it next
// receives a request (or by sync_stats()).
//
// Arbitration (`hbm.controller.bus_arbiter`). When pseudo-channels of one channel have
// work at the same cycle, one steps first and so takes the shared row and column command
// buses if both want them. `fixed` (the default): the lower index. `oldest`: the one
// holding the older request (DramController::oldest_arrival), as a channel-wide FR-FCFS
// scheduler would order them. A fixed order can lock one pseudo-channel behind the other:
// on the 1056 B stride of 32 B writes (`sohusim mem --pattern strided:1056 --reads 0
// --size 32 --refresh off`) pc1 of every channel issues 9 % more ACTs than pc0 for the
// same traffic shifted, 282.8 GB/s against 325.0 with `oldest` (326.7 with the buses left
// out). Rules tried and dropped (2026-12-04, docs/memory.md): two turn-taking ones (the
// one that stepped last, or issued last, goes last) also lock one behind; a seeded random
// draw does not, but slows streams of a few large requests in flight by 3-9 %.
//
// Statistics, under the given scope (e.g. "dev0.hbm"):
//   cycles                               elapsed memory cycles (advance_to keeps it)
//   s<k>.ch<c>.pc<p>.{act, pre, rd, wr, refab, refpb, row_hits, row_misses, row_conflicts,
//       bytes_read, bytes_written, busy_cycles, reads_from_write_queue}     counters
//   s<k>.ch<c>.pc<p>.{read_queue, write_queue, read_latency (ns)}         distributions
//   s<k>.ch<c>.pc<p>.{bandwidth, efficiency, row_hit_rate}                 formulas
//   s<k>.{bandwidth, efficiency, row_hit_rate}, {bandwidth, efficiency, row_hit_rate}
// bandwidth is GB/s over the elapsed time; efficiency is bandwidth / peak (a fraction).
#include <cstdint>
#include <memory>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/address_mapping.hpp"
#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/dram_controller.hpp"
#include "sohusim/memory/dram_spec.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::config {
class Config;
}

namespace sohusim::memory {

class DramSystem final : public MemoryBackend {
 public:
  DramSystem(DramSpec spec, AddressMapping mapping, ControllerParams params, const counters::Scope& scope);
  /// Spec, mapping and controller parameters from a resolved configuration holding the
  /// hbm_schema() keys.
  static std::unique_ptr<DramSystem> from_config(const config::Config& config, const counters::Scope& scope);
  ~DramSystem() override;

  DramSystem(const DramSystem&) = delete;
  DramSystem& operator=(const DramSystem&) = delete;

  // MemoryBackend
  std::uint64_t capacity_bytes() const override { return spec_.org.capacity_bytes(); }
  std::uint32_t access_bytes() const override { return spec_.org.access_bytes(); }
  double clock_hz() const override { return spec_.clock_hz(); }
  double peak_bytes_per_second() const override { return spec_.peak_bytes_per_second(); }
  /// An address outside the memory answers true, so that enqueue() reports it.
  bool can_accept(std::uint64_t addr, bool write) const override;
  void enqueue(MemRequest request) override;
  void advance_to(Cycle cycle) override;
  Cycle now() const override { return now_; }
  Cycle next_event() const override;
  std::size_t pending() const override { return pending_; }

  /// Accounts, up to now(), the refreshes of controllers that hold no request, so that
  /// refab/refpb counts are complete before statistics are read.
  void sync_stats();

  const DramSpec& spec() const { return spec_; }
  const AddressMapping& mapping() const { return mapping_; }
  const ControllerParams& params() const { return params_; }
  /// Controllers in (stack, channel, pseudo-channel) order.
  DramController& controller(std::uint32_t stack, std::uint32_t channel, std::uint32_t pc);
  ChannelTiming& channel_timing(std::uint32_t stack, std::uint32_t channel);

 private:
  class Completions;
  class ControllerHeap;

  std::uint32_t index_of(const DecodedAddress& d) const {
    return (d.stack * spec_.org.channels + d.channel) * spec_.org.pseudo_channels + d.pseudo_channel;
  }
  void check_address(std::uint64_t addr) const;
  /// BusArbiter::Oldest: of `top` (the heap's) and the pseudo-channels of its channel also
  /// due at cycle t, the one holding the oldest request (`top` at equal age).
  std::uint32_t oldest_due(std::uint32_t top, Cycle t) const;

  DramSpec spec_;
  AddressMapping mapping_;
  ControllerParams params_;
  counters::Counter& cycles_;
  std::unique_ptr<Completions> completions_;
  std::unique_ptr<ControllerHeap> heap_;
  std::vector<ChannelTiming> timings_;
  std::vector<DramController> controllers_;
  Cycle now_ = 0;
  std::size_t pending_ = 0;
};

}  // namespace sohusim::memory
