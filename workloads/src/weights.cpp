#include "sohusim/workloads/weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace sohusim::workloads {
namespace {

// How a tensor's elements are drawn: offset + scale * u.
struct Draw {
  float offset = 0.0f, scale = 1.0f;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

float uniform(std::uint64_t& state) {
  const std::uint64_t x = splitmix64(state);
  return static_cast<float>(x >> 40) * 0x1p-23f - 1.0f;
}

const Tensor& find_full(const std::vector<Tensor>& full, const std::string& name, const ModelConfig& m) {
  for (const auto& t : full) {
    if (t.name == name) return t;
  }
  throw std::invalid_argument((m.name.empty() ? m.model_type : m.name) + ": no weight tensor '" + name + "'");
}

}  // namespace

const WeightTensor& Weights::at(const std::string& name) const {
  const auto it = tensors.find(name);
  if (it == tensors.end()) throw std::out_of_range("weights: no tensor '" + name + "'");
  return it->second;
}

std::uint64_t Weights::parameters() const {
  std::uint64_t n = 0;
  for (const auto& kv : tensors) n += kv.second.data.size();
  return n;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a64(const std::string& s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

WeightTensor make_weight(const ModelConfig& m, const std::string& name, std::uint64_t seed) {
  const std::vector<Tensor> full = weight_tensors(m, Shard{});
  const Tensor& t = find_full(full, name, m);
  WeightTensor w;
  w.shape = t.shape;
  w.data.resize(t.elements());

  if (!t.tied_to.empty()) {
    // lm_head.weight [H][V] = embed.tokens.weight^T.
    const WeightTensor e = make_weight(m, t.tied_to, seed);
    const std::uint64_t v = e.shape[0], h = e.shape[1];
    for (std::uint64_t r = 0; r < v; ++r) {
      for (std::uint64_t c = 0; c < h; ++c) w.data[c * v + r] = e.data[r * h + c];
    }
    return w;
  }

  std::uint64_t state = seed ^ fnv1a64(name);
  const bool is_norm = ends_with(name, "norm.weight");
  if (is_norm) {
    const std::uint64_t h = m.hidden;
    for (std::uint64_t i = 0; i < w.data.size(); ++i) {
      const float offset = i < h ? 1.0f : 0.0f;  // gamma row, then (LayerNorm) beta row
      w.data[i] = offset + 0.1f * uniform(state);
    }
    return w;
  }
  Draw d;
  if (name.rfind("embed.", 0) != 0) {
    // A linear layer's weight [K][N] or bias [N]: fan-in K from the weight's shape.
    const std::string base = name.substr(0, name.rfind('.'));
    const Tensor& wt = find_full(full, base + ".weight", m);
    d.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(wt.shape[0])));
  }
  for (auto& x : w.data) x = d.offset + d.scale * uniform(state);
  return w;
}

Weights make_weights(const ModelConfig& m, std::uint64_t seed) {
  Weights w;
  for (const auto& t : weight_tensors(m, Shard{})) w.tensors.emplace(t.name, make_weight(m, t.name, seed));
  return w;
}

Weights shard_weights(const Weights& full, const ModelConfig& m, const Shard& s) {
  const std::vector<Tensor> local = weight_tensors(m, s);  // checks the shard
  const std::vector<Tensor> whole = weight_tensors(m, Shard{});
  Weights out;
  for (const auto& t : local) {
    const WeightTensor& src = full.at(t.name);
    if (src.shape != find_full(whole, t.name, m).shape) {
      throw std::invalid_argument("shard_weights: tensor '" + t.name + "' does not have the full model's shape");
    }
    WeightTensor dst;
    dst.shape = t.shape;
    dst.data.assign(t.elements(), 0.0f);
    const std::uint64_t r = s.tp_rank;
    if (t.split == Split::Replicated) {
      dst.data = src.data;
    } else if (t.split == Split::Rows) {
      const std::uint64_t rows = t.shape[0], cols = t.shape[1];
      std::copy(src.data.begin() + static_cast<std::ptrdiff_t>(r * rows * cols),
                src.data.begin() + static_cast<std::ptrdiff_t>((r + 1) * rows * cols), dst.data.begin());
    } else {
      // Columns: [K][N] (or a bias [N], K = 1). gate_up holds two blocks, gate and up.
      const bool bias = t.shape.size() == 1;
      const std::uint64_t k = bias ? 1 : t.shape[0];
      const std::uint64_t n_local = bias ? t.shape[0] : t.shape[1];
      const std::uint64_t n_full = bias ? src.shape[0] : src.shape[1];
      const unsigned blocks = t.name.find("gate_up_proj") != std::string::npos ? 2 : 1;
      const std::uint64_t block_local = n_local / blocks, block_full = n_full / blocks;
      for (std::uint64_t row = 0; row < k; ++row) {
        for (unsigned b = 0; b < blocks; ++b) {
          for (std::uint64_t c = 0; c < block_local; ++c) {
            const std::uint64_t fc = r * block_local + c;  // column within the full block
            if (fc >= block_full) continue;                // padded vocabulary: zero
            dst.data[row * n_local + b * block_local + c] = src.data[row * n_full + b * block_full + fc];
          }
        }
      }
    }
    out.tensors.emplace(t.name, std::move(dst));
  }
  return out;
}

}  // namespace sohusim::workloads
