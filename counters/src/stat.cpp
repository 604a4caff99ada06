#include "sohusim/counters/stat.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "sohusim/counters/gauge.hpp"

namespace sohusim::counters {

const char* to_string(StatKind kind) {
  switch (kind) {
    case StatKind::Counter:
      return "counter";
    case StatKind::Gauge:
      return "gauge";
    case StatKind::Distribution:
      return "distribution";
    case StatKind::Formula:
      return "formula";
  }
  return "?";
}

namespace {
// NaN and infinities are not JSON numbers: an undefined value is written as null.
nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}
}  // namespace

void Stat::to_json(nlohmann::json& out) const {
  out["value"] = number(value());
}

void Gauge::to_json(nlohmann::json& out) const {
  out["value"] = number(current_);
  out["max"] = number(max_);
}

}  // namespace sohusim::counters
