#include "sohusim/profiler/profile.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace sohusim::profiler {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "sohusim-profile";
const char* const kResourceNames[kResources] = {"compute",  "vector", "hbm",     "sram", "pcie_h2d",
                                                "pcie_d2h", "link",   "network", "host"};

// Reads with a JSON path in every error.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ProfileError(source_ + ": " + path + ": " + what);
  }
  const json& field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path + "." + key, "missing");
    return *it;
  }
  double number(const json& obj, const std::string& path, const char* key, bool required = true,
                double fallback = 0) const {
    if (!required && obj.find(key) == obj.end()) return fallback;
    const json& v = field(obj, path, key);
    if (!v.is_number()) fail(path + "." + key, std::string("expected a number, found ") + v.type_name());
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path + "." + key, "not a finite number");
    return d;
  }
  std::string text(const json& obj, const std::string& path, const char* key, bool required = true) const {
    if (!required && obj.find(key) == obj.end()) return {};
    const json& v = field(obj, path, key);
    if (!v.is_string()) fail(path + "." + key, std::string("expected a string, found ") + v.type_name());
    return v.get<std::string>();
  }
  const json& array(const json& obj, const std::string& path, const char* key) const {
    const auto it = obj.find(key);
    static const json empty = json::array();
    if (it == obj.end()) return empty;
    if (!it->is_array()) fail(path + "." + key, std::string("expected an array, found ") + it->type_name());
    return *it;
  }
  Resource resource(const std::string& name, const std::string& path) const {
    try {
      return resource_from_name(name);
    } catch (const ProfileError& e) {
      fail(path, e.what());
    }
  }
  // The optional "stalls" object of a window or an op.
  void stalls(const json& obj, const std::string& path, StallBuckets& out) const {
    const auto it = obj.find("stalls");
    if (it == obj.end()) return;
    const std::string sp = path + ".stalls";
    if (!it->is_object()) fail(sp, std::string("expected an object, found ") + it->type_name());
    out.busy_useful = number(*it, sp, "busy_useful", false);
    out.busy_padding = number(*it, sp, "busy_padding", false);
    out.busy_overhead = number(*it, sp, "busy_overhead", false);
    out.wait_sram = number(*it, sp, "wait_sram", false);
    out.wait_hbm = number(*it, sp, "wait_hbm", false);
    out.wait_pcie = number(*it, sp, "wait_pcie", false);
    out.wait_dependency = number(*it, sp, "wait_dependency", false);
    out.idle = number(*it, sp, "idle", false);
  }
  void per_resource(const json& obj, const std::string& path, const char* key, double (&out)[kResources]) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return;
    if (!it->is_object()) fail(path + "." + key, "expected an object keyed by resource");
    for (const auto& [name, v] : it->items()) {
      const std::string p = path + "." + key + "." + name;
      if (!v.is_number() || !std::isfinite(v.get<double>())) fail(p, "expected a finite number");
      out[static_cast<unsigned>(resource(name, p))] = v.get<double>();
    }
  }

 private:
  std::string source_;
};

json stalls_json(const StallBuckets& s) {
  return {{"busy_useful", s.busy_useful},
          {"busy_padding", s.busy_padding},
          {"busy_overhead", s.busy_overhead},
          {"wait_sram", s.wait_sram},
          {"wait_hbm", s.wait_hbm},
          {"wait_pcie", s.wait_pcie},
          {"wait_dependency", s.wait_dependency},
          {"idle", s.idle}};
}

json per_resource_json(const double (&v)[kResources]) {
  json o = json::object();
  for (unsigned r = 0; r < kResources; ++r) {
    if (v[r] != 0) o[kResourceNames[r]] = v[r];
  }
  return o;
}

}  // namespace

CommandStat command_stat(std::string place, std::string name, std::vector<double> v) {
  CommandStat s;
  s.place = std::move(place);
  s.name = std::move(name);
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  double total = 0;
  for (double x : v) total += x;
  s.count = static_cast<double>(v.size());
  s.mean = total / s.count;
  s.p50 = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  s.max = v.back();
  return s;
}

const char* resource_name(Resource r) {
  return kResourceNames[static_cast<unsigned>(r)];
}

Resource resource_from_name(const std::string& s) {
  for (unsigned r = 0; r < kResources; ++r) {
    if (s == kResourceNames[r]) return static_cast<Resource>(r);
  }
  std::string allowed;
  for (unsigned r = 0; r < kResources; ++r) allowed += std::string(r ? ", " : "") + kResourceNames[r];
  throw ProfileError("unknown resource `" + s + "` (allowed: " + allowed + ")");
}

