#include "sohusim/device/compute/gemm_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

namespace sohusim::device {
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

// Split candidates besides 1 (header comment).
constexpr std::uint64_t kSplits[] = {2, 4, 8, 16, 32};
// A split is considered only up to this many work units per engine.
constexpr std::uint64_t kMaxUnitsPerEngine = 16;

// First K step of part j of s over nk steps (part j: [part_begin(j), part_begin(j + 1))).
std::uint64_t part_begin(std::uint64_t j, std::uint64_t nk, std::uint64_t s) {
  return j * nk / s;  // j <= s <= nk <= 2^32: no overflow
}

// Output tile idx of the order's sequence -> its (row, column) block.
struct TileIndex {
  std::uint64_t mi, ni;
};
TileIndex tile_index(std::uint64_t idx, const Cut& cm, const Cut& cn, TileOrder order) {
  if (order == TileOrder::MMajor) return {idx / cn.count, idx % cn.count};
  return {idx % cm.count, idx / cm.count};
}

// True when the s partials of every output element fit in the SRAM the engines' tile buffers
// leave free (header comment); always true without split.
bool partials_fit(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, std::uint64_t s) {
  if (s <= 1) return true;
  const long double need = static_cast<long double>(in.shape.m) * static_cast<long double>(in.shape.n) *
                           static_cast<long double>(s) * in.acc_bytes;
  const long double buffers = static_cast<long double>(in.engine.engines) *
                              engine_sram_bytes(tm, tk, tn, in.in_bytes, in.out_bytes, in.acc_bytes);
  return need + buffers <= static_cast<long double>(in.sram_bytes);
}

// Vector cycles to reduce `parts` partials of tm x tn: (parts - 1) adds and one conversion per
// element on `lanes` lanes.
std::uint64_t reduction_cycles(const GemmPlanInput& in, std::uint64_t parts, std::uint64_t tm, std::uint64_t tn) {
  const double ops =
      static_cast<double>(parts) * static_cast<double>(tm) * static_cast<double>(tn) * in.vector.cost.alu;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(ops / in.vector.lanes)));
}

// The reductions of a split plan, dealt in contiguous chunks over the vector engines.
std::vector<std::vector<GemmReduction>> build_reductions(const GemmPlanInput& in, const Cut& cm, const Cut& cn,
                                                         TileOrder order, std::uint64_t s, bool in_sram) {
  const std::uint64_t v = in.vector.engines;
  const std::uint64_t out_tiles = mul(cm.count, cn.count);
  std::vector<std::vector<GemmReduction>> out(v);
  for (std::uint64_t e = 0; e < v; ++e) {
    const std::uint64_t b = chunk_begin(e, out_tiles, v), t = chunk_begin(e + 1, out_tiles, v);
    for (std::uint64_t idx = b; idx < t; ++idx) {
      const TileIndex ti = tile_index(idx, cm, cn, order);
      GemmReduction r{};
      r.m0 = ti.mi * cm.size;
      r.n0 = ti.ni * cn.size;
      r.tm = ti.mi + 1 == cm.count ? cm.last : cm.size;
      r.tn = ti.ni + 1 == cn.count ? cn.last : cn.size;
      r.parts = s;
      const std::uint64_t partials = mul(mul(mul(r.tm, r.tn), s), in.acc_bytes);
      r.hbm_read_bytes = in_sram ? 0 : partials;
      r.sram_read_bytes = partials;
      r.c_bytes = mul(mul(r.tm, r.tn), in.out_bytes);
      r.cycles = reduction_cycles(in, s, r.tm, r.tn);
      r.adds = mul(mul(r.tm, r.tn), s - 1);
      out[e].push_back(r);
    }
  }
  return out;
}

