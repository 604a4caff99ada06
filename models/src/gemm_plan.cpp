#include "sohusim/models/gemm_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace sohusim::models {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
// Candidates whose times differ by less than this fraction count as equally fast.
constexpr double kTimeTolerance = 0.01;
// Among those, traffic within this fraction of the least counts as equally lean.
constexpr double kTrafficTolerance = 0.05;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("gemm plan: " + what);
}

std::uint64_t mul(std::uint64_t x, std::uint64_t y) {
  if (x != 0 && y > kMax / x) fail("byte or MAC count overflows 64 bits");
  return x * y;
}
std::uint64_t add(std::uint64_t x, std::uint64_t y) {
  if (y > kMax - x) fail("byte or MAC count overflows 64 bits");
  return x + y;
}
std::uint64_t ceil_div(std::uint64_t x, std::uint64_t y) {
  return x / y + (x % y != 0 ? 1 : 0);
}

// Array dimension each GEMM dimension's tile size is a multiple of (systolic.hpp mapping; the
// streamed dimension uses the row count).
struct Granularity {
  std::uint64_t m, k, n;
};
Granularity granularity(const MatrixEngineParams& e) {
  const std::uint64_t r = e.array.rows, c = e.array.cols;
  switch (e.dataflow) {
    case Dataflow::WeightStationary:
      return {r, r, c};
    case Dataflow::OutputStationary:
      return {r, r, c};
    case Dataflow::InputStationary:
      return {c, r, r};
  }
  return {r, r, c};
}

