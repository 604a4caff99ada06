// Model configs: the shipped HuggingFace config.json files load with their published
// numbers, lookup by name and by path, and every bad input is refused with a message that
// names the key and the numbers.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/workloads/model_config.hpp"

namespace wl = sohusim::workloads;
using sohusim::driver::DType;

namespace {

std::vector<std::string> dirs() {
  return {std::string(SOHUSIM_SOURCE_DIR) + "/configs"};
}

wl::ModelConfig load(const std::string& name) {
  return wl::load_model(name, dirs());
}

// The message of the std::invalid_argument that f throws ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string llama_json(const std::string& replace_key = "", const std::string& with = "") {
  // A small valid llama config; one key may be replaced (or dropped with an empty value).
  const std::pair<std::string, std::string> kv[] = {{"model_type", "\"llama\""},  {"hidden_size", "64"},
                                                    {"num_hidden_layers", "2"},   {"num_attention_heads", "4"},
                                                    {"num_key_value_heads", "2"}, {"intermediate_size", "128"},
                                                    {"vocab_size", "256"},        {"max_position_embeddings", "128"},
                                                    {"hidden_act", "\"silu\""}};
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : kv) {
    const std::string val = k == replace_key ? with : v;
    if (val.empty()) continue;
    s += (first ? "\"" : ", \"") + k + "\": " + val;
    first = false;
  }
  return s + "}";
}

void expect_params_near(const wl::ModelConfig& m, double published) {
  const double p = static_cast<double>(m.parameter_count());
  EXPECT_NEAR(p / published, 1.0, 0.02) << m.name << ": " << p;
}

}  // namespace

TEST(ModelConfig, Llama3_8B) {
  const auto m = load("llama-3-8b");
  EXPECT_EQ(m.name, "llama-3-8b");
  EXPECT_EQ(m.family, wl::Family::Llama);
  EXPECT_EQ(m.hidden, 4096u);
  EXPECT_EQ(m.layers, 32u);
  EXPECT_EQ(m.heads, 32u);
  EXPECT_EQ(m.kv_heads, 8u);
  EXPECT_EQ(m.head_dim, 128u);
  EXPECT_EQ(m.intermediate, 14336u);
  EXPECT_EQ(m.vocab, 128256u);
  EXPECT_EQ(m.max_positions, 8192u);
  EXPECT_DOUBLE_EQ(m.rope_theta, 500000.0);
  EXPECT_EQ(m.rotary_dim(), 128u);
  EXPECT_EQ(m.norm, wl::NormKind::Rms);
  EXPECT_DOUBLE_EQ(m.norm_eps, 1e-5);
  EXPECT_EQ(m.activation, wl::MlpActivation::Silu);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.qkv_bias || m.o_bias || m.mlp_bias || m.norm_bias || m.learned_positions || m.parallel_residual);
  EXPECT_EQ(m.parameter_count(), 8030261248ull);  // Meta-Llama-3-8B as Hugging Face counts it
  expect_params_near(m, 8.03e9);
}

