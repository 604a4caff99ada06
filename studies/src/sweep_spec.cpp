#include "sohusim/studies/sweep_spec.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "sohusim/config/units.hpp"
#include "sohusim/config/yaml_aliases.hpp"

namespace sohusim::studies {

namespace {

SpecPlace place(const YAML::Node& n) {
  if (!n || n.Mark().is_null()) return {};
  return {n.Mark().line + 1, n.Mark().column + 1};
}

[[noreturn]] void fail(const SweepSpec& s, const YAML::Node& n, const std::string& key, const std::string& msg) {
  throw std::invalid_argument(s.where(place(n)) + key + ": " + msg);
}

void check_keys(const SweepSpec& s, const YAML::Node& map, const std::string& where,
                const std::set<std::string>& allowed) {
  for (const auto& kv : map) {
    const std::string k = kv.first.as<std::string>();
    if (allowed.count(k) == 0) {
      std::string names;
      for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
      fail(s, kv.first, where.empty() ? k : where + "." + k, "unknown key (allowed: " + names + ")");
    }
  }
}

// Options whose output would be shared by every point, or that the sweep sets itself.
const std::set<std::string>& refused_options() {
  static const std::set<std::string> names = {"json", "trace",          "stats",   "profile", "report",
                                              "csv",  "write-requests", "capture", "sample",  "configs"};
  return names;
}

SpecValue scalar(const SweepSpec& s, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) fail(s, n, key, "expected a single value (a number, a word or a quantity such as `100 GB/s`)");
  return {n.Scalar(), place(n)};
}

Axis parse_axis(const SweepSpec& s, const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) fail(s, n, where, "an axis is a mapping {name: KEY, values: [...]}");
  check_keys(s, n, where, {"name", "values"});
  Axis a;
  a.at = place(n);
  if (!n["name"] || !n["name"].IsScalar() || n["name"].Scalar().empty())
    fail(s, n, where + ".name", "missing: an option of the command or a config key");
  a.name = n["name"].Scalar();
  if (refused_options().count(a.name))
    fail(s, n["name"], where + ".name", "`" + a.name + "` cannot vary in a sweep (a point's output is its JSON)");
  const YAML::Node v = n["values"];
  if (!v || !v.IsSequence() || v.size() == 0) fail(s, v ? v : n, where + ".values", "a non-empty list of values");
  for (std::size_t i = 0; i < v.size(); ++i)
    a.values.push_back(scalar(s, v[i], where + ".values[" + std::to_string(i) + "]"));
  return a;
}

}  // namespace

std::string SweepSpec::where(const SpecPlace& at) const {
  std::string w = source;
  if (at.line > 0) w += ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
  return w + ": ";
}

SpecPlace SweepSpec::place_of(const std::string& param, const std::string& value) const {
  for (const AxisGroup& g : groups) {
    for (const Axis& a : g.axes) {
      if (a.name != param) continue;
      for (const SpecValue& v : a.values)
        if (v.text == value) return v.at;
      return a.at;
    }
  }
  for (const auto& [k, v] : fixed)
    if (k == param && v.text == value) return v.at;
  for (const auto& [k, v] : fixed)
    if (k == param) return v.at;
  return {};
}

