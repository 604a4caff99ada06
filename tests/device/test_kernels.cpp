// Compute kernels against naive references written here in double (triple loops, explicit
// softmax), on random data with fixed seeds, plus hand-computed tiny cases and argument errors.
//
// Tolerance: relative 1e-4, where "relative" is to max(|reference element|, RMS of the
// reference tensor): an FP32 sum that cancels to nearly zero carries the rounding error of
// its terms, so near-zero elements are judged on the tensor's scale.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/device/compute/kernels.hpp"

namespace sohusim::device {
namespace {

constexpr double kRel = 1e-4;

std::vector<float> random_vec(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& ref, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double ss = 0.0;
  for (double r : ref) ss += r * r;
  const double rms = std::sqrt(ss / static_cast<double>(ref.size()));
  int reported = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double tol = kRel * std::max(std::fabs(ref[i]), rms);
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    if (!(err <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " expected " << ref[i];
      if (++reported == 5) return;
    }
  }
}

// Runs f and expects std::invalid_argument whose message contains `field`.
template <class F>
void expect_invalid(F&& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming '" << field << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

double gelu_ref(double x) {
  const double pi = std::acos(-1.0);
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}
double silu_ref(double x) {
  return x / (1.0 + std::exp(-x));
}

// ------------------------------------------------------------------------------------ GEMM

std::vector<double> gemm_ref(const GemmArgs& g, const std::vector<float>& a, const std::vector<float>& b,
                             const std::vector<float>& bias, const std::vector<float>& res) {
  const std::size_t m = g.m, k = g.k, n = g.n;
  std::vector<double> c(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        const double av = a[g.trans_a ? p * m + i : i * k + p];
        const double bv = b[g.trans_b ? j * k + p : p * n + j];
        s += av * bv;
      }
      if (g.bias) s += static_cast<double>(bias[j]);
      switch (g.act) {
        case Activation::None:
          break;
        case Activation::Relu:
          s = std::max(s, 0.0);
          break;
        case Activation::Gelu:
          s = gelu_ref(s);
          break;
        case Activation::Silu:
          s = silu_ref(s);
          break;
      }
      if (g.residual) s += static_cast<double>(res[i * n + j]);
      c[i * n + j] = s;
    }
  }
  return c;
}

void run_gemm_case(const GemmArgs& g, unsigned seed) {
  const auto a = random_vec(g.m * g.k, seed);
  const auto b = random_vec(g.k * g.n, seed + 1);
  const auto bias = random_vec(g.n, seed + 2);
  const auto res = random_vec(g.m * g.n, seed + 3);
  std::vector<float> c(g.m * g.n, -999.0f);
  gemm(g, a.data(), b.data(), g.bias ? bias.data() : nullptr, g.residual ? res.data() : nullptr, c.data());
  expect_close(c, gemm_ref(g, a, b, bias, res),
               "gemm m=" + std::to_string(g.m) + " k=" + std::to_string(g.k) + " n=" + std::to_string(g.n) + " ta=" +
                   std::to_string(g.trans_a) + " tb=" + std::to_string(g.trans_b) + " act=" + to_string(g.act) +
                   " bias=" + std::to_string(g.bias) + " res=" + std::to_string(g.residual));
}

TEST(KernelsTest, GemmShapesAndTransposes) {
  const std::uint64_t shapes[][3] = {{1, 1, 1},   {3, 5, 7},   {7, 5, 3},     {17, 33, 9},
                                     {1, 64, 48}, {40, 1, 12}, {64, 128, 96}, {130, 70, 1}};
  unsigned seed = 1;
  for (const auto& s : shapes) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        GemmArgs g;
        g.m = s[0];
        g.k = s[1];
        g.n = s[2];
        g.trans_a = ta != 0;
        g.trans_b = tb != 0;
        run_gemm_case(g, seed += 10);
      }
    }
  }
}

TEST(KernelsTest, GemmEveryEpilogue) {
  unsigned seed = 100;
  for (unsigned act = 0; act < kNumActivations; ++act) {
    for (int bias = 0; bias < 2; ++bias) {
      for (int res = 0; res < 2; ++res) {
        GemmArgs g;
        g.m = 19;
        g.k = 23;
        g.n = 29;
        g.trans_b = (act & 1u) != 0;
        g.act = static_cast<Activation>(act);
        g.bias = bias != 0;
        g.residual = res != 0;
        run_gemm_case(g, seed += 10);
      }
    }
  }
}

