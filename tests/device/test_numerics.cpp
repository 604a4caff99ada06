// Number formats: known encodings from the OCP OFP8 and IEEE-754 definitions, every code
// point decoded against a reference written from the format definitions, rounding checked
// against a brute-force "nearest representable, ties to the even code" search, monotonicity,
// overflow/saturation, and the byte layout of encode/decode.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/device/compute/numerics.hpp"

namespace sohusim::device {
namespace {

float f_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

std::uint32_t b_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// ---- Reference model of each format, from its definition (independent of the code under test).

struct Spec {
  DataType type;
  unsigned bits;  // 8 or 16
  int exp_bits, man_bits, bias;
  bool ieee_specials;  // all-ones exponent is inf/NaN (false: E4M3, only S.1111.111 is NaN)
  bool saturates;      // overflow gives the max finite value instead of inf
};

const Spec kE4M3{DataType::FP8_E4M3, 8, 4, 3, 7, false, true};
const Spec kE5M2{DataType::FP8_E5M2, 8, 5, 2, 15, true, false};
const Spec kBF16{DataType::BF16, 16, 8, 7, 127, true, false};
const Spec kFP16{DataType::FP16, 16, 5, 10, 15, true, false};
const Spec kAll[] = {kE4M3, kE5M2, kBF16, kFP16};

enum class Kind { Finite, Inf, NaN };

Kind kind_of(const Spec& s, std::uint32_t code) {
  const std::uint32_t exp = (code >> s.man_bits) & ((1u << s.exp_bits) - 1);
  const std::uint32_t man = code & ((1u << s.man_bits) - 1);
  const std::uint32_t exp_max = (1u << s.exp_bits) - 1;
  if (s.ieee_specials) {
    if (exp == exp_max) return man == 0 ? Kind::Inf : Kind::NaN;
    return Kind::Finite;
  }
  return (exp == exp_max && man == (1u << s.man_bits) - 1) ? Kind::NaN : Kind::Finite;
}

// (-1)^s 2^(e - bias) (1 + m / 2^M) for normals, (-1)^s 2^(1 - bias) (m / 2^M) for subnormals.
double ref_value(const Spec& s, std::uint32_t code) {
  const bool neg = ((code >> (s.bits - 1)) & 1u) != 0;
  const int exp = static_cast<int>((code >> s.man_bits) & ((1u << s.exp_bits) - 1));
  const double frac = static_cast<double>(code & ((1u << s.man_bits) - 1)) / std::ldexp(1.0, s.man_bits);
  const double mag = exp == 0 ? std::ldexp(frac, 1 - s.bias) : std::ldexp(1.0 + frac, exp - s.bias);
  return neg ? -mag : mag;
}

double decode_one(const Spec& s, std::uint32_t code) {
  if (s.bits == 8) {
    const auto c = static_cast<std::uint8_t>(code);
    return static_cast<double>(s.type == DataType::FP8_E4M3 ? e4m3_to_float(c) : e5m2_to_float(c));
  }
  const auto c = static_cast<std::uint16_t>(code);
  return static_cast<double>(s.type == DataType::BF16 ? bf16_to_float(c) : fp16_to_float(c));
}

std::uint32_t encode_one(const Spec& s, float x) {
  switch (s.type) {
    case DataType::FP8_E4M3:
      return float_to_e4m3(x);
    case DataType::FP8_E5M2:
      return float_to_e5m2(x);
    case DataType::BF16:
      return float_to_bf16(x);
    case DataType::FP16:
      return float_to_fp16(x);
    case DataType::FP32:
      break;
  }
  return 0;
}

// Non-negative finite values of a format with their codes, ascending, plus one sentinel one
// ulp beyond the largest: the value an unbounded exponent range would round to (2^(emax+1)
// for the IEEE-like formats, whose code would be "even", mantissa 0; for E4M3 it is 480 and
// only ever saturates). A result equal to the sentinel is an overflow.
struct Entry {
  double value;
  std::uint32_t code;
  bool overflow;
};

std::vector<Entry> positive_values(const Spec& s) {
  std::vector<Entry> v;
  const std::uint32_t sign_bit = 1u << (s.bits - 1);
  for (std::uint32_t c = 0; c < sign_bit; ++c) {
    if (kind_of(s, c) == Kind::Finite) v.push_back({ref_value(s, c), c, false});
  }
  std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.value < b.value; });
  const double top = v.back().value;
  const double ulp = top - v[v.size() - 2].value;
  v.push_back({top + ulp, 0, true});
  return v;
}

