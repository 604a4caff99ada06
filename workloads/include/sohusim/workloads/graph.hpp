#pragma once
// The operator graph of one forward pass (a prefill or a decode step) as ONE device of a
// tensor-parallel group runs it: a flat list of operators in execution order and the named
// tensors they read and write. The compiler lowers it to device commands; performance
// tools sum its costs (totals()).
//
// Conventions the compiler and the device rely on:
//   - Activation rows are POSITION-MAJOR: row r = (token position t, sequence b) with
//     r = t * batch + b. Every activation is [rows = q_len * batch][cols], row-major. The
//     rows of one position are therefore contiguous, which is what makes the two below work.
//   - KV cache, per layer: K and V each [capacity][batch][kv_heads_local][head_dim],
//     position-major (one "cache row" = one (position, sequence) pair of kv_heads_local *
//     head_dim elements). A step's new K/V rows for all sequences are contiguous: positions
//     kv_len - q_len .. kv_len - 1, i.e. cache rows (kv_len - q_len) * batch onwards
//     (Op::out_row_offset). A decode step writes `batch` rows at position kv_len - 1; a
//     prefill writes positions 0 .. q_len - 1.
//   - Q, K and V are three separate GEMMs (x Wq, x Wk, x Wv); K and V write straight into the
//     cache at the current position, and RoPE then rotates those K rows in place.
//   - RoPE applies to Q (in place) and to the new K rows, rows sharing a position in groups
//     of `batch` (Op::group; driver VectorDesc::rope_group): row r has position
//     Op::position + r / group. Pairs are the device's (x[2i], x[2i+1]) of each head
//     (device/compute/kernels.hpp); only the first rope.rotary_dim dimensions of each head rotate
//     (gpt_neox: 25%; the other families: all).
//   - Attention: Q [rows][q_heads_local * head_dim], the cache as above, output like Q.
//     Query i of a sequence sits at position kv_len - q_len + i and (causal) sees keys
//     0..that position; grouped-query: q head h reads kv head h / (q_heads / kv_heads).
//   - MLP, gated (SwiGLU): ONE gate_up GEMM writes [rows][2 * intermediate_local] =
//     [gate | up] per row (the weight is [hidden][gate cols | up cols] of this rank), which
//     is exactly the device's Swiglu vector input; the Swiglu op writes
//     [rows][intermediate_local]. Plain (GELU): fc1 with the GELU in its epilogue (or a
//     separate Gelu op when BuildOptions::fuse_gelu is false), then fc2.
//   - Weights are stored [in][out] = [K][N], the device GEMM's B operand, row-major; the
//     LM head is [hidden][vocab_local]. Norm weights: RMS [hidden] (gamma); Layer
//     [2][hidden] (gamma then beta: the device's LayerNorm y operand).
//   - Residual: with tp_degree == 1 (and fuse_residual) the residual add is the epilogue of
//     o_proj / down_proj (fc2): C = A B (+ bias) + hidden, written onto `hidden` in place.
//     With TP those GEMMs write a partial sum to `partial`; an AllReduce sums it over the
//     group and an Add puts it onto `hidden`. A row-split GEMM's bias is added by rank 0
//     only, so that the all-reduce counts it once (the other ranks do not hold it).
//   - gpt_neox parallel residual: x + attn(ln1 x) + mlp(ln2 x). Both norms are taken first
//     (normed, normed2). With TP the MLP's last GEMM accumulates onto the attention's partial
//     sum (residual epilogue on `partial`), so one AllReduce per layer serves both.
//   - Tensor parallel (Megatron): q heads, kv heads and the MLP's intermediate dimension are
//     split evenly (a degree that does not divide them is an error; kv_heads < tp_degree is
//     an error too: no KV replication); QKV and gate/up (fc1) are column-split, O and down
//     (fc2) row-split. The LM head is column-split over the vocabulary padded up to a
//     multiple of tp_degree (padded columns have zero weights; the host drops them); logits
//     are gathered on the host, which samples (greedy argmax). Embeddings, norms and biases
//     of row-split GEMMs are replicated.
//   - Only the last position's `batch` rows go through the final norm and the LM head
//     (rows (q_len - 1) * batch onwards of `hidden`: Op::in_row_offset).
//   - Activation tensors are scratch buffers shared by all layers (layer -1); weights and KV
//     caches carry their layer.
//
// Costs per op are element counts: multiply by the data type's bytes (element_bytes()).
// FLOPs: GEMM 2mkn, plus one per output element for a bias and for a residual, 8 for a GELU
// epilogue; attention 4 * head_dim per (query, visible key, head) pair (QK^T and PV) plus
// 5 per score for the softmax; vector ops per element: RMSNorm 4, LayerNorm 7, RoPE 3 per
// rotated element, SwiGLU 5 per output, GELU 8, Add 1; embedding 1 per element when a
// position table is added; sampling 1 per logit.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sohusim/driver/command.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::workloads {

