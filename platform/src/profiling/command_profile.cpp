#include "sohusim/platform/profiling/command_profile.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace sohusim::platform {

void CommandProfile::observe(unsigned device, const device::Sqe& sqe, std::uint64_t duration_ps,
                             const device::CommandWork& work) {
  if (device >= per_device_.size()) return;
  Shape& s = per_device_[device][device::work_shape(sqe)];
  s.durations_ns.push_back(static_cast<double>(duration_ps) * 1e-3);
  s.work += work;
  ++commands_;
}

std::vector<profiler::CommandStat> CommandProfile::rows() const {
  using profiler::Resource;
  std::vector<profiler::CommandStat> out;
  for (unsigned d = 0; d < per_device_.size(); ++d) {
    // Shapes that describe alike (none should) are merged, so that names stay unique.
    std::map<std::string, Shape> named;
    for (const auto& [shape, s] : per_device_[d]) {
      Shape& n = named[shape.describe()];
      n.durations_ns.insert(n.durations_ns.end(), s.durations_ns.begin(), s.durations_ns.end());
      n.work += s.work;
    }
    const std::size_t first = out.size();
    for (auto& [name, s] : named) {
      profiler::CommandStat row = profiler::command_stat("dev" + std::to_string(d), name, std::move(s.durations_ns));
      const auto set = [&](Resource r, std::uint64_t v) {
        row.work[static_cast<unsigned>(r)] = static_cast<double>(v);
      };
      set(Resource::Compute, s.work.matrix_flops);
      set(Resource::Vector, s.work.vector_flops);
      set(Resource::Hbm, s.work.hbm_bytes);
      set(Resource::Sram, s.work.sram_bytes);
      set(Resource::PcieH2d, s.work.host_read_bytes);
      set(Resource::PcieD2h, s.work.host_write_bytes);
      set(Resource::Link, s.work.link_bytes);
      out.push_back(std::move(row));
    }
    std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                     [](const profiler::CommandStat& a, const profiler::CommandStat& b) {
                       return a.count * a.mean > b.count * b.mean;
                     });
  }
  return out;
}

}  // namespace sohusim::platform
