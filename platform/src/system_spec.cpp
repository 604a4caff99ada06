#include "sohusim/platform/system_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "sohusim/config/units.hpp"
#include "sohusim/config/yaml_aliases.hpp"

namespace sohusim::platform {

namespace {

[[noreturn]] void fail(const std::string& source, const YAML::Node& n, const std::string& key, const std::string& msg) {
  std::ostringstream o;
  o << source;
  if (n && n.Mark().line >= 0) o << ":" << n.Mark().line + 1;
  o << ": " << key << ": " << msg;
  throw std::invalid_argument(o.str());
}

void check_keys(const std::string& source, const YAML::Node& n, const std::string& where,
                const std::set<std::string>& allowed) {
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    if (allowed.count(k) == 0) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(source, kv.first, where.empty() ? k : where + "." + k, "unknown key (allowed: " + list + ")");
    }
  }
}

// A single word or name: a list or mapping where one belongs is named, not a yaml-cpp
// "bad conversion".
std::string as_text(const std::string& source, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) fail(source, n, key, "expected a single value (a name or a word), not a list or mapping");
  return n.Scalar();
}

unsigned as_count(const std::string& source, const YAML::Node& n, const std::string& key, unsigned lo, unsigned hi) {
  long long v = 0;
  try {
    v = n.as<long long>();
  } catch (const YAML::Exception&) {
    fail(source, n, key, "`" + n.as<std::string>("?") + "` is not an integer");
  }
  if (v < lo || v > hi) {
    fail(source, n, key,
         std::to_string(v) + " is out of range (allowed " + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  }
  return static_cast<unsigned>(v);
}

double quantity(const std::string& source, const YAML::Node& n, const std::string& key, config::Dimension dim) {
  try {
    return config::parse_quantity(n.as<std::string>(), dim);
  } catch (const std::exception& e) {
    fail(source, n, key, e.what());
  }
}

double real(const std::string& source, const YAML::Node& n, const std::string& key, double lo, double hi) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    fail(source, n, key, "`" + n.as<std::string>("?") + "` is not a number");
  }
  if (!(v >= lo && v <= hi)) {
    std::ostringstream o;
    o << v << " is out of range (allowed " << lo << " .. " << hi << ")";
    fail(source, n, key, o.str());
  }
  return v;
}

// hosts[i].clock: {offset, drift_ppm, jitter, seed}.
host::HostClockParams host_clock(const std::string& source, const YAML::Node& c, const std::string& where,
                                 unsigned index) {
  host::HostClockParams p;
  p.seed = index;
  if (!c.IsMap()) fail(source, c, where, "a mapping {offset, drift_ppm, jitter, seed}");
  check_keys(source, c, where, {"offset", "drift_ppm", "jitter", "seed"});
  if (c["offset"]) {
    const double s = quantity(source, c["offset"], where + ".offset", config::Dimension::Time);
    if (!(s >= 0 && s <= 1e6)) fail(source, c["offset"], where + ".offset", "out of range (allowed 0 s .. 1000000 s)");
    p.offset_ns = s * 1e9;
  }
  if (c["drift_ppm"]) p.drift_ppm = real(source, c["drift_ppm"], where + ".drift_ppm", -1000, 1000);
  if (c["jitter"]) {
    const double s = quantity(source, c["jitter"], where + ".jitter", config::Dimension::Time);
    if (!(s >= 0 && s <= 1e-3)) fail(source, c["jitter"], where + ".jitter", "out of range (allowed 0 s .. 1 ms)");
    p.jitter_ns = s * 1e9;
  }
  if (c["seed"]) p.seed = as_count(source, c["seed"], where + ".seed", 0, 0xFFFF'FFFFu);
  return p;
}

}  // namespace

unsigned SystemSpec::device_count() const {
  unsigned n = 0;
  for (const HostSpec& h : hosts) n += h.devices;
  return n;
}

std::vector<std::pair<unsigned, unsigned>> SystemSpec::links_of(unsigned h) const {
  const unsigned n = hosts.at(h).devices;
  std::vector<std::pair<unsigned, unsigned>> out;
  if (c2c == "mesh") {
    for (unsigned a = 0; a < n; ++a)
      for (unsigned b = a + 1; b < n; ++b) out.emplace_back(a, b);
  } else if (c2c == "ring") {
    if (n == 2) out.emplace_back(0, 1);
    if (n > 2)
      for (unsigned a = 0; a < n; ++a) out.emplace_back(std::min(a, (a + 1) % n), std::max(a, (a + 1) % n));
  } else if (c2c == "links") {
    out = c2c_links;
  }
  return out;
}