struct Shard {
  unsigned tp_degree = 1, tp_rank = 0;
};

enum class Phase { Prefill, Decode };

enum class TensorKind { Weight, Activation, KvCache, Logits, Tokens };
/// How a weight is cut across tensor-parallel ranks.
enum class Split { Replicated, Columns, Rows };

const char* to_string(Phase p);       // "prefill", "decode"
const char* to_string(TensorKind k);  // "weight", "activation", "kv_cache", "logits", "tokens"
const char* to_string(Split s);       // "replicated", "columns", "rows"

struct Tensor {
  std::string name;  // e.g. "L3.attn.q_proj.weight", "L3.k_cache", "hidden"
  TensorKind kind = TensorKind::Activation;
  std::vector<std::uint64_t> shape;  // this rank's shape, row-major
  int layer = -1;                    // -1: not per layer
  Split split = Split::Replicated;   // weights only
  std::string tied_to;               // lm_head.weight of a tied model: "embed.tokens.weight"
                                     // (holds that table's transposed slice)
  std::uint64_t elements() const;
};

enum class OpKind { Embedding, Norm, Gemm, Rope, Attention, Swiglu, Gelu, Add, AllReduce, FinalNorm, LmHead, Sample };
constexpr unsigned kNumOpKinds = 12;
const char* to_string(OpKind k);  // "embedding", "norm", "gemm", ...

struct GemmShape {
  std::uint64_t m = 0, k = 0, n = 0;
  bool bias = false;                    // add bias[n] (inputs[2])
  bool residual = false;                // add a residual [m][n] (the last input) after the activation
  driver::Act act = driver::Act::None;  // epilogue activation (fc1: Gelu when fused)
};

struct VectorShape {
  std::uint64_t rows = 0, cols = 0;  // Swiglu: cols is the input width (2 * intermediate_local)
};

struct AttentionShape {
  unsigned batch = 0, q_len = 0, kv_len = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = false;
};

struct RopeParams {
  unsigned head_dim = 0;    // elements per head in a row
  unsigned rotary_dim = 0;  // leading elements of each head that rotate (== head_dim but gpt_neox)
  float theta = 0.0f;       // base (the device's ROPE scalar)
};

struct Op {
  OpKind kind = OpKind::Gemm;
  std::string name;  // "embed", "L3.attn_norm", "L3.attn.q_proj", "lm_head", ...
  int layer = -1;    // -1 for embedding, final norm, LM head, sampling

  GemmShape gemm;                      // Gemm, LmHead
  VectorShape vec;                     // Embedding, Norm, FinalNorm, Rope, Swiglu, Gelu, Add, AllReduce, Sample
  AttentionShape attn;                 // Attention
  RopeParams rope;                     // Rope
  NormKind norm = NormKind::Rms;       // Norm, FinalNorm
  float eps = 0.0f;                    // Norm, FinalNorm
  bool learned_positions = false;      // Embedding: also add rows of embed.positions.weight
  std::uint64_t position = 0;          // Embedding, Rope: position of row 0 (kv_len - q_len)
  unsigned group = 1;                  // Embedding, Rope: consecutive rows sharing a position (batch)
  std::uint64_t out_row_offset = 0;    // first row written (k/v_proj, K RoPE: a KV cache row)
  std::uint64_t in_row_offset = 0;     // first row read (FinalNorm: of `hidden`; Attention: of q and attn)
  std::uint64_t cache_row_offset = 0;  // Attention: first KV cache row read
  bool on_host = false;                // Sample: runs on the host after the logits gather

  // Costs, in elements (multiply by the data type's bytes).
  std::uint64_t flops = 0;
  std::uint64_t weight_elems = 0;    // weights read (Embedding: the gathered rows only)
  std::uint64_t act_elems = 0;       // activations read + written
  std::uint64_t kv_read_elems = 0;   // KV cache read
  std::uint64_t kv_write_elems = 0;  // KV cache written
  std::uint64_t comm_elems = 0;      // AllReduce payload per rank