const Unit* RunProfile::unit(const std::string& place, Resource r) const {
  for (const Unit& u : units) {
    if (u.place == place && u.resource == r) return &u;
  }
  return nullptr;
}

void RunProfile::validate() const {
  std::set<std::string> places;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const Unit& u = units[i];
    if (!(u.peak > 0) || !std::isfinite(u.peak))
      throw ProfileError("units[" + std::to_string(i) + "] (" + u.name() + "): peak must be > 0, not " +
                         std::to_string(u.peak));
    places.insert(u.place);
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpRecord& op = ops[i];
    const std::string at = "ops[" + std::to_string(i) + "] (" + op.name + ")";
    if (op.id != i) throw ProfileError(at + ": id " + std::to_string(op.id) + " is not its index");
    if (!(op.duration_ns >= 0)) throw ProfileError(at + ": negative duration " + std::to_string(op.duration_ns));
    if (places.count(op.place) == 0) throw ProfileError(at + ": place `" + op.place + "` has no units");
    for (unsigned r = 0; r < kResources; ++r) {
      if (!(op.work[r] >= 0)) throw ProfileError(at + ": negative " + kResourceNames[r] + " work");
    }
    for (std::uint32_t d : op.deps) {
      if (d >= i) throw ProfileError(at + ": depends on op " + std::to_string(d) + ", which is not an earlier op");
    }
  }
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const CommandStat& c = commands[i];
    const std::string at = "commands[" + std::to_string(i) + "] (" + c.place + " " + c.name + ")";
    if (!(c.count >= 0) || !(c.mean >= 0)) throw ProfileError(at + ": negative count or mean");
    for (unsigned r = 0; r < kResources; ++r) {
      if (!(c.work[r] >= 0)) throw ProfileError(at + ": negative " + kResourceNames[r] + " work");
    }
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (!(windows[i].end_ns > windows[i].start_ns))
      throw ProfileError("windows[" + std::to_string(i) + "]: end_ns must be after start_ns");
  }
}

std::string configuration_line(const RunProfile& p) {
  const auto& c = p.configuration;
  auto get = [&c](const char* k) {
    auto it = c.find(k);
    return it == c.end() ? std::string() : it->second;
  };
  std::vector<std::string> parts;
  if (!get("system").empty())
    parts.push_back(get("system") + (get("devices").empty() ? "" : " (" + get("devices") + " devices)"));
  if (!get("arch").empty()) parts.push_back("arch " + get("arch"));
  if (!get("hbm").empty())
    parts.push_back("HBM " + get("hbm") + (get("hbm_stacks").empty() ? "" : " x " + get("hbm_stacks")));
  if (!get("configs").empty() && get("configs") != "[]") parts.push_back("configs " + get("configs"));
  if (!get("sets").empty() && get("sets") != "[]") parts.push_back("set " + get("sets"));
  if (!get("version").empty()) parts.push_back("sohusim " + get("version") + " (" + get("commit") + ")");
  if (!get("hash").empty()) parts.push_back("config " + get("hash"));
  std::string line;
  for (const std::string& s : parts) line += (line.empty() ? "" : " \u00b7 ") + s;
  return line;
}

