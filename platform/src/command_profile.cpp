#include "sohusim/platform/command_profile.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace sohusim::platform {

namespace {

void add(models::CommandWork& to, const models::CommandWork& w) {
  to.matrix_flops += w.matrix_flops;
  to.vector_flops += w.vector_flops;
  to.hbm_bytes += w.hbm_bytes;
  to.sram_bytes += w.sram_bytes;
  to.host_read_bytes += w.host_read_bytes;
  to.host_write_bytes += w.host_write_bytes;
  to.link_bytes += w.link_bytes;
}

// Linear interpolation between the closest ranks of sorted `v`.
double percentile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

void CommandProfile::observe(unsigned device, const models::Sqe& sqe, std::uint64_t duration_ps,
                             const models::CommandWork& work) {
  if (device >= per_device_.size()) return;
  Shape& s = per_device_[device][models::work_shape(sqe)];
  s.durations_ns.push_back(static_cast<double>(duration_ps) * 1e-3);
  add(s.work, work);
  ++commands_;
}

std::vector<counters::CommandStat> CommandProfile::rows() const {
  using counters::Resource;
  std::vector<counters::CommandStat> out;
  for (unsigned d = 0; d < per_device_.size(); ++d) {
    // Shapes that describe alike (none should) are merged, so that names stay unique.
    std::map<std::string, Shape> named;
    for (const auto& [shape, s] : per_device_[d]) {
      Shape& n = named[shape.describe()];
      n.durations_ns.insert(n.durations_ns.end(), s.durations_ns.begin(), s.durations_ns.end());
      add(n.work, s.work);
    }
    const std::size_t first = out.size();
    for (auto& [name, s] : named) {
      std::sort(s.durations_ns.begin(), s.durations_ns.end());
      double total = 0;
      for (double x : s.durations_ns) total += x;
      counters::CommandStat row;
      row.place = "dev" + std::to_string(d);
      row.name = name;
      row.count = static_cast<double>(s.durations_ns.size());
      row.mean = total / row.count;
      row.p50 = percentile(s.durations_ns, 0.5);
      row.p90 = percentile(s.durations_ns, 0.9);
      row.p99 = percentile(s.durations_ns, 0.99);
      row.max = s.durations_ns.back();
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
                     [](const counters::CommandStat& a, const counters::CommandStat& b) {
                       return a.count * a.mean > b.count * b.mean;
                     });
  }
  return out;
}

}  // namespace sohusim::platform