  std::vector<std::string> inputs;  // tensor names; Gemm: A, B(weight)[, bias][, residual]
  std::vector<std::string> outputs;
};

struct Graph {
  std::string model;  // ModelConfig::name
  Shard shard;
  Phase phase = Phase::Decode;
  unsigned batch = 0, q_len = 0, kv_len = 0, kv_capacity = 0;
  unsigned q_heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;  // this rank's
  std::uint64_t hidden = 0, vocab = 0, vocab_padded = 0, vocab_local = 0;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  bool ragged = false;  // a serving step (build_step_graph): sequences of different lengths

  std::uint64_t rows() const { return static_cast<std::uint64_t>(q_len) * batch; }
  const Tensor* find(const std::string& name) const;
  /// Throws std::out_of_range naming the tensor.
  const Tensor& tensor(const std::string& name) const;
};

struct BuildOptions {
  unsigned kv_capacity = 0;   // positions the KV cache holds; 0: the model's max_positions
  bool fuse_residual = true;  // residual add as GEMM epilogue when tp_degree == 1
  bool fuse_gelu = true;      // GELU as fc1's epilogue
};

/// Checks a shard against a model: tp_degree >= 1, tp_rank < tp_degree, and tp_degree
/// dividing heads, kv_heads (and not exceeding them) and intermediate. Throws
/// std::invalid_argument naming the numbers.
void check_shard(const ModelConfig& m, const Shard& s);

/// The weights one rank holds, in graph order and naming (see the conventions above).
std::vector<Tensor> weight_tensors(const ModelConfig& m, const Shard& s);

/// The graph of one forward pass on one rank. Prefill: q_len = prompt length (or a chunk),
/// kv_len = positions in the cache after the step (q_len <= kv_len). Decode: q_len = 1,
/// kv_len = position + 1. Throws std::invalid_argument on a bad shard or sizes.
Graph build_graph(const ModelConfig& m, const Shard& s, Phase phase, unsigned batch, unsigned q_len, unsigned kv_len,
                  const BuildOptions& opt = {});

/// Part of a serving step: `batch` sequences that each compute `q_len` new positions and
/// attend over `kv_len` positions in all, their cache rows stored from `cache_row` of the
/// KV pool on (position-major within the group, as in a uniform graph).
struct StepGroup {
  unsigned batch = 1, q_len = 1, kv_len = 1;
  std::uint64_t cache_row = 0;
};

/// The graph of one serving step (continuous batching: prompt chunks and decodes of
/// sequences of different lengths in one forward pass). Every op but attention sees the
/// step's rows as one matrix (rows = the groups' batch x q_len, in group order), so the
/// weights are read once; each group gets its own Attention op (causal when q_len > 1) over
/// its rows of q and its cache rows; the K/V projections write the step's rows into the
/// pool from the first group's cache_row on; `sampled` rows go through the final norm and
/// the LM head. The KV cache of every layer is one pool of `pool_rows` rows
/// ([pool_rows][1][kv_heads][head_dim]); a group's rows must lie inside it. Timing mode
/// only (Graph::ragged; the compiler's functional path refuses it). Throws
/// std::invalid_argument naming the bad group or count.
Graph build_step_graph(const ModelConfig& m, const Shard& s, const std::vector<StepGroup>& groups, unsigned sampled,
                       std::uint64_t pool_rows, const BuildOptions& opt = {});

struct Cost {
  std::uint64_t ops = 0, flops = 0, weight_elems = 0, act_elems = 0, kv_read_elems = 0, kv_write_elems = 0,
                comm_elems = 0;
  Cost& operator+=(const Cost& o);
};

struct GraphTotals : Cost {
  std::map<OpKind, Cost> per_kind;
  std::uint64_t weight_bytes(driver::DType t) const { return weight_elems * element_bytes(t); }
  std::uint64_t act_bytes(driver::DType t) const { return act_elems * element_bytes(t); }
  std::uint64_t kv_read_bytes(driver::DType t) const { return kv_read_elems * element_bytes(t); }
  std::uint64_t kv_write_bytes(driver::DType t) const { return kv_write_elems * element_bytes(t); }
  std::uint64_t comm_bytes(driver::DType t) const { return comm_elems * element_bytes(t); }
};

GraphTotals totals(const Graph& g);

}  // namespace sohusim::workloads
