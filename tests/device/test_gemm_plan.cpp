// GEMM tiling plan: invariants (coverage, bytes, SRAM fit), skinny shapes, the pipeline
// estimate against hand-computed timelines, plan size, and the A100 calibration table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/device/compute/gemm_plan.hpp"

using namespace sohusim::device;

namespace {

GemmPlanInput small_input() {
  GemmPlanInput in{};
  in.shape = {8, 8, 4};
  in.in_bytes = 1;
  in.out_bytes = 1;
  in.acc_bytes = 4;
  in.engine.engines = 1;
  in.engine.array = {4, 4};
  in.engine.dataflow = Dataflow::OutputStationary;
  in.engine.fold_model = FoldModel::Overlap;
  in.engine.clock_hz = 1.0e9;
  in.dtype = DataType::FP8_E4M3;
  in.sram_bytes = 1 << 20;
  in.hbm_bytes_per_second = 1.0e9;  // 1 byte per ns
  return in;
}

// A sohu-like engine set: 8 engines of 128x128, WS, FP8 at twice the BF16 rate.
GemmPlanInput sohu8_input(GemmShape shape, DataType dt) {
  GemmPlanInput in{};
  in.shape = shape;
  in.in_bytes = bytes_of(dt);
  in.out_bytes = 2;
  in.engine.engines = 8;
  in.engine.array = {128, 128};
  in.engine.dataflow = Dataflow::WeightStationary;
  in.engine.fold_model = FoldModel::Overlap;
  in.engine.clock_hz = 1.5e9;
  in.engine.rate = {2.0, 2.0, 1.0, 1.0, 0.25};
  in.dtype = dt;
  in.sram_bytes = 128ull << 20;
  in.hbm_bytes_per_second = 4.2e12;
  return in;
}

// The sohu preset's GEMM machine: 32 engines of 128x128, WS, 6 HBM3E stacks (6.144 TB/s peak,
// 90 % sustained), 128 MiB of SRAM, 16 vector engines of 256 lanes, 1.5 GHz.
GemmPlanInput sohu32_input(GemmShape shape, DataType dt) {
  GemmPlanInput in = sohu8_input(shape, dt);
  in.out_bytes = bytes_of(dt);
  in.engine.engines = 32;
  in.hbm_bytes_per_second = 6 * 1.024e12 * 0.9;
  in.vector.engines = 16;
  in.vector.lanes = 256;
  in.vector.clock_hz = 1.5e9;
  return in;
}

std::uint64_t cdiv(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

// Checks every invariant of a plan independently of the planner's code.
void check_invariants(const GemmPlan& p, const GemmPlanInput& in) {
  const std::uint64_t M = in.shape.m, K = in.shape.k, N = in.shape.n;
  ASSERT_EQ(p.per_engine.size(), in.engine.engines);
  // SRAM footprint: 2 A + 2 B tiles in the input type, accumulator + staging for C.
  const std::uint64_t need =
      2 * (p.tm * p.tk + p.tk * p.tn) * in.in_bytes + p.tm * p.tn * (in.acc_bytes + in.out_bytes);
  EXPECT_EQ(engine_sram_bytes(p.tm, p.tk, p.tn, in.in_bytes, in.out_bytes, in.acc_bytes), need);
  EXPECT_LE(need, in.sram_bytes / in.engine.engines);
  const std::uint64_t gm = cdiv(M, p.tm), gn = cdiv(N, p.tn), nk = cdiv(K, p.tk);
  const std::uint64_t s = p.split_k;
  ASSERT_GE(s, 1u);
  ASSERT_LE(s, nk);
  // Part j of an output tile's K steps: [j*nk/s, (j+1)*nk/s), in elements.
  const auto part_k0 = [&](std::uint64_t j) { return std::min(K, j * nk / s * p.tk); };
  // Coverage: the K steps of every output element add up to K exactly, each step once.
  std::vector<std::uint64_t> covered(M * N, 0);
  std::uint64_t reads = 0, writes = 0, cycles = 0, useful = 0, tiles = 0, partials = 0;
  for (const auto& list : p.per_engine) {
    bool in_part = false;
    std::uint64_t expect_k0 = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const GemmTile& t = list[i];
      ++tiles;
      ASSERT_GE(t.tm, 1u);
      ASSERT_LE(t.m0 + t.tm, M);
      ASSERT_LE(t.k0 + t.tk, K);
      ASSERT_LE(t.n0 + t.tn, N);
      ASSERT_LE(t.tm, p.tm);
      ASSERT_LE(t.tk, p.tk);
      ASSERT_LE(t.tn, p.tn);
      ASSERT_LT(t.part, s);
      // K innermost, in order, per part of an output tile (the whole of K without split);
      // a part is never cut across engines.
      ASSERT_EQ(t.first_k, !in_part);
      if (t.first_k) expect_k0 = part_k0(t.part);
      ASSERT_EQ(t.k0, expect_k0);
      ASSERT_EQ(t.last_k, t.k0 + t.tk == part_k0(t.part + 1));
      in_part = !t.last_k;
      expect_k0 = t.k0 + t.tk;
      for (std::uint64_t m = t.m0; m < t.m0 + t.tm; ++m)
        for (std::uint64_t n = t.n0; n < t.n0 + t.tn; ++n) covered[m * N + n] += t.tk;
      // Bytes: a block is skipped only if the previous tile on this engine used it.
      const bool same_a = i > 0 && list[i - 1].m0 == t.m0 && list[i - 1].k0 == t.k0;
      const bool same_b = i > 0 && list[i - 1].n0 == t.n0 && list[i - 1].k0 == t.k0;
      ASSERT_EQ(t.a_bytes, same_a ? 0 : t.tm * t.tk * in.in_bytes);
      ASSERT_EQ(t.b_bytes, same_b ? 0 : t.tk * t.tn * in.in_bytes);
      ASSERT_EQ(t.c_bytes, t.last_k && s == 1 ? t.tm * t.tn * in.out_bytes : 0);
      ASSERT_EQ(t.partial_bytes, t.last_k && s > 1 ? t.tm * t.tn * in.acc_bytes : 0);
      reads += t.a_bytes + t.b_bytes;
      writes += t.c_bytes + (p.partials_in_sram ? 0 : t.partial_bytes);
      partials += t.partial_bytes;
      cycles += t.compute_cycles;
      useful += t.tm * t.tk * t.tn;
    }
    ASSERT_FALSE(in_part) << "a part's K loop was cut across engines";
  }
  for (std::uint64_t v : covered) ASSERT_EQ(v, K);
  // Split plans: every output tile reduced once, from its s partials, on a vector engine.
  std::uint64_t reductions = 0;
  if (s == 1) {
    EXPECT_TRUE(p.per_vector_engine.empty());
  } else {
    ASSERT_EQ(p.per_vector_engine.size(), in.vector.engines);
    EXPECT_EQ(partials, M * N * s * in.acc_bytes);
    EXPECT_EQ(p.partials_in_sram,
              M * N * s * in.acc_bytes + in.engine.engines * engine_sram_bytes(p.tm, p.tk, p.tn, in.in_bytes,
                                                                               in.out_bytes, in.acc_bytes) <=
                  in.sram_bytes);
    std::vector<std::uint64_t> reduced(M * N, 0);
    for (const auto& list : p.per_vector_engine)
      for (const GemmReduction& r : list) {
        ++reductions;
        ASSERT_EQ(r.parts, s);
        ASSERT_LE(r.m0 + r.tm, M);
        ASSERT_LE(r.n0 + r.tn, N);
        ASSERT_EQ(r.sram_read_bytes, s * r.tm * r.tn * in.acc_bytes);
        ASSERT_EQ(r.hbm_read_bytes, p.partials_in_sram ? 0 : r.sram_read_bytes);
        ASSERT_EQ(r.c_bytes, r.tm * r.tn * in.out_bytes);
        ASSERT_EQ(r.adds, (s - 1) * r.tm * r.tn);
        ASSERT_EQ(r.cycles, std::max<std::uint64_t>(1, cdiv(s * r.tm * r.tn, in.vector.lanes)));
        reads += r.hbm_read_bytes;
        writes += r.c_bytes;
        for (std::uint64_t m = r.m0; m < r.m0 + r.tm; ++m)
          for (std::uint64_t n = r.n0; n < r.n0 + r.tn; ++n) ++reduced[m * N + n];
      }
    for (std::uint64_t v : reduced) ASSERT_EQ(v, 1u);
    EXPECT_EQ(reductions, gm * gn);
  }
  EXPECT_EQ(p.hbm_read_bytes, reads);
  EXPECT_EQ(p.hbm_write_bytes, writes);
  EXPECT_EQ(p.hbm_write_bytes, M * N * in.out_bytes + (p.partials_in_sram ? 0 : partials));
  EXPECT_EQ(p.compute_cycles, cycles);
  EXPECT_EQ(p.useful_macs, M * K * N);
  EXPECT_EQ(useful, M * K * N);
  EXPECT_GE(p.issued_macs, p.useful_macs);
  EXPECT_EQ(p.tile_count(), tiles);
  EXPECT_EQ(tiles, gm * gn * nk);
  reads -= p.partials_in_sram ? 0 : partials;
  if (nk > 1) {
    // No reuse possible: every K step loads its A and B blocks.
    EXPECT_EQ(reads, (M * gn + N * gm) * K * in.in_bytes);
  } else {
    EXPECT_LE(reads, (M * gn + N * gm) * K * in.in_bytes);
    EXPECT_GE(reads, (M + N) * K * in.in_bytes);
  }
}

}  // namespace

