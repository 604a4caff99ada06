#pragma once
// Deterministic read jitter of a modelled clock (a device's TIMESTAMP counter, a host's
// clock): a uniform number in [0, 1) from a hash of a seed, a stream and a key (the read's
// simulated time or its count), so that a run is the same every time and two clocks never
// share their noise.
#include <cstdint>

namespace sohusim::sim {

/// A 64-bit mix (splitmix64's finaliser).
inline std::uint64_t clock_jitter_mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) from a hash of `seed`, `stream` and `key`.
inline double clock_jitter_unit(std::uint64_t seed, std::uint64_t stream, std::uint64_t key) {
  const std::uint64_t h = clock_jitter_mix(clock_jitter_mix(clock_jitter_mix(seed) ^ stream) ^ key);
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace sohusim::sim
