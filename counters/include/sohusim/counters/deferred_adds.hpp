#pragma once
// DeferredAdds: counter increments that are owed rather than done, settled the moment anyone
// reads a counter. A replayed device command adds the same increments to hundreds of counters
// (every pseudo-channel's bytes and commands, every engine's cycles) each time it repeats;
// adding them is most of what a replay costs (and a refresh interval adds one REF to every
// pseudo-channel). Instead it owes its AddBatch once more (O(1)),
// and the registry's DeferredAdds settles every owed batch, each slot += amount x times owed,
// before any counter is read (Counter::count, value, reset call settle() when something is
// owed). A reader therefore sees exactly what it would have seen had every add been done
// when it was owed; only the work moves.
//
// A sum over some counters that is read far more often than its parts (the profiler's stamp at
// every TIMESTAMP command, a bandwidth track's bins) would settle everything at each read:
// every replayed command's increments, one command at a time, the work the deferral saves.
// Registry::watch_sum makes such a sum readable without settling: the batches carry what
// they bring each watched sum (AddBatch::sums), owing a batch adds that to the sum's owed
// total, and the sum reads as its parts' counts plus its owed total.
//
// The registry shares ownership of the batches it is owed, so a batch whose owner is gone is
// still settled; the counters themselves are the registry's. Single-threaded, like the rest
// of the registry.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace sohusim::counters {

struct AddBatch {
  std::vector<std::pair<std::uint64_t*, std::uint64_t>> adds;  // counter slot, amount
  // What the adds bring each watched sum (Registry::watch_sum), by sum id: filled by
  // Registry::owe, so that a watched sum is read without settling.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> sums;
  std::uint64_t sums_generation = ~std::uint64_t{0};  // the registry's count of watched sums when filled
  std::uint64_t owed = 0;                             // times the adds are owed
};

class DeferredAdds {
 public:
  /// The batch's adds are owed `times` more times.
  void owe(const std::shared_ptr<AddBatch>& batch, std::uint64_t times = 1) {
    if (times == 0) return;
    if (batch->owed == 0) owing_.push_back(batch);
    batch->owed += times;
    for (const auto& [sum, n] : batch->sums) owed_to_sum_[sum] += n * times;
    dirty_ = true;
  }
  bool dirty() const { return dirty_; }
  /// Does every owed add.
  void settle() {
    for (const std::shared_ptr<AddBatch>& b : owing_) {
      for (const auto& [slot, n] : b->adds) *slot += n * b->owed;
      b->owed = 0;
    }
    owing_.clear();
    std::fill(owed_to_sum_.begin(), owed_to_sum_.end(), 0);
    dirty_ = false;
  }
  /// A new watched sum's id (Registry::watch_sum).
  std::uint32_t add_sum() {
    owed_to_sum_.push_back(0);
    return static_cast<std::uint32_t>(owed_to_sum_.size() - 1);
  }
  /// What the owed batches would add to watched sum `id`.
  std::uint64_t owed_to_sum(std::uint32_t id) const { return owed_to_sum_[id]; }

 private:
  std::vector<std::shared_ptr<AddBatch>> owing_;
  std::vector<std::uint64_t> owed_to_sum_;  // per watched sum
  bool dirty_ = false;
};

}  // namespace sohusim::counters