TEST(GemmPlan, HandTimelineOneEngine) {
  // 8x8x4 in 4x4x4 tiles on one 4x4 OS array: 2 output tiles x 2 K steps, m-major.
  // Each tile: 9 cycles (overlap, one fold: S=4, D=6, -1); loads 16+16 B = 32 ns; C 16 ns.
  // Queue: L0 0-32, L1 32-64 | C0 32-41 | L2 64-96 | C1 64-73 | W1 96-112 | L3 112-144 |
  // C2 96-105 | C3 144-153 | W3 153-169.
  const GemmPlanInput in = small_input();
  const GemmPlan p = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor);
  ASSERT_EQ(p.tile_count(), 4u);
  for (const auto& t : p.per_engine[0]) {
    EXPECT_EQ(t.compute_cycles, 9u);
    EXPECT_EQ(t.a_bytes + t.b_bytes, 32u);
  }
  EXPECT_NEAR(estimate_seconds(p, in), 169e-9, 1e-15);
  // The chooser's bound max(l0 + C, L + W - w_last + c_last) + w_last = max(68, 153) + 16.
  EXPECT_NEAR(candidate_seconds(in, 4, 4, 4, TileOrder::MMajor), 169e-9, 1e-15);
  check_invariants(p, in);
}

TEST(GemmPlan, HandTimelineTwoEnginesShareBandwidth) {
  // Same GEMM on two engines, 2 bytes/ns in total -> 1 byte/ns each; each engine runs one
  // output tile (2 K steps): L0 0-32, L1 32-64 | C0 32-41 | C1 64-73 | W1 73-89.
  GemmPlanInput in = small_input();
  in.engine.engines = 2;
  in.sram_bytes = 2 << 20;
  in.hbm_bytes_per_second = 2.0e9;
  const GemmPlan p = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor);
  ASSERT_EQ(p.per_engine[0].size(), 2u);
  ASSERT_EQ(p.per_engine[1].size(), 2u);
  EXPECT_NEAR(estimate_seconds(p, in), 89e-9, 1e-15);
  // Four engines but only two output tiles: the bandwidth is split between the two that work.
  in.engine.engines = 4;
  in.sram_bytes = 4 << 20;
  const GemmPlan p4 = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor);
  EXPECT_TRUE(p4.per_engine[1].empty() || p4.per_engine[0].empty() || p4.per_engine[2].empty());
  EXPECT_NEAR(estimate_seconds(p4, in), 89e-9, 1e-15);
  check_invariants(p4, in);
}

