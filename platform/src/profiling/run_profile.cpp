#include "sohusim/platform/profiling/run_profile.hpp"

#include <algorithm>
#include <cmath>

#include "sohusim/counters/distribution.hpp"
#include "sohusim/device/compute/matrix_engine_params.hpp"
#include "sohusim/device/sohu_device.hpp"
#include "sohusim/memory/sram.hpp"
#include "sohusim/pcie/link_params.hpp"
#include "sohusim/platform/profiling/command_profile.hpp"
#include "sohusim/platform/profiling/profile_sampler.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/sim/sim_time.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::platform {

namespace {

using profiler::Resource;

unsigned ix(Resource r) {
  return static_cast<unsigned>(r);
}

double stat(const counters::Registry& r, const std::string& name, double fallback = 0) {
  const counters::Stat* s = r.find(name);
  return s == nullptr ? fallback : s->value();
}

bool on_matrix_engines(workloads::OpKind k) {
  return k == workloads::OpKind::Gemm || k == workloads::OpKind::LmHead || k == workloads::OpKind::Attention;
}

// Device time (ns) back to the reference time with the clock's known offset and drift.
double reference_ns(const device::TimestampParams& c, double device_ns) {
  return (device_ns - c.offset_ns) / (1.0 + c.drift_ppm * 1e-6);
}

}  // namespace

