#pragma once
// SystemSpec: a whole machine room as a system file describes it (configs/systems/*.yaml):
//
//   name: sohu-2x8
//   description: two 8-chip servers, pipeline-parallel over the host network
//   arch: sohu                 # device preset (configs/arch/<name>.yaml) or a YAML file
//   set: [sim.stop_time=100 s] # key=value overrides for every device's configuration
//   hosts:                     # one entry per server, in host order
//     - {name: host0, devices: 8}
//     - {name: host1, devices: 8, arch: sohu,
//        clock: {offset: 3 s, drift_ppm: -20, jitter: 30 ns, seed: 7}}   # the host's own clock
//   c2c: mesh                  # within each host: mesh | ring | none, or a list of
//                              # [a, b] device pairs (indices within the host)
//   network: {bandwidth: 50 GB/s, latency: 5 us}   # between hosts (NIC-to-NIC)
//   host_costs: {launch_ns: 1500, ...}             # driver::HostCosts fields
//
// A host's clock (host::HostClock: what its software reads as CLOCK_MONOTONIC) defaults to
// the simulator's time: offset 0, drift 0, jitter 0 (seed: the host's index).
// Devices are numbered across the system in host order (host0's are dev0..dev7, host1's
// dev8..dev15); chip-to-chip links join devices of one host. Every error names the file,
// the key and the allowed values.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sohusim/driver/host_costs.hpp"
#include "sohusim/host/host_clock.hpp"

namespace sohusim::platform {

struct HostSpec {
  std::string name;
  unsigned devices = 1;
  std::string arch;  // empty: the system's
  host::HostClockParams clock;
};

struct SystemSpec {
  std::string name, description, source;
  std::string arch = "sohu";
  std::vector<std::string> sets;
  std::vector<HostSpec> hosts;
  std::string c2c = "mesh";                              // mesh | ring | none | links
  std::vector<std::pair<unsigned, unsigned>> c2c_links;  // when c2c == "links"
  double network_bandwidth = 50e9;                       // bytes/s per direction
  double network_latency_s = 5e-6;
  driver::HostCosts costs;

  unsigned device_count() const;
  /// The chip-to-chip pairs of host `h` (indices within the host).
  std::vector<std::pair<unsigned, unsigned>> links_of(unsigned h) const;

  /// Throws std::invalid_argument, naming the missing pair, when the first `tp` devices of a
  /// host lack a chip-to-chip link their all-reduce uses (mesh: the pairs it sends over; ring and
  /// listed links: the ring 0-1-...-(tp-1)-0; none: any).
  void check_tensor_parallel(unsigned tp) const;

  /// Parses YAML text; `source` names it in errors. Throws std::invalid_argument.
  static SystemSpec parse(const std::string& yaml, const std::string& source);
  /// A path to an existing file, or a name looked up as <dir>/systems/<name>.yaml.
  static SystemSpec load(const std::string& name_or_path, const std::vector<std::string>& config_dirs);
};

}  // namespace sohusim::platform
