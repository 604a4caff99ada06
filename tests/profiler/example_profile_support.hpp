#pragma once
// A hand-built RunProfile and Analysis of a small made-up run (devices running layers of
// gemms, attention, norms and all-reduces after a weight upload), for the report and export
// tests and for tests/tools/report_example.cpp, which renders it for the render test. The
// Analysis is analyze()'s, with two findings set by hand so that the findings list always
// has entries to render.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::profiler::test {

inline constexpr double kComputePeak = 1e15, kVectorPeak = 2e13, kHbmPeak = 3e12, kSramPeak = 2e13,
                        kPcieH2dPeak = 6.4e10, kPcieD2hPeak = 6.4e10, kLinkPeak = 4e11;

struct ExampleRun {
  RunProfile profile;
  Analysis analysis;
};

inline double& work(OpRecord& op, Resource r) {
  return op.work[static_cast<unsigned>(r)];
}

/// `devices` devices each uploading weights then running `layers` layers (layer 0 and 1
/// prefill-like and compute-heavy, the rest decode), one launch per layer; 10 us windows
/// (or longer for long runs) with rates and engine buckets; commands, a host, facts, findings.
inline ExampleRun example_run(int layers = 4, int devices = 2) {
  ExampleRun run;
  RunProfile& p = run.profile;
  p.summary_text["model"] = "llama-3-70b (made up)";
  p.summary_text["system"] = "sohu-2";
  p.summary["batch"] = 64;
  p.summary["tpot_ms"] = 8.27;
  for (int d = 0; d < devices; ++d) {
    std::string dev = "dev" + std::to_string(d);
    p.units.push_back({dev, Resource::Compute, kComputePeak});
    p.units.push_back({dev, Resource::Vector, kVectorPeak});
    p.units.push_back({dev, Resource::Hbm, kHbmPeak});
    p.units.push_back({dev, Resource::Sram, kSramPeak});
    p.units.push_back({dev, Resource::PcieH2d, kPcieH2dPeak});
    p.units.push_back({dev, Resource::PcieD2h, kPcieD2hPeak});
    p.units.push_back({dev, Resource::Link, kLinkPeak});
  }
  p.units.push_back({"host0", Resource::Host, 1.0});

  struct Spec {
    const char* name;
    const char* kind;
    double dur_ns;
    std::vector<std::pair<Resource, double>> work;
  };
  auto layer_specs = [](int layer) {
    bool big = layer < 2;
    double m = big ? 2048 : 64;
    std::vector<Spec> s;
    s.push_back({"attn_norm", "norm", 3000, {{Resource::Vector, 1e6}, {Resource::Hbm, 2e6}}});
    s.push_back({"attn.qkv_proj",
                 "gemm",
                 big ? 350000.0 : 66000.0,
                 {{Resource::Compute, 2 * m * 8192 * 10240}, {Resource::Hbm, 1.68e8}, {Resource::Sram, 6e8}}});
    s.push_back({"attn.core", "attention", 150000, {{Resource::Compute, 5e8}, {Resource::Hbm, 4e8}}});
    s.push_back({"attn.o_proj",
                 "gemm",
                 big ? 280000.0 : 55000.0,
                 {{Resource::Compute, 2 * m * 8192 * 8192}, {Resource::Hbm, 1.34e8}, {Resource::Sram, 5e8}}});
    s.push_back({"attn.all_reduce", "all_reduce", 2500, {{Resource::Link, 1e6}}});
    s.push_back({"mlp.up_proj",
                 "gemm",
                 big ? 2200000.0 : 360000.0,
                 {{Resource::Compute, 2 * m * 8192 * 28672 * 2}, {Resource::Hbm, 9.4e8}, {Resource::Sram, 2e9}}});
    s.push_back({"mlp.down_proj",
                 "gemm",
                 big ? 1100000.0 : 180000.0,
                 {{Resource::Compute, 2 * m * 28672 * 8192}, {Resource::Hbm, 4.7e8}, {Resource::Sram, 1e9}}});
    s.push_back({"mlp.all_reduce", "all_reduce", 9000, {{Resource::Link, 1e6}}});
    return s;
  };

  double end = 0;
  for (int d = 0; d < devices; ++d) {
    std::string dev = "dev" + std::to_string(d);
    double t = 1000 + 500.0 * d;
    auto add = [&](const std::string& name, const std::string& kind, const std::string& phase, int layer,
                   std::uint64_t launch, double dur_ns, const std::vector<std::pair<Resource, double>>& w,
                   std::vector<std::uint32_t> deps) {
      OpRecord op;
      op.id = static_cast<std::uint32_t>(p.ops.size());
      op.name = name;
      op.kind = kind;
      op.phase = phase;
      op.place = dev;
      op.layer = layer;
      op.launch = launch;
      op.start_ns = t;
      op.duration_ns = dur_ns;
      for (const auto& [r, v] : w) work(op, r) = v;
      if (kind == "gemm") op.padded_flops = work(op, Resource::Compute) * 0.04;
      op.deps = std::move(deps);
      p.ops.push_back(op);
      t += dur_ns;
      return op.id;
    };
    std::uint32_t prev =
        add("load.weights", "upload", "load", -1, 0, 1100000, {{Resource::PcieH2d, 6.4e7}, {Resource::Hbm, 6.4e7}}, {});
    for (int l = 0; l < layers; ++l) {
      t += l == 0 ? 4000 : 2500;  // launch gap
      std::string phase = l < 2 ? "prefill" : "decode";
      std::uint32_t qkv = 0;
      int k = 0;
      for (const Spec& s : layer_specs(l)) {
        std::string name = phase + ".L" + std::to_string(l) + "." + s.name;
        std::vector<std::uint32_t> deps{prev};
        if (std::string(s.name) == "attn.o_proj") deps.push_back(qkv);
        std::uint32_t id = add(name, s.kind, phase, l, static_cast<std::uint64_t>(l + 1), s.dur_ns, s.work, deps);
        if (k == 1) qkv = id;
        prev = id;
        t += (k % 3 == 2) ? 1500 : 200;  // bubbles
        ++k;
      }
    }
    end = std::max(end, t);
  }
  p.start_ns = 0;
  p.end_ns = end + 5000;

  // Windows of 10 us (or 1/300 of the run): each op's work spread evenly over its duration.
  const double win = std::max(10000.0, (p.end_ns - p.start_ns) / 300);
  for (int d = 0; d < devices; ++d) {
    std::string dev = "dev" + std::to_string(d);
    for (double w0 = p.start_ns; w0 < p.end_ns; w0 += win) {
      Window w;
      w.place = dev;
      w.start_ns = w0;
      w.end_ns = std::min(w0 + win, p.end_ns);
      double dt = w.end_ns - w.start_ns;
      double busy_ns = 0, hbm_bound_ns = 0;
      for (const OpRecord& op : p.ops) {
        if (op.place != dev) continue;
        double o = std::min(op.end_ns(), w.end_ns) - std::max(op.start_ns, w.start_ns);
        if (o <= 0) continue;
        busy_ns += o;
        for (unsigned r = 0; r < kResources; ++r) w.rate[r] += op.work[r] * (o / op.duration_ns) / (dt * 1e-9);
        if (op.work[static_cast<unsigned>(Resource::Hbm)] / (op.duration_ns * 1e-9) > 0.4 * kHbmPeak) hbm_bound_ns += o;
      }
      double cycles = 8 * 1.5 * dt;  // 8 engines at 1.5 GHz
      double useful = std::min(1.0, w.rate[0] / kComputePeak) * cycles;
      w.stalls.busy_useful = useful;
      w.stalls.busy_padding = useful * 0.04;
      double rest = cycles - useful * 1.04;
      w.stalls.wait_hbm = rest * (hbm_bound_ns / dt) * 0.7;
      w.stalls.wait_sram = rest * 0.05;
      w.stalls.wait_dependency = rest * (busy_ns / dt) * 0.1;
      w.stalls.idle = cycles - w.stalls.busy_useful - w.stalls.busy_padding - w.stalls.wait_hbm - w.stalls.wait_sram -
                      w.stalls.wait_dependency;
      p.windows.push_back(w);
    }
  }
  for (int d = 0; d < devices; ++d) {
    std::string dev = "dev" + std::to_string(d);
    p.commands.push_back({dev, "submit_to_start", 120.0 * layers, 850, 800, 1200, 2400, 3100});
    p.commands.push_back({dev, "start_to_complete", 120.0 * layers, 41000, 9000, 180000, 1100000, 1100000});
    p.commands.push_back({dev, "GEMM", 40.0 * layers, 160000, 66000, 350000, 1100000, 1100000});
    // A kind of command with its work: 60 % of compute peak and 10 % of HBM over its commands' time.
    CommandStat gemv{dev, "GEMM 8192x8192x8192 bf16", 4.0 * layers, 20000, 20000, 21000, 22000, 22000};
    const double secs = gemv.count * gemv.mean * 1e-9;
    gemv.work[static_cast<unsigned>(Resource::Compute)] = 0.6 * kComputePeak * secs;
    gemv.work[static_cast<unsigned>(Resource::Hbm)] = 0.1 * kHbmPeak * secs;
    p.commands.push_back(gemv);
    p.facts[dev] = {{"pcie_mps_bytes", 256}, {"pcie_h2d_avg_payload_bytes", 64}, {"hbm_row_hit_rate", 0.42}};
  }
  p.hosts.push_back({"host0", 0.31 * (p.end_ns - p.start_ns), static_cast<double>(layers), 10.0 * layers,
                     0.6 * (p.end_ns - p.start_ns)});

  Analysis& a = run.analysis;
  a = analyze(p);
  Finding f1;
  f1.detector = "pcie_small_payload";
  f1.place = "dev0";
  f1.start_ns = 1000;
  f1.end_ns = 1101000;
  f1.cost_ns = 550000;
  f1.message = "PCIe host-to-device payloads average 64 B, a quarter of the 256 B maximum payload size";
  f1.numbers = {{"avg_payload_bytes", 64}, {"mps_bytes", 256}};
  Finding f2;
  f2.detector = "launch_gap";
  f2.place = "dev0";
  f2.start_ns = 1101000;
  f2.end_ns = 1105000;
  f2.cost_ns = 4000;
  f2.message = "4.00 us between launches 0 and 1 on the critical path";
  f2.numbers = {{"gap_ns", 4000}};
  a.findings = {f1, f2};
  return run;
}

}  // namespace sohusim::profiler::test