// round_up(ceil(D / p), g) capped at D, for piece counts p of about four per octave.
std::vector<std::uint64_t> candidates(std::uint64_t dim, std::uint64_t g) {
  std::vector<std::uint64_t> out;
  const std::uint64_t max_pieces = ceil_div(dim, g);
  auto push = [&](std::uint64_t p) {
    std::uint64_t t = ceil_div(dim, p);
    t = ceil_div(t, g) * g;
    if (t > dim) t = dim;
    out.push_back(t);
  };
  for (std::uint64_t p = 1; p <= 8 && p <= max_pieces; ++p) push(p);
  for (std::uint64_t base = 8; base < max_pieces; base *= 2) {
    for (std::uint64_t f : {5u, 6u, 7u, 8u}) {
      const std::uint64_t p = base * f / 4;
      if (p <= max_pieces) push(p);
    }
    if (base > kMax / 4) break;
  }
  push(max_pieces);  // the smallest tile: g itself (or D when D < g)
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double rate_of(const GemmPlanInput& in) {
  return in.engine.rate[static_cast<unsigned>(in.dtype)];
}

std::uint64_t tile_cycles(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn) {
  return compute_cycles(in.engine.fold_model, in.engine.dataflow, in.engine.array, GemmShape{tm, tk, tn}, rate_of(in));
}

// One GEMM dimension cut into tiles.
struct Cut {
  std::uint64_t count, size, last;
};
Cut cut(std::uint64_t dim, std::uint64_t t) {
  const std::uint64_t n = ceil_div(dim, t);
  return {n, t, dim - (n - 1) * t};
}

// Engine e's chunk of the output-tile sequence.
std::uint64_t chunk_begin(std::uint64_t e, std::uint64_t tiles, std::uint64_t engines) {
  // floor(e * T / E) without overflow for the sizes we accept (T < 2^40, E <= 1024).
  return static_cast<std::uint64_t>((static_cast<long double>(e) * static_cast<long double>(tiles)) /
                                    static_cast<long double>(engines));
}

std::uint64_t active_engines(std::uint64_t out_tiles, unsigned engines) {
  return out_tiles < engines ? out_tiles : engines;
}

struct Evaluation {
  double seconds;
  std::uint64_t traffic;
  std::uint64_t tiles;
};

// Closed-form per-engine bound (header comment). Categories index [outer_edge][inner_edge].
Evaluation evaluate(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, TileOrder order) {
  const GemmShape& g = in.shape;
  const Cut cm = cut(g.m, tm), ck = cut(g.k, tk), cn = cut(g.n, tn);
  const bool m_outer = order == TileOrder::MMajor;
  const Cut co = m_outer ? cm : cn;
  const Cut ci = m_outer ? cn : cm;
  const std::uint64_t out_tiles = mul(cm.count, cn.count);
  const std::uint64_t engines = in.engine.engines;
  const double bw_e = in.hbm_bytes_per_second / static_cast<double>(active_engines(out_tiles, in.engine.engines));
  const double clk = in.engine.clock_hz;
  const std::uint64_t ib = in.in_bytes;

  // Per-category values of one output tile.
  double cc[2][2], cyc_last[2][2], lb[2][2], wb[2][2], l0[2][2];
  for (int oe = 0; oe < 2; ++oe) {
    for (int ie = 0; ie < 2; ++ie) {
      const std::uint64_t so = oe ? co.last : co.size;
      const std::uint64_t si = ie ? ci.last : ci.size;
      const std::uint64_t a = m_outer ? so : si;  // tm of this category
      const std::uint64_t b = m_outer ? si : so;  // tn of this category
      const double full = static_cast<double>(tile_cycles(in, a, ck.size, b));
      const double last = ck.count > 1 ? static_cast<double>(tile_cycles(in, a, ck.last, b)) : full;
      cc[oe][ie] = static_cast<double>(ck.count - 1) * full + last;
      cyc_last[oe][ie] = last;
      lb[oe][ie] = static_cast<double>(a + b) * static_cast<double>(g.k) * static_cast<double>(ib);
      wb[oe][ie] = static_cast<double>(a) * static_cast<double>(b) * static_cast<double>(in.out_bytes);
      l0[oe][ie] = static_cast<double>(a + b) * static_cast<double>(ck.size) * static_cast<double>(ib);
    }
  }
  const std::uint64_t last_row_start = (co.count - 1) * ci.count;
  auto count_inner_last = [&](std::uint64_t x) { return x / ci.count; };
  double worst = 0.0;
  double traffic = 0.0;
  for (std::uint64_t e = 0; e < engines; ++e) {
    const std::uint64_t s = chunk_begin(e, out_tiles, engines);
    const std::uint64_t t = chunk_begin(e + 1, out_tiles, engines);
    if (t <= s) continue;
    const std::uint64_t n = t - s;
    const std::uint64_t ilast = count_inner_last(t) - count_inner_last(s);
    const std::uint64_t s2 = std::max(s, last_row_start);
    const std::uint64_t olast = t > s2 ? t - s2 : 0;
    const std::uint64_t both = t > s2 ? count_inner_last(t) - count_inner_last(s2) : 0;
    const double cnt[2][2] = {{static_cast<double>(n - olast - ilast + both), static_cast<double>(ilast - both)},
                              {static_cast<double>(olast - both), static_cast<double>(both)}};
    double c_sum = 0.0, w_sum = 0.0, l_sum = 0.0;
    for (int oe = 0; oe < 2; ++oe)
      for (int ie = 0; ie < 2; ++ie) {
        c_sum += cnt[oe][ie] * cc[oe][ie];
        w_sum += cnt[oe][ie] * wb[oe][ie];
        l_sum += cnt[oe][ie] * lb[oe][ie];
      }
    if (ck.count == 1) {
      // Reuse: the outer operand loads once per row run, the inner once per tile (or once in
      // all when there is a single inner block).
      const double kb = static_cast<double>(g.k) * static_cast<double>(ib);
      const std::uint64_t rows = (t - 1) / ci.count - s / ci.count + 1;
      const std::uint64_t last_row_in = (t - 1) >= last_row_start ? 1 : 0;
      const double outer = (static_cast<double>(rows - last_row_in) * static_cast<double>(co.size) +
                            static_cast<double>(last_row_in) * static_cast<double>(co.last)) *
                           kb;
      double inner;
      if (ci.count >= 2)
        inner = (static_cast<double>(n - ilast) * static_cast<double>(ci.size) +
                 static_cast<double>(ilast) * static_cast<double>(ci.last)) *
                kb;
      else
        inner = static_cast<double>(ci.last) * kb;
      l_sum = outer + inner;
    }
    const int fo = (s / ci.count == co.count - 1) ? 1 : 0, fi = (s % ci.count == ci.count - 1) ? 1 : 0;
    const int lo = ((t - 1) / ci.count == co.count - 1) ? 1 : 0, li = ((t - 1) % ci.count == ci.count - 1) ? 1 : 0;
    const double first_load = l0[fo][fi] / bw_e;
    const double c_last = cyc_last[lo][li] / clk;
    const double w_last = wb[lo][li] / bw_e;
    const double te = std::max(first_load + c_sum / clk, (l_sum + w_sum) / bw_e - w_last + c_last) + w_last;
    worst = std::max(worst, te);
    traffic += l_sum + w_sum;
  }
  return {worst, static_cast<std::uint64_t>(traffic), mul(out_tiles, ck.count)};
}

// max(total compute / E', least possible traffic / bw): no engine can beat the average.
double lower_bound_seconds(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn) {
  const GemmShape& g = in.shape;
  const Cut cm = cut(g.m, tm), ck = cut(g.k, tk), cn = cut(g.n, tn);
  const std::uint64_t out_tiles = cm.count * cn.count;
  double cycles = 0.0;
  for (int me = 0; me < 2; ++me)
    for (int ne = 0; ne < 2; ++ne) {
      const double count = static_cast<double>(me ? 1 : cm.count - 1) * static_cast<double>(ne ? 1 : cn.count - 1);
      if (count == 0.0) continue;
      const std::uint64_t a = me ? cm.last : cm.size, b = ne ? cn.last : cn.size;
      double per = static_cast<double>(tile_cycles(in, a, ck.last, b));
      if (ck.count > 1) per += static_cast<double>(ck.count - 1) * static_cast<double>(tile_cycles(in, a, ck.size, b));
      cycles += count * per;
    }
  const double active = static_cast<double>(active_engines(out_tiles, in.engine.engines));
  const double m = static_cast<double>(g.m), k = static_cast<double>(g.k), n = static_cast<double>(g.n);
  const double reads =
      ck.count > 1 ? (m * static_cast<double>(cn.count) + n * static_cast<double>(cm.count)) * k : (m + n) * k;
  const double bytes = reads * in.in_bytes + m * n * in.out_bytes;
  return std::max(cycles / (in.engine.clock_hz * active), bytes / in.hbm_bytes_per_second);
}

void check_tiles(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn) {
  auto range = [](const char* name, std::uint64_t v, std::uint64_t dim) {
    if (v < 1 || v > dim)
      fail(std::string(name) + " must be in 1.." + std::to_string(dim) + " (got " + std::to_string(v) + ")");
  };
  range("tm", tm, in.shape.m);
  range("tk", tk, in.shape.k);
  range("tn", tn, in.shape.n);
  const long double tiles =
      static_cast<long double>(ceil_div(in.shape.m, tm)) * ceil_div(in.shape.n, tn) * ceil_div(in.shape.k, tk);
  if (tiles > static_cast<long double>(kMaxPlanTiles))
    fail("tiles " + std::to_string(tm) + "x" + std::to_string(tk) + "x" + std::to_string(tn) + " make more than " +
         std::to_string(kMaxPlanTiles) + " tiles");
  const std::uint64_t share = in.sram_bytes / in.engine.engines;
  const std::uint64_t need = engine_sram_bytes(tm, tk, tn, in.in_bytes, in.out_bytes, in.acc_bytes);
  if (need > share)
    fail("tiles " + std::to_string(tm) + "x" + std::to_string(tk) + "x" + std::to_string(tn) + " need " +
         std::to_string(need) + " bytes of SRAM per engine, more than the share of " + std::to_string(share));
}

}  // namespace

