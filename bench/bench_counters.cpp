// Cost of the instrumentation on a model's hot path: a counter increment must be
// a plain add, a distribution sample a few nanoseconds, and a formula read cheap
// enough for periodic sampling.
//   build/release/bench/bench_counters --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/sampler.hpp"

using namespace sohusim::counters;

static void BM_CounterIncrement(benchmark::State& state) {
  Registry reg;
  Counter& c = reg.counter("dev0.me0.active_cycles", "cycles", "x");
  for (auto _ : state) {
    c += 3;
    benchmark::DoNotOptimize(c);
  }
  state.counters["increments/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CounterIncrement);

static void BM_DistributionSample(benchmark::State& state) {
  Registry reg;
  Distribution& d = reg.distribution("dev0.hbm.read_latency", "ns", "x", DistributionSpec::log(1, 1e6, 64));
  double v = 1.0;
  for (auto _ : state) {
    d.sample(v);
    v = v * 1.37 + 1.0;
    if (v > 1e6) v = 1.0;
  }
  state.counters["samples/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DistributionSample);

static void BM_FormulaOverGlob(benchmark::State& state) {
  Registry reg;
  for (int i = 0; i < 64; ++i) reg.counter("dev0.me" + std::to_string(i) + ".busy", "cycles", "x") += 10;
  reg.counter("dev0.cycles", "cycles", "x") += 100;
  Formula& f = reg.formula("dev0.me_util", "1", "x", "dev0.me*.busy / (count(dev0.me*.busy) * dev0.cycles)");
  for (auto _ : state) benchmark::DoNotOptimize(f.value());
}
BENCHMARK(BM_FormulaOverGlob);

static void BM_SampleRegistry1k(benchmark::State& state) {
  Registry reg;
  for (int i = 0; i < 1000; ++i) reg.counter("s" + std::to_string(i / 32) + ".c" + std::to_string(i), "1", "x");
  Sampler s(reg, {"**"}, true, /*keep_in_memory=*/false);
  std::uint64_t t = 0;
  for (auto _ : state) s.sample(t += 1000);
  state.counters["stats_sampled/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1000.0, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SampleRegistry1k);
