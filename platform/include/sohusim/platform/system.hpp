#pragma once
// System: the simulated machine a SystemSpec describes, built at once (SystemC elaboration):
// per host a platform::HostSystem with its devices on their own root ports, the
// SimDeviceAccess its software uses, chip-to-chip channels between the devices of a host as
// the spec's topology says, and the host network. Each host's configuration comes resolved
// (run_configuration.hpp: arch, HBM preset, the system's `set:` list, config layers,
// overrides), validated against the full schema like any config file.
//
// Stats: host<h>.* (DRAM, root complex, links as host<h>.pcie.dev<i>.*), dev<i>.* per
// device, dev<i>.c2c.to<j>.tx.* per chip-to-chip direction, net.* for the host network.
// Trace: a process per host and per device.
#include <memory>
#include <string>
#include <vector>

#include "sohusim/config/config.hpp"
#include "sohusim/config/config_schema.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/device/units/c2c_link.hpp"
#include "sohusim/platform/host_network.hpp"
#include "sohusim/platform/host_system.hpp"
#include "sohusim/platform/run_configuration.hpp"
#include "sohusim/platform/sim_device_access.hpp"
#include "sohusim/platform/system_spec.hpp"

namespace sohusim::platform {

/// Every layer's parameters (core, memory, pcie, device): what a host's config validates against.
config::Schema config_schema();

/// Where presets and system files are looked up when the caller gives no directory:
/// $SOHUSIM_CONFIGS, the source tree's configs/ and the installed share/sohusim/configs.
std::vector<std::string> default_config_dirs();

class System {
 public:
  System(const RunConfiguration& configuration, counters::Registry& registry, counters::TraceRecorder* trace);
  ~System();

  const SystemSpec& spec() const { return spec_; }
  unsigned host_count() const { return static_cast<unsigned>(hosts_.size()); }
  platform::HostSystem& host(unsigned h) { return *hosts_.at(h)->system; }
  SimDeviceAccess& access(unsigned h) { return *hosts_.at(h)->access; }
  const config::Config& host_config(unsigned h) const { return *hosts_.at(h)->config; }
  counters::TrackId host_track(unsigned h) const { return hosts_.at(h)->track; }
  /// The trace process of a device (system-wide index); 0 when not tracing.
  counters::TrackId device_track(unsigned global) const { return device_tracks_.at(global); }
  unsigned device_count() const { return spec_.device_count(); }
  /// Device by system-wide index (host order).
  device::SohuDevice& device(unsigned global);
  HostNetwork& network() { return *network_; }
  /// Syncs lazily kept statistics (links) before the registry is read.
  void sync_stats();

 private:
  struct Host {
    std::unique_ptr<config::Config> config;
    std::unique_ptr<platform::HostSystem> system;
    std::unique_ptr<SimDeviceAccess> access;
    counters::TrackId track = 0;
  };
  SystemSpec spec_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<counters::TrackId> device_tracks_;
  std::vector<std::unique_ptr<device::C2cChannel>> channels_;
  std::unique_ptr<HostNetwork> network_;
};

}  // namespace sohusim::platform
