#include "sohusim/device/compute/numerics.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace sohusim::device {
namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// A binary floating-point format narrower than binary32, described by its field widths.
struct Format {
  int man_bits;
  int bias;
};

int bit_length(std::uint32_t v) {
  int n = 0;
  while (v != 0) {
    v >>= 1;
    ++n;
  }
  return n;
}

// The magnitude field (exponent and mantissa, no sign) of |x| rounded to nearest-even in
// format f, with an exponent range unbounded above: the caller decides what a code beyond
// the format's largest finite one means. abs_bits is the binary32 pattern of a finite |x|.
//
// The value is sig * 2^exp2 exactly. Its quantum in the target is 2^q, where q is the
// target's ulp exponent in the binade of |x| (or of the smallest normal, for subnormals).
// The count n of quanta, rounded, is laid out so that exponent carries (mantissa overflow,
// subnormal -> normal) fall out of plain integer addition.
std::uint32_t round_magnitude(std::uint32_t abs_bits, const Format& f) {
  if (abs_bits == 0) return 0;
  const std::uint32_t e32 = abs_bits >> 23;
  const std::uint32_t m32 = abs_bits & 0x7FFFFFu;
  const std::uint32_t sig = e32 == 0 ? m32 : (m32 | 0x800000u);
  const int exp2 = e32 == 0 ? -149 : static_cast<int>(e32) - 150;
  const int top = e32 == 0 ? exp2 + bit_length(sig) - 1 : static_cast<int>(e32) - 127;  // floor(log2 |x|)
  const int min_exp = 1 - f.bias;
  const int q = (top > min_exp ? top : min_exp) - f.man_bits;
  const int shift = q - exp2;
  std::uint64_t n;
  if (shift <= 0) {
    n = static_cast<std::uint64_t>(sig) << -shift;  // exact (not reached by the formats here)
  } else if (shift > 30) {
    n = 0;  // |x| < 2^(q-1): below half the smallest subnormal
  } else {
    const std::uint64_t s = sig;
    n = s >> shift;
    const std::uint64_t rem = s & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1u) != 0)) ++n;
  }
  const auto prefix = static_cast<std::uint64_t>(q + f.man_bits + f.bias - 1);
  return static_cast<std::uint32_t>((prefix << f.man_bits) + n);
}

constexpr Format kE4M3{3, 7};
constexpr Format kE5M2{2, 15};
constexpr Format kBF16{7, 127};
constexpr Format kFP16{10, 15};

// Value of a non-special magnitude field in format f (exact in float for every format here).
float decode_finite(std::uint32_t mag, const Format& f) {
  const std::uint32_t exp = mag >> f.man_bits;
  const std::uint32_t man = mag & ((1u << f.man_bits) - 1);
  if (exp == 0) return std::ldexp(static_cast<float>(man), 1 - f.bias - f.man_bits);
  return std::ldexp(static_cast<float>(man | (1u << f.man_bits)), static_cast<int>(exp) - f.bias - f.man_bits);
}

std::array<float, 256> make_e4m3_table() {
  std::array<float, 256> t{};
  for (unsigned c = 0; c < 256; ++c) {
    const std::uint32_t mag = c & 0x7Fu;
    const float v = mag == 0x7Fu ? std::numeric_limits<float>::quiet_NaN() : decode_finite(mag, kE4M3);
    t[c] = (c & 0x80u) != 0 ? -v : v;
  }
  return t;
}

std::array<float, 256> make_e5m2_table() {
  std::array<float, 256> t{};
  for (unsigned c = 0; c < 256; ++c) {
    const std::uint32_t mag = c & 0x7Fu;
    float v;
    if (mag == 0x7Cu) {
      v = std::numeric_limits<float>::infinity();
    } else if (mag > 0x7Cu) {
      v = std::numeric_limits<float>::quiet_NaN();
    } else {
      v = decode_finite(mag, kE5M2);
    }
    t[c] = (c & 0x80u) != 0 ? -v : v;
  }
  return t;
}

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> t = make_e4m3_table();
  return t;
}

const std::array<float, 256>& e5m2_table() {
  static const std::array<float, 256> t = make_e5m2_table();
  return t;
}

[[noreturn]] void bad_type(DataType t) {
  throw std::invalid_argument("data type code " + std::to_string(static_cast<unsigned>(t)) +
                              " is not a DataType (allowed 0..4: fp8_e4m3, fp8_e5m2, bf16, fp16, fp32)");
}

void check_pointers(const void* in, const void* out, std::size_t n, const char* fn) {
  if (n == 0) return;
  if (in == nullptr) throw std::invalid_argument(std::string(fn) + ": 'in' is null with n > 0");
  if (out == nullptr) throw std::invalid_argument(std::string(fn) + ": 'out' is null with n > 0");
}

}  // namespace

std::uint8_t float_to_e4m3(float x) {
  const std::uint32_t b = bits_of(x);
  const auto sign = static_cast<std::uint8_t>((b >> 24) & 0x80u);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<std::uint8_t>(sign | 0x7Fu);   // NaN
  if (a == 0x7F800000u) return static_cast<std::uint8_t>(sign | 0x7Eu);  // inf saturates
  std::uint32_t mag = round_magnitude(a, kE4M3);
  if (mag > 0x7Eu) mag = 0x7Eu;  // 0x7F is NaN: saturate to 448
  return static_cast<std::uint8_t>(sign | mag);
}

