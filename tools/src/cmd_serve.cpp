// `sohusim serve`: a stream of requests served on a simulated system — the serving
// scheduler on the host (static, continuous or chunked batching over a paged KV cache), each
// step run on the devices through the runtime and driver — and the metrics serving people
// read: TTFT, TPOT and time between tokens (p50/p90/p99), throughput, goodput under an SLO,
// KV occupancy, energy per output token. docs/serving.md describes the parts.
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
#include "sohusim/platform/serving.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system_spec.hpp"
#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::tools {

namespace {

struct ServeOptions {
  std::string model = "llama-3-8b";
  std::string system = "sohu-1";
  std::string dtype = "fp8";
  unsigned tp = 0;
  std::string scenario = "poisson";
  double rate = 4, cv = 1, duration_s = 0, think_s = 0;
  std::uint64_t requests = 64;
  unsigned clients = 8;
  std::string input_len = "lognormal:512:256", output_len = "lognormal:128:64";
  std::string trace_file, write_requests;
  std::string scheduler = "continuous";
  unsigned max_batch = 64;
  std::uint32_t max_tokens = 0;  // 0: the model's positions
  std::uint32_t kv_block = 16;
  std::uint64_t kv_blocks = 0;
  double memory_utilization = 0.9;
  bool swap = false, no_reuse = false, json = false;
  double slo_ttft_ms = 0, slo_tpot_ms = 0;
  std::string csv, trace, stats, fidelity, profile, report;
  std::uint64_t profile_interval_ns = 1'000'000;
  std::uint64_t seed = 1;
  std::vector<std::string> sets;
  platform::ConfigChoice layers;  // --arch, --hbm, --config
};

nlohmann::json percentiles_ms(const workloads::Percentiles& p) {
  return {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p90", p.p90 * 1e3},
          {"p99", p.p99 * 1e3},   {"max", p.max * 1e3}, {"count", p.count}};
}

int run_serve(const GlobalOptions& global, const ServeOptions& o) {
  const std::vector<std::string> dirs = preset_dir_strings(global);
  workloads::ModelConfig model;
  platform::SystemSpec spec;
  workloads::StreamSpec stream;
  workloads::SchedulerOptions sched;
  try {
    model = workloads::load_model(o.model, dirs);
    spec = platform::SystemSpec::load(o.system, dirs);
    stream.kind = workloads::parse_stream_kind(o.scenario);
    stream.rate = o.rate;
    stream.cv = o.cv;
    stream.requests = o.requests;
    stream.duration_s = o.duration_s;
    stream.clients = o.clients;
    stream.think_s = o.think_s;
    stream.trace_file = o.trace_file;
    stream.seed = o.seed;
    stream.max_length = model.max_positions;
    if (stream.kind != workloads::StreamKind::Trace) {
      stream.input = workloads::parse_length_spec(o.input_len, "--input-len");
      stream.output = workloads::parse_length_spec(o.output_len, "--output-len");
    } else if (o.trace_file.empty()) {
      throw std::invalid_argument("--scenario trace needs --trace-file FILE");
    }
    stream.validate();
    sched.kind = workloads::parse_scheduler_kind(o.scheduler);
    sched.max_batch = o.max_batch;
    sched.max_tokens = o.max_tokens != 0 ? o.max_tokens : model.max_positions;
    sched.max_positions = model.max_positions;
    sched.swap = o.swap;
    sched.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (spec.hosts.size() > 1) {
    throw UsageError("sohusim serve: `" + spec.name + "` has " + std::to_string(spec.hosts.size()) +
                     " hosts; serving runs on one host's devices (pipeline stages are not served yet)");
  }
  const driver::DType dtype = parse_dtype(o.dtype);
  const unsigned per_host = spec.hosts.front().devices;
  const unsigned tp = o.tp == 0 ? per_host : o.tp;
  if (tp > per_host)
    throw UsageError("--tp " + std::to_string(tp) + ": the host has " + std::to_string(per_host) + " devices");

  check_distinct_outputs({{"--trace", o.trace},
                          {"--stats", o.stats},
                          {"--csv", o.csv},
                          {"--profile", o.profile},
                          {"--report", o.report},
                          {"--write-requests", o.write_requests}});
  if (!o.write_requests.empty()) {
    if (stream.kind == workloads::StreamKind::Closed)
      throw UsageError("--write-requests: a closed loop's arrivals depend on the run");
    try {
      workloads::write_request_trace(o.write_requests, workloads::generate_requests(stream));
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

  platform::SimulatorOptions so;
  so.system = o.system;
  so.arch = o.layers.arch;
  so.hbm = o.layers.hbm;
  so.configs = o.layers.configs;
  so.config_dirs = dirs;
  so.overrides = o.sets;
  so.fidelity = o.fidelity;
  so.mode = "timing";
  so.trace_file = o.trace;
  const bool profiling = !o.profile.empty() || !o.report.empty();
  if (profiling) so.profile_interval_ns = o.profile_interval_ns;
  const std::unique_ptr<platform::Simulator> sim = make_simulator(so);

  platform::ServingOptions sv;
  sv.stream = stream;
  sv.scheduler = sched;
  sv.device.dtype = dtype;
  sv.device.tp = tp;
  sv.device.allreduce =
      spec.c2c == "mesh" ? workloads::AllReduceAlgorithm::MeshAuto : workloads::AllReduceAlgorithm::Ring;
  sv.device.block_tokens = o.kv_block;
  sv.device.kv_blocks = o.kv_blocks;
  sv.device.memory_utilization = o.memory_utilization;
  sv.device.reuse = !o.no_reuse;
  sv.slo.ttft_s = o.slo_ttft_ms * 1e-3;
  sv.slo.tpot_s = o.slo_tpot_ms * 1e-3;
  platform::ServingResult r;
  try {
    r = platform::serve(*sim, model, sv);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::string stats_error = o.stats.empty() ? std::string() : sim->write_stats(o.stats);
  if (!stats_error.empty()) std::cerr << "sohusim serve: --stats: " << stats_error << "\n";
  sim->close_trace();
  if (!o.csv.empty()) {
    std::ofstream os(o.csv);
    workloads::write_request_csv(os, r.records);
  }
  const workloads::ServingMetrics& m = r.metrics;
  const workloads::SloTargets& slo = sv.slo;
  const workloads::KvCacheOptions& kv = r.kv;
  const double run_s = r.end_s;
  std::uint64_t kv_peak = 0;
  double kv_mean = 0, kv_prev_t = 0;
  for (const platform::OccupancySample& s : r.occupancy) {
    kv_peak = std::max(kv_peak, s.kv_blocks);
    kv_mean += static_cast<double>(s.kv_blocks) * (s.t_s - kv_prev_t);
    kv_prev_t = s.t_s;
  }
  kv_mean = run_s > 0 ? kv_mean / run_s : 0;
  const double blocks = static_cast<double>(std::max<std::uint64_t>(kv.blocks, 1));
  const double energy_j = r.energy_j, out_tokens = r.output_tokens;
  const std::string& failure = r.failure;

  nlohmann::json j;
  j["ok"] = failure.empty();
  j["model"] = model.name;
  j["system"] = spec.name;
  j["tp"] = tp;
  j["dtype"] = driver::dtype_name(dtype);
  j["scenario"] = o.scenario;
  j["scheduler"] = o.scheduler;
  j["max_batch"] = sched.max_batch;
  j["max_tokens"] = sched.max_tokens;
  j["swap"] = o.swap;
  j["configuration"] = sim->configuration().record();
  nlohmann::json metrics;
  workloads::to_json(metrics, m);
  j["metrics"] = metrics;
  j["ttft_ms"] = percentiles_ms(m.ttft_s);
  j["tpot_ms"] = percentiles_ms(m.tpot_s);
  j["itl_ms"] = percentiles_ms(m.itl_s);
  j["e2e_ms"] = percentiles_ms(m.e2e_s);
  j["queueing_ms"] = percentiles_ms(m.queueing_s);
  j["slo_met"] = slo.ttft_s == 0 && slo.tpot_s == 0 ? nlohmann::json(nullptr) : nlohmann::json(m.slo_attainment);
  j["steps"] = r.steps;
  j["steps_simulated"] = r.steps_simulated;
  j["steps_reused"] = r.steps_reused;
  j["commands"] = r.commands;
  j["kv_blocks"] = kv.blocks;
  j["kv_block_tokens"] = kv.block_tokens;
  j["kv_cache_bytes_per_device"] = r.kv_bytes;
  j["weight_bytes_per_device"] = r.weight_bytes;
  j["kv_peak_blocks"] = kv_peak;
  j["kv_peak_occupancy"] = static_cast<double>(kv_peak) / blocks;
  j["kv_mean_occupancy"] = kv_mean / blocks;
  nlohmann::json occ = nlohmann::json::array();
  for (const platform::OccupancySample& s : r.occupancy) occ.push_back({s.t_s, s.kv_blocks, s.running, s.waiting});
  j["occupancy"] = {{"columns", {"t_s", "kv_blocks", "running", "waiting"}}, {"rows", occ}};
  j["energy_joules"] = energy_j;
  j["energy_per_output_token_joules"] = out_tokens > 0 ? energy_j / out_tokens : 0;
  j["serve_start_seconds"] = r.start_seconds;
  j["simulated_seconds"] = run_s;
  j["wall_seconds"] = sim->wall_seconds();
  if (!failure.empty()) j["failure"] = failure;

  if (profiling) {
    // The devices' units and counter windows, the summary's scalars, and the serving run.
    profiler::RunProfile p = platform::build_run_profile(*sim, {}, dtype);
    for (const auto& [k, v] : j.items()) {
      if (v.is_number())
        p.summary[k] = v.get<double>();
      else if (v.is_string())
        p.summary_text[k] = v.get<std::string>();
    }
    p.serving = platform::serving_profile(r, slo);
    if (!o.profile.empty()) {
      std::ofstream os(o.profile);
      profiler::write_profile(os, p);
    }
    if (!o.report.empty()) write_report(p, profiler::analyze(p), o.report, "", "");
  }
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    auto row = [&](const char* name, const workloads::Percentiles& p) {
      s << "  " << name << "p50 " << p.p50 * 1e3 << "  p90 " << p.p90 * 1e3 << "  p99 " << p.p99 * 1e3 << " ms\n";
    };
    s << model.name << " on " << spec.name << " (tp " << tp << "), " << driver::dtype_name(dtype) << ", " << o.scenario
      << " stream, " << o.scheduler << " batching (max batch " << sched.max_batch << ", max tokens " << sched.max_tokens
      << ")\n";
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
      << static_cast<double>(kv_peak) / blocks * 100 << " %, mean " << kv_mean / blocks * 100 << " %\n";
    s << "  energy       " << (out_tokens > 0 ? energy_j / out_tokens * 1e3 : 0) << " mJ per output token\n";
    s.precision(3);
    s << "  steps        " << r.steps << " (" << r.steps_simulated << " simulated, " << r.steps_reused
      << " of a shape seen before)\n";
    s << "  time         " << run_s << " s simulated, " << sim->wall_seconds() << " s wall\n";
    std::cout << s.str();
  }
  if (!failure.empty()) {
    std::cerr << "sohusim serve: " << failure << "\n";
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
  cmd->add_option("--model", o->model, "model name (configs/models) or a HuggingFace config.json")
      ->capture_default_str();
  cmd->add_option("--system", o->system, "system name (configs/systems) or a system YAML file (one host)")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "fp8 | fp8_e5m2 | bf16 | fp16 | fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp8", "fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp32"}));
  cmd->add_option("--tp", o->tp, "tensor-parallel degree (default: every device of the host)");
  cmd->add_option("--scenario", o->scenario, "offline | poisson | gamma | closed | trace")->capture_default_str();
  cmd->add_option("--rate", o->rate, "requests per second (poisson, gamma)")
      ->check(finite_range(0, 1e12))
      ->capture_default_str();
  cmd->add_option("--cv", o->cv, "coefficient of variation of inter-arrival times (gamma)")
      ->check(finite_range(0, 1e12))
      ->capture_default_str();
  cmd->add_option("--requests", o->requests, "requests to send (0: bounded by --duration)")->capture_default_str();
  cmd->add_option("--duration", o->duration_s, "seconds of arrivals (0: bounded by --requests)")
      ->check(finite_range(0, 1e9));
  cmd->add_option("--clients", o->clients, "closed loop: concurrent clients")->capture_default_str();
  cmd->add_option("--think", o->think_s, "closed loop: seconds between a completion and the client's next request")
      ->check(finite_range(0, 1e9));
  cmd->add_option("--input-len", o->input_len,
                  "prompt lengths: N | uniform:LO:HI | normal:M:SD | lognormal:M:SD | hist:FILE")
      ->capture_default_str();
  cmd->add_option("--output-len", o->output_len, "output lengths, same forms")->capture_default_str();
  cmd->add_option("--trace-file", o->trace_file, "trace: CSV with arrival_s, input_tokens, output_tokens");
  cmd->add_option("--write-requests", o->write_requests, "write the generated requests as a trace CSV");
  cmd->add_option("--scheduler", o->scheduler, "static | continuous | chunked")->capture_default_str();
  cmd->add_option("--max-batch", o->max_batch, "sequences per step")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--max-tokens", o->max_tokens, "tokens per step (default: the model's positions)");
  cmd->add_option("--kv-block", o->kv_block, "KV block size, tokens")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--kv-blocks", o->kv_blocks, "at most this many KV blocks (0: all that fit in HBM)");
  cmd->add_option("--memory-utilization", o->memory_utilization,
                  "share of HBM for weights, activations and the KV cache")
      ->capture_default_str();
  cmd->add_flag("--swap", o->swap, "preempt by swapping KV blocks to host memory (default: recompute)");
  cmd->add_option("--slo-ttft", o->slo_ttft_ms, "SLO on time to first token, ms (0: none)")
      ->check(finite_range(0, 1e9));
  cmd->add_option("--slo-tpot", o->slo_tpot_ms, "SLO on time per output token, ms (0: none)")
      ->check(finite_range(0, 1e9));
  cmd->add_flag("--no-reuse", o->no_reuse, "simulate every step (default: reuse the cost of a step shape seen before)");
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
  cmd->add_option("--seed", o->seed, "seed of the request stream")->capture_default_str();
  add_layer_options(cmd, o->layers);
  cmd->add_option("--set", o->sets, "config override key=value (repeatable)");
  // A later value of an option replaces an earlier one (scripts append their overrides).
  for (CLI::Option* opt : cmd->get_options()) {
    if (opt->get_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  cmd->callback([o, &global, &action] { action = [o, &global] { return run_serve(global, *o); }; });
}

}  // namespace sohusim::tools