SweepSpec SweepSpec::parse(const std::string& yaml, const std::string& source) {
  SweepSpec s;
  s.source = source;
  YAML::Node root;
  try {
    if (const auto alias = config::first_yaml_alias(yaml))
      throw std::invalid_argument(source + ":" + std::to_string(alias->line) + ":" + std::to_string(alias->column) +
                                  ": YAML aliases are not accepted (write the value out)");
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap())
    throw std::invalid_argument(source + ": a sweep spec is a mapping (name, command, fixed, axes, ...)");
  check_keys(s, root, "", {"name", "command", "fixed", "axes", "exclude", "repeat", "seed_option", "timeout"});
  if (root["name"]) s.name = scalar(s, root["name"], "name").text;
  if (root["command"]) {
    s.command = scalar(s, root["command"], "command").text;
    if (s.command != "run" && s.command != "serve" && s.command != "gemm")
      fail(s, root["command"], "command", "`" + s.command + "` (allowed: run, serve, gemm)");
  }
  std::set<std::string> named;
  if (const YAML::Node f = root["fixed"]) {
    if (!f.IsMap()) fail(s, f, "fixed", "a mapping of option or config key to value");
    for (const auto& kv : f) {
      const std::string k = kv.first.as<std::string>();
      if (refused_options().count(k))
        fail(s, kv.first, "fixed." + k, "`" + k + "` cannot be set in a sweep (a point's output is its JSON)");
      if (kv.second.IsSequence()) {  // a repeatable option: --config a --config b
        for (std::size_t i = 0; i < kv.second.size(); ++i)
          s.fixed.emplace_back(k, scalar(s, kv.second[i], "fixed." + k + "[" + std::to_string(i) + "]"));
      } else {
        s.fixed.emplace_back(k, scalar(s, kv.second, "fixed." + k));
      }
      named.insert(k);
    }
  }
  const YAML::Node axes = root["axes"];
  if (axes) {
    if (!axes.IsSequence()) fail(s, axes, "axes", "a list of axes {name, values} or zipped groups {zip: [...]}");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string where = "axes[" + std::to_string(i) + "]";
      const YAML::Node n = axes[i];
      AxisGroup g;
      if (n.IsMap() && n["zip"]) {
        check_keys(s, n, where, {"zip"});
        const YAML::Node z = n["zip"];
        if (!z.IsSequence() || z.size() == 0) fail(s, z, where + ".zip", "a non-empty list of axes");
        g.zipped = true;
        for (std::size_t j = 0; j < z.size(); ++j)
          g.axes.push_back(parse_axis(s, z[j], where + ".zip[" + std::to_string(j) + "]"));
        for (const Axis& a : g.axes) {
          if (a.values.size() != g.axes.front().values.size())
            throw std::invalid_argument(s.where(a.at) + a.name + ": a zipped axis has " +
                                        std::to_string(a.values.size()) + " values, `" + g.axes.front().name +
                                        "` has " + std::to_string(g.axes.front().values.size()) +
                                        " (zipped axes move together: equal lengths)");
        }
      } else {
        g.axes.push_back(parse_axis(s, n, where));
      }
      for (const Axis& a : g.axes) {
        if (!named.insert(a.name).second)
          throw std::invalid_argument(s.where(a.at) + a.name + ": named twice (in `fixed` or another axis)");
      }
      s.groups.push_back(std::move(g));
    }
  }
  if (const YAML::Node ex = root["exclude"]) {
    if (!ex.IsSequence()) fail(s, ex, "exclude", "a list of mappings {axis: value, ...}");
    for (std::size_t i = 0; i < ex.size(); ++i) {
      const std::string where = "exclude[" + std::to_string(i) + "]";
      if (!ex[i].IsMap() || ex[i].size() == 0) fail(s, ex[i], where, "a non-empty mapping {axis: value, ...}");
      std::vector<std::pair<std::string, std::string>> entry;
      for (const auto& kv : ex[i]) {
        const std::string k = kv.first.as<std::string>();
        bool is_axis = false;
        for (const AxisGroup& g : s.groups)
          for (const Axis& a : g.axes) is_axis = is_axis || a.name == k;
        if (!is_axis) fail(s, kv.first, where + "." + k, "not an axis of this sweep");
        entry.emplace_back(k, scalar(s, kv.second, where + "." + k).text);
      }
      s.exclude.push_back(std::move(entry));
    }
  }
  if (const YAML::Node r = root["repeat"]) {
    const std::string t = scalar(s, r, "repeat").text;
    try {
      std::size_t used = 0;
      const long v = std::stol(t, &used);
      if (used != t.size() || v < 1 || v > 1000) throw std::out_of_range(t);
      s.repeat = static_cast<unsigned>(v);
    } catch (const std::exception&) {
      fail(s, r, "repeat", "`" + t + "` (allowed: 1 .. 1000)");
    }
  }
  if (const YAML::Node so = root["seed_option"]) s.seed_option = scalar(s, so, "seed_option").text;
  if (s.repeat > 1 && named.count(s.seed_option))
    fail(s, root["repeat"], "repeat", "repetitions set --" + s.seed_option + " themselves; do not fix or vary it");
  if (const YAML::Node t = root["timeout"]) {
    const std::string text = scalar(s, t, "timeout").text;
    try {
      // Wall-clock limits are minutes and hours; the configuration's time units stop at s.
      double scale = 1;
      std::string seconds = text;
      for (const auto& [unit, factor] : {std::pair<const char*, double>{" min", 60.0}, {" h", 3600.0}}) {
        const std::string u = unit;
        if (text.size() > u.size() && text.compare(text.size() - u.size(), u.size(), u) == 0) {
          seconds = text.substr(0, text.size() - u.size()) + " s";
          scale = factor;
        }
      }
      s.timeout_s = config::parse_quantity(seconds, config::Dimension::Time) * scale;
    } catch (const std::exception& e) {
      fail(s, t, "timeout", std::string(e.what()) + " (also: min, h)");
    }
    if (!(s.timeout_s > 0) || s.timeout_s > 7 * 24 * 3600.0)
      fail(s, t, "timeout", "`" + text + "` (allowed: more than 0 s, at most 7 days)");
  }
  return s;
}

