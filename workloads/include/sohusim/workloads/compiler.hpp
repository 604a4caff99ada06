#pragma once
// Compiler: a rank's graph (graph.hpp) to the device command program that runs it.
//
// Placement (plan_memory): every tensor of the rank gets a region of device memory (HBM),
// in one block the runtime allocates: the weights (weight_tensors), the KV cache of every
// layer for `kv_capacity` positions of `batch` sequences, and the activation buffers sized
// for the largest step (the prefill's rows), plus a scratch buffer. A plan that does not
// fit the device throws std::invalid_argument with the numbers (weights, KV cache,
// activations, total, capacity).
//
// Lowering (compile), op by op, in graph order (a queue runs in order, so the order is the
// dependency chain; cross-device dependencies are the collectives' own send/receive
// matching):
//   Embedding   functional: one DMA_COPY per row from the token's table row (a gather);
//               timing: one DMA_COPY of the same bytes (the gather's traffic, without the
//               per-row commands). Learned positions: the same for the position rows into
//               `scratch`, then VECTOR ADD.
//   Norm/Final  VECTOR RMSNORM or LAYERNORM (gamma, or gamma|beta)
//   Gemm/LmHead GEMM with the bias / residual epilogue (both at once: GEMM with bias into
//               scratch, then VECTOR ADD, as the device takes one D operand)
//   Rope        VECTOR ROPE in place, position and rows-per-position from the op
//   Attention   ATTENTION over the position-major cache (a serving step's groups: from the
//               op's q row and cache row on; such graphs compile in timing mode only)
//   Swiglu/Gelu VECTOR SWIGLU / GELU;  Add  VECTOR ADD
//   AllReduce   over the chip-to-chip links (COLLECTIVE commands, eager: a SEND completes
//               once its data is on the link), one of
//               - OneShot (a full mesh): one COLLECTIVE ALL_REDUCE naming the D-1 peers:
//                 the whole buffer to each of them (all ports busy at once, one HBM read),
//                 then every peer's buffer added into one's own (one read, one write; the
//                 sum in device order, so every rank gets the same bits);
//               - TwoShot (a full mesh): the buffer in D chunks; reduce-scatter in one shot
//                 (SEND chunk j to rank j, then REDUCE_STEP each peer's copy of one's own
//                 chunk), then all-gather in one shot (SEND the reduced chunk to every peer,
//                 GATHER_STEP each peer's chunk into place). Each rank moves 2 (D-1)/D of the
//                 buffer instead of D-1 buffers, at twice the per-message latency;
//               - MeshAuto (a full mesh): OneShot up to kOneShotMaxBytes, TwoShot above, as
//                 NCCL-style libraries pick by message size (docs/workloads.md: measured);
//               - Ring (any ring): D-1 reduce-scatter steps (SEND + REDUCE_STEP) and D-1
//                 all-gather steps (SEND + GATHER_STEP) on D chunks, one link per direction.
//   Sample      on the host (not in the program): the runner copies the logits back.
//
// Data types: weights, activations and the KV cache are all in the run's data type; GEMMs
// accumulate in FP32 (the device's rule).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sohusim/driver/command.hpp"
#include "sohusim/workloads/graph.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::workloads {

struct Region {
  std::uint64_t offset = 0;  // from the block's base
  std::uint64_t bytes = 0;
};

struct MemoryPlan {
  std::unordered_map<std::string, Region> regions;  // tensor name -> region
  std::uint64_t weight_bytes = 0, kv_bytes = 0, activation_bytes = 0, total_bytes = 0;
  std::uint64_t base = 0;                                  // device address of the block once allocated
  std::uint64_t address(const std::string& tensor) const;  // base + offset; throws naming the tensor
};

/// Before any graph is built: throws std::invalid_argument (with the numbers) when the
/// rank's share of the matrix weights alone exceeds `hbm_bytes`, so that a model far too
/// large for the device, or a config with absurd sizes, is reported at once.
void check_weights_fit(const ModelConfig& m, const Shard& s, driver::DType dtype, std::uint64_t hbm_bytes);

/// Lays out one rank's tensors. `prefill` is the rank's largest graph (its activation
/// shapes size the buffers); `hbm_bytes` the device's capacity.
MemoryPlan plan_memory(const ModelConfig& m, const Shard& s, driver::DType dtype, const Graph& prefill,
                       std::uint64_t hbm_bytes);

enum class AllReduceAlgorithm { OneShot, TwoShot, MeshAuto, Ring };

/// MeshAuto's switch point: all-reduces of at most this many bytes per rank go one-shot.
inline constexpr std::uint64_t kOneShotMaxBytes = std::uint64_t{1} << 20;

struct CompileOptions {
  driver::DType dtype = driver::DType::Bf16;
  bool functional = false;              // per-row gathers (real data) instead of one bulk copy
  std::vector<unsigned> group_devices;  // tp rank -> chip-to-chip device index (all-reduce peers)
  std::uint32_t tag_base = 1;           // COLLECTIVE tags: tag_base, tag_base + 1, ...
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::MeshAuto;  // all but Ring need a full mesh
  std::vector<std::uint32_t> tokens;             // functional Embedding: the step's token ids, one per row
  int first_layer = 0, last_layer = -1;          // pipeline stage: layers [first, last]; -1: to the end
  bool with_embedding = true, with_head = true;  // pipeline stage: first / last stage parts
};

/// The program of one rank for one graph; ops_begin[i] is the index of op i's first command
/// (ops that emit nothing, e.g. Sample, have an empty range). Throws std::invalid_argument on
/// a graph/plan mismatch.
struct CompiledProgram {
  driver::Program program;
  std::vector<std::size_t> op_first;  // per graph op: first command index
  std::vector<std::size_t> op_count;  // per graph op: number of commands
  std::uint32_t next_tag = 0;
};
CompiledProgram compile(const Graph& g, const MemoryPlan& plan, const CompileOptions& opt);

}  // namespace sohusim::workloads
