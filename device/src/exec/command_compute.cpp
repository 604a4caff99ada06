// CommandExecutor's compute commands (command_executor.hpp): GEMM, ATTENTION and VECTOR,
// their operand checks, the run of their tiles on the matrix and vector engines, and in
// functional mode the computation of their data.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <cmath>

#include "sohusim/device/compute/gemm_plan.hpp"
#include "sohusim/device/compute/kernels.hpp"
#include "sohusim/device/compute/numerics.hpp"
#include "sohusim/device/compute/systolic.hpp"
#include "sohusim/device/compute/vector_cost.hpp"
#include "sohusim/device/exec/command_executor.hpp"

namespace sohusim::device {

namespace {

/// a * b * c with overflow detection (element counts and byte sizes of operands).
bool mul_ok(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

/// The cycles `issued` MACs take at the array's peak (`rate` MACs per PE per cycle), at most
/// the tile's `compute` cycles.
std::uint64_t mac_cycles(std::uint64_t issued, ArrayShape array, double rate, std::uint64_t compute) {
  const double per_cycle = static_cast<double>(array.rows) * array.cols * rate;
  if (per_cycle <= 0) return 0;
  return std::min(compute, static_cast<std::uint64_t>(std::llround(static_cast<double>(issued) / per_cycle)));
}

}  // namespace

bool CommandExecutor::run_engines(bool matrix, std::vector<std::vector<EngineTile>>& per_engine, DataType dt,
                                  std::uint64_t correlation, const char* tile_name, CommandWork& work) {
  // A tile's operand stream is modelled as one range from its first block; near the end of
  // HBM that range may run past it: slide it back inside (same bytes, same channels spread).
  const std::uint64_t hbm_size = w_.hbm->size();
  for (auto& list : per_engine) {
    for (EngineTile& t : list) {
      if (t.load_bytes <= hbm_size && t.load_address > hbm_size - t.load_bytes)
        t.load_address = hbm_size - t.load_bytes;
      if (t.store_bytes <= hbm_size && t.store_address > hbm_size - t.store_bytes)
        t.store_address = hbm_size - t.store_bytes;
    }
  }
  sc_core::sc_mutex& unit = matrix ? matrix_unit_ : vector_unit_;
  auto& engines = matrix ? me_ : ve_;
  const auto& tracks = matrix ? w_.matrix_tracks : w_.vector_tracks;
  const std::uint64_t period = w_.params->period_ps();
  const sc_core::sc_time asked = sc_core::sc_time_stamp();
  unit.lock();
  const std::uint64_t waited = (sc_core::sc_time_stamp() - asked).value() / period;
  struct Join {
    unsigned running = 0;
    bool ok = true;
    sc_core::sc_event done;
  };
  auto join = std::make_shared<Join>();
  for (unsigned e = 0; e < per_engine.size() && e < engines.size(); ++e) {
    if (per_engine[e].empty()) continue;
    // The command's work, as run_engine_tiles counts it on the engine.
    for (const EngineTile& t : per_engine[e]) {
      (matrix ? work.matrix_flops : work.vector_flops) += t.flops != 0 ? t.flops : 2 * t.useful_macs;
      work.hbm_bytes += t.load_bytes + (t.store_to_sram ? 0 : t.store_bytes);
      work.sram_bytes += t.sram_read_bytes + (t.store_to_sram ? t.store_bytes : 0);
    }
    engines[e]->stall_dependency_cycles.inc(waited);
    ++join->running;
    EngineTrace tr;
    if (w_.trace != nullptr && e < tracks.size()) {
      tr.recorder = w_.trace;
      tr.track = tracks[e];
      tr.tile_name = tile_name;
    }
    sc_core::sc_spawn([this, e, &per_engine, &engines, dt, correlation, period, tr, join] {
      const bool ok = run_engine_tiles(per_engine[e], *w_.hbm, w_.sram, period, dt, *engines[e], tr, correlation);
      if (!ok) join->ok = false;
      if (w_.engine_activity) w_.engine_activity(e, static_cast<std::uint32_t>(per_engine[e].size()), correlation);
      if (--join->running == 0) join->done.notify(sc_core::SC_ZERO_TIME);
    });
  }
  if (join->running > 0) sc_core::wait(join->done);
  unit.unlock();
  return join->ok;
}

bool CommandExecutor::read_tensor(std::uint64_t addr, std::uint64_t count, DataType t, std::vector<float>& out) {
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(count * bytes_of(t)));
  if (!w_.hbm->debug(false, addr, raw.data(), raw.size())) return false;
  out.resize(static_cast<std::size_t>(count));
  decode(t, raw.data(), out.data(), out.size());
  return true;
}

bool CommandExecutor::write_tensor(std::uint64_t addr, const std::vector<float>& v, DataType t) {
  std::vector<std::uint8_t> raw(v.size() * bytes_of(t));
  encode(t, v.data(), raw.data(), v.size());
  return w_.hbm->debug(true, addr, raw.data(), raw.size());
}

Outcome CommandExecutor::exec_gemm(const Sqe& sqe, bool validate_only, CommandWork& work) {
  GemmCmd g{};
  Outcome o = decode(sqe, g);
  if (!o.ok()) return o;
  const unsigned ib = bytes_of(g.in), ob = bytes_of(g.out);
  std::uint64_t mk = 0, kn = 0, mn = 0;
  if (!mul_ok(g.m, g.k, mk) || !mul_ok(g.k, g.n, kn) || !mul_ok(g.m, g.n, mn) || mk > (UINT64_MAX >> 3) ||
      kn > (UINT64_MAX >> 3) || mn > (UINT64_MAX >> 3)) {
    return Outcome::fail(Status::InvalidDimensions, "GEMM: M x K x N overflows 64-bit sizes");
  }
  Operand a, b, c, d;
  const unsigned ctx = sqe.context();
  if (!(o = check_device_range(ctx, Space::Hbm, g.a, mk * ib, false, ib, "GEMM A", a)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, g.b, kn * ib, false, ib, "GEMM B", b)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, g.c, mn * ob, true, ob, "GEMM C", c)).ok()) return o;
  if (g.bias || g.residual) {
    if (!(o = check_device_range(ctx, Space::Hbm, g.d, (g.bias ? g.n : mn) * ob, false, ob, "GEMM D", d)).ok())
      return o;
  }
  if (validate_only) return {};
  const DeviceParams& p = *w_.params;
  GemmPlanInput in;
  in.shape = GemmShape{g.m, g.k, g.n};
  in.in_bytes = ib;
  in.out_bytes = ob;
  in.acc_bytes = 4;
  in.engine = p.matrix;
  if (g.dataflow) in.engine.dataflow = *g.dataflow;
  in.dtype = g.in;
  in.sram_bytes = p.sram_bytes;
  in.hbm_bytes_per_second = p.hbm_peak_bytes_per_s * p.hbm_sustained_fraction;
  in.vector = p.vector;
  const GemmPlan plan = plan_gemm(in);
  // Split-K partials (gemm_plan.hpp): FP32 blocks, partial j of output tile (m0, n0) at
  // (j*M*N + m0*N + n0*tm) * 4 of a workspace (block rows of height tm, blocks in a row one
  // after the other): at the top of SRAM when they fit, else in HBM, where the workspace is
  // modelled inside C's range (timing only: no bytes move; in functional mode the port writes
  // back what is there, and C is computed after the timing).
  const std::uint64_t split = plan.split_k;
  const std::uint64_t acc = in.acc_bytes;
  const std::uint64_t partial_region = split > 1 ? mn * split * acc : 0;
  const std::uint64_t sram_region = plan.partials_in_sram ? p.sram_bytes - partial_region : 0;
  const auto partial_address = [&](std::uint64_t part, std::uint64_t m0, std::uint64_t n0, std::uint64_t tm,
                                   std::uint64_t bytes) {
    const std::uint64_t off = (part * mn + m0 * g.n + n0 * tm) * acc;
    if (plan.partials_in_sram) return sram_region + off;
    const std::uint64_t cb = mn * ob;
    return c.phys + (bytes >= cb ? 0 : std::min(off % cb, cb - bytes));
  };
  // Tiles in HBM: A rows m0.. at columns k0.., B rows k0.. at columns n0.. (row-major);
  // each tile's operand blocks are streamed as one range starting at the block's first
  // element (the interleaved address mapping spreads a 2-D block's rows over the channels
  // much as it spreads a contiguous range).
  std::vector<std::vector<EngineTile>> tiles(plan.per_engine.size());
  const ArrayShape arr = in.engine.array;
  for (std::size_t e = 0; e < plan.per_engine.size(); ++e) {
    tiles[e].reserve(plan.per_engine[e].size());
    for (const GemmTile& t : plan.per_engine[e]) {
      EngineTile et;
      const std::uint64_t a_off = (g.trans_a ? t.k0 * g.m + t.m0 : t.m0 * g.k + t.k0) * ib;
      const std::uint64_t b_off = (g.trans_b ? t.n0 * g.k + t.k0 : t.k0 * g.n + t.n0) * ib;
      et.load_address = t.a_bytes > 0 ? a.phys + a_off : b.phys + b_off;
      et.load_bytes = t.a_bytes + t.b_bytes;
      const FoldStats fs = fold_stats(in.engine.dataflow, arr, GemmShape{t.tm, t.tk, t.tn});
      // SRAM operand reads: the stationary block once per fold, the streamed operand once
      // per fold (what the array consumes).
      const std::uint64_t col_folds = (t.tn + arr.cols - 1) / arr.cols;
      const std::uint64_t row_folds = (t.tm + arr.rows - 1) / arr.rows;
      switch (in.engine.dataflow) {
        case Dataflow::WeightStationary:
          et.sram_read_bytes = (t.tk * t.tn + t.tm * t.tk * col_folds) * ib;
          break;
        case Dataflow::OutputStationary:
          et.sram_read_bytes = (t.tm * t.tk * col_folds + t.tk * t.tn * row_folds) * ib;
          break;
        case Dataflow::InputStationary:
          et.sram_read_bytes = (t.tm * t.tk + t.tk * t.tn * ((t.tm + arr.cols - 1) / arr.cols)) * ib;
          break;
      }
      et.sram_address = (e * (p.sram_bytes / std::max<std::size_t>(1, plan.per_engine.size()))) %
                        std::max<std::uint64_t>(1, p.sram_bytes);
      et.compute_cycles = t.compute_cycles;
      et.useful_macs = fs.useful_macs;
      et.issued_macs = fs.issued_macs;
      et.mac_cycles = mac_cycles(fs.issued_macs, arr, in.engine.rate[static_cast<unsigned>(g.in)], t.compute_cycles);
      if (t.partial_bytes > 0) {
        et.store_address = partial_address(t.part, t.m0, t.n0, t.tm, t.partial_bytes);
        et.store_bytes = t.partial_bytes;
        et.store_to_sram = plan.partials_in_sram;
      }
      if (t.c_bytes > 0) {
        et.store_address = c.phys + (t.m0 * g.n + t.n0) * ob;
        et.store_bytes = t.c_bytes;
        // The epilogue's operand comes with the last K step: a bias row or a residual block.
        if (g.bias) et.load_bytes += t.tn * ob;
        if (g.residual) et.load_bytes += t.tm * t.tn * ob;
      }
      tiles[e].push_back(et);
    }
  }
  if (!run_engines(true, tiles, g.in, sqe.correlation(), "gemm tile", work)) {
    return Outcome::fail(Status::InternalError, "GEMM: an operand stream failed in HBM");
  }
  if (split > 1) {
    // The reduction phase, once every partial is done: one tile per output tile on the vector
    // engines, reading its partials, adding them, writing the output (with the epilogue's
    // bias row or residual block loaded alongside).
    std::vector<std::vector<EngineTile>> reduce(plan.per_vector_engine.size());
    for (std::size_t v = 0; v < plan.per_vector_engine.size(); ++v) {
      const std::uint64_t ve_sram = v * (p.sram_bytes / std::max<std::size_t>(1, plan.per_vector_engine.size()));
      for (const GemmReduction& r : plan.per_vector_engine[v]) {
        EngineTile et;
        const std::uint64_t partials = r.parts * r.tm * r.tn * acc;
        const std::uint64_t first = partial_address(0, r.m0, r.n0, r.tm, partials);
        et.load_bytes = r.hbm_read_bytes;
        et.load_address = first;
        if (g.bias || g.residual) {
          if (et.load_bytes == 0) et.load_address = d.phys + (g.bias ? r.n0 : r.m0 * g.n + r.n0) * ob;
          if (g.bias) et.load_bytes += r.tn * ob;
          if (g.residual) et.load_bytes += r.tm * r.tn * ob;
        }
        et.sram_address = plan.partials_in_sram ? first : ve_sram;
        et.sram_read_bytes = r.sram_read_bytes;
        et.compute_cycles = r.cycles;
        et.flops = r.adds;
        et.store_address = c.phys + (r.m0 * g.n + r.n0) * ob;
        et.store_bytes = r.c_bytes;
        reduce[v].push_back(et);
      }
    }
    if (!run_engines(false, reduce, DataType::FP32, sqe.correlation(), "gemm split-k reduce", work)) {
      return Outcome::fail(Status::InternalError, "GEMM: a split-K partial stream failed");
    }
  }
  if (w_.hbm->holds_data()) {
    std::vector<float> A, B, D, C(static_cast<std::size_t>(mn));
    if (!read_tensor(a.phys, mk, g.in, A) || !read_tensor(b.phys, kn, g.in, B) ||
        ((g.bias || g.residual) && !read_tensor(d.phys, g.bias ? g.n : mn, g.out, D))) {
      return Outcome::fail(Status::InternalError, "GEMM: functional read of operands failed");
    }
    GemmArgs args;
    args.m = g.m;
    args.k = g.k;
    args.n = g.n;
    args.trans_a = g.trans_a;
    args.trans_b = g.trans_b;
    args.act = g.act;
    args.bias = g.bias;
    args.residual = g.residual;
    gemm(args, A.data(), B.data(), g.bias ? D.data() : nullptr, g.residual ? D.data() : nullptr, C.data());
    write_tensor(c.phys, C, g.out);
    functional_ops_.inc();
  }
  return {};
}

