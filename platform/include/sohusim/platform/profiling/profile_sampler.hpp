#pragma once
// ProfileSampler: the counters the profiler's analysis needs, read from the registry at an
// interval of simulated time while a run goes on, per device and per host, and turned into
// time windows (profiler::Window: each unit's achieved rate, the matrix engines' cycle
// buckets). Memory stays bounded: when more than `max_samples` samples are kept, every
// other one is dropped and the interval doubles (the counters are cumulative, so dropping a
// sample merges two windows exactly).
//
// Per device <d> (sums over its engines and links):
//   compute  dev<d>.me*.flops.*           vector   dev<d>.ve*.flops.*
//   hbm      dev<d>.hbm.port.bytes_read + bytes_written
//   sram     dev<d>.sram.bytes_read + bytes_written
//   pcie_h2d host<h>.pcie.dev<i>.down.payload_bytes   pcie_d2h  ... .up.payload_bytes
//   link     dev<d>.c2c.to*.tx.bytes
//   busy     dev<d>.cp.busy_ns (time with a command in flight, counted as it runs)
//   buckets  dev<d>.me*.{active_cycles, macs_useful, macs_issued, mac_cycles, stall_hbm_cycles,
//            stall_sram_cycles + stall_store_cycles, stall_dependency_cycles}: of the active
//            cycles, mac_cycles split into useful and padding by macs_useful / macs_issued,
//            the rest overhead (fill, drain, weight loads, lane work); idle is the rest of
//            engines x cycles of the window
// Per host <h>: host (CPU busy ns, SimDeviceAccess::cpu_busy_ns), network (net.h<h>_h*.bytes).
//
// With a trace, each window also becomes counter samples under the place's process:
// "compute TFLOP/s", "HBM GB/s", "SRAM GB/s", "PCIe h2d GB/s", "PCIe d2h GB/s", "links GB/s",
// "matrix engines busy %", "commands in flight %" (devices), "CPU busy %" and "network GB/s" (hosts), each written
// at the window's start when the window closes.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::platform {

class System;

class ProfileSampler {
 public:
  /// `trace` may be null or disabled (no counter tracks).
  ProfileSampler(System& system, counters::Registry& registry, std::uint64_t interval_ns,
                 std::size_t max_samples = 4096, counters::TraceRecorder* trace = nullptr);

  std::uint64_t interval_ns() const { return interval_ns_; }
  /// Samples now (simulated ns); ignored if `now_ns` is not after the last sample.
  void sample(std::uint64_t now_ns);
  /// Windows between consecutive samples, per place.
  std::vector<profiler::Window> windows() const;
  /// A device's counters at the moment it executed a TIMESTAMP command that stamped
  /// `device_ns` (CommandExecutor::set_timestamp_observer); at most kMaxStamps are kept.
  void stamp(unsigned device, std::uint64_t device_ns, std::uint64_t now_ns);
  /// The matrix engines' buckets between two stamps of `device` (an op of a profiled step);
  /// false if either stamp is unknown.
  bool stalls_between(unsigned device, std::uint64_t from_device_ns, std::uint64_t to_device_ns,
                      profiler::StallBuckets& out) const;
  /// The bytes the device's SRAM read and wrote between two stamps (the op's SRAM work,
  /// for its SRAM roofline point); false if either stamp is unknown.
  bool sram_bytes_between(unsigned device, std::uint64_t from_device_ns, std::uint64_t to_device_ns, double& out) const;
  static constexpr std::size_t kMaxStamps = 1u << 20;
  std::size_t samples() const { return times_.size(); }

 private:
  enum Column : unsigned {
    kCompute,
    kVector,
    kHbm,
    kSram,
    kPcieH2d,
    kPcieD2h,
    kLink,
    kActive,
    kUseful,
    kIssued,
    kMacCycles,
    kStallHbm,
    kStallSram,
    kStallDep,
    kBusy,
    kColumns
  };
  // The columns a stamp reads: what stalls_between and sram_bytes_between use.
  static constexpr Column kStampColumns[] = {kSram,      kActive,   kUseful,    kIssued,
                                             kMacCycles, kStallHbm, kStallSram, kStallDep};
  struct Place {
    std::string name;
    bool device = false;
    unsigned host = 0;
    double engines = 0, clock_hz = 0;
    // Per column: the id of the watched sum of its counters (Registry::watch_sum; -1: none)
    // and its other stats, if any. Device columns; host: kCompute = none.
    std::vector<std::int64_t> sums = std::vector<std::int64_t>(kColumns, -1);
    std::vector<const counters::Stat*> columns[kColumns];
    std::vector<counters::TrackId> tracks;  // counter tracks, when tracing
  };
  double value(const Place& p, unsigned column) const;
  /// Buckets of place `p` between two rows of its columns `dt_s` apart.
  static profiler::StallBuckets buckets(const Place& p, const double* from, const double* to, double dt_s);
  struct Stamp {
    std::uint64_t now_ns = 0;
    double values[kColumns] = {};
  };
  std::vector<std::map<std::uint64_t, Stamp>> stamps_;  // per device: by stamped value
  // The stamps of `device` at `from` and `to` (in that order in simulated time), or nulls.
  std::pair<const Stamp*, const Stamp*> stamps(unsigned device, std::uint64_t from, std::uint64_t to) const;
  std::size_t stamp_count_ = 0;
  /// The window between samples i - 1 and i of place `pi`.
  profiler::Window window(std::size_t i, std::size_t pi) const;
  void trace_window(std::size_t i);

  System& system_;
  counters::Registry& registry_;
  std::uint64_t interval_ns_;
  std::size_t max_samples_;
  std::vector<Place> places_;
  std::vector<std::uint64_t> times_;
  std::vector<std::vector<double>> rows_;  // per sample: places x kColumns
  counters::TraceRecorder* trace_ = nullptr;
};

}  // namespace sohusim::platform
