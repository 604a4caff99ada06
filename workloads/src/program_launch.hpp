#pragma once
// How a compiled step goes to the devices of a tensor-parallel group: cut at op boundaries
// (with TIMESTAMP commands between ops when profiled), launched slice by slice round-robin
// over the ranks; and the host's greedy sampling cost. Shared by the scenario runner and the
// serving step runner.
#include <cstddef>
#include <string>
#include <vector>

#include "sohusim/driver/runtime.hpp"
#include "sohusim/workloads/compiler.hpp"

namespace sohusim::workloads {

// Host-side greedy sampling: a vectorised argmax over the logits (assumption: 0.25 ns per
// logit, i.e. 4 logits per ns on one core).
inline constexpr double kArgmaxNsPerLogit = 0.25;

using OpCommands = std::vector<std::vector<driver::Command>>;  // per graph op, its commands

/// The program cut at op boundaries: per graph op its commands, with a TIMESTAMP after each
/// op that emitted any when `stamps` is given (plus one stamp before the first); the ops
/// stamped are appended to `stamped_ops`.
OpCommands per_op(const CompiledProgram& cp, const driver::HostBuffer* stamps, std::vector<std::size_t>& stamped_ops);

/// Launches every rank's program (per_rank[r] on streams[r]) in slices cut at the same op
/// boundaries, round-robin over the ranks.
void launch_sliced(driver::Runtime& rt, const std::vector<driver::Stream>& streams,
                   const std::vector<OpCommands>& per_rank, const std::string& name);

}  // namespace sohusim::workloads
