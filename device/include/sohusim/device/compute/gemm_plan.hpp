#pragma once
// The GEMM sequencer's plan: how one GEMM (A: M x K, B: K x N, C: M x N) is cut into tiles,
// which engine runs which tile in which order, what each tile loads from and writes to HBM,
// and an analytical estimate of the time the device model should reproduce.
//
// Machine assumed (what the device model executes):
//  - E matrix engines (MatrixEngineParams); the SRAM scratchpad of S bytes is split evenly,
//    floor(S / E) bytes per engine, and engines do not share data through it.
//  - Per engine, SRAM holds two A tiles and two B tiles (double buffering: tile i+1's
//    operands load while tile i computes), the FP32 (acc_bytes) accumulator of the output
//    tile being reduced, and a write-back staging copy of the finished output tile in the
//    output type (out_bytes), so that its write to HBM overlaps the next output tile's first
//    K step instead of stalling it. Footprint (engine_sram_bytes()):
//        2 * (tm*tk + tk*tn) * in_bytes + tm*tn * (acc_bytes + out_bytes)
//    (The brief that specified this unit counted only 2*(A+B) + C(acc); the staging term is
//    added because "C writes overlap" needs somewhere to hold the finished tile.)
//  - HBM with a sustained bandwidth `hbm_bytes_per_second` shared by reads and writes.
//
// Tiling. Output tiles are tm x tn; each is reduced over K in ceil(K/tk) steps, K innermost,
// and every (output tile, K step) pair is one GemmTile, i.e. one engine command. Tile sizes
// are multiples of the array dimension their GEMM dimension maps to (systolic.hpp: WS maps K
// on rows and N on columns, OS M on rows and N on columns, IS K on rows and M on columns;
// the streamed dimension uses a multiple of the row count), capped by the GEMM dimension;
// edge tiles are the remainders. Output tiles are ordered m-major (row of output tiles by
// row) or n-major (TileOrder), and the sequence is cut into E contiguous chunks, engine e
// getting output tiles [floor(e*T/E), floor((e+1)*T/E)) of the T in the sequence:
// contiguous chunks keep an engine on one row (m-major) or column (n-major) of output tiles
// so that when K fits in one step (tk == K) its A (resp. B) block stays in SRAM across
// consecutive tiles. A tile's a_bytes / b_bytes are 0 exactly when the engine's previous
// tile used the same A / B block; c_bytes = tm*tn*out_bytes on the last K step, else 0.
//
// Split-K (split_k = s > 1). The K reduction of every output tile is cut into s parts of
// whole K steps (part j has steps [floor(j*nk/s), floor((j+1)*nk/s)) of the nk = ceil(K/tk);
// s <= nk), and the work units (output tile, part), output-tile major, part inner, are what
// is cut into the E contiguous chunks above, so that the parts of one output tile run on
// different engines (an engine may get two consecutive parts; they stay separate partials).
// Each part is reduced into the engine's FP32 accumulator as usual and, after its last K step
// (last_k), written out as an FP32 partial (partial_bytes = tm*tn*acc_bytes; c_bytes = 0):
//  - into SRAM when all s*M*N*acc_bytes of partials fit in the scratchpad left over by the
//    engines' tile buffers (sram_bytes - E * engine_sram_bytes()): partials_in_sram, no HBM
//    traffic and no time charged to the engine's DMA queue (the SRAM port times the write
//    in the device);
//  - else into an HBM workspace: partial_bytes join the engine's DMA queue like c_bytes.
// Reduction phase: when every matrix engine has finished (a barrier: it is the dependency
// "all partials of an output tile are done", taken for all output tiles at once, so the
// reductions never overlap matrix work), the vector engines reduce. Output tile i (in the
// output-tile order) is one GemmReduction, dealt in contiguous chunks over the V vector
// engines: it reads the s partials (s*tm*tn*acc_bytes: from SRAM, or from HBM when spilled),
// costs ceil(s * tm*tn * cost.alu / lanes) vector cycles ((s - 1) FP32 adds and one
// conversion to the output type per element) and writes tm*tn*out_bytes of output to HBM.
// Each vector engine runs its reductions through the same double-buffered pipeline as a
// matrix engine (below), with bandwidth bw / V' (V' = vector engines with reductions) and
// the vector clock. The SRAM read of the partials is assumed to keep up with the lanes
// (sohu: 16 x 256 lanes x 4 B = 16 KiB/cycle = its 256 banks x 64 B); the device times it.
// Cost of a split: the extra partial traffic, the reduction phase and one more tile per
// output tile; its gain: up to s times more engines busy when there are fewer output tiles
// than engines (decode GEMVs: M = 1..64, N = 128..1024) or an uneven number of them.
// s = 1 is exactly the plan without split.
//
// Tile choice (plan_gemm()). For every candidate (tm, tk, tn, order) that fits the engine's
// SRAM share, with per-dimension candidates round_up(ceil(D / p), g) capped at D for piece
// counts p in {1..8, 10, 12, 14, 16, 20, 24, 28, 32, 40, ...} (about four per octave, so the
// tile grid can match the engine count) - the chooser computes in closed form, for each
// engine, its sums of compute time C_e, load time L_e and write time W_e (bytes at bw / E',
// E' = engines that get tiles), its first tile's load l_0, last tile's compute c_last and
// last write w_last, and bounds the engine's pipeline by
//     T_e = max(l_0 + C_e, L_e + W_e - w_last + c_last) + w_last
// (compute chain and DMA chain; it matches estimate_seconds() closely when one chain
// dominates, and exactly in the hand-checked cases of the tests). The
// candidate's time is max_e T_e, i.e. max(compute, HBM traffic / bandwidth) per engine plus
// the exposed prologue and epilogue. Candidates within 1 % of the best time count as equally
// fast; among those, the ones whose HBM traffic is within 5 % of the least traffic count as
// equally lean (the traffic tie-break: bytes cost energy); among those the one with fewest
// tiles wins (the device simulates every tile), then less traffic, then the larger tm, tn,
// tk, then the smaller split. Tilings with more than kMaxPlanTiles tiles are not considered, and candidates whose
// lower bound max(total compute / E', least possible traffic / bw) already exceeds the best
// time found so far by more than the tolerance are skipped unevaluated (this changes no
// choice). Skinny GEMMs (M <= the row
// granularity, e.g. decode GEMVs with M = 1..64) get tm = M: every candidate caps at M.
// Split candidates: s in {2, 4, 8, 16, 32} with s <= min(nk, max_split_k) and at most
// 16 E work units (out_tiles * s <= 16 E: a split is for GEMMs with few output tiles per
// engine; beyond that the chunks are already balanced within about 6 %). Their bound is the
// same T_e computed per engine from its units (a loop over at most 16 E units instead of the
// closed form; A and B are never reused across K steps when nk > 1), with the partial writes
// counted in W_e when they spill to HBM, plus the reduction phase's exact pipeline time on
// the vector engines; their traffic adds the spilled partials (written and read back); their
// tile count adds one reduction per output tile; their lower bound adds the reduction
// phase's max(cycles / V', traffic / bw).
//
// Estimate (estimate_seconds()): per engine, one in-order DMA queue of bandwidth bw / E'
// (E' = engines with at least one tile) and one compute pipe. With l_i = (a_i + b_i) / bw_e,
// c_i = compute_cycles_i / clock_hz, w_i = c_bytes_i / bw_e:
//   - loads of tiles 0 and 1 are queued at t = 0 (two buffers free);
//   - compute i starts at max(load_end_i, compute_end_{i-1});
//   - when compute i ends, the queue gets write i (if c_bytes_i > 0) and then load i+2 (its
//     buffer is the one tile i just released); each queued transfer starts at
//     max(queue free, compute_end_i) and takes its bytes / bw_e;
//   - a tile with a_i + b_i == 0 needs no transfer: its operands are ready at compute_end_{i-2}
//     (or 0) without using the queue;
//   - engine time = max(last compute end, queue free after the last write).
// The result is the slowest engine's time; a split plan adds its reduction phase (the slowest
// vector engine's time through the same pipeline, loads = spilled partials, writes = output
// tiles). Not modelled: HBM bank/row effects (the
// bandwidth is a sustained figure), bandwidth left idle by engines that finished early,
// command-issue overheads, SRAM port contention, the array-level overlap between
// consecutive tiles (each tile pays its own first load and last drain, systolic.hpp).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/compute/matrix_engine_params.hpp"
#include "sohusim/device/compute/systolic.hpp"
#include "sohusim/device/compute/vector_cost.hpp"

