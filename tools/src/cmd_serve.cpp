// `sohusim serve`: a stream of requests served on a simulated system — the serving
// scheduler on the host (static, continuous or chunked batching over a paged KV cache), each
// step run on the devices through the runtime and driver — and the metrics serving people
// read: TTFT, TPOT and time between tokens (p50/p90/p99), throughput, goodput under an SLO,
// KV occupancy, energy per output token. docs/serving.md describes the parts. The run and its
// JSON are platform/serve_request.hpp's (the Python bindings run the same); this file adds the
// options, the outputs (CSV, trace, stats, profile, report) and the text summary.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "report_outputs.hpp"
#include "sohusim/platform/profiling/run_profile.hpp"
#include "sohusim/platform/serve_request.hpp"
#include "sohusim/platform/serving.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::tools {

namespace {

struct ServeOptions {
  platform::ServeRequest request;  // the stream, the scheduler, the cache, the SLO
  std::string system = "sohu-1";
  std::string write_requests;
  bool json = false;
  std::string csv, trace, stats, fidelity, profile, report;
  std::uint64_t profile_interval_ns = 1'000'000;
  std::vector<std::string> sets;
  platform::ConfigChoice layers;  // --arch, --hbm, --config
};

// The text summary of a run.
std::string serve_text(const platform::ServePlan& plan, const platform::ServeOutcome& out) {
  const platform::ServeRequest& o = plan.request;
  const platform::ServingResult& r = out.result;
  const workloads::ServingMetrics& m = r.metrics;
  const workloads::SloTargets& slo = plan.options.slo;
  const workloads::SchedulerOptions& sched = plan.options.scheduler;
  const workloads::KvCacheOptions& kv = r.kv;
  const platform::KvOccupancy occupancy = platform::kv_occupancy(r);
  const double energy_j = r.energy_j, out_tokens = r.output_tokens;
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  auto row = [&](const char* name, const workloads::Percentiles& p) {
    s << "  " << name << "p50 " << p.p50 * 1e3 << "  p90 " << p.p90 * 1e3 << "  p99 " << p.p99 * 1e3 << " ms\n";
  };
  s << plan.model.name << " on " << plan.spec.name << " (tp " << plan.tp << "), " << driver::dtype_name(plan.dtype)
    << ", " << o.scenario << " stream, " << o.scheduler << " batching (max batch " << sched.max_batch << ", max tokens "
    << sched.max_tokens << ")\n";
  s << "  requests     " << m.completed << " completed, " << m.rejected << " rejected, " << m.unfinished
    << " unfinished, " << m.preemptions << " preemptions\n";
  row("TTFT         ", m.ttft_s);
  row("TPOT         ", m.tpot_s);
  row("between tok. ", m.itl_s);
  row("end to end   ", m.e2e_s);
  row("queueing     ", m.queueing_s);
  s << "  throughput   " << m.input_tokens_per_s << " input + " << m.output_tokens_per_s << " output tokens/s, ";
  s.precision(2);
  s << m.requests_per_s << " requests/s\n";
  if (slo.ttft_s > 0 || slo.tpot_s > 0) {
    s << "  SLO          TTFT <= " << o.slo_ttft_ms << " ms, TPOT <= " << o.slo_tpot_ms << " ms: " << m.met_slo
      << " of " << m.completed << " met (" << m.slo_attainment * 100 << " %), goodput " << m.goodput_per_s
      << " requests/s\n";
  }
  s << "  KV cache     " << kv.blocks << " blocks of " << kv.block_tokens << " tokens, peak "
    << static_cast<double>(occupancy.peak_blocks) / occupancy.blocks * 100 << " %, mean "
    << occupancy.mean_blocks / occupancy.blocks * 100 << " %\n";
  s << "  energy       " << (out_tokens > 0 ? energy_j / out_tokens * 1e3 : 0) << " mJ per output token\n";
  s.precision(3);
  s << "  steps        " << r.steps << " (" << r.steps_simulated << " simulated, " << r.steps_reused
    << " of a shape seen before)\n";
  s << "  time         " << r.end_s << " s simulated, " << out.wall_seconds << " s wall\n";
  return s.str();
}

int run_serve(const GlobalOptions& global, const ServeOptions& o) {
  platform::SimulatorOptions so;
  so.system = o.system;
  so.arch = o.layers.arch;
  so.hbm = o.layers.hbm;
  so.configs = o.layers.configs;
  so.config_dirs = preset_dir_strings(global);
  so.overrides = o.sets;
  so.fidelity = o.fidelity;
  so.mode = "timing";
  so.trace_file = o.trace;
  platform::ServePlan plan;
  try {
    plan = platform::plan_serve(o.request, so);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  check_distinct_outputs({{"--trace", o.trace},
                          {"--stats", o.stats},
                          {"--csv", o.csv},
                          {"--profile", o.profile},
                          {"--report", o.report},
                          {"--write-requests", o.write_requests}});
  if (!o.write_requests.empty()) {
    if (plan.options.stream.kind == workloads::StreamKind::Closed)
      throw UsageError("--write-requests: a closed loop's arrivals depend on the run");
    try {
      workloads::write_request_trace(o.write_requests, workloads::generate_requests(plan.options.stream));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  for (const auto& [flag, path] : {std::pair<const char*, const std::string*>{"--csv", &o.csv},
                                   {"--stats", &o.stats},
                                   {"--profile", &o.profile},
                                   {"--report", &o.report}}) {
    if (path->empty()) continue;
    std::ofstream probe(*path);
    if (!probe) throw UsageError(std::string(flag) + ": cannot write `" + *path + "`");
  }

  const bool profiling = !o.profile.empty() || !o.report.empty();
  if (profiling) so.profile_interval_ns = o.profile_interval_ns;
  const std::unique_ptr<platform::Simulator> sim = make_simulator(so);

  platform::ServeOutcome out;
  try {
    out = platform::execute_serve(*sim, plan);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const platform::ServingResult& r = out.result;
  const std::string stats_error = o.stats.empty() ? std::string() : sim->write_stats(o.stats);
  if (!stats_error.empty()) std::cerr << "sohusim serve: --stats: " << stats_error << "\n";
  sim->close_trace();
  if (!o.csv.empty()) {
    std::ofstream os(o.csv);
    workloads::write_request_csv(os, r.records);
  }
  const nlohmann::json j = platform::serve_json(*sim, plan, out);

  if (profiling) {
    // The devices' units and counter windows, the summary's scalars, and the serving run.
    profiler::RunProfile p = platform::build_run_profile(*sim, {}, plan.dtype);
    for (const auto& [k, v] : j.items()) {
      if (v.is_number())
        p.summary[k] = v.get<double>();
      else if (v.is_string())
        p.summary_text[k] = v.get<std::string>();
    }
    p.serving = platform::serving_profile(r, plan.options.slo);
    if (!o.profile.empty()) {
      std::ofstream os(o.profile);
      profiler::write_profile(os, p);
    }
    if (!o.report.empty()) write_report(p, profiler::analyze(p), o.report, "", "");
  }
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << serve_text(plan, out);
  }
  print_written(
      "serve",
      {{"--trace", o.trace}, {"--stats", o.stats}, {"--csv", o.csv}, {"--profile", o.profile}, {"--report", o.report}});
  if (!r.failure.empty()) {
    std::cerr << "sohusim serve: " << r.failure << "\n";
    if (sim->abandoned()) {
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(kSimulationError);
    }
    return kSimulationError;
  }
  return stats_error.empty() ? kOk : kSimulationError;
}

}  // namespace

void add_serve_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = root.add_subcommand(
      "serve", "serve a stream of requests on a simulated system; print TTFT, TPOT, throughput, goodput under an SLO");
  cmd->add_option("--model", o->request.model, "model name (configs/models) or a HuggingFace config.json")
      ->capture_default_str();
  cmd->add_option("--system", o->system, "system name (configs/systems) or a system YAML file (one host)")
      ->capture_default_str();
  cmd->add_option("--dtype", o->request.dtype, "fp8 | fp8_e5m2 | bf16 | fp16 | fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp8", "fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp32"}));
  cmd->add_option("--tp", o->request.tp, "tensor-parallel degree (default: every device of the host)");
  cmd->add_option("--scenario", o->request.scenario, "offline | poisson | gamma | closed | trace")
      ->capture_default_str();
  cmd->add_option("--rate", o->request.rate, "requests per second (poisson, gamma)")
      ->check(finite_range(0, 1e12))
      ->capture_default_str();
  cmd->add_option("--cv", o->request.cv, "coefficient of variation of inter-arrival times (gamma)")
      ->check(finite_range(0, 1e12))
      ->capture_default_str();
  cmd->add_option("--requests", o->request.requests, "requests to send (0: bounded by --duration)")
      ->capture_default_str();
  cmd->add_option("--duration", o->request.duration_s, "seconds of arrivals (0: bounded by --requests)")
      ->check(finite_range(0, 1e9));
  cmd->add_option("--clients", o->request.clients, "closed loop: concurrent clients")->capture_default_str();
  cmd->add_option("--think", o->request.think_s,
                  "closed loop: seconds between a completion and the client's next request")
      ->check(finite_range(0, 1e9));
  cmd->add_option("--input-len", o->request.input_len,
                  "prompt lengths: N | uniform:LO:HI | normal:M:SD | lognormal:M:SD | hist:FILE")
      ->capture_default_str();
  cmd->add_option("--output-len", o->request.output_len, "output lengths, same forms")->capture_default_str();
  cmd->add_option("--trace-file", o->request.trace_file, "trace: CSV with arrival_s, input_tokens, output_tokens");
  cmd->add_option("--write-requests", o->write_requests, "write the generated requests as a trace CSV");
  cmd->add_option("--scheduler", o->request.scheduler, "static | continuous | chunked")->capture_default_str();
  cmd->add_option("--max-batch", o->request.max_batch, "sequences per step")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--max-tokens", o->request.max_tokens, "tokens per step (default: the model's positions)");
  cmd->add_option("--kv-block", o->request.kv_block, "KV block size, tokens")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--kv-blocks", o->request.kv_blocks, "at most this many KV blocks (0: all that fit in HBM)");
  cmd->add_option("--memory-utilization", o->request.memory_utilization,
                  "share of HBM for weights, activations and the KV cache")
      ->capture_default_str();
  cmd->add_flag("--swap", o->request.swap, "preempt by swapping KV blocks to host memory (default: recompute)");
  cmd->add_option("--slo-ttft", o->request.slo_ttft_ms, "SLO on time to first token, ms (0: none)")
      ->check(finite_range(0, 1e9));
  cmd->add_option("--slo-tpot", o->request.slo_tpot_ms, "SLO on time per output token, ms (0: none)")
      ->check(finite_range(0, 1e9));
  cmd->add_flag("--no-reuse", o->request.no_reuse,
                "simulate every step (default: reuse the cost of a step shape seen before)");
  cmd->add_option("--fidelity", o->fidelity, "fast | detailed (default: the arch's)")
      ->check(CLI::IsMember({"fast", "detailed"}));
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_option("--csv", o->csv, "write one line per request");
  cmd->add_option("--trace", o->trace, "trace file (.pftrace: Perfetto protobuf; .json: Chrome JSON)");
  cmd->add_option("--stats", o->stats, "statistics file (.json or .csv)");
  cmd->add_option("--profile", o->profile,
                  "write the run's profile (JSON, with the serving run; `sohusim report` reads it)");
  cmd->add_option("--report", o->report, "write the profiler's HTML report, its serving section first");
  cmd->add_option("--profile-interval", o->profile_interval_ns, "counter sampling interval of the profile, ns")
      ->capture_default_str()
      ->check(CLI::Range(100ULL, 1'000'000'000ULL));
  cmd->add_option("--seed", o->request.seed, "seed of the request stream")->capture_default_str();
  add_layer_options(cmd, o->layers);
  cmd->add_option("--set", o->sets, "config override key=value (repeatable)");
  // A later value of an option replaces an earlier one (scripts append their overrides).
  for (CLI::Option* opt : cmd->get_options()) {
    if (opt->get_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  cmd->callback([o, &global, &action] { action = [o, &global] { return run_serve(global, *o); }; });
}

}  // namespace sohusim::tools
