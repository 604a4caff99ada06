// tests/memory/pattern_harness.hpp — the shared traffic patterns, played straight against a
// MemoryBackend (no SystemC), so that the fast and the detailed model see exactly the
// same request stream. Used by the fast-vs-detailed calibration tests.
//
// Each initiator keeps up to `outstanding` single-access requests in flight, issuing a new
// one as soon as the backend accepts it (a blocked initiator retries at the next event):
// the load a DMA engine with a deep request queue offers. Stream and strided initiators
// share one cursor, as DMA channels splitting one transfer do (initiators streaming
// separate buffers that differ only in row bits would make every bank thrash between
// rows, a pattern that measures the scheduler's reordering window rather than the
// memory); random ones draw from the whole window (seeded per initiator).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::test {

struct DrivenPattern {
  enum class Kind { Stream, Strided, Random };
  Kind kind = Kind::Stream;
  std::uint64_t stride = 4096;  // bytes, Strided
  double read_fraction = 1.0;
  std::uint32_t initiators = 4;
  std::uint32_t outstanding = 256;  // per initiator
  std::uint64_t requests = 100000;  // in total
  std::uint64_t window = 1ULL << 30;
  std::uint64_t seed = 1;
  std::string name;
};

struct DrivenResult {
  double bytes_per_second = 0;
  double efficiency = 0;  // of the backend's peak
  double avg_read_latency_cycles = 0;
  memory::Cycle cycles = 0;
};

inline DrivenResult drive(memory::MemoryBackend& m, const DrivenPattern& p) {
  using memory::Cycle;
  const std::uint64_t a = m.access_bytes();
  const std::uint64_t window = std::min(p.window, m.capacity_bytes()) / a * a;
  struct Initiator {
    std::uint64_t issued = 0;
    std::uint32_t in_flight = 0;
    std::mt19937_64 rng;
    bool have_pending = false;
    std::uint64_t pending_addr = 0;
    bool pending_write = false;
  };
  std::vector<Initiator> ini(p.initiators);
  for (std::uint32_t i = 0; i < p.initiators; ++i) ini[i].rng.seed(p.seed * 1000003 + i);
  std::uint64_t cursor = 0;  // shared by stream and strided initiators
  std::vector<Cycle> issue_cycle;
  std::vector<std::uint32_t> owner;
  double latency_sum = 0;
  std::uint64_t reads_done = 0, done = 0;
  Cycle last = 0;
  m.set_completion([&](const memory::MemRequest& r, Cycle at) {
    --ini[owner[r.id]].in_flight;
    if (!r.write) {
      latency_sum += static_cast<double>(at - issue_cycle[r.id]);
      ++reads_done;
    }
    ++done;
    last = std::max(last, at);
  });
  const std::uint64_t per_initiator = p.requests / p.initiators;
  const Cycle start = m.now();
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (;;) {
    bool all_issued = true;
    for (std::uint32_t i = 0; i < p.initiators; ++i) {
      Initiator& x = ini[i];
      while (x.issued < per_initiator && x.in_flight < p.outstanding) {
        if (!x.have_pending) {
          std::uint64_t addr;
          switch (p.kind) {
            case DrivenPattern::Kind::Stream:
              addr = (cursor * a) % window;
              ++cursor;
              break;
            case DrivenPattern::Kind::Strided: {
              // Every `stride` bytes, shifted by one access per pass over the window.
              const std::uint64_t per_pass = std::max<std::uint64_t>(1, window / p.stride);
              const std::uint64_t pass = cursor / per_pass;
              addr = ((cursor % per_pass) * p.stride + pass * a) % window;
              ++cursor;
              break;
            }
            default:
              addr = (x.rng() % (window / a)) * a;
              break;
          }
          x.pending_addr = addr;
          x.pending_write = coin(x.rng) >= p.read_fraction;
          x.have_pending = true;
        }
        if (!m.can_accept(x.pending_addr, x.pending_write)) break;
        const std::uint64_t id = issue_cycle.size();
        issue_cycle.push_back(m.now());
        owner.push_back(i);
        m.enqueue(memory::MemRequest{x.pending_addr, x.pending_write, id, 0});
        x.have_pending = false;
        ++x.issued;
        ++x.in_flight;
      }
      if (x.issued < per_initiator) all_issued = false;
    }
    const Cycle next = m.next_event();
    if (next == memory::kNever) {
      if (all_issued) break;
      continue;  // nothing held yet all blocked: cannot happen with a sane backend
    }
    m.advance_to(std::max(next, m.now() + 1));
  }
  DrivenResult r;
  r.cycles = last - start;
  const double seconds = static_cast<double>(r.cycles) / m.clock_hz();
  r.bytes_per_second = static_cast<double>(done * a) / seconds;
  r.efficiency = r.bytes_per_second / m.peak_bytes_per_second();
  r.avg_read_latency_cycles = reads_done ? latency_sum / static_cast<double>(reads_done) : 0.0;
  return r;
}

}  // namespace sohusim::test