TEST(ModelConfig, Llama3_70B) {
  const auto m = load("llama-3-70b");
  EXPECT_EQ(m.hidden, 8192u);
  EXPECT_EQ(m.layers, 80u);
  EXPECT_EQ(m.heads, 64u);
  EXPECT_EQ(m.kv_heads, 8u);
  EXPECT_EQ(m.intermediate, 28672u);
  EXPECT_EQ(m.vocab, 128256u);
  EXPECT_EQ(m.max_positions, 8192u);
  EXPECT_DOUBLE_EQ(m.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(m.norm_eps, 1e-5);
  expect_params_near(m, 70.6e9);
  // K and V of one token, BF16: 2 * 80 layers * 8 heads * 128 * 2 bytes.
  EXPECT_EQ(m.kv_bytes_per_token(DType::Bf16), 327680u);
  EXPECT_EQ(m.weight_bytes(DType::Fp8E4M3), m.parameter_count());
  EXPECT_EQ(m.weight_bytes(DType::Bf16), 2 * m.parameter_count());
}

TEST(ModelConfig, Llama2_7B) {
  const auto m = load("llama-2-7b");
  EXPECT_EQ(m.hidden, 4096u);
  EXPECT_EQ(m.kv_heads, 32u);
  EXPECT_EQ(m.intermediate, 11008u);
  EXPECT_EQ(m.vocab, 32000u);
  EXPECT_EQ(m.max_positions, 4096u);
  EXPECT_DOUBLE_EQ(m.rope_theta, 10000.0);  // absent from the file: the default
  EXPECT_EQ(m.parameter_count(), 6738415616ull);
  expect_params_near(m, 6.74e9);
}

TEST(ModelConfig, Mistral7B) {
  const auto m = load("mistral-7b");
  EXPECT_EQ(m.family, wl::Family::Mistral);
  EXPECT_EQ(m.kv_heads, 8u);
  EXPECT_EQ(m.intermediate, 14336u);
  EXPECT_EQ(m.max_positions, 32768u);
  expect_params_near(m, 7.24e9);
}

TEST(ModelConfig, Qwen2_7B) {
  const auto m = load("qwen2-7b");
  EXPECT_EQ(m.family, wl::Family::Qwen2);
  EXPECT_EQ(m.hidden, 3584u);
  EXPECT_EQ(m.layers, 28u);
  EXPECT_EQ(m.heads, 28u);
  EXPECT_EQ(m.kv_heads, 4u);
  EXPECT_EQ(m.head_dim, 128u);
  EXPECT_EQ(m.intermediate, 18944u);
  EXPECT_EQ(m.vocab, 152064u);
  EXPECT_DOUBLE_EQ(m.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(m.norm_eps, 1e-6);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.o_bias);
  expect_params_near(m, 7.62e9);  // Qwen2 technical report: 7.6B
}

TEST(ModelConfig, Gpt2) {
  const auto m = load("gpt2");
  EXPECT_EQ(m.family, wl::Family::Gpt2);
  EXPECT_EQ(m.hidden, 768u);
  EXPECT_EQ(m.layers, 12u);
  EXPECT_EQ(m.heads, 12u);
  EXPECT_EQ(m.kv_heads, 12u);
  EXPECT_EQ(m.intermediate, 3072u);  // n_inner absent: 4 * n_embd
  EXPECT_EQ(m.max_positions, 1024u);
  EXPECT_EQ(m.norm, wl::NormKind::Layer);
  EXPECT_EQ(m.activation, wl::MlpActivation::Gelu);
  EXPECT_EQ(m.activation_name, "gelu_new");
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_FALSE(m.rope);
  EXPECT_EQ(m.rotary_dim(), 0u);
  EXPECT_TRUE(m.tied_embeddings && m.learned_positions && m.qkv_bias && m.o_bias && m.mlp_bias && m.norm_bias);
  EXPECT_EQ(m.parameter_count(), 124439808ull);  // GPT-2 small
  expect_params_near(m, 124e6);
}

TEST(ModelConfig, GptNeox20B) {
  const auto m = load("gpt-neox-20b");
  EXPECT_EQ(m.family, wl::Family::GptNeox);
  EXPECT_EQ(m.hidden, 6144u);
  EXPECT_EQ(m.layers, 44u);
  EXPECT_EQ(m.heads, 64u);
  EXPECT_EQ(m.head_dim, 96u);
  EXPECT_EQ(m.intermediate, 24576u);
  EXPECT_EQ(m.vocab, 50432u);
  EXPECT_EQ(m.rotary_dim(), 24u);           // rotary_pct 0.25
  EXPECT_DOUBLE_EQ(m.rope_theta, 10000.0);  // rotary_emb_base
  EXPECT_TRUE(m.parallel_residual);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.activation_name, "gelu_fast");
  // The model card gives 20,556,201,984 (0.01% more than the config gives).
  EXPECT_NEAR(static_cast<double>(m.parameter_count()) / 20556201984.0, 1.0, 1e-3);
  expect_params_near(m, 20.6e9);
}

TEST(ModelConfig, Gpt3_175B) {
  const auto m = load("gpt-3-175b");
  EXPECT_EQ(m.family, wl::Family::Gpt2);
  EXPECT_EQ(m.hidden, 12288u);
  EXPECT_EQ(m.heads, 96u);
  EXPECT_EQ(m.head_dim, 128u);
  EXPECT_EQ(m.layers, 96u);
  EXPECT_EQ(m.intermediate, 49152u);  // n_inner null: 4 * n_embd
  EXPECT_EQ(m.max_positions, 2048u);
  EXPECT_EQ(m.vocab, 50257u);
  expect_params_near(m, 175e9);
}

TEST(ModelConfig, Tiny) {
  const auto m = load("tiny");
  EXPECT_EQ(m.hidden, 64u);
  EXPECT_EQ(m.layers, 2u);
  EXPECT_EQ(m.heads, 4u);
  EXPECT_EQ(m.kv_heads, 2u);
  EXPECT_EQ(m.head_dim, 16u);
  EXPECT_EQ(m.intermediate, 128u);
  EXPECT_EQ(m.vocab, 256u);
  EXPECT_EQ(m.max_positions, 128u);
}