namespace sohusim::device {

enum class TileOrder : std::uint8_t { MMajor = 0, NMajor = 1 };

/// Largest plan accepted (the device simulates every tile; a GemmTile is 88 bytes).
inline constexpr std::uint64_t kMaxPlanTiles = std::uint64_t{1} << 22;
const char* to_string(TileOrder o);

struct GemmPlanInput {
  GemmShape shape{0, 0, 0};  // must be set (validate() rejects zeros)
  unsigned in_bytes = 2;     // bytes per A/B element, 1..8
  unsigned out_bytes = 2;    // bytes per C element written to HBM, 1..8
  unsigned acc_bytes = 4;    // accumulator bytes per C element held in SRAM, 1..8
  MatrixEngineParams engine;
  DataType dtype = DataType::BF16;  // selects engine.rate[dtype]
  std::uint64_t sram_bytes = 0;     // whole scratchpad, split evenly between the engines
  double hbm_bytes_per_second = 0;  // sustained, for choosing tiles and for the estimate
  VectorEngineParams vector;        // the engines that reduce split-K partials
  unsigned max_split_k = 32;        // largest split plan_gemm() considers (1: never split)
};

struct GemmTile {
  std::uint64_t m0, k0, n0, tm, tk, tn;
  /// Bytes to load from HBM before this tile; 0 when the same block is already in SRAM.
  std::uint64_t a_bytes, b_bytes;
  /// Written after the last K step of an output tile, else 0 (always 0 in a split plan).
  std::uint64_t c_bytes;
  /// Split plans: the FP32 partial written after the last K step of a part, else 0.
  std::uint64_t partial_bytes;
  std::uint64_t compute_cycles;
  std::uint32_t part;    // which K part of the output tile (0 without split)
  bool first_k, last_k;  // first / last K step of this tile's part (of K without split)
};

/// Split plans: one output tile's reduction on a vector engine (header comment).
struct GemmReduction {
  std::uint64_t m0, n0, tm, tn;
  std::uint64_t parts;
  std::uint64_t hbm_read_bytes;   // partials read from the HBM workspace (spilled), else 0
  std::uint64_t sram_read_bytes;  // partials read from SRAM (or staged through it when spilled)
  std::uint64_t c_bytes;          // the output tile written to HBM
  std::uint64_t cycles;           // vector-engine cycles
  std::uint64_t adds;             // FP32 additions, (parts - 1) * tm * tn
};

struct GemmPlan {
  std::uint64_t tm = 0, tk = 0, tn = 0;  // nominal tile sizes (edge tiles are smaller)
  TileOrder order = TileOrder::MMajor;
  std::uint64_t split_k = 1;                      // K parts per output tile
  bool partials_in_sram = true;                   // split plans: partials in SRAM (else in an HBM workspace)
  std::vector<std::vector<GemmTile>> per_engine;  // size == engine.engines; may hold empties
  /// Split plans: size == vector.engines (may hold empties); empty without split.
  std::vector<std::vector<GemmReduction>> per_vector_engine;
  std::uint64_t hbm_read_bytes = 0;   // operands, plus spilled partials read back
  std::uint64_t hbm_write_bytes = 0;  // outputs, plus spilled partials
  std::uint64_t compute_cycles = 0;   // sum over all tiles of all engines
  std::uint64_t useful_macs = 0;
  std::uint64_t issued_macs = 0;

