// Systolic fold timing: SCALE-Sim v2's formulas against hand-computed values and against an
// independent fold-by-fold enumerator; the overlap convention against an event timeline.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/device/compute/matrix_engine_params.hpp"
#include "sohusim/device/compute/systolic.hpp"

using namespace sohusim::device;

namespace {

constexpr Dataflow kWS = Dataflow::WeightStationary;
constexpr Dataflow kOS = Dataflow::OutputStationary;
constexpr Dataflow kIS = Dataflow::InputStationary;

// Independent reference: enumerate folds the way SCALE-Sim's demand matrices lay them out
// (per fold: stationary prefix, streaming rows, drain suffix, skew) and add them up.
struct Fold {
  std::uint64_t prefix, stream, suffix, skew;
};
std::uint64_t brute_scalesim(Dataflow df, unsigned r, unsigned c, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  std::uint64_t sr = 0, sc = 0, t = 0, prefix = 0;  // rows-mapped, cols-mapped, streamed
  if (df == kWS) {
    sr = k;
    sc = n;
    t = m;
    prefix = r;
  }
  if (df == kOS) {
    sr = m;
    sc = n;
    t = k;
    prefix = 0;
  }
  if (df == kIS) {
    sr = k;
    sc = m;
    t = n;
    prefix = r;
  }
  std::uint64_t total = 0;
  for (std::uint64_t row0 = 0; row0 < sr; row0 += r)
    for (std::uint64_t col0 = 0; col0 < sc; col0 += c) {
      const Fold f{prefix, t, c - 1u, r - 1u};
      total += f.prefix + f.stream + f.suffix + f.skew;
    }
  return total - 1;
}

// Independent reference for the overlap convention: an event timeline of fold starts.
std::uint64_t timeline_overlap(Dataflow df, unsigned r, unsigned c, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                               std::uint64_t stream_override = 0) {
  std::uint64_t sr = 0, sc = 0, t = 0, load = 0;
  if (df == kWS) {
    sr = k;
    sc = n;
    t = m;
    load = r;
  }
  if (df == kOS) {
    sr = m;
    sc = n;
    t = k;
    load = 0;
  }
  if (df == kIS) {
    sr = k;
    sc = m;
    t = n;
    load = r;
  }
  if (stream_override != 0) t = stream_override;
  const std::uint64_t folds = ((sr + r - 1) / r) * ((sc + c - 1) / c);
  std::uint64_t start = load;  // fold 1 starts when its block is loaded
  for (std::uint64_t f = 1; f < folds; ++f) {
    const std::uint64_t next_loaded = start + load;  // shadow load begins as fold f starts
    const std::uint64_t stream_done = start + t;     // fold f has issued its operands
    start = std::max(next_loaded, stream_done);
  }
  return start + t + (r - 1u) + (c - 1u) - 1;  // last fold streams, then skew and drain
}

std::uint64_t lcg(std::uint64_t& s) {
  s = s * 6364136223846793005ULL + 1442695040888963407ULL;
  return s >> 33;
}

}  // namespace

TEST(Systolic, ScalesimHandValues32) {
  const ArrayShape a{32, 32};
  // tiny: one fold; WS/IS 2R + C + 1 - 2 = 95, OS R + C + 1 - 2 = 63; minus 1.
  EXPECT_EQ(scalesim_cycles(kWS, a, {1, 1, 1}), 94u);
  EXPECT_EQ(scalesim_cycles(kOS, a, {1, 1, 1}), 62u);
  EXPECT_EQ(scalesim_cycles(kIS, a, {1, 1, 1}), 94u);
  // square, exactly one fold: 64 + 32 + 32 - 2 = 126.
  EXPECT_EQ(scalesim_cycles(kWS, a, {32, 32, 32}), 125u);
  // non-multiple: M=100 K=70 N=50.
  // WS: ceil(70/32)=3 * ceil(50/32)=2 = 6 folds of 64+32+100-2 = 194 -> 1163
  EXPECT_EQ(scalesim_cycles(kWS, a, {100, 70, 50}), 1163u);
  // OS: ceil(100/32)=4 * 2 = 8 folds of 32+32+70-2 = 132 -> 1055
  EXPECT_EQ(scalesim_cycles(kOS, a, {100, 70, 50}), 1055u);
  // IS: 3 * ceil(100/32)=4 = 12 folds of 64+32+50-2 = 144 -> 1727
  EXPECT_EQ(scalesim_cycles(kIS, a, {100, 70, 50}), 1727u);
}