const char* to_string(TileOrder o) {
  return o == TileOrder::MMajor ? "m-major" : "n-major";
}

std::size_t GemmPlan::tile_count() const {
  std::size_t n = 0;
  for (const auto& v : per_engine) n += v.size();
  return n;
}

void validate(const GemmPlanInput& in) {
  if (in.shape.m == 0) fail("shape.m must be >= 1 (got 0)");
  if (in.shape.k == 0) fail("shape.k must be >= 1 (got 0)");
  if (in.shape.n == 0) fail("shape.n must be >= 1 (got 0)");
  constexpr std::uint64_t kMaxDim = std::uint64_t{1} << 32;
  if (in.shape.m > kMaxDim || in.shape.k > kMaxDim || in.shape.n > kMaxDim) fail("shape dimensions must be <= 2^32");
  auto bytes = [](const char* name, unsigned v) {
    if (v < 1 || v > 8) fail(std::string(name) + " must be in 1..8 (got " + std::to_string(v) + ")");
  };
  bytes("in_bytes", in.in_bytes);
  bytes("out_bytes", in.out_bytes);
  bytes("acc_bytes", in.acc_bytes);
  validate(in.engine);
  if (static_cast<unsigned>(in.dtype) >= kNumDataTypes) fail("dtype must be a valid DataType (0..4)");
  if (in.sram_bytes < in.engine.engines)
    fail("sram_bytes must be >= one byte per engine (got " + std::to_string(in.sram_bytes) + ")");
  if (!(in.hbm_bytes_per_second > 0.0) || !std::isfinite(in.hbm_bytes_per_second))
    fail("hbm_bytes_per_second must be finite and > 0 (got " + std::to_string(in.hbm_bytes_per_second) + ")");
}