TEST(GemmPlan, HandTimelineReuseAcrossOutputTiles) {
  // 4x4x8, tiles 4x4x4: one K step, two output tiles along N; the second reuses A.
  // L0 (32 B) 0-32, L1 (16 B) 32-48 | C0 32-41 | W0 48-64 | C1 48-57 | W1 64-80.
  GemmPlanInput in = small_input();
  in.shape = {4, 4, 8};
  const GemmPlan p = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor);
  const auto& t = p.per_engine[0];
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].a_bytes, 16u);
  EXPECT_EQ(t[1].a_bytes, 0u);
  EXPECT_EQ(t[1].b_bytes, 16u);
  EXPECT_EQ(p.hbm_read_bytes, 48u);
  EXPECT_NEAR(estimate_seconds(p, in), 80e-9, 1e-15);
  check_invariants(p, in);
}

TEST(GemmPlan, ComputeBoundEstimateIsSumOfComputePlusPrologue) {
  // With a huge bandwidth the estimate tends to the sum of compute times.
  GemmPlanInput in = small_input();
  in.hbm_bytes_per_second = 1.0e18;
  const GemmPlan p = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor);
  EXPECT_NEAR(estimate_seconds(p, in), 36e-9, 1e-12);
}

TEST(GemmPlan, InvariantsAcrossShapesAndDataflows) {
  std::uint64_t seed = 99;
  auto rnd = [&](std::uint64_t mod) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return 1 + (seed >> 33) % mod;
  };
  for (int i = 0; i < 24; ++i) {
    GemmPlanInput in{};
    in.shape = {rnd(300), rnd(300), rnd(300)};
    in.in_bytes = static_cast<unsigned>(rnd(2));
    in.out_bytes = static_cast<unsigned>(rnd(4));
    in.engine.engines = static_cast<unsigned>(rnd(7));
    in.engine.array = {static_cast<unsigned>(8 * rnd(4)), static_cast<unsigned>(8 * rnd(4))};
    in.engine.dataflow = static_cast<Dataflow>(i % 3);
    in.engine.fold_model = i % 2 ? FoldModel::Scalesim : FoldModel::Overlap;
    in.engine.clock_hz = 1e9;
    in.dtype = DataType::BF16;
    in.sram_bytes = in.engine.engines * (64u << 10) * rnd(8);
    in.hbm_bytes_per_second = 1e11 * static_cast<double>(rnd(20));
    const GemmPlan p = plan_gemm(in);
    SCOPED_TRACE("shape " + std::to_string(in.shape.m) + "x" + std::to_string(in.shape.k) + "x" +
                 std::to_string(in.shape.n) + " tiles " + std::to_string(p.tm) + "x" + std::to_string(p.tk) + "x" +
                 std::to_string(p.tn));
    check_invariants(p, in);
    EXPECT_GT(estimate_seconds(p, in), 0.0);
    for (TileOrder o : {TileOrder::MMajor, TileOrder::NMajor}) {
      const GemmPlan q = plan_gemm_tiles(in, p.tm, p.tk, p.tn, o);
      check_invariants(q, in);
    }
  }
}

