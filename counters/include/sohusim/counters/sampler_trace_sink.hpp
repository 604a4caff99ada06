#pragma once
// Puts sampled statistics into the trace: each Sampler column becomes a counter
// track (named after the stat, unit in the name) under `parent`, created at the
// first sample, and every sample a point on it. This is how bandwidths and
// occupancies appear as graphs beside the slices in Perfetto.

#include "sohusim/counters/sampler.hpp"
#include "sohusim/counters/trace_recorder.hpp"

namespace sohusim::counters {

void attach_trace_counters(Sampler& sampler, TraceRecorder& trace, TrackId parent);

}  // namespace sohusim::counters