// Brute-force reference encoding of a finite float: nearest entry, ties to the even code.
std::uint32_t ref_encode(const Spec& s, const std::vector<Entry>& table, float xf) {
  const double x = static_cast<double>(xf);
  const std::uint32_t sign = std::signbit(xf) ? (1u << (s.bits - 1)) : 0u;
  const double a = std::fabs(x);
  std::uint32_t mag;
  if (a >= table.back().value) {
    mag = s.saturates ? table[table.size() - 2].code : ~0u;
  } else {
    auto hi = std::lower_bound(table.begin(), table.end(), a, [](const Entry& e, double val) { return e.value < val; });
    const Entry* pick = &*hi;
    if (hi != table.begin() && hi->value != a) {
      const Entry& lo = *(hi - 1);
      const double dlo = a - lo.value, dhi = hi->value - a;
      if (dlo < dhi || (dlo == dhi && (lo.code & 1u) == 0 && !lo.overflow)) pick = &lo;
      // at a tie the other one (hi) is even: codes of adjacent values differ by one,
      // and the sentinel counts as even.
    }
    mag = pick->overflow ? (s.saturates ? table[table.size() - 2].code : ~0u) : pick->code;
  }
  if (mag == ~0u) mag = ((1u << s.exp_bits) - 1) << s.man_bits;  // infinity
  return sign | mag;
}

// ---- Known encodings.

TEST(NumericsTest, E4M3KnownEncodings) {
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-448.0f), 0xFE);
  EXPECT_EQ(float_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_e4m3(-2.0f), 0xC0);
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -9)), 0x01);  // smallest subnormal
  EXPECT_EQ(float_to_e4m3(std::ldexp(7.0f, -9)), 0x07);  // largest subnormal
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -6)), 0x08);  // smallest normal
  EXPECT_EQ(float_to_e4m3(256.0f), 0x78);                // exponent field 1111 is a normal
  EXPECT_EQ(float_to_e4m3(0.0f), 0x00);
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xFF)));
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x77), 240.0f);
  EXPECT_EQ(e4m3_to_float(0x01), 0.001953125f);
  // Ties to even: 1.0625 is halfway between 1.0 (0x38) and 1.125 (0x39); 1.1875 between
  // 1.125 and 1.25 (0x3A).
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A);
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -10)), 0x00);  // half the smallest subnormal -> 0
  EXPECT_EQ(float_to_e4m3(std::ldexp(3.0f, -11)), 0x01);  // 0.75 of it -> 1
}

TEST(NumericsTest, E4M3Saturates) {
  EXPECT_EQ(float_to_e4m3(464.0f), 0x7E);  // halfway to the (NaN) code above
  EXPECT_EQ(float_to_e4m3(470.0f), 0x7E);  // nearer 480, which would be the NaN code
  EXPECT_EQ(float_to_e4m3(500.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(1e30f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-1e30f), 0xFE);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::max()), 0x7E);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(float_to_e4m3(432.0f), 0x7E);  // 416 (0x7D) .. 448 tie -> even 0x7E
  EXPECT_EQ(float_to_e4m3(431.0f), 0x7D);
}

