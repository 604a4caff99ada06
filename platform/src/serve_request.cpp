#include "sohusim/platform/serve_request.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "sohusim/driver/command.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/workloads/request_stream.hpp"
#include "sohusim/workloads/serving_scheduler.hpp"

namespace sohusim::platform {

namespace {

nlohmann::json percentiles_ms(const workloads::Percentiles& p) {
  return {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p90", p.p90 * 1e3},
          {"p99", p.p99 * 1e3},   {"max", p.max * 1e3}, {"count", p.count}};
}

// The command line's parser checks these ranges before anything else; a library caller meets
// them here.
void check_range(const char* flag, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream os;
    os << flag << ": " << v << " is not a number in [" << lo << ", " << hi << "]";
    throw std::invalid_argument(os.str());
  }
}

}  // namespace

ServePlan plan_serve(const ServeRequest& o, const ConfigChoice& machine) {
  const std::vector<std::string> dirs = machine.config_dirs.empty() ? default_config_dirs() : machine.config_dirs;
  check_range("--rate", o.rate, 0, 1e12);
  check_range("--cv", o.cv, 0, 1e12);
  check_range("--duration", o.duration_s, 0, 1e9);
  check_range("--think", o.think_s, 0, 1e9);
  check_range("--slo-ttft", o.slo_ttft_ms, 0, 1e9);
  check_range("--slo-tpot", o.slo_tpot_ms, 0, 1e9);
  check_range("--max-batch", o.max_batch, 1, 4096);
  check_range("--kv-block", o.kv_block, 1, 4096);
  ServePlan p;
  p.request = o;
  workloads::StreamSpec& stream = p.options.stream;
  workloads::SchedulerOptions& sched = p.options.scheduler;
  p.model = workloads::load_model(o.model, dirs);
  p.spec = SystemSpec::load(machine.system, dirs);
  stream.kind = workloads::parse_stream_kind(o.scenario);
  stream.rate = o.rate;
  stream.cv = o.cv;
  stream.requests = o.requests;
  stream.duration_s = o.duration_s;
  stream.clients = o.clients;
  stream.think_s = o.think_s;
  stream.trace_file = o.trace_file;
  stream.seed = o.seed;
  stream.max_length = p.model.max_positions;
  if (stream.kind != workloads::StreamKind::Trace) {
    stream.input = workloads::parse_length_spec(o.input_len, "--input-len");
    stream.output = workloads::parse_length_spec(o.output_len, "--output-len");
  } else if (o.trace_file.empty()) {
    throw std::invalid_argument("--scenario trace needs --trace-file FILE");
  }
  stream.validate();
  sched.kind = workloads::parse_scheduler_kind(o.scheduler);
  sched.max_batch = o.max_batch;
  sched.max_tokens = o.max_tokens != 0 ? o.max_tokens : p.model.max_positions;
  sched.max_positions = p.model.max_positions;
  sched.swap = o.swap;
  sched.validate();
  if (p.spec.hosts.size() > 1) {
    throw std::invalid_argument("sohusim serve: `" + p.spec.name + "` has " + std::to_string(p.spec.hosts.size()) +
                                " hosts; serving runs on one host's devices (pipeline stages are not served yet)");
  }
  p.dtype = driver::parse_dtype(o.dtype);
  const unsigned per_host = p.spec.hosts.front().devices;
  p.tp = o.tp == 0 ? per_host : o.tp;
  if (p.tp > per_host) {
    throw std::invalid_argument("--tp " + std::to_string(p.tp) + ": the host has " + std::to_string(per_host) +
                                " devices");
  }
  p.spec.check_tensor_parallel(p.tp);
  ServingOptions& sv = p.options;
  sv.device.dtype = p.dtype;
  sv.device.tp = p.tp;
  sv.device.allreduce =
      p.spec.c2c == "mesh" ? workloads::AllReduceAlgorithm::MeshAuto : workloads::AllReduceAlgorithm::Ring;
  sv.device.block_tokens = o.kv_block;
  sv.device.kv_blocks = o.kv_blocks;
  sv.device.memory_utilization = o.memory_utilization;
  sv.device.reuse = !o.no_reuse;
  sv.slo.ttft_s = o.slo_ttft_ms * 1e-3;
  sv.slo.tpot_s = o.slo_tpot_ms * 1e-3;
  return p;
}

ServeOutcome execute_serve(Simulator& sim, const ServePlan& plan) {
  ServeOutcome out;
  const double wall0 = sim.wall_seconds();
  out.result = serve(sim, plan.model, plan.options);
  out.wall_seconds = sim.wall_seconds() - wall0;
  return out;
}

KvOccupancy kv_occupancy(const ServingResult& r) {
  KvOccupancy k;
  const double run_s = r.end_s;
  double prev_t = 0;
  for (const OccupancySample& s : r.occupancy) {
    k.peak_blocks = std::max(k.peak_blocks, s.kv_blocks);
    k.mean_blocks += static_cast<double>(s.kv_blocks) * (s.t_s - prev_t);
    prev_t = s.t_s;
  }
  k.mean_blocks = run_s > 0 ? k.mean_blocks / run_s : 0;
  k.blocks = static_cast<double>(std::max<std::uint64_t>(r.kv.blocks, 1));
  return k;
}

nlohmann::json serve_json(Simulator& sim, const ServePlan& plan, const ServeOutcome& outcome) {
  const ServingResult& r = outcome.result;
  const ServeRequest& o = plan.request;
  const workloads::ServingMetrics& m = r.metrics;
  const workloads::SloTargets& slo = plan.options.slo;
  const workloads::SchedulerOptions& sched = plan.options.scheduler;
  const workloads::KvCacheOptions& kv = r.kv;
  const KvOccupancy occupancy = kv_occupancy(r);
  const double energy_j = r.energy_j, out_tokens = r.output_tokens;

  nlohmann::json j;
  j["ok"] = r.failure.empty();
  j["model"] = plan.model.name;
  j["system"] = plan.spec.name;
  j["tp"] = plan.tp;
  j["dtype"] = driver::dtype_name(plan.dtype);
  j["scenario"] = o.scenario;
  j["scheduler"] = o.scheduler;
  j["max_batch"] = sched.max_batch;
  j["max_tokens"] = sched.max_tokens;
  j["swap"] = o.swap;
  j["configuration"] = sim.configuration().record();
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
  j["kv_peak_blocks"] = occupancy.peak_blocks;
  j["kv_peak_occupancy"] = static_cast<double>(occupancy.peak_blocks) / occupancy.blocks;
  j["kv_mean_occupancy"] = occupancy.mean_blocks / occupancy.blocks;
  nlohmann::json occ = nlohmann::json::array();
  for (const OccupancySample& s : r.occupancy) occ.push_back({s.t_s, s.kv_blocks, s.running, s.waiting});
  j["occupancy"] = {{"columns", {"t_s", "kv_blocks", "running", "waiting"}}, {"rows", occ}};
  j["energy_joules"] = energy_j;
  j["energy_per_output_token_joules"] = out_tokens > 0 ? energy_j / out_tokens : 0;
  j["serve_start_seconds"] = r.start_seconds;
  j["simulated_seconds"] = r.end_s;
  j["wall_seconds"] = outcome.wall_seconds;
  if (!r.failure.empty()) j["failure"] = r.failure;
  return j;
}

}  // namespace sohusim::platform
