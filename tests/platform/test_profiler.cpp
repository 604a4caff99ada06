// The profiler on real runs whose bottleneck is known (docs/profiler.md, "Known cases"): a batch-1 decode GEMV is
// HBM-bound, a large prefill GEMM compute-bound, a request of tiny steps with a host sync
// after each latency-bound, a weight upload PCIe-bound, an all-reduce over slow links
// interconnect-bound. The profile comes from build_run_profile (ops from the device's
// stamps, windows from the counter sampler) and the verdicts from profiler::analyze.
#include <sstream>

#include <gtest/gtest.h>

#include "platform_test_support.hpp"
#include "sohusim/platform/host_agent.hpp"
#include "sohusim/platform/profiling/command_profile.hpp"
#include "sohusim/platform/profiling/profile_sampler.hpp"
#include "sohusim/platform/profiling/run_profile.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/profiler/analysis.hpp"
#include "sohusim/workloads/model_config.hpp"
#include "sohusim/workloads/scenario.hpp"

using namespace sohusim;
using namespace sohusim::platform;
using profiler::Resource;
using profiler::Verdict;

namespace {

struct Profiled {
  profiler::RunProfile profile;
  profiler::Analysis analysis;
  double simulated_s = 0;
};

struct Request {
  std::string system = "sohu-1", model = "llama-3-8b";
  unsigned batch = 1, prompt = 16, gen = 2;
  driver::DType dtype = driver::DType::Fp8E4M3;
  bool upload = false;
  std::vector<std::string> sets;
};

Profiled profile_of(const Request& q) {
  SimulatorOptions o = test::options(q.system);
  o.overrides = q.sets;
  o.profile_interval_ns = 10'000;
  Simulator sim(o);
  const workloads::ModelConfig m = workloads::load_model(q.model, test::config_dirs());
  std::vector<workloads::ScenarioResult> results(sim.system().host_count());
  Profiled p;
  p.simulated_s = sim.run([&](HostContext& host) {
    workloads::ScenarioOptions so;
    so.batch = q.batch;
    so.prompt = q.prompt;
    so.gen = q.gen;
    so.dtype = q.dtype;
    so.upload_weights = q.upload;
    std::vector<unsigned> c2c;
    for (unsigned i = 0; i < host.runtime().device_count(); ++i) c2c.push_back(i);
    results[host.host_index()] = workloads::run_scenario(host.runtime(), m, so, c2c);
  });
  p.profile = build_run_profile(sim, results, q.dtype);
  p.analysis = profiler::analyze(p.profile);
  return p;
}

const profiler::OpAnalysis& op_named(const Profiled& p, const std::string& name) {
  for (const profiler::OpRecord& op : p.profile.ops) {
    if (op.name == name) return p.analysis.ops[op.id];
  }
  throw std::runtime_error("no op " + name);
}

// The analysis of dev0's kind of command `name` (a shape, "GEMM 1x4096x28672 fp8_e4m3"), or
// with `prefix`, of the one of most total time whose name starts so.
const profiler::CommandAnalysis& command_named(const Profiled& p, const std::string& name, bool prefix = false) {
  const profiler::CommandAnalysis* best = nullptr;
  double best_total = -1;
  for (const profiler::CommandAnalysis& c : p.analysis.commands) {
    const profiler::CommandStat& row = p.profile.commands[c.row];
    if (row.place != "dev0" || (prefix ? row.name.rfind(name, 0) != 0 : row.name != name)) continue;
    if (row.count * row.mean > best_total) {
      best = &c;
      best_total = row.count * row.mean;
    }
  }
  if (best == nullptr) throw std::runtime_error("no command " + name);
  return *best;
}

std::string describe(const Profiled& p, const profiler::CommandAnalysis& a) {
  const profiler::CommandStat& row = p.profile.commands[a.row];
  std::ostringstream s;
  s << row.name << " " << row.count << " x " << row.mean << " ns: " << profiler::verdict_name(a.verdict) << ", top "
    << profiler::resource_name(a.top) << " at " << a.top_sol * 100 << " %";
  return s.str();
}

std::string describe(const Profiled& p, const profiler::OpAnalysis& a) {
  const profiler::OpRecord& op = p.profile.ops[a.op];
  std::ostringstream s;
  s << op.name << " " << op.duration_ns << " ns: " << profiler::verdict_name(a.verdict) << ", top "
    << profiler::resource_name(a.top) << " at " << a.top_sol * 100 << " %";
  return s.str();
}

}  // namespace