TEST(NumericsTest, E5M2KnownEncodingsAndOverflow) {
  EXPECT_EQ(float_to_e5m2(1.0f), 0x3C);
  EXPECT_EQ(float_to_e5m2(-1.0f), 0xBC);
  EXPECT_EQ(float_to_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(float_to_e5m2(std::ldexp(1.0f, -16)), 0x01);
  EXPECT_EQ(float_to_e5m2(std::ldexp(1.0f, -14)), 0x04);
  EXPECT_EQ(float_to_e5m2(std::numeric_limits<float>::infinity()), 0x7C);
  EXPECT_EQ(float_to_e5m2(-std::numeric_limits<float>::infinity()), 0xFC);
  EXPECT_EQ(e5m2_to_float(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(e5m2_to_float(0xFC), -std::numeric_limits<float>::infinity());
  for (unsigned c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) {
    EXPECT_TRUE(std::isnan(e5m2_to_float(static_cast<std::uint8_t>(c)))) << c;
  }
  const std::uint8_t nan_code = float_to_e5m2(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(e5m2_to_float(nan_code)));
  // Overflow: 61440 is halfway between 57344 and 2^16; ties-to-even goes to 2^16 = inf.
  EXPECT_EQ(float_to_e5m2(61440.0f), 0x7C);
  EXPECT_EQ(float_to_e5m2(61439.0f), 0x7B);
  EXPECT_EQ(float_to_e5m2(-1e6f), 0xFC);
  // Saturating variant.
  EXPECT_EQ(float_to_e5m2(61440.0f, true), 0x7B);
  EXPECT_EQ(float_to_e5m2(1e30f, true), 0x7B);
  EXPECT_EQ(float_to_e5m2(-std::numeric_limits<float>::infinity(), true), 0xFB);
  EXPECT_TRUE(std::isnan(e5m2_to_float(float_to_e5m2(std::numeric_limits<float>::quiet_NaN(), true))));
  // Ties: 1.125 is halfway between 1.0 (0x3C) and 1.25 (0x3D); 1.375 between 0x3D and 0x3E.
  EXPECT_EQ(float_to_e5m2(1.125f), 0x3C);
  EXPECT_EQ(float_to_e5m2(1.375f), 0x3E);
}

TEST(NumericsTest, Bf16KnownEncodings) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(65504.0f), 0x4780);                // 2 - 2^-10 needs 10 bits: rounds up to 2^16
  EXPECT_EQ(float_to_bf16(f_of(0x3F808000u)), 0x3F80);       // tie -> even
  EXPECT_EQ(float_to_bf16(f_of(0x3F818000u)), 0x3F82);       // tie -> even (up)
  EXPECT_EQ(float_to_bf16(f_of(0x3F808001u)), 0x3F81);       // just above the tie
  EXPECT_EQ(float_to_bf16(std::ldexp(1.0f, -133)), 0x0001);  // smallest bf16 subnormal
  EXPECT_EQ(float_to_bf16(std::ldexp(1.0f, -149)), 0x0000);  // smallest float subnormal
  EXPECT_EQ(float_to_bf16(std::ldexp(1.0f, -126)), 0x0080);  // smallest normal
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // overflow -> inf
  EXPECT_EQ(float_to_bf16(f_of(0x7F7F7FFFu)), 0x7F7F);                  // largest value not rounding up
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x0001), std::ldexp(1.0f, -133));
  // NaN stays a (quiet) NaN, even one whose payload lives only in the low mantissa bits.
  const std::uint16_t n = float_to_bf16(f_of(0x7F800001u));
  EXPECT_EQ(n & 0x7F80u, 0x7F80u);
  EXPECT_NE(n & 0x0040u, 0u);
  EXPECT_TRUE(std::isnan(bf16_to_float(n)));
  EXPECT_EQ(float_to_bf16(f_of(0xFFC00000u)), 0xFFC0);
}

TEST(NumericsTest, Fp16KnownEncodings) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // halfway to 2^16: overflow to inf
  EXPECT_EQ(float_to_fp16(-1e9f), 0xFC00);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie with 0 -> even (0)
  EXPECT_EQ(float_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_fp16(std::ldexp(3.0f, -25)), 0x0002);     // tie 1 / 2 -> 2
  EXPECT_EQ(float_to_fp16(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(2047.0f, -25)), 0x0400);  // tie, carries into the normal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(float_to_fp16(2049.0f), 0x6800);  // tie 2048 / 2050 -> 2048
  EXPECT_EQ(float_to_fp16(2051.0f), 0x6802);  // tie 2050 / 2052 -> 2052
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(3.0f, -11)), 0x3C02);
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::signbit(fp16_to_float(0x8000)));
  EXPECT_EQ(fp16_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  const std::uint16_t n = float_to_fp16(f_of(0x7F800001u));
  EXPECT_EQ(n & 0x7C00u, 0x7C00u);
  EXPECT_NE(n & 0x03FFu, 0u);
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7C01)));
}

// ---- Every code point.

