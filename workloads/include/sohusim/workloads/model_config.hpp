#pragma once
// A transformer model as the rest of workloads/ sees it, read from a Hugging Face
// config.json. Five families are understood, each with its own key names:
//
//   model_type  norm       MLP                 positions        biases
//   llama       RMSNorm    SwiGLU (gate, up)   RoPE             attention_bias, mlp_bias
//   mistral     RMSNorm    SwiGLU              RoPE             none
//   qwen2       RMSNorm    SwiGLU              RoPE             q, k, v (always)
//   gpt2        LayerNorm  GELU (fc1, fc2)     learned table    all linear layers
//   gpt_neox    LayerNorm  GELU                partial RoPE     all linear layers
//                                              (rotary_pct)     (+ parallel residual)
//
// Keys and defaults per family are listed in docs/workloads.md. Unknown keys are ignored
// (config.json carries many that do not shape the computation: dropout, token ids, ...);
// keys that do shape it are checked: a bad value throws std::invalid_argument naming the
// file, the key and the numbers involved.
//
// Not modelled (ignored if present): sliding windows (mistral's `sliding_window`, qwen2's
// `use_sliding_window`), `rope_scaling` (recorded in `rope_scaling_type` only), dropout,
// quantisation configs.
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/driver/command.hpp"

namespace sohusim::workloads {

enum class Family { Llama, Mistral, Qwen2, Gpt2, GptNeox };
enum class NormKind { Rms, Layer };
/// The MLP's activation. Gelu is always the tanh approximation (the device's GELU).
enum class MlpActivation { Silu, Gelu };

const char* to_string(Family f);         // "llama", "mistral", "qwen2", "gpt2", "gpt_neox"
const char* to_string(NormKind n);       // "rms", "layer"
const char* to_string(MlpActivation a);  // "silu", "gelu"

/// Bytes per element of a data type (FP8 1, BF16/FP16 2, FP32 4).
unsigned element_bytes(driver::DType t);

struct ModelConfig {
  std::string name;        // lookup name (file stem), e.g. "llama-3-8b"
  std::string source;      // the file it was read from ("" when parsed from text)
  std::string model_type;  // as in config.json
  Family family = Family::Llama;

  unsigned hidden = 0;         // hidden_size / n_embd
  unsigned layers = 0;         // num_hidden_layers / n_layer
  unsigned heads = 0;          // num_attention_heads / n_head (query heads)
  unsigned kv_heads = 0;       // num_key_value_heads (= heads when absent)
  unsigned head_dim = 0;       // head_dim if given, else hidden / heads
  unsigned intermediate = 0;   // intermediate_size / n_inner (gpt2: 4 * n_embd when null)
  unsigned vocab = 0;          // vocab_size
  unsigned max_positions = 0;  // max_position_embeddings / n_positions

  bool rope = true;               // rotary positions (false: gpt2's learned table)
  double rope_theta = 10000.0;    // rope_theta / rotary_emb_base
  double rotary_fraction = 1.0;   // rotary_pct / partial_rotary_factor
  std::string rope_scaling_type;  // rope_scaling.rope_type/type if present (not applied)

  NormKind norm = NormKind::Rms;
  double norm_eps = 1e-6;

  std::string activation_name;  // hidden_act / activation_function as written
  MlpActivation activation = MlpActivation::Silu;
  bool gated_mlp = true;  // SwiGLU: down(silu(x Wg) * (x Wu)); else fc2(gelu(x W1))

  bool tied_embeddings = false;    // LM head shares the token embedding table
  bool learned_positions = false;  // gpt2: position embedding table added to the input
  bool parallel_residual = false;  // gpt_neox: x + attn(ln1 x) + mlp(ln2 x)
  bool qkv_bias = false;           // q, k, v projections have biases
  bool o_bias = false;             // attention output projection has a bias
  bool mlp_bias = false;           // MLP projections have biases
  bool norm_bias = false;          // LayerNorm's beta

  unsigned q_dim() const { return heads * head_dim; }
  unsigned kv_dim() const { return kv_heads * head_dim; }
  /// Dimensions of each head that RoPE rotates (head_dim * rotary_fraction, even); 0 without RoPE.
  unsigned rotary_dim() const;

  /// Parameters of the model as published: embeddings (the tied table once), position
  /// table, every projection with its bias, norm gammas (and betas), LM head.
  std::uint64_t parameter_count() const;
  /// Parameters that take part in matrix products (all of the above but the token
  /// embedding table and position table, which are gathered, and the norms).
  std::uint64_t matmul_parameter_count() const;
  std::uint64_t weight_bytes(driver::DType t) const { return parameter_count() * element_bytes(t); }
  /// K and V of one token over all layers: 2 * layers * kv_heads * head_dim elements.
  std::uint64_t kv_bytes_per_token(driver::DType t) const;
};

/// Parses config.json text. `name` becomes ModelConfig::name; `source` is used in error
/// messages ("<source>: key 'x' ...") and stored. Throws std::invalid_argument.
ModelConfig parse_model_config(const std::string& json_text, const std::string& name, const std::string& source);

/// Loads a model: a path to an existing file is read as it is; anything else is a name,
/// lower-cased and looked up as <dir>/models/<name>.json in each search dir in turn
/// (e.g. the repository's configs/). An unknown name throws std::invalid_argument listing
/// the available names.
ModelConfig load_model(const std::string& name_or_path, const std::vector<std::string>& search_dirs);

/// Names (file stems) of <dir>/models/*.json over the search dirs, sorted, without duplicates.
std::vector<std::string> available_models(const std::vector<std::string>& search_dirs);

}  // namespace sohusim::workloads