TEST(KernelsTest, GemmHandComputed) {
  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]; + bias [1, -100]; relu; + residual 0.5.
  const float a[] = {1, 2, 3, 4};
  const float b[] = {5, 6, 7, 8};
  const float bias[] = {1, -100};
  const float res[] = {0.5f, 0.5f, 0.5f, 0.5f};
  float c[4] = {};
  GemmArgs g;
  g.m = g.k = g.n = 2;
  g.act = Activation::Relu;
  g.bias = g.residual = true;
  gemm(g, a, b, bias, res, c);
  EXPECT_FLOAT_EQ(c[0], 20.5f);
  EXPECT_FLOAT_EQ(c[1], 0.5f);
  EXPECT_FLOAT_EQ(c[2], 44.5f);
  EXPECT_FLOAT_EQ(c[3], 0.5f);
  // A^T stored: a holds [1 3; 2 4]^T's storage, i.e. op(A) = [1 3; 2 4].
  g = GemmArgs{};
  g.m = g.k = g.n = 2;
  g.trans_a = true;
  gemm(g, a, b, nullptr, nullptr, c);
  EXPECT_FLOAT_EQ(c[0], 1 * 5 + 3 * 7);
  EXPECT_FLOAT_EQ(c[1], 1 * 6 + 3 * 8);
  EXPECT_FLOAT_EQ(c[2], 2 * 5 + 4 * 7);
  EXPECT_FLOAT_EQ(c[3], 2 * 6 + 4 * 8);
}

TEST(KernelsTest, GemmInPlaceResidual) {
  GemmArgs g;
  g.m = 9;
  g.k = 13;
  g.n = 11;
  g.act = Activation::Silu;
  g.bias = true;
  g.residual = true;
  const auto a = random_vec(g.m * g.k, 5);
  const auto b = random_vec(g.k * g.n, 6);
  const auto bias = random_vec(g.n, 7);
  const auto res = random_vec(g.m * g.n, 8);
  std::vector<float> c = res;
  gemm(g, a.data(), b.data(), bias.data(), c.data(), c.data());
  expect_close(c, gemm_ref(g, a, b, bias, res), "gemm in-place residual");
}

TEST(KernelsTest, GemmLargerProduct) {
  GemmArgs g;
  g.m = 192;
  g.k = 256;
  g.n = 160;
  g.trans_b = true;
  run_gemm_case(g, 77);
}

TEST(KernelsTest, GemmArgumentErrors) {
  const float x[4] = {};
  float c[4] = {};
  GemmArgs g;
  g.m = g.k = g.n = 2;
  auto with = [&](auto edit, const char* field) {
    GemmArgs h = g;
    const float* a = x;
    const float* b = x;
    const float* bias = x;
    const float* res = x;
    float* out = c;
    edit(h, a, b, bias, res, out);
    expect_invalid([&] { gemm(h, a, b, bias, res, out); }, field);
  };
  with([](GemmArgs& h, auto&, auto&, auto&, auto&, auto&) { h.m = 0; }, "m = 0");
  with([](GemmArgs& h, auto&, auto&, auto&, auto&, auto&) { h.k = 0; }, "k = 0");
  with([](GemmArgs& h, auto&, auto&, auto&, auto&, auto&) { h.n = 0; }, "n = 0");
  with([](GemmArgs& h, auto&, auto&, auto&, auto&, auto&) { h.n = std::uint64_t{1} << 40; }, "n = ");
  with([](GemmArgs& h, auto&, auto&, auto&, auto&, auto&) { h.act = static_cast<Activation>(9); }, "act");
  with([](GemmArgs&, const float*& a, auto&, auto&, auto&, auto&) { a = nullptr; }, "'a'");
  with([](GemmArgs&, auto&, const float*& b, auto&, auto&, auto&) { b = nullptr; }, "'b'");
  with([](GemmArgs&, auto&, auto&, auto&, auto&, float*& out) { out = nullptr; }, "'c'");
  with(
      [](GemmArgs& h, auto&, auto&, const float*& bias, auto&, auto&) {
        h.bias = true;
        bias = nullptr;
      },
      "'bias'");
  with(
      [](GemmArgs& h, auto&, auto&, auto&, const float*& res, auto&) {
        h.residual = true;
        res = nullptr;
      },
      "'residual'");
  // Unused epilogue operands may be null.
  EXPECT_NO_THROW(gemm(g, x, x, nullptr, nullptr, c));
}

