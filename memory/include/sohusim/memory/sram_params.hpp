#pragma once
// SramParams: the organisation and timing of the on-chip SRAM scratchpad (see sram.hpp for
// the model). Every field but the clock and data mode is a key of sram.*: params() holds
// the keys, defaults, ranges and descriptions (memory/src/sram_params.cpp).
#include <cstdint>

namespace sohusim::config {
class Config;
template <class T>
class ParamTable;
}  // namespace sohusim::config

namespace sohusim::memory {

struct SramParams {
  std::uint64_t capacity;  // bytes
  std::uint32_t banks;
  std::uint32_t ports;           // per bank
  std::uint32_t access_width;    // bytes per port per cycle; also the interleave
  std::uint32_t latency_cycles;  // from the last line access to the data
  double clock_hz = 1.5e9;       // sram.clock names it; from_config looks it up in sim.clocks
  bool functional = false;       // sim.data_mode

  /// The sram.* keys: default, range and description of each (memory/src/sram_params.cpp);
  /// the fields above with a key take their defaults from it.
  SramParams();
  static const config::ParamTable<SramParams>& params();
  /// Reads `sram.*` and the clock named by `sram.clock` from `sim.clocks`, and
  /// `sim.data_mode`. The config must come from a schema that merged memory_schema().
  static SramParams from_config(const config::Config& config);
  /// Throws std::invalid_argument naming the field: zero sizes, a capacity that is not a
  /// whole number of lines, a non-positive clock.
  void validate() const;
};

}  // namespace sohusim::memory
