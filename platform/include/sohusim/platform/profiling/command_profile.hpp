#pragma once
// CommandProfile: every command that moved or computed data, as the profiler sees it — its
// execution time and its work (device/exec/command_work.hpp) — grouped per device by shape
// (WorkShape: "GEMM 1x8192x1024 bf16", "ATTENTION b64 q1 kv<=2048 ..."), so that the report
// can list each kind of command with its latency percentiles and its speed of light on every
// unit, as Nsight Systems lists kernels and Nsight Compute measures them.
//
// Fed by CommandExecutor::set_command_observer while a run is profiled (replayed commands
// included, with their recorded work). Per command: one hash lookup and one number kept (the
// duration, for exact percentiles); per shape: the summed work.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sohusim/device/exec/command_work.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::platform {

class CommandProfile {
 public:
  explicit CommandProfile(unsigned devices) : per_device_(devices) {}
  void observe(unsigned device, const device::Sqe& sqe, std::uint64_t duration_ps, const device::CommandWork& work);
  /// One row per device and shape, named by the shape, ordered by device and then by the
  /// shape's total time (largest first); `work` in the profile's resources (matrix FLOP as
  /// compute, vector FLOP as vector, host reads as PCIe h2d, host writes as d2h).
  std::vector<profiler::CommandStat> rows() const;
  std::uint64_t commands() const { return commands_; }

 private:
  struct Shape {
    std::vector<double> durations_ns;
    device::CommandWork work;  // summed
  };
  std::vector<std::unordered_map<device::WorkShape, Shape, device::WorkShapeHash>> per_device_;
  std::uint64_t commands_ = 0;
};

}  // namespace sohusim::platform