// ------------------------------------------------------------------------------- Attention

std::vector<double> attention_ref(const AttentionArgs& a, const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v) {
  const std::size_t B = a.batch, Lq = a.q_len, Lk = a.kv_len, Hq = a.q_heads, Hk = a.kv_heads, D = a.head_dim;
  const double scale = a.scale != 0.0f ? static_cast<double>(a.scale) : 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> o(B * Lq * Hq * D);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < Hq; ++h) {
      const std::size_t g = h / (Hq / Hk);
      for (std::size_t i = 0; i < Lq; ++i) {
        const std::size_t limit = a.causal ? (Lk - Lq + i + 1) : Lk;  // keys 0..limit-1
        std::vector<double> p(limit);
        double mx = -1e300;
        for (std::size_t j = 0; j < limit; ++j) {
          double s = 0.0;
          for (std::size_t d = 0; d < D; ++d) {
            s += static_cast<double>(q[((i * B + b) * Hq + h) * D + d]) *
                 static_cast<double>(k[((j * B + b) * Hk + g) * D + d]);
          }
          p[j] = s * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (double& x : p) sum += (x = std::exp(x - mx));
        for (std::size_t d = 0; d < D; ++d) {
          double acc = 0.0;
          for (std::size_t j = 0; j < limit; ++j) acc += p[j] * static_cast<double>(v[((j * B + b) * Hk + g) * D + d]);
          o[((i * B + b) * Hq + h) * D + d] = acc / sum;  // position-major
        }
      }
    }
  }
  return o;
}

std::vector<float> run_attention_case(const AttentionArgs& a, unsigned seed, const std::string& what) {
  const std::size_t nq = std::size_t{a.batch} * a.q_len * a.q_heads * a.head_dim;
  const std::size_t nk = std::size_t{a.batch} * a.kv_len * a.kv_heads * a.head_dim;
  // Scores of a few units so the softmax is neither flat nor one-hot.
  const auto q = random_vec(nq, seed, -2.0f, 2.0f);
  const auto k = random_vec(nk, seed + 1, -2.0f, 2.0f);
  const auto v = random_vec(nk, seed + 2);
  std::vector<float> o(nq, -999.0f);
  attention(a, q.data(), k.data(), v.data(), o.data());
  expect_close(o, attention_ref(a, q, k, v), what);
  return o;
}

AttentionArgs attn(std::uint32_t batch, std::uint32_t q_len, std::uint32_t kv_len, std::uint32_t qh, std::uint32_t kvh,
                   std::uint32_t d, bool causal, float scale = 0.0f) {
  AttentionArgs a;
  a.batch = batch;
  a.q_len = q_len;
  a.kv_len = kv_len;
  a.q_heads = qh;
  a.kv_heads = kvh;
  a.head_dim = d;
  a.causal = causal;
  a.scale = scale;
  return a;
}

TEST(KernelsTest, AttentionMultiHeadNonCausal) {
  run_attention_case(attn(2, 5, 7, 4, 4, 16, false), 11, "MHA non-causal");
  run_attention_case(attn(1, 9, 3, 2, 2, 8, false, 0.3f), 12, "MHA explicit scale, q_len > kv_len");
}

TEST(KernelsTest, AttentionGroupedQueryCausalPrefill) {
  // 70 query rows cross the kernel's 64-row tile boundary.
  run_attention_case(attn(2, 70, 70, 8, 2, 32, true), 21, "GQA 8/2 causal prefill");
  run_attention_case(attn(1, 6, 6, 4, 1, 8, true), 22, "MQA causal prefill");
}

TEST(KernelsTest, AttentionCausalDecodeAndChunkedPrefill) {
  run_attention_case(attn(3, 1, 37, 8, 2, 16, true), 31, "GQA causal decode");
  run_attention_case(attn(1, 5, 12, 8, 2, 16, true), 32, "GQA causal chunk at the end of the cache");
  run_attention_case(attn(1, 66, 130, 2, 2, 8, true), 33, "causal chunk spanning two tiles");
}

