#include "sohusim/platform/run_configuration.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "sohusim/config/config_error.hpp"
#include "sohusim/platform/system.hpp"

namespace sohusim::platform {

namespace {

// The names of the presets under `folder/` ("arch", "hbm"), comma separated, for errors.
std::string preset_names(const config::ConfigLoader& loader, const std::string& folder) {
  std::string names;
  for (const auto& p : loader.available_presets()) {
    if (p.rfind(folder + "/", 0) == 0) names += (names.empty() ? "" : ", ") + p.substr(folder.size() + 1);
  }
  return names;
}

bool has_preset(const config::ConfigLoader& loader, const std::string& name) {
  for (const auto& p : loader.available_presets()) {
    if (p == name) return true;
  }
  return false;
}

// A file when one exists at `name`, else the preset `folder/name` (or `name` itself when it
// already names a folder, as `config check --preset hbm/hbm3e-9600` does).
void load_layer(config::ConfigLoader& loader, const std::string& name, const std::string& folder,
                const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name, ec)) {
    loader.load_file(name);
    return;
  }
  if (!folder.empty() && has_preset(loader, folder + "/" + name)) {
    loader.load_preset(folder + "/" + name);
    return;
  }
  if (has_preset(loader, name)) {
    loader.load_preset(name);
    return;
  }
  std::string msg = what + " `" + name + "` is neither a file nor a preset";
  if (!folder.empty()) msg += " (presets: " + preset_names(loader, folder) + ")";
  throw std::invalid_argument(msg);
}

config::Config load_host_config(const RunConfiguration& rc, const HostSpec& host, const std::vector<std::string>& dirs,
                                const std::vector<std::string>& overrides) {
  std::vector<std::filesystem::path> paths(dirs.begin(), dirs.end());
  config::ConfigLoader loader(config_schema(), paths);
  const std::string arch = host.arch.empty() ? rc.spec.arch : host.arch;
  try {
    load_layer(loader, arch, "arch", "arch");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(rc.spec.source + ": host `" + host.name + "`: " + e.what());
  }
  if (!rc.choice.hbm.empty()) load_layer(loader, rc.choice.hbm, "hbm", "HBM preset");
  for (const std::string& s : rc.spec.sets) loader.set(s);
  for (const std::string& c : rc.choice.configs) load_layer(loader, c, "", "config");
  for (const std::string& s : overrides) loader.set(s);
  return loader.resolve();
}

nlohmann::json topology_json(const SystemSpec& s) {
  nlohmann::json j;
  j["c2c"] = s.c2c;
  for (unsigned h = 0; h < s.hosts.size(); ++h) {
    nlohmann::json host;
    host["devices"] = s.hosts[h].devices;
    host["links"] = s.links_of(h);
    const host::HostClockParams& c = s.hosts[h].clock;
    host["clock"] = {c.offset_ns, c.drift_ppm, c.jitter_ns, c.seed};
    j["hosts"].push_back(host);
  }
  j["network"] = {s.network_bandwidth, s.network_latency_s};
  const driver::HostCosts& k = s.costs;
  j["host_costs"] = {k.api_call_ns,     k.launch_ns,    k.per_command_ns,   k.doorbell_ns, k.memcpy_setup_ns,
                     k.reap_per_cqe_ns, k.interrupt_ns, k.poll_interval_ns, k.malloc_ns,   k.admin_ns};
  return j;
}

// The loader names every key=value it was given "--set"; those of the system file's `set:`
// list are the file's, and are named so (unless an override sets the same key).
config::ConfigError in_system_sets(const config::ConfigError& e, const SystemSpec& spec,
                                   const std::vector<std::string>& overrides) {
  auto key_of = [](const std::string& assignment) { return assignment.substr(0, assignment.find('=')); };
  std::vector<config::ConfigDiagnostic> out = e.diagnostics();
  for (config::ConfigDiagnostic& d : out) {
    if (d.file != "--set") continue;
    bool in_spec = false, overridden = false;
    for (const std::string& s : spec.sets) in_spec = in_spec || key_of(s) == d.key;
    for (const std::string& s : overrides) overridden = overridden || key_of(s) == d.key;
    if (in_spec && !overridden) {
      d.file = spec.source;
      d.message = "(its `set:` list) " + d.message;
    }
  }
  return config::ConfigError(out);
}

}  // namespace

nlohmann::json simulated_values(const config::Config& c) {
  nlohmann::json j = c.to_json();
  j.erase("trace");  // where outputs go and how much they say: not what is simulated
  j.erase("stats");
  return j;
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;  // the FNV-1a 64 offset basis
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

RunConfiguration resolve_configuration(const ConfigChoice& choice) {
  RunConfiguration rc;
  rc.choice = choice;
  const std::vector<std::string> dirs = choice.config_dirs.empty() ? default_config_dirs() : choice.config_dirs;
  rc.choice.config_dirs = dirs;
  rc.spec = SystemSpec::load(choice.system, dirs);
  if (!choice.arch.empty()) {
    rc.spec.arch = choice.arch;
    for (HostSpec& h : rc.spec.hosts) h.arch.clear();
  }
  std::vector<std::string> overrides = choice.overrides;
  if (!choice.fidelity.empty()) overrides.push_back("sim.fidelity=" + choice.fidelity);
  if (!choice.mode.empty()) overrides.push_back("sim.data_mode=" + choice.mode);
  nlohmann::json canonical;
  canonical["topology"] = topology_json(rc.spec);
  for (const HostSpec& h : rc.spec.hosts) {
    try {
      rc.host_configs.push_back(load_host_config(rc, h, dirs, overrides));
    } catch (const config::ConfigError& e) {
      throw in_system_sets(e, rc.spec, overrides);
    }
    canonical["hosts"].push_back(simulated_values(rc.host_configs.back()));
  }
  rc.hash = fnv1a_hex(canonical.dump());
  return rc;
}

nlohmann::json RunConfiguration::record() const {
  nlohmann::json j;
  j["system"] = spec.name;
  j["system_file"] = spec.source;
  j["arch"] = spec.hosts.front().arch.empty() ? spec.arch : spec.hosts.front().arch;
  const config::Config& c0 = host_configs.front();
  j["hbm"] = c0.get_string("hbm.name");
  j["hbm_stacks"] = c0.get_uint("hbm.stacks");
  j["configs"] = choice.configs;
  nlohmann::json sets = nlohmann::json::array();
  for (const std::string& s : spec.sets) sets.push_back(s);
  for (const std::string& s : choice.overrides) sets.push_back(s);
  j["sets"] = sets;
  j["fidelity"] = c0.get_string("sim.fidelity");
  j["mode"] = c0.get_string("sim.data_mode");
  j["devices"] = spec.device_count();
  j["version"] = build_version();
  j["commit"] = build_commit();
  j["hash"] = hash;
  return j;
}

}  // namespace sohusim::platform
