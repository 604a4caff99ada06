#include "sohusim/workloads/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace sohusim::workloads {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

/// x rounded to a binary format with `mant` stored mantissa bits, smallest normal exponent
/// `min_exp` and largest finite value `max_finite`: scale so that one unit in the last place
/// is 1, round to an integer (ties to even under the default rounding mode), scale back.
/// Both scalings are by powers of two and exact.
float round_format(float x, int mant, int min_exp, float max_finite) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  const int q = std::max(e - 1, min_exp) - mant;
  const float y = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);
  if (std::fabs(y) > max_finite) return std::copysign(std::numeric_limits<float>::infinity(), x);
  return y;
}

}  // namespace

namespace ref {

float gelu(float x) {
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kGeluCubic * (x * x * x))));
}

/// c[m][n] = act(a[m][k] w[k][n] + bias) + residual, FP32; c may be residual (in place).
void gemm(const float* a, const float* w, const float* bias, bool gelu_act, const float* residual, float* c,
          std::size_t m, std::size_t k, std::size_t n) {
  std::vector<float> acc(n);
  for (std::size_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    const float* ar = a + i * k;
    for (std::size_t kk = 0; kk < k; ++kk) {
      const float av = ar[kk];
      const float* wr = w + kk * n;
      for (std::size_t j = 0; j < n; ++j) acc[j] += av * wr[j];
    }
    for (std::size_t j = 0; j < n; ++j) {
      float x = acc[j];
      if (bias != nullptr) x += bias[j];
      if (gelu_act) x = gelu(x);
      if (residual != nullptr) x = residual[i * n + j] + x;
      c[i * n + j] = x;
    }
  }
}

void rms_norm(const float* x, const float* gamma, float eps, float* out, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float ss = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) ss += xr[c] * xr[c];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = xr[c] * inv * gamma[c];
  }
}

void layer_norm(const float* x, const float* gamma_beta, float eps, float* out, std::size_t rows, std::size_t cols) {
  const float* gamma = gamma_beta;
  const float* beta = gamma_beta + cols;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) sum += xr[c];
    const float mean = sum / static_cast<float>(cols);
    float sq = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) sq += (xr[c] - mean) * (xr[c] - mean);
    const float inv = 1.0f / std::sqrt(sq / static_cast<float>(cols) + eps);
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
  }
}

/// In place on rows x cols (cols a multiple of head_dim); row r at position start + r / group.
void rope(float* x, std::size_t rows, std::size_t cols, unsigned head_dim, unsigned rotary_dim, float theta,
          std::uint64_t position, unsigned group) {
  const std::size_t half = rotary_dim / 2;
  std::vector<double> freq(half);
  for (std::size_t i = 0; i < half; ++i) {
    freq[i] = std::pow(static_cast<double>(theta), -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
  }
  std::vector<float> cs(half), sn(half);
  for (std::size_t r = 0; r < rows; ++r) {
    const double pos = static_cast<double>(position + r / group);
    for (std::size_t i = 0; i < half; ++i) {
      cs[i] = static_cast<float>(std::cos(pos * freq[i]));
      sn[i] = static_cast<float>(std::sin(pos * freq[i]));
    }
    for (std::size_t h = 0; h < cols / head_dim; ++h) {
      float* v = x + r * cols + h * head_dim;
      for (std::size_t i = 0; i < half; ++i) {
        const float x0 = v[2 * i], x1 = v[2 * i + 1];
        v[2 * i] = x0 * cs[i] - x1 * sn[i];
        v[2 * i + 1] = x0 * sn[i] + x1 * cs[i];
      }
    }
  }
}

float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

void swiglu(const float* gate_up, float* out, std::size_t rows, std::size_t inter) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* gr = gate_up + r * 2 * inter;
    for (std::size_t j = 0; j < inter; ++j) {
      const float gv = gr[j];
      out[r * inter + j] = gv / (1.0f + std::exp(-gv)) * gr[inter + j];
    }
  }
}

