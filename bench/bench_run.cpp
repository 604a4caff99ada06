// Speed of a whole-system inference step (budget: Llama-3-70B on `sohu-8`, one
// decode step at batch 64 and context 2048, fast fidelity, timing mode, <= 1 s wall; the
// whole request's budget is in README, "Inference").
//
// The system (8 devices on one host, full chip-to-chip mesh) is built once per process
// (SystemC elaborates once); each iteration runs one decode-only request of one step through
// runtime, driver, PCIe and the 8 devices (the KV cache taken as holding 2048 positions).
// The cold benchmark is the process's first step, which records the replays (device.replay)
// of every command shape; the warm one replays them. Counter simulated_ms: the step's
// simulated time. Peak RSS: run under /usr/bin/time -f %M (README).
//
// Profiling overhead (budget: <= 10 % wall time over the same run untraced): with
// SOHUSIM_BENCH_PROFILE_DIR=DIR in the environment the system writes a Perfetto trace to
// DIR/bench.pftrace at SOHUSIM_BENCH_TRACE_DETAIL (default summary) and samples the
// profiler's counters every SOHUSIM_BENCH_PROFILE_INTERVAL_NS (default 200000), as
// `sohusim run --trace T --trace-detail summary --profile P` does; compare the warm step
// with and without it (README).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <systemc>

#include "bench_sc_main.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/workloads/model_config.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace {

using namespace sohusim;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : v;
}

// $SOHUSIM_BENCH_PROFILE_DIR (an environment variable: whichever main() the linker keeps,
// benchmark_main's or SystemC's, it is read the same).
const std::string& profile_dir() {
  static const std::string dir = [] {
    const char* d = std::getenv("SOHUSIM_BENCH_PROFILE_DIR");
    return std::string(d == nullptr ? "" : d);
  }();
  return dir;
}

struct Fixture {
  std::unique_ptr<platform::Simulator> sim;
  workloads::ModelConfig model;
  unsigned steps = 0;  // decode steps run so far (the first records every shape)
  Fixture() {
    platform::SimulatorOptions o;
    o.system = "sohu-8";
    o.config_dirs = {std::string(SOHUSIM_SOURCE_DIR) + "/configs"};
    if (!profile_dir().empty()) {
      o.trace_file = profile_dir() + "/bench.pftrace";
      o.overrides.push_back("trace.detail=" + env_or("SOHUSIM_BENCH_TRACE_DETAIL", "summary"));
      o.profile_interval_ns = std::stoull(env_or("SOHUSIM_BENCH_PROFILE_INTERVAL_NS", "200000"));
    }
    sim = std::make_unique<platform::Simulator>(o);
    model = workloads::load_model("llama-3-70b", o.config_dirs);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// One request through runtime, driver, PCIe and the 8 devices.
workloads::ScenarioResult run_request(Fixture& f, unsigned batch, unsigned prompt, bool decode_only) {
  workloads::ScenarioResult r;
  f.sim->run([&](platform::HostContext& host) {
    workloads::ScenarioOptions so;
    so.batch = batch;
    so.prompt = prompt;
    so.gen = 1;
    so.decode_only = decode_only;
    so.profile_ops = false;
    so.dtype = driver::DType::Fp8E4M3;
    r = workloads::run_scenario(host.runtime(), f.model, so, {0, 1, 2, 3, 4, 5, 6, 7});
  });
  ++f.steps;
  return r;
}

double decode_step(Fixture& f) {
  return run_request(f, 64, 2048, true).tpot_seconds * 1e3;
}

// Argument 0: cold (skipped, as it cannot be cold, when a step ran before in this process);
// 1: warm (an untimed first step records the shapes if none ran yet).
void BM_Llama70bDecodeStepSohu8(benchmark::State& state) {
  Fixture& f = fixture();
  const bool warm = state.range(0) == 1;
  if (!warm && f.steps > 0) {
    state.SkipWithError("a cold step must be the process's first (run the benchmarks in order)");
    return;
  }
  if (warm && f.steps == 0) decode_step(f);
  double simulated = 0;
  for (auto _ : state) simulated = decode_step(f);
  state.counters["simulated_ms"] = simulated;
  state.SetLabel(profile_dir().empty() ? "untraced" : "trace + profile sampler");
}
// Cold: the first step of a process, in which every command shape is simulated once and
// recorded. Warm: the steps after it, with GEMM, attention and vector shapes replayed and the
// collectives simulated (in a request the KV length grows every step, so there the first
// layer's attention of each step is simulated too). Each iteration creates a queue per device
// (63 at most): a few iterations only.
BENCHMARK(BM_Llama70bDecodeStepSohu8)
    ->Name("BM_Llama70bDecodeStepSohu8Cold")
    ->Arg(0)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama70bDecodeStepSohu8)
    ->Name("BM_Llama70bDecodeStepSohu8Warm")
    ->Arg(1)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// The prefill of a smaller request: 4 sequences of 2048 tokens, one token out, through the
// same system (its shapes recorded if the decode steps did not: run it after them).
void BM_Llama70bPrefillSohu8(benchmark::State& state) {
  Fixture& f = fixture();
  double simulated = 0;
  for (auto _ : state) simulated = run_request(f, 4, 2048, false).ttft_seconds * 1e3;
  state.counters["simulated_ms"] = simulated;
}
BENCHMARK(BM_Llama70bPrefillSohu8)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