TEST(Systolic, ScalesimHandValues128) {
  const ArrayShape a{128, 128};
  // skinny GEMV M=1, K=N=4096.
  // WS: 32*32 = 1024 folds of 256+128+1-2 = 383 -> 392191
  EXPECT_EQ(scalesim_cycles(kWS, a, {1, 4096, 4096}), 392191u);
  // OS: 1*32 folds of 128+128+4096-2 = 4350 -> 139199
  EXPECT_EQ(scalesim_cycles(kOS, a, {1, 4096, 4096}), 139199u);
  // IS: 32*1 folds of 256+128+4096-2 = 4478 -> 143295
  EXPECT_EQ(scalesim_cycles(kIS, a, {1, 4096, 4096}), 143295u);
  // square 512^3: 16 folds; WS/IS 256+128+512-2 = 894, OS 128+128+512-2 = 766
  EXPECT_EQ(scalesim_cycles(kWS, a, {512, 512, 512}), 14303u);
  EXPECT_EQ(scalesim_cycles(kOS, a, {512, 512, 512}), 12255u);
  EXPECT_EQ(scalesim_cycles(kIS, a, {512, 512, 512}), 14303u);
  // non-multiple 200x300x130: WS ceil(300/128)=3*ceil(130/128)=2=6 folds of 256+128+200-2=582
  EXPECT_EQ(scalesim_cycles(kWS, a, {200, 300, 130}), 6u * 582u - 1u);
}

TEST(Systolic, ScalesimMatchesBruteForceEnumerator) {
  std::uint64_t seed = 12345;
  for (int i = 0; i < 300; ++i) {
    const unsigned r = 1 + static_cast<unsigned>(lcg(seed) % 64);
    const unsigned c = 1 + static_cast<unsigned>(lcg(seed) % 64);
    const std::uint64_t m = 1 + lcg(seed) % 300, k = 1 + lcg(seed) % 300, n = 1 + lcg(seed) % 300;
    for (Dataflow df : {kWS, kOS, kIS}) {
      ASSERT_EQ(scalesim_cycles(df, {r, c}, {m, k, n}), brute_scalesim(df, r, c, m, k, n))
          << to_string(df) << " " << r << "x" << c << " m=" << m << " k=" << k << " n=" << n;
      ASSERT_EQ(compute_cycles(FoldModel::Scalesim, df, {r, c}, {m, k, n}), brute_scalesim(df, r, c, m, k, n));
    }
  }
}

TEST(Systolic, OverlapHandValues) {
  // WS 32x32, M=100 K=70 N=50: L=32 S=100 D=62 F=6 -> 32+100+62 + 5*100 - 1 = 693
  EXPECT_EQ(overlap_cycles(kWS, {32, 32}, {100, 70, 50}), 693u);
  // OS same shape: L=0 S=70 D=62 F=8 -> 70+62 + 7*70 - 1 = 621
  EXPECT_EQ(overlap_cycles(kOS, {32, 32}, {100, 70, 50}), 621u);
  // WS GEMV on 128x128: S=1 < L=128, so each further fold costs its load: 383 + 1023*128 - 1
  EXPECT_EQ(overlap_cycles(kWS, {128, 128}, {1, 4096, 4096}), 131326u);
}

TEST(Systolic, OverlapMatchesTimelineAndNeverExceedsScalesim) {
  std::uint64_t seed = 777;
  for (int i = 0; i < 2000; ++i) {
    const unsigned r = 1 + static_cast<unsigned>(lcg(seed) % 256);
    const unsigned c = 1 + static_cast<unsigned>(lcg(seed) % 256);
    const std::uint64_t m = 1 + lcg(seed) % 5000, k = 1 + lcg(seed) % 5000, n = 1 + lcg(seed) % 5000;
    for (Dataflow df : {kWS, kOS, kIS}) {
      const std::uint64_t ov = overlap_cycles(df, {r, c}, {m, k, n});
      const std::uint64_t ss = scalesim_cycles(df, {r, c}, {m, k, n});
      ASSERT_EQ(ov, timeline_overlap(df, r, c, m, k, n)) << to_string(df) << " " << r << "x" << c;
      ASSERT_LE(ov, ss);
      // Documented difference: (F - 1) * (min(S, L) + R + C - 2).
      const FoldGeometry f = fold_geometry(df, {r, c}, {m, k, n});
      ASSERT_EQ(ss - ov, (f.folds - 1) * (std::min(f.streaming, f.stationary_load) + r + c - 2));
      if (f.folds == 1) {
        ASSERT_EQ(ov, ss);
      }
    }
  }
}

TEST(Systolic, SingleFoldAgrees) {
  for (Dataflow df : {kWS, kOS, kIS})
    for (std::uint64_t s : {1u, 7u, 128u, 1000u}) {
      const GemmShape g{df == kIS ? 100u : (df == kOS ? 100u : s), df == kOS ? s : 100u, df == kIS ? s : 100u};
      EXPECT_EQ(overlap_cycles(df, {128, 128}, g), scalesim_cycles(df, {128, 128}, g));
    }
}

