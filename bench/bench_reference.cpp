// The reference workload of scripts/perf_check.sh: plain CPU work that no change to sohusim
// moves, of the kinds a simulation does (a binary heap of timed events, a hash map of keys,
// allocation and sorting), all seeded. The other benchmarks' figures are divided by its time
// in the same run, so that a slower or busier machine does not fail the check, and a slower
// sohusim does.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

namespace {

void BM_Reference(benchmark::State& state) {
  std::mt19937_64 rng(7);
  for (auto _ : state) {
    // Timed events: pushed at now + delay, popped in order.
    std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<std::uint64_t>> events;
    std::uint64_t now = 0, sum = 0;
    for (int i = 0; i < 4096; ++i) events.push(rng() % 100000);
    for (int i = 0; i < 400000; ++i) {
      now = events.top();
      events.pop();
      events.push(now + 1 + rng() % 5000);
      sum += now;
    }
    // Keys looked up and counted; small objects allocated and freed.
    std::unordered_map<std::uint64_t, std::uint64_t> counts;
    std::vector<std::unique_ptr<std::uint64_t[]>> blocks;
    for (int i = 0; i < 200000; ++i) {
      ++counts[rng() % 50000];
      blocks.emplace_back(new std::uint64_t[1 + i % 16]);
      if (blocks.size() > 256) blocks.erase(blocks.begin(), blocks.begin() + 128);
    }
    std::vector<std::uint64_t> keys(1 << 18);
    for (auto& k : keys) k = rng();
    std::sort(keys.begin(), keys.end());
    benchmark::DoNotOptimize(sum);
    benchmark::DoNotOptimize(counts.size());
    benchmark::DoNotOptimize(keys.data());
  }
}
BENCHMARK(BM_Reference)->Unit(benchmark::kMillisecond);

}  // namespace
