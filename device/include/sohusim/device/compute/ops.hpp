#pragma once
// Operation vocabularies shared by the command formats, the engines' timing, the functional
// kernels and the energy model. The numeric values are the encodings command descriptors
// carry (docs/registers.md); they must not change.
#include <cstdint>

namespace sohusim::device {

/// GEMM epilogue activation (applied after bias, before the residual add).
enum class Activation : std::uint8_t { None = 0, Relu = 1, Gelu = 2, Silu = 3 };
inline constexpr unsigned kNumActivations = 4;

/// Vector-engine operations (VECTOR command).
enum class VectorOp : std::uint8_t {
  RmsNorm = 0,    // y = x / sqrt(mean(x^2) + eps) * gamma            (per row)
  LayerNorm = 1,  // y = (x - mean) / sqrt(var + eps) * gamma + beta  (per row)
  Rope = 2,       // rotary embedding on pairs (x[2i], x[2i+1]) of each head
  Silu = 3,       // x * sigmoid(x)
  Gelu = 4,       // tanh approximation
  Swiglu = 5,     // silu(gate) * up, gate and up the two halves of each row
  Add = 6,        // x + y
  Scale = 7,      // x * scalar
  Cast = 8,       // convert between data types
  Softmax = 9,    // per row, max-subtracted
};
inline constexpr unsigned kNumVectorOps = 10;

const char* to_string(Activation a);
const char* to_string(VectorOp op);

}  // namespace sohusim::device
