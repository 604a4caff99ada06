// Speed of serving (budgets: 1,000 Poisson requests of Llama-3-70B on `sohu-8` and 10,000 of
// Llama-3-8B on one device, lengths like 1,024 in / 256 out on average, each <= 60 s wall on
// 2 cores; docs/serving.md, "Speed", has the figures).
//
// One simulator per process (SystemC elaborates once): `sohu-8`, whose first device serves
// the 8B model alone (tp 1) and all eight the 70B model (tp 8). Each benchmark serves a
// Poisson stream at a rate the system keeps up with, continuous batching, reuse of step
// costs on; the argument is the number of requests (the budgets' sizes take minutes today:
// run them with --benchmark_filter). Counters: simulated seconds, steps, steps simulated.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <memory>
#include <string>

#include <benchmark/benchmark.h>
#include <systemc>

#include "bench_sc_main.hpp"
#include "sohusim/platform/serving.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace {

using namespace sohusim;

platform::Simulator& simulator() {
  static std::unique_ptr<platform::Simulator> sim = [] {
    platform::SimulatorOptions o;
    o.system = "sohu-8";
    o.config_dirs = {std::string(SOHUSIM_SOURCE_DIR) + "/configs"};
    return std::make_unique<platform::Simulator>(o);
  }();
  return *sim;
}

void serve(benchmark::State& state, const char* model, unsigned tp, double rate) {
  const workloads::ModelConfig m = workloads::load_model(model, {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
  platform::ServingOptions o;
  o.stream.kind = workloads::StreamKind::Poisson;
  o.stream.rate = rate;
  o.stream.requests = static_cast<std::uint64_t>(state.range(0));
  o.stream.input = workloads::parse_length_spec("lognormal:1024:512");
  o.stream.output = workloads::parse_length_spec("lognormal:256:128");
  o.scheduler.kind = workloads::SchedulerKind::Continuous;
  o.device.tp = tp;
  platform::ServingResult r;
  for (auto _ : state) {
    r = platform::serve(simulator(), m, o);
    if (!r.failure.empty()) state.SkipWithError(r.failure.c_str());
  }
  state.counters["simulated_s"] = r.end_s;
  state.counters["steps"] = static_cast<double>(r.steps);
  state.counters["steps_simulated"] = static_cast<double>(r.steps_simulated);
}

void BM_ServeLlama8B(benchmark::State& state) {
  serve(state, "llama-3-8b", 1, 20);
}
void BM_ServeLlama70B(benchmark::State& state) {
  serve(state, "llama-3-70b", 8, 4);
}

BENCHMARK(BM_ServeLlama8B)->Arg(100)->Arg(10000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_ServeLlama70B)->Arg(10)->Arg(1000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
