#include "sohusim/workloads/compiler.hpp"

#include <stdexcept>
#include <string>

namespace sohusim::workloads {

namespace {

constexpr std::uint64_t kAlign = 256;

std::uint64_t align_up(std::uint64_t v) {
  return (v + kAlign - 1) & ~(kAlign - 1);
}

std::string gib(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return buf;
}

}  // namespace

std::uint64_t MemoryPlan::address(const std::string& tensor) const {
  const auto it = regions.find(tensor);
  if (it == regions.end())
    throw std::invalid_argument("compiler: tensor `" + tensor + "` has no place in device memory");
  return base + it->second.offset;
}

void check_weights_fit(const ModelConfig& m, const Shard& s, driver::DType dtype, std::uint64_t hbm_bytes) {
  // The matrix weights split evenly over the ranks: a lower bound of what a rank holds. In
  // long double, so that absurd sizes (a billion layers) compare rather than wrap.
  using L = long double;
  const L h = m.hidden, q = m.q_dim(), kv = m.kv_dim(), inter = m.intermediate;
  const L per_layer = h * q + 2 * h * kv + q * h + (m.gated_mlp ? 3 : 2) * h * inter;
  const L params = per_layer * m.layers + static_cast<L>(m.vocab) * h;  // as matmul_parameter_count()
  const L need = params * element_bytes(dtype) / std::max(1u, s.tp_degree);
  if (need > static_cast<long double>(hbm_bytes)) {
    const auto shown = need > 1e18L ? std::string("more than 1e9 GiB") : gib(static_cast<std::uint64_t>(need));
    throw std::invalid_argument("model `" + m.name + "` does not fit: its matrix weights alone need " + shown +
                                " per device (" + std::to_string(m.layers) + " layers, tensor-parallel degree " +
                                std::to_string(s.tp_degree) + ") but the device has " + gib(hbm_bytes) +
                                "; use more devices or a narrower data type, or check the model's sizes");
  }
}

MemoryPlan plan_memory(const ModelConfig& m, const Shard& s, driver::DType dtype, const Graph& prefill,
                       std::uint64_t hbm_bytes) {
  const unsigned eb = element_bytes(dtype);
  MemoryPlan p;
  std::uint64_t at = 0;
  auto place = [&](const std::string& name, std::uint64_t bytes) {
    p.regions[name] = Region{at, bytes};
    at = align_up(at + bytes);
  };
  // Weights first (the bulk; a stable layout across runs), then the KV cache, then the
  // activation buffers and one scratch buffer as large as the largest activation.
  for (const Tensor& t : prefill.tensors) {
    if (t.kind == TensorKind::Weight) {
      place(t.name, t.elements() * eb);
      p.weight_bytes += t.elements() * eb;
    }
  }
  for (const Tensor& t : prefill.tensors) {
    if (t.kind == TensorKind::KvCache) {
      place(t.name, t.elements() * eb);
      p.kv_bytes += t.elements() * eb;
    }
  }
  std::uint64_t largest = 0;
  for (const Tensor& t : prefill.tensors) {
    if (t.kind == TensorKind::Activation || t.kind == TensorKind::Logits) {
      place(t.name, t.elements() * eb);
      p.activation_bytes += t.elements() * eb;
      largest = std::max(largest, t.elements() * eb);
    }
  }
  place("scratch", largest);
  p.activation_bytes += largest;
  p.total_bytes = at;
  if (p.total_bytes > hbm_bytes) {
    throw std::invalid_argument(
        "model `" + m.name + "` does not fit: tensor-parallel rank " + std::to_string(s.tp_rank) + " of " +
        std::to_string(s.tp_degree) + " needs " + gib(p.total_bytes) + " of device memory (weights " +
        gib(p.weight_bytes) + ", KV cache " + gib(p.kv_bytes) + " for " + std::to_string(prefill.kv_capacity) +
        " positions x batch " + std::to_string(prefill.batch) + ", activations " + gib(p.activation_bytes) +
        ") but the device has " + gib(hbm_bytes) + "; use more devices, a smaller batch or context, or fp8");
  }
  return p;
}

namespace {

class Lowering {
 public:
  Lowering(const Graph& g, const MemoryPlan& plan, const CompileOptions& opt)
      : g_(g), plan_(plan), opt_(opt), eb_(element_bytes(opt.dtype)), tag_(opt.tag_base) {}