TEST(Profiler, CommandProfileGroupsByShapeWithTheirWork) {
  using device::DataType;
  CommandProfile c(2);
  device::CommandWork w;
  w.matrix_flops = 100;
  w.hbm_bytes = 10;
  // Two GEMMs of one shape (different addresses), one of another, one on a device not profiled.
  c.observe(0, platform::make_gemm(0, 4096, 8192, 1, 64, 32, DataType::FP8_E4M3, DataType::FP8_E4M3), 2000, w);
  c.observe(0, platform::make_gemm(64, 128, 256, 1, 64, 32, DataType::FP8_E4M3, DataType::FP8_E4M3), 4000, w);
  c.observe(0, platform::make_gemm(0, 4096, 8192, 8, 64, 32, DataType::FP8_E4M3, DataType::FP8_E4M3), 1000, w);
  c.observe(1, platform::make_attention(0, 0, 0, 0, 2, 1, 300, 8, 2, 64, DataType::BF16, false), 5000, w);
  c.observe(7, platform::make_nop(), 1000, w);  // no such device: ignored
  EXPECT_EQ(c.commands(), 4u);
  const std::vector<profiler::CommandStat> rows = c.rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].place, "dev0");
  EXPECT_EQ(rows[0].name, "GEMM 1x64x32 fp8_e4m3");  // most total time first
  EXPECT_DOUBLE_EQ(rows[0].count, 2);
  EXPECT_DOUBLE_EQ(rows[0].mean, 3);  // ns
  EXPECT_DOUBLE_EQ(rows[0].work[static_cast<unsigned>(Resource::Compute)], 200);
  EXPECT_DOUBLE_EQ(rows[0].work[static_cast<unsigned>(Resource::Hbm)], 20);
  EXPECT_EQ(rows[1].name, "GEMM 8x64x32 fp8_e4m3");
  EXPECT_EQ(rows[2].place, "dev1");
  EXPECT_EQ(rows[2].name, "ATTENTION b2 q1 kv<=512 h8/2 d64 bf16");
}