float e4m3_to_float(std::uint8_t code) {
  return e4m3_table()[code];
}

std::uint8_t float_to_e5m2(float x, bool saturate) {
  const std::uint32_t b = bits_of(x);
  const auto sign = static_cast<std::uint8_t>((b >> 24) & 0x80u);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<std::uint8_t>(sign | 0x7Eu);
  std::uint32_t mag = a == 0x7F800000u ? 0x7Cu : round_magnitude(a, kE5M2);
  if (mag > 0x7Bu) mag = saturate ? 0x7Bu : 0x7Cu;
  return static_cast<std::uint8_t>(sign | mag);
}

float e5m2_to_float(std::uint8_t code) {
  return e5m2_table()[code];
}

std::uint16_t float_to_bf16(float x) {
  const std::uint32_t b = bits_of(x);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<std::uint16_t>((b >> 16) | 0x0040u);  // quiet, payload kept
  std::uint32_t mag = a == 0x7F800000u ? 0x7F80u : round_magnitude(a, kBF16);
  if (mag > 0x7F7Fu) mag = 0x7F80u;
  return static_cast<std::uint16_t>(sign | mag);
}

float bf16_to_float(std::uint16_t code) {
  return float_of(static_cast<std::uint32_t>(code) << 16);
}

std::uint16_t float_to_fp16(float x) {
  const std::uint32_t b = bits_of(x);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) {
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x03FFu));  // quiet NaN
  }
  std::uint32_t mag = a == 0x7F800000u ? 0x7C00u : round_magnitude(a, kFP16);
  if (mag > 0x7BFFu) mag = 0x7C00u;
  return static_cast<std::uint16_t>(sign | mag);
}

float fp16_to_float(std::uint16_t code) {
  const std::uint32_t sign = static_cast<std::uint32_t>(code & 0x8000u) << 16;
  const std::uint32_t exp = (code >> 10) & 0x1Fu;
  const std::uint32_t man = code & 0x03FFu;
  if (exp == 0x1Fu) return float_of(sign | 0x7F800000u | (man << 13));  // inf / NaN (payload kept)
  if (exp == 0) {
    // man * 2^-24 is exact in float; the sign is applied on the bits so -0 stays -0.
    return float_of(sign | bits_of(std::ldexp(static_cast<float>(man), -24)));
  }
  return float_of(sign | ((exp + 112u) << 23) | (man << 13));  // rebias 15 -> 127
}

float round_to(DataType t, float x) {
  switch (t) {
    case DataType::FP8_E4M3:
      return e4m3_to_float(float_to_e4m3(x));
    case DataType::FP8_E5M2:
      return e5m2_to_float(float_to_e5m2(x));
    case DataType::BF16:
      return bf16_to_float(float_to_bf16(x));
    case DataType::FP16:
      return fp16_to_float(float_to_fp16(x));
    case DataType::FP32:
      return x;
  }
  bad_type(t);
}

void encode(DataType t, const float* in, std::uint8_t* out, std::size_t n) {
  if (!valid_data_type(static_cast<unsigned>(t))) bad_type(t);
  check_pointers(in, out, n, "encode");
  switch (t) {
    case DataType::FP8_E4M3:
      for (std::size_t i = 0; i < n; ++i) out[i] = float_to_e4m3(in[i]);
      return;
    case DataType::FP8_E5M2:
      for (std::size_t i = 0; i < n; ++i) out[i] = float_to_e5m2(in[i]);
      return;
    case DataType::BF16:
    case DataType::FP16:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t c = t == DataType::BF16 ? float_to_bf16(in[i]) : float_to_fp16(in[i]);
        out[2 * i] = static_cast<std::uint8_t>(c & 0xFFu);
        out[2 * i + 1] = static_cast<std::uint8_t>(c >> 8);
      }
      return;
    case DataType::FP32:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t c = bits_of(in[i]);
        for (unsigned j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>((c >> (8 * j)) & 0xFFu);
      }
      return;
  }
}

void decode(DataType t, const std::uint8_t* in, float* out, std::size_t n) {
  if (!valid_data_type(static_cast<unsigned>(t))) bad_type(t);
  check_pointers(in, out, n, "decode");
  switch (t) {
    case DataType::FP8_E4M3: {
      const auto& tab = e4m3_table();
      for (std::size_t i = 0; i < n; ++i) out[i] = tab[in[i]];
      return;
    }
    case DataType::FP8_E5M2: {
      const auto& tab = e5m2_table();
      for (std::size_t i = 0; i < n; ++i) out[i] = tab[in[i]];
      return;
    }
    case DataType::BF16:
    case DataType::FP16:
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<std::uint16_t>(in[2 * i] | (in[2 * i + 1] << 8));
        out[i] = t == DataType::BF16 ? bf16_to_float(c) : fp16_to_float(c);
      }
      return;
    case DataType::FP32:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t c = 0;
        for (unsigned j = 0; j < 4; ++j) c |= static_cast<std::uint32_t>(in[4 * i + j]) << (8 * j);
        out[i] = float_of(c);
      }
      return;
  }
}

}  // namespace sohusim::device
