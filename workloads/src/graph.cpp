#include "sohusim/workloads/graph.hpp"

#include <stdexcept>
#include <utility>

namespace sohusim::workloads {
namespace {

std::string layer_prefix(unsigned i) {
  return "L" + std::to_string(i) + ".";
}

std::string model_label(const ModelConfig& m) {
  return m.name.empty() ? m.model_type : m.name;
}

/// This rank's share of the model's dimensions.
struct Local {
  unsigned q_heads = 0, kv_heads = 0, inter = 0;
  std::uint64_t q_cols = 0, kv_cols = 0, vocab_padded = 0, vocab_local = 0;
};

Local local_dims(const ModelConfig& m, const Shard& s) {
  Local l;
  l.q_heads = m.heads / s.tp_degree;
  l.kv_heads = m.kv_heads / s.tp_degree;
  l.inter = m.intermediate / s.tp_degree;
  l.q_cols = static_cast<std::uint64_t>(l.q_heads) * m.head_dim;
  l.kv_cols = static_cast<std::uint64_t>(l.kv_heads) * m.head_dim;
  l.vocab_padded = (static_cast<std::uint64_t>(m.vocab) + s.tp_degree - 1) / s.tp_degree * s.tp_degree;
  l.vocab_local = l.vocab_padded / s.tp_degree;
  return l;
}

std::uint64_t norm_width(const ModelConfig& m) {
  return m.norm == NormKind::Layer ? 2 : 1;
}

Tensor weight(std::string name, std::vector<std::uint64_t> shape, int layer, Split split) {
  Tensor t;
  t.name = std::move(name);
  t.kind = TensorKind::Weight;
  t.shape = std::move(shape);
  t.layer = layer;
  t.split = split;
  return t;
}

Tensor norm_weight(const ModelConfig& m, std::string name, int layer) {
  const std::uint64_t h = m.hidden;
  return weight(std::move(name),
                m.norm == NormKind::Layer ? std::vector<std::uint64_t>{2, h} : std::vector<std::uint64_t>{h}, layer,
                Split::Replicated);
}

class Builder {
 public:
  Builder(const ModelConfig& m, const Shard& s, Graph& g) : m_(m), s_(s), g_(g), l_(local_dims(m, s)) {}
  /// A serving step: the groups' attention ops, `sampled` rows through the head.
  Builder(const ModelConfig& m, const Shard& s, Graph& g, const std::vector<StepGroup>& groups, unsigned sampled)
      : m_(m), s_(s), g_(g), l_(local_dims(m, s)), groups_(&groups), sampled_(sampled) {}

  void build(const BuildOptions& opt);

 private:
  Op& push(OpKind kind, std::string name, int layer) {
    Op op;
    op.kind = kind;
    op.name = std::move(name);
    op.layer = layer;
    g_.ops.push_back(std::move(op));
    return g_.ops.back();
  }

  void tensor(std::string name, TensorKind kind, std::vector<std::uint64_t> shape, int layer = -1) {
    Tensor t;
    t.name = std::move(name);
    t.kind = kind;
    t.shape = std::move(shape);
    t.layer = layer;
    g_.tensors.push_back(std::move(t));
  }

  // A GEMM C[m][n] = act(A[m][k] W[k][n] + bias) + residual. to_cache: C is a KV cache,
  // written from row out_row on.
  Op& gemm(OpKind kind, const std::string& name, int layer, const std::string& a, const std::string& w,
           const std::string& bias, const std::string& residual, const std::string& out, std::uint64_t m,
           std::uint64_t k, std::uint64_t n, driver::Act act = driver::Act::None, bool to_cache = false,
           std::uint64_t out_row = 0) {
    Op& op = push(kind, name, layer);
    op.gemm.m = m;
    op.gemm.k = k;
    op.gemm.n = n;
    op.gemm.bias = !bias.empty();
    op.gemm.residual = !residual.empty();
    op.gemm.act = act;
    op.out_row_offset = out_row;
    const std::uint64_t mn = m * n;
    op.flops = 2 * m * k * n + (op.gemm.bias ? mn : 0) + (op.gemm.residual ? mn : 0) +
               (act == driver::Act::Gelu   ? 8 * mn
                : act == driver::Act::None ? 0
                                           : 4 * mn);
    op.weight_elems = k * n + (op.gemm.bias ? n : 0);
    op.act_elems = m * k + (to_cache ? 0 : mn) + (op.gemm.residual ? mn : 0);
    op.kv_write_elems = to_cache ? mn : 0;
    op.inputs = {a, w};
    if (op.gemm.bias) op.inputs.push_back(bias);
    if (op.gemm.residual) op.inputs.push_back(residual);
    op.outputs = {out};
    return op;
  }