TEST(GemmPlan, ChoiceIsNearTheBestEstimateOfAGrid) {
  // The chooser ranks candidates with its closed form; the chosen plan's pipeline estimate
  // must be within 5 % of the best estimate over a grid of alternative tilings.
  const GemmShape shapes[] = {{300, 500, 200}, {64, 1024, 768}, {1000, 96, 1000}};
  for (const GemmShape& g : shapes) {
    GemmPlanInput in{};
    in.shape = g;
    in.in_bytes = 2;
    in.out_bytes = 2;
    in.engine.engines = 3;
    in.engine.array = {32, 32};
    in.engine.dataflow = Dataflow::WeightStationary;
    in.engine.clock_hz = 1e9;
    in.dtype = DataType::BF16;
    in.sram_bytes = 3 * (256u << 10);
    in.hbm_bytes_per_second = 64e9;
    const GemmPlan p = plan_gemm(in);
    const double chosen = estimate_seconds(p, in);
    double best = chosen;
    for (std::uint64_t tm = 32; tm < g.m + 32; tm += 32)
      for (std::uint64_t tk = 32; tk < g.k + 32; tk += 64)
        for (std::uint64_t tn = 32; tn < g.n + 32; tn += 32) {
          const std::uint64_t a = std::min(tm, g.m), b = std::min(tk, g.k), c = std::min(tn, g.n);
          if (engine_sram_bytes(a, b, c, 2, 2, 4) > in.sram_bytes / 3) continue;
          for (TileOrder o : {TileOrder::MMajor, TileOrder::NMajor})
            best = std::min(best, estimate_seconds(plan_gemm_tiles(in, a, b, c, o), in));
        }
    EXPECT_LE(chosen, best * 1.05) << g.m << "x" << g.k << "x" << g.n << " chose " << p.tm << "x" << p.tk << "x"
                                   << p.tn;
  }
}

TEST(GemmPlan, SkinnyShapesKeepWholeM) {
  for (std::uint64_t m : {1u, 7u, 16u, 64u}) {
    for (DataType dt : {DataType::FP8_E4M3, DataType::BF16}) {
      const GemmPlanInput in = sohu8_input({m, 8192, 8192}, dt);
      const GemmPlan p = plan_gemm(in);
      EXPECT_EQ(p.tm, m);
      for (const auto& list : p.per_engine)
        for (const auto& t : list) ASSERT_EQ(t.tm, m);
      // Every engine works and B (the weights) is read exactly once; A is small.
      std::uint64_t b_bytes = 0;
      for (const auto& list : p.per_engine) {
        EXPECT_FALSE(list.empty());
        for (const auto& t : list) b_bytes += t.b_bytes;
      }
      EXPECT_EQ(b_bytes, 8192ull * 8192 * bytes_of(dt));
      EXPECT_LE(p.hbm_read_bytes - b_bytes, b_bytes / 10);
      check_invariants(p, in);
    }
  }
}