// The estimate's pipeline (header comment) for one engine's n tiles: load(i) bytes before
// tile i, seconds(i) of compute, write(i) bytes after it; bw_e the engine's bandwidth.
template <typename Load, typename Seconds, typename Write>
double pipeline_seconds(std::size_t n, double bw_e, Load load_bytes, Seconds compute_seconds, Write write_bytes,
                        std::vector<double>& load_end) {
  if (n == 0) return 0.0;
  load_end.assign(n, 0.0);
  double queue = 0.0;
  auto load = [&](std::size_t i, double ready) {
    const std::uint64_t bytes = load_bytes(i);
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
    compute_end = start + compute_seconds(i);
    const std::uint64_t w = write_bytes(i);
    if (w > 0) queue = std::max(queue, compute_end) + static_cast<double>(w) / bw_e;
    if (i + 2 < n) load(i + 2, compute_end);
  }
  return std::max(compute_end, queue);
}

// The reduction phase: the slowest vector engine through the pipeline.
double reduction_seconds(const GemmPlanInput& in, const std::vector<std::vector<GemmReduction>>& per_ve) {
  std::uint64_t active = 0;
  for (const auto& v : per_ve) active += v.empty() ? 0 : 1;
  if (active == 0) return 0.0;
  const double bw_v = in.hbm_bytes_per_second / static_cast<double>(active);
  const double clk = in.vector.clock_hz;
  double worst = 0.0;
  std::vector<double> scratch;
  for (const auto& list : per_ve) {
    worst = std::max(worst, pipeline_seconds(
                                list.size(), bw_v, [&](std::size_t i) { return list[i].hbm_read_bytes; },
                                [&](std::size_t i) { return static_cast<double>(list[i].cycles) / clk; },
                                [&](std::size_t i) { return list[i].c_bytes; }, scratch));
  }
  return worst;
}

std::uint64_t reduction_traffic(const std::vector<std::vector<GemmReduction>>& per_ve) {
  std::uint64_t t = 0;
  for (const auto& list : per_ve)
    for (const auto& r : list) t += r.hbm_read_bytes + r.c_bytes;
  return t;
}

// The chooser's bound for a split candidate (s > 1): T_e per engine from its units, plus the
// reduction phase (header comment).
Evaluation evaluate_split(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn,
                          TileOrder order, std::uint64_t s) {
  const GemmShape& g = in.shape;
  const Cut cm = cut(g.m, tm), ck = cut(g.k, tk), cn = cut(g.n, tn);
  const std::uint64_t out_tiles = mul(cm.count, cn.count);
  const std::uint64_t units = mul(out_tiles, s);
  const std::uint64_t engines = in.engine.engines;
  const double bw_e = in.hbm_bytes_per_second / static_cast<double>(active_engines(units, in.engine.engines));
  const double clk = in.engine.clock_hz;
  const double ib = in.in_bytes;
  const bool in_sram = partials_fit(in, tm, tk, tn, s);
  // Compute cycles of a full and of the last K step, per [m edge][n edge].
  double full[2][2], last[2][2];
  for (int me = 0; me < 2; ++me)
    for (int ne = 0; ne < 2; ++ne) {
      const std::uint64_t a = me ? cm.last : cm.size, b = ne ? cn.last : cn.size;
      full[me][ne] = static_cast<double>(tile_cycles(in, a, ck.size, b));
      last[me][ne] = static_cast<double>(tile_cycles(in, a, ck.last, b));
    }
  double worst = 0.0, traffic = 0.0;
  for (std::uint64_t e = 0; e < engines; ++e) {
    const std::uint64_t ub = chunk_begin(e, units, engines), ue = chunk_begin(e + 1, units, engines);
    if (ue <= ub) continue;
    double c_sum = 0.0, l_sum = 0.0, w_sum = 0.0, first_load = 0.0, c_last = 0.0, w_last = 0.0;
    for (std::uint64_t u = ub; u < ue; ++u) {
      const TileIndex ti = tile_index(u / s, cm, cn, order);
      const std::uint64_t j = u % s;
      const int me = ti.mi + 1 == cm.count ? 1 : 0, ne = ti.ni + 1 == cn.count ? 1 : 0;
      const double a = static_cast<double>(me ? cm.last : cm.size), b = static_cast<double>(ne ? cn.last : cn.size);
      const std::uint64_t kb = part_begin(j, ck.count, s), ke = part_begin(j + 1, ck.count, s);
      const bool has_last = ke == ck.count;
      const double steps = static_cast<double>(ke - kb);
      const double k_len = static_cast<double>(ke - kb) * static_cast<double>(ck.size) -
                           (has_last ? static_cast<double>(ck.size - ck.last) : 0.0);
      c_sum += (steps - (has_last ? 1.0 : 0.0)) * full[me][ne] + (has_last ? last[me][ne] : 0.0);
      l_sum += (a + b) * k_len * ib;
      const double w = in_sram ? 0.0 : a * b * in.acc_bytes;
      w_sum += w;
      if (u == ub) {
        const double k_first = kb + 1 == ck.count ? static_cast<double>(ck.last) : static_cast<double>(ck.size);
        first_load = (a + b) * k_first * ib;
      }
      if (u + 1 == ue) {
        c_last = has_last ? last[me][ne] : full[me][ne];
        w_last = w;
      }
    }
    const double te =
        std::max(first_load / bw_e + c_sum / clk, (l_sum + w_sum - w_last) / bw_e + c_last / clk) + w_last / bw_e;
    worst = std::max(worst, te);
    traffic += l_sum + w_sum;
  }
  const auto red = build_reductions(in, cm, cn, order, s, in_sram);
  return {worst + reduction_seconds(in, red), static_cast<std::uint64_t>(traffic) + reduction_traffic(red),
          add(mul(out_tiles, ck.count), out_tiles)};
}

