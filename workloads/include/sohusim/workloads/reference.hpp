#pragma once
// CPU reference forward pass: what the device must compute for a model, with the weights of
// make_weights(), in plain C++ float. It is the functional mode's oracle.
//
// It follows the graph of build_graph() for tp_degree 1 with the default BuildOptions op for
// op, and each op computes exactly the device kernel's math (device/compute/kernels.hpp), in FP32:
//   RMSNorm   x / sqrt(mean(x^2) + eps) * gamma
//   LayerNorm (x - mean) / sqrt(var + eps) * gamma + beta  (population variance, two-pass)
//   RoPE      pairs (x[2i], x[2i+1]) of each head rotated by pos * theta^(-2i/rotary_dim),
//             angles in double, cos/sin rounded to float; row r at position start + r / batch
//             (rotary_dim = head_dim except for gpt_neox, where only the leading rotary_dim
//             elements of a head rotate: the device kernel has no partial rotation yet)
//   Attention softmax(Q K^T / sqrt(head_dim)) V per sequence and head, causal, max-subtracted,
//             probabilities normalised before the product with V; grouped-query heads
//   GEMM      act(A W + bias) + residual; GELU is the tanh approximation; SwiGLU
//             silu(gate) * up with silu(x) = x / (1 + exp(-x))
// Results match the device up to FP32 summation order (the device uses Eigen's blocked
// product), not bit for bit.
//
// Data type: with BF16 or FP16 every weight is rounded once to that type, and every op's
// output is rounded to it (round to nearest, ties to even), as the device encodes each
// command's output to its output type. Which outputs those are follows the graph: the
// residual add is inside the o_proj/down (fc2) GEMM, the GELU inside fc1; the embedding's
// token rows are copied (a gpt2 position row is added, then rounded); logits are rounded too.
// The device's GEMM takes one D operand (a bias row or a residual), so a GEMM with both
// (gpt2, gpt_neox: o_proj, fc2) is the GEMM with its bias, rounded, then a vector Add, rounded.
// FP8 is not supported here (the device would need per-tensor scales).
//
// Families: llama, mistral, qwen2 (RMSNorm, RoPE, SwiGLU, q/k/v biases when the model has
// them), gpt2 (LayerNorm, learned positions, GELU, biases, tied LM head) and gpt_neox
// (partial RoPE, parallel residual). Not modelled: sliding windows, rope_scaling.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sohusim/driver/command.hpp"
#include "sohusim/workloads/model_config.hpp"
#include "sohusim/workloads/weights.hpp"

namespace sohusim::workloads {

/// x rounded to the nearest value of t (ties to even; overflow gives +-inf; FP32: x itself).
/// Throws std::invalid_argument for the FP8 types.
float round_to(driver::DType t, float x);

using Logits = std::vector<std::vector<float>>;  // [batch][vocab]

/// The reference's ops, one device kernel each, FP32, no rounding (exposed so that device
/// kernels can be checked op by op). Row-major buffers; rows position-major (graph.hpp).
namespace ref {
/// c[m][n] = act(a[m][k] w[k][n] + bias) + residual; bias, residual may be null; c may be residual.
void gemm(const float* a, const float* w, const float* bias, bool gelu_act, const float* residual, float* c,
          std::size_t m, std::size_t k, std::size_t n);
void rms_norm(const float* x, const float* gamma, float eps, float* out, std::size_t rows, std::size_t cols);
/// gamma_beta: gamma[cols] then beta[cols].
void layer_norm(const float* x, const float* gamma_beta, float eps, float* out, std::size_t rows, std::size_t cols);
/// In place on rows x cols (heads of head_dim side by side); row r is at position
/// `position + r / group`; pair i < rotary_dim / 2 of each head is (x[2i], x[2i+1]), rotated by
/// position * theta^(-2i / rotary_dim).
void rope(float* x, std::size_t rows, std::size_t cols, unsigned head_dim, unsigned rotary_dim, float theta,
          std::uint64_t position, unsigned group);
float gelu(float x);  // tanh approximation
float silu(float x);  // x / (1 + exp(-x))
/// out[r][j] = silu(gate_up[r][j]) * gate_up[r][inter + j].
void swiglu(const float* gate_up, float* out, std::size_t rows, std::size_t inter);
/// Causal attention, position-major: q and o [q_len * batch][q_heads * head_dim]; k and v
/// [kv_len * batch][kv_heads * head_dim] (the cache's first kv_len positions). Query t of
/// sequence b sits at position kv_len - q_len + t and sees keys 0..that position.
void attention(const float* q, const float* k, const float* v, float* o, unsigned batch, unsigned q_len,
               unsigned kv_len, unsigned q_heads, unsigned kv_heads, unsigned head_dim);
}  // namespace ref

class Reference {
 public:
  /// Checks that `weights` holds every tensor of weight_tensors(model, {}) with its shape.
  Reference(ModelConfig model, const Weights& weights, driver::DType dtype = driver::DType::Fp32);

  /// Starts over (empties the KV cache) and runs a prompt: tokens[b] is sequence b's prompt,
  /// all of one length. Returns the logits of each sequence's last position.
  Logits prefill(const std::vector<std::vector<std::uint32_t>>& tokens);

  /// One decode step: next_tokens[b] is appended to sequence b (batch as in prefill).
  Logits decode(const std::vector<std::uint32_t>& next_tokens);

  unsigned batch() const { return batch_; }
  unsigned position() const { return pos_; }  // positions in the cache
  const ModelConfig& model() const { return m_; }
  driver::DType dtype() const { return dtype_; }

 private:
  // Runs q_len positions of `tokens` (position-major, q_len * batch_ ids) from pos_ on.
  Logits step(const std::vector<std::uint32_t>& tokens, unsigned q_len);
  const std::vector<float>& w(const std::string& name) const;
  void round_all(std::vector<float>& v) const;

  ModelConfig m_;
  Weights w_;
  driver::DType dtype_;
  unsigned batch_ = 0, pos_ = 0;
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer, [pos][batch][kv_heads][head_dim]
};

/// Greedy sampling: the index of each row's largest logit (the lowest index on ties).
std::vector<std::uint32_t> greedy(const Logits& logits);

}  // namespace sohusim::workloads
