// End to end: a transformer request through the runtime, driver, PCIe and the devices, in
// functional mode against the CPU reference (workloads/reference.hpp), and in timing mode
// against first principles.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/device/compute/matrix_engine_params.hpp"
#include "sohusim/device/sohu_device.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/workloads/reference.hpp"
#include "sohusim/workloads/scenario.hpp"
#include "sohusim/workloads/weights.hpp"

namespace sohusim::platform {
namespace {

struct Run {
  workloads::ScenarioResult result;
  double simulated = 0;
};

Run run_tiny(const std::string& system, driver::DType dtype, unsigned batch, unsigned prompt, unsigned gen,
             const std::vector<std::vector<std::uint32_t>>& prompts,
             workloads::AllReduceAlgorithm allreduce = workloads::AllReduceAlgorithm::OneShot) {
  SimulatorOptions o;
  o.system = system;
  o.config_dirs = test::config_dirs();
  o.mode = "functional";
  Simulator sim(o);
  const workloads::ModelConfig m = workloads::load_model("tiny", test::config_dirs());
  Run r;
  r.simulated = sim.run([&](HostContext& host) {
    workloads::ScenarioOptions so;
    so.batch = batch;
    so.prompt = prompt;
    so.gen = gen;
    so.dtype = dtype;
    so.functional = true;
    so.seed = 7;
    so.prompts = prompts;
    so.allreduce = allreduce;
    std::vector<unsigned> c2c;
    for (unsigned i = 0; i < host.runtime().device_count(); ++i) c2c.push_back(i);
    r.result = workloads::run_scenario(host.runtime(), m, so, c2c);
  });
  return r;
}

// The reference's logits for the same request: prefill, then decode with its own greedy tokens.
std::vector<workloads::Logits> reference(driver::DType dtype, const std::vector<std::vector<std::uint32_t>>& prompts,
                                         unsigned gen, std::vector<std::vector<std::uint32_t>>& tokens) {
  const workloads::ModelConfig m = workloads::load_model("tiny", test::config_dirs());
  workloads::Reference ref(m, workloads::make_weights(m, 7), dtype);
  std::vector<workloads::Logits> out;
  out.push_back(ref.prefill(prompts));
  tokens.assign(prompts.size(), {});
  for (unsigned s = 0; s < gen; ++s) {
    const std::vector<std::uint32_t> next = workloads::greedy(out.back());
    for (std::size_t b = 0; b < next.size(); ++b) tokens[b].push_back(next[b]);
    if (s + 1 < gen) out.push_back(ref.decode(next));
  }
  return out;
}

// Largest |device - reference| over all steps, relative to the largest |reference| logit.
double relative_error(const std::vector<std::vector<std::vector<float>>>& dev,
                      const std::vector<workloads::Logits>& ref) {
  double worst = 0, scale = 0;
  for (std::size_t s = 0; s < ref.size(); ++s)
    for (std::size_t b = 0; b < ref[s].size(); ++b)
      for (std::size_t v = 0; v < ref[s][b].size(); ++v) {
        worst =
            std::max(worst, std::fabs(static_cast<double>(dev.at(s).at(b).at(v)) - static_cast<double>(ref[s][b][v])));
        scale = std::max(scale, std::fabs(static_cast<double>(ref[s][b][v])));
      }
  return worst / scale;
}

const std::vector<std::vector<std::uint32_t>> kPrompts = {{1, 17, 42, 99, 200, 5, 7, 128},
                                                          {3, 3, 250, 11, 64, 90, 31, 2}};

void expect_matches_reference(const std::string& system, driver::DType dtype, double tolerance,
                              workloads::AllReduceAlgorithm allreduce = workloads::AllReduceAlgorithm::OneShot) {
  const Run r = run_tiny(system, dtype, 2, 8, 5, kPrompts, allreduce);
  std::vector<std::vector<std::uint32_t>> ref_tokens;
  const std::vector<workloads::Logits> ref = reference(dtype, kPrompts, 5, ref_tokens);
  ASSERT_EQ(r.result.logits.size(), ref.size());
  EXPECT_LE(relative_error(r.result.logits, ref), tolerance) << system;
  EXPECT_EQ(r.result.tokens, ref_tokens) << system;
}

// FP32: the device's kernels and the reference compute the same math in the same precision
// (different summation orders): 1e-4 of the largest logit.
SOHUSIM_SYSTEMC_TEST(Inference, TinyModelOnOneDeviceMatchesTheCpuReferenceFp32) {
  expect_matches_reference("sohu-1", driver::DType::Fp32, 1e-4);
}

// Two devices, tensor parallel: the all-reduce's ring order changes FP32 sums only.
SOHUSIM_SYSTEMC_TEST(Inference, TinyModelOnTwoDevicesMatchesTheCpuReferenceFp32) {
  expect_matches_reference("test-2", driver::DType::Fp32, 1e-4);
}

// The same with the ring all-reduce (reduce-scatter and all-gather steps).
SOHUSIM_SYSTEMC_TEST(Inference, TinyModelOnTwoDevicesWithTheRingAllReduceMatchesTheCpuReference) {
  expect_matches_reference("test-2", driver::DType::Fp32, 1e-4, workloads::AllReduceAlgorithm::Ring);
}

// The same with the two-shot all-reduce (reduce-scatter and all-gather, one shot each).
SOHUSIM_SYSTEMC_TEST(Inference, TinyModelOnTwoDevicesWithTheTwoShotAllReduceMatchesTheCpuReference) {
  expect_matches_reference("test-2", driver::DType::Fp32, 1e-4, workloads::AllReduceAlgorithm::TwoShot);
}

// BF16: both round every op's output to BF16 (8 bits of mantissa); summation order differs,
// so an occasional output lands on the neighbouring BF16 value: 2 % of the largest logit.
SOHUSIM_SYSTEMC_TEST(Inference, TinyModelOnTwoDevicesMatchesTheCpuReferenceBf16) {
  expect_matches_reference("test-2", driver::DType::Bf16, 2e-2);
}

// A Llama-3-8B request on `sohu-1` in FP8, timing mode.
struct Sohu1Run {
  workloads::ModelConfig model;
  workloads::ScenarioResult result;
  std::unique_ptr<Simulator> sim;
};

Sohu1Run run_llama3_8b(unsigned batch, unsigned prompt, unsigned gen) {
  SimulatorOptions o;
  o.system = "sohu-1";
  o.config_dirs = test::config_dirs();
  Sohu1Run r;
  r.sim = std::make_unique<Simulator>(o);
  r.model = workloads::load_model("llama-3-8b", test::config_dirs());
  r.sim->run([&](HostContext& host) {
    workloads::ScenarioOptions so;
    so.batch = batch;
    so.prompt = prompt;
    so.gen = gen;
    so.dtype = driver::DType::Fp8E4M3;
    r.result = workloads::run_scenario(host.runtime(), r.model, so, {0});
  });
  return r;
}

// Timing sanity, a large prefill (Llama-3-8B, 4 x 2048 tokens, FP8): its layer GEMMs are
// compute-bound, so their time is within 10 % of their FLOPs over the matrix engines' rate
// (peak x useful/issued MACs: the padding of edge folds). Attention is not part of the bound:
// its softmax runs on the engine's lanes between the two matmuls and takes most of its time
// (docs/validation.md gives the figures).
SOHUSIM_SYSTEMC_TEST(Inference, LargePrefillGemmsRunAtTheEngineRate) {
  const unsigned batch = 4, prompt = 2048;
  const Sohu1Run run = run_llama3_8b(batch, prompt, 1);
  const workloads::ModelConfig& m = run.model;
  const workloads::ScenarioResult& r = run.result;
  Simulator& sim = *run.sim;
  // Layer GEMMs (the LM head runs on the last position only).
  const double layer_params =
      static_cast<double>(m.matmul_parameter_count()) - static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
  const double flops = 2.0 * layer_params * batch * prompt;
  const device::SohuDevice& dev = sim.system().device(0);
  double useful = 0, issued = 0;
  for (const counters::Stat* s : sim.stats().glob("dev0.me*.macs_useful")) useful += s->value();
  for (const counters::Stat* s : sim.stats().glob("dev0.me*.macs_issued")) issued += s->value();
  ASSERT_GT(issued, 0.0);
  const double rate = device::peak_flops(dev.params().matrix, device::DataType::FP8_E4M3) * useful / issued;
  const double bound = flops / rate;
  const double gemm = r.prefill.per_kind.at("gemm");
  EXPECT_GE(gemm, bound);
  EXPECT_LE(gemm, 1.10 * bound) << "layer GEMMs " << gemm * 1e3 << " ms against FLOPs / rate " << bound * 1e3 << " ms";
  EXPECT_GT(r.ttft_seconds, gemm);
}

// Timing sanity, decode at batch 1 (Llama-3-8B on sohu-1, FP8): each GEMM streams its weights
// from HBM once, so a GEMM of w weight bytes takes w / B + c: B the sustained streaming rate,
// c the fixed cost of a command (dispatch, the first tile's load latency, the last tile's
// store). B and c are fitted on two GEMMs of layer 0 (k_proj, 4 MiB; gate_up_proj, 112 MiB)
// and must be physical (B between 80 % and 100 % of the HBM peak, c under 5 us); then all
// the step's GEMMs together must come within 10 % of W / B + n c (W all weight bytes, n the
// GEMM commands), and the step within 10 % of that plus the other ops (norms, RoPE, attention
// over the short cache, SwiGLU: the documented fixed costs of docs/validation.md); the host's
// sampling and launch are what the 10 % leaves room for.
SOHUSIM_SYSTEMC_TEST(Inference, DecodeAtBatchOneIsWeightStreamingPlusFixedCosts) {
  const Sohu1Run run = run_llama3_8b(1, 128, 4);
  const workloads::ModelConfig& m = run.model;
  const workloads::ScenarioResult& r = run.result;
  Simulator& sim = *run.sim;
  const double peak = sim.system().device(0).params().hbm_peak_bytes_per_s;
  const auto op_seconds = [&](const std::string& name) {
    for (const workloads::OpTime& t : r.decode.ops)
      if (t.name == name) return t.seconds;
    ADD_FAILURE() << "no op " << name;
    return 0.0;
  };
  const double head_dim = static_cast<double>(m.hidden) / m.heads;
  const double w_small = static_cast<double>(m.hidden) * m.kv_heads * head_dim;  // k_proj, FP8
  const double w_large = static_cast<double>(m.hidden) * 2.0 * m.intermediate;   // gate_up_proj
  const double t_small = op_seconds("L0.attn.k_proj"), t_large = op_seconds("L0.mlp.gate_up_proj");
  const double rate = (w_large - w_small) / (t_large - t_small);
  const double fixed = t_small - w_small / rate;
  EXPECT_GT(rate, 0.8 * peak);
  EXPECT_LT(rate, peak);
  EXPECT_GT(fixed, 0.0);
  EXPECT_LT(fixed, 5e-6);
  double gemm = 0, other = 0;
  unsigned n = 0;
  for (const workloads::OpTime& t : r.decode.ops) {
    if (t.kind == workloads::OpKind::Gemm || t.kind == workloads::OpKind::LmHead) {
      gemm += t.seconds;
      ++n;
    } else {
      other += t.seconds;
    }
  }
  const double weights = static_cast<double>(m.matmul_parameter_count());  // FP8: one byte each
  const double predicted = weights / rate + n * fixed;
  EXPECT_NEAR(gemm, predicted, 0.10 * predicted)
      << "GEMMs " << gemm * 1e3 << " ms, streaming model " << predicted * 1e3 << " ms";
  EXPECT_NEAR(r.tpot_seconds, predicted + other, 0.10 * (predicted + other));
  EXPECT_GT(r.tpot_seconds, weights / peak);
}

}  // namespace
}  // namespace sohusim::platform
