#pragma once
// Snapshot: the scalar values of every stat at one moment, by name. Two snapshots
// subtract to give what happened in between (the basis of per-window analysis and
// of rates), without touching the live counters.

#include <map>
#include <string>

namespace sohusim::counters {

struct Snapshot {
  std::map<std::string, double, std::less<>> values;

  double at(const std::string& name) const;  // throws std::out_of_range naming it
  // this - earlier, key by key (keys missing in earlier count as 0).
  Snapshot delta_since(const Snapshot& earlier) const;
};

}  // namespace sohusim::counters