std::uint64_t engine_sram_bytes(std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, unsigned in_bytes,
                                unsigned out_bytes, unsigned acc_bytes) {
  const std::uint64_t ab = mul(add(mul(tm, tk), mul(tk, tn)), in_bytes);
  const std::uint64_t c = mul(mul(tm, tn), std::uint64_t{acc_bytes} + out_bytes);
  return add(mul(2, ab), c);
}

double candidate_seconds(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn,
                         TileOrder order) {
  validate(in);
  check_tiles(in, tm, tk, tn);
  return evaluate(in, tm, tk, tn, order).seconds;
}

GemmPlan plan_gemm_tiles(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn,
                         TileOrder order) {
  validate(in);
  check_tiles(in, tm, tk, tn);
  const GemmShape& g = in.shape;
  const Cut cm = cut(g.m, tm), ck = cut(g.k, tk), cn = cut(g.n, tn);
  const bool m_outer = order == TileOrder::MMajor;
  const std::uint64_t out_tiles = mul(cm.count, cn.count);
  mul(out_tiles, ck.count);  // overflow guard for the tile count
  const std::uint64_t engines = in.engine.engines;

  GemmPlan plan;
  plan.tm = tm;
  plan.tk = tk;
  plan.tn = tn;
  plan.order = order;
  plan.per_engine.resize(engines);
  for (std::uint64_t e = 0; e < engines; ++e) {
    const std::uint64_t s = chunk_begin(e, out_tiles, engines);
    const std::uint64_t t = chunk_begin(e + 1, out_tiles, engines);
    auto& tiles = plan.per_engine[e];
    if (t <= s) continue;
    tiles.reserve((t - s) * ck.count);
    bool have_prev = false;
    std::uint64_t prev_m0 = 0, prev_k0 = 0, prev_n0 = 0;
    for (std::uint64_t idx = s; idx < t; ++idx) {
      const std::uint64_t mi = m_outer ? idx / cn.count : idx % cm.count;
      const std::uint64_t ni = m_outer ? idx % cn.count : idx / cm.count;
      const std::uint64_t m0 = mi * tm, n0 = ni * tn;
      const std::uint64_t mt = mi + 1 == cm.count ? cm.last : tm;
      const std::uint64_t nt = ni + 1 == cn.count ? cn.last : tn;
      for (std::uint64_t kj = 0; kj < ck.count; ++kj) {
        GemmTile tile{};
        tile.m0 = m0;
        tile.n0 = n0;
        tile.k0 = kj * tk;
        tile.tm = mt;
        tile.tn = nt;
        tile.tk = kj + 1 == ck.count ? ck.last : tk;
        tile.first_k = kj == 0;
        tile.last_k = kj + 1 == ck.count;
        const bool same_a = have_prev && prev_m0 == tile.m0 && prev_k0 == tile.k0;
        const bool same_b = have_prev && prev_k0 == tile.k0 && prev_n0 == tile.n0;
        tile.a_bytes = same_a ? 0 : mul(mul(tile.tm, tile.tk), in.in_bytes);
        tile.b_bytes = same_b ? 0 : mul(mul(tile.tk, tile.tn), in.in_bytes);
        tile.c_bytes = tile.last_k ? mul(mul(tile.tm, tile.tn), in.out_bytes) : 0;
        tile.compute_cycles = tile_cycles(in, tile.tm, tile.tk, tile.tn);
        const FoldStats fs = fold_stats(in.engine.dataflow, in.engine.array, GemmShape{tile.tm, tile.tk, tile.tn});
        plan.hbm_read_bytes = add(plan.hbm_read_bytes, add(tile.a_bytes, tile.b_bytes));
        plan.hbm_write_bytes = add(plan.hbm_write_bytes, tile.c_bytes);
        plan.compute_cycles = add(plan.compute_cycles, tile.compute_cycles);
        plan.useful_macs = add(plan.useful_macs, fs.useful_macs);
        plan.issued_macs = add(plan.issued_macs, fs.issued_macs);
        tiles.push_back(tile);
        have_prev = true;
        prev_m0 = tile.m0;
        prev_k0 = tile.k0;
        prev_n0 = tile.n0;
      }
    }
  }
  return plan;
}

