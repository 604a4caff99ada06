#pragma once
// Parameters of the device's matrix engines: how many systolic arrays, their shape, dataflow
// and fold-timing convention, clock, and the MAC rate per PE for each data type.
//
// `rate[t]` is MACs per PE per cycle for DataType t (index = the DataType's encoding). How the
// rate enters the cycle count is documented in systolic.hpp (it shortens the streaming part
// of each fold). Typical values: 1 for BF16/FP16 on an array sized for 16-bit operands, 2 for
// FP8 (NVIDIA H100: 1979 vs 989 TFLOPS dense, "NVIDIA H100 Tensor Core GPU" datasheet), and
// below 1 for FP32 if the array supports it at all.
//
// Peak: 2 FLOPs per MAC, so peak_flops = 2 * engines * rows * cols * rate * clock_hz.
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/compute/systolic.hpp"

namespace sohusim::device {

struct MatrixEngineParams {
  unsigned engines = 1;
  ArrayShape array{128, 128};
  Dataflow dataflow = Dataflow::WeightStationary;
  FoldModel fold_model = FoldModel::Overlap;
  double clock_hz = 1.0e9;
  /// MACs per PE per cycle, indexed by DataType encoding (FP8_E4M3, FP8_E5M2, BF16, FP16,
  /// FP32). The neutral default is 1 everywhere; presets set real ratios.
  std::array<double, kNumDataTypes> rate{1.0, 1.0, 1.0, 1.0, 1.0};
};

inline constexpr unsigned kMaxMatrixEngines = 1024;
inline constexpr unsigned kMaxArrayDim = 1024;

/// Throws std::invalid_argument naming the first field out of range and the allowed range:
/// engines 1..1024, array rows/cols 1..1024, clock_hz finite and > 0 (at most 100 GHz),
/// each rate finite and in (0, 64].
inline void validate(const MatrixEngineParams& p) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("matrix engine: " + what); };
  if (p.engines < 1 || p.engines > kMaxMatrixEngines)
    fail("engines must be in 1..1024 (got " + std::to_string(p.engines) + ")");
  if (p.array.rows < 1 || p.array.rows > kMaxArrayDim)
    fail("array.rows must be in 1..1024 (got " + std::to_string(p.array.rows) + ")");
  if (p.array.cols < 1 || p.array.cols > kMaxArrayDim)
    fail("array.cols must be in 1..1024 (got " + std::to_string(p.array.cols) + ")");
  if (!(p.clock_hz > 0.0) || !std::isfinite(p.clock_hz) || p.clock_hz > 100.0e9)
    fail("clock_hz must be > 0 and <= 1e11 (got " + std::to_string(p.clock_hz) + ")");
  if (static_cast<unsigned>(p.dataflow) > 2) fail("dataflow must be ws, os or is");
  if (static_cast<unsigned>(p.fold_model) > 1) fail("fold_model must be overlap or scalesim");
  for (unsigned t = 0; t < kNumDataTypes; ++t) {
    const double r = p.rate[t];
    if (!(r > 0.0) || !std::isfinite(r) || r > 64.0)
      fail(std::string("rate[") + to_string(static_cast<DataType>(t)) +
           "] must be in (0, 64] MACs per PE per cycle (got " + std::to_string(r) + ")");
  }
}

/// Dense peak in FLOP/s for data type t (2 FLOPs per MAC).
inline double peak_flops(const MatrixEngineParams& p, DataType t) {
  return 2.0 * static_cast<double>(p.engines) * static_cast<double>(p.array.rows) * static_cast<double>(p.array.cols) *
         p.rate[static_cast<unsigned>(t)] * p.clock_hz;
}

}  // namespace sohusim::device