  void norm(OpKind kind, const std::string& name, int layer, const std::string& in, const std::string& w,
            const std::string& out, std::uint64_t rows, std::uint64_t in_row = 0) {
    Op& op = push(kind, name, layer);
    op.vec = {rows, m_.hidden};
    op.norm = m_.norm;
    op.eps = static_cast<float>(m_.norm_eps);
    op.in_row_offset = in_row;
    const std::uint64_t e = rows * m_.hidden;
    op.flops = (m_.norm == NormKind::Layer ? 7 : 4) * e;
    op.weight_elems = norm_width(m_) * m_.hidden;
    op.act_elems = 2 * e;
    op.inputs = {in, w};
    op.outputs = {out};
  }

  void rope(const std::string& name, int layer, const std::string& buf, std::uint64_t cols, bool cache,
            std::uint64_t out_row) {
    Op& op = push(OpKind::Rope, name, layer);
    const std::uint64_t rows = g_.rows();
    op.vec = {rows, cols};
    op.rope.head_dim = m_.head_dim;
    op.rope.rotary_dim = m_.rotary_dim();
    op.rope.theta = static_cast<float>(m_.rope_theta);
    op.position = g_.kv_len - g_.q_len;
    op.group = g_.batch;  // a serving step: batch 1, q_len = its rows (positions are a timing no-op)
    op.out_row_offset = out_row;
    op.in_row_offset = out_row;
    op.flops = 3 * rows * (cols / m_.head_dim) * m_.rotary_dim();
    if (cache) {
      op.kv_read_elems = rows * cols;
      op.kv_write_elems = rows * cols;
    } else {
      op.act_elems = 2 * rows * cols;
    }
    op.inputs = {buf};
    op.outputs = {buf};
  }

  void add(const std::string& name, int layer, const std::string& x, const std::string& y, const std::string& out) {
    Op& op = push(OpKind::Add, name, layer);
    const std::uint64_t e = g_.rows() * m_.hidden;
    op.vec = {g_.rows(), m_.hidden};
    op.flops = e;
    op.act_elems = 3 * e;
    op.inputs = {x, y};
    op.outputs = {out};
  }

  void all_reduce(const std::string& name, int layer, const std::string& buf) {
    Op& op = push(OpKind::AllReduce, name, layer);
    const std::uint64_t e = g_.rows() * m_.hidden;
    op.vec = {g_.rows(), m_.hidden};
    op.comm_elems = e;
    op.flops = e * (s_.tp_degree - 1) / s_.tp_degree;  // a ring's reduce-scatter adds
    op.inputs = {buf};
    op.outputs = {buf};
  }

  void layer(unsigned i, const BuildOptions& opt);

  // One attention over `batch` sequences of q_len queries and kv_len keys each: q (and the
  // output) from row q_row, the cache from row cache_row.
  void attention(const std::string& name, int layer, const std::string& p, unsigned batch, unsigned q_len,
                 unsigned kv_len, bool causal, std::uint64_t q_row, std::uint64_t cache_row) {
    Op& op = push(OpKind::Attention, name, layer);
    op.attn = {batch, q_len, kv_len, l_.q_heads, l_.kv_heads, m_.head_dim, causal};
    const std::uint64_t ql = q_len, kl = kv_len;
    const std::uint64_t seen = causal ? ql * (kl - ql) + ql * (ql + 1) / 2 : ql * kl;
    const std::uint64_t pairs = seen * batch * l_.q_heads;
    op.flops = pairs * (4ull * m_.head_dim + 5);
    op.act_elems = 2 * ql * batch * l_.q_cols;
    op.kv_read_elems = 2 * static_cast<std::uint64_t>(batch) * kl * l_.kv_cols;
    op.in_row_offset = q_row;
    op.cache_row_offset = cache_row;
    op.inputs = {"q", p + "k_cache", p + "v_cache"};
    op.outputs = {"attn"};
  }

