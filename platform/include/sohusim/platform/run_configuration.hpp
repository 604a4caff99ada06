#pragma once
// RunConfiguration: what a run is configured with, resolved before anything is built, and the
// record of it every result carries (JSON results, statistics, profiles, report headers).
//
// Layers, in order, for each host: its arch (the system's, or ConfigChoice::arch for every
// host), the HBM preset (ConfigChoice::hbm: configs/hbm/<name>.yaml; every HBM preset sets the
// whole hbm.org and hbm.timing, so it replaces the arch's generation and keeps its stack count),
// the system file's `set:` list, the config files or presets of ConfigChoice::configs, then the
// key=value overrides. Validated against the full schema like `sohusim config check`.
//
//   platform::ConfigChoice c;  c.system = "sohu-8";  c.hbm = "hbm3e-9600";
//   c.overrides = {"device.matrix.engines=64"};
//   platform::RunConfiguration rc = platform::resolve_configuration(c);   // throws ConfigError
//   std::cout << rc.record().dump(2);    // system, arch, hbm, configs, sets, version, commit, hash
//
// The hash is over the resolved values of every host's configuration (outputs, trace.* and
// stats.*, left out) and the system's topology (hosts, devices, links, network, host costs):
// two runs with the same hash simulate the same machine, whatever files and flags produced it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sohusim/config/config.hpp"
#include "sohusim/platform/system_spec.hpp"

namespace sohusim::platform {

struct ConfigChoice {
  std::string system = "sohu-1";         // name in configs/systems, or a YAML file path
  std::string arch;                      // "" = the system's; else a preset name or a file, for every host
  std::string hbm;                       // "" = the arch's; else an HBM preset name (configs/hbm)
  std::vector<std::string> configs;      // config files or preset names, layered in order
  std::vector<std::string> overrides;    // "key=value", last
  std::string fidelity;                  // "fast" | "detailed" | "" (the configuration's)
  std::string mode;                      // "timing" | "functional" | ""
  std::vector<std::string> config_dirs;  // where presets are found; empty = default_config_dirs()
};

struct RunConfiguration {
  ConfigChoice choice;
  SystemSpec spec;                           // as loaded, with ConfigChoice::arch applied
  std::vector<config::Config> host_configs;  // one per host, in host order
  std::string hash;                          // 16 hex digits (FNV-1a 64 of the canonical JSON)

  /// The record results carry: {"system", "system_file", "arch", "hbm", "hbm_stacks",
  /// "configs", "sets" (the system's then the overrides), "fidelity", "mode", "devices",
  /// "version", "commit", "hash"}.
  nlohmann::json record() const;
};

/// Resolves every host's configuration. Throws config::ConfigError (with every diagnostic)
/// for bad values, std::invalid_argument for a system, arch or HBM preset that is not found.
RunConfiguration resolve_configuration(const ConfigChoice& choice);

/// This build: the project version and the source revision it was built from ("unknown"
/// outside a git checkout; "-dirty" when the tree had uncommitted changes).
const char* build_version();
const char* build_commit();

/// A resolved configuration's values without its outputs (trace.*, stats.*): what the hash covers.
nlohmann::json simulated_values(const config::Config& c);

/// FNV-1a 64 of `text` as 16 hex digits.
std::string fnv1a_hex(const std::string& text);

}  // namespace sohusim::platform