Outcome CommandExecutor::exec_attention(const Sqe& sqe, bool validate_only, CommandWork& work) {
  AttentionCmd at{};
  Outcome o = decode(sqe, at);
  if (!o.ok()) return o;
  const unsigned eb = bytes_of(at.dtype);
  const std::uint64_t q_elems = static_cast<std::uint64_t>(at.batch) * at.q_len * at.q_heads * at.head_dim;
  const std::uint64_t kv_elems = static_cast<std::uint64_t>(at.batch) * at.kv_len * at.kv_heads * at.head_dim;
  Operand q, k, v, out;
  const unsigned ctx = sqe.context();
  if (!(o = check_device_range(ctx, Space::Hbm, at.q, q_elems * eb, false, eb, "ATTENTION Q", q)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, at.k, kv_elems * eb, false, eb, "ATTENTION K", k)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, at.v, kv_elems * eb, false, eb, "ATTENTION V", v)).ok()) return o;
  if (!(o = check_device_range(ctx, Space::Hbm, at.o, q_elems * eb, true, eb, "ATTENTION O", out)).ok()) return o;
  if (validate_only) return {};
  const DeviceParams& p = *w_.params;
  const unsigned group = at.q_heads / at.kv_heads;
  const std::uint64_t rows = static_cast<std::uint64_t>(at.q_len) * group;  // queries sharing one KV head
  const double rate = p.matrix.rate[static_cast<unsigned>(at.dtype)];
  const std::uint64_t qk = compute_cycles(p.matrix.fold_model, p.matrix.dataflow, p.matrix.array,
                                          GemmShape{rows, at.head_dim, at.kv_len}, rate);
  const std::uint64_t pv = compute_cycles(p.matrix.fold_model, p.matrix.dataflow, p.matrix.array,
                                          GemmShape{rows, at.kv_len, at.head_dim}, rate);
  const FoldStats f1 = fold_stats(p.matrix.dataflow, p.matrix.array, GemmShape{rows, at.head_dim, at.kv_len});
  const FoldStats f2 = fold_stats(p.matrix.dataflow, p.matrix.array, GemmShape{rows, at.kv_len, at.head_dim});
  // Softmax over the rows x kv_len scores on the vector lanes paired with the engine.
  const VectorWork sm =
      vector_op_cost(p.vector, VectorOp::Softmax, static_cast<std::uint32_t>(std::min<std::uint64_t>(rows, UINT32_MAX)),
                     at.kv_len, DataType::FP32, at.dtype);
  const std::uint64_t head_kv_bytes = static_cast<std::uint64_t>(at.kv_len) * at.head_dim * eb;
  const std::uint64_t head_q_bytes = rows * at.head_dim * eb;
  std::vector<std::vector<EngineTile>> tiles(p.matrix.engines);
  unsigned next = 0;
  for (std::uint32_t bi = 0; bi < at.batch; ++bi) {
    for (std::uint32_t h = 0; h < at.kv_heads; ++h) {
      EngineTile t;
      const std::uint64_t item = static_cast<std::uint64_t>(bi) * at.kv_heads + h;
      // The head's K and V rows are strided in the position-major cache (a batch apart); the
      // tile's traffic is charged as one contiguous stream of the same size, which spreads
      // over the stacks the same way under the interleaving address mapping.
      t.load_address = k.phys + item * head_kv_bytes;
      t.load_bytes = 2 * head_kv_bytes + head_q_bytes;
      t.sram_read_bytes = 2 * head_kv_bytes + head_q_bytes;
      t.compute_cycles = qk + pv + sm.cycles;
      t.useful_macs = f1.useful_macs + f2.useful_macs;
      t.issued_macs = f1.issued_macs + f2.issued_macs;
      t.mac_cycles = mac_cycles(t.issued_macs, p.matrix.array, rate, t.compute_cycles);
      t.flops = 2 * t.useful_macs + sm.flops;
      t.store_address = out.phys + item * head_q_bytes;
      t.store_bytes = head_q_bytes;
      tiles[next].push_back(t);
      next = (next + 1) % p.matrix.engines;
    }
  }
  if (!run_engines(true, tiles, at.dtype, sqe.correlation(), "attention head", work)) {
    return Outcome::fail(Status::InternalError, "ATTENTION: an operand stream failed in HBM");
  }
  if (w_.hbm->holds_data()) {
    std::vector<float> Q, K, V, O(static_cast<std::size_t>(q_elems));
    if (!read_tensor(q.phys, q_elems, at.dtype, Q) || !read_tensor(k.phys, kv_elems, at.dtype, K) ||
        !read_tensor(v.phys, kv_elems, at.dtype, V)) {
      return Outcome::fail(Status::InternalError, "ATTENTION: functional read of operands failed");
    }
    AttentionArgs args;
    args.batch = at.batch;
    args.q_len = at.q_len;
    args.kv_len = at.kv_len;
    args.q_heads = at.q_heads;
    args.kv_heads = at.kv_heads;
    args.head_dim = at.head_dim;
    args.causal = at.causal;
    attention(args, Q.data(), K.data(), V.data(), O.data());
    write_tensor(out.phys, O, at.dtype);
    functional_ops_.inc();
  }
  return {};
}

