// Speed of the fast HBM fidelity (DESIGN.md section 8; issue 3: >= 100 GB of simulated
// traffic per wall-second) and the cost of the TLM path in front of it.
//
//   BM_FastBulk/<KiB>/<stacks>   FastDram::enqueue_bulk of sequential transfers, 16 in
//                                flight: the path HbmMemory takes for DMA-sized requests.
//                                bytes_per_second = simulated bytes per wall-second.
//   BM_FastSingle/<stream|random> one 32 B access per request, 1024 in flight.
//   BM_TlmFast                   HbmMemory (fast) + 8 AT initiators x 32 requests of
//                                64 KiB in flight, through the kernel: simulated bytes and
//                                TLM requests per wall-second. Runs once per process (the
//                                SystemC kernel cannot restart).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/fast_dram.hpp"
#include "sohusim/memory/hbm_memory.hpp"
#include "sohusim/memory/hbm_schema.hpp"
#include "sohusim/memory/load_initiator.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/sim/config.hpp"
#include "sohusim/sim/core_schema.hpp"
#include "sohusim/sim/memory_manager.hpp"

// libsystemc.so refers to sc_main; benchmark_main provides main().
extern "C" int sc_main(int, char**) {
  return 0;
}

namespace {

using namespace sohusim;

// hbm_schema()'s defaults are HBM3-6400.
sim::Config config(std::uint32_t stacks) {
  sim::Schema schema = sim::core_schema();
  schema.merge(memory::memory_schema());
  sim::ConfigLoader loader(std::move(schema));
  loader.set("hbm.stacks=" + std::to_string(stacks));
  return loader.resolve();
}

void BM_FastBulk(benchmark::State& state) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(state.range(0)) * 1024;
  const auto stacks = static_cast<std::uint32_t>(state.range(1));
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  auto fast = memory::FastDram::from_config(config(stacks), inst, "hbm");
  std::uint64_t in_flight = 0;
  fast->set_completion([&](const memory::MemRequest&, memory::Cycle) { --in_flight; });
  const std::uint64_t capacity = fast->capacity_bytes() / bytes * bytes;
  std::uint64_t next = 0, moved = 0;
  for (auto _ : state) {
    while (in_flight < 16) {
      fast->enqueue_bulk(next, bytes, false, next);
      next = (next + bytes) % capacity;
      ++in_flight;
      moved += bytes;
    }
    fast->advance_to(fast->next_event());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(moved));
  state.counters["sim_GBps"] =
      benchmark::Counter(static_cast<double>(moved) / 1e9 / (static_cast<double>(fast->now()) / fast->clock_hz()));
}
BENCHMARK(BM_FastBulk)->Args({64, 1})->Args({1024, 1})->Args({64, 6})->Args({1024, 6})->Args({4096, 6});

void BM_FastSingle(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  auto fast = memory::FastDram::from_config(config(1), inst, "hbm");
  std::uint64_t in_flight = 0;
  fast->set_completion([&](const memory::MemRequest&, memory::Cycle) { --in_flight; });
  std::mt19937_64 rng(1);
  const std::uint64_t slots = fast->capacity_bytes() / 32;
  std::uint64_t next = 0, requests = 0;
  for (auto _ : state) {
    for (;;) {
      const std::uint64_t addr = (random ? rng() % slots : next % slots) * 32;
      if (in_flight >= 1024 || !fast->can_accept(addr, false)) break;
      fast->enqueue(memory::MemRequest{addr, false, next, 0});
      ++next;
      ++in_flight;
      ++requests;
    }
    fast->advance_to(fast->next_event());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(requests));
}
BENCHMARK(BM_FastSingle)->Arg(0)->Arg(1);

void BM_TlmFast(benchmark::State& state) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  sim::Config cfg = config(6);
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