  std::size_t tile_count() const;
};

/// Throws std::invalid_argument naming the bad field: shape dims >= 1, in/out/acc bytes 1..8,
/// engine params (validate()), sram_bytes >= 1, hbm bandwidth finite and > 0.
void validate(const GemmPlanInput& in);

/// Per-engine SRAM footprint of a plan with these tile sizes (see the header comment).
std::uint64_t engine_sram_bytes(std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, unsigned in_bytes,
                                unsigned out_bytes, unsigned acc_bytes);

/// The chooser's closed-form time for one candidate (max over engines of T_e above), in
/// seconds; exposed so that tests and tools can compare candidates.
double candidate_seconds(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, TileOrder order,
                         std::uint64_t split_k = 1);

/// Builds the plan for given nominal tile sizes (each in 1..its GEMM dimension) and split
/// (1..ceil(K / tk)). Throws std::invalid_argument if a size or the split is out of range or
/// the footprint exceeds the SRAM share.
GemmPlan plan_gemm_tiles(const GemmPlanInput& in, std::uint64_t tm, std::uint64_t tk, std::uint64_t tn, TileOrder order,
                         std::uint64_t split_k = 1);

/// Chooses the tile sizes and order (header comment) and builds the plan. Throws
/// std::invalid_argument if even the smallest candidate does not fit the SRAM share.
GemmPlan plan_gemm(const GemmPlanInput& in);

/// The analytical double-buffered pipeline estimate (header comment), in seconds.
double estimate_seconds(const GemmPlan& plan, const GemmPlanInput& in);

}  // namespace sohusim::device
