// Speed of the fast HBM fidelity against the detailed one, in one run (HBM3-6400):
//
//   BM_Single/<fast|detailed>/<stream|random>   one 32 B access per request, 1024 in flight:
//                                                items_per_second = requests per wall-second.
//   BM_Bulk/<fast|detailed>/<KiB>/<stacks>       sequential transfers of KiB, 16 in flight:
//                                                the fast model takes each whole
//                                                (FastDram::enqueue_bulk), the detailed one
//                                                its 32 B accesses as the TLM target hands
//                                                them over. bytes_per_second = simulated
//                                                bytes per wall-second.
//   BM_TlmFast                                   HbmMemory (fast) + 8 AT initiators x 32
//                                                requests of 64 KiB in flight, through the
//                                                kernel. Runs once per process (the SystemC
//                                                kernel cannot restart).
//
// The ratios fast / detailed of the same arguments are the fast model's speed-up
// (README; scripts/perf_check.sh prints them).
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/dram_system.hpp"
#include "sohusim/memory/fast_dram.hpp"
#include "sohusim/memory/hbm_memory.hpp"
#include "sohusim/memory/hbm_schema.hpp"
#include "sohusim/memory/load_initiator.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/sim/core_schema.hpp"
#include "sohusim/sim/memory_manager.hpp"

// libsystemc.so refers to sc_main; benchmark_main provides main().
extern "C" int sc_main(int, char**) {
  return 0;
}

namespace {

using namespace sohusim;

// hbm_schema()'s defaults are HBM3-6400.
config::Config config(std::uint32_t stacks) {
  config::Schema schema = sim::core_schema();
  schema.merge(memory::memory_schema());
  config::ConfigLoader loader(std::move(schema));
  loader.set("hbm.stacks=" + std::to_string(stacks));
  return loader.resolve();
}

std::unique_ptr<memory::MemoryBackend> backend(bool fast, std::uint32_t stacks, counters::Registry& reg) {
  if (fast) return memory::FastDram::from_config(config(stacks), sim::Instrumentation{&reg, nullptr, 0}, "hbm");
  return memory::DramSystem::from_config(config(stacks), counters::Scope(reg, "hbm"));
}

void BM_Single(benchmark::State& state) {
  const bool fast = state.range(0) != 0;
  const bool random = state.range(1) != 0;
  counters::Registry reg;
  auto mem = backend(fast, 1, reg);
  std::uint64_t in_flight = 0;
  mem->set_completion([&](const memory::MemRequest&, memory::Cycle) { --in_flight; });
  std::mt19937_64 rng(1);
  const std::uint64_t slots = mem->capacity_bytes() / 32;
  std::uint64_t next = 0, requests = 0;
  for (auto _ : state) {
    for (;;) {
      const std::uint64_t addr = (random ? rng() % slots : next % slots) * 32;
      if (in_flight >= 1024 || !mem->can_accept(addr, false)) break;
      mem->enqueue(memory::MemRequest{addr, false, next, 0});
      ++next;
      ++in_flight;
      ++requests;
    }
    mem->advance_to(mem->next_event());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(requests));
  state.counters["efficiency"] = static_cast<double>(requests) * 32 /
                                 (static_cast<double>(mem->now()) / mem->clock_hz()) / mem->peak_bytes_per_second();
}
BENCHMARK(BM_Single)->ArgNames({"fast", "random"})->ArgsProduct({{1, 0}, {0, 1}});

void BM_Bulk(benchmark::State& state) {
  const bool fast = state.range(0) != 0;
  const std::uint64_t bytes = static_cast<std::uint64_t>(state.range(1)) * 1024;
  const auto stacks = static_cast<std::uint32_t>(state.range(2));
  counters::Registry reg;
  auto mem = backend(fast, stacks, reg);
  auto* fast_mem = dynamic_cast<memory::FastDram*>(mem.get());
  // Per transfer in flight: its next access not handed over yet, and accesses not completed.
  struct Transfer {
    std::uint64_t next = 0, end = 0, left = 0;
  };
  std::vector<Transfer> xfers(16);
  const std::uint64_t capacity = mem->capacity_bytes() / bytes * bytes;
  std::uint64_t cursor = 0, moved = 0;
  mem->set_completion([&](const memory::MemRequest& r, memory::Cycle) {
    Transfer& t = xfers[r.id];
    t.left = fast_mem ? 0 : t.left - 1;
    if (t.left == 0) moved += bytes;
  });
  const auto start = [&](Transfer& t) {
    t.next = cursor;
    t.end = cursor + bytes;
    t.left = fast_mem ? 1 : bytes / 32;
    cursor = (cursor + bytes) % capacity;
  };
  for (auto& t : xfers) start(t);
  for (auto _ : state) {
    for (std::uint64_t k = 0; k < xfers.size(); ++k) {
      Transfer& t = xfers[k];
      if (t.left == 0) start(t);
      if (fast_mem != nullptr) {
        if (t.next < t.end) fast_mem->enqueue_bulk(t.next, bytes, false, k);
        t.next = t.end;
        continue;
      }
      while (t.next < t.end && mem->can_accept(t.next, false)) {
        mem->enqueue(memory::MemRequest{t.next, false, k, 0});
        t.next += 32;
      }
    }
    mem->advance_to(mem->next_event());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(moved));
  state.counters["sim_GBps"] =
      benchmark::Counter(static_cast<double>(moved) / 1e9 / (static_cast<double>(mem->now()) / mem->clock_hz()));
}
BENCHMARK(BM_Bulk)
    ->ArgNames({"fast", "KiB", "stacks"})
    ->Args({1, 1024, 1})
    ->Args({0, 1024, 1})
    ->Args({1, 64, 1})
    ->Args({1, 64, 6})
    ->Args({1, 1024, 6})
    ->Args({1, 4096, 6});

void BM_TlmFast(benchmark::State& state) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  config::Config cfg = config(6);
  memory::HbmMemory mem("hbm", memory::make_hbm_backend(cfg, "fast", inst, "hbm"),
                        memory::HbmMemoryParams::from_config(cfg), inst, "hbm");
  sim::MemoryManager mm;
  std::vector<std::unique_ptr<memory::LoadInitiator>> gens;
  memory::LoadPattern p;
  p.kind = memory::LoadPattern::Kind::Stream;
  p.request_bytes = 64 * 1024;
  p.requests = 4000;
  p.outstanding = 32;
  p.window = mem.backend().capacity_bytes() / p.request_bytes * p.request_bytes;
  for (std::uint32_t i = 0; i < 8; ++i) {
    gens.push_back(std::make_unique<memory::LoadInitiator>(("gen" + std::to_string(i)).c_str(), p, i, 8, mm,
                                                           counters::Scope(reg, "gen" + std::to_string(i))));
    gens.back()->socket.bind(mem.socket);
  }
  for (auto _ : state) sc_core::sc_start();
  const double bytes = 8.0 * static_cast<double>(p.requests) * p.request_bytes;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(8 * p.requests));
  state.counters["sim_GBps"] = benchmark::Counter(bytes / 1e9 / sc_core::sc_time_stamp().to_seconds());
}
BENCHMARK(BM_TlmFast)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
