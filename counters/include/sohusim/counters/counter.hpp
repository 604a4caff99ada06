#pragma once
// Counter: a monotonically increasing event count (commands issued, bytes moved,
// cycles active). The increment is a plain inline add on a uint64_t — no atomics,
// no virtual call, no lookup — because models bump counters on their hottest paths
// and the simulation kernel is single-threaded. Reads settle the registry's owed increments
// first (deferred_adds.hpp).

#include <cstdint>
#include <string>
#include <utility>

#include "sohusim/counters/deferred_adds.hpp"
#include "sohusim/counters/stat.hpp"

namespace sohusim::counters {

class Counter final : public Stat {
 public:
  /// A counter that keeps its count in itself.
  Counter(std::string name, std::string unit, std::string description)
      : Stat(std::move(name), std::move(unit), std::move(description)) {}
  /// A counter whose count lives at `slot` (the registry keeps the counts of all its
  /// counters side by side, apart from the names: see slot()). `*slot` starts at 0.
  Counter(std::uint64_t* slot, std::string name, std::string unit, std::string description)
      : Stat(std::move(name), std::move(unit), std::move(description)), value_(slot) {
    *value_ = 0;
  }
  /// The same, with the registry's owed increments (deferred_adds.hpp): settled before any
  /// read of this counter.
  Counter(std::uint64_t* slot, DeferredAdds* deferred, std::string name, std::string unit, std::string description)
      : Stat(std::move(name), std::move(unit), std::move(description)), value_(slot), deferred_(deferred) {
    *value_ = 0;
  }

  void inc(std::uint64_t n = 1) { *value_ += n; }
  Counter& operator+=(std::uint64_t n) {
    *value_ += n;
    return *this;
  }
  Counter& operator++() {
    ++*value_;
    return *this;
  }
  std::uint64_t count() const {
    settle();
    return *value_;
  }
  /// Where the count lives. Adding to it is inc(); code that adds to many counters at once
  /// (a replayed command's increments) walks these dense slots without touching the
  /// Counter objects and their names.
  std::uint64_t* slot() { return value_; }
  const std::uint64_t* slot() const { return value_; }

  StatKind kind() const override { return StatKind::Counter; }
  double value() const override { return static_cast<double>(count()); }
  void reset() override {
    settle();  // what was owed before the reset is forgotten with the rest
    *value_ = 0;
  }

 private:
  void settle() const {
    if (deferred_ != nullptr && deferred_->dirty()) deferred_->settle();
  }
  std::uint64_t own_ = 0;
  std::uint64_t* value_ = &own_;
  DeferredAdds* deferred_ = nullptr;
};

}  // namespace sohusim::counters
