// Bottleneck analysis on hand-built profiles whose answer is known: speed of light,
// roofline, verdicts, the critical path and its gaps, the detectors.
#include <cmath>

#include <gtest/gtest.h>

#include "sohusim/profiler/analysis.hpp"

using namespace sohusim::profiler;

namespace {

constexpr double kCompute = 1e15;  // FLOP/s
constexpr double kHbm = 4e12;      // B/s
constexpr double kSram = 40e12;
constexpr double kPcie = 50e9;
constexpr double kLink = 100e9;

unsigned ix(Resource r) {
  return static_cast<unsigned>(r);
}

RunProfile system(unsigned devices = 1) {
  RunProfile p;
  for (unsigned d = 0; d < devices; ++d) {
    const std::string place = "dev" + std::to_string(d);
    p.units.push_back({place, Resource::Compute, kCompute});
    p.units.push_back({place, Resource::Hbm, kHbm});
    p.units.push_back({place, Resource::Sram, kSram});
    p.units.push_back({place, Resource::PcieH2d, kPcie});
    p.units.push_back({place, Resource::PcieD2h, kPcie});
    p.units.push_back({place, Resource::Link, kLink});
  }
  p.units.push_back({"host0", Resource::Host, 1});
  return p;
}

OpRecord& add(RunProfile& p, const std::string& name, double start, double dur, std::vector<std::uint32_t> deps = {},
              const std::string& place = "dev0", std::uint64_t launch = 1) {
  OpRecord op;
  op.id = static_cast<std::uint32_t>(p.ops.size());
  op.name = name;
  op.kind = "gemm";
  op.place = place;
  op.start_ns = start;
  op.duration_ns = dur;
  op.deps = std::move(deps);
  op.launch = launch;
  p.ops.push_back(op);
  p.end_ns = std::max(p.end_ns, start + dur);
  return p.ops.back();
}

}  // namespace

TEST(Analysis, GemvStreamingWeightsIsHbmBound) {
  RunProfile p = system();
  // Batch-1 GEMV 8192 x 8192 FP8: 64 MiB of weights, 2 x 64 Mi FLOP, at 90% of HBM peak.
  const double bytes = 8192.0 * 8192;
  OpRecord& op = add(p, "gemv", 0, bytes / (0.9 * kHbm) * 1e9);
  op.work[ix(Resource::Hbm)] = bytes;
  op.work[ix(Resource::Compute)] = 2 * bytes;
  const Analysis a = analyze(p);
  EXPECT_EQ(a.ops[0].verdict, Verdict::Hbm);
  EXPECT_EQ(a.ops[0].top, Resource::Hbm);
  EXPECT_NEAR(a.ops[0].sol[ix(Resource::Hbm)], 0.9, 1e-9);
  EXPECT_NEAR(a.ops[0].roofline.intensity_hbm, 2.0, 1e-12);
  EXPECT_NEAR(a.ops[0].roofline.ridge_hbm, kCompute / kHbm, 1e-9);
  EXPECT_NEAR(a.ops[0].roofline.attainable, 2.0 * kHbm, 1);
  EXPECT_NEAR(a.ops[0].roofline.achieved / a.ops[0].roofline.attainable, 0.9, 1e-9);
  EXPECT_EQ(a.run_verdict, Verdict::Hbm);
}

TEST(Analysis, KindsOfCommandGetTheirSpeedOfLightOverTheirOwnTime) {
  RunProfile p = system();
  add(p, "step", 0, 1e6);
  // 100 GEMVs of 10 us each streaming 36 MB apiece: 90 % of HBM over their 1 ms.
  CommandStat gemv{"dev0", "GEMM 1x8192x4096 fp8", 100, 10000, 10000, 10000, 10000, 10000};
  gemv.work[ix(Resource::Hbm)] = 0.9 * kHbm * 1e-3;
  gemv.work[ix(Resource::Compute)] = 2 * 8192.0 * 4096 * 100;
  // 10 uploads of 1 MB in 25 us each: 80 % of PCIe h2d.
  CommandStat upload{"dev0", "DMA_COPY host->hbm <=1 MiB", 10, 25000, 25000, 25000, 25000, 25000};
  upload.work[ix(Resource::PcieH2d)] = 0.8 * kPcie * 250e-6;
  upload.work[ix(Resource::Hbm)] = upload.work[ix(Resource::PcieH2d)];
  // A latency-only row (no work): not analysed.
  CommandStat latency{"dev0", "start_to_complete", 110, 11000, 10000, 25000, 25000, 25000};
  p.commands = {latency, gemv, upload};
  const Analysis a = analyze(p);
  ASSERT_EQ(a.commands.size(), 2u);
  EXPECT_EQ(a.commands[0].row, 1u);
  EXPECT_EQ(a.commands[0].top, Resource::Hbm);
  EXPECT_NEAR(a.commands[0].top_sol, 0.9, 1e-9);
  EXPECT_NEAR(a.commands[0].sol[ix(Resource::Compute)], 2 * 8192.0 * 4096 * 100 / 1e-3 / kCompute, 1e-12);
  EXPECT_EQ(a.commands[0].verdict, Verdict::Hbm);
  EXPECT_EQ(a.commands[1].row, 2u);
  EXPECT_EQ(a.commands[1].top, Resource::PcieH2d);
  EXPECT_NEAR(a.commands[1].top_sol, 0.8, 1e-9);
  EXPECT_EQ(a.commands[1].verdict, Verdict::Pcie);
  // Kinds: one per name, most total time first.
  ASSERT_EQ(a.kinds.size(), 2u);
  EXPECT_EQ(a.kinds[0].name, "GEMM 1x8192x4096 fp8");
  EXPECT_EQ(kind_places(p, a.kinds[0]), "dev0");
  // Below the bound threshold on every unit: latency/launch-bound.
  p.commands[1].mean *= 10;
  EXPECT_EQ(analyze(p).commands[0].verdict, Verdict::Latency);
}