TEST(ModelConfig, EveryShippedConfigLoads) {
  const auto names = wl::available_models(dirs());
  for (const char* n : {"llama-3-8b", "llama-3-70b", "llama-2-7b", "mistral-7b", "qwen2-7b", "gpt2", "gpt-neox-20b",
                        "gpt-3-175b", "tiny", "tiny-gpt2"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  for (const auto& n : names) EXPECT_NO_THROW(load(n)) << n;
}

TEST(ModelConfig, NameLookupMatchesPath) {
  const std::string path = dirs()[0] + "/models/llama-3-8b.json";
  const auto by_path = wl::load_model(path, {});
  const auto by_name = load("llama-3-8b");
  const auto by_upper = load("LLaMA-3-8B");
  EXPECT_EQ(by_path.name, "llama-3-8b");
  EXPECT_EQ(by_path.source, path);
  EXPECT_EQ(by_name.source, path);
  EXPECT_EQ(by_upper.name, "llama-3-8b");
  EXPECT_EQ(by_path.parameter_count(), by_name.parameter_count());
  EXPECT_EQ(by_upper.parameter_count(), by_name.parameter_count());

  const std::string msg = error_of([] { load("llama-9-1t"); });
  EXPECT_NE(msg.find("unknown model 'llama-9-1t'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("available: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("llama-3-8b"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tiny"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { wl::load_model("no/such/file.json", dirs()); }).find("unknown model"), std::string::npos);
}

TEST(ModelConfig, ErrorsNameTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "sohusim_wl_bad_model.json";
  {
    std::ofstream out(path);
    out << llama_json("num_key_value_heads", "3");
  }
  const std::string msg = error_of([&] { wl::load_model(path.string(), {}); });
  std::filesystem::remove(path);
  EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("'num_key_value_heads' = 3"), std::string::npos) << msg;
}

TEST(ModelConfig, ValidBaseTextParses) {
  const auto m = wl::parse_model_config(llama_json(), "t", "t.json");
  EXPECT_EQ(m.head_dim, 16u);
  EXPECT_EQ(m.kv_heads, 2u);
  EXPECT_DOUBLE_EQ(m.norm_eps, 1e-6);  // LlamaConfig's default rms_norm_eps
}

TEST(ModelConfig, UnknownModelType) {
  const std::string msg = error_of([] { wl::parse_model_config(llama_json("model_type", "\"bert\""), "t", "t.json"); });
  EXPECT_NE(msg.find("t.json: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown model_type 'bert'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("llama, mistral, qwen2, gpt2, gpt_neox"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { wl::parse_model_config(llama_json("model_type", ""), "t", "t.json"); }).find("'model_type'"),
            std::string::npos);
}

TEST(ModelConfig, MissingHiddenSize) {
  const std::string msg = error_of([] { wl::parse_model_config(llama_json("hidden_size", ""), "t", "t.json"); });
  EXPECT_NE(msg.find("missing required key 'hidden_size'"), std::string::npos) << msg;
  // gpt2 names it n_embd.
  const std::string g = error_of([] {
    wl::parse_model_config(R"({"model_type": "gpt2", "n_layer": 2, "n_head": 2, "vocab_size": 10, "n_positions": 8})",
                           "g", "g.json");
  });
  EXPECT_NE(g.find("missing required key 'n_embd'"), std::string::npos) << g;
}

TEST(ModelConfig, HeadsNotDividingHidden) {
  const std::string msg = error_of([] { wl::parse_model_config(llama_json("hidden_size", "66"), "t", "t.json"); });
  EXPECT_NE(msg.find("'num_attention_heads' = 4 does not divide 'hidden_size' = 66"), std::string::npos) << msg;
  // With an explicit head_dim the split need not be even.
  std::string text = llama_json("hidden_size", "66");
  text.insert(1, "\"head_dim\": 32, ");
  const auto m = wl::parse_model_config(text, "t", "t.json");
  EXPECT_EQ(m.head_dim, 32u);
  EXPECT_EQ(m.q_dim(), 128u);
  // An odd head_dim cannot rotate in pairs.
  text = llama_json("hidden_size", "100");
  text.insert(1, "\"head_dim\": 25, ");
  const std::string odd = error_of([&] { wl::parse_model_config(text, "t", "t.json"); });
  EXPECT_NE(odd.find("head_dim = 25 with 'rotary_pct' = 1 (default) gives 25 rotary dimensions"), std::string::npos)
      << odd;
}

TEST(ModelConfig, KvHeadsNotDividingHeads) {
  const std::string msg =
      error_of([] { wl::parse_model_config(llama_json("num_key_value_heads", "3"), "t", "t.json"); });
  EXPECT_NE(msg.find("'num_key_value_heads' = 3 does not divide 'num_attention_heads' = 4"), std::string::npos) << msg;
}

TEST(ModelConfig, NonPositiveAndWrongTypes) {
  std::string msg = error_of([] { wl::parse_model_config(llama_json("num_hidden_layers", "0"), "t", "t.json"); });
  EXPECT_NE(msg.find("'num_hidden_layers' = 0 is out of range"), std::string::npos) << msg;
  msg = error_of([] { wl::parse_model_config(llama_json("vocab_size", "-5"), "t", "t.json"); });
  EXPECT_NE(msg.find("'vocab_size' = -5 must be a positive integer"), std::string::npos) << msg;
  msg = error_of([] { wl::parse_model_config(llama_json("hidden_size", "\"big\""), "t", "t.json"); });
  EXPECT_NE(msg.find("'hidden_size' = \"big\" must be a positive integer"), std::string::npos) << msg;
  std::string text = llama_json();
  text.insert(1, "\"rms_norm_eps\": -1e-5, ");
  msg = error_of([&] { wl::parse_model_config(text, "t", "t.json"); });
  EXPECT_NE(msg.find("'rms_norm_eps' = -1e-05 must be a finite number > 0"), std::string::npos) << msg;
  text = llama_json();
  text.insert(1, "\"rope_theta\": 0, ");
  msg = error_of([&] { wl::parse_model_config(text, "t", "t.json"); });
  EXPECT_NE(msg.find("'rope_theta' = 0"), std::string::npos) << msg;
  msg = error_of([] { wl::parse_model_config("[1, 2]", "t", "t.json"); });
  EXPECT_NE(msg.find("JSON object"), std::string::npos) << msg;
  msg = error_of([] { wl::parse_model_config("{\"model_type\": ", "t", "t.json"); });
  EXPECT_NE(msg.find("t.json: invalid JSON"), std::string::npos) << msg;
}

TEST(ModelConfig, UnsupportedActivation) {
  const std::string msg = error_of([] { wl::parse_model_config(llama_json("hidden_act", "\"relu\""), "t", "t.json"); });
  EXPECT_NE(msg.find("'hidden_act' = 'relu' is not supported for llama (supported: silu, swish)"), std::string::npos)
      << msg;
  const std::string g = error_of([] {
    wl::parse_model_config(R"({"model_type": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 2, "vocab_size": 10,
                               "n_positions": 8, "activation_function": "relu"})",
                           "g", "g.json");
  });
  EXPECT_NE(g.find("'activation_function' = 'relu' is not supported for gpt2"), std::string::npos) << g;
}

TEST(ModelConfig, BadRotaryFraction) {
  const std::string msg = error_of([] {
    wl::parse_model_config(R"({"model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 10, "max_position_embeddings": 8,
      "rotary_pct": 0.3})",
                           "n", "n.json");
  });
  EXPECT_NE(msg.find("head_dim = 16 with 'rotary_pct' = 0.3 gives 4.8 rotary dimensions"), std::string::npos) << msg;
}

TEST(ModelConfig, FamilyFlags) {
  std::string text = llama_json();
  text.insert(1, "\"attention_bias\": true, \"mlp_bias\": true, \"tie_word_embeddings\": true, ");
  auto m = wl::parse_model_config(text, "t", "");
  EXPECT_TRUE(m.qkv_bias && m.o_bias && m.mlp_bias && m.tied_embeddings);
  text = llama_json();
  text.insert(1, R"("rope_scaling": {"rope_type": "llama3", "factor": 8.0}, )");
  m = wl::parse_model_config(text, "t", "");
  EXPECT_EQ(m.rope_scaling_type, "llama3");
  // Tying removes the LM head's parameters.
  const auto untied = wl::parse_model_config(llama_json(), "t", "");
  EXPECT_EQ(untied.parameter_count() - 256u * 64u, wl::parse_model_config(
                                                       [] {
                                                         std::string s = llama_json();
                                                         s.insert(1, "\"tie_word_embeddings\": true, ");
                                                         return s;
                                                       }(),
                                                       "t", "")
                                                       .parameter_count());
}