void SystemSpec::check_tensor_parallel(unsigned tp) const {
  if (tp <= 1) return;
  for (unsigned h = 0; h < hosts.size(); ++h) {
    const std::vector<std::pair<unsigned, unsigned>> links = links_of(h);
    std::vector<std::pair<unsigned, unsigned>> needed;
    if (c2c == "mesh") {
      for (unsigned a = 0; a < tp; ++a)
        for (unsigned b = a + 1; b < tp; ++b) needed.emplace_back(a, b);
    } else {
      for (unsigned a = 0; a < tp; ++a) needed.emplace_back(std::min(a, (a + 1) % tp), std::max(a, (a + 1) % tp));
    }
    for (const auto& [a, b] : needed) {
      if (std::find(links.begin(), links.end(), std::make_pair(a, b)) != links.end()) continue;
      throw std::invalid_argument(source + ": system `" + name + "` (c2c: " + (c2c == "links" ? "a list" : c2c) +
                                  ") has no chip-to-chip link between devices " + std::to_string(a) + " and " +
                                  std::to_string(b) + " of host `" + hosts[h].name +
                                  "`, which tensor parallelism over " + std::to_string(tp) +
                                  " devices needs: link them (c2c: mesh or ring) or use fewer (--tp)");
    }
  }
}

