#include "sohusim/counters/snapshot.hpp"

#include <stdexcept>

namespace sohusim::counters {

double Snapshot::at(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) throw std::out_of_range("snapshot has no stat named '" + name + "'");
  return it->second;
}

Snapshot Snapshot::delta_since(const Snapshot& earlier) const {
  Snapshot d;
  for (const auto& [name, v] : values) {
    auto it = earlier.values.find(name);
    d.values.emplace(name, v - (it == earlier.values.end() ? 0.0 : it->second));
  }
  return d;
}

}  // namespace sohusim::counters
