#pragma once
// Number formats of the functional mode: exact conversions between FP32 and the element
// types a command's operands may have (DataType), so that the device can decode operand
// bytes to float, compute in FP32, and round and encode the results to the output type.
//
// Formats (all little-endian in memory; a 2-byte element's low byte comes first):
//   FP8_E4M3  OCP "OCP 8-bit Floating Point Specification (OFP8)" rev 1.0, E4M3: 1 sign, 4
//             exponent bits (bias 7), 3 mantissa bits, subnormals (smallest 2^-9), largest
//             normal 448 (0x7E). No infinities; S.1111.111 (0x7F, 0xFF) is the only NaN, so
//             the exponent field 1111 with mantissa 000..110 holds ordinary normals 256..448.
//   FP8_E5M2  OFP8 E5M2: bias 15, 2 mantissa bits, IEEE-754-like: subnormals (smallest
//             2^-16), largest normal 57344 (0x7B), infinities 0x7C/0xFC, NaNs 0x7D..0x7F.
//   BF16      the upper half of an IEEE-754 binary32 (bias 127, 7 mantissa bits).
//   FP16      IEEE-754 binary16 (bias 15, 10 mantissa bits, subnormals, inf, NaN).
//   FP32      IEEE-754 binary32, copied bit for bit.
//
// Rounding (float -> narrower type) is always round-to-nearest, ties-to-even, computed on
// the exact value of the float (no double rounding, float subnormals included), and the
// sign of zero is kept. What happens beyond the largest finite value is a choice per format:
//   - E4M3 SATURATES: every finite value beyond +-448 and +-inf become +-448. E4M3 has no
//     infinity, and the alternative (overflow -> NaN) destroys a whole tensor on one outlier;
//     saturation is what NVIDIA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) and
//     PTX "cvt.rn.satfinite.e4m3x2.f32" do, and what FP8 training/inference recipes use.
//   - E5M2 overflows to +-inf like IEEE formats (a rounded magnitude above 57344 is inf:
//     61440, the midpoint to the next binade, already rounds to inf), unless `saturate` is
//     asked for, in which case finite overflows and infinities become +-57344 (PTX
//     .satfinite semantics). encode()/round_to() use the non-saturating form.
//   - BF16 and FP16 overflow to +-inf (IEEE-754 roundTiesToEven).
// NaN inputs give a NaN of the same sign: E4M3 0x7F, E5M2 0x7E (quiet), and for FP16/BF16
// a quiet NaN keeping the payload's leading bits. Decoding is exact (every value of these
// formats is a float).
//
// Not modelled: stochastic rounding, other rounding modes, per-tensor/per-block scale
// factors (MX formats): a scale, if any, is applied by the kernels' caller.
#include <cstddef>
#include <cstdint>

#include "sohusim/device/compute/dtype.hpp"

namespace sohusim::device {

std::uint8_t float_to_e4m3(float x);  // saturating, see above
float e4m3_to_float(std::uint8_t code);

std::uint8_t float_to_e5m2(float x, bool saturate = false);
float e5m2_to_float(std::uint8_t code);

std::uint16_t float_to_bf16(float x);
float bf16_to_float(std::uint16_t code);

std::uint16_t float_to_fp16(float x);
float fp16_to_float(std::uint16_t code);

/// x rounded to the nearest value of type t (as encode then decode would give).
/// Throws std::invalid_argument for a DataType outside the enumeration.
float round_to(DataType t, float x);

/// Encodes n floats into n elements of type t (n * bytes_of(t) bytes, little-endian).
/// `in` and `out` must not overlap. Throws std::invalid_argument for a bad DataType or a
/// null pointer with n > 0.
void encode(DataType t, const float* in, std::uint8_t* out, std::size_t n);

/// Decodes n elements of type t (n * bytes_of(t) bytes, little-endian) into n floats.
void decode(DataType t, const std::uint8_t* in, float* out, std::size_t n);

}  // namespace sohusim::device