TEST(Profiler, BatchOneDecodeGemvIsHbmBoundAndPrefillGemmComputeBound) {
  Request q;
  q.prompt = 1024;
  const Profiled p = profile_of(q);
  // Decode: x[1 x 4096] W[4096 x 28672]: 117 MB of FP8 weights for 235 MFLOP.
  const profiler::OpAnalysis& gemv = op_named(p, "decode.L5.mlp.gate_up_proj");
  EXPECT_EQ(gemv.verdict, Verdict::Hbm) << describe(p, gemv);
  EXPECT_GT(gemv.sol[static_cast<unsigned>(Resource::Hbm)], 0.5) << describe(p, gemv);
  EXPECT_LT(gemv.roofline.intensity_hbm, gemv.roofline.ridge_hbm);
  // Prefill: 1024 rows through the same weight: 60 GFLOP, intensity ~1000 FLOP/B.
  const profiler::OpAnalysis& gemm = op_named(p, "prefill.L5.mlp.gate_up_proj");
  EXPECT_EQ(gemm.verdict, Verdict::Compute) << describe(p, gemm);
  EXPECT_GT(gemm.roofline.intensity_hbm, gemm.roofline.ridge_hbm);
  EXPECT_LE(gemm.roofline.achieved, gemm.roofline.attainable * 1.0001);
  // The same per kind of command (every layer's commands of one shape, with the work the
  // executor measured): the GEMV shape HBM-bound, the prefill GEMM's compute-bound.
  const profiler::CommandAnalysis& gemv_cmd = command_named(p, "GEMM 1x4096x28672 fp8_e4m3");
  EXPECT_EQ(gemv_cmd.verdict, Verdict::Hbm) << describe(p, gemv_cmd);
  EXPECT_GT(gemv_cmd.sol[static_cast<unsigned>(Resource::Hbm)], 0.5) << describe(p, gemv_cmd);
  EXPECT_LT(gemv_cmd.sol[static_cast<unsigned>(Resource::Compute)], 0.05) << describe(p, gemv_cmd);
  const profiler::CommandAnalysis& gemm_cmd = command_named(p, "GEMM 1024x4096x28672 fp8_e4m3");
  EXPECT_EQ(gemm_cmd.verdict, Verdict::Compute) << describe(p, gemm_cmd);
  EXPECT_EQ(p.profile.commands[gemm_cmd.row].count, 32);  // one per layer
  std::printf("[per-command] %s\n[per-command] %s\n", describe(p, gemv_cmd).c_str(), describe(p, gemm_cmd).c_str());
  // The profile has what the report draws: windows on every place, command percentiles,
  // stall buckets that account for the engines' cycles.
  EXPECT_FALSE(p.profile.windows.empty());
  EXPECT_FALSE(p.profile.commands.empty());
  ASSERT_FALSE(p.analysis.places.empty());
  const profiler::StallBuckets& b = p.analysis.places[0].stalls;
  EXPECT_GT(b.busy_useful, 0);
  EXPECT_GT(b.idle, 0);
  double sum = 0;
  for (unsigned v = 0; v < profiler::kVerdicts; ++v) sum += p.analysis.verdict_share(static_cast<Verdict>(v));
  EXPECT_NEAR(sum, 1.0, 1e-9);
  // Per op, the engines' buckets from the counters at the op's two TIMESTAMP commands: they
  // account for the engines' cycles over the op, and say the same as the verdicts do.
  const profiler::OpRecord& gemv_op = p.profile.ops[gemv.op];
  const profiler::OpRecord& gemm_op = p.profile.ops[gemm.op];
  for (const profiler::OpRecord* op : {&gemv_op, &gemm_op}) {
    const profiler::StallBuckets& s = op->stalls;
    ASSERT_GT(s.total(), 0) << op->name << " has no buckets";
    std::printf(
        "[per-op] %-28s %9.0f ns: useful %.3f padding %.3f overhead %.3f wait HBM %.3f wait SRAM %.3f "
        "dependency %.3f idle %.3f\n",
        op->name.c_str(), op->duration_ns, s.busy_useful / s.total(), s.busy_padding / s.total(),
        s.busy_overhead / s.total(), s.wait_hbm / s.total(), s.wait_sram / s.total(), s.wait_dependency / s.total(),
        s.idle / s.total());
  }
  // The prefill GEMM's engines mostly multiply at their peak; the decode GEMV's wait for HBM
  // more often (7.9 % of their cycles against 5.3 %: the GEMM's weight streams wait on one
  // another's banks too, 3.7 % before the fast HBM model charged bank conflicts between
  // bulk requests, 4.4 % before its writes of results went ahead of the weight reads
  // booked, as the controller's write mode takes them), and when busy they stream weight
  // tiles through the arrays for one row of MACs each: overhead, not useful MACs (each fold
  // loads 128 weight rows for one row of input).
  EXPECT_GT(gemm_op.stalls.busy_useful, 0.8 * gemm_op.stalls.total());
  EXPECT_GT(gemv_op.stalls.wait_hbm / gemv_op.stalls.total(), 1.2 * gemm_op.stalls.wait_hbm / gemm_op.stalls.total());
  EXPECT_LT(gemv_op.stalls.busy_useful, 0.02 * gemv_op.stalls.total());
  EXPECT_GT(gemv_op.stalls.busy_overhead, 0.5 * gemv_op.stalls.total());
  // Useful MAC cycles over the engines' cycles are the compute speed of light of the op.
  EXPECT_NEAR(gemm_op.stalls.busy_useful / gemm_op.stalls.total(), gemm.sol[static_cast<unsigned>(Resource::Compute)],
              0.02);
  // Per op, the SRAM's bytes between the same two stamps (engine operand reads and result
  // stores; the loads from HBM land in the tile's operand buffer, not through the SRAM's
  // ports): every weight byte the GEMV streams from HBM is read once by an engine, so its
  // SRAM work is at least its HBM work; the prefill GEMM reads its operand tiles several
  // times (one pass per fold), several times its HBM work. Both get an SRAM roofline point.
  const double gemv_sram = gemv_op.work[static_cast<unsigned>(Resource::Sram)];
  const double gemv_hbm = gemv_op.work[static_cast<unsigned>(Resource::Hbm)];
  std::printf("[per-op] SRAM bytes: %s %.4g (HBM %.4g), %s %.4g (HBM %.4g)\n", gemv_op.name.c_str(), gemv_sram,
              gemv_hbm, gemm_op.name.c_str(), gemm_op.work[static_cast<unsigned>(Resource::Sram)],
              gemm_op.work[static_cast<unsigned>(Resource::Hbm)]);
  EXPECT_GE(gemv_sram, gemv_hbm * 0.99);
  EXPECT_LT(gemv_sram, gemv_hbm * 1.2);
  EXPECT_GT(gemm_op.work[static_cast<unsigned>(Resource::Sram)],
            3 * gemm_op.work[static_cast<unsigned>(Resource::Hbm)]);
  EXPECT_GT(gemv.roofline.intensity_sram, 0);
  EXPECT_GT(gemm.roofline.intensity_sram, 0);
  // Ops of steps without stamps (decode.step<n>) have neither.
  for (const profiler::OpRecord& op : p.profile.ops) {
    if (op.kind == "step") {
      EXPECT_EQ(op.stalls.total(), 0) << op.name;
      EXPECT_EQ(op.work[static_cast<unsigned>(Resource::Sram)], 0) << op.name;
    }
  }
}

