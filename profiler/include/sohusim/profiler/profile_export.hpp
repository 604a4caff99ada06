#pragma once
// Exports of an analysed run for other tools: the op dependency graph as Graphviz DOT and
// the per-op metrics as CSV.
//
// DOT (`dot -Tsvg graph.dot > graph.svg`): a node per op labelled with its name, duration
// and verdict, filled with the verdict's colour (the HTML report's palette); an edge per
// dependency. The critical path's nodes and the edges between consecutive critical ops are
// red with penwidth 3; when the critical path steps to the previous op on the same place
// rather than along a dependency, that step is a dashed red edge. A gap on the critical path
// labels its edge. Big graphs stay renderable in seconds: above `max_nodes` ops the ops are
// collapsed by name pattern across layers (digit runs -> "*": "decode.L*.mlp.down_proj"),
// one node per pattern with its count and total time; if that is still above `max_nodes`,
// the patterns holding most time (critical ones first) are kept and the graph's label says
// how many were left out. Output is deterministic.
//
// CSV (RFC 4180, comma-separated, "\n" line ends, text quoted when it holds , " or a line
// break), one header line then one row per op in RunProfile::ops order:
//   id, name, kind, phase, place, layer, launch, start_ns, duration_ns, end_ns,
//   flops, vector_flops, hbm_bytes, sram_bytes, pcie_h2d_bytes, pcie_d2h_bytes, link_bytes,
//   network_bytes, host_ns,      work per resource, in resource order (op_csv_header())
//   padded_flops,
//   sol_compute, sol_vector, sol_hbm, ..., sol_host,   fraction of the place's peak
//   top, top_sol,                 resource with the highest SoL and that SoL
//   verdict,                      verdict_name(), e.g. "HBM-bound"
//   critical,                     1 on the critical path, else 0
//   intensity_hbm, intensity_sram, attainable, achieved,   roofline (FLOP/B, FLOP/s)
//   deps                          dependency ids separated by spaces
// Numbers are printed with up to 15 significant digits ("%.15g"); an op the analysis does
// not cover has empty analysis columns.
#include <cstddef>
#include <ostream>
#include <string>

#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::profiler {

struct DotOptions {
  enum class Mode { Auto, Ops, Patterns };
  Mode mode = Mode::Auto;       // Auto: Ops up to max_nodes ops, else Patterns
  std::size_t max_nodes = 400;  // dot lays out a few hundred nodes in about a second
  bool left_to_right = false;   // rankdir=LR instead of top to bottom
};

void write_dot(std::ostream& os, const RunProfile& profile, const Analysis& analysis, const DotOptions& options = {});

/// The CSV header line (without the line end).
std::string op_csv_header();
void write_op_csv(std::ostream& os, const RunProfile& profile, const Analysis& analysis);

}  // namespace sohusim::profiler
