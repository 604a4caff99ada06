#pragma once
// Synthetic weights for a model, from a seed, in the layout and naming of the graph
// (graph.hpp): the CPU reference computes with them, and the compiler uploads the same
// numbers to the device (sliced per tensor-parallel rank by shard_weights()).
//
// The generator, fixed so that any other program can reproduce it bit for bit:
//   - splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
//     2014): state += 0x9E3779B97F4A7C15; z = state; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9;
//     z = (z ^ z >> 27) * 0x94D049BB133111EB; return z ^ z >> 31.
//   - Each tensor has its own stream: the state starts at seed XOR fnv1a64(name), FNV-1a
//     64-bit over the bytes of the full-model tensor name (offset basis 0xCBF29CE484222325,
//     prime 0x100000001B3). Tensors therefore do not depend on each other or on order.
//   - Element i (row-major over the full-model shape) takes the i-th output x of its stream:
//     u = float(x >> 40) * 2^-23 - 1, a float in [-1, 1) on a grid of 2^-23 (exact), and
//     the element is the float expression  offset + scale * u  with
//       linear weights [K][N] and their biases   offset 0, scale float(1 / sqrt(K))
//       norm gamma (RMS [H]; LayerNorm row 0)    offset 1, scale 0.1f
//       LayerNorm beta (row 1 of [2][H])         offset 0, scale 0.1f  (row 1 continues the stream)
//       embed.tokens.weight, embed.positions.weight  offset 0, scale 1
//     A tied model's lm_head.weight [H][V] is the transpose of embed.tokens.weight [V][H]
//     and draws nothing.
//   - Weight matrices are row-major [in][out] = [K][N], the device GEMM's B operand.
//     mlp.gate_up_proj.weight is [H][2I] = [gate columns | up columns].
//
// A full model's weights take 4 bytes per parameter: fine for the test models, not for a 70B
// (which runs in timing mode, without data).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sohusim/workloads/graph.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::workloads {

struct WeightTensor {
  std::vector<std::uint64_t> shape;
  std::vector<float> data;  // row-major
};

struct Weights {
  std::map<std::string, WeightTensor> tensors;
  /// Throws std::out_of_range naming the tensor.
  const WeightTensor& at(const std::string& name) const;
  bool has(const std::string& name) const { return tensors.count(name) != 0; }
  std::uint64_t parameters() const;  // elements over all tensors
};

/// One step of splitmix64 (see above): advances `state` and returns the output.
std::uint64_t splitmix64(std::uint64_t& state);
/// FNV-1a, 64 bit, over the bytes of s.
std::uint64_t fnv1a64(const std::string& s);

/// One tensor of the full (tp_degree 1) model by name, as make_weights() would give it.
/// Throws std::invalid_argument for a name the model does not have.
WeightTensor make_weight(const ModelConfig& m, const std::string& name, std::uint64_t seed);

/// Every weight of the full model (tp_degree 1), named as weight_tensors(m, {}).
Weights make_weights(const ModelConfig& m, std::uint64_t seed);

/// One rank's weights, cut from the full model's: names and shapes as weight_tensors(m, s).
/// Column splits take this rank's column block (gate_up: its block of the gate columns and
/// of the up columns), row splits its row block; the LM head's padded vocabulary columns
/// are zero; everything else is copied.
Weights shard_weights(const Weights& full, const ModelConfig& m, const Shard& s);

}  // namespace sohusim::workloads
