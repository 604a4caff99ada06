// CPU reference forward pass: the ops' conventions (the device kernels'), rounding,
// determinism, and the KV cache (decode after prefill == prefill of the longer prompt).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/workloads/reference.hpp"

namespace wl = sohusim::workloads;
using sohusim::driver::DType;

namespace {

wl::ModelConfig load(const std::string& name) {
  return wl::load_model(name, {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
}

// Small models of the other families, from text.
wl::ModelConfig qwen2_like() {
  return wl::parse_model_config(R"({"model_type": "qwen2", "hidden_size": 48, "num_hidden_layers": 2,
    "num_attention_heads": 6, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
    "max_position_embeddings": 64, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6})",
                                "qwen2-like", "");
}

wl::ModelConfig neox_like() {
  return wl::parse_model_config(R"({"model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 100, "max_position_embeddings": 64,
    "rotary_pct": 0.25, "hidden_act": "gelu_fast", "use_parallel_residual": true})",
                                "neox-like", "");
}

float max_abs_diff(const wl::Logits& a, const wl::Logits& b) {
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j) d = std::max(d, std::fabs(a[i][j] - b[i][j]));
  }
  return d;
}

// Decoding `extra` tokens after a prefill gives the logits of prefilling the whole sequence.
void expect_decode_matches_prefill(const wl::ModelConfig& m) {
  const auto w = wl::make_weights(m, 11);
  const std::vector<std::vector<std::uint32_t>> full = {{3, 14, 15, 92, 65, 35, 89, 79},
                                                        {2, 71, 82, 81, 82, 84, 59, 4}};
  const std::size_t prompt = 5;
  wl::Reference inc(m, w);
  std::vector<std::vector<std::uint32_t>> head;
  for (const auto& s : full) head.emplace_back(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(prompt));
  inc.prefill(head);
  for (std::size_t t = prompt; t < full[0].size(); ++t) {
    const auto got = inc.decode({full[0][t], full[1][t]});
    std::vector<std::vector<std::uint32_t>> upto;
    for (const auto& s : full) upto.emplace_back(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(t + 1));
    wl::Reference once(m, w);
    const auto want = once.prefill(upto);
    EXPECT_LT(max_abs_diff(got, want), 1e-4f) << m.name << " position " << t;
  }
  EXPECT_EQ(inc.position(), full[0].size());
}

}  // namespace

