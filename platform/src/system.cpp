#include "sohusim/platform/system.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "sohusim/device/device_schema.hpp"
#include "sohusim/device/exec/replay_cache.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/pcie/pcie_schema.hpp"
#include "sohusim/sim/core_schema.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::platform {

config::Schema config_schema() {
  config::Schema s = sim::core_schema();
  s.merge(memory::memory_schema());
  s.merge(pcie::pcie_schema());
  s.merge(device::device_schema());
  return s;
}

std::vector<std::string> default_config_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SOHUSIM_CONFIGS"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  std::error_code ec;
  for (const char* d : {SOHUSIM_SOURCE_CONFIGS, SOHUSIM_INSTALLED_CONFIGS}) {
    if (std::filesystem::is_directory(d, ec)) dirs.emplace_back(d);
  }
  return dirs;
}

System::System(const RunConfiguration& configuration, counters::Registry& registry, counters::TraceRecorder* trace)
    : spec_(configuration.spec) {
  const bool tracing = trace != nullptr && trace->enabled();
  unsigned next_device = 0;
  for (unsigned h = 0; h < spec_.hosts.size(); ++h) {
    const HostSpec& hs = spec_.hosts[h];
    auto host = std::make_unique<Host>();
    host->config = std::make_unique<config::Config>(configuration.host_configs.at(h));
    std::vector<std::string> categories = host->config->get_strings("trace.categories");
    host->track = tracing ? trace->process_track(hs.name) : 0;
    const bool summary = host->config->get_string("trace.detail") == "summary";
    sim::Instrumentation hinst{&registry, trace, host->track, categories, summary};
    std::vector<platform::HostSystem::DeviceSlot> slots;
    for (unsigned d = 0; d < hs.devices; ++d, ++next_device) {
      platform::HostSystem::DeviceSlot slot;
      slot.name = "dev" + std::to_string(next_device);
      slot.index = next_device;
      slot.inst =
          sim::Instrumentation{&registry, trace, tracing ? trace->process_track(slot.name) : 0, categories, summary};
      device_tracks_.push_back(slot.inst.process_track);
      slots.push_back(slot);
    }
    host->system = std::make_unique<platform::HostSystem>(*host->config, hinst, hs.name, slots);
    host->access = std::make_unique<SimDeviceAccess>(*host->system, hs.clock);
    // Chip-to-chip links of this host: two channels per pair, one per direction.
    for (const auto& [a, b] : spec_.links_of(h)) {
      device::SohuDevice& da = host->system->device(a);
      device::SohuDevice& db = host->system->device(b);
      const unsigned ports = std::min(da.params().c2c_ports, db.params().c2c_ports);
      unsigned used_a = 0, used_b = 0;
      for (const auto& [x, y] : spec_.links_of(h)) {
        used_a += (x == a || y == a) ? 1 : 0;
        used_b += (x == b || y == b) ? 1 : 0;
      }
      if (std::max(used_a, used_b) > ports) {
        throw std::invalid_argument(spec_.source + ": c2c `" + spec_.c2c + "` gives a device of host `" + hs.name +
                                    "` " + std::to_string(std::max(used_a, used_b)) +
                                    " links, but the arch has device.c2c.ports = " + std::to_string(ports));
      }
      auto ab = std::make_unique<device::C2cChannel>(
          da.params().c2c, counters::Scope(registry, da.prefix() + ".c2c.to" + std::to_string(db.index()) + ".tx"));
      auto ba = std::make_unique<device::C2cChannel>(
          db.params().c2c, counters::Scope(registry, db.prefix() + ".c2c.to" + std::to_string(da.index()) + ".tx"));
      da.connect(db.index(), db, *ab, *ba);
      db.connect(da.index(), da, *ba, *ab);
      channels_.push_back(std::move(ab));
      channels_.push_back(std::move(ba));
    }
    hosts_.push_back(std::move(host));
  }
  // Devices of one configuration, on any host, share their replay records.
  std::vector<device::SohuDevice*> devices;
  for (unsigned d = 0; d < device_count(); ++d) devices.push_back(&device(d));
  device::share_replays(devices);
  network_ = std::make_unique<HostNetwork>(host_count(), spec_.network_bandwidth, spec_.network_latency_s, registry);
}

System::~System() = default;

device::SohuDevice& System::device(unsigned global) {
  unsigned g = global;
  for (auto& h : hosts_) {
    if (g < h->system->device_count()) return h->system->device(g);
    g -= h->system->device_count();
  }
  throw std::out_of_range("device " + std::to_string(global) + " does not exist (the system has " +
                          std::to_string(device_count()) + ")");
}

void System::sync_stats() {
  for (auto& h : hosts_) h->system->sync_stats();
}

}  // namespace sohusim::platform