Outcome CommandExecutor::exec_vector(const Sqe& sqe, bool validate_only, CommandWork& work) {
  VectorCmd vc{};
  Outcome o = decode(sqe, vc);
  if (!o.ok()) return o;
  const unsigned ib = bytes_of(vc.in), ob = bytes_of(vc.out_type);
  const std::uint32_t out_cols = vector_op_out_cols(vc.op, vc.cols);
  const std::uint64_t in_elems = static_cast<std::uint64_t>(vc.rows) * vc.cols;
  const std::uint64_t out_elems = static_cast<std::uint64_t>(vc.rows) * out_cols;
  std::uint64_t y_elems = 0;
  switch (vc.op) {
    case VectorOp::RmsNorm:
      y_elems = vc.cols;
      break;
    case VectorOp::LayerNorm:
      y_elems = 2ULL * vc.cols;
      break;
    case VectorOp::Add:
      y_elems = in_elems;
      break;
    default:
      break;
  }
  Operand x, y, out;
  const unsigned ctx = sqe.context();
  if (!(o = check_device_range(ctx, Space::Hbm, vc.x, in_elems * ib, false, ib, "VECTOR X", x)).ok()) return o;
  if (y_elems > 0 && !(o = check_device_range(ctx, Space::Hbm, vc.y, y_elems * ib, false, ib, "VECTOR Y", y)).ok())
    return o;
  if (!(o = check_device_range(ctx, Space::Hbm, vc.out, out_elems * ob, true, ob, "VECTOR OUT", out)).ok()) return o;
  if (validate_only) return {};
  const DeviceParams& p = *w_.params;
  const VectorWork cost = vector_op_cost(p.vector, vc.op, vc.rows, vc.cols, vc.in, vc.out_type);
  // Rows in tiles of at most 64 KiB of input, dealt over the vector engines.
  const std::uint64_t row_bytes = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(vc.cols) * ib);
  const std::uint64_t rows_per_tile = std::max<std::uint64_t>(1, (64ULL << 10) / row_bytes);
  std::vector<std::vector<EngineTile>> tiles(p.vector.engines);
  unsigned next = 0;
  for (std::uint64_t r0 = 0; r0 < vc.rows; r0 += rows_per_tile) {
    const std::uint64_t n = std::min<std::uint64_t>(rows_per_tile, vc.rows - r0);
    EngineTile t;
    t.load_address = x.phys + r0 * vc.cols * ib;
    t.load_bytes = n * vc.cols * ib + (vc.op == VectorOp::Add ? n * vc.cols * ib : 0);
    t.compute_cycles = std::max<std::uint64_t>(1, cost.cycles * n / vc.rows);
    t.flops = cost.flops * n / vc.rows;
    t.store_address = out.phys + r0 * out_cols * ob;
    t.store_bytes = n * out_cols * ob;
    tiles[next].push_back(t);
    next = (next + 1) % p.vector.engines;
  }
  if (!run_engines(false, tiles, vc.in, sqe.correlation(), to_string(vc.op), work)) {
    return Outcome::fail(Status::InternalError, "VECTOR: an operand stream failed in HBM");
  }
  if (w_.hbm->holds_data()) {
    std::vector<float> X, Y, OUT(static_cast<std::size_t>(out_elems));
    if (!read_tensor(x.phys, in_elems, vc.in, X) || (y_elems > 0 && !read_tensor(y.phys, y_elems, vc.in, Y))) {
      return Outcome::fail(Status::InternalError, "VECTOR: functional read of operands failed");
    }
    vector_op(vc.op, vc.rows, vc.cols, X.data(), y_elems > 0 ? Y.data() : nullptr, OUT.data(), vc.scalar, vc.aux,
              vc.aux2, vc.group);
    write_tensor(out.phys, OUT, vc.out_type);
    functional_ops_.inc();
  }
  return {};
}

}  // namespace sohusim::device
