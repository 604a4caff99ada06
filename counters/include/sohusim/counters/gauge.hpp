#pragma once
// Gauge: a level that goes up and down (queue occupancy, outstanding reads, SRAM
// bytes in use), with its high-water mark. A reset keeps the current level — the
// queue is still as full as it was — and restarts the high-water mark from it.

#include <algorithm>

#include "sohusim/counters/stat.hpp"

namespace sohusim::counters {

class Gauge final : public Stat {
 public:
  using Stat::Stat;

  void set(double v) {
    current_ = v;
    max_ = std::max(max_, v);
  }
  void add(double delta) { set(current_ + delta); }
  double current() const { return current_; }
  double max() const { return max_; }

  StatKind kind() const override { return StatKind::Gauge; }
  double value() const override { return current_; }
  void reset() override { max_ = current_; }
  void to_json(nlohmann::json& out) const override;

 private:
  double current_ = 0.0;
  double max_ = 0.0;
};

}  // namespace sohusim::counters
