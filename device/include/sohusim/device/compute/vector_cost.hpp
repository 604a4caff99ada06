#pragma once
// Cost of the vector engines' element-wise and row-wise operations (VECTOR command) and of
// the softmax inside attention: cycles on one engine, elements, bytes, FLOPs.
//
// Machine model: a vector engine has `lanes` FP32 lanes. Each primitive costs a number of
// lane-cycles (the cost table below); work is packed across row boundaries, so short rows
// do not leave lanes idle, and a per-row reduction (sum, max) additionally exposes a fixed
// `reduction_latency` in cycles per row (the cross-lane tree), not overlapped with other
// work. Hence, for an op with per-element recipe e, per-row recipe r and q reductions:
//
//   cycles = ceil((elements * cost(e) + rows * cost(r)) / lanes) + rows * q * reduction_latency
//
// Elements are counted per result element (for Swiglu, rows x cols/2: `cols` is the input row
// holding gate | up). Bytes: each streamed operand read once per element in the input type,
// per-column parameters (gamma, beta) read once per command, results written in the output
// type. Operands are assumed to be in SRAM (the device adds the DMA); SRAM port bandwidth is
// not modelled.
//
// FLOPs: add, sub, mul, compare/max, convert count 1 (convert counts 0 FLOPs, see Cast),
// fma counts 2, each transcendental (exp, rsqrt, div, tanh, sigmoid) counts 1.
//
// Recipes (per result element | per row | reductions per row | streamed inputs per element):
//
//   op        per element                                    per row               red in
//   RmsNorm   fma(x,x,acc); mul(x,inv); mul(.,gamma)  3 alu   mul(1/n) add(eps)     1   1 (+gamma)
//                                                             rsqrt
//   LayerNorm add(acc,x); sub(x,mean); fma(d,d,acc);  5 alu   2 mul(1/n) add(eps)   2   1 (+gamma,beta)
//             mul(d,inv); fma(.,gamma,beta)                   rsqrt
//   Rope      mul(x0,cos); fma(-x1,sin,.)             2 alu   -                     0   2 (x, cos|sin)
//   Silu      sigmoid(x); mul                         1 alu   -                     0   1
//   Gelu      mul(x,x); fma(c,x2,1); mul(x,p); mul(k,.) 6 alu -                     0   1
//             tanh; mul(0.5,x); fma(h,t,h)           +tanh
//   Swiglu    sigmoid(g); mul(g,s); mul(.,up)         2 alu   -                     0   2 (gate, up)
//             +sigmoid
//   Add       add                                     1 alu   -                     0   2
//   Scale     mul                                     1 alu   -                     0   1
//   Cast      convert                                 1 alu   -                     0   1
//   Softmax   max(m,x); sub(x,m); exp; add(acc,e);    4 alu   div (1/sum)           2   1
//             mul(e,inv)                             +exp
//   attention softmax (attention_vector_cost): as Softmax plus mul(score, 1/sqrt(d)) per
//             element: 5 alu + exp per element, 1 div per row, 2 reductions.
//
// Default costs (VectorCostTable), in lane-cycles per lane-op, relative to an FP32 fma:
// derived from the NVIDIA CUDA C++ Programming Guide's arithmetic-instruction throughput
// table for compute capability 8.0 (64 FP32 add/mul/fma per SM per clock vs 16 per clock for
// reciprocal, reciprocal square root, exp2, log2, sin, cos on the special-function units),
// i.e. 4 lane-cycles per special-function op. Derived (assumptions): exp = exp2 + one mul
// (x * log2 e) = 5; rsqrt = 4; div = reciprocal + mul = 5; tanh = 4 (tanh.approx, a single
// SFU op on sm_75 and later); sigmoid = 0.5 * tanh(0.5 x) + 0.5 = mul + tanh + fma = 6.
// reduction_latency default 32 = log2(256 lanes) tree levels x 4-cycle FP32 add latency
// (assumption).
#include <cstdint>

#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/compute/ops.hpp"

namespace sohusim::device {

/// Lane-cycles per lane-op for each primitive (see the header comment for the sources).
struct VectorCostTable {
  double alu = 1.0;  // add, sub, mul, fma, compare/max, convert
  double exp = 5.0;
  double rsqrt = 4.0;
  double div = 5.0;
  double tanh = 4.0;
  double sigmoid = 6.0;
};

struct VectorEngineParams {
  unsigned engines = 1;
  unsigned lanes = 256;
  double clock_hz = 1.0e9;
  VectorCostTable cost;
  double reduction_latency = 32.0;  // cycles exposed per row reduction
};

/// Throws std::invalid_argument naming the field: engines 1..1024, lanes 1..65536, clock_hz
/// finite in (0, 1e11], every cost finite in (0, 1e6], reduction_latency finite in [0, 1e6].
void validate(const VectorEngineParams& p);

/// Primitive counts of a recipe.
struct VectorOpCounts {
  std::uint32_t alu = 0, exp = 0, rsqrt = 0, div = 0, tanh = 0, sigmoid = 0;
};

/// One VectorOp's recipe (the table in the header comment).
struct VectorRecipe {
  VectorOpCounts per_element;
  VectorOpCounts per_row;
  std::uint32_t reductions_per_row = 0;
  std::uint32_t flops_per_element = 0;
  std::uint32_t flops_per_row = 0;
  std::uint32_t inputs_per_element = 1;  // streamed operands read per result element
  std::uint32_t params_per_column = 0;   // gamma (and beta) vectors read once per command
};
VectorRecipe vector_recipe(VectorOp op);

struct VectorWork {
  std::uint64_t cycles = 0;  // on one engine
  std::uint64_t elements = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t flops = 0;
};

/// Cost of `op` on a rows x cols input (cols even for Rope and Swiglu). Throws
/// std::invalid_argument for zero rows/cols, an odd cols where pairs or halves are needed,
/// or bad params.
VectorWork vector_op_cost(const VectorEngineParams& p, VectorOp op, std::uint64_t rows, std::uint64_t cols, DataType in,
                          DataType out);

/// Softmax over the q_len x kv_len scores of each of `heads` heads (batch x query heads):
/// scale by 1/sqrt(d), row max, subtract, exp, row sum, one reciprocal per row, multiply.
/// With `causal`, query i (0-based, aligned to the end of the keys) sees
/// min(kv_len, max(0, kv_len - q_len + i + 1)) keys and only those are counted.
VectorWork attention_vector_cost(const VectorEngineParams& p, std::uint64_t heads, std::uint64_t q_len,
                                 std::uint64_t kv_len, DataType in, DataType out, bool causal = false);

}  // namespace sohusim::device
