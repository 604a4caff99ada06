// Executes build_graph()'s op lists, with the reference's ops and shard_weights()'s slices,
// on every rank of a tensor-parallel group, and checks the gathered logits against the
// Reference. This is what the compiler will do on the device, so it pins the graph's
// conventions: position-major rows, KV cache rows and offsets, fused residuals, row-split
// biases on rank 0, the gate_up layout, the all-reduces, the padded LM head.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/workloads/reference.hpp"

namespace wl = sohusim::workloads;
using sohusim::driver::Act;

namespace {

wl::ModelConfig load(const std::string& name) {
  return wl::load_model(name, {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
}

class GraphRunner {
 public:
  GraphRunner(wl::ModelConfig m, const wl::Weights& full, unsigned tp, unsigned capacity, wl::BuildOptions opt = {})
      : m_(std::move(m)), tp_(tp), opt_(opt) {
    opt_.kv_capacity = capacity;
    for (unsigned r = 0; r < tp; ++r) w_.push_back(wl::shard_weights(full, m_, {tp, r}));
    ranks_.resize(tp);
  }

  // tokens position-major (q_len * batch).
  wl::Logits step(wl::Phase phase, unsigned batch, unsigned q_len, const std::vector<std::uint32_t>& tokens) {
    if (phase == wl::Phase::Prefill) pos_ = 0;
    const unsigned kv_len = pos_ + q_len;
    std::vector<wl::Graph> g;
    for (unsigned r = 0; r < tp_; ++r) {
      g.push_back(wl::build_graph(m_, {tp_, r}, phase, batch, q_len, kv_len, opt_));
      auto& st = ranks_[r];
      for (const auto& t : g[r].tensors) {
        // Scratch is fresh each step; caches persist (allocated at the first prefill).
        if (t.kind == wl::TensorKind::KvCache && phase == wl::Phase::Decode) continue;
        if (t.kind != wl::TensorKind::Weight) st[t.name].assign(t.elements(), 0.0f);
      }
      for (std::size_t i = 0; i < tokens.size(); ++i) st["tokens"][i] = static_cast<float>(tokens[i]);
    }
    for (std::size_t i = 0; i < g[0].ops.size(); ++i) {
      if (g[0].ops[i].kind == wl::OpKind::AllReduce) {
        const std::string& name = g[0].ops[i].inputs[0];
        std::vector<float> sum(ranks_[0][name].size(), 0.0f);
        for (unsigned r = 0; r < tp_; ++r) {
          for (std::size_t e = 0; e < sum.size(); ++e) sum[e] += ranks_[r][name][e];
        }
        for (unsigned r = 0; r < tp_; ++r) ranks_[r][name] = sum;
        continue;
      }
      for (unsigned r = 0; r < tp_; ++r) run(g[r], g[r].ops[i], r);
    }
    pos_ = kv_len;
    // Gather the logits over the ranks' vocabulary blocks, dropping the padding.
    wl::Logits out(batch, std::vector<float>(m_.vocab));
    const std::uint64_t vl = g[0].vocab_local;
    for (unsigned r = 0; r < tp_; ++r) {
      const auto& lg = ranks_[r]["logits"];
      for (unsigned b = 0; b < batch; ++b) {
        for (std::uint64_t c = 0; c < vl; ++c) {
          const std::uint64_t col = r * vl + c;
          if (col < m_.vocab) out[b][col] = lg[b * vl + c];
        }
      }
    }
    return out;
  }

 private:
  const float* in(unsigned r, const std::string& name) {
    if (w_[r].has(name)) return w_[r].at(name).data.data();
    return ranks_[r].at(name).data();
  }
  float* buf(unsigned r, const std::string& name) { return ranks_[r].at(name).data(); }

  void run(const wl::Graph& g, const wl::Op& op, unsigned r) {
    const std::uint64_t h = g.hidden;
    switch (op.kind) {
      case wl::OpKind::Embedding: {
        const float* tok = in(r, "tokens");
        const float* emb = in(r, "embed.tokens.weight");
        float* x = buf(r, op.outputs[0]);
        for (std::uint64_t row = 0; row < op.vec.rows; ++row) {
          const auto t = static_cast<std::uint64_t>(tok[row]);
          for (std::uint64_t c = 0; c < h; ++c) x[row * h + c] = emb[t * h + c];
          if (op.learned_positions) {
            const float* pe = in(r, "embed.positions.weight");
            const std::uint64_t p = op.position + row / op.group;
            for (std::uint64_t c = 0; c < h; ++c) x[row * h + c] += pe[p * h + c];
          }
        }
        return;
      }
      case wl::OpKind::Norm:
      case wl::OpKind::FinalNorm: {
        const float* x = in(r, op.inputs[0]) + op.in_row_offset * op.vec.cols;
        if (op.norm == wl::NormKind::Rms) {
          wl::ref::rms_norm(x, in(r, op.inputs[1]), op.eps, buf(r, op.outputs[0]), op.vec.rows, op.vec.cols);
        } else {
          wl::ref::layer_norm(x, in(r, op.inputs[1]), op.eps, buf(r, op.outputs[0]), op.vec.rows, op.vec.cols);
        }
        return;
      }
      case wl::OpKind::Gemm:
      case wl::OpKind::LmHead: {
        const float* bias = op.gemm.bias ? in(r, op.inputs[2]) : nullptr;
        const float* res = op.gemm.residual ? in(r, op.inputs.back()) : nullptr;
        float* c = buf(r, op.outputs[0]) + op.out_row_offset * op.gemm.n;
        wl::ref::gemm(in(r, op.inputs[0]), in(r, op.inputs[1]), bias, op.gemm.act == Act::Gelu, res, c, op.gemm.m,
                      op.gemm.k, op.gemm.n);
        return;
      }
      case wl::OpKind::Rope:
        wl::ref::rope(buf(r, op.outputs[0]) + op.out_row_offset * op.vec.cols, op.vec.rows, op.vec.cols,
                      op.rope.head_dim, op.rope.rotary_dim, op.rope.theta, op.position, op.group);
        return;
      case wl::OpKind::Attention: {
        const auto& a = op.attn;
        wl::ref::attention(in(r, op.inputs[0]), in(r, op.inputs[1]), in(r, op.inputs[2]), buf(r, op.outputs[0]),
                           a.batch, a.q_len, a.kv_len, a.q_heads, a.kv_heads, a.head_dim);
        return;
      }
      case wl::OpKind::Swiglu:
        wl::ref::swiglu(in(r, op.inputs[0]), buf(r, op.outputs[0]), op.vec.rows, op.vec.cols / 2);
        return;
      case wl::OpKind::Gelu: {
        float* x = buf(r, op.outputs[0]);
        for (std::uint64_t i = 0; i < op.vec.rows * op.vec.cols; ++i) x[i] = wl::ref::gelu(x[i]);
        return;
      }
      case wl::OpKind::Add: {
        const float* x = in(r, op.inputs[0]);
        const float* y = in(r, op.inputs[1]);
        float* o = buf(r, op.outputs[0]);
        for (std::uint64_t i = 0; i < op.vec.rows * op.vec.cols; ++i) o[i] = x[i] + y[i];
        return;
      }
      case wl::OpKind::AllReduce:  // done across ranks by step()
      case wl::OpKind::Sample:     // the host's: the test gathers the logits itself
        return;
    }
  }

  wl::ModelConfig m_;
  unsigned tp_;
  wl::BuildOptions opt_;
  std::vector<wl::Weights> w_;
  std::vector<std::map<std::string, std::vector<float>>> ranks_;
  unsigned pos_ = 0;
};

float max_abs_diff(const wl::Logits& a, const wl::Logits& b) {
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j) d = std::max(d, std::fabs(a[i][j] - b[i][j]));
  }
  return d;
}

// Prefill 4 positions of 3 sequences, then 3 greedy decode steps, graph vs reference.
void check(const wl::ModelConfig& m, unsigned tp, wl::BuildOptions opt = {}) {
  SCOPED_TRACE(m.name + " tp " + std::to_string(tp));
  const auto full = wl::make_weights(m, 21);
  wl::Reference ref(m, full);
  GraphRunner run(m, full, tp, 16, opt);
  const std::vector<std::vector<std::uint32_t>> prompt = {{1, 7, 3, 9}, {40, 2, 2, 5}, {11, 12, 13, 14}};
  const unsigned batch = 3, len = 4;
  std::vector<std::uint32_t> pm;
  for (unsigned t = 0; t < len; ++t) {
    for (unsigned b = 0; b < batch; ++b) pm.push_back(prompt[b][t]);
  }
  auto want = ref.prefill(prompt);
  auto got = run.step(wl::Phase::Prefill, batch, len, pm);
  EXPECT_LT(max_abs_diff(got, want), 1e-4f) << "prefill";
  for (int s = 0; s < 3; ++s) {
    const auto next = wl::greedy(want);
    want = ref.decode(next);
    got = run.step(wl::Phase::Decode, batch, 1, next);
    EXPECT_LT(max_abs_diff(got, want), 1e-4f) << "decode " << s;
  }
}

}  // namespace

