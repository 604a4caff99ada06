#pragma once
// ServeRequest: a request stream served on a Simulator from the options of `sohusim serve`,
// and the JSON it prints with --json — as a library, so that the command line and the Python
// bindings (python/) give the same result for the same options. serve() (serving.hpp) does
// the serving; this unit turns the options into its ServingOptions and its result into JSON.
//
//   platform::ServeRequest req;  req.model = "gpt2";  req.rate = 200;  req.requests = 20;
//   platform::ServePlan plan = platform::plan_serve(req, sim.configuration().choice);
//   platform::ServeOutcome out = platform::execute_serve(sim, plan);   // serve() and its wall time
//   nlohmann::json j = platform::serve_json(sim, plan, out);   // `sohusim serve --json`
//
// plan_serve throws std::invalid_argument (the message the command line prints) for options
// that cannot run; execute_serve throws it too for a model that does not fit. A run that ends
// in a failure still has its JSON: "ok" false and "failure" set. A Simulator may serve
// several times, one after the other (serving.hpp); each JSON is of its own run.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sohusim/platform/run_configuration.hpp"
#include "sohusim/platform/serving.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system_spec.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::platform {

/// The options of `sohusim serve` that shape the run (the machine is the Simulator's; the
/// outputs are the caller's), with the command line's defaults.
struct ServeRequest {
  std::string model = "llama-3-8b";
  std::string dtype = "fp8";         // fp8 (= fp8_e4m3), fp8_e5m2, bf16, fp16, fp32
  unsigned tp = 0;                   // 0: every device of the host
  std::string scenario = "poisson";  // offline | poisson | gamma | closed | trace
  double rate = 4, cv = 1, duration_s = 0, think_s = 0;
  std::uint64_t requests = 64;
  unsigned clients = 8;
  std::string input_len = "lognormal:512:256", output_len = "lognormal:128:64";
  std::string trace_file;                // scenario trace: CSV with arrival_s, input_tokens, output_tokens
  std::string scheduler = "continuous";  // static | continuous | chunked
  unsigned max_batch = 64;
  std::uint32_t max_tokens = 0;  // 0: the model's positions
  std::uint32_t kv_block = 16;
  std::uint64_t kv_blocks = 0;  // 0: all that fit
  double memory_utilization = 0.9;
  bool swap = false, no_reuse = false;
  double slo_ttft_ms = 0, slo_tpot_ms = 0;  // 0: no SLO
  std::uint64_t seed = 1;
};

/// The request checked against its model and system, as serve() takes it.
struct ServePlan {
  ServeRequest request;
  workloads::ModelConfig model;
  SystemSpec spec;
  driver::DType dtype = driver::DType::Fp8E4M3;
  unsigned tp = 1;         // resolved
  ServingOptions options;  // stream, scheduler, devices, SLO
};

/// Loads the model and the system `machine` names, parses the stream, the lengths and the
/// scheduler, and checks them (one host; the tensor-parallel degree). Throws
/// std::invalid_argument.
ServePlan plan_serve(const ServeRequest& request, const ConfigChoice& machine);

struct ServeOutcome {
  ServingResult result;
  double wall_seconds = 0;  // this run's
};
/// serve(sim, plan.model, plan.options), timed.
ServeOutcome execute_serve(Simulator& sim, const ServePlan& plan);

/// The KV cache over the run: the peak and the time-weighted mean of the blocks in use.
struct KvOccupancy {
  std::uint64_t peak_blocks = 0;
  double mean_blocks = 0;
  double blocks = 1;  // the cache's blocks (at least 1), the denominator of the shares
};
KvOccupancy kv_occupancy(const ServingResult& r);

/// The JSON `sohusim serve --json` prints ("ok" false and "failure" when the run failed).
nlohmann::json serve_json(Simulator& sim, const ServePlan& plan, const ServeOutcome& outcome);

}  // namespace sohusim::platform
