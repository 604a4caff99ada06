#include "sohusim/counters/sampler_trace_sink.hpp"

#include <cmath>
#include <memory>

namespace sohusim::counters {

void attach_trace_counters(Sampler& sampler, TraceRecorder& trace, TrackId parent) {
  if (!trace.enabled()) return;
  auto tracks = std::make_shared<std::vector<TrackId>>();
  sampler.add_sink(
      [&trace, parent, tracks](std::uint64_t t, const std::vector<SampleColumn>& cols, const std::vector<double>& row) {
        if (tracks->empty()) {
          for (const SampleColumn& c : cols) tracks->push_back(trace.counter_track(parent, c.name, c.unit));
        }
        for (std::size_t i = 0; i < row.size(); ++i) {
          if (std::isfinite(row[i])) trace.counter((*tracks)[i], t, row[i]);
        }
      });
}

}  // namespace sohusim::counters
