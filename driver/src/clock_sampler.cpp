#include "sohusim/driver/clock_sampler.hpp"

namespace sohusim::driver {

DeviceClockSampler::DeviceClockSampler(Device& device, const profiler::ClockSync::Options& options)
    : device_(device), sync_(options) {}

DeviceClockSample DeviceClockSampler::read() {
  DeviceAccess& a = device_.access();
  DeviceClockSample s;
  s.host_before = a.host_clock_ns();
  s.device = device_.device_time_ns();
  s.host_after = a.host_clock_ns();
  return s;
}

void DeviceClockSampler::sample(unsigned count) {
  const unsigned n = count == 0 ? sync_.options().group : count;
  for (unsigned i = 0; i < n; ++i) {
    const DeviceClockSample s = read();
    sync_.add_mmio(static_cast<std::int64_t>(s.host_before), static_cast<std::int64_t>(s.device),
                   static_cast<std::int64_t>(s.host_after));
    samples_.push_back(s);
  }
}

std::int64_t DeviceClockSampler::to_host_ns(std::uint64_t device_ns) const {
  return sync_.to_local(static_cast<std::int64_t>(device_ns));
}

std::uint64_t DeviceClockSampler::to_device_ns(std::int64_t host_ns) const {
  return static_cast<std::uint64_t>(sync_.to_remote(host_ns));
}

}  // namespace sohusim::driver
