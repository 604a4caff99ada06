// `sohusim run`: a transformer request on a simulated system, end to end — the runtime and
// driver on each host, PCIe, the devices, chip-to-chip links and the host network — and its
// metrics (TTFT, TPOT, tokens/s both ways, utilization, HBM used, energy).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "report_outputs.hpp"
#include "sohusim/platform/profiling/capture_session.hpp"
#include "sohusim/platform/profiling/run_profile.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::tools {

namespace {

struct RunOptions {
  // The built-in default: Llama-3-8B, one request of 128 in / 16 out on one chip (seconds).
  std::string model = "llama-3-8b";
  std::string system = "sohu-1";
  unsigned batch = 1, prompt = 128, gen = 16, tp = 0;
  std::string dtype = "fp8";
  std::string fidelity, mode;
  std::string trace, trace_detail, stats, profile, report;
  std::uint64_t profile_interval_ns = 200'000;
  std::vector<std::string> samples;
  std::uint64_t sample_interval_ns = 10'000;
  bool json = false, upload = false, decode_only = false, capture = false;
  std::uint64_t seed = 1;
  std::vector<std::string> sets;
  platform::ConfigChoice layers;  // --arch, --hbm, --config
};

double sum_glob(counters::Registry& r, const std::string& pattern) {
  double s = 0;
  for (const counters::Stat* st : r.glob(pattern)) s += st->value();
  return s;
}

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

int run_run(const GlobalOptions& global, const RunOptions& o) {
  const std::vector<std::string> dirs = preset_dir_strings(global);
  check_distinct_outputs(
      {{"--trace", o.trace}, {"--stats", o.stats}, {"--profile", o.profile}, {"--report", o.report}});

  workloads::ModelConfig model;
  platform::SystemSpec spec;
  try {
    model = workloads::load_model(o.model, dirs);
    spec = platform::SystemSpec::load(o.system, dirs);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const driver::DType dtype = parse_dtype(o.dtype);
  const bool functional = o.mode == "functional";
  if (functional && dtype != driver::DType::Fp32 && dtype != driver::DType::Bf16 && dtype != driver::DType::Fp16)
    throw UsageError("--mode functional needs --dtype fp32, bf16 or fp16 (FP8 needs scales the model does not have)");
  if (functional && spec.hosts.size() > 1)
    throw UsageError("--mode functional runs on one host; `" + spec.name + "` has " +
                     std::to_string(spec.hosts.size()));
  const unsigned per_host = spec.hosts.front().devices;
  for (const auto& h : spec.hosts) {
    if (h.devices != per_host)
      throw UsageError("system `" + spec.name + "`: pipeline stages need the same number of devices on every host");
  }
  const unsigned tp = o.tp == 0 ? per_host : o.tp;
  if (tp > per_host)
    throw UsageError("--tp " + std::to_string(tp) + ": a host has " + std::to_string(per_host) + " devices");

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
  const bool profiling = !o.profile.empty() || !o.report.empty();
  so.sample_patterns = o.samples;
  so.sample_interval_ns = o.sample_interval_ns;
  if (!o.samples.empty() && o.trace.empty())
    throw UsageError("--sample: the samples go into the trace; give --trace FILE");
  if (profiling) so.profile_interval_ns = o.profile_interval_ns;
  const std::unique_ptr<platform::Simulator> sim = make_simulator(so);
  // What can be checked before simulating: the shard and the memory plan of every rank.
  try {
    workloads::BuildOptions bo;
    bo.kv_capacity = o.prompt + o.gen;
    if (o.prompt + o.gen > model.max_positions) {
      throw std::invalid_argument("--prompt " + std::to_string(o.prompt) + " + --gen " + std::to_string(o.gen) +
                                  " exceed the model's max_position_embeddings " + std::to_string(model.max_positions));
    }
    for (unsigned r = 0; r < tp; ++r) {
      const workloads::Shard s{tp, r};
      workloads::check_weights_fit(model, s, dtype, sim->system().device(r).params().hbm_bytes);
      const workloads::Graph g =
          workloads::build_graph(model, s, workloads::Phase::Prefill, o.batch, o.prompt, o.prompt, bo);
      workloads::plan_memory(model, s, dtype, g, sim->system().device(r).params().hbm_bytes);
    }
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

  const bool progress = isatty(STDERR_FILENO) != 0 && !o.json;
  std::vector<workloads::ScenarioResult> results(spec.hosts.size());
  std::vector<std::vector<platform::DeviceCapture>> captured(spec.hosts.size());
  platform::HostAlignment host_alignment;  // the other hosts' clocks against host 0's (--capture)
  const unsigned stages = static_cast<unsigned>(spec.hosts.size());
  std::string failure;
  double sim_seconds = 0;
  try {
    sim_seconds = sim->run([&](platform::HostContext& host) {
      const unsigned h = host.host_index();
      workloads::ScenarioOptions so2;
      so2.batch = o.batch;
      so2.prompt = o.prompt;
      so2.gen = o.gen;
      so2.dtype = dtype;
      so2.tp = tp;
      so2.upload_weights = o.upload;
      so2.functional = functional;
      so2.seed = o.seed;
      so2.decode_only = o.decode_only;
      // One- and two-shot all-reduces need a port between every pair of ranks; a ring does with less.
      so2.allreduce =
          spec.c2c == "mesh" ? workloads::AllReduceAlgorithm::MeshAuto : workloads::AllReduceAlgorithm::Ring;
      if (progress && h == 0) {
        so2.progress = [](const std::string& phase, unsigned step, unsigned steps) {
          std::fprintf(stderr, "\r%s: step %u of %u ", phase.c_str(), step, steps);
          if (step == steps) std::fprintf(stderr, "\n");
        };
      }
      // --capture: the trace unit and clock sync of every device, drained and sampled between
      // steps (what a profiler's collector does on the host; it costs the host MMIO time).
      std::unique_ptr<platform::CaptureSession> capture;
      if (o.capture) {
        platform::CaptureOptions co;
        if (stages > 1) {
          // Every host captures: host 0 pings the others at each burst, so that their devices'
          // commands can be drawn on host 0's clock.
          for (unsigned x = 0; x < stages; ++x) co.hosts.push_back(x);
        }
        capture = std::make_unique<platform::CaptureSession>(host, sim->system(), co);
        capture->start();
        so2.progress = [capture = capture.get(), shown = so2.progress](const std::string& phase, unsigned step,
                                                                       unsigned steps) {
          capture->step();
          if (shown) shown(phase, step, steps);
        };
      }
      std::vector<unsigned> c2c;
      for (unsigned i = 0; i < per_host; ++i) c2c.push_back(h * per_host + i);
      workloads::PipelineStage st;
      st.stage = h;
      st.stages = stages;
      st.send = [&host](unsigned to, std::uint64_t bytes, std::uint32_t tag) { host.net_send(to, bytes, tag); };
      st.recv = [&host](unsigned from, std::uint64_t bytes, std::uint32_t tag) { host.net_recv(from, bytes, tag); };
      results[h] = workloads::run_scenario(host.runtime(), model, so2, c2c, st);
      if (capture) {
        capture->stop();
        captured[h] = capture->devices();
        if (h == 0) host_alignment = capture->host_alignment();
      }
    });
  } catch (const platform::SimulationError& e) {
    failure = e.what();
  }
  std::vector<platform::DeviceCapture> captures;
  for (auto& c : captured) captures.insert(captures.end(), c.begin(), c.end());
  const platform::AlignedViewStats aligned = platform::draw_aligned_view(*sim, captures, &host_alignment);
  // An output that cannot be written (a full disk) fails the command but keeps the others.
  const std::string stats_error = o.stats.empty() ? std::string() : sim->write_stats(o.stats);
  if (!stats_error.empty()) std::cerr << "sohusim run: --stats: " << stats_error << "\n";
  const int done_code = stats_error.empty() ? kOk : kSimulationError;
  sim->close_trace();
  if (!failure.empty()) {
    std::cerr << "sohusim run: " << failure << "\n";
    if (o.json) {
      // What a script reading stdout needs to tell a failed run from a finished one.
      nlohmann::json j = {{"ok", false},
                          {"failure", failure},
                          {"model", model.name},
                          {"system", spec.name},
                          {"configuration", sim->configuration().record()}};
      std::cout << j.dump(2) << "\n";
    }
    if (profiling) {
      // What ran before the failure: the units, the counter windows and whatever steps finished.
      nlohmann::json j;
      j["model"] = model.name;
      j["system"] = spec.name;
      j["failure"] = failure;
      write_profile_outputs(*sim, results, dtype, j, o, captures);
    }
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

  // Whole-system figures over the request (load excluded where it can be).
  const workloads::ScenarioResult& r = results.front();
  counters::Registry& reg = sim->stats();
  platform::System& sys = sim->system();
  const unsigned devices = sys.device_count();
  double energy_j = 0, peak_flops = 0, peak_hbm = 0;
  const double busy_s = sim_seconds;
  for (unsigned d = 0; d < devices; ++d) {
    const device::SohuDevice& dev = sys.device(d);
    energy_j += dev.energy(busy_s).total_j;
    peak_flops += device::peak_flops(dev.params().matrix, static_cast<device::DataType>(static_cast<unsigned>(dtype)));
    peak_hbm += dev.params().hbm_peak_bytes_per_s;
  }
  const double macs = sum_glob(reg, "dev*.me*.macs_useful");
  const double hbm_bytes = sum_glob(reg, "dev*.hbm.port.bytes_read") + sum_glob(reg, "dev*.hbm.port.bytes_written");
  const double compute_util = busy_s > 0 ? 2.0 * macs / busy_s / peak_flops : 0;
  const double hbm_util = busy_s > 0 ? hbm_bytes / busy_s / peak_hbm : 0;
  std::uint64_t hbm_used = 0;
  for (const auto& x : results) hbm_used = std::max(hbm_used, x.hbm_used_bytes);
  const double out_tokens = static_cast<double>(o.batch) * o.gen;
  const double tokens_per_joule = energy_j > 0 ? out_tokens / energy_j : 0;

  {
    nlohmann::json j;
    j["ok"] = true;
    j["model"] = model.name;
    j["system"] = spec.name;
    j["devices"] = devices;
    j["hosts"] = stages;
    j["tp"] = tp;
    j["pipeline_stages"] = stages;
    j["dtype"] = driver::dtype_name(dtype);
    j["mode"] = functional ? "functional" : "timing";
    j["configuration"] = sim->configuration().record();
    j["batch"] = o.batch;
    j["prompt"] = o.prompt;
    j["gen"] = o.gen;
    j["ttft_ms"] = r.ttft_seconds * 1e3;
    j["tpot_ms"] = r.tpot_seconds * 1e3;
    j["e2e_ms"] = r.e2e_seconds * 1e3;
    j["load_seconds"] = r.load_seconds;
    j["tokens_per_second"] = r.tokens_per_second;
    j["tokens_per_second_counts"] = "input + output tokens over the end-to-end time";
    j["output_tokens_per_second"] = r.output_tokens_per_second;
    j["simulated_seconds"] = sim_seconds;
    j["wall_seconds"] = sim->wall_seconds();
    j["hbm_used_bytes"] = hbm_used;
    j["weight_bytes_per_device"] = r.weight_bytes;
    j["kv_cache_bytes_per_device"] = r.kv_bytes;
    j["compute_utilization"] = compute_util;
    j["hbm_bandwidth_utilization"] = hbm_util;
    j["hbm_bytes"] = hbm_bytes;
    j["energy_joules"] = energy_j;
    j["average_watts"] = sim_seconds > 0 ? energy_j / sim_seconds : 0;
    j["output_tokens_per_joule"] = tokens_per_joule;
    j["commands"] = r.commands;
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [k, v] : r.decode.per_kind) kinds[k] = v * 1e3;
    j["decode_ms_per_kind"] = kinds;
    nlohmann::json pk = nlohmann::json::object();
    for (const auto& [k, v] : r.prefill.per_kind) pk[k] = v * 1e3;
    j["prefill_ms_per_kind"] = pk;
    // The first layer's ops and the per-layer times (rank 0), for both phases.
    for (const auto& [label, bd] :
         {std::pair<const char*, const workloads::Breakdown*>{"prefill", &r.prefill}, {"decode", &r.decode}}) {
      nlohmann::json ops = nlohmann::json::array();
      for (const workloads::OpTime& op : bd->ops) {
        if (op.layer <= 0) ops.push_back({{"op", op.name}, {"ms", op.seconds * 1e3}});
      }
      j[std::string(label) + "_layer0_ops"] = ops;
      nlohmann::json layers = nlohmann::json::array();
      for (double v : bd->per_layer) layers.push_back(v * 1e3);
      j[std::string(label) + "_ms_per_layer"] = layers;
    }
    if (functional) j["tokens"] = r.tokens;
    if (o.capture) {
      nlohmann::json c;
      std::uint64_t drops = 0;
      nlohmann::json drift = nlohmann::json::object();
      for (const platform::DeviceCapture& d : captures) {
        drops += d.drops;
        drift["dev" + std::to_string(d.device)] = d.fit.drift_ppm();
      }
      c["devices"] = captures.size();
      c["commands"] = aligned.commands;
      c["drops"] = drops;
      c["max_abs_error_ns"] = aligned.max_abs_error_ns;
      c["mean_abs_error_ns"] = aligned.mean_abs_error_ns;
      c["fitted_drift_ppm"] = drift;
      nlohmann::json hosts = nlohmann::json::object();  // each other host's clock against host 0's
      for (const auto& [h, f] : host_alignment.fits)
        hosts["host" + std::to_string(h)] = {{"drift_ppm", f.drift_ppm()}, {"offset_ns", f.offset_ns(f.last_local_ns)}};
      c["host_clocks"] = hosts;
      j["capture"] = c;
    }
    if (profiling) write_profile_outputs(*sim, results, dtype, j, o, captures);
    if (o.json) {
      std::cout << j.dump(2) << "\n";
      return done_code;
    }
  }
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << model.name << " on " << spec.name << " (" << devices << " device" << (devices > 1 ? "s" : "") << ", tp " << tp
    << ", " << stages << " stage" << (stages > 1 ? "s" : "") << "), " << driver::dtype_name(dtype) << ", "
    << (functional ? "functional" : "timing") << "\n";
  s << "  request      batch " << o.batch << ", prompt " << o.prompt << ", gen " << o.gen << "\n";
  s << "  TTFT         " << r.ttft_seconds * 1e3 << " ms\n";
  s << "  TPOT         " << r.tpot_seconds * 1e3 << " ms\n";
  s << "  end to end   " << r.e2e_seconds * 1e3 << " ms";
  if (o.upload) s << " (+ " << r.load_seconds * 1e3 << " ms weight upload)";
  s << "\n";
  s.precision(1);
  s << "  tokens/s     " << r.tokens_per_second << " (input + output), " << r.output_tokens_per_second
    << " (output only)\n";
  s.precision(3);
  s << "  utilization  compute " << compute_util * 100 << " %, HBM bandwidth " << hbm_util * 100 << " % (over "
    << sim_seconds * 1e3 << " ms simulated)\n";
  s << "  HBM used     " << static_cast<double>(hbm_used) / (1ULL << 30) << " GiB per device (weights "
    << static_cast<double>(r.weight_bytes) / (1ULL << 30) << ", KV cache "
    << static_cast<double>(r.kv_bytes) / (1ULL << 30) << ")\n";
  s << "  energy       " << energy_j << " J, " << (sim_seconds > 0 ? energy_j / sim_seconds : 0) << " W, "
    << tokens_per_joule << " output tokens/J\n";
  if (!r.decode.per_kind.empty()) {
    s << "  decode step by op kind (rank 0):";
    for (const auto& [k, v] : r.decode.per_kind) s << " " << k << " " << v * 1e3 << " ms;";
    s << "\n";
  }
  if (functional) {
    s << "  tokens       ";
    for (std::size_t b = 0; b < r.tokens.size(); ++b) {
      s << (b ? " | " : "");
      for (std::size_t i = 0; i < r.tokens[b].size(); ++i) s << (i ? " " : "") << r.tokens[b][i];
    }
    s << "\n";
  }
  if (o.capture) {
    std::uint64_t drops = 0;
    for (const platform::DeviceCapture& d : captures) drops += d.drops;
    s.precision(1);
    s << "  capture      " << aligned.commands << " commands from " << captures.size() << " device(s), on "
      << (host_alignment.fits.empty() ? "the host clock" : "host 0's clock") << " within " << aligned.max_abs_error_ns
      << " ns (mean " << aligned.mean_abs_error_ns << "), " << drops << " records dropped\n";
    s.precision(3);
  }
  s << "  wall         " << sim->wall_seconds() << " s\n";
  std::cout << s.str();
  return done_code;
}

}  // namespace

void add_run_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = root.add_subcommand("run", "run a transformer request on a simulated system; print TTFT, TPOT, tokens/s");
  cmd->add_option("--model", o->model, "model name (configs/models) or a HuggingFace config.json")
      ->capture_default_str();
  cmd->add_option("--system", o->system, "system name (configs/systems) or a system YAML file")->capture_default_str();
  cmd->add_option("--batch", o->batch, "sequences")->capture_default_str()->check(CLI::Range(1u, 65535u));
  cmd->add_option("--prompt", o->prompt, "input tokens per sequence")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--gen", o->gen, "output tokens per sequence")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--dtype", o->dtype, "fp8 | fp8_e5m2 | bf16 | fp16 | fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp8", "fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp32"}));
  cmd->add_option("--tp", o->tp, "tensor-parallel degree (default: every device of a host)");
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
  cmd->add_flag("--capture", o->capture,
                "capture each device's trace unit and clock through the driver; its commands, aligned to the "
                "host clock, go into the trace (`devN captured`) and their per-opcode latencies into the profile");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_flag("--upload-weights", o->upload, "simulate the weight upload over PCIe and report it");
  cmd->add_flag("--decode-only", o->decode_only,
                "steady-state decode study: no prefill, the KV cache holds --prompt positions already");
  cmd->add_option("--seed", o->seed, "seed of the functional mode's weights and prompts")->capture_default_str();
  add_layer_options(cmd, o->layers);
  cmd->add_option("--set", o->sets, "config override key=value (repeatable)");
  cmd->callback([o, &global, &action] { action = [o, &global] { return run_run(global, *o); }; });
}

}  // namespace sohusim::tools
