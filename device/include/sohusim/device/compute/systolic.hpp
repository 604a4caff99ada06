#pragma once
// Compute timing of one GEMM on one R x C systolic array, counted in whole folds.
//
// A GEMM multiplies A (M x K) by B (K x N); K is the reduction. A "fold" is one mapping of a
// block of the problem onto the physical array; dimensions that do not divide the array are
// padded (the edge fold still costs a full fold's cycles and issues R x C MACs per step).
//
// Mapping per dataflow (the SCALE-Sim v2 conventions: its "Sr" is mapped on the rows, "Sc"
// on the columns and "T" is streamed):
//
//   dataflow  rows <- | cols <- | streamed (S) | stationary load L | folds
//   WS        K       | N       | M            | R                 | ceil(K/R) * ceil(N/C)
//   OS        M       | N       | K            | 0                 | ceil(M/R) * ceil(N/C)
//   IS        K       | M       | N            | R                 | ceil(K/R) * ceil(M/C)
//
// SCALE-Sim v2 (scalesim/compute/systolic_compute_{ws,os,is}.py): each fold's demand matrix
// is L cycles of stationary-operand load (WS/IS: the R rows of the stationary block are
// shifted in one per cycle; OS keeps outputs in place and has no load phase), S cycles of
// streaming, C - 1 cycles for the last outputs to leave and R - 1 cycles of skew (the
// diagonal wavefront), and folds run back to back. Hence the compute cycles
//
//   WS  ceil(K/R) * ceil(N/C) * (2R + C + M - 2) - 1
//   OS  ceil(M/R) * ceil(N/C) * ( R + C + K - 2) - 1
//   IS  ceil(K/R) * ceil(M/C) * (2R + C + N - 2) - 1
//
// i.e. folds * (L + S + D) - 1 with D = R + C - 2 the fill/drain skew; the final -1 is
// SCALE-Sim's (its cycle count is the index of the last busy cycle). scalesim_cycles()
// reproduces these numbers exactly.
//
// Overlap convention (overlap_cycles()), derived from the same decomposition: a
// double-buffered array shifts the next fold's stationary block into shadow registers while
// the current fold streams, and the next fold's first operands enter right behind the
// current fold's last ones (its wavefront follows the previous one through the array, so the
// skew is paid once). A fold can start only when its stationary block is loaded (L cycles on
// the single load path)
// and the previous fold has issued its S streaming steps. With one set of shadow registers
// the load of fold i+1 starts when fold i starts (its block moves out of the shadow set), so
// fold i+1 starts max(S, L) after fold i: folds 2..F each add max(S, L), and only the first
// fold's load and the last fold's fill/drain are exposed:
//
//   overlap = L + S + D + (F - 1) * max(S, L) - 1
//
// (the -1 kept so that the two conventions count alike). For one fold (F = 1) the two are
// identical: the documented difference is zero. For F folds
//   scalesim - overlap = (F - 1) * (L + S + D - max(S, L)) = (F - 1) * (min(S, L) + D) >= 0,
// so overlap <= scalesim always.
//
// Data-type rate (compute_cycles()): `rate` is MACs per PE per cycle for the element type
// (e.g. 2 for FP8 on an array whose PEs are built for 1 BF16 MAC per cycle). We model a
// faster type as a PE that consumes `rate` streaming operands per cycle (two FP8 values
// packed in the 16-bit datapath), so only the streaming part shrinks:
//   S' = ceil(S / rate).
// The fill/drain skew D and the stationary load L are set by the wires and registers of the
// array, not by the arithmetic, and stay as they are. rate = 1 gives the formulas above
// exactly; rate < 1 (e.g. FP32 at half rate) stretches S. Folds and MAC counts
// (fold_stats()) do not depend on the rate.
//
// Not modelled: operand-delivery stalls (SRAM bandwidth to the array edges), sparsity,
// accumulator precision, the cost of moving results out of the array beyond the drain.
//
// Bad input (a zero dimension, a non-positive rate, a count that overflows 64 bits) throws
// std::invalid_argument naming the field.
#include <cstdint>

#include "sohusim/device/compute/dtype.hpp"

namespace sohusim::device {

struct ArrayShape {
  unsigned rows;
  unsigned cols;
};

/// M x K times K x N; K is the reduction dimension.
struct GemmShape {
  std::uint64_t m, k, n;
};

/// The decomposition both conventions share (see the header comment).
struct FoldGeometry {
  std::uint64_t folds;            // F
  std::uint64_t streaming;        // S: streaming steps per fold (at rate 1)
  std::uint64_t stationary_load;  // L: cycles to load one fold's stationary block
  std::uint64_t fill_drain;       // D = R + C - 2
};
FoldGeometry fold_geometry(Dataflow df, ArrayShape array, GemmShape shape);

/// SCALE-Sim v2's compute cycles, exactly: F * (L + S + D) - 1.
std::uint64_t scalesim_cycles(Dataflow df, ArrayShape array, GemmShape shape);

/// Double-buffered folds: L + S + D + (F - 1) * max(S, L) - 1; never above scalesim_cycles().
std::uint64_t overlap_cycles(Dataflow df, ArrayShape array, GemmShape shape);

/// Either convention with a data-type rate (MACs per PE per cycle, > 0): the streaming part
/// becomes ceil(S / rate). rate == 1 returns scalesim_cycles() / overlap_cycles().
std::uint64_t compute_cycles(FoldModel model, Dataflow df, ArrayShape array, GemmShape shape, double rate = 1.0);

/// Fold count and MAC counts: useful = M * K * N; issued = every PE of the array busy for
/// every streaming step of every fold (edge folds padded to the full array).
struct FoldStats {
  std::uint64_t folds, useful_macs, issued_macs;
};
FoldStats fold_stats(Dataflow df, ArrayShape array, GemmShape shape);

}  // namespace sohusim::device
