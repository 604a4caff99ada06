#pragma once
// KvBlockManager: the paged KV cache's bookkeeping on the host, as a serving engine keeps it
// (vLLM's block manager): device HBM set aside for the KV cache is cut into blocks of
// `block_tokens` token positions; each sequence owns a block table (its blocks in position
// order), which the attention commands are handed so that the device gathers K and V through
// it. The manager decides nothing about scheduling; it answers what the scheduler asks:
//
//   can_admit(tokens)   are there blocks for a new sequence's prompt, leaving the watermark
//                       free (so that running sequences can still grow)?
//   admit / append      give a sequence its blocks / one more position (a new block at each
//                       block boundary); append fails (returns false) when none is free: the
//                       scheduler preempts then
//   release             a finished or preempted-for-recompute sequence's blocks go back
//   swap_out / swap_in  a preempted sequence's blocks leave the device for host memory (the
//                       caller moves the bytes over PCIe) and come back, to new blocks
//
// Blocks are handed out lowest index first and returned to a free list, so a run is
// deterministic. Statistics under the scope: blocks_used (a gauge), allocations (blocks
// handed out), preemptions, swapped_out_bytes, swapped_in_bytes. Misuse (an unknown or duplicate sequence, a sequence
// swapped twice) throws std::logic_error naming the sequence.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "sohusim/counters/registry.hpp"

namespace sohusim::workloads {

struct KvCacheOptions {
  std::uint32_t block_tokens = 16;  // token positions per block
  std::uint64_t blocks = 0;         // blocks on the device
  std::uint64_t block_bytes = 0;    // bytes per block (all layers, K and V, this device's heads)
  double watermark = 0.01;          // share of blocks admission keeps free
  void validate() const;            // std::invalid_argument naming the field
};

class KvBlockManager {
 public:
  KvBlockManager(const KvCacheOptions& options, const counters::Scope& scope);

  std::uint64_t blocks_for(std::uint64_t tokens) const;
  bool can_admit(std::uint64_t tokens) const;
  /// Blocks a sequence may hold when admitted into an empty cache (all but the watermark's).
  std::uint64_t admittable_blocks() const { return options_.blocks - reserve_; }
  bool admittable(std::uint64_t tokens) const { return blocks_for(tokens) <= admittable_blocks(); }
  /// A new sequence with `tokens` positions (its prompt). Throws std::logic_error if it exists
  /// or if the blocks are not there (ask can_admit first).
  void admit(std::uint64_t seq, std::uint64_t tokens);
  /// One more position; false (nothing changed) when it needs a block and none is free.
  bool append(std::uint64_t seq);
  /// The sequence's blocks go back to the free list; with `preempted` it counts as a
  /// preemption (recompute).
  void release(std::uint64_t seq, bool preempted = false);
  /// The sequence's blocks leave the device; returns the bytes to move to the host.
  std::uint64_t swap_out(std::uint64_t seq);
  bool can_swap_in(std::uint64_t seq) const;
  /// New blocks for a swapped-out sequence; returns the bytes to move back.
  std::uint64_t swap_in(std::uint64_t seq);

  const std::vector<std::uint64_t>& table(std::uint64_t seq) const;  // its blocks, in position order
  std::uint64_t tokens(std::uint64_t seq) const;
  bool swapped(std::uint64_t seq) const { return swapped_.count(seq) != 0; }
  std::uint64_t blocks_free() const { return options_.blocks - used_blocks_; }
  std::uint64_t blocks_used() const { return used_blocks_; }
  std::uint64_t sequences() const { return seqs_.size(); }
  const KvCacheOptions& options() const { return options_; }

 private:
  struct Seq {
    std::vector<std::uint64_t> blocks;
    std::uint64_t tokens = 0;
  };
  const Seq& at(std::uint64_t seq, const char* call) const;  // throws naming the sequence and the call
  Seq& at(std::uint64_t seq, const char* call) {
    return const_cast<Seq&>(static_cast<const KvBlockManager*>(this)->at(seq, call));
  }
  std::uint64_t take();

  KvCacheOptions options_;
  std::uint64_t reserve_ = 0;  // blocks admission leaves free
  void give_back(const std::vector<std::uint64_t>& blocks);
  // Free blocks: those returned (lowest first) and every block from fresh_ on, never used;
  // memory grows with the blocks in use, not with the cache's size.
  std::set<std::uint64_t> returned_;
  std::uint64_t fresh_ = 0, used_blocks_ = 0;
  std::map<std::uint64_t, Seq> seqs_;               // on the device
  std::map<std::uint64_t, std::uint64_t> swapped_;  // sequence -> tokens, in host memory
  counters::Gauge& used_;
  counters::Counter& allocations_;
  counters::Counter& preemptions_;
  counters::Counter& swapped_out_bytes_;
  counters::Counter& swapped_in_bytes_;
};

}  // namespace sohusim::workloads
