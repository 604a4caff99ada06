#pragma once
// Scenario: one inference request (batch, prompt length, generation length) run end to end
// through the runtime, the way a serving stack runs it, and its metrics.
//
//   setup    per device of the tensor-parallel group: shard check, memory plan (weights,
//            KV cache for prompt + gen positions, activations), one allocation; on request
//            the weights are uploaded over PCIe (memcpy_h2d from a pinned staging buffer,
//            the bulk path) and that time is reported as load time.
//   prefill  every rank's prefill program is launched on its stream, the host waits, copies
//            each rank's logits slice back and samples (greedy, on the host): the first
//            output token. TTFT = request start to that token.
//   decode   gen - 1 steps of the same (one position each, KV cache grows); TPOT = mean
//            step time.
//   pipeline with several hosts (stages), each host runs the layers of its stage on its own
//            tensor-parallel group; activations go device -> host -> network -> host ->
//            device between stages, and the sampled tokens go back to the first stage.
//
// Tokens per second are given both ways, named so: `tokens_per_second` counts input and
// output tokens (batch x (prompt + gen)) over the end-to-end time; `output_tokens_per_second`
// counts generated tokens only (batch x gen).
//
// Per-op breakdown: the first prefill and the last decode step of rank 0 carry a TIMESTAMP
// command after every op (device time, written to host memory); op time = difference of
// consecutive stamps. Those two steps therefore include the stamps' own cost (one small
// command each); TPOT is taken over the other decode steps when there are any.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sohusim/driver/runtime.hpp"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/graph.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::workloads {

struct ScenarioOptions {
  unsigned batch = 1, prompt = 128, gen = 16;
  driver::DType dtype = driver::DType::Fp8E4M3;
  unsigned tp = 0;                                  // tensor-parallel degree; 0: every device of the host
  bool upload_weights = false;                      // simulate the weight upload (bulk PCIe) and report it
  bool functional = false;                          // real data: seeded weights, real tokens, logits returned
  std::uint64_t seed = 1;                           // weights and (when prompts is empty) prompt tokens
  std::vector<std::vector<std::uint32_t>> prompts;  // [batch][prompt] token ids (functional)
  bool profile_ops = true;
  /// Timing studies of the steady state: no prefill step; the KV cache is taken as holding
  /// the prompt already and every step is a decode (gen steps from position prompt on).
  /// TTFT is then 0 and tokens/s count only the generated tokens' work.
  bool decode_only = false;
  /// Tensor-parallel all-reduce: all but Ring need every rank linked to every other (a mesh).
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::MeshAuto;
  /// Called after each step ("prefill"/"decode", step, steps) e.g. for a progress line.
  std::function<void(const std::string&, unsigned, unsigned)> progress;
};

/// Pipeline parallelism across hosts: this host's stage and how it reaches its neighbours.
struct PipelineStage {
  unsigned stage = 0, stages = 1;
  std::function<void(unsigned to_stage, std::uint64_t bytes, std::uint32_t tag)> send;
  std::function<void(unsigned from_stage, std::uint64_t bytes, std::uint32_t tag)> recv;
};

struct OpTime {
  std::string name;
  OpKind kind = OpKind::Gemm;
  int layer = -1;
  double seconds = 0;
  std::uint64_t start_device_ns = 0;  // the stamp before the op, in the device's own time
  std::uint64_t end_device_ns = 0;    // the stamp after it
  Cost cost;                          // the op's graph cost (elements; Cost::ops = 1)
  std::vector<std::size_t> deps;      // indexes into Breakdown::ops of the ops that wrote its inputs
};

struct Breakdown {
  std::vector<OpTime> ops;                 // rank 0, in program order
  std::map<std::string, double> per_kind;  // seconds per OpKind name
  std::vector<double> per_layer;           // seconds per layer (this stage's layers)
  double other_seconds = 0;                // embedding, final norm, LM head
};

struct ScenarioResult {
  std::string model;
  unsigned batch = 0, prompt = 0, gen = 0, tp = 0, stages = 1, devices = 0;
  driver::DType dtype = driver::DType::Bf16;
  double load_seconds = 0;                                             // weight upload (0 unless asked)
  double load_start_seconds = 0;                                       // when it started (host time)
  std::uint64_t weight_upload_bytes = 0;                               // over PCIe, per device
  double ttft_seconds = 0;                                             // request start -> first token on the host
  double tpot_seconds = 0;                                             // mean decode step
  double e2e_seconds = 0;                                              // request start -> last token
  double tokens_per_second = 0;                                        // (prompt + gen) x batch / e2e
  double output_tokens_per_second = 0;                                 // gen x batch / e2e
  std::vector<double> step_seconds;                                    // prefill, then each decode step
  std::vector<double> step_start_seconds;                              // host time each step began
  std::vector<bool> step_profiled;                                     // the step's ops are in prefill/decode
  std::vector<GraphTotals> step_totals;                                // rank 0's graph cost of each step
  std::uint64_t hbm_used_bytes = 0;                                    // largest over this host's devices
  std::uint64_t weight_bytes = 0, kv_bytes = 0, activation_bytes = 0;  // per device (rank 0's plan)
  std::uint64_t commands = 0;                                          // submitted by this host
  Breakdown prefill, decode;
  std::vector<std::vector<std::uint32_t>> tokens;       // [batch][gen] generated ids (functional)
  std::vector<std::vector<std::vector<float>>> logits;  // functional: per step [batch][vocab]
};

/// Runs the request on this host's devices (`rt`). `c2c_index[i]` is runtime device i's
/// chip-to-chip index (the COLLECTIVE peer numbering); `stage` describes pipeline
/// parallelism (default: one stage). Throws std::invalid_argument for inputs that cannot
/// run (with the numbers) and driver::DriverError subclasses for device failures.
ScenarioResult run_scenario(driver::Runtime& rt, const ModelConfig& m, const ScenarioOptions& o,
                            const std::vector<unsigned>& c2c_index, const PipelineStage& stage = {});

/// Element encoding of the run's data types (FP32, BF16, FP16; round to nearest even).
void encode_elements(driver::DType t, const float* in, std::size_t n, std::uint8_t* out);
void decode_elements(driver::DType t, const std::uint8_t* in, std::size_t n, float* out);

}  // namespace sohusim::workloads
