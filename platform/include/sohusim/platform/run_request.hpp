#pragma once
// RunRequest: one transformer request run end to end on a Simulator — what `sohusim run`
// does and prints with --json, as a library, so that the command line and the Python
// bindings (python/) give the same result for the same options.
//
//   platform::RunRequest req;  req.model = "gpt2";  req.prompt = 32;  req.gen = 2;
//   platform::RunPlan plan = platform::plan_run(req, sim.configuration().choice);  // checks
//   platform::check_run(sim, plan);                 // the shards fit the built devices
//   platform::RunOutcome out = platform::execute_run(sim, plan);
//   nlohmann::json j = platform::run_json(sim, plan, out);   // `sohusim run --json`
//
// The steps are separate because the command line does its own work between them (builds
// the Simulator after plan_run, checks that its output files can be written after
// check_run, writes them after execute_run). plan_run and check_run throw
// std::invalid_argument for a request that cannot run, with the message the command line
// prints. A failure while simulating is not thrown: RunOutcome::failure says what it was and
// run_json gives the failure object ({"ok": false, "failure", "model", "system",
// "configuration"}).
//
// A Simulator may run several requests, one after the other: the figures of a run (energy,
// utilization, HBM bytes) count only the activity of its own request.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sohusim/platform/profiling/capture_session.hpp"
#include "sohusim/platform/run_configuration.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system_spec.hpp"
#include "sohusim/workloads/model_config.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::platform {

/// The options of `sohusim run` that shape the request (the machine is the Simulator's; the
/// outputs are the caller's). Defaults are the command line's built-in default request.
struct RunRequest {
  std::string model = "llama-3-8b";  // a name in configs/models or a HuggingFace config.json
  unsigned batch = 1, prompt = 128, gen = 16;
  std::string dtype = "fp8";  // fp8 (= fp8_e4m3), fp8_e5m2, bf16, fp16, fp32
  unsigned tp = 0;            // tensor-parallel degree; 0: every device of a host
  bool upload_weights = false, decode_only = false;
  /// Capture each device's trace unit and clock through the driver (--capture).
  bool capture = false;
  std::uint64_t seed = 1;
  /// Called on host 0 after each step ("prefill"/"decode", step, steps), e.g. a progress line.
  std::function<void(const std::string&, unsigned, unsigned)> progress;
};

/// A request checked against the machine it runs on.
struct RunPlan {
  RunRequest request;
  workloads::ModelConfig model;
  SystemSpec spec;
  driver::DType dtype = driver::DType::Fp8E4M3;
  bool functional = false;  // the machine's mode is "functional"
  unsigned tp = 1;          // resolved
  unsigned per_host = 1;    // devices per host
  unsigned stages = 1;      // hosts: one pipeline stage each
};

/// Loads the model and the system `machine` names and checks the request against them
/// (data type and mode, equal hosts, the tensor-parallel degree). Throws std::invalid_argument.
RunPlan plan_run(const RunRequest& request, const ConfigChoice& machine);

/// What needs the built devices: the prompt and output fit the model's positions, every
/// rank's weights and memory plan fit its device's HBM. Throws std::invalid_argument.
void check_run(Simulator& sim, const RunPlan& plan);

struct RunOutcome {
  std::vector<workloads::ScenarioResult> results;  // one per host
  std::vector<DeviceCapture> captures;             // every host's (RunRequest::capture)
  HostAlignment host_alignment;                    // the other hosts' clocks against host 0's
  AlignedViewStats aligned;                        // the captures drawn into the trace
  double simulated_seconds = 0;                    // this run's
  double wall_seconds = 0;                         // this run's
  std::string failure;                             // empty: the request finished
  /// Before the run: each device's energy at 0 s (its activity so far) and the counters the
  /// figures sum, so that they count this run alone.
  std::vector<double> energy_before_j;
  double macs_before = 0, hbm_bytes_before = 0;
};

/// Runs the request on every host (one pipeline stage each) and draws the captures, if any,
/// into the simulator's trace.
RunOutcome execute_run(Simulator& sim, const RunPlan& plan);

/// The whole-system figures of a finished run.
struct RunFigures {
  unsigned devices = 0;
  double energy_j = 0;
  double compute_utilization = 0, hbm_utilization = 0;  // over the run's simulated time
  double hbm_bytes = 0;                                 // read and written, every device
  std::uint64_t hbm_used_bytes = 0;                     // the largest over the devices
  double output_tokens_per_joule = 0;
};
RunFigures run_figures(Simulator& sim, const RunPlan& plan, const RunOutcome& outcome);

/// The JSON `sohusim run --json` prints: the result, or the failure object.
nlohmann::json run_json(Simulator& sim, const RunPlan& plan, const RunOutcome& outcome);

}  // namespace sohusim::platform
