#pragma once
// DeviceStepRunner: the serving loop's steps (serving_loop.hpp) run on the simulated devices
// of one host, through the runtime and driver, as a serving engine's model runner does.
//
//   set-up    per tensor-parallel rank: one memory plan holding the weights, the activation
//             buffers of the largest step (max_tokens rows) and a KV pool of what is left of
//             `memory_utilization` of HBM (vLLM's gpu_memory_utilization), cut into blocks of
//             `block_tokens` positions: kv_cache() gives the scheduler its KvCacheOptions.
//   a step    swaps first (swap_out_bytes device -> host, swap_in_bytes host -> device,
//             through the DMA path of the memcpys), then one forward pass over the step's
//             sequences (build_step_graph: all decodes as one attention group over their
//             mean context, each prompt chunk a group of its own), compiled per rank and
//             launched on every rank's stream; the host copies the sampled rows' logits back
//             and samples (greedy argmax on the host). The step ends when the host has the
//             tokens.
//   reuse     a step's cost depends on its composition. With `reuse`, the shape is rounded
//             up to buckets (token counts and contexts to 1/64 of their power of two, above
//             64) and the first step of each bucketed shape is simulated; later steps of the
//             same shape cost what it cost, and the host's clock moves by that much without
//             running the devices (device counters then cover the simulated steps only).
//             Without reuse, every step's exact shape is simulated.
//
// Time: the loop's seconds count from the runner's construction (after set-up): run(plan,
// t) first lets the host wait until t if it is earlier (no request to serve), so arrivals
// and simulated time agree. Timing mode only.
#include <cstdint>
#include <map>
#include <vector>

#include "sohusim/driver/runtime.hpp"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/kv_block_manager.hpp"
#include "sohusim/workloads/model_config.hpp"
#include "sohusim/workloads/serving_loop.hpp"

namespace sohusim::workloads {

struct DeviceServingOptions {
  driver::DType dtype = driver::DType::Fp8E4M3;
  unsigned tp = 0;                  // tensor-parallel degree; 0: every device of the host
  std::vector<unsigned> c2c_index;  // runtime device i's chip-to-chip index (default: i)
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::MeshAuto;
  unsigned max_batch = 64;          // sequences in a step (sizes the head's buffers)
  std::uint32_t max_tokens = 8192;  // rows in a step (sizes the activation buffers)
  std::uint32_t block_tokens = 16;  // KV block size
  double memory_utilization = 0.9;  // share of HBM for weights, activations and KV
  double kv_watermark = 0.01;       // KvCacheOptions::watermark
  std::uint64_t kv_blocks = 0;      // at most this many KV blocks (0: all that fit)
  bool reuse = true;                // reuse the cost of steps of the same bucketed shape
  void validate() const;            // std::invalid_argument naming the field
};

class DeviceStepRunner : public StepRunner {
 public:
  /// Plans and allocates every rank's memory. Throws std::invalid_argument when the model
  /// does not fit (with the numbers) or the options are bad.
  DeviceStepRunner(driver::Runtime& rt, const ModelConfig& m, const DeviceServingOptions& o);
  ~DeviceStepRunner() override;
  DeviceStepRunner(const DeviceStepRunner&) = delete;
  DeviceStepRunner& operator=(const DeviceStepRunner&) = delete;

  /// The KV pool each of `hbm_bytes.size()` ranks can hold, in rows (positions, a multiple
  /// of block_tokens; the smallest over the ranks) of `row_bytes` each. What the constructor
  /// allocates; callers check with it before simulating. Throws std::invalid_argument when
  /// the model does not fit (with the numbers) or the options are bad.
  struct PoolPlan {
    std::uint64_t rows = 0, row_bytes = 0;
  };
  static PoolPlan plan_pool(const ModelConfig& m, const DeviceServingOptions& o,
                            const std::vector<std::uint64_t>& hbm_bytes);

  /// The KV pool as the scheduler's block manager sees it.
  KvCacheOptions kv_cache() const;
  double run(const StepPlan& plan, double start_s) override;

  unsigned tp() const { return tp_; }
  std::uint64_t simulated_steps() const { return simulated_; }
  std::uint64_t reused_steps() const { return reused_; }
  std::uint64_t commands() const { return commands_; }
  /// Seconds of forward passes: all steps', and those of the steps simulated (the device
  /// counters' share). Their ratio scales what the counters saw to the whole run.
  double step_seconds() const { return step_seconds_; }
  double simulated_step_seconds() const { return simulated_seconds_; }
  std::uint64_t weight_bytes() const { return plans_.front().weight_bytes; }  // per device
  std::uint64_t kv_bytes() const { return plans_.front().kv_bytes; }          // per device
  /// Host time of the loop's t = 0, ns.
  std::uint64_t origin_ns() const { return origin_ns_; }

 private:
  struct Shape;
  Shape shape_of(const StepPlan& plan) const;
  double simulate(const Shape& s);  // seconds
  void swap(std::uint64_t out_bytes, std::uint64_t in_bytes);

  driver::Runtime& rt_;
  const ModelConfig& m_;
  DeviceServingOptions o_;
  unsigned tp_ = 1, eb_ = 1;
  std::uint64_t pool_rows_ = 0, row_bytes_ = 0;
  std::vector<MemoryPlan> plans_;
  std::vector<driver::Stream> streams_;
  std::vector<driver::HostBuffer> logits_, staging_;
  std::uint32_t tag_ = 1;
  std::uint64_t origin_ns_ = 0, simulated_ = 0, reused_ = 0, commands_ = 0;
  double step_seconds_ = 0, simulated_seconds_ = 0;
  struct Cost {
    double seconds = 0;
    unsigned samples = 0;
  };
  std::map<std::vector<std::uint64_t>, Cost> costs_;  // bucketed shape -> its cost
};

}  // namespace sohusim::workloads