void attention(const float* q, const float* k, const float* v, float* o, unsigned batch, unsigned q_len,
               unsigned kv_len, unsigned q_heads, unsigned kv_heads, unsigned head_dim) {
  const std::size_t B = batch, d = head_dim, qd = static_cast<std::size_t>(q_heads) * d;
  const std::size_t kvd = static_cast<std::size_t>(kv_heads) * d;
  const unsigned group = q_heads / kv_heads;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  std::vector<float> s;
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < q_heads; ++h) {
      const std::size_t g = h / group;
      for (std::size_t t = 0; t < q_len; ++t) {
        const std::size_t row = t * B + b;
        const float* qv = q + row * qd + h * d;
        const std::size_t seen = static_cast<std::size_t>(kv_len) - q_len + t + 1;
        s.assign(seen, 0.0f);
        for (std::size_t j = 0; j < seen; ++j) {
          const float* kv = k + (j * B + b) * kvd + g * d;
          float dot = 0.0f;
          for (std::size_t e = 0; e < d; ++e) dot += qv[e] * kv[e];
          s[j] = dot * scale;
        }
        const float mx = *std::max_element(s.begin(), s.end());
        float sum = 0.0f;
        for (auto& x : s) {
          x = std::exp(x - mx);
          sum += x;
        }
        for (auto& x : s) x /= sum;
        float* ov = o + row * qd + h * d;
        std::fill(ov, ov + d, 0.0f);
        for (std::size_t j = 0; j < seen; ++j) {
          const float* vv = v + (j * B + b) * kvd + g * d;
          for (std::size_t e = 0; e < d; ++e) ov[e] += s[j] * vv[e];
        }
      }
    }
  }
}

}  // namespace ref

float round_to(driver::DType t, float x) {
  switch (t) {
    case driver::DType::Fp32:
      return x;
    case driver::DType::Bf16:
      return round_format(x, 7, -126, 0x1.FEp127f);
    case driver::DType::Fp16:
      return round_format(x, 10, -14, 65504.0f);
    case driver::DType::Fp8E4M3:
    case driver::DType::Fp8E5M2:
      break;
  }
  throw std::invalid_argument("round_to: data type " + std::to_string(static_cast<unsigned>(t)) +
                              " is not supported (allowed: fp32, bf16, fp16)");
}

Reference::Reference(ModelConfig model, const Weights& weights, driver::DType dtype)
    : m_(std::move(model)), dtype_(dtype) {
  round_to(dtype_, 0.0f);  // rejects FP8
  for (const auto& t : weight_tensors(m_, Shard{})) {
    const WeightTensor* src = nullptr;
    if (weights.has(t.name)) src = &weights.at(t.name);
    if (src == nullptr) throw std::invalid_argument("reference: weights lack tensor '" + t.name + "'");
    if (src->shape != t.shape || src->data.size() != t.elements()) {
      throw std::invalid_argument("reference: tensor '" + t.name + "' has the wrong shape or size");
    }
    WeightTensor copy = *src;
    round_all(copy.data);
    w_.tensors.emplace(t.name, std::move(copy));
  }
}

const std::vector<float>& Reference::w(const std::string& name) const {
  return w_.at(name).data;
}

void Reference::round_all(std::vector<float>& v) const {
  if (dtype_ == driver::DType::Fp32) return;
  for (auto& x : v) x = round_to(dtype_, x);
}

Logits Reference::prefill(const std::vector<std::vector<std::uint32_t>>& tokens) {
  if (tokens.empty()) throw std::invalid_argument("reference prefill: batch = 0 (allowed >= 1)");
  const std::size_t len = tokens[0].size();
  if (len == 0) throw std::invalid_argument("reference prefill: empty prompt");
  for (std::size_t b = 0; b < tokens.size(); ++b) {
    if (tokens[b].size() != len) {
      throw std::invalid_argument("reference prefill: prompt " + std::to_string(b) + " has " +
                                  std::to_string(tokens[b].size()) + " tokens, prompt 0 has " + std::to_string(len) +
                                  " (all must have one length)");
    }
  }
  batch_ = static_cast<unsigned>(tokens.size());
  pos_ = 0;
  k_cache_.assign(m_.layers, {});
  v_cache_.assign(m_.layers, {});
  std::vector<std::uint32_t> pm(len * batch_);  // position-major
  for (std::size_t t = 0; t < len; ++t) {
    for (std::size_t b = 0; b < batch_; ++b) pm[t * batch_ + b] = tokens[b][t];
  }
  return step(pm, static_cast<unsigned>(len));
}

