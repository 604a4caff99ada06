// The reference workload of scripts/perf_check.sh: plain CPU work that no change to sohusim
// moves (sorting 1 Mi seeded 64-bit keys, then a pointer-chasing walk over 16 MiB). The
// other benchmarks' figures are divided by its time in the same run, so that a slower or
// busier machine does not fail the check, and a slower sohusim does.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

void BM_Reference(benchmark::State& state) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys(1 << 20);
  std::vector<std::uint32_t> next(1 << 22);
  std::iota(next.begin(), next.end(), 0u);
  std::shuffle(next.begin(), next.end(), rng);
  for (auto _ : state) {
    for (auto& k : keys) k = rng();
    std::sort(keys.begin(), keys.end());
    std::uint32_t at = 0;
    for (std::uint32_t i = 0; i < (1u << 20); ++i) at = next[at];
    benchmark::DoNotOptimize(keys.data());
    benchmark::DoNotOptimize(at);
  }
}
BENCHMARK(BM_Reference)->Unit(benchmark::kMillisecond);

}  // namespace