void write_profile(std::ostream& os, const RunProfile& p) {
  json j;
  j["format"] = kFormat;
  j["version"] = RunProfile::kVersion;
  j["start_ns"] = p.start_ns;
  j["end_ns"] = p.end_ns;
  json summary = json::object();
  for (const auto& [k, v] : p.summary) summary[k] = v;
  for (const auto& [k, v] : p.summary_text) summary[k] = v;
  j["summary"] = summary;
  if (!p.configuration.empty()) j["configuration"] = p.configuration;
  json units = json::array();
  for (const Unit& u : p.units)
    units.push_back({{"place", u.place}, {"resource", resource_name(u.resource)}, {"peak", u.peak}});
  j["units"] = units;
  json ops = json::array();
  for (const OpRecord& op : p.ops) {
    ops.push_back({{"id", op.id},
                   {"name", op.name},
                   {"kind", op.kind},
                   {"phase", op.phase},
                   {"place", op.place},
                   {"layer", op.layer},
                   {"launch", op.launch},
                   {"start_ns", op.start_ns},
                   {"duration_ns", op.duration_ns},
                   {"work", per_resource_json(op.work)},
                   {"padded_flops", op.padded_flops},
                   {"deps", op.deps}});
    if (op.stalls.total() > 0) ops.back()["stalls"] = stalls_json(op.stalls);
  }
  j["ops"] = ops;
  json windows = json::array();
  for (const Window& w : p.windows) {
    const StallBuckets& s = w.stalls;
    windows.push_back({{"place", w.place},
                       {"start_ns", w.start_ns},
                       {"end_ns", w.end_ns},
                       {"busy", w.busy},
                       {"rate", per_resource_json(w.rate)},
                       {"stalls", stalls_json(s)}});
  }
  j["windows"] = windows;
  json commands = json::array();
  for (const CommandStat& c : p.commands) {
    commands.push_back({{"place", c.place},
                        {"name", c.name},
                        {"count", c.count},
                        {"mean", c.mean},
                        {"p50", c.p50},
                        {"p90", c.p90},
                        {"p99", c.p99},
                        {"max", c.max},
                        {"work", per_resource_json(c.work)}});
  }
  j["commands"] = commands;
  json hosts = json::array();
  for (const HostActivity& h : p.hosts) {
    hosts.push_back({{"place", h.place},
                     {"busy_ns", h.busy_ns},
                     {"api_calls", h.api_calls},
                     {"commands", h.commands},
                     {"wait_ns", h.wait_ns}});
  }
  j["hosts"] = hosts;
  json facts = json::object();
  for (const auto& [place, kv] : p.facts) {
    json o = json::object();
    for (const auto& [k, v] : kv) o[k] = v;
    facts[place] = o;
  }
  j["facts"] = facts;
  if (!p.serving.empty()) j["serving"] = serving_json(p.serving);
  os << j.dump(1) << "\n";
  if (!os) throw ProfileError("cannot write the profile");
}