profiler::RunProfile build_run_profile(Simulator& sim, const std::vector<workloads::ScenarioResult>& results,
                                       driver::DType dtype) {
  System& sys = sim.system();
  const counters::Registry& reg = sim.stats();
  sys.sync_stats();
  profiler::RunProfile p;
  p.start_ns = 0;
  p.end_ns = sim.simulated_seconds() * 1e9;
  const nlohmann::json record = sim.configuration().record();
  for (const auto& [k, v] : record.items()) p.configuration[k] = v.is_string() ? v.get<std::string>() : v.dump();
  const unsigned per_host = sys.spec().hosts.front().devices;
  const auto mdtype = static_cast<device::DataType>(static_cast<unsigned>(dtype));
  const double eb = workloads::element_bytes(dtype);

  std::vector<double> ports(sys.device_count(), 0);
  for (unsigned d = 0; d < sys.device_count(); ++d) {
    const std::string dev = "dev" + std::to_string(d);
    const unsigned h = d / per_host;
    const device::DeviceParams& dp = sys.device(d).params();
    const config::Config& cfg = sys.host_config(h);
    const memory::SramParams sram = memory::SramParams::from_config(cfg);
    const pcie::LinkParams link = pcie::LinkParams::from_config(cfg);
    ports[d] = static_cast<double>(reg.glob(dev + ".c2c.to*.tx.bytes").size());
    p.units.push_back({dev, Resource::Compute, device::peak_flops(dp.matrix, mdtype)});
    // A lane retires one FMA (2 FLOP) per cycle (vector_cost.hpp counts an fma as 2 FLOP).
    p.units.push_back({dev, Resource::Vector, 2.0 * dp.vector.engines * dp.vector.lanes * dp.vector.clock_hz});
    p.units.push_back({dev, Resource::Hbm, dp.hbm_peak_bytes_per_s});
    p.units.push_back(
        {dev, Resource::Sram, static_cast<double>(sram.banks) * sram.ports * sram.access_width * sram.clock_hz});
    p.units.push_back({dev, Resource::PcieH2d, link.raw_bytes_per_s()});
    p.units.push_back({dev, Resource::PcieD2h, link.raw_bytes_per_s()});
    if (ports[d] > 0) p.units.push_back({dev, Resource::Link, dp.c2c.bytes_per_s * ports[d]});

    // Facts the detectors read.
    const std::string pl = "host" + std::to_string(h) + ".pcie.dev" + std::to_string(d % per_host);
    auto& f = p.facts[dev];
    f["pcie_mps_bytes"] = link.mps;
    for (const auto& [dir, key] : {std::pair<const char*, const char*>{"down", "pcie_h2d_avg_payload_bytes"},
                                   {"up", "pcie_d2h_avg_payload_bytes"}}) {
      const double tlps = stat(reg, pl + "." + dir + ".tlps_mwr") + stat(reg, pl + "." + dir + ".tlps_cpl");
      const double bytes = stat(reg, pl + "." + dir + ".payload_bytes");
      if (tlps > 0 && bytes > 0) f[key] = bytes / tlps;
    }
    if (const counters::Stat* hit = reg.find(dev + ".hbm.row_hit_rate"); hit != nullptr && std::isfinite(hit->value()))
      f["hbm_row_hit_rate"] = hit->value();
    f["sram_bank_conflicts"] = stat(reg, dev + ".sram.bank_conflicts");
    f["sram_accesses"] = stat(reg, dev + ".sram.line_accesses");

    for (const char* name : {"submit_to_start", "start_to_complete"}) {
      const auto* dist = dynamic_cast<const counters::Distribution*>(reg.find(dev + ".cp." + name));
      if (dist == nullptr || dist->count() == 0) continue;
      p.commands.push_back({dev, name, static_cast<double>(dist->count()), dist->mean(), dist->percentile(0.5),
                            dist->percentile(0.9), dist->percentile(0.99), dist->max()});
    }
  }
  for (unsigned h = 0; h < sys.host_count(); ++h) {
    const std::string host = "host" + std::to_string(h);
    p.units.push_back({host, Resource::Host, 1.0});
    if (sys.host_count() > 1) p.units.push_back({host, Resource::Network, sys.spec().network_bandwidth});
    profiler::HostActivity a;
    a.place = host;
    a.busy_ns = static_cast<double>(sys.access(h).cpu_busy_ns());
    a.api_calls = stat(reg, host + ".runtime.api_calls");
    a.commands = stat(reg, host + ".runtime.commands_submitted");
    a.wait_ns = std::max(0.0, p.end_ns - p.start_ns - a.busy_ns);
    p.hosts.push_back(a);
  }

  // Ops: the profiled steps of each host's rank-0 device, then the weight uploads.
  for (std::size_t h = 0; h < results.size(); ++h) {
    const workloads::ScenarioResult& r = results[h];
    const unsigned d = static_cast<unsigned>(h) * per_host;
    const std::string dev = "dev" + std::to_string(d);
    const device::TimestampParams& clock = sys.device(d).params().timestamp;
    const std::uint64_t steps = r.step_seconds.size();
    const std::uint64_t launches = static_cast<std::uint64_t>(h) << 32;
    for (const auto& [phase, bd, launch] :
         {std::tuple<const char*, const workloads::Breakdown*, std::uint64_t>{"prefill", &r.prefill, 1},
          {"decode", &r.decode, steps}}) {
      const auto base = static_cast<std::uint32_t>(p.ops.size());
      for (const workloads::OpTime& t : bd->ops) {
        profiler::OpRecord op;
        op.id = static_cast<std::uint32_t>(p.ops.size());
        op.name = std::string(phase) + "." + t.name;
        op.kind = workloads::to_string(t.kind);
        op.phase = phase;
        op.place = dev;
        op.layer = t.layer;
        op.launch = launches + launch;
        const double start = static_cast<double>(t.start_device_ns);
        op.start_ns = reference_ns(clock, start);
        op.duration_ns = reference_ns(clock, start + t.seconds * 1e9) - op.start_ns;
        const double flops = static_cast<double>(t.cost.flops);
        op.work[ix(on_matrix_engines(t.kind) ? Resource::Compute : Resource::Vector)] = flops;
        op.work[ix(Resource::Hbm)] =
            static_cast<double>(t.cost.weight_elems + t.cost.act_elems + t.cost.kv_read_elems + t.cost.kv_write_elems) *
            eb;
        if (t.cost.comm_elems > 0 && ports[d] > 0)
          op.work[ix(Resource::Link)] = static_cast<double>(t.cost.comm_elems) * eb * ports[d];
        for (std::size_t dep : t.deps) op.deps.push_back(base + static_cast<std::uint32_t>(dep));
        // The engines' buckets and the SRAM's bytes between the op's two stamps (counters
        // read as each ran): the graph does not know how the sequencer moves data on chip.
        if (const ProfileSampler* sampler = sim.profile_sampler()) {
          sampler->stalls_between(d, t.start_device_ns, t.end_device_ns, op.stalls);
          double sram = 0;
          if (sampler->sram_bytes_between(d, t.start_device_ns, t.end_device_ns, sram))
            op.work[ix(Resource::Sram)] = sram;
        }
        p.ops.push_back(std::move(op));
      }
    }
    // The steps without a per-op breakdown: one op each, as the host timed it (launch,
    // device work, logits copy back and sampling), with the step graph's work.
    for (std::size_t i = 0; i < steps && i < r.step_totals.size(); ++i) {
      if (i < r.step_profiled.size() && r.step_profiled[i]) continue;
      const workloads::GraphTotals& g = r.step_totals[i];
      profiler::OpRecord op;
      op.id = static_cast<std::uint32_t>(p.ops.size());
      const bool prefill = i == 0 && !r.prefill.ops.empty();
      op.phase = prefill ? "prefill" : "decode";
      op.name = op.phase + ".step" + std::to_string(i);
      op.kind = "step";
      op.place = dev;
      op.launch = launches + i + 1;
      op.start_ns = r.step_start_seconds[i] * 1e9;
      op.duration_ns = r.step_seconds[i] * 1e9;
      for (const auto& [kind, c] : g.per_kind)
        op.work[ix(on_matrix_engines(kind) ? Resource::Compute : Resource::Vector)] += static_cast<double>(c.flops);
      op.work[ix(Resource::Hbm)] =
          static_cast<double>(g.weight_elems + g.act_elems + g.kv_read_elems + g.kv_write_elems) * eb;
      if (g.comm_elems > 0 && ports[d] > 0)
        op.work[ix(Resource::Link)] = static_cast<double>(g.comm_elems) * eb * ports[d];
      p.ops.push_back(std::move(op));
    }
  }
  for (std::size_t h = 0; h < results.size(); ++h) {
    const workloads::ScenarioResult& r = results[h];
    if (r.load_seconds <= 0 || r.weight_upload_bytes == 0) continue;
    for (unsigned i = 0; i < r.tp; ++i) {
      profiler::OpRecord op;
      op.id = static_cast<std::uint32_t>(p.ops.size());
      op.place = "dev" + std::to_string(static_cast<unsigned>(h) * per_host + i);
      op.name = "load.weight_upload." + op.place;
      op.kind = "upload";
      op.phase = "load";
      op.launch = static_cast<std::uint64_t>(h) << 32;
      op.start_ns = r.load_start_seconds * 1e9;
      op.duration_ns = r.load_seconds * 1e9;
      op.work[ix(Resource::PcieH2d)] = static_cast<double>(r.weight_upload_bytes);
      op.work[ix(Resource::Hbm)] = static_cast<double>(r.weight_upload_bytes);
      p.ops.push_back(std::move(op));
    }
  }
  if (const ProfileSampler* s = sim.profile_sampler(); s != nullptr) p.windows = s->windows();
  if (const CommandProfile* c = sim.command_profile(); c != nullptr) {
    for (profiler::CommandStat& row : c->rows()) p.commands.push_back(std::move(row));
  }
  p.validate();
  return p;
}

}  // namespace sohusim::platform