TEST(GemmPlan, LargeSquarePlanIsSmall) {
  const GemmPlanInput in = sohu8_input({8192, 8192, 8192}, DataType::FP8_E4M3);
  const GemmPlan p = plan_gemm(in);
  EXPECT_LE(p.tile_count(), 4096u);
  const double s = estimate_seconds(p, in);
  // Peak 2*8*128*128*2*1.5e9 = 786 TFLOPS -> 1.40 ms at 100 %.
  const double ideal = 2.0 * 8192.0 * 8192.0 * 8192.0 / peak_flops(in.engine, in.dtype);
  EXPECT_GT(s, ideal);
  EXPECT_LT(s, ideal * 1.15);
  std::printf("8192^3 fp8 on 8x128x128: tiles %llux%llux%llu, %zu tiles, %.3f ms (ideal %.3f)\n",
              static_cast<unsigned long long>(p.tm), static_cast<unsigned long long>(p.tk),
              static_cast<unsigned long long>(p.tn), p.tile_count(), s * 1e3, ideal * 1e3);
}

TEST(GemmPlan, HandTimelineSplitK) {
  // 4x8x4 in 4x4x4 tiles, split in 2 over two engines (1 byte/ns each): one output tile,
  // engine 0 reduces K 0..3, engine 1 K 4..7. Each: L 0-32 (16 + 16 B) | C 32-41 (9 cycles).
  // Partials (2 x 16 x 4 B) fit in SRAM: no HBM write. Reduction on one vector engine of 4
  // lanes at 1 GHz (2 bytes/ns, the only active one): ceil(2 x 16 / 4) = 8 cycles 41-49, then
  // C (16 B) 49-57.
  GemmPlanInput in = small_input();
  in.shape = {4, 8, 4};
  in.engine.engines = 2;
  in.sram_bytes = 2 << 20;
  in.hbm_bytes_per_second = 2.0e9;
  in.vector.engines = 1;
  in.vector.lanes = 4;
  in.vector.clock_hz = 1.0e9;
  const GemmPlan p = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor, 2);
  ASSERT_EQ(p.split_k, 2u);
  EXPECT_TRUE(p.partials_in_sram);
  ASSERT_EQ(p.per_engine[0].size(), 1u);
  ASSERT_EQ(p.per_engine[1].size(), 1u);
  EXPECT_EQ(p.per_engine[1][0].k0, 4u);
  EXPECT_EQ(p.per_engine[0][0].partial_bytes, 64u);
  ASSERT_EQ(p.per_vector_engine.size(), 1u);
  ASSERT_EQ(p.per_vector_engine[0].size(), 1u);
  EXPECT_EQ(p.per_vector_engine[0][0].cycles, 8u);
  EXPECT_EQ(p.hbm_write_bytes, 16u);
  EXPECT_NEAR(estimate_seconds(p, in), 57e-9, 1e-15);
  EXPECT_NEAR(candidate_seconds(in, 4, 4, 4, TileOrder::MMajor, 2), 57e-9, 1e-15);
  check_invariants(p, in);
  // No room for the partials (the two engines' buffers, 144 B each, are the whole SRAM): they
  // go to HBM. Each engine writes 64 B after its compute, 41-105; the reduction loads 128 B
  // (2 B/ns) 105-169, adds 169-177, writes 177-185.
  in.sram_bytes = 288;
  const GemmPlan q = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor, 2);
  EXPECT_FALSE(q.partials_in_sram);
  EXPECT_EQ(q.hbm_write_bytes, 16u + 128u);
  EXPECT_EQ(q.hbm_read_bytes, 64u + 128u);
  EXPECT_NEAR(estimate_seconds(q, in), 185e-9, 1e-15);
  EXPECT_NEAR(candidate_seconds(in, 4, 4, 4, TileOrder::MMajor, 2), 185e-9, 1e-15);
  check_invariants(q, in);
  // Splits outside 1..ceil(K / tk) are refused.
  EXPECT_THROW(plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor, 3), std::invalid_argument);
  EXPECT_THROW(plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor, 0), std::invalid_argument);
}

