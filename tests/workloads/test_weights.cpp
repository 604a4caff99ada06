// Synthetic weights: the documented generator, determinism, ranges, and the per-rank slices.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/workloads/weights.hpp"

namespace wl = sohusim::workloads;

namespace {

wl::ModelConfig load(const std::string& name) {
  return wl::load_model(name, {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
}

}  // namespace

TEST(Weights, GeneratorIsTheDocumentedOne) {
  std::uint64_t s = 0;  // splitmix64's published sequence from state 0
  EXPECT_EQ(wl::splitmix64(s), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(wl::splitmix64(s), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(wl::splitmix64(s), 0x06C45D188009454Full);
  EXPECT_EQ(wl::fnv1a64(""), 0xCBF29CE484222325ull);
  EXPECT_EQ(wl::fnv1a64("a"), 0xAF63DC4C8601EC8Cull);

  // Element 0 of a tensor, recomputed from the documented recipe.
  const auto m = load("tiny");
  const auto w = wl::make_weight(m, "L1.attn.q_proj.weight", 1);
  std::uint64_t st = 1 ^ wl::fnv1a64("L1.attn.q_proj.weight");
  const float u = static_cast<float>(wl::splitmix64(st) >> 40) * 0x1p-23f - 1.0f;
  EXPECT_EQ(w.data[0], 0.125f * u);  // 1 / sqrt(K = 64)
}

TEST(Weights, DeterministicAndSeeded) {
  const auto m = load("tiny");
  const auto a = wl::make_weights(m, 1), b = wl::make_weights(m, 1), c = wl::make_weights(m, 2);
  EXPECT_EQ(a.parameters(), m.parameter_count());
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    EXPECT_EQ(t.data, b.at(name).data) << name;
    EXPECT_NE(t.data, c.at(name).data) << name;
    EXPECT_EQ(t.data, wl::make_weight(m, name, 1).data) << name;
  }
  // Ranges: linear weights within 1/sqrt(fan_in), gammas around 1, embeddings within 1.
  for (const float x : a.at("L0.mlp.down_proj.weight").data) EXPECT_LE(std::fabs(x), 1.0f / std::sqrt(128.0f));
  for (const float x : a.at("L0.attn_norm.weight").data) {
    EXPECT_GE(x, 0.9f);
    EXPECT_LE(x, 1.1f);
  }
  for (const float x : a.at("embed.tokens.weight").data) EXPECT_LE(std::fabs(x), 1.0f);
  EXPECT_EQ(a.at("L0.mlp.gate_up_proj.weight").shape, (std::vector<std::uint64_t>{64, 256}));
  EXPECT_THROW(wl::make_weight(m, "L9.attn.q_proj.weight", 1), std::invalid_argument);
}

TEST(Weights, TiedHeadIsTheTransposedTable) {
  const auto m = load("tiny-gpt2");
  const auto w = wl::make_weights(m, 7);
  const auto& e = w.at("embed.tokens.weight");
  const auto& h = w.at("lm_head.weight");
  ASSERT_EQ(h.shape, (std::vector<std::uint64_t>{64, 256}));
  for (std::uint64_t v = 0; v < 256; v += 37) {
    for (std::uint64_t c = 0; c < 64; c += 5) EXPECT_EQ(h.data[c * 256 + v], e.data[v * 64 + c]);
  }
  // LayerNorm weights: gamma row around 1, beta row around 0.
  const auto& ln = w.at("L0.attn_norm.weight");
  ASSERT_EQ(ln.shape, (std::vector<std::uint64_t>{2, 64}));
  EXPECT_NEAR(ln.data[3], 1.0f, 0.1f);
  EXPECT_NEAR(ln.data[64 + 3], 0.0f, 0.1f);
  // The tied table is counted once among the parameters, but held twice here.
  EXPECT_EQ(w.parameters(), m.parameter_count() + 256u * 64u);
}

TEST(Weights, ShardsReassembleTheModel) {
  const auto m = load("tiny");
  const auto full = wl::make_weights(m, 3);
  const unsigned tp = 2;
  std::vector<wl::Weights> parts;
  for (unsigned r = 0; r < tp; ++r) {
    parts.push_back(wl::shard_weights(full, m, {tp, r}));
    for (const auto& t : wl::weight_tensors(m, {tp, r})) {
      ASSERT_TRUE(parts[r].has(t.name)) << t.name;
      EXPECT_EQ(parts[r].at(t.name).shape, t.shape) << t.name;
    }
  }
  // q_proj [64][64] -> [64][32] column blocks.
  const auto& q = full.at("L0.attn.q_proj.weight").data;
  for (unsigned r = 0; r < tp; ++r) {
    const auto& p = parts[r].at("L0.attn.q_proj.weight").data;
    for (std::uint64_t k = 0; k < 64; ++k) {
      for (std::uint64_t n = 0; n < 32; ++n) EXPECT_EQ(p[k * 32 + n], q[k * 64 + r * 32 + n]);
    }
  }
  // o_proj [64][64] -> [32][64] row blocks.
  const auto& o = full.at("L1.attn.o_proj.weight").data;
  for (unsigned r = 0; r < tp; ++r) {
    const auto& p = parts[r].at("L1.attn.o_proj.weight").data;
    for (std::uint64_t i = 0; i < 32 * 64; ++i) EXPECT_EQ(p[i], o[r * 32 * 64 + i]);
  }
  // gate_up [64][gate 128 | up 128] -> [64][gate 64 of rank | up 64 of rank].
  const auto& gu = full.at("L0.mlp.gate_up_proj.weight").data;
  for (unsigned r = 0; r < tp; ++r) {
    const auto& p = parts[r].at("L0.mlp.gate_up_proj.weight").data;
    for (std::uint64_t k = 0; k < 64; k += 7) {
      for (std::uint64_t j = 0; j < 64; ++j) {
        EXPECT_EQ(p[k * 128 + j], gu[k * 256 + r * 64 + j]);             // gate
        EXPECT_EQ(p[k * 128 + 64 + j], gu[k * 256 + 128 + r * 64 + j]);  // up
      }
    }
  }
  // Replicated tensors are copies.
  EXPECT_EQ(parts[1].at("embed.tokens.weight").data, full.at("embed.tokens.weight").data);
  EXPECT_EQ(parts[1].at("L0.attn_norm.weight").data, full.at("L0.attn_norm.weight").data);
}

TEST(Weights, ShardPadsTheVocabulary) {
  const auto m = wl::parse_model_config(
      R"({"model_type": "gpt2", "n_embd": 32, "n_layer": 1, "n_head": 4, "vocab_size": 255, "n_positions": 16})", "pad",
      "");
  const auto full = wl::make_weights(m, 5);
  const auto r0 = wl::shard_weights(full, m, {2, 0});
  const auto r1 = wl::shard_weights(full, m, {2, 1});
  const auto& h = full.at("lm_head.weight").data;  // [32][255]
  const auto& h1 = r1.at("lm_head.weight");
  ASSERT_EQ(h1.shape, (std::vector<std::uint64_t>{32, 128}));
  for (std::uint64_t k = 0; k < 32; ++k) {
    for (std::uint64_t j = 0; j < 127; ++j) EXPECT_EQ(h1.data[k * 128 + j], h[k * 255 + 128 + j]);
    EXPECT_EQ(h1.data[k * 128 + 127], 0.0f);  // column 255: padding
  }
  // Column-split biases are sliced; row-split ones stay with rank 0.
  EXPECT_EQ(r1.at("L0.mlp.fc1.bias").shape, (std::vector<std::uint64_t>{64}));
  EXPECT_TRUE(r0.has("L0.mlp.fc2.bias"));
  EXPECT_FALSE(r1.has("L0.mlp.fc2.bias"));
}
