#pragma once
// Counter: a monotonically increasing event count (commands issued, bytes moved,
// cycles active). The increment is a plain inline add on a uint64_t — no atomics,
// no virtual call, no lookup — because models bump counters on their hottest paths
// and the simulation kernel is single-threaded.

#include <cstdint>
#include <string>
#include <utility>

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

  void inc(std::uint64_t n = 1) { *value_ += n; }
  Counter& operator+=(std::uint64_t n) {
    *value_ += n;
    return *this;
  }
  Counter& operator++() {
    ++*value_;
    return *this;
  }
  std::uint64_t count() const { return *value_; }
  /// Where the count lives. Adding to it is inc(); code that adds to many counters at once
  /// (a replayed command's increments) walks these dense slots without touching the
  /// Counter objects and their names.
  std::uint64_t* slot() { return value_; }

  StatKind kind() const override { return StatKind::Counter; }
  double value() const override { return static_cast<double>(*value_); }
  void reset() override { *value_ = 0; }

 private:
  std::uint64_t own_ = 0;
  std::uint64_t* value_ = &own_;
};

}  // namespace sohusim::counters