// Closed-form per-engine bound (header comment). Categories index [outer_edge][inner_edge].
Evaluation evaluate(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, TileOrder order,
                    std::uint64_t split) {
  if (split > 1) return evaluate_split(in, tm, tk, tn, order, split);
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
double lower_bound_seconds(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn,
                           std::uint64_t split) {
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
  const double m = static_cast<double>(g.m), k = static_cast<double>(g.k), n = static_cast<double>(g.n);
  const double reads =
      ck.count > 1 ? (m * static_cast<double>(cn.count) + n * static_cast<double>(cm.count)) * k : (m + n) * k;
  if (split <= 1) {
    const double active = static_cast<double>(active_engines(out_tiles, in.engine.engines));
    const double bytes = reads * in.in_bytes + m * n * in.out_bytes;
    return std::max(cycles / (in.engine.clock_hz * active), bytes / in.hbm_bytes_per_second);
  }
  // Matrix phase (partials written to HBM when they spill), then the reduction phase.
  const double active = static_cast<double>(active_engines(out_tiles * split, in.engine.engines));
  const double partials = partials_fit(in, tm, tk, tn, split) ? 0.0 : m * n * static_cast<double>(split) * in.acc_bytes;
  const double matrix =
      std::max(cycles / (in.engine.clock_hz * active), (reads * in.in_bytes + partials) / in.hbm_bytes_per_second);
  const double v_active = static_cast<double>(std::min<std::uint64_t>(out_tiles, in.vector.engines));
  const double ops = m * n * static_cast<double>(split) * in.vector.cost.alu;
  const double reduce = std::max(ops / (in.vector.lanes * in.vector.clock_hz * v_active),
                                 (partials + m * n * in.out_bytes) / in.hbm_bytes_per_second);
  return matrix + reduce;
}

void check_tiles(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, std::uint64_t split) {
  auto range = [](const char* name, std::uint64_t v, std::uint64_t dim) {
    if (v < 1 || v > dim)
      fail(std::string(name) + " must be in 1.." + std::to_string(dim) + " (got " + std::to_string(v) + ")");
  };
  range("tm", tm, in.shape.m);
  range("tk", tk, in.shape.k);
  range("tn", tn, in.shape.n);
  range("split_k", split, ceil_div(in.shape.k, tk));
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
  validate(in.vector);
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

double candidate_seconds(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, TileOrder order,
                         std::uint64_t split_k) {
  validate(in);
  check_tiles(in, tm, tk, tn, split_k);
  return evaluate(in, tm, tk, tn, order, split_k).seconds;
}

GemmPlan plan_gemm_tiles(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, TileOrder order,
                         std::uint64_t split_k) {
  validate(in);
  check_tiles(in, tm, tk, tn, split_k);
  const GemmShape& g = in.shape;
  const Cut cm = cut(g.m, tm), ck = cut(g.k, tk), cn = cut(g.n, tn);
  const std::uint64_t out_tiles = mul(cm.count, cn.count);
  mul(out_tiles, ck.count);  // overflow guard for the tile count
  const std::uint64_t engines = in.engine.engines;
  const std::uint64_t s = split_k;
  const std::uint64_t units = mul(out_tiles, s);

  GemmPlan plan;
  plan.tm = tm;
  plan.tk = tk;
  plan.tn = tn;
  plan.order = order;
  plan.split_k = s;
  plan.partials_in_sram = partials_fit(in, tm, tk, tn, s);
  plan.per_engine.resize(engines);
  for (std::uint64_t e = 0; e < engines; ++e) {
    const std::uint64_t ub = chunk_begin(e, units, engines);
    const std::uint64_t ue = chunk_begin(e + 1, units, engines);
    auto& tiles = plan.per_engine[e];
    if (ue <= ub) continue;
    bool have_prev = false;
    std::uint64_t prev_m0 = 0, prev_k0 = 0, prev_n0 = 0;
    for (std::uint64_t u = ub; u < ue; ++u) {
      const TileIndex ti = tile_index(u / s, cm, cn, order);
      const std::uint64_t j = u % s;
      const std::uint64_t m0 = ti.mi * tm, n0 = ti.ni * tn;
      const std::uint64_t mt = ti.mi + 1 == cm.count ? cm.last : tm;
      const std::uint64_t nt = ti.ni + 1 == cn.count ? cn.last : tn;
      const std::uint64_t kb = part_begin(j, ck.count, s), ke = part_begin(j + 1, ck.count, s);
      for (std::uint64_t kj = kb; kj < ke; ++kj) {
        GemmTile tile{};
        tile.m0 = m0;
        tile.n0 = n0;
        tile.k0 = kj * tk;
        tile.tm = mt;
        tile.tn = nt;
        tile.tk = kj + 1 == ck.count ? ck.last : tk;
        tile.part = static_cast<std::uint32_t>(j);
        tile.first_k = kj == kb;
        tile.last_k = kj + 1 == ke;
        const bool same_a = have_prev && prev_m0 == tile.m0 && prev_k0 == tile.k0;
        const bool same_b = have_prev && prev_k0 == tile.k0 && prev_n0 == tile.n0;
        tile.a_bytes = same_a ? 0 : mul(mul(tile.tm, tile.tk), in.in_bytes);
        tile.b_bytes = same_b ? 0 : mul(mul(tile.tk, tile.tn), in.in_bytes);
        tile.c_bytes = tile.last_k && s == 1 ? mul(mul(tile.tm, tile.tn), in.out_bytes) : 0;
        tile.partial_bytes = tile.last_k && s > 1 ? mul(mul(tile.tm, tile.tn), in.acc_bytes) : 0;
        tile.compute_cycles = tile_cycles(in, tile.tm, tile.tk, tile.tn);
        const FoldStats fs = fold_stats(in.engine.dataflow, in.engine.array, GemmShape{tile.tm, tile.tk, tile.tn});
        plan.hbm_read_bytes = add(plan.hbm_read_bytes, add(tile.a_bytes, tile.b_bytes));
        plan.hbm_write_bytes = add(plan.hbm_write_bytes, tile.c_bytes);
        if (!plan.partials_in_sram) plan.hbm_write_bytes = add(plan.hbm_write_bytes, tile.partial_bytes);
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
  if (s > 1) {
    plan.per_vector_engine = build_reductions(in, cm, cn, order, s, plan.partials_in_sram);
    for (const auto& list : plan.per_vector_engine)
      for (const auto& r : list) {
        plan.hbm_read_bytes = add(plan.hbm_read_bytes, r.hbm_read_bytes);
        plan.hbm_write_bytes = add(plan.hbm_write_bytes, r.c_bytes);
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
    std::uint64_t split;
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
        const long double units_cap = static_cast<long double>(kMaxUnitsPerEngine) * in.engine.engines;
        for (std::size_t si = 0; si <= std::size(kSplits); ++si) {
          const std::uint64_t split = si == 0 ? 1 : kSplits[si - 1];
          if (split > 1 &&
              (split > nk || split > in.max_split_k || static_cast<long double>(gm) * gn * split > units_cap))
            continue;
          // Candidates that cannot come within the tolerance of the best so far are skipped.
          if (lower_bound_seconds(in, *tm, *tk, *tn, split) > best_so_far * (1.0 + kTimeTolerance)) continue;
          for (TileOrder o : {TileOrder::MMajor, TileOrder::NMajor}) {
            if (o == TileOrder::NMajor && (gm == 1 || gn == 1)) continue;  // same sequence as m-major
            all.push_back(Choice{evaluate(in, *tm, *tk, *tn, o, split), *tm, *tk, *tn, o, split});
            best_so_far = std::min(best_so_far, all.back().ev.seconds);
          }
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
    // fewest tiles, then least traffic, then larger tiles (negated for a lexicographic min),
    // then the smaller split
    const auto key = [](const Choice& x) {
      return std::array<std::uint64_t, 6>{x.ev.tiles, x.ev.traffic, kMax - x.tm, kMax - x.tn, kMax - x.tk, x.split};
    };
    if (pick == nullptr || key(c) < key(*pick)) pick = &c;
  }
  return plan_gemm_tiles(in, pick->tm, pick->tk, pick->tn, pick->order, pick->split);
}

double estimate_seconds(const GemmPlan& plan, const GemmPlanInput& in) {
  validate(in);
  if (plan.per_engine.size() != in.engine.engines)
    fail("plan has " + std::to_string(plan.per_engine.size()) + " engine lists, the input " +
         std::to_string(in.engine.engines) + " engines");
  if (plan.split_k > 1 && plan.per_vector_engine.size() != in.vector.engines)
    fail("plan has " + std::to_string(plan.per_vector_engine.size()) + " vector engine lists, the input " +
         std::to_string(in.vector.engines) + " vector engines");
  std::uint64_t active = 0;
  for (const auto& v : plan.per_engine) active += v.empty() ? 0 : 1;
  if (active == 0) return 0.0;
  const double bw_e = in.hbm_bytes_per_second / static_cast<double>(active);
  const double clk = in.engine.clock_hz;
  const bool spilled = !plan.partials_in_sram;
  double worst = 0.0;
  std::vector<double> scratch;
  for (const auto& tiles : plan.per_engine) {
    worst = std::max(
        worst, pipeline_seconds(
                   tiles.size(), bw_e, [&](std::size_t i) { return tiles[i].a_bytes + tiles[i].b_bytes; },
                   [&](std::size_t i) { return static_cast<double>(tiles[i].compute_cycles) / clk; },
                   [&](std::size_t i) { return tiles[i].c_bytes + (spilled ? tiles[i].partial_bytes : 0); }, scratch));
  }
  if (plan.split_k > 1) worst += reduction_seconds(in, plan.per_vector_engine);
  return worst;
}

}  // namespace sohusim::device
