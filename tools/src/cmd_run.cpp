// `sohusim run`: a transformer request on a simulated system, end to end — the runtime and
// driver on each host, PCIe, the devices, chip-to-chip links and the host network — and its
// metrics (TTFT, TPOT, tokens/s both ways, utilization, HBM used, energy). The request and its
// JSON are platform/run_request.hpp's (the Python bindings run the same); this file adds the
// options, the outputs (trace, stats, profile, report) and the text summary.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "report_outputs.hpp"
#include "sohusim/platform/profiling/capture_session.hpp"
#include "sohusim/platform/profiling/run_profile.hpp"
#include "sohusim/platform/run_request.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::tools {

namespace {

struct RunOptions {
  // The request (platform::RunRequest; its defaults are the built-in default: Llama-3-8B, one
  // request of 128 in / 16 out on one chip, in seconds) and the machine.
  platform::RunRequest request;
  std::string system = "sohu-1";
  std::string fidelity, mode;
  std::string trace, trace_detail, stats, profile, report;
  std::uint64_t profile_interval_ns = 200'000;
  std::vector<std::string> samples;
  std::uint64_t sample_interval_ns = 10'000;
  bool json = false;
  std::vector<std::string> sets;
  platform::ConfigChoice layers;  // --arch, --hbm, --config
};

// The profile of the run (and its report): the summary's scalars become the profile's.
void write_profile_outputs(platform::Simulator& sim, const std::vector<workloads::ScenarioResult>& results,
                           driver::DType dtype, const nlohmann::json& summary, const RunOptions& o,
                           const std::vector<platform::DeviceCapture>& captures) {
  profiler::RunProfile p = platform::build_run_profile(sim, results, dtype);
  // --capture: per-opcode latencies of every command, from the devices' own records.
  for (const platform::DeviceCapture& c : captures) {
    for (profiler::CommandStat& row : driver::command_stats(c.commands, "dev" + std::to_string(c.device))) {
      if (row.name != "start_to_complete") p.commands.push_back(std::move(row));  // the registry has that one
    }
  }
  for (const auto& [k, v] : summary.items()) {
    if (v.is_number())
      p.summary[k] = v.get<double>();
    else if (v.is_string())
      p.summary_text[k] = v.get<std::string>();
  }
  if (!o.profile.empty()) {
    std::ofstream os(o.profile);
    profiler::write_profile(os, p);
  }
  if (!o.report.empty()) write_report(p, profiler::analyze(p), o.report, "", "");
}

// The text summary of a finished run.
std::string run_text(platform::Simulator& sim, const platform::RunPlan& plan, const platform::RunOutcome& out) {
  const platform::RunRequest& o = plan.request;
  const workloads::ScenarioResult& r = out.results.front();
  const platform::RunFigures f = platform::run_figures(sim, plan, out);
  const double sim_seconds = out.simulated_seconds;
  const unsigned devices = f.devices, stages = plan.stages;
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << plan.model.name << " on " << plan.spec.name << " (" << devices << " device" << (devices > 1 ? "s" : "")
    << ", tp " << plan.tp << ", " << stages << " stage" << (stages > 1 ? "s" : "") << "), "
    << driver::dtype_name(plan.dtype) << ", " << (plan.functional ? "functional" : "timing") << "\n";
  s << "  request      batch " << o.batch << ", prompt " << o.prompt << ", gen " << o.gen << "\n";
  if (o.decode_only) {
    // No prompt was processed: there is no first token to time, and only output tokens count.
    s << "  decode-only  steady-state decode steps over a KV cache that starts with " << o.prompt
      << " positions; no prefill, so no TTFT\n";
  } else {
    s << "  TTFT         " << r.ttft_seconds * 1e3 << " ms\n";
  }
  s << "  TPOT         " << r.tpot_seconds * 1e3 << " ms\n";
  s << "  end to end   " << r.e2e_seconds * 1e3 << " ms";
  if (o.upload_weights) s << " (+ " << r.load_seconds * 1e3 << " ms weight upload)";
  s << "\n";
  s.precision(1);
  if (o.decode_only)
    s << "  tokens/s     " << r.output_tokens_per_second << " (output only: decode-only)\n";
  else
    s << "  tokens/s     " << r.tokens_per_second << " (input + output), " << r.output_tokens_per_second
      << " (output only)\n";
  s.precision(3);
  s << "  utilization  compute " << f.compute_utilization * 100 << " %, HBM bandwidth " << f.hbm_utilization * 100
    << " % (over " << sim_seconds * 1e3 << " ms simulated)\n";
  // The parts add up to the total: the plan's three regions and what the runtime holds besides.
  const std::uint64_t planned = r.weight_bytes + r.kv_bytes + r.activation_bytes;
  const std::uint64_t other = f.hbm_used_bytes > planned ? f.hbm_used_bytes - planned : 0;
  const auto gib = [](std::uint64_t b) { return static_cast<double>(b) / (1ULL << 30); };
  s << "  HBM used     " << gib(f.hbm_used_bytes) << " GiB per device: weights " << gib(r.weight_bytes) << ", KV cache "
    << gib(r.kv_bytes) << ", activations " << gib(r.activation_bytes) << ", other " << gib(other) << "\n";
  s << "  energy       " << f.energy_j << " J, " << (sim_seconds > 0 ? f.energy_j / sim_seconds : 0) << " W, "
    << f.output_tokens_per_joule << " output tokens/J\n";
  if (!r.decode.per_kind.empty()) {
    s << "  decode step by op kind (rank 0):";
    for (const auto& [k, v] : r.decode.per_kind) s << " " << k << " " << v * 1e3 << " ms;";
    s << "\n";
  }
  if (plan.functional) {
    s << "  tokens       ";
    for (std::size_t b = 0; b < r.tokens.size(); ++b) {
      s << (b ? " | " : "");
      for (std::size_t i = 0; i < r.tokens[b].size(); ++i) s << (i ? " " : "") << r.tokens[b][i];
    }
    s << "\n";
  }
  if (o.capture) {
    std::uint64_t drops = 0;
    for (const platform::DeviceCapture& d : out.captures) drops += d.drops;
    s.precision(1);
    s << "  capture      " << out.aligned.commands << " commands from " << out.captures.size() << " device(s), on "
      << (out.host_alignment.fits.empty() ? "the host clock" : "host 0's clock") << " within "
      << out.aligned.max_abs_error_ns << " ns (mean " << out.aligned.mean_abs_error_ns << "), " << drops
      << " records dropped\n";
    s.precision(3);
  }
  s << "  wall         " << out.wall_seconds << " s\n";
  return s.str();
}

int run_run(const GlobalOptions& global, const RunOptions& o) {
  const std::vector<std::string> dirs = preset_dir_strings(global);
  check_distinct_outputs(
      {{"--trace", o.trace}, {"--stats", o.stats}, {"--profile", o.profile}, {"--report", o.report}});

  platform::SimulatorOptions so;
  so.system = o.system;
  so.arch = o.layers.arch;
  so.hbm = o.layers.hbm;
  so.configs = o.layers.configs;
  so.config_dirs = dirs;
  so.overrides = o.sets;
  if (!o.trace_detail.empty()) so.overrides.push_back("trace.detail=" + o.trace_detail);
  so.fidelity = o.fidelity;
  so.mode = o.mode;
  so.trace_file = o.trace;
  platform::RunRequest request = o.request;
  if (isatty(STDERR_FILENO) != 0 && !o.json) {
    request.progress = [](const std::string& phase, unsigned step, unsigned steps) {
      std::fprintf(stderr, "\r%s: step %u of %u ", phase.c_str(), step, steps);
      if (step == steps) std::fprintf(stderr, "\n");
    };
  }
  platform::RunPlan plan;
  try {
    plan = platform::plan_run(request, so);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool profiling = !o.profile.empty() || !o.report.empty();
  so.sample_patterns = o.samples;
  so.sample_interval_ns = o.sample_interval_ns;
  if (!o.samples.empty() && o.trace.empty())
    throw UsageError("--sample: the samples go into the trace; give --trace FILE");
  if (profiling) so.profile_interval_ns = o.profile_interval_ns;
  const std::unique_ptr<platform::Simulator> sim = make_simulator(so);
  // A pattern that matches nothing yet is said (the runtime's statistics appear on its first
  // use, so it is a warning, not an error).
  for (const std::string& pattern : o.samples) {
    if (sim->stats().glob(pattern).empty())
      std::cerr << "sohusim run: warning: --sample `" << pattern
                << "` matches no statistic of this system yet (`sohusim run --stats s.json` lists them)\n";
  }
  // What can be checked before simulating: the shard and the memory plan of every rank.
  try {
    platform::check_run(*sim, plan);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  for (const auto& [flag, path] : {std::pair<const char*, const std::string*>{"--stats", &o.stats},
                                   {"--profile", &o.profile},
                                   {"--report", &o.report}}) {
    if (path->empty()) continue;
    std::ofstream probe(*path);
    if (!probe) throw UsageError(std::string(flag) + ": cannot write `" + *path + "`");
  }

  const platform::RunOutcome out = platform::execute_run(*sim, plan);
  // An output that cannot be written (a full disk) fails the command but keeps the others.
  const std::string stats_error = o.stats.empty() ? std::string() : sim->write_stats(o.stats);
  if (!stats_error.empty()) std::cerr << "sohusim run: --stats: " << stats_error << "\n";
  const int done_code = stats_error.empty() ? kOk : kSimulationError;
  sim->close_trace();
  if (!out.failure.empty()) {
    std::cerr << "sohusim run: " << out.failure << "\n";
    // What a script reading stdout needs to tell a failed run from a finished one.
    if (o.json) std::cout << platform::run_json(*sim, plan, out).dump(2) << "\n";
    if (profiling) {
      // What ran before the failure: the units, the counter windows and whatever steps finished.
      nlohmann::json j;
      j["model"] = plan.model.name;
      j["system"] = plan.spec.name;
      j["failure"] = out.failure;
      write_profile_outputs(*sim, out.results, plan.dtype, j, o, out.captures);
    }
    print_written("run",
                  {{"--trace", o.trace}, {"--stats", o.stats}, {"--profile", o.profile}, {"--report", o.report}});
    if (sim->abandoned()) {
      // Every output is written and closed. The suspended host threads' stacks still point at
      // what they allocated; SystemC cannot unwind them and a leak checker cannot see into
      // them, so the process ends here, as it would at the end of main, without destructors.
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(kSimulationError);
    }
    return kSimulationError;
  }

  const nlohmann::json j = platform::run_json(*sim, plan, out);
  if (profiling) write_profile_outputs(*sim, out.results, plan.dtype, j, o, out.captures);
  print_written("run", {{"--trace", o.trace}, {"--stats", o.stats}, {"--profile", o.profile}, {"--report", o.report}});
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return done_code;
  }
  std::cout << run_text(*sim, plan, out);
  return done_code;
}

}  // namespace

void add_run_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = root.add_subcommand("run", "run a transformer request on a simulated system; print TTFT, TPOT, tokens/s");
  cmd->add_option("--model", o->request.model, "model name (configs/models) or a HuggingFace config.json")
      ->capture_default_str();
  cmd->add_option("--system", o->system, "system name (configs/systems) or a system YAML file")->capture_default_str();
  cmd->add_option("--batch", o->request.batch, "sequences")->capture_default_str()->check(CLI::Range(1u, 65535u));
  cmd->add_option("--prompt", o->request.prompt, "input tokens per sequence")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--gen", o->request.gen, "output tokens per sequence")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--dtype", o->request.dtype, "fp8 | fp8_e5m2 | bf16 | fp16 | fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp8", "fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp32"}));
  cmd->add_option("--tp", o->request.tp, "tensor-parallel degree (default: every device of a host)");
  cmd->add_option("--fidelity", o->fidelity, "fast | detailed (default: the arch's)")
      ->check(CLI::IsMember({"fast", "detailed"}));
  cmd->add_option("--mode", o->mode, "timing | functional")->check(CLI::IsMember({"timing", "functional"}));
  cmd->add_option("--trace", o->trace, "trace file (.pftrace: Perfetto protobuf; .json: Chrome JSON)");
  cmd->add_option("--trace-detail", o->trace_detail,
                  "full: every event; summary: counters binned at 100 us, no per-transfer PCIe slices "
                  "(for long runs; trace.detail)")
      ->check(CLI::IsMember({"full", "summary"}));
  cmd->add_option("--stats", o->stats, "statistics file (.json or .csv)");
  cmd->add_option("--sample", o->samples,
                  "statistics (glob, repeatable) sampled into trace counter tracks while the run goes on");
  cmd->add_option("--sample-interval", o->sample_interval_ns, "interval of --sample, ns")
      ->capture_default_str()
      ->check(CLI::Range(100ULL, 1'000'000'000ULL));
  cmd->add_option("--profile", o->profile, "write the run's profile (JSON; the input of `sohusim report`)");
  cmd->add_option("--report", o->report, "write the profiler's HTML report of the run");
  cmd->add_option("--profile-interval", o->profile_interval_ns,
                  "counter sampling interval of the profile, ns (doubles as the run grows)")
      ->capture_default_str()
      ->check(CLI::Range(100ULL, 1'000'000'000ULL));
  cmd->add_flag("--capture", o->request.capture,
                "capture each device's trace unit and clock through the driver; its commands, aligned to the "
                "host clock, go into the trace (`devN captured`) and their per-opcode latencies into the profile");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_flag("--upload-weights", o->request.upload_weights, "simulate the weight upload over PCIe and report it");
  cmd->add_flag("--decode-only", o->request.decode_only,
                "steady-state decode study: no prefill, the KV cache holds --prompt positions already");
  cmd->add_option("--seed", o->request.seed, "seed of the functional mode's weights and prompts")
      ->capture_default_str();
  add_layer_options(cmd, o->layers);
  cmd->add_option("--set", o->sets, "config override key=value (repeatable)");
  cmd->callback([o, &global, &action] { action = [o, &global] { return run_run(global, *o); }; });
}

}  // namespace sohusim::tools
