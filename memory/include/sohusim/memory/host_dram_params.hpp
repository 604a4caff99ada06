#pragma once
// HostDramParams: the host's DDR5 memory as the transfer-level model sees it (see
// host_dram.hpp for the model and its assumptions). Every field but the data mode is a key
// of host_dram.*: params() holds the keys, defaults, ranges and descriptions
// (memory/src/host_dram_params.cpp).
#include <cstdint>

namespace sohusim::config {
class Config;
template <class T>
class ParamTable;
}  // namespace sohusim::config

namespace sohusim::memory {

struct HostDramParams {
  std::uint64_t capacity;  // bytes
  std::uint32_t channels;
  double channel_bandwidth;  // B/s
  double efficiency;         // sustained share of the channel bandwidth
  double latency_s;          // fixed part of every access
  std::uint64_t interleave;  // bytes per channel before the next
  bool functional = false;   // sim.data_mode

  /// The host_dram.* keys: default (DDR5-4800), range and description of each
  /// (memory/src/host_dram_params.cpp); the fields above with a key take their defaults from it.
  HostDramParams();
  static const config::ParamTable<HostDramParams>& params();
  /// Reads `host_dram.*` and `sim.data_mode`.
  static HostDramParams from_config(const config::Config& config);
  /// Throws std::invalid_argument naming the field.
  void validate() const;
  /// channels x channel_bandwidth x efficiency.
  double sustained_bandwidth() const { return channels * channel_bandwidth * efficiency; }
};

}  // namespace sohusim::memory
