#pragma once
// A hand-built RunProfile and Analysis of a small made-up run (devices running layers of
// gemms, attention, norms and all-reduces after a weight upload), for the report and export
// tests and for tests/tools/report_example.cpp, which renders it for the render test. The
// Analysis is worked out here by a few lines of arithmetic, not by analyze(): the renderers
// are tested on their own.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sohusim/counters/analysis.hpp"
#include "sohusim/counters/profile.hpp"

namespace sohusim::counters::test {

inline constexpr double kComputePeak = 1e15, kVectorPeak = 2e13, kHbmPeak = 3e12, kSramPeak = 2e13,
                        kPcieH2dPeak = 6.4e10, kPcieD2hPeak = 6.4e10, kLinkPeak = 4e11;

struct ExampleRun {
  RunProfile profile;
  Analysis analysis;
};

inline double& work(OpRecord& op, Resource r) {
  return op.work[static_cast<unsigned>(r)];
}

/// The analysis of `p` the simple way: SoL per resource, top unit, verdict at 0.4, roofline,
/// the critical path walked back from the last op (to the latest-ending dep or previous op
/// on the place), its gaps, per-place averages and summed buckets.
inline Analysis hand_analysis(const RunProfile& p) {
  Analysis a;
  auto peak = [&p](const std::string& place, Resource r) {
    for (const Unit& u : p.units) {
      if (u.place == place && u.resource == r) return u.peak;
    }
    return 0.0;
  };
  for (const OpRecord& op : p.ops) {
    OpAnalysis x;
    x.op = op.id;
    for (unsigned r = 0; r < kResources; ++r) {
      double pk = peak(op.place, static_cast<Resource>(r));
      x.sol[r] = pk > 0 && op.duration_ns > 0 ? op.work[r] / (op.duration_ns * 1e-9) / pk : 0;
      if (x.sol[r] > x.top_sol) x.top_sol = x.sol[r], x.top = static_cast<Resource>(r);
    }
    x.verdict = x.top_sol >= 0.4 ? verdict_of(x.top) : Verdict::Latency;
    double flops = op.work[static_cast<unsigned>(Resource::Compute)];
    double hbm = op.work[static_cast<unsigned>(Resource::Hbm)], sram = op.work[static_cast<unsigned>(Resource::Sram)];
    double cp = peak(op.place, Resource::Compute), hp = peak(op.place, Resource::Hbm),
           sp = peak(op.place, Resource::Sram);
    x.roofline.intensity_hbm = hbm > 0 ? flops / hbm : 0;
    x.roofline.intensity_sram = sram > 0 ? flops / sram : 0;
    x.roofline.ridge_hbm = hp > 0 ? cp / hp : 0;
    x.roofline.ridge_sram = sp > 0 ? cp / sp : 0;
    x.roofline.attainable = cp;
    if (hbm > 0) x.roofline.attainable = std::min(x.roofline.attainable, x.roofline.intensity_hbm * hp);
    if (sram > 0) x.roofline.attainable = std::min(x.roofline.attainable, x.roofline.intensity_sram * sp);
    x.roofline.achieved = op.duration_ns > 0 ? flops / (op.duration_ns * 1e-9) : 0;
    a.ops.push_back(x);
  }
  if (!p.ops.empty()) {
    std::uint32_t cur = 0;
    for (const OpRecord& op : p.ops) {
      if (op.end_ns() > p.ops[cur].end_ns()) cur = op.id;
    }
    std::vector<std::uint32_t> path{cur};
    while (true) {
      const OpRecord& op = p.ops[cur];
      std::int64_t best = -1;
      auto consider = [&](std::uint32_t id) {
        if (best < 0 || p.ops[id].end_ns() > p.ops[static_cast<std::size_t>(best)].end_ns()) best = id;
      };
      for (std::uint32_t d : op.deps) consider(d);
      for (std::uint32_t j = cur; j-- > 0;) {
        if (p.ops[j].place == op.place) {
          consider(j);
          break;
        }
      }
      if (best < 0) break;
      auto prev = static_cast<std::uint32_t>(best);
      if (op.start_ns > p.ops[prev].end_ns()) {
        Gap g;
        g.before = prev;
        g.after = cur;
        g.start_ns = p.ops[prev].end_ns();
        g.end_ns = op.start_ns;
        g.launch = p.ops[prev].launch != op.launch;
        g.verdict = g.launch ? Verdict::Host : Verdict::Latency;
        a.gaps.push_back(g);
        a.verdict_ns[static_cast<unsigned>(g.verdict)] += g.end_ns - g.start_ns;
      }
      path.push_back(prev);
      cur = prev;
    }
    std::reverse(path.begin(), path.end());
    std::reverse(a.gaps.begin(), a.gaps.end());
    a.critical_path = path;
    for (std::uint32_t id : path) {
      a.ops[id].critical = true;
      a.verdict_ns[static_cast<unsigned>(a.ops[id].verdict)] += p.ops[id].duration_ns;
    }
    a.critical_ns = p.ops[path.back()].end_ns() - p.ops[path.front()].start_ns;
    unsigned best = 0;
    for (unsigned v = 1; v < kVerdicts; ++v) {
      if (a.verdict_ns[v] > a.verdict_ns[best]) best = v;
    }
    a.run_verdict = static_cast<Verdict>(best);
  }
  std::vector<std::string> places;
  for (const Unit& u : p.units) {
    if (std::find(places.begin(), places.end(), u.place) == places.end()) places.push_back(u.place);
  }
  double span_s = (p.end_ns - p.start_ns) * 1e-9;
  for (const std::string& place : places) {
    PlaceSummary s;
    s.place = place;
    for (const OpRecord& op : p.ops) {
      if (op.place != place) continue;
      for (unsigned r = 0; r < kResources; ++r) {
        double pk = peak(place, static_cast<Resource>(r));
        if (pk > 0 && span_s > 0) s.sol[r] += op.work[r] / span_s / pk;
      }
    }
    for (const Window& w : p.windows) {
      if (w.place != place) continue;
      s.stalls.busy_useful += w.stalls.busy_useful;
      s.stalls.busy_padding += w.stalls.busy_padding;
      s.stalls.wait_sram += w.stalls.wait_sram;
      s.stalls.wait_hbm += w.stalls.wait_hbm;
      s.stalls.wait_pcie += w.stalls.wait_pcie;
      s.stalls.wait_dependency += w.stalls.wait_dependency;
      s.stalls.idle += w.stalls.idle;
    }
    a.places.push_back(s);
  }
  return a;
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
    p.facts[dev] = {{"pcie_mps_bytes", 256}, {"pcie_h2d_avg_payload_bytes", 64}, {"hbm_row_hit_rate", 0.42}};
  }
  p.hosts.push_back({"host0", 0.31 * (p.end_ns - p.start_ns), static_cast<double>(layers), 10.0 * layers,
                     0.6 * (p.end_ns - p.start_ns)});

  Analysis& a = run.analysis;
  a = hand_analysis(p);
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

}  // namespace sohusim::counters::test