TEST(KernelsTest, AttentionDecodeEqualsLastRowOfPrefill) {
  constexpr std::size_t kLen = 10, kTokQ = 32, kTokKv = 16;  // floats per token: 4 and 2 heads of 8
  const AttentionArgs pre = attn(1, kLen, kLen, 4, 2, 8, true);
  const auto q = random_vec(kLen * kTokQ, 41);
  const auto k = random_vec(kLen * kTokKv, 42);
  const auto v = random_vec(kLen * kTokKv, 43);
  std::vector<float> o_pre(q.size()), o_dec(kTokQ);
  attention(pre, q.data(), k.data(), v.data(), o_pre.data());
  const AttentionArgs dec = attn(1, 1, kLen, 4, 2, 8, true);
  const std::size_t last = (kLen - 1) * kTokQ;
  attention(dec, q.data() + last, k.data(), v.data(), o_dec.data());
  for (std::size_t i = 0; i < kTokQ; ++i) EXPECT_NEAR(o_dec[i], o_pre[last + i], 1e-6) << i;
}

TEST(KernelsTest, AttentionHandComputed) {
  // One query, two keys, head_dim 1 (default scale 1): scores [0, ln 3] -> weights
  // [1/4, 3/4]; values [4, 8] -> 1 + 6 = 7.
  const float q[] = {1.0f};
  const float k[] = {0.0f, std::log(3.0f)};
  const float v[] = {4.0f, 8.0f};
  float o[1] = {};
  attention(attn(1, 1, 2, 1, 1, 1, false), q, k, v, o);
  EXPECT_NEAR(o[0], 7.0f, 1e-5f);
  // Causal prefill: the first query sees only the first key.
  const float q2[] = {1.0f, 1.0f};
  float o2[2] = {};
  attention(attn(1, 2, 2, 1, 1, 1, true), q2, k, v, o2);
  EXPECT_FLOAT_EQ(o2[0], 4.0f);
  EXPECT_NEAR(o2[1], 7.0f, 1e-5f);
}

TEST(KernelsTest, AttentionArgumentErrors) {
  const float x[64] = {};
  float o[64] = {};
  auto bad = [&](AttentionArgs a, const char* field) { expect_invalid([&] { attention(a, x, x, x, o); }, field); };
  const AttentionArgs ok = attn(1, 2, 2, 2, 2, 4, true);
  AttentionArgs a = ok;
  a.batch = 0;
  bad(a, "batch");
  a = ok;
  a.q_len = 0;
  bad(a, "q_len");
  a = ok;
  a.kv_len = 0;
  bad(a, "kv_len");
  a = ok;
  a.q_heads = 0;
  bad(a, "q_heads");
  a = ok;
  a.kv_heads = 0;
  bad(a, "kv_heads");
  a = ok;
  a.head_dim = 0;
  bad(a, "head_dim");
  a = attn(1, 1, 1, 3, 2, 4, false);
  bad(a, "q_heads = 3 is not a multiple of kv_heads = 2");
  a = attn(1, 3, 2, 1, 1, 4, true);
  bad(a, "q_len = 3 > kv_len = 2");
  a = ok;
  a.scale = -1.0f;
  bad(a, "scale");
  a.scale = std::nanf("");
  bad(a, "scale");
  expect_invalid([&] { attention(ok, nullptr, x, x, o); }, "'q'");
  expect_invalid([&] { attention(ok, x, nullptr, x, o); }, "'k'");
  expect_invalid([&] { attention(ok, x, x, nullptr, o); }, "'v'");
  expect_invalid([&] { attention(ok, x, x, x, nullptr); }, "'o'");
  EXPECT_NO_THROW(attention(ok, x, x, x, o));
}

// ------------------------------------------------------------------------------ Vector ops

std::vector<float> run_vec(VectorOp op, std::uint32_t rows, std::uint32_t cols, const std::vector<float>& x,
                           const std::vector<float>& y, float scalar = 0.0f, std::uint32_t aux = 0,
                           std::uint32_t aux2 = 0) {
  std::vector<float> out(std::size_t{rows} * vector_op_out_cols(op, cols), -999.0f);
  vector_op(op, rows, cols, x.data(), y.empty() ? nullptr : y.data(), out.data(), scalar, aux, aux2);
  return out;
}