GemmPlan plan_gemm(const GemmPlanInput& in) {
  validate(in);
  const Granularity gr = granularity(in.engine);
  const auto cms = candidates(in.shape.m, gr.m);
  const auto cks = candidates(in.shape.k, gr.k);
  const auto cns = candidates(in.shape.n, gr.n);
  const std::uint64_t share = in.sram_bytes / in.engine.engines;

  struct Choice {
    Evaluation ev;
    std::uint64_t tm, tk, tn;
    TileOrder order;
  };
  std::vector<Choice> all;
  double best_so_far = std::numeric_limits<double>::infinity();
  bool any_fit = false;
  // Larger tiles first: they tend to be good, which makes the lower-bound prune effective.
  for (auto tm = cms.rbegin(); tm != cms.rend(); ++tm)
    for (auto tn = cns.rbegin(); tn != cns.rend(); ++tn)
      for (auto tk = cks.rbegin(); tk != cks.rend(); ++tk) {
        if (engine_sram_bytes(*tm, *tk, *tn, in.in_bytes, in.out_bytes, in.acc_bytes) > share) continue;
        any_fit = true;
        const std::uint64_t gm = ceil_div(in.shape.m, *tm), gn = ceil_div(in.shape.n, *tn);
        const std::uint64_t nk = ceil_div(in.shape.k, *tk);
        if (static_cast<long double>(gm) * gn * nk > static_cast<long double>(kMaxPlanTiles)) continue;
        // Candidates that cannot come within the tolerance of the best so far are skipped.
        if (lower_bound_seconds(in, *tm, *tk, *tn) > best_so_far * (1.0 + kTimeTolerance)) continue;
        for (TileOrder o : {TileOrder::MMajor, TileOrder::NMajor}) {
          if (o == TileOrder::NMajor && (gm == 1 || gn == 1)) continue;  // same sequence as m-major
          all.push_back(Choice{evaluate(in, *tm, *tk, *tn, o), *tm, *tk, *tn, o});
          best_so_far = std::min(best_so_far, all.back().ev.seconds);
        }
      }
  if (all.empty() && any_fit)
    fail("every tiling that fits the SRAM share needs more than " + std::to_string(kMaxPlanTiles) +
         " tiles; give the engines more SRAM");
  if (all.empty()) {
    const std::uint64_t need =
        engine_sram_bytes(cms.front(), cks.front(), cns.front(), in.in_bytes, in.out_bytes, in.acc_bytes);
    fail("sram_bytes too small: the smallest tiles (" + std::to_string(cms.front()) + "x" +
         std::to_string(cks.front()) + "x" + std::to_string(cns.front()) + ") need " + std::to_string(need) +
         " bytes per engine, the share is " + std::to_string(share));
  }
  double best = all.front().ev.seconds;
  for (const auto& c : all) best = std::min(best, c.ev.seconds);
  auto fast = [&](const Choice& c) { return c.ev.seconds <= best * (1.0 + kTimeTolerance); };
  std::uint64_t least_traffic = kMax;
  for (const auto& c : all)
    if (fast(c)) least_traffic = std::min(least_traffic, c.ev.traffic);
  const auto lean = [&](const Choice& c) {
    return static_cast<double>(c.ev.traffic) <= static_cast<double>(least_traffic) * (1.0 + kTrafficTolerance);
  };
  const Choice* pick = nullptr;
  for (const auto& c : all) {
    if (!fast(c) || !lean(c)) continue;
    // fewest tiles, then least traffic, then larger tiles (negated for a lexicographic min)
    const auto key = [](const Choice& x) {
      return std::array<std::uint64_t, 5>{x.ev.tiles, x.ev.traffic, kMax - x.tm, kMax - x.tn, kMax - x.tk};
    };
    if (pick == nullptr || key(c) < key(*pick)) pick = &c;
  }
  return plan_gemm_tiles(in, pick->tm, pick->tk, pick->tn, pick->order);
}

