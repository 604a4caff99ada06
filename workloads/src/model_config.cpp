#include "sohusim/workloads/model_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace sohusim::workloads {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Dimensions stay far below 2^32 so that products of three of them fit 64 bits.
constexpr std::uint64_t kMaxDim = 1u << 30;

std::string fmt_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// Typed access to the keys of one config.json, every error prefixed with the source.
class Reader {
 public:
  Reader(const json& j, std::string source) : j_(j), src_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(src_ + ": " + what); }

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  std::optional<unsigned> positive(const char* key) const {
    if (!has(key)) return std::nullopt;
    const json& v = j_.at(key);
    if (v.is_number_unsigned()) {
      const auto x = v.get<std::uint64_t>();
      if (x == 0 || x > kMaxDim) {
        fail("key '" + std::string(key) + "' = " + std::to_string(x) + " is out of range (allowed 1.." +
             std::to_string(kMaxDim) + ")");
      }
      return static_cast<unsigned>(x);
    }
    if (v.is_number_integer()) {
      fail("key '" + std::string(key) + "' = " + std::to_string(v.get<std::int64_t>()) + " must be a positive integer");
    }
    fail("key '" + std::string(key) + "' = " + v.dump() + " must be a positive integer");
  }

  unsigned required(const char* key, const char* what) const {
    const auto v = positive(key);
    if (!v) fail("missing required key '" + std::string(key) + "' (" + what + ")");
    return *v;
  }

  double number(const char* key, double def) const {
    if (!has(key)) return def;
    const json& v = j_.at(key);
    if (!v.is_number()) fail("key '" + std::string(key) + "' = " + v.dump() + " must be a number");
    return v.get<double>();
  }

  double positive_number(const char* key, double def) const {
    const double x = number(key, def);
    if (!std::isfinite(x) || x <= 0.0) {
      fail("key '" + std::string(key) + "' = " + fmt_double(x) + " must be a finite number > 0");
    }
    return x;
  }

  bool boolean(const char* key, bool def) const {
    if (!has(key)) return def;
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail("key '" + std::string(key) + "' = " + v.dump() + " must be true or false");
    return v.get<bool>();
  }

  std::string string(const char* key, const std::string& def) const {
    if (!has(key)) return def;
    const json& v = j_.at(key);
    if (!v.is_string()) fail("key '" + std::string(key) + "' = " + v.dump() + " must be a string");
    return v.get<std::string>();
  }

  const json& raw(const char* key) const { return j_.at(key); }

 private:
  const json& j_;
  std::string src_;
};

struct FamilyKeys {
  const char* model_type;
  Family family;
  const char* hidden;
  const char* layers;
  const char* heads;
  const char* intermediate;  // nullptr: none (gpt2 uses n_inner, optional)
  const char* positions;
  const char* act;
  const char* act_default;
};

constexpr FamilyKeys kFamilies[] = {
    {"llama", Family::Llama, "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
     "max_position_embeddings", "hidden_act", "silu"},
    {"mistral", Family::Mistral, "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
     "max_position_embeddings", "hidden_act", "silu"},
    {"qwen2", Family::Qwen2, "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
     "max_position_embeddings", "hidden_act", "silu"},
    {"gpt2", Family::Gpt2, "n_embd", "n_layer", "n_head", nullptr, "n_positions", "activation_function", "gelu_new"},
    {"gpt_neox", Family::GptNeox, "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
     "max_position_embeddings", "hidden_act", "gelu"},
};