std::vector<double> rope_ref(std::uint32_t rows, std::uint32_t cols, const std::vector<float>& x,
                             std::uint32_t head_dim, std::uint32_t pos0, double theta) {
  std::vector<double> o(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const double pos = static_cast<double>(pos0 + r);
    for (std::size_t h = 0; h < cols / head_dim; ++h) {
      for (std::size_t i = 0; i < head_dim / 2; ++i) {
        const double ang = pos / std::pow(theta, static_cast<double>(2 * i) / head_dim);
        const std::size_t at = r * cols + h * head_dim + 2 * i;
        const double x0 = x[at], x1 = x[at + 1];
        o[at] = x0 * std::cos(ang) - x1 * std::sin(ang);
        o[at + 1] = x0 * std::sin(ang) + x1 * std::cos(ang);
      }
    }
  }
  return o;
}

TEST(KernelsTest, VectorOpsAgainstReference) {
  const std::uint32_t rows = 7, cols = 96;
  const std::size_t n = std::size_t{rows} * cols;
  const auto x = random_vec(n, 51, -3.0f, 3.0f);
  const auto y = random_vec(n, 52, -2.0f, 2.0f);
  const auto gamma = random_vec(cols, 53, 0.5f, 1.5f);
  auto gb = gamma;
  const auto beta = random_vec(cols, 54);
  gb.insert(gb.end(), beta.begin(), beta.end());
  const float eps = 1e-5f;

  std::vector<double> rms(n), ln(n), silu(n), gelu(n), add(n), scl(n), cast(n), sm(n);
  std::vector<double> swi(n / 2);
  for (std::size_t r = 0; r < rows; ++r) {
    double ss = 0.0, mean = 0.0, var = 0.0, mx = -1e300, se = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = x[r * cols + j];
      ss += v * v;
      mean += v;
      mx = std::max(mx, v);
    }
    mean /= cols;
    for (std::size_t j = 0; j < cols; ++j) {
      const double d = static_cast<double>(x[r * cols + j]) - mean;
      var += d * d;
      se += std::exp(static_cast<double>(x[r * cols + j]) - mx);
    }
    var /= cols;
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t i = r * cols + j;
      const double v = x[i];
      rms[i] = v / std::sqrt(ss / cols + static_cast<double>(eps)) * static_cast<double>(gamma[j]);
      ln[i] = (v - mean) / std::sqrt(var + static_cast<double>(eps)) * static_cast<double>(gamma[j]) +
              static_cast<double>(beta[j]);
      silu[i] = silu_ref(v);
      gelu[i] = gelu_ref(v);
      add[i] = v + static_cast<double>(y[i]);
      scl[i] = v * -0.375;
      cast[i] = v;
      sm[i] = std::exp(v - mx) / se;
    }
    for (std::size_t j = 0; j < cols / 2; ++j) {
      swi[r * (cols / 2) + j] = silu_ref(x[r * cols + j]) * static_cast<double>(x[r * cols + cols / 2 + j]);
    }
  }
  expect_close(run_vec(VectorOp::RmsNorm, rows, cols, x, gamma, eps), rms, "rmsnorm");
  expect_close(run_vec(VectorOp::LayerNorm, rows, cols, x, gb, eps), ln, "layernorm");
  expect_close(run_vec(VectorOp::Silu, rows, cols, x, {}), silu, "silu");
  expect_close(run_vec(VectorOp::Gelu, rows, cols, x, {}), gelu, "gelu");
  expect_close(run_vec(VectorOp::Swiglu, rows, cols, x, {}), swi, "swiglu");
  expect_close(run_vec(VectorOp::Add, rows, cols, x, y), add, "add");
  expect_close(run_vec(VectorOp::Scale, rows, cols, x, {}, -0.375f), scl, "scale");
  expect_close(run_vec(VectorOp::Cast, rows, cols, x, {}), cast, "cast");
  expect_close(run_vec(VectorOp::Softmax, rows, cols, x, {}), sm, "softmax");
  // RoPE: 3 heads of 32, positions from 1000, LLaMA 3's theta.
  expect_close(run_vec(VectorOp::Rope, rows, cols, x, {}, 500000.0f, 32, 1000),
               rope_ref(rows, cols, x, 32, 1000, 500000.0), "rope");
  expect_close(run_vec(VectorOp::Rope, rows, cols, x, {}, 10000.0f, 96, 0), rope_ref(rows, cols, x, 96, 0, 10000.0),
               "rope one head");
}