TEST(Analysis, AKindGathersItsPlacesWeightedByTheirTime) {
  RunProfile p = system(4);
  add(p, "step", 0, 1e6);
  // The same shape on four devices: three at 90 % of HBM over 1 ms, one at 60 % over 2 ms.
  for (unsigned d = 0; d < 4; ++d) {
    CommandStat c{"dev" + std::to_string(d), "GEMM 1x8192x4096 fp8", 100, d == 3 ? 20000.0 : 10000.0, 0, 0, 0, 0};
    c.work[ix(Resource::Hbm)] = (d == 3 ? 0.6 * 2e-3 : 0.9 * 1e-3) * kHbm;
    p.commands.push_back(c);
  }
  const Analysis a = analyze(p);
  ASSERT_EQ(a.kinds.size(), 1u);
  const CommandKind& k = a.kinds[0];
  EXPECT_EQ(k.rows.size(), 4u);
  EXPECT_DOUBLE_EQ(k.count, 400);
  EXPECT_DOUBLE_EQ(k.total_ns, 5e6);
  EXPECT_NEAR(k.sol[ix(Resource::Hbm)], (3 * 0.9 * 1e6 + 0.6 * 2e6) / 5e6, 1e-12);  // 0.78
  EXPECT_EQ(k.verdict, Verdict::Hbm);
  EXPECT_EQ(kind_places(p, k), "dev0 .. dev3 (4 places)");
}

TEST(Analysis, LargeGemmIsComputeBound) {
  RunProfile p = system();
  const double flops = 2.0 * 8192 * 8192 * 8192;
  OpRecord& op = add(p, "gemm", 0, flops / (0.85 * kCompute) * 1e9);
  op.work[ix(Resource::Compute)] = flops;
  op.work[ix(Resource::Hbm)] = 3.0 * 8192 * 8192;
  op.work[ix(Resource::Sram)] = flops / 64;
  const Analysis a = analyze(p);
  EXPECT_EQ(a.ops[0].verdict, Verdict::Compute);
  EXPECT_NEAR(a.ops[0].top_sol, 0.85, 1e-9);
  EXPECT_GT(a.ops[0].roofline.intensity_hbm, a.ops[0].roofline.ridge_hbm);
  EXPECT_NEAR(a.ops[0].roofline.attainable, kCompute, 1);
}

TEST(Analysis, TinyOpsWithHostSyncsAreLatencyBound) {
  RunProfile p = system();
  // 50 one-microsecond ops that do almost nothing, 10 us apart (a sync and a launch each).
  for (unsigned i = 0; i < 50; ++i) {
    OpRecord& op = add(p, "nop", i * 11000.0, 1000, {}, "dev0", i + 1);
    op.work[ix(Resource::Hbm)] = 64;
  }
  p.hosts = {{"host0", 0.1 * p.end_ns, 50, 50, 0.5 * p.end_ns}};
  const Analysis a = analyze(p);
  for (const OpAnalysis& o : a.ops) EXPECT_EQ(o.verdict, Verdict::Latency);
  EXPECT_EQ(a.run_verdict, Verdict::Latency);
  EXPECT_EQ(a.critical_path.size(), 50u);
  ASSERT_EQ(a.gaps.size(), 49u);
  EXPECT_TRUE(a.gaps[0].launch);
  EXPECT_NEAR(a.verdict_share(Verdict::Latency), 1.0, 1e-12);
  EXPECT_NEAR(a.critical_ns, p.end_ns, 1e-9);
  std::size_t launch_gaps = 0;
  for (const Finding& f : a.findings) launch_gaps += f.detector == "launch_gap";
  EXPECT_EQ(launch_gaps, 20u);  // capped at max_findings_per_detector
}

