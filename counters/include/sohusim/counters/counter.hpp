#pragma once
// Counter: a monotonically increasing event count (commands issued, bytes moved,
// cycles active). The increment is a plain inline add on a uint64_t — no atomics,
// no virtual call, no lookup — because models bump counters on their hottest paths
// and the simulation kernel is single-threaded.

#include "sohusim/counters/stat.hpp"

namespace sohusim::counters {

class Counter final : public Stat {
 public:
  using Stat::Stat;

  void inc(std::uint64_t n = 1) { value_ += n; }
  Counter& operator+=(std::uint64_t n) {
    value_ += n;
    return *this;
  }
  Counter& operator++() {
    ++value_;
    return *this;
  }
  std::uint64_t count() const { return value_; }

  StatKind kind() const override { return StatKind::Counter; }
  double value() const override { return static_cast<double>(value_); }
  void reset() override { value_ = 0; }

 private:
  std::uint64_t value_ = 0;
};

}  // namespace sohusim::counters