TEST(KernelsTest, VectorOpsHandComputed) {
  const auto rms = run_vec(VectorOp::RmsNorm, 1, 2, {3.0f, 4.0f}, {1.0f, 1.0f}, 0.0f);
  EXPECT_FLOAT_EQ(rms[0], static_cast<float>(3.0 / std::sqrt(12.5)));
  EXPECT_FLOAT_EQ(rms[1], static_cast<float>(4.0 / std::sqrt(12.5)));
  const auto ln = run_vec(VectorOp::LayerNorm, 1, 3, {1.0f, 2.0f, 3.0f}, {1, 1, 1, 0, 0, 10}, 0.0f);
  EXPECT_FLOAT_EQ(ln[0], static_cast<float>(-1.0 / std::sqrt(2.0 / 3.0)));
  EXPECT_FLOAT_EQ(ln[1], 0.0f);
  EXPECT_FLOAT_EQ(ln[2], static_cast<float>(1.0 / std::sqrt(2.0 / 3.0) + 10.0));
  const auto sm = run_vec(VectorOp::Softmax, 2, 2, {0.0f, std::log(3.0f), 1000.0f, 1000.0f}, {});
  EXPECT_FLOAT_EQ(sm[0], 0.25f);
  EXPECT_FLOAT_EQ(sm[1], 0.75f);
  EXPECT_FLOAT_EQ(sm[2], 0.5f);  // no overflow: the maximum is subtracted
  EXPECT_FLOAT_EQ(sm[3], 0.5f);
  const auto si = run_vec(VectorOp::Silu, 1, 2, {0.0f, 1.0f}, {});
  EXPECT_EQ(si[0], 0.0f);
  EXPECT_NEAR(si[1], 0.7310585786f, 1e-6f);
  const auto ge = run_vec(VectorOp::Gelu, 1, 2, {0.0f, 1.0f}, {});
  EXPECT_EQ(ge[0], 0.0f);
  EXPECT_NEAR(ge[1], 0.8411919906f, 1e-6f);  // tanh form; the erf form gives 0.8413447
  const auto sw = run_vec(VectorOp::Swiglu, 1, 4, {1.0f, 2.0f, 3.0f, 4.0f}, {});
  ASSERT_EQ(sw.size(), 2u);
  EXPECT_NEAR(sw[0], 0.7310585786f * 3.0f, 1e-6f);
  EXPECT_NEAR(sw[1], 1.7615941560f * 4.0f, 1e-5f);
  // RoPE, head_dim 2, positions 0 and 1: pair 0 rotates by pos radians.
  const auto r1 = run_vec(VectorOp::Rope, 2, 2, {1.0f, 0.0f, 1.0f, 0.0f}, {}, 10000.0f, 2, 0);
  EXPECT_FLOAT_EQ(r1[0], 1.0f);
  EXPECT_FLOAT_EQ(r1[1], 0.0f);
  EXPECT_NEAR(r1[2], 0.5403023059f, 1e-7f);
  EXPECT_NEAR(r1[3], 0.8414709848f, 1e-7f);
  // Position-major rows of a batch of 2 (group 2): rows 0 and 1 are both position 0, rows 2
  // and 3 both position 1.
  std::vector<float> g4(8, 0.0f);
  for (int r = 0; r < 4; ++r) g4[static_cast<std::size_t>(2 * r)] = 1.0f;
  std::vector<float> rg(8);
  vector_op(VectorOp::Rope, 4, 2, g4.data(), nullptr, rg.data(), 10000.0f, 2, 0, 2);
  EXPECT_FLOAT_EQ(rg[0], 1.0f);
  EXPECT_FLOAT_EQ(rg[2], 1.0f);
  EXPECT_NEAR(rg[4], 0.5403023059f, 1e-7f);
  EXPECT_NEAR(rg[6], 0.5403023059f, 1e-7f);
  EXPECT_NEAR(rg[7], 0.8414709848f, 1e-7f);
  // head_dim 4, theta 10000, position 100: pair 1 (x[2], x[3]) turns by 100 / 10000^(2/4) = 1.
  const auto r2 = run_vec(VectorOp::Rope, 1, 4, {0.0f, 0.0f, 0.0f, 2.0f}, {}, 10000.0f, 4, 100);
  EXPECT_NEAR(r2[2], -2.0f * 0.8414709848f, 1e-6f);
  EXPECT_NEAR(r2[3], 2.0f * 0.5403023059f, 1e-6f);
  const auto ad = run_vec(VectorOp::Add, 1, 2, {1.0f, 2.0f}, {10.0f, 20.0f});
  EXPECT_EQ(ad[0], 11.0f);
  EXPECT_EQ(ad[1], 22.0f);
  const auto sc = run_vec(VectorOp::Scale, 1, 2, {1.0f, -2.0f}, {}, 3.0f);
  EXPECT_EQ(sc[0], 3.0f);
  EXPECT_EQ(sc[1], -6.0f);
}