TEST(Profiler, TinyStepsWithAHostSyncEachAreLatencyBound) {
  Request q;
  q.model = "tiny";
  q.prompt = 4;
  q.gen = 24;
  const Profiled p = profile_of(q);
  EXPECT_EQ(p.analysis.run_verdict, Verdict::Latency) << "latency share " << p.analysis.verdict_share(Verdict::Latency);
  std::size_t gaps = 0;
  for (const profiler::Finding& f : p.analysis.findings) gaps += f.detector == "launch_gap";
  EXPECT_GT(gaps, 0u);
}

TEST(Profiler, WeightUploadIsPcieBound) {
  Request q;
  q.model = "gpt2";
  q.prompt = 8;
  q.gen = 1;
  q.upload = true;
  const Profiled p = profile_of(q);
  const profiler::OpAnalysis& up = op_named(p, "load.weight_upload.dev0");
  EXPECT_EQ(up.verdict, Verdict::Pcie) << describe(p, up);
  EXPECT_EQ(p.analysis.run_verdict, Verdict::Pcie);
  const profiler::CommandAnalysis& copy = command_named(p, "DMA_COPY host->hbm", true);
  EXPECT_EQ(copy.verdict, Verdict::Pcie) << describe(p, copy);
  EXPECT_EQ(copy.top, Resource::PcieH2d) << describe(p, copy);
}

TEST(Profiler, AllReduceOverSlowLinksIsInterconnectBound) {
  Request q;
  q.system = "test-2";
  q.model = "llama-3-8b";
  q.prompt = 64;
  q.gen = 2;
  q.batch = 8;
  q.sets = {"device.c2c.bandwidth=2 GB/s"};
  const Profiled p = profile_of(q);
  const profiler::OpAnalysis& ar = op_named(p, "decode.L3.mlp.allreduce");
  EXPECT_EQ(ar.verdict, Verdict::Interconnect) << describe(p, ar);
  const profiler::CommandAnalysis& coll = command_named(p, "COLLECTIVE", true);
  EXPECT_EQ(coll.verdict, Verdict::Interconnect) << describe(p, coll);
}

TEST(Profiler, SamplerWindowsTileTheRunAndConserveTheCounts) {
  SimulatorOptions o = test::options("sohu-1");
  o.profile_interval_ns = 100;  // fine enough that the sampler must thin itself out
  Simulator sim(o);
  const workloads::ModelConfig m = workloads::load_model("tiny", test::config_dirs());
  sim.run([&](HostContext& host) {
    workloads::ScenarioOptions so;
    so.prompt = 8;
    so.gen = 40;
    workloads::run_scenario(host.runtime(), m, so, {0});
  });
  const ProfileSampler* s = sim.profile_sampler();
  ASSERT_NE(s, nullptr);
  EXPECT_GT(s->interval_ns(), 100u) << "the interval doubles when samples pile up";
  EXPECT_LE(s->samples(), 4097u);
  const std::vector<profiler::Window> w = s->windows();
  double hbm = 0, end = 0, busy = 0;
  for (const profiler::Window& x : w) {
    if (x.place != "dev0") continue;
    EXPECT_DOUBLE_EQ(x.start_ns, end) << "windows are contiguous from time 0";
    end = x.end_ns;
    hbm += x.rate[static_cast<unsigned>(Resource::Hbm)] * (x.end_ns - x.start_ns) * 1e-9;
    EXPECT_GE(x.busy, 0);
    EXPECT_LE(x.busy, 1);
    busy += x.busy * (x.end_ns - x.start_ns);
    const profiler::StallBuckets& b = x.stalls;
    EXPECT_GE(b.idle, 0);
    EXPECT_GE(b.busy_padding, -1e-6);
  }
  EXPECT_NEAR(end, sim.simulated_seconds() * 1e9, 2.0 * s->interval_ns());
  const double bytes = sim.stats().value("dev0.hbm.port.bytes_read") + sim.stats().value("dev0.hbm.port.bytes_written");
  EXPECT_NEAR(hbm, bytes, bytes * 1e-9) << "every byte lands in exactly one window";
  EXPECT_NEAR(busy, sim.stats().value("dev0.cp.busy_ns"), 1.0) << "and every ns with a command in flight";
  EXPECT_GT(busy, 0);
}
