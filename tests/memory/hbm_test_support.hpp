#pragma once
// Helpers shared by the detailed HBM model's tests: loading presets, building a
// DramSystem, and driving it with a request pattern the way an owner does (enqueue while
// can_accept, then advance to next_event).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/dram_system.hpp"
#include "sohusim/memory/hbm_schema.hpp"

namespace sohusim::memory::hbmtest {

inline config::ConfigLoader hbm_loader() {
  return config::ConfigLoader(hbm_schema(), {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
}

/// A preset ("hbm/hbm3-6400") with `sets` ("hbm.controller.refresh=off") applied.
inline config::Config hbm_config(const std::string& preset, const std::vector<std::string>& sets = {}) {
  config::ConfigLoader loader = hbm_loader();
  loader.load_preset(preset);
  for (const std::string& s : sets) loader.set(s);
  return loader.resolve();
}

struct RunResult {
  std::uint64_t requests = 0;
  Cycle cycles = 0;
  double efficiency = 0;  // bytes / (cycles x tCK) / peak
  double bandwidth_gbps = 0;
};

/// Drives `mem` with `n` requests whose addresses come from `next` (called once per
/// request, in order) until all complete. `is_write` picks reads/writes per request index.
inline RunResult run_pattern(DramSystem& mem, std::uint64_t n, const std::function<std::uint64_t()>& next,
                             const std::function<bool(std::uint64_t)>& is_write = nullptr) {
  std::uint64_t issued = 0;
  std::uint64_t done = 0;
  mem.set_completion([&](const MemRequest&, Cycle) { ++done; });
  const Cycle start = mem.now();
  std::uint64_t addr = n > 0 ? next() : 0;
  bool write = is_write && n > 0 ? is_write(0) : false;
  while (done < n) {
    while (issued < n && mem.can_accept(addr, write)) {
      mem.enqueue({addr, write, issued, 0});
      ++issued;
      if (issued < n) {
        addr = next();
        write = is_write ? is_write(issued) : false;
      }
    }
    const Cycle t = mem.next_event();
    if (t == kNever) break;  // nothing held: a bug the caller's checks will show
    mem.advance_to(t);
  }
  RunResult r;
  r.requests = done;
  r.cycles = mem.now() - start;
  const double seconds = static_cast<double>(r.cycles) / mem.clock_hz();
  const double bytes = static_cast<double>(done) * mem.access_bytes();
  r.bandwidth_gbps = seconds > 0 ? bytes / seconds / 1e9 : 0;
  r.efficiency = seconds > 0 ? bytes / seconds / mem.peak_bytes_per_second() : 0;
  return r;
}

/// A sequential stream of accesses from `base`.
inline std::function<std::uint64_t()> stream_from(std::uint64_t base, std::uint32_t access) {
  auto a = std::make_shared<std::uint64_t>(base);
  return [a, access] {
    const std::uint64_t v = *a;
    *a += access;
    return v;
  };
}

}  // namespace sohusim::memory::hbmtest