TEST(GemmPlan, SplitPlansKeepTheInvariants) {
  std::uint64_t seed = 7;
  auto rnd = [&](std::uint64_t mod) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return 1 + (seed >> 33) % mod;
  };
  for (int i = 0; i < 24; ++i) {
    GemmPlanInput in{};
    in.shape = {rnd(100), 64 + rnd(400), rnd(200)};
    in.in_bytes = static_cast<unsigned>(rnd(2));
    in.out_bytes = static_cast<unsigned>(rnd(4));
    in.engine.engines = static_cast<unsigned>(rnd(9));
    in.engine.array = {static_cast<unsigned>(8 * rnd(4)), static_cast<unsigned>(8 * rnd(4))};
    in.engine.dataflow = static_cast<Dataflow>(i % 3);
    in.engine.clock_hz = 1e9;
    in.dtype = DataType::BF16;
    // Sometimes too little SRAM for the partials, so that they spill to HBM.
    in.sram_bytes = in.engine.engines * (i % 2 ? (16u << 10) : (256u << 10));
    in.hbm_bytes_per_second = 1e11 * static_cast<double>(rnd(20));
    in.vector.engines = static_cast<unsigned>(rnd(4));
    in.vector.lanes = 16;
    const std::uint64_t tk = std::min<std::uint64_t>(in.shape.k, 8 * rnd(8));
    const std::uint64_t nk = cdiv(in.shape.k, tk);
    const std::uint64_t tm = std::min<std::uint64_t>(in.shape.m, 8 * rnd(4));
    const std::uint64_t tn = std::min<std::uint64_t>(in.shape.n, 8 * rnd(4));
    if (engine_sram_bytes(tm, tk, tn, in.in_bytes, in.out_bytes, in.acc_bytes) > in.sram_bytes / in.engine.engines)
      continue;
    for (std::uint64_t split : {std::uint64_t{2}, std::uint64_t{3}, nk}) {
      if (split > nk) continue;
      for (TileOrder o : {TileOrder::MMajor, TileOrder::NMajor}) {
        SCOPED_TRACE("case " + std::to_string(i) + " split " + std::to_string(split));
        const GemmPlan p = plan_gemm_tiles(in, tm, tk, tn, o, split);
        check_invariants(p, in);
        EXPECT_GT(estimate_seconds(p, in), 0.0);
      }
    }
    const GemmPlan chosen = plan_gemm(in);
    check_invariants(chosen, in);
  }
}

TEST(GemmPlan, DecodeGemvsSplitKNearTheWeightStreamLimit) {
  // Decode GEMVs on the sohu machine. Limit: the weights (K x N bytes in FP8) stream at most
  // at min(HBM sustained bandwidth, 32 engines x 128 weights/cycle x 1.5 GHz = 6.14 TB/s).
  // Without split, N = 128 keeps one engine busy and N = 1024 eight (column blocks of 128).
  // With split the bound left is the per-tile prologue of a weight-stationary array (each
  // tile pays its first stationary load and its fill/drain, L + D = 382 cycles, systolic.hpp)
  // and the first tile's load before any compute: stated bounds 3x (N = 128: 2 folds per
  // engine) and 2x (N = 1024: 8 folds per engine) of the limit.
  struct Case {
    GemmShape shape;
    double bound;
  };
  for (const Case& c : {Case{{1, 8192, 128}, 3.0}, Case{{1, 4096, 1024}, 2.0}, Case{{1, 8192, 1024}, 2.0}}) {
    GemmPlanInput in = sohu32_input(c.shape, DataType::FP8_E4M3);
    const GemmPlan p = plan_gemm(in);
    const double est = estimate_seconds(p, in);
    in.max_split_k = 1;
    const GemmPlan q = plan_gemm(in);
    const double before = estimate_seconds(q, in);
    in.max_split_k = 32;
    const double weights = static_cast<double>(c.shape.k * c.shape.n);
    const double limit = std::max(weights / in.hbm_bytes_per_second, weights / (32.0 * 128.0 * in.engine.clock_hz));
    std::printf("%llux%llux%llu fp8: split %llu tiles %llux%llux%llu: %.3f us (no split %.3f us, limit %.3f us)\n",
                static_cast<unsigned long long>(c.shape.m), static_cast<unsigned long long>(c.shape.k),
                static_cast<unsigned long long>(c.shape.n), static_cast<unsigned long long>(p.split_k),
                static_cast<unsigned long long>(p.tm), static_cast<unsigned long long>(p.tk),
                static_cast<unsigned long long>(p.tn), est * 1e6, before * 1e6, limit * 1e6);
    EXPECT_GT(p.split_k, 1u);
    EXPECT_TRUE(p.partials_in_sram);
    EXPECT_LE(est, c.bound * limit);
    EXPECT_LT(est, 0.5 * before);
    EXPECT_EQ(q.split_k, 1u);
    // The weights are still read exactly once.
    std::uint64_t b_bytes = 0;
    for (const auto& list : p.per_engine)
      for (const auto& t : list) b_bytes += t.b_bytes;
    EXPECT_EQ(b_bytes, c.shape.k * c.shape.n);
    check_invariants(p, in);
  }
}

