#pragma once
// DeviceClockSampler: aligns a device's clock (the TIMESTAMP register) with the host's
// (DeviceAccess::host_clock_ns) the way a profiler has to on a real machine, where neither
// clock can be read at the other's instant:
//
//   host_before = host clock;  device = TIMESTAMP (one 64-bit MMIO read: a PCIe round trip,
//   ~1.5 us, during which the device latched its counter);  host_after = host clock.
//
// The device value belongs somewhere in [host_before, host_after]; profiler::ClockSync takes
// the midpoint, keeps the lowest-round-trip samples of each burst (a read delayed by traffic
// or an interrupt on one leg is off by up to half its extra round trip) and fits offset and
// drift by least squares over its window. Sample in bursts spread over the run (the drift is
// what a long span measures): sample() takes one burst of `options.group` reads back to back,
// so each burst gives the estimator its best read(s).
//
// Works on any function whose BAR0 has the TIMESTAMP page (a probed PF or VF). Each read
// costs the calling host thread an MMIO round trip; nothing else is charged. The raw samples
// stay available (samples()) for checks and for baselines. docs/clock-sync.md.
#include <cstdint>
#include <vector>

#include "sohusim/driver/device.hpp"
#include "sohusim/profiler/clock_sync.hpp"

namespace sohusim::driver {

/// One MMIO-style sync sample: host clock, device TIMESTAMP, host clock.
struct DeviceClockSample {
  std::uint64_t host_before = 0;
  std::uint64_t device = 0;
  std::uint64_t host_after = 0;
};

class DeviceClockSampler {
 public:
  /// `device` must be probed before the first sample (Device throws a DriverError otherwise).
  explicit DeviceClockSampler(Device& device, const profiler::ClockSync::Options& options = {});

  /// One sample, not fed to the estimator.
  DeviceClockSample read();
  /// A burst of `count` samples back to back (0: options().group), each fed to the
  /// estimator and kept in samples().
  void sample(unsigned count = 0);

  profiler::ClockSync& sync() { return sync_; }
  const profiler::ClockSync& sync() const { return sync_; }
  /// Through the current fit (std::invalid_argument if there are too few samples yet): the
  /// host clock's reading at the moment the device clock read `device_ns`, and back.
  std::int64_t to_host_ns(std::uint64_t device_ns) const;
  std::uint64_t to_device_ns(std::int64_t host_ns) const;
  /// Every sample sample() took, in order.
  const std::vector<DeviceClockSample>& samples() const { return samples_; }

 private:
  Device& device_;
  profiler::ClockSync sync_;
  std::vector<DeviceClockSample> samples_;
};

}  // namespace sohusim::driver
