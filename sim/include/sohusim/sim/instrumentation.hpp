#pragma once
// Instrumentation: the bridge that gives a SystemC module its counters and its
// trace tracks in simulated time.
//
// A module receives an Instrumentation at construction, takes a Scope for its
// stats (`dev0.me3`) and, when tracing is on, a track; it then stamps events with
// now_ns(), the kernel's time in integer nanoseconds. Nothing here is global: a
// simulation owns its Registry and TraceRecorder and passes them down.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::sim {

struct Instrumentation {
  counters::Registry* registry = nullptr;    // required
  counters::TraceRecorder* trace = nullptr;  // optional; null or disabled = no tracing
  counters::TrackId process_track = 0;       // the trace process (host, device) modules put their tracks under
  // `trace.categories`: which kinds of module record events ("all" = every one).
  // A module names its category ("hbm", "pcie", "generator", "stats") and asks
  // tracing(category) once, at construction, so a filtered-out module costs nothing.
  std::vector<std::string> trace_categories{"all"};
  // `trace.detail` == "summary": modules bin their counter tracks at kSummaryBinPs at least
  // and leave out per-transfer slices (a long run's trace stays small enough to open).
  bool trace_summary = false;
  static constexpr std::uint64_t kSummaryBinPs = 100'000'000;  // 100 us

  counters::Scope scope(std::string prefix) const { return counters::Scope(*registry, std::move(prefix)); }
  bool tracing() const { return trace != nullptr && trace->enabled(); }
  bool tracing(std::string_view category) const {
    if (!tracing()) return false;
    return std::any_of(trace_categories.begin(), trace_categories.end(),
                       [&](const std::string& c) { return c == "all" || c == category; });
  }
  static counters::TimeNs now_ns() { return to_ns(sc_core::sc_time_stamp()); }
};

}  // namespace sohusim::sim