TEST(GemmPlan, LargeSquareKeepsNoSplit) {
  // A 4096^3 GEMM has enough output tiles for every engine: splitting would only add partial
  // traffic and a reduction phase. The plan (and so its time) is the one without split.
  for (DataType dt : {DataType::FP8_E4M3, DataType::BF16}) {
    GemmPlanInput in = sohu32_input({4096, 4096, 4096}, dt);
    const GemmPlan p = plan_gemm(in);
    EXPECT_EQ(p.split_k, 1u);
    in.max_split_k = 1;
    const GemmPlan q = plan_gemm(in);
    EXPECT_EQ(p.tm, q.tm);
    EXPECT_EQ(p.tk, q.tk);
    EXPECT_EQ(p.tn, q.tn);
    EXPECT_EQ(p.order, q.order);
    EXPECT_EQ(estimate_seconds(p, in), estimate_seconds(q, in));
    // The same tiles split in 2 cost more: the reduction is in the chooser's bound.
    EXPECT_GT(candidate_seconds(in, p.tm, p.tk, p.tn, p.order, 2), candidate_seconds(in, p.tm, p.tk, p.tn, p.order, 1));
  }
}

TEST(GemmPlan, ReductionCostKeepsSplitOffWhereItDoesNotPay) {
  // The N = 128 GEMV splits 32 ways with the sohu vector engines; make the reduction slow
  // (one lane at 1 MHz: 32 x 128 / 1 cycles = 4 ms) and the chooser no longer splits, make it
  // moderately slow and it splits less.
  GemmPlanInput in = sohu32_input({1, 8192, 128}, DataType::FP8_E4M3);
  const GemmPlan fast = plan_gemm(in);
  EXPECT_EQ(fast.split_k, 32u);
  in.vector.engines = 1;
  in.vector.lanes = 1;
  in.vector.clock_hz = 1.0e6;
  EXPECT_EQ(plan_gemm(in).split_k, 1u);
  in.vector.clock_hz = 1.0e9;  // s x 128 cycles at 1 GHz: a few splits still pay
  const GemmPlan mid = plan_gemm(in);
  EXPECT_GT(mid.split_k, 1u);
  EXPECT_LT(mid.split_k, 32u);
  check_invariants(mid, in);
  // Partials that do not fit in SRAM go to HBM and cost their traffic in the bound.
  GemmPlanInput tight = sohu32_input({64, 8192, 7168}, DataType::FP8_E4M3);
  const GemmPlan roomy = plan_gemm(tight);
  const std::uint64_t s = roomy.split_k;
  ASSERT_GT(s, 1u);
  tight.sram_bytes = tight.engine.engines *
                     engine_sram_bytes(roomy.tm, roomy.tk, roomy.tn, tight.in_bytes, tight.out_bytes, tight.acc_bytes);
  const GemmPlan spilled = plan_gemm_tiles(tight, roomy.tm, roomy.tk, roomy.tn, roomy.order, s);
  EXPECT_FALSE(spilled.partials_in_sram);
  EXPECT_GT(candidate_seconds(tight, roomy.tm, roomy.tk, roomy.tn, roomy.order, s),
            candidate_seconds(sohu32_input({64, 8192, 7168}, DataType::FP8_E4M3), roomy.tm, roomy.tk, roomy.tn,
                              roomy.order, s));
  check_invariants(spilled, tight);
}

TEST(GemmPlan, ValidationErrorsNameTheField) {
  auto msg = [](GemmPlanInput in) {
    try {
      plan_gemm(in);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  GemmPlanInput in = small_input();
  in.shape.k = 0;
  EXPECT_NE(msg(in).find("shape.k"), std::string::npos);
  in = small_input();
  in.in_bytes = 0;
  EXPECT_NE(msg(in).find("in_bytes"), std::string::npos);
  in = small_input();
  in.acc_bytes = 9;
  EXPECT_NE(msg(in).find("acc_bytes"), std::string::npos);
  in = small_input();
  in.hbm_bytes_per_second = 0.0;
  EXPECT_NE(msg(in).find("hbm_bytes_per_second"), std::string::npos);
  in = small_input();
  in.engine.engines = 0;
  EXPECT_NE(msg(in).find("engines"), std::string::npos);
  in = small_input();
  in.sram_bytes = 100;  // one 4x4x4 tile set needs 2*32 + 16*5 = 144 bytes
  EXPECT_NE(msg(in).find("sram_bytes too small"), std::string::npos);
  in = small_input();
  EXPECT_THROW(plan_gemm_tiles(in, 9, 4, 4, TileOrder::MMajor), std::invalid_argument);
  in.sram_bytes = 143;
  EXPECT_THROW(plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor), std::invalid_argument);
  in.sram_bytes = 144;
  EXPECT_NO_THROW(plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor));
  GemmPlan wrong = plan_gemm_tiles(in, 4, 4, 4, TileOrder::MMajor);
  wrong.per_engine.resize(3);
  EXPECT_THROW(estimate_seconds(wrong, in), std::invalid_argument);
}