std::string supported_types() {
  std::string s;
  for (const auto& f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f.model_type);
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::invalid_argument(p.string() + ": cannot open file");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

const char* to_string(Family f) {
  for (const auto& k : kFamilies) {
    if (k.family == f) return k.model_type;
  }
  return "?";
}

const char* to_string(NormKind n) {
  return n == NormKind::Rms ? "rms" : "layer";
}
const char* to_string(MlpActivation a) {
  return a == MlpActivation::Silu ? "silu" : "gelu";
}

unsigned element_bytes(driver::DType t) {
  switch (t) {
    case driver::DType::Fp8E4M3:
    case driver::DType::Fp8E5M2:
      return 1;
    case driver::DType::Bf16:
    case driver::DType::Fp16:
      return 2;
    case driver::DType::Fp32:
      return 4;
  }
  throw std::invalid_argument("element_bytes: data type " + std::to_string(static_cast<unsigned>(t)) +
                              " is not a DType (allowed 0..4)");
}

unsigned ModelConfig::rotary_dim() const {
  if (!rope) return 0;
  return static_cast<unsigned>(std::lround(static_cast<double>(head_dim) * rotary_fraction));
}

std::uint64_t ModelConfig::parameter_count() const {
  const std::uint64_t h = hidden, q = q_dim(), kv = kv_dim(), inter = intermediate;
  const std::uint64_t norm_params = h * (norm_bias ? 2 : 1);
  std::uint64_t layer = 2 * norm_params;
  layer += h * q + (qkv_bias ? q : 0);
  layer += 2 * (h * kv + (qkv_bias ? kv : 0));
  layer += q * h + (o_bias ? h : 0);
  if (gated_mlp) {
    layer += 3 * h * inter + (mlp_bias ? 2 * inter + h : 0);
  } else {
    layer += 2 * h * inter + (mlp_bias ? inter + h : 0);
  }
  std::uint64_t total = static_cast<std::uint64_t>(vocab) * h + layer * layers + norm_params;
  if (learned_positions) total += static_cast<std::uint64_t>(max_positions) * h;
  if (!tied_embeddings) total += static_cast<std::uint64_t>(vocab) * h;
  return total;
}

std::uint64_t ModelConfig::matmul_parameter_count() const {
  const std::uint64_t h = hidden, q = q_dim(), kv = kv_dim(), inter = intermediate;
  const std::uint64_t layer = h * q + 2 * h * kv + q * h + (gated_mlp ? 3 : 2) * h * inter;
  return layer * layers + static_cast<std::uint64_t>(vocab) * h;
}

std::uint64_t ModelConfig::kv_bytes_per_token(driver::DType t) const {
  return 2ull * layers * kv_dim() * element_bytes(t);
}

ModelConfig parse_model_config(const std::string& json_text, const std::string& name, const std::string& source) {
  const std::string where = source.empty() ? (name.empty() ? std::string("config") : name) : source;
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(where + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument(where + ": a config.json must be a JSON object");
  const Reader r(j, where);

  ModelConfig c;
  c.name = name;
  c.source = source;
  if (!r.has("model_type")) r.fail("missing required key 'model_type' (supported: " + supported_types() + ")");
  c.model_type = r.string("model_type", "");
  const FamilyKeys* fk = nullptr;
  for (const auto& f : kFamilies) {
    if (c.model_type == f.model_type) fk = &f;
  }
  if (fk == nullptr) {
    r.fail("unknown model_type '" + c.model_type + "' (supported: " + supported_types() + ")");
  }
  c.family = fk->family;
  const bool gpt2 = c.family == Family::Gpt2;
  const bool neox = c.family == Family::GptNeox;

  c.hidden = r.required(fk->hidden, "the hidden size");
  c.layers = r.required(fk->layers, "the number of layers");
  c.heads = r.required(fk->heads, "the number of attention heads");
  c.vocab = r.required("vocab_size", "the vocabulary size");
  c.max_positions = r.required(fk->positions, "the maximum number of positions");
  if (gpt2) {
    c.intermediate = r.positive("n_inner").value_or(4 * c.hidden);
  } else {
    c.intermediate = r.required(fk->intermediate, "the MLP's inner size");
  }

  // Heads: head_dim if the file gives it (some llama/qwen variants), else hidden / heads.
  if (const auto hd = r.positive("head_dim")) {
    c.head_dim = *hd;
  } else {
    if (c.hidden % c.heads != 0) {
      r.fail(std::string("key '") + fk->heads + "' = " + std::to_string(c.heads) + " does not divide '" + fk->hidden +
             "' = " + std::to_string(c.hidden) + " (and no 'head_dim' is given)");
    }
    c.head_dim = c.hidden / c.heads;
  }
  c.kv_heads = c.heads;
  if (!gpt2 && !neox) {
    if (const auto kv = r.positive("num_key_value_heads")) c.kv_heads = *kv;
    if (c.heads % c.kv_heads != 0) {
      r.fail("key 'num_key_value_heads' = " + std::to_string(c.kv_heads) + " does not divide '" + fk->heads +
             "' = " + std::to_string(c.heads) + " (grouped-query attention needs whole groups)");
    }
  }

  // Positions.
  c.rope = !gpt2;
  c.learned_positions = gpt2;
  if (c.rope) {
    const char* theta_key = neox && !r.has("rope_theta") ? "rotary_emb_base" : "rope_theta";
    c.rope_theta = r.positive_number(theta_key, 10000.0);
    const char* frac_key = r.has("partial_rotary_factor") ? "partial_rotary_factor" : "rotary_pct";
    c.rotary_fraction = r.number(frac_key, neox ? 0.25 : 1.0);
    if (!std::isfinite(c.rotary_fraction) || c.rotary_fraction <= 0.0 || c.rotary_fraction > 1.0) {
      r.fail(std::string("key '") + frac_key + "' = " + fmt_double(c.rotary_fraction) +
             " is out of range (allowed (0, 1])");
    }
    const double dims = static_cast<double>(c.head_dim) * c.rotary_fraction;
    const double whole = std::round(dims);
    if (std::fabs(dims - whole) > 1e-9 || static_cast<long>(whole) % 2 != 0 || whole < 2.0) {
      r.fail("head_dim = " + std::to_string(c.head_dim) + " with '" + frac_key +
             "' = " + fmt_double(c.rotary_fraction) + (r.has(frac_key) ? "" : " (default)") + " gives " +
             fmt_double(dims) + " rotary dimensions (must be an even whole number >= 2)");
    }
    if (r.has("rope_scaling")) {
      const json& rs = r.raw("rope_scaling");
      if (!rs.is_object()) r.fail("key 'rope_scaling' = " + rs.dump() + " must be an object or null");
      if (rs.contains("rope_type") && rs.at("rope_type").is_string()) {
        c.rope_scaling_type = rs.at("rope_type").get<std::string>();
      } else if (rs.contains("type") && rs.at("type").is_string()) {
        c.rope_scaling_type = rs.at("type").get<std::string>();
      } else {
        c.rope_scaling_type = "unknown";
      }
    }
  } else {
    c.rotary_fraction = 0.0;
  }

  // Norms.
  if (gpt2 || neox) {
    c.norm = NormKind::Layer;
    c.norm_bias = true;
    c.norm_eps = r.positive_number(gpt2 ? "layer_norm_epsilon" : "layer_norm_eps", 1e-5);
  } else {
    c.norm = NormKind::Rms;
    c.norm_eps = r.positive_number("rms_norm_eps", 1e-6);
  }

  // MLP activation.
  c.activation_name = r.string(fk->act, fk->act_default);
  if (gpt2 || neox) {
    static const char* const kGelu[] = {"gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu"};
    if (std::find_if(std::begin(kGelu), std::end(kGelu), [&](const char* s) { return c.activation_name == s; }) ==
        std::end(kGelu)) {
      r.fail(std::string("key '") + fk->act + "' = '" + c.activation_name + "' is not supported for " + c.model_type +
             " (supported: gelu_new, gelu_fast, gelu_pytorch_tanh, gelu)");
    }
    c.activation = MlpActivation::Gelu;
    c.gated_mlp = false;
  } else {
    if (c.activation_name != "silu" && c.activation_name != "swish") {
      r.fail(std::string("key '") + fk->act + "' = '" + c.activation_name + "' is not supported for " + c.model_type +
             " (supported: silu, swish)");
    }
    c.activation = MlpActivation::Silu;
    c.gated_mlp = true;
  }

  // Embeddings, residual, biases.
  c.tied_embeddings = r.boolean("tie_word_embeddings", gpt2);
  c.parallel_residual = neox && r.boolean("use_parallel_residual", true);
  switch (c.family) {
    case Family::Llama:
      c.qkv_bias = c.o_bias = r.boolean("attention_bias", false);
      c.mlp_bias = r.boolean("mlp_bias", false);
      break;
    case Family::Mistral:
      break;
    case Family::Qwen2:
      c.qkv_bias = true;
      break;
    case Family::Gpt2:
    case Family::GptNeox:
      c.qkv_bias = c.o_bias = c.mlp_bias = true;
      break;
  }
  return c;
}

std::vector<std::string> available_models(const std::vector<std::string>& search_dirs) {
  std::vector<std::string> names;
  for (const auto& d : search_dirs) {
    const fs::path dir = fs::path(d) / "models";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.is_regular_file(ec) && e.path().extension() == ".json") names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

ModelConfig load_model(const std::string& name_or_path, const std::vector<std::string>& search_dirs) {
  std::error_code ec;
  if (!name_or_path.empty() && fs::is_regular_file(name_or_path, ec)) {
    const fs::path p(name_or_path);
    return parse_model_config(read_file(p), p.stem().string(), p.string());
  }
  const std::string name = lower(name_or_path);
  const bool plain = !name.empty() && name.find_first_of("/\\") == std::string::npos;
  if (plain) {
    for (const auto& d : search_dirs) {
      const fs::path p = fs::path(d) / "models" / (name + ".json");
      if (fs::is_regular_file(p, ec)) return parse_model_config(read_file(p), name, p.string());
    }
  }
  std::string looked;
  for (const auto& d : search_dirs) looked += (looked.empty() ? "" : ", ") + (fs::path(d) / "models").string();
  std::string avail;
  for (const auto& n : available_models(search_dirs)) avail += (avail.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown model '" + name_or_path + "': not a file, and no <dir>/models/" + name +
                              ".json in the search dirs (" + (looked.empty() ? "none given" : looked) +
                              "); available: " + (avail.empty() ? "none" : avail));
}

}  // namespace sohusim::workloads
