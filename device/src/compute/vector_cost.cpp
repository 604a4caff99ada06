#include "sohusim/device/compute/vector_cost.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace sohusim::device {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("vector cost: " + what);
}

std::uint64_t mul(std::uint64_t x, std::uint64_t y) {
  if (x != 0 && y > kMax / x) fail("element or byte count overflows 64 bits");
  return x * y;
}

double cost_of(const VectorCostTable& c, const VectorOpCounts& n) {
  return n.alu * c.alu + n.exp * c.exp + n.rsqrt * c.rsqrt + n.div * c.div + n.tanh * c.tanh + n.sigmoid * c.sigmoid;
}

void check_dtype(DataType t, const char* name) {
  if (static_cast<unsigned>(t) >= kNumDataTypes) fail(std::string(name) + " must be a valid data type (0..4)");
}

VectorWork cost(const VectorEngineParams& p, const VectorRecipe& r, std::uint64_t rows, std::uint64_t elements,
                std::uint64_t streamed_in_elements, std::uint64_t param_elements, DataType in, DataType out) {
  VectorWork w;
  w.elements = elements;
  const long double work = static_cast<long double>(elements) * cost_of(p.cost, r.per_element) +
                           static_cast<long double>(rows) * cost_of(p.cost, r.per_row);
  const long double cycles = std::ceil(work / p.lanes) + static_cast<long double>(rows) * r.reductions_per_row *
                                                             static_cast<long double>(p.reduction_latency);
  if (cycles >= static_cast<long double>(kMax)) fail("cycle count overflows 64 bits");
  w.cycles = static_cast<std::uint64_t>(std::ceil(cycles));
  w.bytes_read = mul(streamed_in_elements + param_elements, bytes_of(in));
  w.bytes_written = mul(elements, bytes_of(out));
  w.flops = mul(elements, r.flops_per_element) + mul(rows, r.flops_per_row);
  return w;
}

}  // namespace

void validate(const VectorEngineParams& p) {
  if (p.engines < 1 || p.engines > 1024) fail("engines must be in 1..1024 (got " + std::to_string(p.engines) + ")");
  if (p.lanes < 1 || p.lanes > 65536) fail("lanes must be in 1..65536 (got " + std::to_string(p.lanes) + ")");
  if (!(p.clock_hz > 0.0) || !std::isfinite(p.clock_hz) || p.clock_hz > 1e11)
    fail("clock_hz must be in (0, 1e11] (got " + std::to_string(p.clock_hz) + ")");
  const struct {
    const char* name;
    double v;
  } costs[] = {{"cost.alu", p.cost.alu}, {"cost.exp", p.cost.exp},   {"cost.rsqrt", p.cost.rsqrt},
               {"cost.div", p.cost.div}, {"cost.tanh", p.cost.tanh}, {"cost.sigmoid", p.cost.sigmoid}};
  for (const auto& c : costs)
    if (!(c.v > 0.0) || !std::isfinite(c.v) || c.v > 1e6)
      fail(std::string(c.name) + " must be in (0, 1e6] lane-cycles (got " + std::to_string(c.v) + ")");
  if (!(p.reduction_latency >= 0.0) || !std::isfinite(p.reduction_latency) || p.reduction_latency > 1e6)
    fail("reduction_latency must be in [0, 1e6] cycles (got " + std::to_string(p.reduction_latency) + ")");
}