TEST(Systolic, RateScalesStreamingOnly) {
  const ArrayShape a{32, 32};
  const GemmShape g{100, 70, 50};  // WS: F=6, L=32, S=100, D=62
  EXPECT_EQ(compute_cycles(FoldModel::Scalesim, kWS, a, g, 1.0), 1163u);
  EXPECT_EQ(compute_cycles(FoldModel::Overlap, kWS, a, g, 1.0), 693u);
  EXPECT_EQ(compute_cycles(FoldModel::Scalesim, kWS, a, g, 2.0), 6u * (32 + 50 + 62) - 1);
  EXPECT_EQ(compute_cycles(FoldModel::Overlap, kWS, a, g, 2.0), 32u + 50 + 62 + 5 * 50 - 1);
  EXPECT_EQ(compute_cycles(FoldModel::Scalesim, kWS, a, g, 0.5), 6u * (32 + 200 + 62) - 1);
  // ceil(100 / 3) = 34
  EXPECT_EQ(compute_cycles(FoldModel::Overlap, kWS, a, g, 3.0), timeline_overlap(kWS, 32, 32, 100, 70, 50, 34));
  // M = 1 at rate 2: one streaming step still takes a cycle.
  EXPECT_EQ(compute_cycles(FoldModel::Scalesim, kWS, a, {1, 32, 32}, 2.0), 94u);
  // OS streams K.
  EXPECT_EQ(compute_cycles(FoldModel::Overlap, kOS, a, g, 2.0), 35u + 62 + 7 * 35 - 1);
}

TEST(Systolic, FoldStatsCountPadding) {
  const ArrayShape a{32, 32};
  const GemmShape g{100, 70, 50};
  const FoldStats ws = fold_stats(kWS, a, g);
  EXPECT_EQ(ws.folds, 6u);
  EXPECT_EQ(ws.useful_macs, 350000u);
  EXPECT_EQ(ws.issued_macs, 6u * 1024u * 100u);  // K padded to 96, N to 64
  const FoldStats os = fold_stats(kOS, a, g);
  EXPECT_EQ(os.folds, 8u);
  EXPECT_EQ(os.issued_macs, 8u * 1024u * 70u);
  const FoldStats is = fold_stats(kIS, a, g);
  EXPECT_EQ(is.folds, 12u);
  EXPECT_EQ(is.issued_macs, 12u * 1024u * 50u);
  const FoldStats exact = fold_stats(kWS, {128, 128}, {256, 256, 256});
  EXPECT_EQ(exact.useful_macs, exact.issued_macs);
}

TEST(Systolic, BadInputNamesTheField) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([] { scalesim_cycles(kWS, {0, 32}, {1, 1, 1}); }).find("array.rows"), std::string::npos);
  EXPECT_NE(message([] { scalesim_cycles(kWS, {32, 0}, {1, 1, 1}); }).find("array.cols"), std::string::npos);
  EXPECT_NE(message([] { overlap_cycles(kOS, {32, 32}, {0, 1, 1}); }).find("gemm.m"), std::string::npos);
  EXPECT_NE(message([] { overlap_cycles(kOS, {32, 32}, {1, 0, 1}); }).find("gemm.k"), std::string::npos);
  EXPECT_NE(message([] { fold_stats(kIS, {32, 32}, {1, 1, 0}); }).find("gemm.n"), std::string::npos);
  EXPECT_NE(message([] {
              compute_cycles(FoldModel::Overlap, kWS, {32, 32}, {1, 1, 1}, 0.0);
            }).find("rate"),
            std::string::npos);
  EXPECT_NE(message([] {
              compute_cycles(FoldModel::Overlap, kWS, {32, 32}, {1, 1, 1}, -1.0);
            }).find("rate"),
            std::string::npos);
  const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max() - 10;
  EXPECT_NE(message([&] { scalesim_cycles(kWS, {32, 32}, {huge, 1, 1}); }).find("overflows"), std::string::npos);
  EXPECT_NE(message([&] {
              overlap_cycles(kOS, {1, 1}, {1u << 20, huge / 2, 1u << 20});
            }).find("overflows"),
            std::string::npos);
  EXPECT_NE(message([] {
              fold_stats(kWS, {32, 32}, {1u << 30, 1u << 30, 1u << 30});
            }).find("overflows"),
            std::string::npos);
  // The largest exact counts still work.
  EXPECT_EQ(scalesim_cycles(kOS, {1, 1}, {1, std::uint64_t{1} << 62, 1}), (std::uint64_t{1} << 62) - 1);
}

TEST(MatrixEngineParams, ValidateAndPeak) {
  MatrixEngineParams p;
  p.engines = 108;
  p.array = {32, 32};
  p.clock_hz = 1.41e9;
  EXPECT_NO_THROW(validate(p));
  // 2 * 108 * 1024 * 1.41e9 = 311.87 TFLOPS (A100 dense FP16: 312)
  EXPECT_NEAR(peak_flops(p, DataType::FP16) / 1e12, 311.869, 0.01);
  p.rate[static_cast<unsigned>(DataType::FP8_E4M3)] = 2.0;
  EXPECT_NEAR(peak_flops(p, DataType::FP8_E4M3) / 1e12, 623.739, 0.01);

  auto bad = [](MatrixEngineParams q, const char* field) {
    try {
      validate(q);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "no exception for " << field;
  };
  MatrixEngineParams q = p;
  q.engines = 0;
  bad(q, "engines");
  q = p;
  q.engines = 1025;
  bad(q, "engines");
  q = p;
  q.array.rows = 2048;
  bad(q, "array.rows");
  q = p;
  q.array.cols = 0;
  bad(q, "array.cols");
  q = p;
  q.clock_hz = 0.0;
  bad(q, "clock_hz");
  q = p;
  q.rate[4] = 0.0;
  bad(q, "rate[fp32]");
}