TEST(GraphExecution, LlamaFamily) {
  const auto tiny = load("tiny");  // 4 heads, 2 KV heads
  check(tiny, 1);
  check(tiny, 2);
  wl::BuildOptions unfused;
  unfused.fuse_residual = false;
  check(tiny, 1, unfused);
  const auto qwen = wl::parse_model_config(R"({"model_type": "qwen2", "hidden_size": 48, "num_hidden_layers": 2,
    "num_attention_heads": 6, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 101,
    "max_position_embeddings": 64, "rope_theta": 1000000.0})",
                                           "qwen2-like", "");
  check(qwen, 2);  // q/k/v biases, vocabulary padded to 102
}

TEST(GraphExecution, Gpt2Family) {
  const auto g = load("tiny-gpt2");  // biases everywhere, tied head, learned positions
  check(g, 1);
  check(g, 4);
  wl::BuildOptions unfused;
  unfused.fuse_gelu = false;
  unfused.fuse_residual = false;
  check(g, 1, unfused);
}

TEST(GraphExecution, GptNeoxParallelResidual) {
  const auto n = wl::parse_model_config(R"({"model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 99, "max_position_embeddings": 64,
    "rotary_pct": 0.25, "hidden_act": "gelu_fast"})",
                                        "neox-like", "");
  check(n, 1);
  check(n, 2);  // one all-reduce per layer for both branches
  check(n, 4);
}
