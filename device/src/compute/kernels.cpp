#include "sohusim/device/compute/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sohusim::device {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const RowMat>;
using MutMap = Eigen::Map<RowMat>;
using ConstStridedMap = Eigen::Map<const RowMat, Eigen::Unaligned, Stride>;
using StridedMap = Eigen::Map<RowMat, Eigen::Unaligned, Stride>;
using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
using MutArr = Eigen::Map<Eigen::ArrayXf>;

// Dimensions stay within a signed 32-bit range so that products of two of them (buffer
// sizes) can never overflow Eigen::Index.
constexpr std::uint64_t kMaxDim = 0x7FFFFFFFu;

[[noreturn]] void fail(const std::string& fn, const std::string& what) {
  throw std::invalid_argument(fn + ": " + what);
}

void check_dim(const char* fn, const char* field, std::uint64_t v) {
  if (v == 0 || v > kMaxDim) {
    fail(fn, std::string(field) + " = " + std::to_string(v) + " is out of range (allowed 1.." +
                 std::to_string(kMaxDim) + ")");
  }
}

void check_ptr(const char* fn, const char* field, const void* p) {
  if (p == nullptr) fail(fn, std::string("'") + field + "' is null");
}

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// Elementwise activations as Eigen array expressions, evaluated in place.
template <class A>
void silu_inplace(A&& x) {
  x = x / (1.0f + (-x).exp());
}

template <class A>
void gelu_inplace(A&& x) {
  x = 0.5f * x * (1.0f + (kSqrt2OverPi * (x + kGeluCubic * x.cube())).tanh());
}