// Calibration aid for the a100-like preset. LLMCompass (Zhang et al., ISCA 2024) publishes
// measured A100 times for FP16 GEMMs M x 12288 x 12288. Parameters and their reasons:
//  - 108 engines (SMs), 32x32 array at rate 1 for FP16: 2 * 108 * 1024 * 1.41e9 = 311.9
//    TFLOPS, the A100's 312 TFLOPS dense FP16 peak at its 1.41 GHz boost clock;
//  - output-stationary: tensor cores keep the accumulators in registers while K streams;
//  - sustained HBM bandwidth 1.8 TB/s = 88 % of the 2.039 TB/s peak (a DRAM stream reaches
//    85-90 %);
//  - 1.5 MB of SRAM per engine (162 MB in all). One SM owns 192 KB of L1/shared memory and
//    256 KB of registers, and 1/108 of the 40 MB L2 is 370 KB: 818 KB. But a GEMM's
//    concurrent CTAs share their A row panels and B column panels in the L2, so each block
//    fetched from DRAM feeds several SMs. The model's engines have private shares and no
//    sharing, so the share is sized (about twice the physical 818 KB) to give each engine
//    tiles whose private traffic matches the shared traffic. With the physical 818 KB the
//    model is DRAM-bound for large M (MAPE about 17 %).
//  - vector engines as the preset's (108 x 32 lanes at the SM clock): they reduce split-K
//    partials.
// M = 256 was the known misfit without split-K (+36 %: the real kernel serves the 6 MB A
// matrix to all SMs from L2; the model must re-read it from HBM per engine or leave engines
// idle); with split-K (K in 4 parts, tm = M) it is about -5 %, M = 64 about -1 %.
TEST(GemmPlan, A100CalibrationWithin15PercentMape) {
  GemmPlanInput in{};
  in.in_bytes = 2;
  in.out_bytes = 2;
  in.acc_bytes = 4;
  in.engine.engines = 108;
  in.engine.array = {32, 32};
  in.engine.dataflow = Dataflow::OutputStationary;
  in.engine.fold_model = FoldModel::Overlap;
  in.engine.clock_hz = 1.41e9;
  in.engine.rate = {1.0, 1.0, 1.0, 1.0, 0.5};
  in.dtype = DataType::FP16;
  in.sram_bytes = 108ull * 1500000ull;
  in.hbm_bytes_per_second = 1.8e12;
  in.vector.engines = 108;
  in.vector.lanes = 32;
  in.vector.clock_hz = 1.41e9;
  EXPECT_NEAR(peak_flops(in.engine, DataType::FP16), 312e12, 0.5e12);
  const std::uint64_t ms[] = {64, 256, 1024, 4096, 8192, 16384};
  const double measured_ms[] = {0.190, 0.3185, 1.199, 4.4576, 8.6216, 17.03};
  double mape = 0.0;
  std::printf("%6s %18s %8s %10s %10s %8s\n", "M", "tile tm x tk x tn", "tiles", "est ms", "meas ms", "error");
  for (int i = 0; i < 6; ++i) {
    in.shape = {ms[i], 12288, 12288};
    const GemmPlan p = plan_gemm(in);
    const double est = estimate_seconds(p, in) * 1e3;
    const double err = (est - measured_ms[i]) / measured_ms[i];
    mape += std::fabs(err) / 6.0;
    const std::string tile = std::to_string(p.tm) + "x" + std::to_string(p.tk) + "x" + std::to_string(p.tn);
    std::printf("%6llu %18s %8zu %10.4f %10.4f %+7.1f%%\n", static_cast<unsigned long long>(ms[i]), tile.c_str(),
                p.tile_count(), est, measured_ms[i], err * 100.0);
  }
  std::printf("MAPE %.2f %%\n", mape * 100.0);
  EXPECT_LT(mape, 0.15);
}