TEST(Analysis, GapsAreHostBoundWhenTheHostWasBusy) {
  RunProfile p = system();
  for (unsigned i = 0; i < 10; ++i) add(p, "nop", i * 11000.0, 1000, {}, "dev0", i + 1);
  p.hosts = {{"host0", 0.8 * p.end_ns, 10, 10, 0}};
  const Analysis a = analyze(p);
  EXPECT_EQ(a.run_verdict, Verdict::Host);
  EXPECT_NEAR(a.verdict_share(Verdict::Host), 9 * 10000.0 / p.end_ns, 1e-12);
}

TEST(Analysis, WeightUploadIsPcieBound) {
  RunProfile p = system();
  OpRecord& op = add(p, "weight_upload", 0, 1e9);
  op.kind = "upload";
  op.work[ix(Resource::PcieH2d)] = 0.8 * kPcie;
  op.work[ix(Resource::Hbm)] = 0.8 * kPcie;
  const Analysis a = analyze(p);
  EXPECT_EQ(a.ops[0].verdict, Verdict::Pcie);
  EXPECT_EQ(a.run_verdict, Verdict::Pcie);
}

TEST(Analysis, SlowLinkAllReduceIsInterconnectBound) {
  RunProfile p = system(2);
  for (unsigned d = 0; d < 2; ++d) {
    OpRecord& op = add(p, "all_reduce", 0, 1e6, {}, "dev" + std::to_string(d));
    op.kind = "all_reduce";
    op.work[ix(Resource::Link)] = 0.7 * kLink * 1e-3;
    op.work[ix(Resource::Hbm)] = 2 * 0.7 * kLink * 1e-3;
  }
  const Analysis a = analyze(p);
  EXPECT_EQ(a.ops[0].verdict, Verdict::Interconnect);
  EXPECT_EQ(a.ops[1].verdict, Verdict::Interconnect);
  EXPECT_EQ(a.run_verdict, Verdict::Interconnect);
}