SweepSpec SweepSpec::load(const std::string& path) {
  std::ifstream is(path);
  if (!is) throw std::invalid_argument(path + ": cannot read the sweep spec");
  std::ostringstream text;
  text << is.rdbuf();
  return parse(text.str(), path);
}

namespace {

// The arguments of one option: --name value, --flag, or --set key=value.
void add_argument(std::vector<std::string>& args, const std::string& name, const std::string& value) {
  if (name.find('.') != std::string::npos) {
    args.push_back("--set");
    args.push_back(name + "=" + value);
  } else if (value == "true" || value == "false") {
    if (value == "true") args.push_back("--" + name);
  } else {
    args.push_back("--" + name);
    args.push_back(value);
  }
}

}  // namespace

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  std::vector<SweepPoint> out;
  std::size_t combos = 1;
  for (const AxisGroup& g : spec.groups) combos *= g.size();
  unsigned index = 0;
  for (std::size_t c = 0; c < combos; ++c) {
    // Mixed-radix digits of c, the first group most significant.
    std::vector<std::size_t> digit(spec.groups.size());
    std::size_t rest = c;
    for (std::size_t g = spec.groups.size(); g-- > 0;) {
      digit[g] = rest % spec.groups[g].size();
      rest /= spec.groups[g].size();
    }
    std::vector<std::pair<std::string, std::string>> params;
    for (std::size_t g = 0; g < spec.groups.size(); ++g)
      for (const Axis& a : spec.groups[g].axes) params.emplace_back(a.name, a.values[digit[g]].text);
    bool excluded = false;
    for (const auto& entry : spec.exclude) {
      bool all = true;
      for (const auto& [k, v] : entry) {
        bool match = false;
        for (const auto& [pk, pv] : params) match = match || (pk == k && pv == v);
        all = all && match;
      }
      excluded = excluded || all;
    }
    if (excluded) continue;
    for (unsigned r = 0; r < spec.repeat; ++r) {
      SweepPoint p;
      p.index = index++;
      p.params = params;
      p.args.push_back(spec.command);
      for (const auto& [k, v] : spec.fixed) add_argument(p.args, k, v.text);
      for (const auto& [k, v] : params) add_argument(p.args, k, v);
      if (spec.repeat > 1) {
        p.params.emplace_back("repeat", std::to_string(r + 1));
        add_argument(p.args, spec.seed_option, std::to_string(r + 1));
      }
      p.args.push_back("--json");
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace sohusim::studies