  // Rows through the final norm and the LM head: the last position of each sequence.
  std::uint64_t head_rows() const { return groups_ != nullptr ? sampled_ : g_.batch; }

  const ModelConfig& m_;
  Shard s_;
  Graph& g_;
  Local l_;
  const std::vector<StepGroup>* groups_ = nullptr;
  unsigned sampled_ = 0;
};

void Builder::layer(unsigned i, const BuildOptions& opt) {
  const std::string p = layer_prefix(i);
  const int li = static_cast<int>(i);
  const std::uint64_t rows = g_.rows(), h = m_.hidden;
  const bool tp = s_.tp_degree > 1;
  const bool fused = !tp && opt.fuse_residual;
  const bool rank0 = s_.tp_rank == 0;
  // A serving step's new K/V rows go to the pool from the first group's rows on (the
  // bytes of a paged engine's scattered writes, in one place).
  const std::uint64_t cache_row =
      groups_ != nullptr ? groups_->front().cache_row : static_cast<std::uint64_t>(g_.kv_len - g_.q_len) * g_.batch;
  auto bias = [&](bool has, const std::string& w) { return has ? w + ".bias" : std::string(); };

  // Norms: one before attention, one before the MLP (both up front for a parallel residual).
  norm(OpKind::Norm, p + "attn_norm", li, "hidden", p + "attn_norm.weight", "normed", rows);
  if (m_.parallel_residual) norm(OpKind::Norm, p + "mlp_norm", li, "hidden", p + "mlp_norm.weight", "normed2", rows);

  // Attention.
  const std::string q = p + "attn.q_proj", k = p + "attn.k_proj", v = p + "attn.v_proj", o = p + "attn.o_proj";
  gemm(OpKind::Gemm, q, li, "normed", q + ".weight", bias(m_.qkv_bias, q), "", "q", rows, h, l_.q_cols);
  gemm(OpKind::Gemm, k, li, "normed", k + ".weight", bias(m_.qkv_bias, k), "", p + "k_cache", rows, h, l_.kv_cols,
       driver::Act::None, true, cache_row);
  gemm(OpKind::Gemm, v, li, "normed", v + ".weight", bias(m_.qkv_bias, v), "", p + "v_cache", rows, h, l_.kv_cols,
       driver::Act::None, true, cache_row);
  if (m_.rope) {
    rope(p + "attn.q_rope", li, "q", l_.q_cols, false, 0);
    rope(p + "attn.k_rope", li, p + "k_cache", l_.kv_cols, true, cache_row);
  }
  if (groups_ == nullptr) {
    attention(p + "attn.core", li, p, g_.batch, g_.q_len, g_.kv_len, g_.phase == Phase::Prefill, 0, 0);
  } else {
    std::uint64_t q_row = 0;
    for (std::size_t j = 0; j < groups_->size(); ++j) {
      const StepGroup& sg = (*groups_)[j];
      attention(p + "attn.core" + (groups_->size() > 1 ? "." + std::to_string(j) : std::string()), li, p, sg.batch,
                sg.q_len, sg.kv_len, sg.q_len > 1, q_row, sg.cache_row);
      q_row += static_cast<std::uint64_t>(sg.batch) * sg.q_len;
    }
  }
  const std::string o_bias = bias(m_.o_bias && rank0, o);
  if (fused) {
    gemm(OpKind::Gemm, o, li, "attn", o + ".weight", o_bias, "hidden", "hidden", rows, l_.q_cols, h);
  } else {
    gemm(OpKind::Gemm, o, li, "attn", o + ".weight", o_bias, "", "partial", rows, l_.q_cols, h);
    if (!(m_.parallel_residual && tp && opt.fuse_residual)) {
      if (tp) all_reduce(p + "attn.allreduce", li, "partial");
      add(p + "attn.residual", li, "hidden", "partial", "hidden");
    }
  }

  // MLP.
  const std::string mlp_in = m_.parallel_residual ? "normed2" : "normed";
  if (!m_.parallel_residual) norm(OpKind::Norm, p + "mlp_norm", li, "hidden", p + "mlp_norm.weight", "normed", rows);
  std::string last, last_bias;
  std::uint64_t inner_cols = l_.inter;
  if (m_.gated_mlp) {
    const std::string gu = p + "mlp.gate_up_proj";
    gemm(OpKind::Gemm, gu, li, mlp_in, gu + ".weight", bias(m_.mlp_bias, gu), "", "gate_up", rows, h, 2ull * l_.inter);
    Op& op = push(OpKind::Swiglu, p + "mlp.swiglu", li);
    op.vec = {rows, 2ull * l_.inter};
    op.flops = 5 * rows * l_.inter;
    op.act_elems = 3 * rows * l_.inter;
    op.inputs = {"gate_up"};
    op.outputs = {"mlp_act"};
    last = p + "mlp.down_proj";
  } else {
    const std::string fc1 = p + "mlp.fc1";
    gemm(OpKind::Gemm, fc1, li, mlp_in, fc1 + ".weight", bias(m_.mlp_bias, fc1), "", "mlp_act", rows, h, l_.inter,
         opt.fuse_gelu ? driver::Act::Gelu : driver::Act::None);
    if (!opt.fuse_gelu) {
      Op& op = push(OpKind::Gelu, p + "mlp.gelu", li);
      op.vec = {rows, l_.inter};
      op.flops = 8 * rows * l_.inter;
      op.act_elems = 2 * rows * l_.inter;
      op.inputs = {"mlp_act"};
      op.outputs = {"mlp_act"};
    }
    last = p + "mlp.fc2";
  }
  last_bias = bias(m_.mlp_bias && rank0, last);
  if (fused) {
    gemm(OpKind::Gemm, last, li, "mlp_act", last + ".weight", last_bias, "hidden", "hidden", rows, inner_cols, h);
  } else if (m_.parallel_residual && tp && opt.fuse_residual) {
    // Accumulate onto the attention's partial sum: one all-reduce for both branches.
    gemm(OpKind::Gemm, last, li, "mlp_act", last + ".weight", last_bias, "partial", "partial", rows, inner_cols, h);
    all_reduce(p + "allreduce", li, "partial");
    add(p + "residual", li, "hidden", "partial", "hidden");
  } else {
    gemm(OpKind::Gemm, last, li, "mlp_act", last + ".weight", last_bias, "", "partial", rows, inner_cols, h);
    if (tp) all_reduce(p + "mlp.allreduce", li, "partial");
    add(p + "mlp.residual", li, "hidden", "partial", "hidden");
  }
}

void Builder::build(const BuildOptions& opt) {
  const std::uint64_t rows = g_.rows(), h = m_.hidden;
  const bool tp = s_.tp_degree > 1;

  // Tensors: inputs, weights, caches, scratch activations, logits.
  tensor("tokens", TensorKind::Tokens, {rows});
  for (auto& t : weight_tensors(m_, s_)) g_.tensors.push_back(std::move(t));
  for (unsigned i = 0; i < m_.layers; ++i) {
    const std::vector<std::uint64_t> shape = {g_.kv_capacity, g_.batch, l_.kv_heads, m_.head_dim};
    tensor(layer_prefix(i) + "k_cache", TensorKind::KvCache, shape, static_cast<int>(i));
    tensor(layer_prefix(i) + "v_cache", TensorKind::KvCache, shape, static_cast<int>(i));
  }
  tensor("hidden", TensorKind::Activation, {rows, h});
  tensor("normed", TensorKind::Activation, {rows, h});
  if (m_.parallel_residual) tensor("normed2", TensorKind::Activation, {rows, h});
  tensor("q", TensorKind::Activation, {rows, l_.q_cols});
  tensor("attn", TensorKind::Activation, {rows, l_.q_cols});
  if (tp || !opt.fuse_residual) tensor("partial", TensorKind::Activation, {rows, h});
  if (m_.gated_mlp) tensor("gate_up", TensorKind::Activation, {rows, 2ull * l_.inter});
  tensor("mlp_act", TensorKind::Activation, {rows, l_.inter});
  const std::uint64_t head = head_rows();
  tensor("final_normed", TensorKind::Activation, {head, h});
  tensor("logits", TensorKind::Logits, {head, l_.vocab_local});
  tensor("next_tokens", TensorKind::Tokens, {head});

  // Embedding (replicated on every rank).
  {
    Op& op = push(OpKind::Embedding, "embed", -1);
    op.vec = {rows, h};
    op.learned_positions = m_.learned_positions;
    op.position = g_.kv_len - g_.q_len;
    op.group = g_.batch;
    op.weight_elems = rows * h * (m_.learned_positions ? 2 : 1);
    op.act_elems = rows * h;
    op.flops = m_.learned_positions ? rows * h : 0;
    op.inputs = {"tokens", "embed.tokens.weight"};
    if (m_.learned_positions) op.inputs.push_back("embed.positions.weight");
    op.outputs = {"hidden"};
  }
  for (unsigned i = 0; i < m_.layers; ++i) layer(i, opt);

  // Head: the last position's rows only (a serving step: the first `sampled` rows stand
  // for its sequences' last positions; the bytes are the same).
  if (head == 0) return;  // a step of prompt chunks that all go on in the next step
  const std::uint64_t last_row = groups_ != nullptr ? 0 : static_cast<std::uint64_t>(g_.q_len - 1) * g_.batch;
  norm(OpKind::FinalNorm, "final_norm", -1, "hidden", "final_norm.weight", "final_normed", head, last_row);
  gemm(OpKind::LmHead, "lm_head", -1, "final_normed", "lm_head.weight", "", "", "logits", head, h, l_.vocab_local);
  {
    Op& op = push(OpKind::Sample, "sample", -1);
    op.vec = {head, m_.vocab};
    op.on_host = true;
    op.flops = head * m_.vocab;
    op.act_elems = head * m_.vocab;
    op.inputs = {"logits"};
    op.outputs = {"next_tokens"};
  }
}

}  // namespace

const char* to_string(Phase p) {
  return p == Phase::Prefill ? "prefill" : "decode";
}

const char* to_string(TensorKind k) {
  switch (k) {
    case TensorKind::Weight:
      return "weight";
    case TensorKind::Activation:
      return "activation";
    case TensorKind::KvCache:
      return "kv_cache";
    case TensorKind::Logits:
      return "logits";
    case TensorKind::Tokens:
      return "tokens";
  }
  return "?";
}

const char* to_string(Split s) {
  switch (s) {
    case Split::Replicated:
      return "replicated";
    case Split::Columns:
      return "columns";
    case Split::Rows:
      return "rows";
  }
  return "?";
}

const char* to_string(OpKind k) {
  static const char* const kNames[kNumOpKinds] = {"embedding", "norm",       "gemm",    "rope",
                                                  "attention", "swiglu",     "gelu",    "add",
                                                  "allreduce", "final_norm", "lm_head", "sample"};
  const auto i = static_cast<unsigned>(k);
  return i < kNumOpKinds ? kNames[i] : "?";
}

std::uint64_t Tensor::elements() const {
  std::uint64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

const Tensor* Graph::find(const std::string& name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const Tensor& Graph::tensor(const std::string& name) const {
  if (const Tensor* t = find(name)) return *t;
  throw std::out_of_range("graph of " + model + ": no tensor '" + name + "'");
}

void check_shard(const ModelConfig& m, const Shard& s) {
  const std::string who = model_label(m);
  if (s.tp_degree == 0) throw std::invalid_argument(who + ": tp_degree = 0 (allowed >= 1)");
  if (s.tp_rank >= s.tp_degree) {
    throw std::invalid_argument(who + ": tp_rank = " + std::to_string(s.tp_rank) + " is out of range (allowed 0.." +
                                std::to_string(s.tp_degree - 1) + " for tp_degree = " + std::to_string(s.tp_degree) +
                                ")");
  }
  auto need = [&](unsigned value, const char* what) {
    if (value % s.tp_degree != 0) {
      throw std::invalid_argument(who + ": tp_degree = " + std::to_string(s.tp_degree) + " does not divide " + what +
                                  " = " + std::to_string(value));
    }
  };
  need(m.heads, "num_attention_heads");
  if (m.kv_heads < s.tp_degree) {
    throw std::invalid_argument(who + ": tp_degree = " + std::to_string(s.tp_degree) +
                                " exceeds num_key_value_heads = " + std::to_string(m.kv_heads) +
                                " (KV heads are split, not replicated)");
  }
  need(m.kv_heads, "num_key_value_heads");
  need(m.intermediate, "intermediate_size");
}

std::vector<Tensor> weight_tensors(const ModelConfig& m, const Shard& s) {
  check_shard(m, s);
  const Local l = local_dims(m, s);
  const std::uint64_t h = m.hidden;
  std::vector<Tensor> w;
  w.push_back(weight("embed.tokens.weight", {m.vocab, h}, -1, Split::Replicated));
  if (m.learned_positions) w.push_back(weight("embed.positions.weight", {m.max_positions, h}, -1, Split::Replicated));
  for (unsigned i = 0; i < m.layers; ++i) {
    const std::string p = layer_prefix(i);
    const int li = static_cast<int>(i);
    auto linear = [&](const std::string& name, std::uint64_t k, std::uint64_t n, Split split, bool has_bias) {
      w.push_back(weight(p + name + ".weight", {k, n}, li, split));
      // A row-split GEMM's bias is added once, by rank 0: the other ranks do not hold it.
      if (has_bias && (split != Split::Rows || s.tp_rank == 0)) {
        w.push_back(weight(p + name + ".bias", {n}, li, split == Split::Rows ? Split::Replicated : split));
      }
    };
    w.push_back(norm_weight(m, p + "attn_norm.weight", li));
    linear("attn.q_proj", h, l.q_cols, Split::Columns, m.qkv_bias);
    linear("attn.k_proj", h, l.kv_cols, Split::Columns, m.qkv_bias);
    linear("attn.v_proj", h, l.kv_cols, Split::Columns, m.qkv_bias);
    linear("attn.o_proj", l.q_cols, h, Split::Rows, m.o_bias);
    w.push_back(norm_weight(m, p + "mlp_norm.weight", li));
    if (m.gated_mlp) {
      linear("mlp.gate_up_proj", h, 2ull * l.inter, Split::Columns, m.mlp_bias);
      linear("mlp.down_proj", l.inter, h, Split::Rows, m.mlp_bias);
    } else {
      linear("mlp.fc1", h, l.inter, Split::Columns, m.mlp_bias);
      linear("mlp.fc2", l.inter, h, Split::Rows, m.mlp_bias);
    }
  }
  w.push_back(norm_weight(m, "final_norm.weight", -1));
  Tensor head = weight("lm_head.weight", {h, l.vocab_local}, -1, Split::Columns);
  if (m.tied_embeddings) head.tied_to = "embed.tokens.weight";
  w.push_back(std::move(head));
  return w;
}

namespace {
// A graph with the model's and this rank's dimensions and nothing in it yet.
Graph shell(const ModelConfig& m, const Shard& s) {
  Graph g;
  g.model = m.name;
  g.shard = s;
  const Local l = local_dims(m, s);
  g.q_heads = l.q_heads;
  g.kv_heads = l.kv_heads;
  g.head_dim = m.head_dim;
  g.intermediate = l.inter;
  g.hidden = m.hidden;
  g.vocab = m.vocab;
  g.vocab_padded = l.vocab_padded;
  g.vocab_local = l.vocab_local;
  return g;
}
}  // namespace

Graph build_graph(const ModelConfig& m, const Shard& s, Phase phase, unsigned batch, unsigned q_len, unsigned kv_len,
                  const BuildOptions& opt) {
  check_shard(m, s);
  const std::string who = model_label(m) + " " + to_string(phase);
  const unsigned capacity = opt.kv_capacity != 0 ? opt.kv_capacity : m.max_positions;
  auto bad = [&](const std::string& what) { throw std::invalid_argument(who + ": " + what); };
  if (batch == 0) bad("batch = 0 (allowed >= 1)");
  if (q_len == 0) bad("q_len = 0 (allowed >= 1)");
  if (phase == Phase::Decode && q_len != 1) bad("q_len = " + std::to_string(q_len) + " (a decode step has q_len = 1)");
  if (kv_len < q_len) {
    bad("kv_len = " + std::to_string(kv_len) + " < q_len = " + std::to_string(q_len) +
        " (kv_len counts the step's own positions)");
  }
  if (capacity > m.max_positions) {
    bad("kv_capacity = " + std::to_string(capacity) + " exceeds max_positions = " + std::to_string(m.max_positions));
  }
  if (kv_len > capacity) {
    bad("kv_len = " + std::to_string(kv_len) + " exceeds the KV cache capacity = " + std::to_string(capacity));
  }

  Graph g = shell(m, s);
  g.phase = phase;
  g.batch = batch;
  g.q_len = q_len;
  g.kv_len = kv_len;
  g.kv_capacity = capacity;
  Builder(m, s, g).build(opt);
  return g;
}

Graph build_step_graph(const ModelConfig& m, const Shard& s, const std::vector<StepGroup>& groups, unsigned sampled,
                       std::uint64_t pool_rows, const BuildOptions& opt) {
  check_shard(m, s);
  const std::string who = model_label(m) + " serving step";
  auto bad = [&](const std::string& what) { throw std::invalid_argument(who + ": " + what); };
  if (groups.empty()) bad("no sequences");
  if (pool_rows == 0 || pool_rows > 0xFFFF'FFFFULL)
    bad("KV pool of " + std::to_string(pool_rows) + " rows (allowed 1 .. 4294967295)");
  std::uint64_t rows = 0, sequences = 0;
  bool prefill = false;
  for (std::size_t j = 0; j < groups.size(); ++j) {
    const StepGroup& g = groups[j];
    const std::string at = "group " + std::to_string(j) + ": ";
    if (g.batch == 0 || g.q_len == 0) bad(at + "batch and q_len must be >= 1");
    if (g.kv_len < g.q_len) {
      bad(at + "kv_len = " + std::to_string(g.kv_len) + " < q_len = " + std::to_string(g.q_len) +
          " (kv_len counts the step's own positions)");
    }
    if (g.kv_len > m.max_positions)
      bad(at + "kv_len = " + std::to_string(g.kv_len) + " exceeds max_positions = " + std::to_string(m.max_positions));
    const std::uint64_t used = static_cast<std::uint64_t>(g.batch) * g.kv_len;
    if (g.cache_row + used > pool_rows) {
      bad(at + "cache rows " + std::to_string(g.cache_row) + " .. " + std::to_string(g.cache_row + used - 1) +
          " outside the pool of " + std::to_string(pool_rows));
    }
    rows += static_cast<std::uint64_t>(g.batch) * g.q_len;
    sequences += g.batch;
    prefill = prefill || g.q_len > 1;
  }
  if (groups.front().cache_row + rows > pool_rows)
    bad("the step's " + std::to_string(rows) + " new K/V rows do not fit the pool from row " +
        std::to_string(groups.front().cache_row));
  if (sampled > sequences) bad(std::to_string(sampled) + " sampled sequences of " + std::to_string(sequences));
  if (rows > 0xFFFF'FFFFULL) bad(std::to_string(rows) + " rows");

  Graph g = shell(m, s);
  g.phase = prefill ? Phase::Prefill : Phase::Decode;
  g.batch = 1;
  g.q_len = static_cast<unsigned>(rows);
  g.kv_len = static_cast<unsigned>(rows);
  g.kv_capacity = static_cast<unsigned>(pool_rows);
  g.ragged = true;
  Builder(m, s, g, groups, sampled).build(opt);
  return g;
}

Cost& Cost::operator+=(const Cost& o) {
  ops += o.ops;
  flops += o.flops;
  weight_elems += o.weight_elems;
  act_elems += o.act_elems;
  kv_read_elems += o.kv_read_elems;
  kv_write_elems += o.kv_write_elems;
  comm_elems += o.comm_elems;
  return *this;
}

GraphTotals totals(const Graph& g) {
  GraphTotals t;
  for (const auto& op : g.ops) {
    Cost c;
    c.ops = 1;
    c.flops = op.flops;
    c.weight_elems = op.weight_elems;
    c.act_elems = op.act_elems;
    c.kv_read_elems = op.kv_read_elems;
    c.kv_write_elems = op.kv_write_elems;
    c.comm_elems = op.comm_elems;
    t += c;
    t.per_kind[op.kind] += c;
  }
  return t;
}

}  // namespace sohusim::workloads
