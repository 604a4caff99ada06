#include "program_launch.hpp"

namespace sohusim::workloads {

OpCommands per_op(const CompiledProgram& cp, const driver::HostBuffer* stamps, std::vector<std::size_t>& stamped_ops) {
  OpCommands ops(cp.op_first.size());
  unsigned slot = 0;
  if (stamps != nullptr)
    ops.front().push_back(driver::timestamp(driver::Space::Host, stamps->dma.iova + 8ULL * slot++));
  for (std::size_t i = 0; i < cp.op_first.size(); ++i) {
    for (std::size_t c = 0; c < cp.op_count[i]; ++c) ops[i].push_back(cp.program.commands[cp.op_first[i] + c]);
    if (stamps != nullptr && cp.op_count[i] > 0) {
      ops[i].push_back(driver::timestamp(driver::Space::Host, stamps->dma.iova + 8ULL * slot++));
      stamped_ops.push_back(i);
    }
  }
  return ops;
}

// A queue holds at most queue_entries - 1 commands and launch() blocks while it is full, so a
// whole 70B-layer-count program on one rank would wait for its peers' collectives that were
// never launched. Slices of at most kSliceCommands keep every rank's queue fed in step with
// its peers.
void launch_sliced(driver::Runtime& rt, const std::vector<driver::Stream>& streams,
                   const std::vector<OpCommands>& per_rank, const std::string& name) {
  constexpr std::size_t kSliceCommands = 1024;
  const std::size_t ops = per_rank.front().size();
  std::size_t begin = 0;
  while (begin < ops) {
    std::size_t end = begin, count = 0;
    while (end < ops && (count == 0 || count + per_rank.front()[end].size() <= kSliceCommands)) {
      count += per_rank.front()[end].size();
      ++end;
    }
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      driver::Program p;
      p.name = name;
      for (std::size_t i = begin; i < end; ++i)
        p.commands.insert(p.commands.end(), per_rank[r][i].begin(), per_rank[r][i].end());
      if (!p.commands.empty()) rt.launch(streams[r], p);
    }
    begin = end;
  }
}

}  // namespace sohusim::workloads