Logits Reference::decode(const std::vector<std::uint32_t>& next_tokens) {
  if (batch_ == 0) throw std::invalid_argument("reference decode: no prefill ran yet");
  if (next_tokens.size() != batch_) {
    throw std::invalid_argument("reference decode: " + std::to_string(next_tokens.size()) +
                                " tokens for batch = " + std::to_string(batch_));
  }
  return step(next_tokens, 1);
}

Logits Reference::step(const std::vector<std::uint32_t>& tokens, unsigned q_len) {
  const std::size_t B = batch_, rows = static_cast<std::size_t>(q_len) * B, H = m_.hidden;
  const std::size_t qd = m_.q_dim(), kvd = m_.kv_dim(), I = m_.intermediate;
  const std::uint64_t start = pos_;
  if (start + q_len > m_.max_positions) {
    throw std::invalid_argument("reference: position " + std::to_string(start + q_len - 1) +
                                " is beyond max_positions = " + std::to_string(m_.max_positions));
  }
  for (const auto t : tokens) {
    if (t >= m_.vocab) {
      throw std::invalid_argument("reference: token " + std::to_string(t) + " is out of range (allowed 0.." +
                                  std::to_string(m_.vocab - 1) + ")");
    }
  }
  const float eps = static_cast<float>(m_.norm_eps);
  const float theta = static_cast<float>(m_.rope_theta);
  auto norm = [&](const float* x, const std::string& wname, float* out, std::size_t n_rows) {
    if (m_.norm == NormKind::Rms) {
      ref::rms_norm(x, w(wname).data(), eps, out, n_rows, H);
    } else {
      ref::layer_norm(x, w(wname).data(), eps, out, n_rows, H);
    }
  };
  auto bias = [&](bool has, const std::string& name) -> const float* {
    return has ? w(name + ".bias").data() : nullptr;
  };
  // hidden = a W (+ bias) + hidden. The device's GEMM takes one D operand, a bias row or a
  // residual: with both, it is the GEMM with its bias, rounded, then a vector Add, rounded.
  std::vector<float> tmp;
  auto residual_gemm = [&](const float* a, const std::string& name, bool has_bias, std::vector<float>& x,
                           std::size_t n_rows, std::size_t k) {
    const float* wt = w(name + ".weight").data();
    if (has_bias && dtype_ != driver::DType::Fp32) {
      tmp.resize(n_rows * H);
      ref::gemm(a, wt, bias(true, name), false, nullptr, tmp.data(), n_rows, k, H);
      round_all(tmp);
      for (std::size_t i = 0; i < tmp.size(); ++i) x[i] = x[i] + tmp[i];
    } else {
      ref::gemm(a, wt, bias(has_bias, name), false, x.data(), x.data(), n_rows, k, H);
    }
    round_all(x);
  };

  // Embedding.
  std::vector<float> hidden(rows * H);
  const auto& emb = w("embed.tokens.weight");
  for (std::size_t r = 0; r < rows; ++r) {
    std::copy_n(emb.begin() + static_cast<std::ptrdiff_t>(tokens[r] * H), H,
                hidden.begin() + static_cast<std::ptrdiff_t>(r * H));
    if (m_.learned_positions) {
      const auto& pe = w("embed.positions.weight");
      const std::size_t pos = start + r / B;
      for (std::size_t c = 0; c < H; ++c) hidden[r * H + c] = round_to(dtype_, hidden[r * H + c] + pe[pos * H + c]);
    }
  }

  std::vector<float> normed(rows * H), normed2, q(rows * qd), kn(rows * kvd), vn(rows * kvd), attn(rows * qd);
  std::vector<float> gate_up, act(rows * I);
  if (m_.parallel_residual) normed2.resize(rows * H);
  if (m_.gated_mlp) gate_up.resize(rows * 2 * I);

  for (unsigned l = 0; l < m_.layers; ++l) {
    const std::string p = "L" + std::to_string(l) + ".";
    norm(hidden.data(), p + "attn_norm.weight", normed.data(), rows);
    round_all(normed);
    if (m_.parallel_residual) {
      norm(hidden.data(), p + "mlp_norm.weight", normed2.data(), rows);
      round_all(normed2);
    }

    // Q, K, V; K and V go into the cache at positions start .. start + q_len - 1.
    ref::gemm(normed.data(), w(p + "attn.q_proj.weight").data(), bias(m_.qkv_bias, p + "attn.q_proj"), false, nullptr,
              q.data(), rows, H, qd);
    ref::gemm(normed.data(), w(p + "attn.k_proj.weight").data(), bias(m_.qkv_bias, p + "attn.k_proj"), false, nullptr,
              kn.data(), rows, H, kvd);
    ref::gemm(normed.data(), w(p + "attn.v_proj.weight").data(), bias(m_.qkv_bias, p + "attn.v_proj"), false, nullptr,
              vn.data(), rows, H, kvd);
    round_all(q);
    round_all(kn);
    round_all(vn);
    if (m_.rope) {
      ref::rope(q.data(), rows, qd, m_.head_dim, m_.rotary_dim(), theta, start, batch_);
      ref::rope(kn.data(), rows, kvd, m_.head_dim, m_.rotary_dim(), theta, start, batch_);
      round_all(q);
      round_all(kn);
    }
    auto& kc = k_cache_[l];
    auto& vc = v_cache_[l];
    kc.insert(kc.end(), kn.begin(), kn.end());
    vc.insert(vc.end(), vn.begin(), vn.end());

    ref::attention(q.data(), kc.data(), vc.data(), attn.data(), batch_, q_len, static_cast<unsigned>(start + q_len),
                   m_.heads, m_.kv_heads, m_.head_dim);
    round_all(attn);
    residual_gemm(attn.data(), p + "attn.o_proj", m_.o_bias, hidden, rows, qd);

    // MLP.
    const float* mlp_in = normed.data();
    if (m_.parallel_residual) {
      mlp_in = normed2.data();
    } else {
      norm(hidden.data(), p + "mlp_norm.weight", normed.data(), rows);
      round_all(normed);
    }
    std::string last;
    if (m_.gated_mlp) {
      ref::gemm(mlp_in, w(p + "mlp.gate_up_proj.weight").data(), bias(m_.mlp_bias, p + "mlp.gate_up_proj"), false,
                nullptr, gate_up.data(), rows, H, 2 * I);
      round_all(gate_up);
      ref::swiglu(gate_up.data(), act.data(), rows, I);
      last = p + "mlp.down_proj";
    } else {
      ref::gemm(mlp_in, w(p + "mlp.fc1.weight").data(), bias(m_.mlp_bias, p + "mlp.fc1"), true, nullptr, act.data(),
                rows, H, I);
      last = p + "mlp.fc2";
    }
    round_all(act);
    residual_gemm(act.data(), last, m_.mlp_bias, hidden, rows, I);
  }

  // Head: the last position's rows.
  std::vector<float> fn(B * H), logits(B * m_.vocab);
  norm(hidden.data() + (rows - B) * H, "final_norm.weight", fn.data(), B);
  round_all(fn);
  ref::gemm(fn.data(), w("lm_head.weight").data(), nullptr, false, nullptr, logits.data(), B, H, m_.vocab);
  round_all(logits);
  pos_ += q_len;

  Logits out(B);
  for (std::size_t b = 0; b < B; ++b) {
    out[b].assign(logits.begin() + static_cast<std::ptrdiff_t>(b * m_.vocab),
                  logits.begin() + static_cast<std::ptrdiff_t>((b + 1) * m_.vocab));
  }
  return out;
}

std::vector<std::uint32_t> greedy(const Logits& logits) {
  std::vector<std::uint32_t> out;
  out.reserve(logits.size());
  for (const auto& row : logits) {
    if (row.empty()) throw std::invalid_argument("greedy: empty logits row");
    out.push_back(static_cast<std::uint32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
  }
  return out;
}

}  // namespace sohusim::workloads