TEST(NumericsTest, EveryCodePointDecodesToItsDefinitionAndRoundTrips) {
  for (const Spec& s : kAll) {
    const std::uint32_t count = 1u << s.bits;
    for (std::uint32_t c = 0; c < count; ++c) {
      const double got = decode_one(s, c);
      const Kind kind = kind_of(s, c);
      const bool neg = ((c >> (s.bits - 1)) & 1u) != 0;
      if (kind == Kind::NaN) {
        ASSERT_TRUE(std::isnan(got)) << to_string(s.type) << " code " << c;
        const std::uint32_t back = encode_one(s, static_cast<float>(got));
        ASSERT_EQ(kind_of(s, back), Kind::NaN) << to_string(s.type) << " code " << c;
        continue;
      }
      if (kind == Kind::Inf) {
        ASSERT_TRUE(std::isinf(got)) << to_string(s.type) << " code " << c;
      } else {
        ASSERT_EQ(got, ref_value(s, c)) << to_string(s.type) << " code " << c;
      }
      ASSERT_EQ(std::signbit(got), neg) << to_string(s.type) << " code " << c;
      ASSERT_EQ(encode_one(s, static_cast<float>(got)), c) << to_string(s.type) << " code " << c;
    }
  }
}

// ---- Rounding against the brute-force reference.

TEST(NumericsTest, MidpointsRoundToEvenAndNeighboursToNearest) {
  for (const Spec& s : kAll) {
    const std::vector<Entry> table = positive_values(s);
    for (std::size_t i = 0; i + 1 < table.size(); ++i) {
      const double mid = 0.5 * (table[i].value + table[i + 1].value);
      const auto m = static_cast<float>(mid);
      ASSERT_EQ(static_cast<double>(m), mid);  // midpoints of these formats are floats
      for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, 1e38f)}) {
        for (float sx : {x, -x}) {
          ASSERT_EQ(encode_one(s, sx), ref_encode(s, table, sx))
              << to_string(s.type) << " x = " << sx << " between codes " << table[i].code << ", " << table[i + 1].code;
        }
      }
    }
  }
}

TEST(NumericsTest, RandomFloatsRoundToNearest) {
  std::mt19937 rng(12345);
  for (const Spec& s : kAll) {
    const std::vector<Entry> table = positive_values(s);
    const int lo_exp = 1 - s.bias - s.man_bits - 2;
    const int hi_exp = static_cast<int>(std::log2(table.back().value)) + 2;
    std::uniform_int_distribution<int> exp_dist(std::max(lo_exp, -149), std::min(hi_exp, 127));
    std::uniform_real_distribution<float> frac(1.0f, 2.0f);
    for (int i = 0; i < 20000; ++i) {
      const float x = std::ldexp(frac(rng), exp_dist(rng)) * ((i & 1) != 0 ? -1.0f : 1.0f);
      ASSERT_EQ(encode_one(s, x), ref_encode(s, table, x)) << to_string(s.type) << " x = " << x;
    }
    // Arbitrary bit patterns too (covers float subnormals and huge values).
    std::uniform_int_distribution<std::uint32_t> bits(0, 0xFFFFFFFFu);
    for (int i = 0; i < 20000; ++i) {
      const float x = f_of(bits(rng));
      if (!std::isfinite(x)) continue;
      ASSERT_EQ(encode_one(s, x), ref_encode(s, table, x)) << to_string(s.type) << " x = " << x;
    }
  }
}

TEST(NumericsTest, RoundingIsMonotonic) {
  const DataType types[] = {DataType::FP8_E4M3, DataType::FP8_E5M2, DataType::BF16, DataType::FP16, DataType::FP32};
  for (DataType t : types) {
    // Sweep every 9973rd non-negative float bit pattern (ascending values), then mirror.
    float prev = -std::numeric_limits<float>::infinity();
    for (std::uint64_t b = 0; b <= 0x7F800000u; b += 9973) {
      const float r = round_to(t, f_of(static_cast<std::uint32_t>(b)));
      ASSERT_GE(r, prev) << to_string(t) << " at bits " << b;
      ASSERT_EQ(round_to(t, -f_of(static_cast<std::uint32_t>(b))), -r) << to_string(t);
      prev = r;
    }
  }
}