RunProfile read_profile(std::istream& is, const std::string& source) {
  json j;
  try {
    j = json::parse(is);
  } catch (const json::parse_error& e) {
    // A Perfetto trace is binary protobuf; a cut file ends mid-value: say which it looks like.
    throw ProfileError(source + ": not a sohusim profile (JSON parse error at byte " + std::to_string(e.byte) +
                       (e.id == 101 ? "; the file may be truncated or not JSON" : "") +
                       "); write one with `sohusim run --profile FILE`");
  }
  const Reader rd(source);
  if (!j.is_object() || j.find("format") == j.end() || j["format"] != kFormat) {
    std::string hint;
    if (j.is_object() && (j.contains("traceEvents") || j.contains("displayTimeUnit")))
      hint = " (this is a Chrome JSON trace)";
    else if (j.is_object() && j.contains("ttft_ms"))
      hint = " (this is `sohusim run --json` output)";
    throw ProfileError(source + ": not a sohusim profile: no \"format\": \"" + kFormat + "\"" + hint +
                       "; write one with `sohusim run --profile FILE`");
  }
  const double version = rd.number(j, "$", "version");
  if (version != RunProfile::kVersion)
    rd.fail("$.version", "profile version " + std::to_string(static_cast<long long>(version)) +
                             " is not supported (this sohusim reads version " + std::to_string(RunProfile::kVersion) +
                             ")");
  RunProfile p;
  p.start_ns = rd.number(j, "$", "start_ns");
  p.end_ns = rd.number(j, "$", "end_ns");
  if (j.contains("summary")) {
    const json& s = j["summary"];
    if (!s.is_object()) rd.fail("$.summary", "expected an object");
    for (const auto& [k, v] : s.items()) {
      if (v.is_number())
        p.summary[k] = v.get<double>();
      else if (v.is_string())
        p.summary_text[k] = v.get<std::string>();
      else
        rd.fail("$.summary." + k, "expected a number or a string");
    }
  }
  if (j.contains("configuration")) {
    const json& c = j["configuration"];
    if (!c.is_object()) rd.fail("$.configuration", "expected an object");
    for (const auto& [k, v] : c.items()) {
      if (!v.is_string()) rd.fail("$.configuration." + k, "expected a string");
      p.configuration[k] = v.get<std::string>();
    }
  }
  const json& units = rd.array(j, "$", "units");
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::string at = "$.units[" + std::to_string(i) + "]";
    Unit u;
    u.place = rd.text(units[i], at, "place");
    u.resource = rd.resource(rd.text(units[i], at, "resource"), at + ".resource");
    u.peak = rd.number(units[i], at, "peak");
    p.units.push_back(u);
  }
  const json& ops = rd.array(j, "$", "ops");
  p.ops.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string at = "$.ops[" + std::to_string(i) + "]";
    const json& o = ops[i];
    OpRecord op;
    const double id = rd.number(o, at, "id");
    if (id != static_cast<double>(i)) rd.fail(at + ".id", "must equal the op's index " + std::to_string(i));
    op.id = static_cast<std::uint32_t>(i);
    op.name = rd.text(o, at, "name");
    op.kind = rd.text(o, at, "kind");
    op.phase = rd.text(o, at, "phase", false);
    op.place = rd.text(o, at, "place");
    op.layer = static_cast<int>(rd.number(o, at, "layer", false, -1));
    op.launch = static_cast<std::uint64_t>(rd.number(o, at, "launch", false, 0));
    op.start_ns = rd.number(o, at, "start_ns");
    op.duration_ns = rd.number(o, at, "duration_ns");
    rd.per_resource(o, at, "work", op.work);
    op.padded_flops = rd.number(o, at, "padded_flops", false, 0);
    const json& deps = rd.array(o, at, "deps");
    for (std::size_t d = 0; d < deps.size(); ++d) {
      if (!deps[d].is_number_unsigned()) rd.fail(at + ".deps[" + std::to_string(d) + "]", "expected an op id");
      op.deps.push_back(deps[d].get<std::uint32_t>());
    }
    rd.stalls(o, at, op.stalls);
    p.ops.push_back(std::move(op));
  }
  const json& windows = rd.array(j, "$", "windows");
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const std::string at = "$.windows[" + std::to_string(i) + "]";
    const json& o = windows[i];
    Window w;
    w.place = rd.text(o, at, "place");
    w.start_ns = rd.number(o, at, "start_ns");
    w.end_ns = rd.number(o, at, "end_ns");
    w.busy = rd.number(o, at, "busy", false, -1);
    rd.per_resource(o, at, "rate", w.rate);
    rd.stalls(o, at, w.stalls);
    p.windows.push_back(w);
  }
  const json& commands = rd.array(j, "$", "commands");
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const std::string at = "$.commands[" + std::to_string(i) + "]";
    const json& o = commands[i];
    CommandStat c;
    c.place = rd.text(o, at, "place");
    c.name = rd.text(o, at, "name");
    c.count = rd.number(o, at, "count");
    c.mean = rd.number(o, at, "mean", false);
    c.p50 = rd.number(o, at, "p50", false);
    c.p90 = rd.number(o, at, "p90", false);
    c.p99 = rd.number(o, at, "p99", false);
    c.max = rd.number(o, at, "max", false);
    rd.per_resource(o, at, "work", c.work);
    p.commands.push_back(c);
  }
  const json& hosts = rd.array(j, "$", "hosts");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string at = "$.hosts[" + std::to_string(i) + "]";
    const json& o = hosts[i];
    HostActivity h;
    h.place = rd.text(o, at, "place");
    h.busy_ns = rd.number(o, at, "busy_ns", false);
    h.api_calls = rd.number(o, at, "api_calls", false);
    h.commands = rd.number(o, at, "commands", false);
    h.wait_ns = rd.number(o, at, "wait_ns", false);
    p.hosts.push_back(h);
  }
  if (j.contains("facts")) {
    const json& f = j["facts"];
    if (!f.is_object()) rd.fail("$.facts", "expected an object keyed by place");
    for (const auto& [place, kv] : f.items()) {
      if (!kv.is_object()) rd.fail("$.facts." + place, "expected an object");
      for (const auto& [k, v] : kv.items()) {
        if (!v.is_number()) rd.fail("$.facts." + place + "." + k, "expected a number");
        p.facts[place][k] = v.get<double>();
      }
    }
  }
  try {
    if (j.contains("serving")) p.serving = read_serving(j["serving"], "$.serving");
    p.validate();
  } catch (const ProfileError& e) {
    throw ProfileError(source + ": " + e.what());
  }
  return p;
}

RunProfile read_profile_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ProfileError(path + ": is a directory; give the profile file (`sohusim run --profile FILE`)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ProfileError(path + ": cannot open: " + std::strerror(errno));
  return read_profile(in, path);
}

}  // namespace sohusim::profiler