SystemSpec SystemSpec::parse(const std::string& yaml, const std::string& source) {
  YAML::Node root;
  try {
    if (const std::optional<config::TextPosition> alias = config::first_yaml_alias(yaml)) {
      throw std::invalid_argument(source + ":" + std::to_string(alias->line) + ":" + std::to_string(alias->column) +
                                  ": YAML aliases (*name) are not allowed in a system file; write the value out");
    }
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) throw std::invalid_argument(source + ": a system file is a mapping (name, hosts, ...)");
  check_keys(source, root, "", {"name", "description", "arch", "set", "hosts", "c2c", "network", "host_costs"});
  SystemSpec s;
  s.source = source;
  s.name = root["name"] ? as_text(source, root["name"], "name") : std::filesystem::path(source).stem().string();
  if (root["description"]) s.description = as_text(source, root["description"], "description");
  if (root["arch"]) s.arch = as_text(source, root["arch"], "arch");
  if (const YAML::Node set = root["set"]) {
    if (!set.IsSequence()) fail(source, set, "set", "a list of key=value strings");
    for (std::size_t i = 0; i < set.size(); ++i)
      s.sets.push_back(as_text(source, set[i], "set[" + std::to_string(i) + "]"));
  }
  const YAML::Node hosts = root["hosts"];
  if (!hosts || !hosts.IsSequence() || hosts.size() == 0)
    fail(source, hosts ? hosts : root, "hosts", "a non-empty list of {name, devices[, arch, clock]}");
  std::set<std::string> names;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const YAML::Node h = hosts[i];
    const std::string where = "hosts[" + std::to_string(i) + "]";
    if (!h.IsMap()) fail(source, h, where, "a mapping {name, devices[, arch, clock]}");
    check_keys(source, h, where, {"name", "devices", "arch", "clock"});
    HostSpec hs;
    hs.name = h["name"] ? as_text(source, h["name"], where + ".name") : "host" + std::to_string(i);
    if (!names.insert(hs.name).second) fail(source, h, where + ".name", "`" + hs.name + "` is used twice");
    if (!h["devices"]) fail(source, h, where + ".devices", "missing (1 .. 14 devices per host)");
    hs.devices = as_count(source, h["devices"], where + ".devices", 1, 14);
    if (h["arch"]) hs.arch = as_text(source, h["arch"], where + ".arch");
    hs.clock.seed = static_cast<std::uint64_t>(i);
    if (h["clock"]) hs.clock = host_clock(source, h["clock"], where + ".clock", static_cast<unsigned>(i));
    s.hosts.push_back(hs);
  }
  if (const YAML::Node c = root["c2c"]) {
    if (c.IsScalar()) {
      s.c2c = c.as<std::string>();
      if (s.c2c != "mesh" && s.c2c != "ring" && s.c2c != "none")
        fail(source, c, "c2c", "`" + s.c2c + "` (allowed: mesh, ring, none, or a list of [a, b] device pairs)");
    } else if (c.IsSequence()) {
      s.c2c = "links";
      unsigned smallest = s.hosts[0].devices;
      for (const HostSpec& h : s.hosts) smallest = std::min(smallest, h.devices);
      for (std::size_t i = 0; i < c.size(); ++i) {
        const std::string where = "c2c[" + std::to_string(i) + "]";
        if (!c[i].IsSequence() || c[i].size() != 2) fail(source, c[i], where, "a pair [a, b] of device indices");
        const unsigned a = as_count(source, c[i][0], where + "[0]", 0, 13);
        const unsigned b = as_count(source, c[i][1], where + "[1]", 0, 13);
        if (a >= smallest || b >= smallest) {
          fail(source, c[i], where,
               "[" + std::to_string(a) + ", " + std::to_string(b) +
                   "] wires a device that does not exist (hosts have " + std::to_string(smallest) +
                   " devices, indices 0 .. " + std::to_string(smallest - 1) + ")");
        }
        if (a == b) fail(source, c[i], where, "a device cannot be linked to itself");
        const std::pair<unsigned, unsigned> link(std::min(a, b), std::max(a, b));
        if (std::find(s.c2c_links.begin(), s.c2c_links.end(), link) != s.c2c_links.end())
          fail(
              source, c[i], where,
              "[" + std::to_string(a) + ", " + std::to_string(b) + "] is listed twice (a pair is one link, both ways)");
        s.c2c_links.push_back(link);
      }
    } else {
      fail(source, c, "c2c", "mesh, ring, none, or a list of [a, b] device pairs");
    }
  }
  if (const YAML::Node n = root["network"]) {
    check_keys(source, n, "network", {"bandwidth", "latency"});
    if (n["bandwidth"])
      s.network_bandwidth = quantity(source, n["bandwidth"], "network.bandwidth", config::Dimension::Bandwidth);
    if (n["latency"]) s.network_latency_s = quantity(source, n["latency"], "network.latency", config::Dimension::Time);
    if (!(s.network_bandwidth > 0)) fail(source, n["bandwidth"], "network.bandwidth", "must be > 0");
    if (s.network_latency_s < 0) fail(source, n["latency"], "network.latency", "must be >= 0");
  }
  if (const YAML::Node c = root["host_costs"]) {
    driver::HostCosts& hc = s.costs;
    const std::pair<const char*, std::uint64_t*> fields[] = {{"api_call_ns", &hc.api_call_ns},
                                                             {"launch_ns", &hc.launch_ns},
                                                             {"per_command_ns", &hc.per_command_ns},
                                                             {"doorbell_ns", &hc.doorbell_ns},
                                                             {"memcpy_setup_ns", &hc.memcpy_setup_ns},
                                                             {"reap_per_cqe_ns", &hc.reap_per_cqe_ns},
                                                             {"interrupt_ns", &hc.interrupt_ns},
                                                             {"poll_interval_ns", &hc.poll_interval_ns},
                                                             {"malloc_ns", &hc.malloc_ns},
                                                             {"admin_ns", &hc.admin_ns}};
    std::set<std::string> allowed;
    for (const auto& f : fields) allowed.insert(f.first);
    check_keys(source, c, "host_costs", allowed);
    for (const auto& f : fields) {
      if (c[f.first]) *f.second = as_count(source, c[f.first], std::string("host_costs.") + f.first, 0, 1'000'000'000);
    }
  }
  return s;
}

SystemSpec SystemSpec::load(const std::string& name_or_path, const std::vector<std::string>& config_dirs) {
  std::error_code ec;
  std::filesystem::path file;
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    file = name_or_path;
  } else {
    std::set<std::string> known;
    for (const std::string& d : config_dirs) {
      const std::filesystem::path p = std::filesystem::path(d) / "systems" / (name_or_path + ".yaml");
      if (file.empty() && std::filesystem::is_regular_file(p, ec)) file = p;
      for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(d) / "systems", ec)) {
        if (e.path().extension() == ".yaml") known.insert(e.path().stem().string());
      }
    }
    if (file.empty()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("system `" + name_or_path + "` is neither a file nor a known system (known: " +
                                  (list.empty() ? "none found" : list) + ")");
    }
  }
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw std::invalid_argument(file.string() + ": cannot be read");
  return parse(text.str(), file.string());
}

}  // namespace sohusim::platform
