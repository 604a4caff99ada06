#include "sohusim/device/compute/systolic.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace sohusim::device {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::string shape_text(ArrayShape a, GemmShape g) {
  return "m=" + std::to_string(g.m) + " k=" + std::to_string(g.k) + " n=" + std::to_string(g.n) + " on " +
         std::to_string(a.rows) + "x" + std::to_string(a.cols);
}

[[noreturn]] void overflow(const char* what, ArrayShape a, GemmShape g) {
  throw std::invalid_argument(std::string("systolic: ") + what + " overflows 64 bits for " + shape_text(a, g));
}

std::uint64_t mul(std::uint64_t x, std::uint64_t y, const char* what, ArrayShape a, GemmShape g) {
  if (x != 0 && y > kMax / x) overflow(what, a, g);
  return x * y;
}

std::uint64_t add(std::uint64_t x, std::uint64_t y, const char* what, ArrayShape a, GemmShape g) {
  if (y > kMax - x) overflow(what, a, g);
  return x + y;
}

std::uint64_t ceil_div(std::uint64_t x, std::uint64_t y) {
  return x / y + (x % y != 0 ? 1 : 0);
}

void check(ArrayShape a, GemmShape g) {
  if (a.rows == 0) throw std::invalid_argument("systolic: array.rows must be >= 1 (got 0)");
  if (a.cols == 0) throw std::invalid_argument("systolic: array.cols must be >= 1 (got 0)");
  if (g.m == 0) throw std::invalid_argument("systolic: gemm.m must be >= 1 (got 0)");
  if (g.k == 0) throw std::invalid_argument("systolic: gemm.k must be >= 1 (got 0)");
  if (g.n == 0) throw std::invalid_argument("systolic: gemm.n must be >= 1 (got 0)");
}

// S' = ceil(S / rate); exact integer path for rate 1.
std::uint64_t scaled_streaming(std::uint64_t s, double rate, ArrayShape a, GemmShape g) {
  if (!(rate > 0.0) || !std::isfinite(rate))
    throw std::invalid_argument("systolic: rate (MACs per PE per cycle) must be finite and > 0 (got " +
                                std::to_string(rate) + ")");
  if (rate == 1.0) return s;
  const long double q = std::ceil(static_cast<long double>(s) / static_cast<long double>(rate));
  if (q >= static_cast<long double>(kMax)) overflow("streaming length / rate", a, g);
  const auto r = static_cast<std::uint64_t>(q);
  return r == 0 ? 1 : r;
}

// F * (L + S + D) - 1
std::uint64_t scalesim_from(const FoldGeometry& f, std::uint64_t s, ArrayShape a, GemmShape g) {
  const std::uint64_t per_fold = add(add(f.stationary_load, s, "fold length", a, g), f.fill_drain, "fold length", a, g);
  return mul(f.folds, per_fold, "cycle count", a, g) - 1;
}

// L + S + D + (F - 1) * max(S, L) - 1
std::uint64_t overlap_from(const FoldGeometry& f, std::uint64_t s, ArrayShape a, GemmShape g) {
  const std::uint64_t first = add(add(f.stationary_load, s, "fold length", a, g), f.fill_drain, "fold length", a, g);
  const std::uint64_t step = s > f.stationary_load ? s : f.stationary_load;
  return add(first, mul(f.folds - 1, step, "cycle count", a, g), "cycle count", a, g) - 1;
}

}  // namespace

FoldGeometry fold_geometry(Dataflow df, ArrayShape a, GemmShape g) {
  check(a, g);
  const std::uint64_t r = a.rows, c = a.cols;
  FoldGeometry f{};
  f.fill_drain = r + c - 2;
  switch (df) {
    case Dataflow::WeightStationary:
      f.folds = mul(ceil_div(g.k, r), ceil_div(g.n, c), "fold count", a, g);
      f.streaming = g.m;
      f.stationary_load = r;
      break;
    case Dataflow::OutputStationary:
      f.folds = mul(ceil_div(g.m, r), ceil_div(g.n, c), "fold count", a, g);
      f.streaming = g.k;
      f.stationary_load = 0;
      break;
    case Dataflow::InputStationary:
      f.folds = mul(ceil_div(g.k, r), ceil_div(g.m, c), "fold count", a, g);
      f.streaming = g.n;
      f.stationary_load = r;
      break;
    default:
      throw std::invalid_argument("systolic: unknown dataflow");
  }
  return f;
}

std::uint64_t scalesim_cycles(Dataflow df, ArrayShape a, GemmShape g) {
  const FoldGeometry f = fold_geometry(df, a, g);
  return scalesim_from(f, f.streaming, a, g);
}

std::uint64_t overlap_cycles(Dataflow df, ArrayShape a, GemmShape g) {
  const FoldGeometry f = fold_geometry(df, a, g);
  return overlap_from(f, f.streaming, a, g);
}

std::uint64_t compute_cycles(FoldModel model, Dataflow df, ArrayShape a, GemmShape g, double rate) {
  const FoldGeometry f = fold_geometry(df, a, g);
  const std::uint64_t s = scaled_streaming(f.streaming, rate, a, g);
  switch (model) {
    case FoldModel::Scalesim:
      return scalesim_from(f, s, a, g);
    case FoldModel::Overlap:
      return overlap_from(f, s, a, g);
  }
  throw std::invalid_argument("systolic: unknown fold model");
}

FoldStats fold_stats(Dataflow df, ArrayShape a, GemmShape g) {
  const FoldGeometry f = fold_geometry(df, a, g);
  FoldStats st{};
  st.folds = f.folds;
  st.useful_macs = mul(mul(g.m, g.k, "useful MACs", a, g), g.n, "useful MACs", a, g);
  const std::uint64_t pes = std::uint64_t{a.rows} * a.cols;
  st.issued_macs = mul(mul(f.folds, pes, "issued MACs", a, g), f.streaming, "issued MACs", a, g);
  return st;
}

}  // namespace sohusim::device