double estimate_seconds(const GemmPlan& plan, const GemmPlanInput& in) {
  validate(in);
  if (plan.per_engine.size() != in.engine.engines)
    fail("plan has " + std::to_string(plan.per_engine.size()) + " engine lists, the input " +
         std::to_string(in.engine.engines) + " engines");
  std::uint64_t active = 0;
  for (const auto& v : plan.per_engine) active += v.empty() ? 0 : 1;
  if (active == 0) return 0.0;
  const double bw_e = in.hbm_bytes_per_second / static_cast<double>(active);
  const double clk = in.engine.clock_hz;
  double worst = 0.0;
  std::vector<double> load_end;
  for (const auto& tiles : plan.per_engine) {
    const std::size_t n = tiles.size();
    if (n == 0) continue;
    load_end.assign(n, 0.0);
    double queue = 0.0;
    auto load = [&](std::size_t i, double ready) {
      const std::uint64_t bytes = tiles[i].a_bytes + tiles[i].b_bytes;
      if (bytes == 0) {
        load_end[i] = ready;
        return;
      }
      queue = std::max(queue, ready) + static_cast<double>(bytes) / bw_e;
      load_end[i] = queue;
    };
    load(0, 0.0);
    if (n > 1) load(1, 0.0);
    double compute_end = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double start = std::max(load_end[i], compute_end);
      compute_end = start + static_cast<double>(tiles[i].compute_cycles) / clk;
      if (tiles[i].c_bytes > 0) queue = std::max(queue, compute_end) + static_cast<double>(tiles[i].c_bytes) / bw_e;
      if (i + 2 < n) load(i + 2, compute_end);
    }
    worst = std::max(worst, std::max(compute_end, queue));
  }
  return worst;
}

}  // namespace sohusim::models
