#pragma once
// Element data types, systolic dataflows and fold-timing conventions: the vocabulary the
// command formats, the engines, the functional kernels and the CLI share.
//
// The numeric encodings of DataType are the ones a command descriptor carries (see
// docs/registers.md, "Data types"); they must not change.
#include <cstdint>
#include <string>
#include <string_view>

namespace sohusim::device {

enum class DataType : std::uint8_t {
  FP8_E4M3 = 0,  // OCP 8-bit floating point, 4 exponent bits, 3 mantissa bits (no inf)
  FP8_E5M2 = 1,  // OCP 8-bit floating point, 5 exponent bits, 2 mantissa bits
  BF16 = 2,
  FP16 = 3,
  FP32 = 4,
};
inline constexpr unsigned kNumDataTypes = 5;

/// Bytes per element: 1, 1, 2, 2, 4.
unsigned bytes_of(DataType t);
/// "fp8" is FP8_E4M3, "fp8_e5m2"/"e5m2" FP8_E5M2, "bf16", "fp16", "fp32".
/// Throws std::invalid_argument listing the accepted names.
DataType parse_data_type(std::string_view name);
const char* to_string(DataType t);
/// True for an encoding a descriptor may carry (0..4).
bool valid_data_type(unsigned code);

/// Which operand a systolic array keeps in place while the others stream through.
enum class Dataflow : std::uint8_t { WeightStationary = 0, OutputStationary = 1, InputStationary = 2 };
/// "ws", "os", "is"; std::invalid_argument otherwise.
Dataflow parse_dataflow(std::string_view name);
const char* to_string(Dataflow d);

/// How consecutive folds of one GEMM on one array are timed.
///  - Scalesim: SCALE-Sim v2's convention, folds back to back, each paying its own fill and
///    drain (the formulas in systolic.hpp reproduce its compute cycles exactly);
///  - Overlap: the next fold's stationary operand is loaded while the current fold streams
///    (double-buffered arrays), so only the first fill and the last drain are exposed.
enum class FoldModel : std::uint8_t { Overlap = 0, Scalesim = 1 };
FoldModel parse_fold_model(std::string_view name);
const char* to_string(FoldModel f);

}  // namespace sohusim::device
