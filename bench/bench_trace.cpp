// Trace writing budget (docs/trace.md, "Cost"): >= 5 M slices per wall-second and <= 32 bytes per
// slice on disk for the Perfetto writer. Reported for both writers as `slices/s` (a rate) and
// `bytes/slice` (file size after close / slices).
//
// Workload, meant to look like a device trace: 4 processes x 16 thread tracks, 50 slice names,
// back-to-back complete slices of 200..3000 ns separated by gaps of 100..2000 ns, one slice in
// eight with a "bytes" argument. Two call orders: by start time, and by end time (what a
// simulator produces when it records a slice as the work finishes). Each benchmark iteration
// records one slice; the recorder and file are created outside the timed loop, and the file is
// written to the system temp directory.
//
// Rates are per wall-second (UseRealTime), as the budget is stated.
//
// Run: build/release/bench/bench_trace --benchmark_min_time=1
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>

#include "sohusim/counters/chrome_json_writer.hpp"
#include "sohusim/counters/perfetto_writer.hpp"
#include "sohusim/counters/trace_recorder.hpp"

namespace {

using namespace sohusim::counters;

constexpr int kProcesses = 4;
constexpr int kThreadsPerProcess = 16;
constexpr int kNames = 50;
constexpr std::size_t kWorkloadSlices = std::size_t{1} << 20;

struct SliceSpec {
  std::uint64_t start;
  std::uint32_t duration;
  std::uint16_t thread;
  std::uint16_t name;
  std::uint32_t arg;  // 0 = no argument
};

struct Workload {
  std::vector<SliceSpec> slices;
  std::uint64_t span;  // added to timestamps on each pass over `slices`
};

Workload make_workload(bool end_order) {
  std::mt19937_64 rng(42);
  const auto uniform = [&rng](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  // Next start per thread, merged by a min-heap so that slices come out in start order.
  using Next = std::pair<std::uint64_t, std::uint16_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  constexpr int kThreads = kProcesses * kThreadsPerProcess;
  for (int t = 0; t < kThreads; ++t) next.emplace(uniform(0, 2000), static_cast<std::uint16_t>(t));
  Workload w;
  w.slices.reserve(kWorkloadSlices);
  std::uint64_t last_end = 0;
  while (w.slices.size() < kWorkloadSlices) {
    const auto [start, thread] = next.top();
    next.pop();
    SliceSpec s{};
    s.start = start;
    s.duration = static_cast<std::uint32_t>(uniform(200, 3000));
    s.thread = thread;
    // Each thread favours a few names, as an engine runs a few kinds of work.
    s.name = static_cast<std::uint16_t>((std::uint64_t{thread} * 7 + uniform(0, 5)) % kNames);
    s.arg = uniform(0, 7) == 0 ? static_cast<std::uint32_t>(uniform(64, 1 << 20)) : 0;
    w.slices.push_back(s);
    last_end = std::max(last_end, s.start + s.duration);
    next.emplace(s.start + s.duration + uniform(100, 2000), thread);
  }
  if (end_order) {
    std::stable_sort(w.slices.begin(), w.slices.end(), [](const SliceSpec& a, const SliceSpec& b) {
      return a.start + a.duration < b.start + b.duration;
    });
  }
  w.span = last_end + 5000;
  return w;
}

const Workload& workload(bool end_order) {
  static const Workload by_start = make_workload(false);
  static const Workload by_end = make_workload(true);
  return end_order ? by_end : by_start;
}

std::string bench_path(const char* extension) {
  return (std::filesystem::temp_directory_path() / ("sohusim_bench_trace_" + std::to_string(::getpid()) + extension))
      .string();
}

enum class Sink { Perfetto, ChromeJson, Null, Disabled };

// `correlated`: every slice carries a correlation id (the request it serves, shared by the slices
// of a ~16 us window), as device slices do once flows follow requests.
void run(benchmark::State& state, Sink sink, bool end_order, PerfettoWriterOptions options = {},
         bool correlated = false) {
  const Workload& w = workload(end_order);
  const std::string path = bench_path(sink == Sink::ChromeJson ? ".json" : ".pftrace");
  std::uint64_t slices = 0;
  {
    std::unique_ptr<TraceWriter> writer;
    switch (sink) {
      case Sink::Perfetto:
        writer = std::make_unique<PerfettoWriter>(path, options);
        break;
      case Sink::ChromeJson:
        writer = std::make_unique<ChromeJsonWriter>(path);
        break;
      case Sink::Null:
        writer = std::make_unique<NullTraceWriter>();
        break;
      case Sink::Disabled:
        break;
    }
    TraceRecorder rec(std::move(writer));
    std::vector<TrackId> threads;
    for (int p = 0; p < kProcesses; ++p) {
      const TrackId process = rec.process_track("dev" + std::to_string(p));
      for (int t = 0; t < kThreadsPerProcess; ++t) {
        threads.push_back(rec.thread_track(process, "engine" + std::to_string(t)));
      }
    }
    std::vector<NameId> names;
    names.reserve(kNames);
    for (int n = 0; n < kNames; ++n) names.push_back(rec.intern("op" + std::to_string(n)));

    std::size_t i = 0;
    std::uint64_t offset = 0;
    for (auto _ : state) {
      const SliceSpec& s = w.slices[i];
      const std::uint64_t correlation = correlated ? 1 + (offset + s.start) / 16384 : 0;
      if (s.arg != 0) {
        rec.complete(threads[s.thread], offset + s.start, s.duration, names[s.name], {{"bytes", s.arg}}, {},
                     correlation);
      } else {
        rec.complete(threads[s.thread], offset + s.start, s.duration, names[s.name], {}, {}, correlation);
      }
      if (++i == w.slices.size()) {
        i = 0;
        offset += w.span;
      }
    }
    slices = static_cast<std::uint64_t>(state.iterations());
    rec.close();
  }
  state.counters["slices/s"] = benchmark::Counter(static_cast<double>(slices), benchmark::Counter::kIsRate);
  if (sink == Sink::Perfetto || sink == Sink::ChromeJson) {
    const auto size = static_cast<double>(std::filesystem::file_size(path));
    state.counters["bytes/slice"] = size / static_cast<double>(slices);
    std::filesystem::remove(path);
  }
}

void BM_Perfetto_StartOrder(benchmark::State& state) {
  run(state, Sink::Perfetto, false);
}
void BM_Perfetto_EndOrder(benchmark::State& state) {
  run(state, Sink::Perfetto, true);
}

// The reorder window's worth: the same end-ordered calls written in call order.
void BM_Perfetto_EndOrder_NoWindow(benchmark::State& state) {
  PerfettoWriterOptions options;
  options.reorder_window = 0;
  run(state, Sink::Perfetto, true, options);
}

// Window size against speed and size, end-ordered calls (the harder case).
void BM_Perfetto_EndOrder_Window(benchmark::State& state) {
  PerfettoWriterOptions options;
  options.reorder_window = static_cast<std::size_t>(state.range(0));
  run(state, Sink::Perfetto, true, options);
}

// What SEQ_NEEDS_INCREMENTAL_STATE on every event packet would cost.
void BM_Perfetto_StartOrder_NeedsStateFlag(benchmark::State& state) {
  PerfettoWriterOptions options;
  options.mark_needs_incremental_state = true;
  run(state, Sink::Perfetto, false, options);
}

void BM_Perfetto_StartOrder_Correlated(benchmark::State& state) {
  run(state, Sink::Perfetto, false, {}, /*correlated=*/true);
}

void BM_Perfetto_StartOrder_Correlated_NeedsStateFlag(benchmark::State& state) {
  PerfettoWriterOptions options;
  options.mark_needs_incremental_state = true;
  run(state, Sink::Perfetto, false, options, /*correlated=*/true);
}

void BM_ChromeJson_StartOrder(benchmark::State& state) {
  run(state, Sink::ChromeJson, false);
}
void BM_ChromeJson_EndOrder(benchmark::State& state) {
  run(state, Sink::ChromeJson, true);
}

// The recorder's own share (checks, lanes, virtual call) with a writer that does nothing.
void BM_Recorder_NullWriter(benchmark::State& state) {
  run(state, Sink::Null, false);
}

// Instrumentation left in place with tracing off.
void BM_Recorder_Disabled(benchmark::State& state) {
  run(state, Sink::Disabled, false);
}

BENCHMARK(BM_Perfetto_StartOrder)->UseRealTime();
BENCHMARK(BM_Perfetto_EndOrder)->UseRealTime();
BENCHMARK(BM_Perfetto_EndOrder_NoWindow)->UseRealTime();
BENCHMARK(BM_Perfetto_EndOrder_Window)->Arg(64)->Arg(128)->Arg(256)->Arg(512)->Arg(4096)->UseRealTime();
BENCHMARK(BM_Perfetto_StartOrder_NeedsStateFlag)->UseRealTime();
BENCHMARK(BM_Perfetto_StartOrder_Correlated)->UseRealTime();
BENCHMARK(BM_Perfetto_StartOrder_Correlated_NeedsStateFlag)->UseRealTime();
BENCHMARK(BM_ChromeJson_StartOrder)->UseRealTime();
BENCHMARK(BM_ChromeJson_EndOrder)->UseRealTime();
BENCHMARK(BM_Recorder_NullWriter)->UseRealTime();
BENCHMARK(BM_Recorder_Disabled)->UseRealTime();

}  // namespace