template <class Mat>
void apply_activation(Activation act, Mat& c) {
  switch (act) {
    case Activation::None:
      return;
    case Activation::Relu:
      c = c.cwiseMax(0.0f);
      return;
    case Activation::Gelu:
      gelu_inplace(c.array());
      return;
    case Activation::Silu:
      silu_inplace(c.array());
      return;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------- GEMM

void gemm(const GemmArgs& args, const float* a, const float* b, const float* bias, const float* residual, float* c) {
  static constexpr const char* fn = "gemm";
  check_dim(fn, "m", args.m);
  check_dim(fn, "k", args.k);
  check_dim(fn, "n", args.n);
  if (static_cast<unsigned>(args.act) >= kNumActivations) {
    fail(fn, "act = " + std::to_string(static_cast<unsigned>(args.act)) +
                 " is not an Activation (allowed 0..3: none, relu, gelu, silu)");
  }
  check_ptr(fn, "a", a);
  check_ptr(fn, "b", b);
  check_ptr(fn, "c", c);
  if (args.bias) check_ptr(fn, "bias", bias);
  if (args.residual) check_ptr(fn, "residual", residual);

  const auto m = static_cast<Eigen::Index>(args.m);
  const auto k = static_cast<Eigen::Index>(args.k);
  const auto n = static_cast<Eigen::Index>(args.n);
  // op(A), op(B) as Eigen views of the row-major storage: a transposed operand is the
  // transpose of a row-major map, which Eigen's blocked product reads without a copy.
  const ConstMap a_mk(a, m, k), a_km(a, k, m);
  const ConstMap b_kn(b, k, n), b_nk(b, n, k);

  const bool in_place = args.residual && residual == c;
  RowMat tmp;
  MutMap out(c, m, n);
  auto compute = [&](auto& dst) {
    if (!args.trans_a && !args.trans_b) {
      dst.noalias() = a_mk * b_kn;
    } else if (!args.trans_a && args.trans_b) {
      dst.noalias() = a_mk * b_nk.transpose();
    } else if (args.trans_a && !args.trans_b) {
      dst.noalias() = a_km.transpose() * b_kn;
    } else {
      dst.noalias() = a_km.transpose() * b_nk.transpose();
    }
    if (args.bias) dst.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, n);
    apply_activation(args.act, dst);
  };
  if (in_place) {
    tmp.resize(m, n);
    compute(tmp);
    out += tmp;  // out holds the residual
  } else {
    compute(out);
    if (args.residual) out += ConstMap(residual, m, n);
  }
}

// ----------------------------------------------------------------------------- Attention

void attention(const AttentionArgs& args, const float* q, const float* k, const float* v, float* o) {
  static constexpr const char* fn = "attention";
  check_dim(fn, "batch", args.batch);
  check_dim(fn, "q_len", args.q_len);
  check_dim(fn, "kv_len", args.kv_len);
  check_dim(fn, "q_heads", args.q_heads);
  check_dim(fn, "kv_heads", args.kv_heads);
  check_dim(fn, "head_dim", args.head_dim);
  if (args.q_heads % args.kv_heads != 0) {
    fail(fn, "q_heads = " + std::to_string(args.q_heads) + " is not a multiple of kv_heads = " +
                 std::to_string(args.kv_heads) + " (grouped-query attention needs whole groups)");
  }
  if (args.causal && args.q_len > args.kv_len) {
    fail(fn, "causal with q_len = " + std::to_string(args.q_len) + " > kv_len = " + std::to_string(args.kv_len) +
                 " (queries are the last q_len of kv_len positions)");
  }
  if (!std::isfinite(args.scale) || args.scale < 0.0f) {
    fail(fn, "scale = " + std::to_string(args.scale) +
                 " is out of range (allowed: finite and >= 0; 0 selects 1/sqrt(head_dim))");
  }
  check_ptr(fn, "q", q);
  check_ptr(fn, "k", k);
  check_ptr(fn, "v", v);
  check_ptr(fn, "o", o);

  const auto q_len = static_cast<Eigen::Index>(args.q_len);
  const auto kv_len = static_cast<Eigen::Index>(args.kv_len);
  const auto d = static_cast<Eigen::Index>(args.head_dim);
  const auto qh = static_cast<Eigen::Index>(args.q_heads);
  const auto kvh = static_cast<Eigen::Index>(args.kv_heads);
  const Eigen::Index group = qh / kvh;
  const float scale = args.scale != 0.0f ? args.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // Position-major layouts: consecutive positions of one sequence are a whole batch apart.
  const Eigen::Index nb = static_cast<Eigen::Index>(args.batch);
  const Eigen::Index q_row = nb * qh * d;    // floats between consecutive tokens of Q and O
  const Eigen::Index kv_row = nb * kvh * d;  // ... of K and V
  // Query rows are processed in tiles so the score matrix stays small for long prefills.
  const Eigen::Index tile = std::min<Eigen::Index>(q_len, 64);
  RowMat s(tile, kv_len);

  for (Eigen::Index bi = 0; bi < static_cast<Eigen::Index>(args.batch); ++bi) {
    for (Eigen::Index h = 0; h < qh; ++h) {
      const Eigen::Index g = h / group;
      const ConstStridedMap qm(q + (bi * qh + h) * d, q_len, d, Stride(q_row));
      const ConstStridedMap km(k + (bi * kvh + g) * d, kv_len, d, Stride(kv_row));
      const ConstStridedMap vm(v + (bi * kvh + g) * d, kv_len, d, Stride(kv_row));
      StridedMap om(o + (bi * qh + h) * d, q_len, d, Stride(q_row));

      for (Eigen::Index i0 = 0; i0 < q_len; i0 += tile) {
        const Eigen::Index t = std::min(tile, q_len - i0);
        // Keys a query of this tile may see: all of them, or up to the tile's last position.
        const Eigen::Index visible = args.causal ? kv_len - q_len + i0 + t : kv_len;
        auto st = s.topLeftCorner(t, visible);
        st.noalias() = (qm.middleRows(i0, t) * km.topRows(visible).transpose()) * scale;
        for (Eigen::Index r = 0; r < t; ++r) {
          const Eigen::Index seen = args.causal ? kv_len - q_len + i0 + r + 1 : kv_len;
          auto row = st.row(r);
          auto live = row.head(seen).array();
          const float mx = live.maxCoeff();
          live = (live - mx).exp();
          live /= live.sum();
          row.tail(visible - seen).setZero();
        }
        om.middleRows(i0, t).noalias() = st * vm.topRows(visible);
      }
    }
  }
}

// ---------------------------------------------------------------------------- Vector ops

std::uint32_t vector_op_out_cols(VectorOp op, std::uint32_t cols) {
  return op == VectorOp::Swiglu ? cols / 2 : cols;
}

void vector_op(VectorOp op, std::uint32_t rows, std::uint32_t cols, const float* x, const float* y, float* out,
               float scalar, std::uint32_t aux, std::uint32_t aux2, std::uint32_t group) {
  static constexpr const char* fn = "vector_op";
  if (static_cast<unsigned>(op) >= kNumVectorOps) {
    fail(fn, "op = " + std::to_string(static_cast<unsigned>(op)) + " is not a VectorOp (allowed 0.." +
                 std::to_string(kNumVectorOps - 1) + ")");
  }
  const std::string where = std::string(fn) + "(" + to_string(op) + ")";
  check_dim(where.c_str(), "rows", rows);
  check_dim(where.c_str(), "cols", cols);
  check_ptr(where.c_str(), "x", x);
  check_ptr(where.c_str(), "out", out);
  const bool needs_y = op == VectorOp::RmsNorm || op == VectorOp::LayerNorm || op == VectorOp::Add;
  if (needs_y) check_ptr(where.c_str(), "y", y);
  if ((op == VectorOp::RmsNorm || op == VectorOp::LayerNorm) && (!std::isfinite(scalar) || scalar < 0.0f)) {
    fail(where, "scalar (eps) = " + std::to_string(scalar) + " is out of range (allowed: finite and >= 0)");
  }
  if (op == VectorOp::Rope) {
    if (aux < 2 || aux % 2 != 0 || cols % aux != 0) {
      fail(where, "aux (head_dim) = " + std::to_string(aux) +
                      " is out of range (allowed: even, >= 2, dividing cols = " + std::to_string(cols) + ")");
    }
    if (!std::isfinite(scalar) || scalar <= 0.0f) {
      fail(where, "scalar (theta) = " + std::to_string(scalar) + " is out of range (allowed: finite and > 0)");
    }
  }
  if (op == VectorOp::Swiglu && cols % 2 != 0) {
    fail(where, "cols = " + std::to_string(cols) + " must be even (each row is [gate | up])");
  }

  const auto nr = static_cast<Eigen::Index>(rows);
  const auto nc = static_cast<Eigen::Index>(cols);
  const Eigen::Index total = nr * nc;
  switch (op) {
    case VectorOp::RmsNorm: {
      const ConstArr gamma(y, nc);
      for (Eigen::Index r = 0; r < nr; ++r) {
        const ConstArr xr(x + r * nc, nc);
        const float inv = 1.0f / std::sqrt(xr.square().sum() / static_cast<float>(nc) + scalar);
        MutArr(out + r * nc, nc) = xr * inv * gamma;
      }
      return;
    }
    case VectorOp::LayerNorm: {
      const ConstArr gamma(y, nc), beta(y + nc, nc);
      for (Eigen::Index r = 0; r < nr; ++r) {
        const ConstArr xr(x + r * nc, nc);
        const float mean = xr.mean();
        // Two-pass variance: the one-pass E[x^2] - mean^2 cancels badly for large means.
        const float var = (xr - mean).square().sum() / static_cast<float>(nc);
        const float inv = 1.0f / std::sqrt(var + scalar);
        MutArr(out + r * nc, nc) = (xr - mean) * inv * gamma + beta;
      }
      return;
    }
    case VectorOp::Rope: {
      const std::size_t half = aux / 2;
      const std::size_t heads = cols / aux;
      // theta^(-2i/head_dim) per pair, and the angles, in double: pos * freq for positions of
      // hundreds of thousands would lose radians' worth of accuracy in float.
      std::vector<double> freq(half);
      for (std::size_t i = 0; i < half; ++i) {
        freq[i] = std::pow(static_cast<double>(scalar), -2.0 * static_cast<double>(i) / static_cast<double>(aux));
      }
      std::vector<float> cs(half), sn(half);
      for (std::size_t r = 0; r < rows; ++r) {
        const double pos = static_cast<double>(aux2) + static_cast<double>(r / std::max<std::uint32_t>(group, 1));
        for (std::size_t i = 0; i < half; ++i) {
          cs[i] = static_cast<float>(std::cos(pos * freq[i]));
          sn[i] = static_cast<float>(std::sin(pos * freq[i]));
        }
        for (std::size_t hd = 0; hd < heads; ++hd) {
          float* o = out + r * cols + hd * aux;
          const float* xi = x + r * cols + hd * aux;
          for (std::size_t i = 0; i < half; ++i) {
            const float x0 = xi[2 * i], x1 = xi[2 * i + 1];
            o[2 * i] = x0 * cs[i] - x1 * sn[i];
            o[2 * i + 1] = x0 * sn[i] + x1 * cs[i];
          }
        }
      }
      return;
    }
    case VectorOp::Silu: {
      MutArr o(out, total);
      o = ConstArr(x, total);
      silu_inplace(o);
      return;
    }
    case VectorOp::Gelu: {
      MutArr o(out, total);
      o = ConstArr(x, total);
      gelu_inplace(o);
      return;
    }
    case VectorOp::Swiglu: {
      const Eigen::Index h = nc / 2;
      // Row by row, in order: with out == x, row r's output lands on rows already consumed
      // (or, for row 0, on its own gate half, index-aligned), so in-place is safe.
      for (Eigen::Index r = 0; r < nr; ++r) {
        const ConstArr gate(x + r * nc, h), up(x + r * nc + h, h);
        MutArr(out + r * h, h) = gate / (1.0f + (-gate).exp()) * up;
      }
      return;
    }
    case VectorOp::Add:
      MutArr(out, total) = ConstArr(x, total) + ConstArr(y, total);
      return;
    case VectorOp::Scale:
      MutArr(out, total) = ConstArr(x, total) * scalar;
      return;
    case VectorOp::Cast:
      if (out != x) MutArr(out, total) = ConstArr(x, total);
      return;
    case VectorOp::Softmax:
      for (Eigen::Index r = 0; r < nr; ++r) {
        const ConstArr xr(x + r * nc, nc);
        const float mx = xr.maxCoeff();
        MutArr o(out + r * nc, nc);
        o = (xr - mx).exp();
        o /= o.sum();
      }
      return;
  }
}

}  // namespace sohusim::device
