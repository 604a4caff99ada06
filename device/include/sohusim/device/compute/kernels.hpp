#pragma once
// Compute kernels of the functional mode: what GEMM, ATTENTION and VECTOR commands compute,
// on float buffers. The device decodes its operands to float (numerics.hpp), calls these,
// and encodes the results to the command's output data type; that encode is the one and
// only rounding to the output type. Inside a kernel everything is FP32 (products, sums,
// softmax statistics), like accelerators that accumulate in FP32 and round in the epilogue;
// results therefore match a low-precision device up to FP32 summation order, not bit for bit.
//
// Buffers are packed row-major (C order) float arrays; shapes are given in elements.
// Outputs must not overlap inputs, except where a function says otherwise.
// Every function checks its arguments and throws std::invalid_argument naming the field and
// the allowed range; nothing is computed then.
//
// Conventions:
//   - GELU (GEMM epilogue and VectorOp::Gelu) is the tanh approximation
//     0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Hendrycks & Gimpel, "Gaussian Error
//     Linear Units", 2016; PyTorch's gelu(approximate="tanh")), SiLU is x * sigmoid(x).
//   - Attention's causal mask puts the queries at the END of the key sequence, so one set of
//     rules covers prefill (q_len == kv_len: lower triangle) and decode with a KV cache
//     (q_len == 1: the query sees every key).
//   - RoPE rotates interleaved pairs (x[2i], x[2i+1]) of each head: the GPT-J / Meta LLaMA
//     reference convention (complex multiplication of adjacent pairs). Hugging Face's
//     "rotate_half" convention pairs x[i] with x[i + head_dim/2] instead; weights converted
//     between the two are permuted accordingly, so the two are not interchangeable.
//     Angles are computed in double so that large positions keep their accuracy.
//
// Not modelled: dropout, attention masks other than causal, ALiBi, sliding windows, paged KV
// layouts, quantisation scales (the caller applies them), any low-precision accumulation.
#include <cstdint>

#include "sohusim/device/compute/ops.hpp"

namespace sohusim::device {

struct GemmArgs {
  std::uint64_t m = 0, k = 0, n = 0;  // C is m x n; the reduction is over k
  bool trans_a = false;               // A stored as K x M (op(A) = A^T) instead of M x K
  bool trans_b = false;               // B stored as N x K (op(B) = B^T) instead of K x N
  Activation act = Activation::None;
  bool bias = false;      // add bias[n] to every row before the activation
  bool residual = false;  // add residual[m x n] after the activation
};

/// C = act(op(A) op(B) + bias) + residual, FP32 accumulation, Eigen's blocked product.
/// bias (n floats) and residual (m x n) are read only when their flag is set (may be null
/// otherwise). c may be the same buffer as residual (in-place residual add); no other overlap.
void gemm(const GemmArgs& args, const float* a, const float* b, const float* bias, const float* residual, float* c);

struct AttentionArgs {
  std::uint32_t batch = 0, q_len = 0, kv_len = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = false;
  float scale = 0.0f;  // multiplies Q K^T; 0 selects 1/sqrt(head_dim)
};

/// Scaled dot-product attention, O = softmax(scale Q K^T [causal mask]) V per (batch, head).
/// Layouts, position-major (the register map's ATTENTION): Q and O [q_len][batch][q_heads]
/// [head_dim]; K and V [kv_len][batch][kv_heads][head_dim]. Grouped-query attention: q head h reads kv head h /
/// (q_heads / kv_heads), so q_heads must be a multiple of kv_heads (kv_heads == q_heads is MHA, 1 is MQA). Causal:
/// query i sits at position kv_len - q_len + i and sees keys 0..that position, so causal requires q_len <= kv_len.
/// Softmax subtracts the row maximum, in FP32.
void attention(const AttentionArgs& args, const float* q, const float* k, const float* v, float* o);

/// Vector-engine operation on a rows x cols matrix x (one row per token), writing out.
/// out may be the same buffer as x (in place); no other overlap.
///   RmsNorm   out = x / sqrt(mean(x^2) + eps) * gamma; y = gamma[cols]; scalar = eps >= 0.
///   LayerNorm out = (x - mean) / sqrt(var + eps) * gamma + beta, var the biased (population)
///             variance; y = gamma[cols] followed by beta[cols] (2*cols floats); scalar = eps.
///   Rope      aux = head_dim (even, divides cols; each row holds cols/head_dim heads),
///             row r is at position aux2 + r / group (group >= 1 rows share a position:
///             the batch, for position-major rows), scalar = theta base (> 0, e.g. 10000 for
///             LLaMA 2, 500000 for LLaMA 3). Pair i of each head, (x[2i], x[2i+1]), is
///             rotated by the angle pos * theta^(-2i/head_dim). y unused.
///   Silu, Gelu elementwise (see conventions above).
///   Swiglu    cols is the INPUT width and must be even: each input row is [gate | up], and
///             out has cols/2 columns: out[r][j] = silu(x[r][j]) * x[r][cols/2 + j].
///   Add       out = x + y, y rows x cols.
///   Scale     out = x * scalar.
///   Cast      out = x; the conversion to the output type is the caller's encode.
///   Softmax   per row, max-subtracted.
/// y, scalar, aux and aux2 are ignored by operations that do not use them (y may be null).
void vector_op(VectorOp op, std::uint32_t rows, std::uint32_t cols, const float* x, const float* y, float* out,
               float scalar, std::uint32_t aux, std::uint32_t aux2, std::uint32_t group = 1);

/// Number of output columns vector_op writes per row: cols / 2 for Swiglu, cols otherwise.
std::uint32_t vector_op_out_cols(VectorOp op, std::uint32_t cols);

}  // namespace sohusim::device