TEST(KernelsTest, VectorOpsInPlace) {
  const std::uint32_t rows = 5, cols = 16;
  const auto x = random_vec(std::size_t{rows} * cols, 61, -3.0f, 3.0f);
  const auto gamma = random_vec(cols, 62);
  for (VectorOp op :
       {VectorOp::RmsNorm, VectorOp::Rope, VectorOp::Softmax, VectorOp::Swiglu, VectorOp::Gelu, VectorOp::Cast}) {
    const auto expected = run_vec(op, rows, cols, x, gamma, 10000.0f, 8, 3);
    std::vector<float> buf = x;
    vector_op(op, rows, cols, buf.data(), gamma.data(), buf.data(), 10000.0f, 8, 3);
    buf.resize(expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(buf[i], expected[i]) << to_string(op) << " " << i;
  }
}

TEST(KernelsTest, VectorOpArgumentErrors) {
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float o[8] = {};
  auto call = [&](VectorOp op, std::uint32_t rows, std::uint32_t cols, const float* y, float scalar,
                  std::uint32_t aux) { vector_op(op, rows, cols, x, y, o, scalar, aux, 0); };
  expect_invalid([&] { call(static_cast<VectorOp>(10), 1, 8, x, 0.0f, 0); }, "op = 10");
  expect_invalid([&] { call(VectorOp::Add, 0, 8, x, 0.0f, 0); }, "rows");
  expect_invalid([&] { call(VectorOp::Add, 1, 0, x, 0.0f, 0); }, "cols");
  expect_invalid([&] { call(VectorOp::Add, 1, 8, nullptr, 0.0f, 0); }, "'y'");
  expect_invalid([&] { call(VectorOp::RmsNorm, 1, 8, nullptr, 0.0f, 0); }, "'y'");
  expect_invalid([&] { call(VectorOp::LayerNorm, 1, 4, x, -1.0f, 0); }, "eps");
  expect_invalid([&] { call(VectorOp::RmsNorm, 1, 4, x, std::nanf(""), 0); }, "eps");
  expect_invalid([&] { call(VectorOp::Rope, 1, 8, nullptr, 10000.0f, 3); }, "head_dim");
  expect_invalid([&] { call(VectorOp::Rope, 1, 8, nullptr, 10000.0f, 0); }, "head_dim");
  expect_invalid([&] { call(VectorOp::Rope, 1, 6, nullptr, 10000.0f, 4); }, "head_dim");
  expect_invalid([&] { call(VectorOp::Rope, 1, 8, nullptr, 0.0f, 4); }, "theta");
  expect_invalid([&] { call(VectorOp::Swiglu, 1, 7, nullptr, 0.0f, 0); }, "cols = 7 must be even");
  expect_invalid([&] { vector_op(VectorOp::Silu, 1, 8, nullptr, nullptr, o, 0.0f, 0, 0); }, "'x'");
  expect_invalid([&] { vector_op(VectorOp::Silu, 1, 8, x, nullptr, nullptr, 0.0f, 0, 0); }, "'out'");
  EXPECT_NO_THROW(call(VectorOp::Silu, 1, 8, nullptr, 0.0f, 0));  // y unused
  EXPECT_NO_THROW(call(VectorOp::Rope, 1, 8, nullptr, 10000.0f, 4));
}

}  // namespace
}  // namespace sohusim::device