VectorRecipe vector_recipe(VectorOp op) {
  VectorRecipe r;
  switch (op) {
    case VectorOp::RmsNorm:
      r.per_element.alu = 3;
      r.per_row.alu = 2;
      r.per_row.rsqrt = 1;
      r.reductions_per_row = 1;
      r.flops_per_element = 4;
      r.flops_per_row = 3;
      r.params_per_column = 1;
      break;
    case VectorOp::LayerNorm:
      r.per_element.alu = 5;
      r.per_row.alu = 3;
      r.per_row.rsqrt = 1;
      r.reductions_per_row = 2;
      r.flops_per_element = 7;
      r.flops_per_row = 4;
      r.params_per_column = 2;
      break;
    case VectorOp::Rope:
      r.per_element.alu = 2;
      r.flops_per_element = 3;
      r.inputs_per_element = 2;
      break;
    case VectorOp::Silu:
      r.per_element.alu = 1;
      r.per_element.sigmoid = 1;
      r.flops_per_element = 2;
      break;
    case VectorOp::Gelu:
      r.per_element.alu = 6;
      r.per_element.tanh = 1;
      r.flops_per_element = 9;
      break;
    case VectorOp::Swiglu:
      r.per_element.alu = 2;
      r.per_element.sigmoid = 1;
      r.flops_per_element = 3;
      r.inputs_per_element = 2;
      break;
    case VectorOp::Add:
      r.per_element.alu = 1;
      r.flops_per_element = 1;
      r.inputs_per_element = 2;
      break;
    case VectorOp::Scale:
      r.per_element.alu = 1;
      r.flops_per_element = 1;
      break;
    case VectorOp::Cast:
      r.per_element.alu = 1;
      r.flops_per_element = 0;
      break;
    case VectorOp::Softmax:
      r.per_element.alu = 4;
      r.per_element.exp = 1;
      r.per_row.div = 1;
      r.reductions_per_row = 2;
      r.flops_per_element = 5;
      r.flops_per_row = 1;
      break;
    default:
      fail("unknown vector op " + std::to_string(static_cast<unsigned>(op)));
  }
  return r;
}

VectorWork vector_op_cost(const VectorEngineParams& p, VectorOp op, std::uint64_t rows, std::uint64_t cols, DataType in,
                          DataType out) {
  validate(p);
  check_dtype(in, "in");
  check_dtype(out, "out");
  if (rows == 0) fail("rows must be >= 1 (got 0)");
  if (cols == 0) fail("cols must be >= 1 (got 0)");
  if ((op == VectorOp::Rope || op == VectorOp::Swiglu) && cols % 2 != 0)
    fail(std::string("cols must be even for ") + to_string(op) + " (got " + std::to_string(cols) + ")");
  const VectorRecipe r = vector_recipe(op);
  const std::uint64_t in_elems = mul(rows, cols);
  const std::uint64_t elements = op == VectorOp::Swiglu ? in_elems / 2 : in_elems;
  const std::uint64_t streamed = mul(elements, r.inputs_per_element);
  return cost(p, r, rows, elements, streamed, mul(cols, r.params_per_column), in, out);
}

VectorWork attention_vector_cost(const VectorEngineParams& p, std::uint64_t heads, std::uint64_t q_len,
                                 std::uint64_t kv_len, DataType in, DataType out, bool causal) {
  validate(p);
  check_dtype(in, "in");
  check_dtype(out, "out");
  if (heads == 0) fail("heads must be >= 1 (got 0)");
  if (q_len == 0) fail("q_len must be >= 1 (got 0)");
  if (kv_len == 0) fail("kv_len must be >= 1 (got 0)");
  std::uint64_t per_head = 0;
  if (!causal) {
    per_head = mul(q_len, kv_len);
  } else {
    // Query i sees min(kv, max(0, kv - q + i + 1)) keys.
    for (std::uint64_t i = 0; i < q_len; ++i) {
      const std::uint64_t visible_to = i + 1 + kv_len;  // kv - q + i + 1, shifted by q
      const std::uint64_t v = visible_to > q_len ? visible_to - q_len : 0;
      per_head += v < kv_len ? v : kv_len;
    }
  }
  VectorRecipe r = vector_recipe(VectorOp::Softmax);
  r.per_element.alu += 1;  // scale by 1/sqrt(head_dim)
  r.flops_per_element += 1;
  const std::uint64_t elements = mul(heads, per_head);
  return cost(p, r, mul(heads, q_len), elements, elements, 0, in, out);
}

}  // namespace sohusim::device
