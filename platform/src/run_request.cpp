#include "sohusim/platform/run_request.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "sohusim/device/sohu_device.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/graph.hpp"

namespace sohusim::platform {

namespace {

double sum_glob(const counters::Registry& r, const std::string& pattern) {
  double s = 0;
  for (const counters::Stat* st : r.glob(pattern)) s += st->value();
  return s;
}

double hbm_bytes_so_far(const counters::Registry& r) {
  return sum_glob(r, "dev*.hbm.port.bytes_read") + sum_glob(r, "dev*.hbm.port.bytes_written");
}

// The command line's parser checks these ranges before anything else; a library caller meets
// them here.
void check_range(const char* flag, std::uint64_t v, std::uint64_t lo, std::uint64_t hi) {
  if (v < lo || v > hi) {
    throw std::invalid_argument(std::string(flag) + ": " + std::to_string(v) + " is not in [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + "]");
  }
}

}  // namespace

RunPlan plan_run(const RunRequest& request, const ConfigChoice& machine) {
  const std::vector<std::string> dirs = machine.config_dirs.empty() ? default_config_dirs() : machine.config_dirs;
  check_range("--batch", request.batch, 1, 65535);
  check_range("--prompt", request.prompt, 1, 1u << 20);
  check_range("--gen", request.gen, 1, 1u << 20);
  RunPlan p;
  p.request = request;
  p.model = workloads::load_model(request.model, dirs);
  p.spec = SystemSpec::load(machine.system, dirs);
  p.dtype = driver::parse_dtype(request.dtype);
  p.functional = machine.mode == "functional";
  const driver::DType dtype = p.dtype;
  if (p.functional && dtype != driver::DType::Fp32 && dtype != driver::DType::Bf16 && dtype != driver::DType::Fp16) {
    throw std::invalid_argument(
        "--mode functional needs --dtype fp32, bf16 or fp16 (FP8 needs scales the model does not have)");
  }
  if (p.functional && p.spec.hosts.size() > 1) {
    throw std::invalid_argument("--mode functional runs on one host; `" + p.spec.name + "` has " +
                                std::to_string(p.spec.hosts.size()));
  }
  p.per_host = p.spec.hosts.front().devices;
  for (const auto& h : p.spec.hosts) {
    if (h.devices != p.per_host) {
      throw std::invalid_argument("system `" + p.spec.name +
                                  "`: pipeline stages need the same number of devices on every host");
    }
  }
  p.tp = request.tp == 0 ? p.per_host : request.tp;
  if (p.tp > p.per_host) {
    throw std::invalid_argument("--tp " + std::to_string(p.tp) + ": a host has " + std::to_string(p.per_host) +
                                " devices");
  }
  p.spec.check_tensor_parallel(p.tp);
  p.stages = static_cast<unsigned>(p.spec.hosts.size());
  return p;
}

void check_run(Simulator& sim, const RunPlan& plan) {
  const RunRequest& o = plan.request;
  const workloads::ModelConfig& model = plan.model;
  workloads::BuildOptions bo;
  bo.kv_capacity = o.prompt + o.gen;
  if (o.prompt + o.gen > model.max_positions) {
    throw std::invalid_argument("--prompt " + std::to_string(o.prompt) + " + --gen " + std::to_string(o.gen) +
                                " exceed the model's max_position_embeddings " + std::to_string(model.max_positions));
  }
  for (unsigned r = 0; r < plan.tp; ++r) {
    const workloads::Shard s{plan.tp, r};
    workloads::check_weights_fit(model, s, plan.dtype, sim.system().device(r).params().hbm_bytes);
    const workloads::Graph g =
        workloads::build_graph(model, s, workloads::Phase::Prefill, o.batch, o.prompt, o.prompt, bo);
    workloads::plan_memory(model, s, plan.dtype, g, sim.system().device(r).params().hbm_bytes);
  }
}

RunOutcome execute_run(Simulator& sim, const RunPlan& plan) {
  const RunRequest& o = plan.request;
  const SystemSpec& spec = plan.spec;
  const unsigned stages = plan.stages, per_host = plan.per_host;
  RunOutcome out;
  out.results.resize(stages);
  for (unsigned d = 0; d < sim.system().device_count(); ++d)
    out.energy_before_j.push_back(sim.system().device(d).energy(0).total_j);
  out.macs_before = sum_glob(sim.stats(), "dev*.me*.macs_useful");
  out.hbm_bytes_before = hbm_bytes_so_far(sim.stats());
  std::vector<std::vector<DeviceCapture>> captured(stages);
  const double wall0 = sim.wall_seconds();
  try {
    out.simulated_seconds = sim.run([&](HostContext& host) {
      const unsigned h = host.host_index();
      workloads::ScenarioOptions so;
      so.batch = o.batch;
      so.prompt = o.prompt;
      so.gen = o.gen;
      so.dtype = plan.dtype;
      so.tp = plan.tp;
      so.upload_weights = o.upload_weights;
      so.functional = plan.functional;
      so.seed = o.seed;
      so.decode_only = o.decode_only;
      // One- and two-shot all-reduces need a port between every pair of ranks; a ring does with less.
      so.allreduce = spec.c2c == "mesh" ? workloads::AllReduceAlgorithm::MeshAuto : workloads::AllReduceAlgorithm::Ring;
      if (h == 0) so.progress = o.progress;
      // Capture: the trace unit and clock sync of every device, drained and sampled between
      // steps (what a profiler's collector does on the host; it costs the host MMIO time).
      std::unique_ptr<CaptureSession> capture;
      if (o.capture) {
        CaptureOptions co;
        if (stages > 1) {
          // Every host captures: host 0 pings the others at each burst, so that their devices'
          // commands can be drawn on host 0's clock.
          for (unsigned x = 0; x < stages; ++x) co.hosts.push_back(x);
        }
        capture = std::make_unique<CaptureSession>(host, sim.system(), co);
        capture->start();
        so.progress = [capture = capture.get(), shown = so.progress](const std::string& phase, unsigned step,
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
      out.results[h] = workloads::run_scenario(host.runtime(), plan.model, so, c2c, st);
      if (capture) {
        capture->stop();
        captured[h] = capture->devices();
        if (h == 0) out.host_alignment = capture->host_alignment();
      }
    });
  } catch (const SimulationError& e) {
    out.failure = e.what();
  }
  out.wall_seconds = sim.wall_seconds() - wall0;
  for (auto& c : captured) out.captures.insert(out.captures.end(), c.begin(), c.end());
  out.aligned = draw_aligned_view(sim, out.captures, &out.host_alignment);
  return out;
}

RunFigures run_figures(Simulator& sim, const RunPlan& plan, const RunOutcome& outcome) {
  // Whole-system figures over the request (load excluded where it can be).
  RunFigures f;
  counters::Registry& reg = sim.stats();
  System& sys = sim.system();
  f.devices = sys.device_count();
  double peak_flops = 0, peak_hbm = 0;
  const double busy_s = outcome.simulated_seconds;
  for (unsigned d = 0; d < f.devices; ++d) {
    const device::SohuDevice& dev = sys.device(d);
    f.energy_j += dev.energy(busy_s).total_j - outcome.energy_before_j.at(d);
    peak_flops +=
        device::peak_flops(dev.params().matrix, static_cast<device::DataType>(static_cast<unsigned>(plan.dtype)));
    peak_hbm += dev.params().hbm_peak_bytes_per_s;
  }
  const double macs = sum_glob(reg, "dev*.me*.macs_useful") - outcome.macs_before;
  f.hbm_bytes = hbm_bytes_so_far(reg) - outcome.hbm_bytes_before;
  f.compute_utilization = busy_s > 0 ? 2.0 * macs / busy_s / peak_flops : 0;
  f.hbm_utilization = busy_s > 0 ? f.hbm_bytes / busy_s / peak_hbm : 0;
  for (const auto& x : outcome.results) f.hbm_used_bytes = std::max(f.hbm_used_bytes, x.hbm_used_bytes);
  const double out_tokens = static_cast<double>(plan.request.batch) * plan.request.gen;
  f.output_tokens_per_joule = f.energy_j > 0 ? out_tokens / f.energy_j : 0;
  return f;
}

nlohmann::json run_json(Simulator& sim, const RunPlan& plan, const RunOutcome& outcome) {
  const RunRequest& o = plan.request;
  if (!outcome.failure.empty()) {
    // What a script reading the result needs to tell a failed run from a finished one.
    return {{"ok", false},
            {"failure", outcome.failure},
            {"model", plan.model.name},
            {"system", plan.spec.name},
            {"configuration", sim.configuration().record()}};
  }
  const workloads::ScenarioResult& r = outcome.results.front();
  const RunFigures f = run_figures(sim, plan, outcome);
  const double sim_seconds = outcome.simulated_seconds;
  nlohmann::json j;
  j["ok"] = true;
  j["model"] = plan.model.name;
  j["system"] = plan.spec.name;
  j["devices"] = f.devices;
  j["hosts"] = plan.stages;
  j["tp"] = plan.tp;
  j["pipeline_stages"] = plan.stages;
  j["dtype"] = driver::dtype_name(plan.dtype);
  j["mode"] = plan.functional ? "functional" : "timing";
  j["configuration"] = sim.configuration().record();
  j["batch"] = o.batch;
  j["prompt"] = o.prompt;
  j["gen"] = o.gen;
  // A decode-only run processes no prompt: no TTFT (null), and its tokens are output tokens only.
  j["decode_only"] = o.decode_only;
  j["ttft_ms"] = o.decode_only ? nlohmann::json(nullptr) : nlohmann::json(r.ttft_seconds * 1e3);
  j["tpot_ms"] = r.tpot_seconds * 1e3;
  j["e2e_ms"] = r.e2e_seconds * 1e3;
  j["load_seconds"] = r.load_seconds;
  j["tokens_per_second"] = o.decode_only ? r.output_tokens_per_second : r.tokens_per_second;
  j["tokens_per_second_counts"] = o.decode_only ? "output tokens over the end-to-end time (decode-only: no prompt)"
                                                : "input + output tokens over the end-to-end time";
  j["output_tokens_per_second"] = r.output_tokens_per_second;
  j["simulated_seconds"] = sim_seconds;
  j["wall_seconds"] = outcome.wall_seconds;
  j["hbm_used_bytes"] = f.hbm_used_bytes;
  j["weight_bytes_per_device"] = r.weight_bytes;
  j["kv_cache_bytes_per_device"] = r.kv_bytes;
  j["activation_bytes_per_device"] = r.activation_bytes;
  j["compute_utilization"] = f.compute_utilization;
  j["hbm_bandwidth_utilization"] = f.hbm_utilization;
  j["hbm_bytes"] = f.hbm_bytes;
  j["energy_joules"] = f.energy_j;
  j["average_watts"] = sim_seconds > 0 ? f.energy_j / sim_seconds : 0;
  j["output_tokens_per_joule"] = f.output_tokens_per_joule;
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
  if (plan.functional) j["tokens"] = r.tokens;
  if (o.capture) {
    nlohmann::json c;
    std::uint64_t drops = 0;
    nlohmann::json drift = nlohmann::json::object();
    for (const DeviceCapture& d : outcome.captures) {
      drops += d.drops;
      drift["dev" + std::to_string(d.device)] = d.fit.drift_ppm();
    }
    c["devices"] = outcome.captures.size();
    c["commands"] = outcome.aligned.commands;
    c["drops"] = drops;
    c["max_abs_error_ns"] = outcome.aligned.max_abs_error_ns;
    c["mean_abs_error_ns"] = outcome.aligned.mean_abs_error_ns;
    c["fitted_drift_ppm"] = drift;
    nlohmann::json hosts = nlohmann::json::object();  // each other host's clock against host 0's
    for (const auto& [h, fit] : outcome.host_alignment.fits)
      hosts["host" + std::to_string(h)] = {{"drift_ppm", fit.drift_ppm()},
                                           {"offset_ns", fit.offset_ns(fit.last_local_ns)}};
    c["host_clocks"] = hosts;
    j["capture"] = c;
  }
  return j;
}

}  // namespace sohusim::platform