TEST(Reference, RoundToNearestEven) {
  // BF16: 8 significant bits. 1 + 2^-8 is a tie -> 1 (even); 1 + 3 * 2^-8 -> 1 + 2^-6.
  EXPECT_EQ(wl::round_to(DType::Bf16, 1.0f + 0x1p-8f), 1.0f);
  EXPECT_EQ(wl::round_to(DType::Bf16, 1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(wl::round_to(DType::Bf16, 1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);
  EXPECT_EQ(wl::round_to(DType::Bf16, -3.0f), -3.0f);
  EXPECT_EQ(wl::round_to(DType::Bf16, std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(wl::round_to(DType::Bf16, 0x1p-130f), 0x1p-130f);  // BF16 subnormal (ulp 2^-133), exact
  EXPECT_EQ(wl::round_to(DType::Bf16, 0x1p-134f), 0.0f);       // half an ulp: tie -> 0
  EXPECT_EQ(wl::round_to(DType::Bf16, 3 * 0x1p-134f), 0x1p-132f);
  EXPECT_TRUE(std::isnan(wl::round_to(DType::Bf16, std::numeric_limits<float>::quiet_NaN())));
  // FP16: 11 significant bits, max 65504, subnormals down to 2^-24.
  EXPECT_EQ(wl::round_to(DType::Fp16, 65519.0f), 65504.0f);
  EXPECT_EQ(wl::round_to(DType::Fp16, 65520.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(wl::round_to(DType::Fp16, -65520.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(wl::round_to(DType::Fp16, 1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(wl::round_to(DType::Fp16, 1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(wl::round_to(DType::Fp16, 0x1p-25f), 0.0f);  // tie between 0 and 2^-24 -> 0
  EXPECT_EQ(wl::round_to(DType::Fp16, 3 * 0x1p-25f), 0x1p-23f);
  EXPECT_TRUE(std::signbit(wl::round_to(DType::Fp16, -0x1p-26f)));
  EXPECT_EQ(wl::round_to(DType::Fp16, 0.1f), 0.0999755859375f);
  EXPECT_EQ(wl::round_to(DType::Fp32, 0.1f), 0.1f);
  EXPECT_THROW(wl::round_to(DType::Fp8E4M3, 1.0f), std::invalid_argument);
}

TEST(Reference, RopeRotatesAdjacentPairsByPositionGroups) {
  // Two heads of 4; rows 0-1 at position 3, rows 2-3 at position 4 (group 2).
  std::vector<float> x(4 * 8);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t h = 0; h < 2; ++h) {
      x[r * 8 + h * 4 + 0] = 1.0f;  // pair 0: (1, 0)
      x[r * 8 + h * 4 + 2] = 1.0f;  // pair 1: (1, 0)
    }
  }
  wl::ref::rope(x.data(), 4, 8, 4, 4, 10000.0f, 3, 2);
  for (std::size_t r = 0; r < 4; ++r) {
    const double pos = r < 2 ? 3.0 : 4.0;
    for (std::size_t h = 0; h < 2; ++h) {
      const float* v = x.data() + r * 8 + h * 4;
      EXPECT_FLOAT_EQ(v[0], static_cast<float>(std::cos(pos)));  // freq 1
      EXPECT_FLOAT_EQ(v[1], static_cast<float>(std::sin(pos)));
      EXPECT_FLOAT_EQ(v[2], static_cast<float>(std::cos(pos * 0.01)));  // freq 10000^(-2/4)
      EXPECT_FLOAT_EQ(v[3], static_cast<float>(std::sin(pos * 0.01)));
    }
  }
  // Partial rotation: only the first rotary_dim elements of a head move.
  std::vector<float> y = {1, 0, 5, 6, 1, 0, 7, 8};
  wl::ref::rope(y.data(), 1, 8, 4, 2, 10000.0f, 1, 1);
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(std::cos(1.0)));
  EXPECT_FLOAT_EQ(y[2], 5.0f);
  EXPECT_FLOAT_EQ(y[3], 6.0f);
  EXPECT_FLOAT_EQ(y[5], static_cast<float>(std::sin(1.0)));
  EXPECT_FLOAT_EQ(y[7], 8.0f);
}

TEST(Reference, NormsAndActivations) {
  const std::vector<float> x = {1, 2, 3, 4}, gamma = {1, 1, 2, 2};
  std::vector<float> out(4);
  wl::ref::rms_norm(x.data(), gamma.data(), 0.0f, out.data(), 1, 4);
  const float inv = 1.0f / std::sqrt(7.5f);
  EXPECT_FLOAT_EQ(out[0], inv);
  EXPECT_FLOAT_EQ(out[3], 8.0f * inv);
  const std::vector<float> gb = {1, 1, 1, 1, 0, 0, 0, 10};
  wl::ref::layer_norm(x.data(), gb.data(), 0.0f, out.data(), 1, 4);
  EXPECT_FLOAT_EQ(out[0], -1.5f / std::sqrt(1.25f));
  EXPECT_FLOAT_EQ(out[3], 1.5f / std::sqrt(1.25f) + 10.0f);
  EXPECT_FLOAT_EQ(wl::ref::gelu(1.0f), 0.841191990f);  // tanh approximation
  EXPECT_FLOAT_EQ(wl::ref::silu(1.0f), 0.731058579f);
  const std::vector<float> gu = {1, -2, 3, 4};  // gate (1, -2), up (3, 4)
  std::vector<float> act(2);
  wl::ref::swiglu(gu.data(), act.data(), 1, 2);
  EXPECT_FLOAT_EQ(act[0], wl::ref::silu(1.0f) * 3.0f);
  EXPECT_FLOAT_EQ(act[1], wl::ref::silu(-2.0f) * 4.0f);
}

TEST(Reference, AttentionLayoutAndGroups) {
  // batch 2, q_len 2 = kv_len 2 (prefill), 2 q heads sharing 1 kv head, head_dim 2.
  // Rows position-major: row t * 2 + b.
  const std::vector<float> q(4 * 4, 0.0f);  // zero queries: uniform weights over visible keys
  std::vector<float> k(4 * 2, 0.0f), v(4 * 2);
  for (std::size_t row = 0; row < 4; ++row) {
    v[row * 2 + 0] = static_cast<float>(row);
    v[row * 2 + 1] = 10.0f * static_cast<float>(row);
  }
  std::vector<float> o(4 * 4);
  wl::ref::attention(q.data(), k.data(), v.data(), o.data(), 2, 2, 2, 2, 1, 2);
  // Position 0 of sequence b sees only its own row b; position 1 averages rows b and 2 + b.
  for (std::size_t b = 0; b < 2; ++b) {
    for (std::size_t h = 0; h < 2; ++h) {
      EXPECT_FLOAT_EQ(o[b * 4 + h * 2], static_cast<float>(b));
      EXPECT_FLOAT_EQ(o[(2 + b) * 4 + h * 2], (static_cast<float>(b) + static_cast<float>(2 + b)) / 2.0f);
      EXPECT_FLOAT_EQ(o[(2 + b) * 4 + h * 2 + 1], 10.0f * (static_cast<float>(b) + static_cast<float>(2 + b)) / 2.0f);
    }
  }
  // A decode query (q_len 1) sees every key; a large score picks its key.
  std::vector<float> q1 = {0, 0, 50, 0};       // one sequence, head 0 neutral, head 1 along x
  std::vector<float> k1 = {0, 0, 1, 0, 0, 0};  // positions 0..2, key 1 along x
  std::vector<float> v1 = {1, 1, 2, 2, 3, 3};
  std::vector<float> o1(4);
  wl::ref::attention(q1.data(), k1.data(), v1.data(), o1.data(), 1, 1, 3, 2, 1, 2);
  EXPECT_FLOAT_EQ(o1[0], 2.0f);  // mean of 1, 2, 3
  EXPECT_NEAR(o1[2], 2.0f, 1e-6f);
}

TEST(Reference, TinyIsDeterministic) {
  const auto m = load("tiny");
  const auto w = wl::make_weights(m, 1);
  wl::Reference a(m, w), b(m, w);
  const std::vector<std::vector<std::uint32_t>> prompt = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}};
  const auto la = a.prefill(prompt);
  const auto lb = b.prefill(prompt);
  ASSERT_EQ(la.size(), 2u);
  ASSERT_EQ(la[0].size(), 256u);
  EXPECT_EQ(la, lb);
  // Golden values (seed 1): any change to the generator or the math shows here.
  const float want0[] = {-0.89858222f, -0.527935982f, 0.223009393f, 0.517998159f};
  const float want1[] = {0.95436883f, 0.632494628f, -0.35624665f, -0.365597695f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(la[0][static_cast<std::size_t>(i)], want0[i], 1e-5f) << i;
    EXPECT_NEAR(la[1][static_cast<std::size_t>(i)], want1[i], 1e-5f) << i;
  }
  const auto next = wl::greedy(la);
  EXPECT_EQ(next, (std::vector<std::uint32_t>{155, 194}));
  const auto l2 = a.decode(next);
  EXPECT_EQ(wl::greedy(l2), (std::vector<std::uint32_t>{183, 96}));
  EXPECT_NEAR(l2[0][0], -1.11140668f, 1e-5f);
  EXPECT_NEAR(l2[1][3], -0.0715712979f, 1e-5f);
  EXPECT_EQ(a.position(), 6u);
  // Another seed, other logits.
  wl::Reference c(m, wl::make_weights(m, 2));
  EXPECT_GT(max_abs_diff(c.prefill(prompt), la), 1e-2f);
}

TEST(Reference, DecodeAfterPrefillEqualsLongerPrefill) {
  expect_decode_matches_prefill(load("tiny"));
  expect_decode_matches_prefill(load("tiny-gpt2"));
  expect_decode_matches_prefill(qwen2_like());
  expect_decode_matches_prefill(neox_like());
}

TEST(Reference, SequencesOfABatchAreIndependent) {
  for (const auto& m : {load("tiny"), load("tiny-gpt2")}) {
    const auto w = wl::make_weights(m, 4);
    wl::Reference both(m, w), one(m, w);
    const auto lb = both.prefill({{5, 6, 7}, {8, 9, 10}});
    const auto l1 = one.prefill({{8, 9, 10}});
    EXPECT_LT(max_abs_diff({lb[1]}, l1), 1e-6f) << m.name;
    const auto db = both.decode({1, 2});
    const auto d1 = one.decode({2});
    EXPECT_LT(max_abs_diff({db[1]}, d1), 1e-6f) << m.name;
  }
}

TEST(Reference, PositionsMatter) {
  for (const auto& m : {load("tiny"), load("tiny-gpt2")}) {
    const auto w = wl::make_weights(m, 4);
    wl::Reference r(m, w);
    const auto a = r.prefill({{5, 6, 7, 7}});
    const auto b = r.prefill({{6, 5, 7, 7}});
    EXPECT_GT(max_abs_diff(a, b), 1e-3f) << m.name;
  }
}

TEST(Reference, Bf16RoundsEveryOutput) {
  const auto m = load("tiny");
  const auto w = wl::make_weights(m, 1);
  wl::Reference f32(m, w), bf16(m, w, DType::Bf16), fp16(m, w, DType::Fp16);
  const std::vector<std::vector<std::uint32_t>> prompt = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}};
  const auto lf = f32.prefill(prompt);
  const auto lb = bf16.prefill(prompt);
  const auto lh = fp16.prefill(prompt);
  for (const auto& row : lb) {
    for (const float x : row) EXPECT_EQ(wl::round_to(DType::Bf16, x), x);
  }
  for (const auto& row : lh) {
    for (const float x : row) EXPECT_EQ(wl::round_to(DType::Fp16, x), x);
  }
  // Rounding moves the logits (|logit| < 2) by a few BF16 ulps at most.
  EXPECT_GT(max_abs_diff(lf, lb), 0.0f);
  EXPECT_LT(max_abs_diff(lf, lb), 0.1f);
  EXPECT_LT(max_abs_diff(lf, lh), 0.02f);
  EXPECT_EQ(bf16.dtype(), DType::Bf16);

  // gpt2: GEMMs with a bias and a residual (two roundings), LayerNorm, learned positions.
  const auto g = load("tiny-gpt2");
  const auto gw = wl::make_weights(g, 1);
  wl::Reference g32(g, gw), g16(g, gw, DType::Bf16);
  const auto a = g32.prefill({{1, 2, 3}});
  const auto b = g16.prefill({{1, 2, 3}});
  for (const float x : b[0]) EXPECT_EQ(wl::round_to(DType::Bf16, x), x);
  const auto d = g16.decode(wl::greedy(b));
  for (const float x : d[0]) EXPECT_EQ(wl::round_to(DType::Bf16, x), x);
  float scale = 0.0f;
  for (const float x : a[0]) scale = std::max(scale, std::fabs(x));
  EXPECT_LT(max_abs_diff(a, b), 0.05f * scale);
}

TEST(Reference, Errors) {
  const auto m = load("tiny");
  const auto w = wl::make_weights(m, 1);
  wl::Reference r(m, w);
  EXPECT_THROW(r.decode({1}), std::invalid_argument);  // no prefill yet
  EXPECT_THROW(r.prefill({{1, 2}, {3}}), std::invalid_argument);
  EXPECT_THROW(r.prefill({{256}}), std::invalid_argument);
  r.prefill({{1, 2}});
  EXPECT_THROW(r.decode({1, 2}), std::invalid_argument);
  EXPECT_THROW(r.prefill({std::vector<std::uint32_t>(129, 1)}), std::invalid_argument);
  EXPECT_THROW(wl::Reference(m, w, DType::Fp8E4M3), std::invalid_argument);
  wl::Weights missing = w;
  missing.tensors.erase("L1.mlp.down_proj.weight");
  EXPECT_THROW(wl::Reference(m, missing), std::invalid_argument);
  EXPECT_EQ(wl::greedy({{0.0f, 2.0f, 2.0f, -1.0f}}), (std::vector<std::uint32_t>{1}));
}