TEST(Analysis, CriticalPathFollowsTheDependencyThatEndedLast) {
  RunProfile p = system(2);
  // dev0: a [0,100) ; dev1: b [0,300) ; dev0: c [400,500) depends on a and b.
  add(p, "a", 0, 100, {}, "dev0");
  add(p, "b", 0, 300, {}, "dev1");
  add(p, "c", 400, 100, {0, 1}, "dev0");
  const Analysis a = analyze(p);
  EXPECT_EQ(a.critical_path, (std::vector<std::uint32_t>{1, 2}));
  ASSERT_EQ(a.gaps.size(), 1u);
  EXPECT_EQ(a.gaps[0].before, 1u);
  EXPECT_EQ(a.gaps[0].after, 2u);
  EXPECT_FALSE(a.gaps[0].launch);
  EXPECT_DOUBLE_EQ(a.gaps[0].end_ns - a.gaps[0].start_ns, 100);
  EXPECT_FALSE(a.ops[0].critical);
  EXPECT_TRUE(a.ops[1].critical);
  EXPECT_DOUBLE_EQ(a.critical_ns, 500);
  double sum = 0;
  for (unsigned v = 0; v < kVerdicts; ++v) sum += a.verdict_share(static_cast<Verdict>(v));
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

TEST(Analysis, DetectorsNameThePlaceAndTheNumbers) {
  RunProfile p = system(2);
  p.end_ns = 2000;
  add(p, "x", 0, 2000, {}, "dev0").work[ix(Resource::Hbm)] = 0.6 * kHbm * 2e-6;
  for (unsigned d = 0; d < 2; ++d) {
    Window w;
    w.place = "dev" + std::to_string(d);
    w.start_ns = 0;
    w.end_ns = 2000;
    w.rate[ix(Resource::Hbm)] = d == 0 ? 0.6 * kHbm : 0.001 * kHbm;
    w.rate[ix(Resource::PcieD2h)] = d == 1 ? 0.95 * kPcie : 0;
    w.stalls.busy_useful = 10;
    w.stalls.idle = 30;
    p.windows.push_back(w);
  }
  p.facts["dev0"] = {{"hbm_row_hit_rate", 0.2}, {"sram_bank_conflicts", 300}, {"sram_accesses", 1000}};
  p.facts["dev1"] = {{"pcie_mps_bytes", 256}, {"pcie_d2h_avg_payload_bytes", 32}};
  const Analysis a = analyze(p);
  std::map<std::string, const Finding*> by;
  for (const Finding& f : a.findings) by[f.detector] = &f;
  ASSERT_TRUE(by.count("hbm_row_miss"));
  EXPECT_EQ(by["hbm_row_miss"]->place, "dev0");
  EXPECT_NE(by["hbm_row_miss"]->message.find("20.0%"), std::string::npos) << by["hbm_row_miss"]->message;
  ASSERT_TRUE(by.count("sram_bank_conflicts"));
  EXPECT_DOUBLE_EQ(by["sram_bank_conflicts"]->numbers.at("rate"), 0.3);
  ASSERT_TRUE(by.count("pcie_saturation"));
  EXPECT_EQ(by["pcie_saturation"]->place, "dev1");
  EXPECT_NE(by["pcie_saturation"]->message.find("95.0%"), std::string::npos) << by["pcie_saturation"]->message;
  ASSERT_TRUE(by.count("pcie_small_payload"));
  EXPECT_NE(by["pcie_small_payload"]->message.find("32 bytes"), std::string::npos);
  ASSERT_TRUE(by.count("idle_device"));
  EXPECT_EQ(by["idle_device"]->place, "dev1");
  ASSERT_EQ(a.places.size(), 3u);
  EXPECT_NEAR(a.places[0].sol[ix(Resource::Hbm)], 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(a.places[0].stalls.total(), 40);
  // With the command processors' busy time the idle test uses it, not the lumpy rates.
  {
    RunProfile q = p;
    q.windows[0].busy = 0.02;  // dev0 moved bytes, yet had a command in flight 2% of the window
    q.windows[1].busy = 0.9;
    const Analysis b = analyze(q);
    const Finding* idle = nullptr;
    for (const Finding& f : b.findings) idle = f.detector == "idle_device" ? &f : idle;
    ASSERT_NE(idle, nullptr);
    EXPECT_EQ(idle->place, "dev0");
    EXPECT_NE(idle->message.find("with a command in flight"), std::string::npos) << idle->message;
  }
  // Healthy numbers raise none of them.
  p.facts["dev0"] = {{"hbm_row_hit_rate", 0.9}, {"sram_bank_conflicts", 1}, {"sram_accesses", 1000}};
  p.facts["dev1"] = {{"pcie_mps_bytes", 256}, {"pcie_d2h_avg_payload_bytes", 256}};
  p.windows[1].rate[ix(Resource::PcieD2h)] = 0.5 * kPcie;
  p.windows[1].rate[ix(Resource::Hbm)] = 0.5 * kHbm;
  EXPECT_TRUE(analyze(p).findings.empty());
}

TEST(Analysis, InvalidProfileIsRefused) {
  RunProfile p = system();
  add(p, "x", 0, -5);
  EXPECT_THROW(analyze(p), ProfileError);
  RunProfile q = system();
  add(q, "x", 0, 5);
  q.commands.push_back({"dev0", "GEMM 1x2x3 bf16", 1, 5, 5, 5, 5, 5});
  q.commands.back().work[ix(Resource::Hbm)] = -1;
  try {
    analyze(q);
    ADD_FAILURE() << "a negative command work was accepted";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("commands[0] (dev0 GEMM 1x2x3 bf16): negative hbm work"), std::string::npos)
        << e.what();
  }
}

TEST(Analysis, StepsWithoutABreakdownDivideLikeTheProfiledStep) {
  RunProfile p = system();
  // The profiled decode step: an HBM-bound op (60 us), a 40 us gap, a compute-bound op (100 us).
  OpRecord& gemv = add(p, "gemv", 0, 60'000, {}, "dev0", 1);
  gemv.phase = "decode";
  gemv.work[ix(Resource::Hbm)] = 0.8 * kHbm * 60e-6;
  OpRecord& gemm = add(p, "gemm", 100'000, 100'000, {0}, "dev0", 1);
  gemm.phase = "decode";
  gemm.work[ix(Resource::Compute)] = 0.8 * kCompute * 100e-6;
  // Two later steps timed whole, 400 us each, back to back.
  for (unsigned i = 0; i < 2; ++i) {
    OpRecord& step = add(p, "decode.step" + std::to_string(i + 1), 200'000 + 400'000.0 * i, 400'000, {}, "dev0", i + 2);
    step.kind = "step";
    step.phase = "decode";
  }
  const Analysis a = analyze(p);
  ASSERT_EQ(a.critical_path.size(), 4u);
  // Steps: 800 us x (60/200 HBM, 100/200 compute, 40/200 latency) plus the profiled ops.
  EXPECT_NEAR(a.verdict_ns[static_cast<unsigned>(Verdict::Hbm)], 60'000 + 800'000 * 0.3, 1e-6);
  EXPECT_NEAR(a.verdict_ns[static_cast<unsigned>(Verdict::Compute)], 100'000 + 800'000 * 0.5, 1e-6);
  EXPECT_NEAR(a.verdict_ns[static_cast<unsigned>(Verdict::Latency)], 40'000 + 800'000 * 0.2, 1e-6);
  EXPECT_EQ(a.run_verdict, Verdict::Compute);
}
