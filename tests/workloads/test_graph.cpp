// The operator graph: op sequence and shapes for decode and prefill, tensor parallel shapes,
// tensor naming consistency, and the cost totals against 2 x parameters x tokens.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/workloads/graph.hpp"

namespace wl = sohusim::workloads;
using sohusim::driver::Act;
using sohusim::driver::DType;

namespace {

wl::ModelConfig load(const std::string& name) {
  return wl::load_model(name, {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
}

const wl::Op& op(const wl::Graph& g, const std::string& name) {
  for (const auto& o : g.ops) {
    if (o.name == name) return o;
  }
  throw std::out_of_range("no op " + name);
}

bool has_op(const wl::Graph& g, const std::string& name) {
  return std::any_of(g.ops.begin(), g.ops.end(), [&](const wl::Op& o) { return o.name == name; });
}

std::size_t count(const wl::Graph& g, wl::OpKind k) {
  return static_cast<std::size_t>(
      std::count_if(g.ops.begin(), g.ops.end(), [&](const wl::Op& o) { return o.kind == k; }));
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Every tensor an op names exists, and the GEMMs' shapes agree with their weights.
void check_consistent(const wl::Graph& g) {
  std::set<std::string> names;
  for (const auto& t : g.tensors) EXPECT_TRUE(names.insert(t.name).second) << "duplicate tensor " << t.name;
  for (const auto& o : g.ops) {
    for (const auto& n : o.inputs) EXPECT_TRUE(names.count(n)) << o.name << " reads unknown " << n;
    for (const auto& n : o.outputs) EXPECT_TRUE(names.count(n)) << o.name << " writes unknown " << n;
    if (o.kind == wl::OpKind::Gemm || o.kind == wl::OpKind::LmHead) {
      const auto& w = g.tensor(o.inputs.at(1));
      ASSERT_EQ(w.kind, wl::TensorKind::Weight) << o.name;
      EXPECT_EQ(w.shape, (std::vector<std::uint64_t>{o.gemm.k, o.gemm.n})) << o.name;
      const auto& a = g.tensor(o.inputs.at(0));
      EXPECT_EQ(a.shape.back(), o.gemm.k) << o.name;
      if (o.gemm.bias) {
        EXPECT_EQ(g.tensor(o.inputs.at(2)).shape, (std::vector<std::uint64_t>{o.gemm.n})) << o.name;
      }
      const auto& c = g.tensor(o.outputs.at(0));
      if (c.kind == wl::TensorKind::KvCache) {
        EXPECT_EQ(c.shape[2] * c.shape[3], o.gemm.n) << o.name;
        EXPECT_LE(o.out_row_offset + o.gemm.m, c.shape[0] * c.shape[1]) << o.name;
      } else {
        EXPECT_EQ(c.shape, (std::vector<std::uint64_t>{o.gemm.m, o.gemm.n})) << o.name;
      }
    }
  }
  // Every weight is used by some op.
  std::set<std::string> used;
  for (const auto& o : g.ops) used.insert(o.inputs.begin(), o.inputs.end());
  for (const auto& t : g.tensors) {
    if (t.kind == wl::TensorKind::Weight) {
      EXPECT_TRUE(used.count(t.name)) << "unused weight " << t.name;
    }
  }
}

}  // namespace

TEST(Graph, Llama3_8B_DecodeBatch4) {
  const auto m = load("llama-3-8b");
  const unsigned batch = 4, pos = 1023;
  const auto g = wl::build_graph(m, {}, wl::Phase::Decode, batch, 1, pos + 1);
  check_consistent(g);
  EXPECT_EQ(g.rows(), 4u);
  EXPECT_EQ(g.kv_capacity, 8192u);

  // Per layer: 2 norms, q/k/v/o + gate_up + down GEMMs, 2 RoPEs, attention, SwiGLU; residual
  // adds are GEMM epilogues (tp 1), so no Add and no AllReduce.
  EXPECT_EQ(count(g, wl::OpKind::Embedding), 1u);
  EXPECT_EQ(count(g, wl::OpKind::Norm), 64u);
  EXPECT_EQ(count(g, wl::OpKind::Gemm), 192u);
  EXPECT_EQ(count(g, wl::OpKind::Rope), 64u);
  EXPECT_EQ(count(g, wl::OpKind::Attention), 32u);
  EXPECT_EQ(count(g, wl::OpKind::Swiglu), 32u);
  EXPECT_EQ(count(g, wl::OpKind::Add), 0u);
  EXPECT_EQ(count(g, wl::OpKind::AllReduce), 0u);
  EXPECT_EQ(count(g, wl::OpKind::Gelu), 0u);
  EXPECT_EQ(count(g, wl::OpKind::FinalNorm), 1u);
  EXPECT_EQ(count(g, wl::OpKind::LmHead), 1u);
  EXPECT_EQ(count(g, wl::OpKind::Sample), 1u);
  EXPECT_EQ(g.ops.size(), 1u + 32u * 12u + 3u);

  // Execution order of one layer.
  const std::vector<std::string> order = {
      "L3.attn_norm", "L3.attn.q_proj", "L3.attn.k_proj", "L3.attn.v_proj",      "L3.attn.q_rope", "L3.attn.k_rope",
      "L3.attn.core", "L3.attn.o_proj", "L3.mlp_norm",    "L3.mlp.gate_up_proj", "L3.mlp.swiglu",  "L3.mlp.down_proj"};
  auto it = std::find_if(g.ops.begin(), g.ops.end(), [](const wl::Op& o) { return o.name == "L3.attn_norm"; });
  ASSERT_NE(it, g.ops.end());
  for (const auto& n : order) {
    EXPECT_EQ(it->name, n);
    EXPECT_EQ(it->layer, 3);
    ++it;
  }
  EXPECT_EQ(g.ops.front().name, "embed");
  EXPECT_EQ(g.ops.back().name, "sample");
  EXPECT_TRUE(g.ops.back().on_host);

  const auto& q = op(g, "L3.attn.q_proj");
  EXPECT_EQ(q.gemm.m, 4u);
  EXPECT_EQ(q.gemm.k, 4096u);
  EXPECT_EQ(q.gemm.n, 4096u);
  EXPECT_FALSE(q.gemm.bias);
  EXPECT_EQ(q.flops, 2ull * 4 * 4096 * 4096);
  EXPECT_EQ(q.weight_elems, 4096ull * 4096);
  const auto& k = op(g, "L3.attn.k_proj");
  EXPECT_EQ(k.gemm.n, 1024u);
  EXPECT_EQ(k.outputs[0], "L3.k_cache");
  EXPECT_EQ(k.out_row_offset, 1023u * 4u);  // position 1023, all 4 sequences
  EXPECT_EQ(k.kv_write_elems, 4u * 1024u);
  const auto& kr = op(g, "L3.attn.k_rope");
  EXPECT_EQ(kr.vec.rows, 4u);
  EXPECT_EQ(kr.vec.cols, 1024u);
  EXPECT_EQ(kr.position, 1023u);
  EXPECT_EQ(kr.group, 4u);
  EXPECT_EQ(kr.rope.head_dim, 128u);
  EXPECT_EQ(kr.rope.rotary_dim, 128u);
  EXPECT_FLOAT_EQ(kr.rope.theta, 500000.0f);
  EXPECT_EQ(kr.out_row_offset, 1023u * 4u);
  const auto& a = op(g, "L3.attn.core");
  EXPECT_EQ(a.attn.batch, 4u);
  EXPECT_EQ(a.attn.q_len, 1u);
  EXPECT_EQ(a.attn.kv_len, 1024u);
  EXPECT_EQ(a.attn.q_heads, 32u);
  EXPECT_EQ(a.attn.kv_heads, 8u);
  EXPECT_EQ(a.attn.head_dim, 128u);
  EXPECT_FALSE(a.attn.causal);
  EXPECT_EQ(a.kv_read_elems, 2ull * 4 * 1024 * 1024);
  const auto& o = op(g, "L3.attn.o_proj");
  EXPECT_TRUE(o.gemm.residual);
  EXPECT_EQ(o.outputs[0], "hidden");
  EXPECT_EQ(o.inputs.back(), "hidden");
  const auto& gu = op(g, "L3.mlp.gate_up_proj");
  EXPECT_EQ(gu.gemm.n, 2u * 14336u);
  const auto& sw = op(g, "L3.mlp.swiglu");
  EXPECT_EQ(sw.vec.cols, 2u * 14336u);
  const auto& down = op(g, "L3.mlp.down_proj");
  EXPECT_EQ(down.gemm.k, 14336u);
  EXPECT_EQ(down.gemm.n, 4096u);
  EXPECT_TRUE(down.gemm.residual);
  const auto& fn = op(g, "final_norm");
  EXPECT_EQ(fn.vec.rows, 4u);
  EXPECT_EQ(fn.in_row_offset, 0u);
  const auto& head = op(g, "lm_head");
  EXPECT_EQ(head.gemm.m, 4u);
  EXPECT_EQ(head.gemm.n, 128256u);

  const auto& cache = g.tensor("L31.v_cache");
  EXPECT_EQ(cache.kind, wl::TensorKind::KvCache);
  EXPECT_EQ(cache.layer, 31);
  EXPECT_EQ(cache.shape, (std::vector<std::uint64_t>{8192, 4, 8, 128}));
  EXPECT_EQ(g.tensor("L31.mlp.down_proj.weight").split, wl::Split::Rows);
  EXPECT_EQ(g.tensor("L0.attn.q_proj.weight").split, wl::Split::Columns);
  EXPECT_EQ(g.tensor("logits").kind, wl::TensorKind::Logits);
  EXPECT_EQ(g.tensor("hidden").layer, -1);
}

TEST(Graph, Llama3_8B_Prefill) {
  const auto m = load("llama-3-8b");
  const auto g = wl::build_graph(m, {}, wl::Phase::Prefill, 2, 128, 128);
  check_consistent(g);
  EXPECT_EQ(g.ops.size(), 1u + 32u * 12u + 3u);
  EXPECT_EQ(op(g, "L0.attn.q_proj").gemm.m, 256u);
  EXPECT_EQ(op(g, "L0.attn.k_proj").out_row_offset, 0u);
  EXPECT_EQ(op(g, "L0.attn.q_rope").position, 0u);
  const auto& a = op(g, "L0.attn.core");
  EXPECT_TRUE(a.attn.causal);
  EXPECT_EQ(a.attn.q_len, 128u);
  EXPECT_EQ(a.attn.kv_len, 128u);
  // Causal: query i sees i + 1 keys: 128 * 129 / 2 (query, key) pairs per sequence and head.
  EXPECT_EQ(a.flops, 2ull * 32 * (128 * 129 / 2) * (4 * 128 + 5));
  // Only the last position's rows reach the head.
  const auto& fn = op(g, "final_norm");
  EXPECT_EQ(fn.vec.rows, 2u);
  EXPECT_EQ(fn.in_row_offset, 127u * 2u);
  EXPECT_EQ(op(g, "lm_head").gemm.m, 2u);
  EXPECT_EQ(g.tensor("hidden").shape, (std::vector<std::uint64_t>{256, 4096}));
  EXPECT_EQ(g.tensor("logits").shape, (std::vector<std::uint64_t>{2, 128256}));

  // A prefill chunk after 64 cached positions writes from cache row 64 * batch.
  const auto c = wl::build_graph(m, {}, wl::Phase::Prefill, 2, 32, 96);
  EXPECT_EQ(op(c, "L5.attn.v_proj").out_row_offset, 64u * 2u);
  EXPECT_EQ(op(c, "L5.attn.q_rope").position, 64u);
}

TEST(Graph, Llama3_70B_TensorParallel8) {
  const auto m = load("llama-3-70b");
  const unsigned batch = 64;
  for (unsigned rank : {0u, 7u}) {
    const auto g = wl::build_graph(m, {8, rank}, wl::Phase::Decode, batch, 1, 2048);
    check_consistent(g);
    EXPECT_EQ(g.q_heads, 8u);
    EXPECT_EQ(g.kv_heads, 1u);
    EXPECT_EQ(g.intermediate, 3584u);
    EXPECT_EQ(g.vocab_local, 16032u);
    EXPECT_EQ(op(g, "L0.attn.q_proj").gemm.n, 1024u);
    EXPECT_EQ(op(g, "L0.attn.k_proj").gemm.n, 128u);
    EXPECT_EQ(op(g, "L0.attn.v_proj").gemm.n, 128u);
    const auto& o = op(g, "L0.attn.o_proj");
    EXPECT_EQ(o.gemm.k, 1024u);
    EXPECT_EQ(o.gemm.n, 8192u);
    EXPECT_FALSE(o.gemm.residual);
    EXPECT_EQ(o.outputs[0], "partial");
    EXPECT_EQ(op(g, "L0.mlp.gate_up_proj").gemm.n, 7168u);
    EXPECT_EQ(op(g, "L0.mlp.down_proj").gemm.k, 3584u);
    const auto& a = op(g, "L0.attn.core");
    EXPECT_EQ(a.attn.q_heads, 8u);
    EXPECT_EQ(a.attn.kv_heads, 1u);
    EXPECT_EQ(g.tensor("L0.k_cache").shape, (std::vector<std::uint64_t>{8192, 64, 1, 128}));
    EXPECT_EQ(g.tensor("L0.mlp.gate_up_proj.weight").shape, (std::vector<std::uint64_t>{8192, 7168}));
    // o_proj -> all-reduce -> add, twice per layer.
    EXPECT_EQ(count(g, wl::OpKind::AllReduce), 160u);
    EXPECT_EQ(count(g, wl::OpKind::Add), 160u);
    const auto& ar = op(g, "L0.attn.allreduce");
    EXPECT_EQ(ar.comm_elems, 64u * 8192u);
    EXPECT_EQ(op(g, "L0.mlp.allreduce").comm_elems, 64u * 8192u);
    EXPECT_EQ(op(g, "lm_head").gemm.n, 16032u);
  }
  // The ranks' GEMM work adds up to the whole model's.
  const auto whole = wl::totals(wl::build_graph(m, {}, wl::Phase::Decode, batch, 1, 2048));
  const auto part = wl::totals(wl::build_graph(m, {8, 3}, wl::Phase::Decode, batch, 1, 2048));
  EXPECT_EQ(8 * part.per_kind.at(wl::OpKind::Gemm).weight_elems, whole.per_kind.at(wl::OpKind::Gemm).weight_elems);
  EXPECT_EQ(8 * part.per_kind.at(wl::OpKind::Attention).flops, whole.per_kind.at(wl::OpKind::Attention).flops);
  EXPECT_EQ(8 * part.per_kind.at(wl::OpKind::LmHead).flops, whole.per_kind.at(wl::OpKind::LmHead).flops);
  EXPECT_EQ(8 * part.kv_read_elems, whole.kv_read_elems);
}

TEST(Graph, VocabPaddingAndRowSplitBias) {
  const auto m = load("gpt2");  // vocab 50257, biases everywhere
  const auto g0 = wl::build_graph(m, {4, 0}, wl::Phase::Decode, 1, 1, 10);
  const auto g3 = wl::build_graph(m, {4, 3}, wl::Phase::Decode, 1, 1, 10);
  check_consistent(g0);
  check_consistent(g3);
  EXPECT_EQ(g0.vocab_padded, 50260u);
  EXPECT_EQ(g0.vocab_local, 12565u);
  EXPECT_EQ(op(g0, "sample").vec.cols, 50257u);  // the host drops the padding
  // Column-split biases everywhere; a row-split GEMM's bias only on rank 0.
  EXPECT_TRUE(op(g3, "L0.attn.q_proj").gemm.bias);
  EXPECT_TRUE(op(g0, "L0.attn.o_proj").gemm.bias);
  EXPECT_FALSE(op(g3, "L0.attn.o_proj").gemm.bias);
  EXPECT_TRUE(op(g0, "L0.mlp.fc2").gemm.bias);
  EXPECT_FALSE(op(g3, "L0.mlp.fc2").gemm.bias);
  EXPECT_EQ(g0.tensor("L0.attn.o_proj.bias").split, wl::Split::Replicated);
  EXPECT_EQ(g3.find("L0.attn.o_proj.bias"), nullptr);
  EXPECT_EQ(g3.tensor("lm_head.weight").tied_to, "embed.tokens.weight");
}

TEST(Graph, Gpt2Family) {
  const auto m = load("gpt2");
  const auto g = wl::build_graph(m, {}, wl::Phase::Prefill, 1, 16, 16);
  check_consistent(g);
  const auto& e = op(g, "embed");
  EXPECT_TRUE(e.learned_positions);
  EXPECT_EQ(e.inputs.back(), "embed.positions.weight");
  EXPECT_EQ(count(g, wl::OpKind::Rope), 0u);
  const auto& fc1 = op(g, "L0.mlp.fc1");
  EXPECT_EQ(fc1.gemm.act, Act::Gelu);
  EXPECT_TRUE(fc1.gemm.bias);
  EXPECT_EQ(fc1.gemm.n, 3072u);
  EXPECT_EQ(count(g, wl::OpKind::Gelu), 0u);
  EXPECT_EQ(op(g, "L0.attn_norm").norm, wl::NormKind::Layer);
  EXPECT_EQ(g.tensor("L0.attn_norm.weight").shape, (std::vector<std::uint64_t>{2, 768}));
  EXPECT_EQ(op(g, "L0.attn_norm").weight_elems, 2u * 768u);
  // Unfused: a separate GELU op and residual adds.
  wl::BuildOptions opt;
  opt.fuse_gelu = false;
  opt.fuse_residual = false;
  const auto u = wl::build_graph(m, {}, wl::Phase::Prefill, 1, 16, 16, opt);
  check_consistent(u);
  EXPECT_EQ(count(u, wl::OpKind::Gelu), 12u);
  EXPECT_EQ(count(u, wl::OpKind::Add), 24u);
  EXPECT_EQ(op(u, "L0.mlp.fc1").gemm.act, Act::None);
  EXPECT_FALSE(op(u, "L0.mlp.fc2").gemm.residual);
}

TEST(Graph, GptNeoxParallelResidual) {
  const auto m = load("gpt-neox-20b");
  const auto g = wl::build_graph(m, {}, wl::Phase::Decode, 2, 1, 100);
  check_consistent(g);
  // Both norms read `hidden` before the attention writes it.
  EXPECT_EQ(g.ops[1].name, "L0.attn_norm");
  EXPECT_EQ(g.ops[2].name, "L0.mlp_norm");
  EXPECT_EQ(g.ops[2].outputs[0], "normed2");
  EXPECT_EQ(op(g, "L0.mlp.fc1").inputs[0], "normed2");
  EXPECT_EQ(op(g, "L0.attn.q_rope").rope.rotary_dim, 24u);
  EXPECT_EQ(op(g, "L0.attn.q_rope").rope.head_dim, 96u);
  EXPECT_TRUE(op(g, "L0.attn.o_proj").gemm.residual);
  EXPECT_TRUE(op(g, "L0.mlp.fc2").gemm.residual);
  // TP 2: the MLP's partial sum lands on the attention's; one all-reduce per layer.
  const auto t = wl::build_graph(m, {2, 1}, wl::Phase::Decode, 2, 1, 100);
  check_consistent(t);
  EXPECT_EQ(count(t, wl::OpKind::AllReduce), 44u);
  EXPECT_EQ(count(t, wl::OpKind::Add), 44u);
  const auto& fc2 = op(t, "L0.mlp.fc2");
  EXPECT_TRUE(fc2.gemm.residual);
  EXPECT_EQ(fc2.inputs.back(), "partial");
  EXPECT_EQ(fc2.outputs[0], "partial");
  EXPECT_FALSE(op(t, "L0.attn.o_proj").gemm.residual);
  EXPECT_TRUE(has_op(t, "L0.allreduce"));
}

TEST(Graph, DecodeFlopsAreTwiceParamsPerToken) {
  // A decode step multiplies every matrix once per token: 2 FLOPs per matmul parameter and
  // token. Attention adds, per layer, head and cached position, 4 * head_dim FLOPs per token
  // (QK^T and PV, a multiply-add each) plus the softmax; norms, RoPE, SwiGLU and the GEMM
  // epilogues (bias, residual) are a few FLOPs per element, far below 1%.
  // For Llama-3-8B at context 1024: 4 * 32 layers * 32 heads * 128 * 1024 = 0.54 GFLOP per
  // token against 15.0 GFLOP of matmuls, 3.5%. The embedding table is gathered, not
  // multiplied, so 2 x ALL parameters overestimates an untied model by its embedding share
  // (6.5% here): the two roughly cancel, 0.935 + 0.035 = 0.97 of 2 x params x tokens.
  const auto m = load("llama-3-8b");
  const unsigned batch = 4, kv_len = 1024;
  const auto t = wl::totals(wl::build_graph(m, {}, wl::Phase::Decode, batch, 1, kv_len));
  const double tokens = batch;
  const double matmul = 2.0 * static_cast<double>(m.matmul_parameter_count()) * tokens;
  const double attention = 4.0 * m.layers * m.heads * m.head_dim * static_cast<double>(kv_len) * tokens;
  EXPECT_NEAR(static_cast<double>(t.flops) / (matmul + attention), 1.0, 0.01);
  const double gemm =
      static_cast<double>(t.per_kind.at(wl::OpKind::Gemm).flops + t.per_kind.at(wl::OpKind::LmHead).flops);
  EXPECT_NEAR(gemm / matmul, 1.0, 1e-4);  // the rest: residual epilogues
  const double att_share =
      static_cast<double>(t.per_kind.at(wl::OpKind::Attention).flops) / static_cast<double>(t.flops);
  EXPECT_NEAR(att_share, 0.035, 0.002);
  const double all = 2.0 * static_cast<double>(m.parameter_count()) * tokens;
  EXPECT_NEAR(static_cast<double>(t.flops) / all, 0.97, 0.01);

  // GPT-3 175B, context 2048: the embedding share is small (0.4%) and attention (MHA,
  // 4 * 96 layers * 96 heads * 128 * 2048 = 9.7 GFLOP per token) adds 2.8%: within 4%.
  const auto g3 = load("gpt-3-175b");
  const auto t3 = wl::totals(wl::build_graph(g3, {}, wl::Phase::Decode, 1, 1, 2048));
  const double p3 = 2.0 * static_cast<double>(g3.parameter_count());
  EXPECT_NEAR(static_cast<double>(t3.flops) / p3, 1.0, 0.04);
  const double att3 = 4.0 * 96 * 96 * 128 * 2048.0;
  EXPECT_NEAR(static_cast<double>(t3.per_kind.at(wl::OpKind::Attention).flops) / att3, 1.0, 0.01);
}

TEST(Graph, DecodeBytes) {
  const auto m = load("llama-3-8b");
  const unsigned batch = 4, kv_len = 1024;
  const auto t = wl::totals(wl::build_graph(m, {}, wl::Phase::Decode, batch, 1, kv_len));
  // Every weight is read once, except the embedding table of which only `batch` rows are.
  EXPECT_EQ(t.weight_elems, m.parameter_count() - 128256ull * 4096 + batch * 4096ull);
  EXPECT_EQ(t.weight_bytes(DType::Fp8E4M3), t.weight_elems);
  // Attention reads the whole cache: kv_bytes_per_token x positions x sequences.
  EXPECT_EQ(t.per_kind.at(wl::OpKind::Attention).kv_read_elems * 2, m.kv_bytes_per_token(DType::Bf16) * kv_len * batch);
  // The step writes one K and one V row per layer and sequence.
  EXPECT_EQ(t.per_kind.at(wl::OpKind::Gemm).kv_write_elems * 2, m.kv_bytes_per_token(DType::Bf16) * batch);
  EXPECT_EQ(t.ops, 1u + 32u * 12u + 3u);
  EXPECT_EQ(t.comm_elems, 0u);
}

TEST(Graph, ShardErrors) {
  const auto m = load("llama-3-8b");
  std::string msg = error_of([&] { wl::build_graph(m, {3, 0}, wl::Phase::Decode, 1, 1, 1); });
  EXPECT_NE(msg.find("tp_degree = 3 does not divide num_attention_heads = 32"), std::string::npos) << msg;
  msg = error_of([&] { wl::build_graph(m, {16, 0}, wl::Phase::Decode, 1, 1, 1); });
  EXPECT_NE(msg.find("tp_degree = 16 exceeds num_key_value_heads = 8"), std::string::npos) << msg;
  msg = error_of([&] { wl::build_graph(m, {4, 4}, wl::Phase::Decode, 1, 1, 1); });
  EXPECT_NE(msg.find("tp_rank = 4 is out of range (allowed 0..3"), std::string::npos) << msg;
  msg = error_of([&] { wl::build_graph(m, {0, 0}, wl::Phase::Decode, 1, 1, 1); });
  EXPECT_NE(msg.find("tp_degree = 0"), std::string::npos) << msg;
  const auto g2 = load("gpt2");
  msg = error_of([&] { wl::build_graph(g2, {8, 0}, wl::Phase::Decode, 1, 1, 1); });
  EXPECT_NE(msg.find("tp_degree = 8 does not divide num_attention_heads = 12"), std::string::npos) << msg;
}

TEST(Graph, SizeErrors) {
  const auto m = load("tiny");
  std::string msg = error_of([&] { wl::build_graph(m, {}, wl::Phase::Decode, 1, 2, 5); });
  EXPECT_NE(msg.find("q_len = 2 (a decode step has q_len = 1)"), std::string::npos) << msg;
  msg = error_of([&] { wl::build_graph(m, {}, wl::Phase::Prefill, 1, 8, 4); });
  EXPECT_NE(msg.find("kv_len = 4 < q_len = 8"), std::string::npos) << msg;
  msg = error_of([&] { wl::build_graph(m, {}, wl::Phase::Decode, 1, 1, 129); });
  EXPECT_NE(msg.find("kv_len = 129 exceeds the KV cache capacity = 128"), std::string::npos) << msg;
  wl::BuildOptions opt;
  opt.kv_capacity = 16;
  msg = error_of([&] { wl::build_graph(m, {}, wl::Phase::Decode, 1, 1, 17, opt); });
  EXPECT_NE(msg.find("capacity = 16"), std::string::npos) << msg;
  EXPECT_EQ(wl::build_graph(m, {}, wl::Phase::Decode, 3, 1, 16, opt).tensor("L1.k_cache").shape,
            (std::vector<std::uint64_t>{16, 3, 2, 16}));
  msg = error_of([&] { wl::build_graph(m, {}, wl::Phase::Decode, 0, 1, 1); });
  EXPECT_NE(msg.find("batch = 0"), std::string::npos) << msg;
}

TEST(Graph, EveryShippedModelBuilds) {
  for (const auto& name : wl::available_models({std::string(SOHUSIM_SOURCE_DIR) + "/configs"})) {
    const auto m = load(name);
    for (unsigned tp : {1u, 2u}) {
      if (m.kv_heads % tp != 0 || m.heads % tp != 0 || m.intermediate % tp != 0) continue;
      const auto g = wl::build_graph(m, {tp, tp - 1}, wl::Phase::Prefill, 2, 8, 8);
      check_consistent(g);
      const auto d = wl::build_graph(m, {tp, 0}, wl::Phase::Decode, 2, 1, 9);
      check_consistent(d);
    }
  }
}
