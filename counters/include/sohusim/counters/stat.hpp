#pragma once
// Stat: the common face of every named statistic in the registry.
//
// A statistic has a hierarchical, stable name (`dev0.me3.active_cycles`), a unit
// and a one-line description (gem5's stats are the model). Concrete kinds are
// Counter, Gauge, Distribution and Formula; the registry owns them and hands out
// references that stay valid for its lifetime, so models keep a reference and
// update it on their hot path without any lookup.

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sohusim::counters {

enum class StatKind { Counter, Gauge, Distribution, Formula };

const char* to_string(StatKind kind);

class Stat {
 public:
  Stat(std::string name, std::string unit, std::string description)
      : name_(std::move(name)), unit_(std::move(unit)), description_(std::move(description)) {}
  virtual ~Stat() = default;
  Stat(const Stat&) = delete;
  Stat& operator=(const Stat&) = delete;

  const std::string& name() const { return name_; }
  const std::string& unit() const { return unit_; }
  const std::string& description() const { return description_; }

  virtual StatKind kind() const = 0;
  // The scalar a formula or a sample sees: a counter's count, a gauge's current
  // value, a distribution's mean, a formula's result (NaN when undefined).
  virtual double value() const = 0;
  // Back to the state after registration (gauges keep their current level, see Gauge).
  virtual void reset() = 0;
  // Kind-specific detail for dumps (count/min/max/percentiles for distributions...).
  virtual void to_json(nlohmann::json& out) const;

 private:
  std::string name_;
  std::string unit_;
  std::string description_;
};

}  // namespace sohusim::counters
