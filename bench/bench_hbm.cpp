// Speed of the detailed HBM model (budget: >= 1 M requests per wall-second
// per core on a stream; README, "Figures"). HBM3-6400, one stack, 32-byte reads, default mapping and
// controller, all-bank refresh; the owner loop is the one a TLM target runs: enqueue
// while the queue accepts, then advance to next_event().
//
// Counters: requests_per_second (requests per wall-second, kIsRate) and
// efficiency_pct (achieved % of the 819.2 GB/s peak in simulated time).
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/dram_system.hpp"
#include "sohusim/memory/hbm_schema.hpp"

namespace {

using namespace sohusim;

// The presets folder: $SOHUSIM_CONFIG_DIR, else the first `configs/` holding the HBM
// presets found walking up from the executable or the working directory.
std::filesystem::path config_dir() {
  if (const char* env = std::getenv("SOHUSIM_CONFIG_DIR")) return env;
  std::error_code ec;
  for (std::filesystem::path dir :
       {std::filesystem::read_symlink("/proc/self/exe", ec).parent_path(), std::filesystem::current_path()}) {
    for (; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (std::filesystem::exists(dir / "configs" / "hbm" / "hbm3-6400.yaml")) return dir / "configs";
    }
  }
  return "configs";
}

std::unique_ptr<memory::DramSystem> make_memory(counters::Registry& registry, const std::string& refresh) {
  config::ConfigLoader loader(memory::hbm_schema(), {config_dir()});
  loader.load_preset("hbm/hbm3-6400");
  loader.set("hbm.controller.refresh=" + refresh);
  return memory::DramSystem::from_config(loader.resolve(), counters::Scope(registry, "dev0.hbm"));
}

template <class Next>
void run(benchmark::State& state, const std::string& refresh, Next next) {
  const auto batch = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t total = 0;
  double efficiency = 0;
  for (auto _ : state) {
    state.PauseTiming();
    counters::Registry registry;
    auto mem = make_memory(registry, refresh);
    std::uint64_t done = 0;
    mem->set_completion([&](const memory::MemRequest&, memory::Cycle) { ++done; });
    state.ResumeTiming();
    std::uint64_t issued = 0;
    std::uint64_t addr = next();
    while (done < batch) {
      while (issued < batch && mem->can_accept(addr, false)) {
        mem->enqueue({addr, false, issued, 0});
        ++issued;
        addr = next();
      }
      mem->advance_to(mem->next_event());
    }
    benchmark::DoNotOptimize(done);
    total += batch;
    const double seconds = static_cast<double>(mem->now()) / mem->clock_hz();
    efficiency = static_cast<double>(batch) * mem->access_bytes() / seconds / mem->peak_bytes_per_second();
  }
  state.counters["requests_per_second"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
  state.counters["efficiency_pct"] = 100.0 * efficiency;
}

void BM_HbmStreamReads(benchmark::State& state) {
  std::uint64_t a = 0;
  run(state, "allbank", [&] {
    const std::uint64_t v = a;
    a += 32;
    return v;
  });
}
BENCHMARK(BM_HbmStreamReads)->Arg(500'000)->Unit(benchmark::kMillisecond);

void BM_HbmStreamReadsNoRefresh(benchmark::State& state) {
  std::uint64_t a = 0;
  run(state, "off", [&] {
    const std::uint64_t v = a;
    a += 32;
    return v;
  });
}
BENCHMARK(BM_HbmStreamReadsNoRefresh)->Arg(500'000)->Unit(benchmark::kMillisecond);

void BM_HbmRandomReads(benchmark::State& state) {
  std::mt19937_64 rng(1);
  const std::uint64_t accesses = (16ull << 30) / 32;
  run(state, "allbank", [&] { return (rng() % accesses) * 32; });
}
BENCHMARK(BM_HbmRandomReads)->Arg(200'000)->Unit(benchmark::kMillisecond);

}  // namespace