  CompiledProgram run() {
    CompiledProgram out;
    out.program.name = std::string(to_string(g_.phase)) + " of " + g_.model;
    const int last = opt_.last_layer < 0 ? 1 << 30 : opt_.last_layer;
    for (const Op& op : g_.ops) {
      const std::size_t first = cmds_.size();
      const bool in_stage = op.layer >= 0                  ? (op.layer >= opt_.first_layer && op.layer <= last)
                            : op.kind == OpKind::Embedding ? opt_.with_embedding
                                                           : opt_.with_head;
      if (in_stage) lower(op);
      out.op_first.push_back(first);
      out.op_count.push_back(cmds_.size() - first);
    }
    out.program.commands = std::move(cmds_);
    out.next_tag = tag_;
    return out;
  }

 private:
  std::uint64_t addr(const std::string& t, std::uint64_t row = 0, std::uint64_t row_elems = 0) const {
    return plan_.address(t) + row * row_elems * eb_;
  }
  static std::uint32_t u32(std::uint64_t v, const Op& op, const char* what) {
    if (v == 0 || v > 0xFFFF'FFFFULL)
      throw std::invalid_argument("compiler: " + op.name + ": " + what + " = " + std::to_string(v) +
                                  " does not fit a command field (1 .. 4294967295)");
    return static_cast<std::uint32_t>(v);
  }

  void lower(const Op& op) {
    switch (op.kind) {
      case OpKind::Embedding:
        return embedding(op);
      case OpKind::Norm:
      case OpKind::FinalNorm:
        return norm(op);
      case OpKind::Gemm:
      case OpKind::LmHead:
        return gemm(op);
      case OpKind::Rope:
        return rope(op);
      case OpKind::Attention:
        return attention(op);
      case OpKind::Swiglu:
        return unary(op, driver::VOp::Swiglu);
      case OpKind::Gelu:
        return unary(op, driver::VOp::Gelu);
      case OpKind::Add:
        return add(op.inputs.at(0), op.inputs.at(1), op.outputs.at(0), op);
      case OpKind::AllReduce:
        return all_reduce(op);
      case OpKind::Sample:
        return;  // on the host
    }
  }

  void embedding(const Op& op) {
    const std::uint64_t rows = op.vec.rows, h = op.vec.cols, row_bytes = h * eb_;
    const std::string& table = op.inputs.at(1);
    if (opt_.functional) {
      if (opt_.tokens.size() != rows) {
        throw std::invalid_argument("compiler: embedding needs one token per row (" + std::to_string(rows) + " rows, " +
                                    std::to_string(opt_.tokens.size()) + " tokens)");
      }
      for (std::uint64_t r = 0; r < rows; ++r) {
        cmds_.push_back(driver::dma_copy(driver::Space::Hbm, addr(table, opt_.tokens[r], h), driver::Space::Hbm,
                                         addr("hidden", r, h), row_bytes));
      }
    } else {
      cmds_.push_back(
          driver::dma_copy(driver::Space::Hbm, addr(table), driver::Space::Hbm, addr("hidden"), rows * row_bytes));
    }
    if (op.learned_positions) {
      const std::string& pos = op.inputs.at(2);
      if (opt_.functional) {
        for (std::uint64_t r = 0; r < rows; ++r) {
          cmds_.push_back(driver::dma_copy(driver::Space::Hbm, addr(pos, op.position + r / op.group, h),
                                           driver::Space::Hbm, addr("scratch", r, h), row_bytes));
        }
      } else {
        cmds_.push_back(
            driver::dma_copy(driver::Space::Hbm, addr(pos), driver::Space::Hbm, addr("scratch"), rows * row_bytes));
      }
      vec(driver::VOp::Add, addr("hidden"), addr("scratch"), addr("hidden"), rows, h, op);
    }
  }

  void vec(driver::VOp v, std::uint64_t x, std::uint64_t y, std::uint64_t out, std::uint64_t rows, std::uint64_t cols,
           const Op& op, float scalar = 0.0f, std::uint32_t aux = 0, std::uint32_t aux2 = 0, std::uint32_t group = 1) {
    driver::VectorDesc d;
    d.op = v;
    d.x = x;
    d.y = y;
    d.out = out;
    d.rows = u32(rows, op, "rows");
    d.cols = u32(cols, op, "cols");
    d.in = d.out_type = opt_.dtype;
    d.scalar = scalar;
    d.aux = aux;
    d.aux2 = aux2;
    d.rope_group = group;
    cmds_.push_back(driver::vector(d));
  }

  void norm(const Op& op) {
    const std::uint64_t rows = op.vec.rows, cols = op.vec.cols;
    vec(op.norm == NormKind::Rms ? driver::VOp::RmsNorm : driver::VOp::LayerNorm,
        addr(op.inputs.at(0), op.in_row_offset, cols), addr(op.inputs.at(1)), addr(op.outputs.at(0)), rows, cols, op,
        op.eps);
  }

  void gemm(const Op& op) {
    const GemmShape& s = op.gemm;
    driver::GemmDesc d;
    d.a = addr(op.inputs.at(0), op.in_row_offset, s.k);
    d.b = addr(op.inputs.at(1));
    d.m = u32(s.m, op, "m");
    d.k = u32(s.k, op, "k");
    d.n = u32(s.n, op, "n");
    d.in = d.out = opt_.dtype;
    d.act = s.act;
    const std::string& out = op.outputs.at(0);
    const std::uint64_t c = addr(out, op.out_row_offset, s.n);
    if (s.bias && s.residual) {
      // One D operand per GEMM: bias in the epilogue into scratch, then the residual add.
      d.c = addr("scratch");
      d.d = addr(op.inputs.at(2));
      d.bias = true;
      cmds_.push_back(driver::gemm(d));
      vec(driver::VOp::Add, addr("scratch"), addr(op.inputs.back(), op.out_row_offset, s.n), c, s.m, s.n, op);
      return;
    }
    d.c = c;
    if (s.bias) {
      d.d = addr(op.inputs.at(2));
      d.bias = true;
    } else if (s.residual) {
      d.d = addr(op.inputs.back(), op.out_row_offset, s.n);
      d.residual = true;
    }
    cmds_.push_back(driver::gemm(d));
  }

  void rope(const Op& op) {
    if (opt_.functional && op.rope.rotary_dim != op.rope.head_dim) {
      throw std::invalid_argument("compiler: " + op.name + ": partial rotary embeddings (" +
                                  std::to_string(op.rope.rotary_dim) + " of " + std::to_string(op.rope.head_dim) +
                                  " dimensions) are not a device operation; functional mode cannot run this model");
    }
    const std::string& buf = op.inputs.at(0);
    const std::uint64_t x = addr(buf, op.out_row_offset, op.vec.cols);
    vec(driver::VOp::Rope, x, 0, x, op.vec.rows, op.vec.cols, op, op.rope.theta, op.rope.head_dim,
        static_cast<std::uint32_t>(op.position), op.group);
  }

  void attention(const Op& op) {
    const AttentionShape& a = op.attn;
    driver::AttentionDesc d;
    const std::uint64_t q_cols = static_cast<std::uint64_t>(a.q_heads) * a.head_dim;
    const std::uint64_t kv_cols = static_cast<std::uint64_t>(a.kv_heads) * a.head_dim;
    d.q = addr(op.inputs.at(0), op.in_row_offset, q_cols);
    d.k = addr(op.inputs.at(1), op.cache_row_offset, kv_cols);
    d.v = addr(op.inputs.at(2), op.cache_row_offset, kv_cols);
    d.o = addr(op.outputs.at(0), op.in_row_offset, q_cols);
    d.batch = a.batch;
    d.q_len = a.q_len;
    d.kv_len = a.kv_len;
    d.q_heads = a.q_heads;
    d.kv_heads = a.kv_heads;
    d.head_dim = a.head_dim;
    d.dtype = opt_.dtype;
    d.causal = a.causal;
    cmds_.push_back(driver::attention(d));
  }

  void unary(const Op& op, driver::VOp v) {
    vec(v, addr(op.inputs.at(0)), 0, addr(op.outputs.at(0)), op.vec.rows, op.vec.cols, op);
  }

  void add(const std::string& x, const std::string& y, const std::string& out, const Op& op) {
    vec(driver::VOp::Add, addr(x), addr(y), addr(out), op.vec.rows, op.vec.cols, op);
  }

  void all_reduce(const Op& op) {
    const unsigned n = g_.shard.tp_degree, r = g_.shard.tp_rank;
    if (n <= 1) return;
    if (opt_.group_devices.size() != n) {
      throw std::invalid_argument("compiler: " + op.name + ": the all-reduce over " + std::to_string(n) +
                                  " ranks needs their device indices (" + std::to_string(opt_.group_devices.size()) +
                                  " given)");
    }
    const std::uint64_t elems = op.vec.rows * op.vec.cols;
    const std::uint64_t base = addr(op.inputs.at(0));
    auto chunk_begin = [&](unsigned c) { return elems * c / n; };
    auto chunk = [&](unsigned c) {
      const unsigned cc = c % n;
      return std::pair<std::uint64_t, std::uint64_t>{base + chunk_begin(cc) * eb_,
                                                     (chunk_begin(cc + 1) - chunk_begin(cc)) * eb_};
    };
    AllReduceAlgorithm algorithm = opt_.allreduce;
    if (algorithm == AllReduceAlgorithm::MeshAuto) {
      algorithm = elems * eb_ <= kOneShotMaxBytes ? AllReduceAlgorithm::OneShot : AllReduceAlgorithm::TwoShot;
    }
    const auto peer = [&](unsigned j) { return opt_.group_devices[(r + j) % n]; };      // j ranks after r
    const auto from = [&](unsigned j) { return opt_.group_devices[(r + n - j) % n]; };  // j ranks before r
    if (algorithm == AllReduceAlgorithm::TwoShot) {
      // Reduce-scatter: chunk k goes to rank k; rank r sums every peer's copy of chunk r.
      for (unsigned j = 1; j < n; ++j) {
        const auto [a, b] = chunk(r + j);
        cmds_.push_back(driver::collective(driver::CollOp::Send, a, b, peer(j), opt_.dtype, tag_));
      }
      const auto [own, own_bytes] = chunk(r);
      for (unsigned j = 1; j < n; ++j) {
        cmds_.push_back(driver::collective(driver::CollOp::ReduceStep, own, own_bytes, from(j), opt_.dtype, tag_));
      }
      ++tag_;
      // All-gather: the reduced chunk r to every peer; every peer's chunk into place.
      for (unsigned j = 1; j < n; ++j) {
        cmds_.push_back(driver::collective(driver::CollOp::Send, own, own_bytes, peer(j), opt_.dtype, tag_));
      }
      for (unsigned j = 1; j < n; ++j) {
        const auto [a, b] = chunk(r + n - j);
        cmds_.push_back(driver::collective(driver::CollOp::GatherStep, a, b, from(j), opt_.dtype, tag_));
      }
      ++tag_;
      return;
    }
    if (algorithm == AllReduceAlgorithm::OneShot) {
      // One command: every peer gets the whole buffer (all ports at once), then every peer's
      // buffer is added into one's own (COLLECTIVE ALL_REDUCE).
      std::uint32_t mask = 0;
      for (unsigned j = 1; j < n; ++j) {
        if (peer(j) >= 32) {
          throw std::invalid_argument("compiler: " + op.name + ": device index " + std::to_string(peer(j)) +
                                      " is beyond the 32 an ALL_REDUCE's PEERS mask names");
        }
        mask |= 1u << peer(j);
      }
      cmds_.push_back(driver::all_reduce(base, elems * eb_, mask, opt_.dtype, tag_));
      ++tag_;
      return;
    }
    const unsigned next = opt_.group_devices[(r + 1) % n], prev = opt_.group_devices[(r + n - 1) % n];
    auto step = [&](unsigned send_chunk, unsigned recv_chunk, driver::CollOp recv_op) {
      const auto [sa, sb] = chunk(send_chunk);
      const auto [ra, rb] = chunk(recv_chunk);
      const driver::Command send = driver::collective(driver::CollOp::Send, sa, sb, next, opt_.dtype, tag_);
      const driver::Command recv = driver::collective(recv_op, ra, rb, prev, opt_.dtype, tag_);
      if (r % 2 == 0) {
        cmds_.push_back(send);
        cmds_.push_back(recv);
      } else {
        cmds_.push_back(recv);
        cmds_.push_back(send);
      }
      ++tag_;
    };
    // Chunk indices kept non-negative: + n * n before the modulo.
    for (unsigned s = 0; s + 1 < n; ++s) step(r + n * n - s, r + n * n - s - 1, driver::CollOp::ReduceStep);
    for (unsigned s = 0; s + 1 < n; ++s) step(r + n * n + 1 - s, r + n * n - s, driver::CollOp::GatherStep);
  }

  const Graph& g_;
  const MemoryPlan& plan_;
  const CompileOptions& opt_;
  unsigned eb_;
  std::uint32_t tag_;
  std::vector<driver::Command> cmds_;
};

}  // namespace

CompiledProgram compile(const Graph& g, const MemoryPlan& plan, const CompileOptions& opt) {
  if (g.ragged && opt.functional) {
    throw std::invalid_argument("compiler: " + g.model +
                                ": a serving step (sequences of different lengths) runs in timing mode only");
  }
  return Lowering(g, plan, opt).run();
}

}  // namespace sohusim::workloads
