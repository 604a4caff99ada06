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
// The registry shares ownership of the batches it is owed, so a batch whose owner is gone is
// still settled; the counters themselves are the registry's. Single-threaded, like the rest
// of the registry.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace sohusim::counters {

struct AddBatch {
  std::vector<std::pair<std::uint64_t*, std::uint64_t>> adds;  // counter slot, amount
  std::uint64_t owed = 0;                                      // times the adds are owed
};

class DeferredAdds {
 public:
  /// The batch's adds are owed `times` more times.
  void owe(const std::shared_ptr<AddBatch>& batch, std::uint64_t times = 1) {
    if (times == 0) return;
    if (batch->owed == 0) owing_.push_back(batch);
    batch->owed += times;
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
    dirty_ = false;
  }

 private:
  std::vector<std::shared_ptr<AddBatch>> owing_;
  bool dirty_ = false;
};

}  // namespace sohusim::counters