TEST(NumericsTest, RoundToMatchesPerFormatConversions) {
  EXPECT_EQ(round_to(DataType::FP8_E4M3, 1000.0f), 448.0f);
  EXPECT_EQ(round_to(DataType::FP8_E5M2, 1e6f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(round_to(DataType::BF16, 1.00390625f), 1.0f);  // 1 + 2^-8: tie -> even
  EXPECT_EQ(round_to(DataType::FP16, 0.1f), 0.0999755859375f);
  EXPECT_EQ(round_to(DataType::FP32, 0.1f), 0.1f);
  EXPECT_TRUE(std::isnan(round_to(DataType::FP8_E4M3, std::nanf(""))));
  EXPECT_THROW(round_to(static_cast<DataType>(7), 1.0f), std::invalid_argument);
}

// ---- Buffers.

TEST(NumericsTest, EncodeDecodeBuffersAreLittleEndian) {
  const float in[] = {1.0f, -2.0f, 0.5f};
  std::uint8_t out[12] = {};
  encode(DataType::FP16, in, out, 3);
  const std::uint8_t fp16[] = {0x00, 0x3C, 0x00, 0xC0, 0x00, 0x38};
  EXPECT_TRUE(std::equal(fp16, fp16 + 6, out));
  encode(DataType::BF16, in, out, 3);
  const std::uint8_t bf16[] = {0x80, 0x3F, 0x00, 0xC0, 0x00, 0x3F};
  EXPECT_TRUE(std::equal(bf16, bf16 + 6, out));
  encode(DataType::FP32, in, out, 3);
  const std::uint8_t fp32[] = {0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0, 0, 0, 0, 0x3F};
  EXPECT_TRUE(std::equal(fp32, fp32 + 12, out));
  encode(DataType::FP8_E4M3, in, out, 3);
  const std::uint8_t e4m3[] = {0x38, 0xC0, 0x30};
  EXPECT_TRUE(std::equal(e4m3, e4m3 + 3, out));
  encode(DataType::FP8_E5M2, in, out, 3);
  const std::uint8_t e5m2[] = {0x3C, 0xC0, 0x38};
  EXPECT_TRUE(std::equal(e5m2, e5m2 + 3, out));

  const std::uint8_t bytes[] = {0x00, 0x3C, 0xFF, 0x7B};  // fp16 1.0, 65504
  float back[2] = {};
  decode(DataType::FP16, bytes, back, 2);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], 65504.0f);
  decode(DataType::BF16, bytes, back, 2);
  EXPECT_EQ(back[0], bf16_to_float(0x3C00));
  EXPECT_EQ(back[1], bf16_to_float(0x7BFF));
  decode(DataType::FP32, bytes, back, 1);
  EXPECT_EQ(b_of(back[0]), 0x7BFF3C00u);
  decode(DataType::FP8_E4M3, bytes + 1, back, 2);
  EXPECT_EQ(back[0], 1.5f);          // 0x3C = 0.0111.100: 2^0 * 1.5
  EXPECT_TRUE(std::isnan(back[1]));  // 0xFF
}

TEST(NumericsTest, BufferRoundTripOfRandomValuesEqualsRoundTo) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  std::vector<float> in(1000);
  for (float& x : in) x = dist(rng);
  for (unsigned t = 0; t < kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    std::vector<std::uint8_t> bytes(in.size() * bytes_of(type));
    std::vector<float> back(in.size());
    encode(type, in.data(), bytes.data(), in.size());
    decode(type, bytes.data(), back.data(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(back[i], round_to(type, in[i])) << to_string(type);
  }
}

TEST(NumericsTest, BadArgumentsThrow) {
  float f = 1.0f;
  std::uint8_t b[4] = {};
  EXPECT_THROW(encode(static_cast<DataType>(5), &f, b, 1), std::invalid_argument);
  EXPECT_THROW(decode(static_cast<DataType>(9), b, &f, 1), std::invalid_argument);
  EXPECT_THROW(encode(DataType::FP16, nullptr, b, 1), std::invalid_argument);
  EXPECT_THROW(decode(DataType::FP16, b, nullptr, 1), std::invalid_argument);
  EXPECT_NO_THROW(encode(DataType::FP16, nullptr, nullptr, 0));
  try {
    encode(static_cast<DataType>(5), &f, b, 1);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0..4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sohusim::device
