#include "sohusim/studies/sweep_validation.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sohusim/config/config_error.hpp"
#include "sohusim/platform/run_configuration.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace sohusim::studies {

namespace {

// Options that choose the machine: they are part of the resolved configuration's hash.
bool configuration_option(const std::string& name) {
  static const std::set<std::string> names = {"system", "arch", "hbm", "config", "fidelity", "mode"};
  return names.count(name) > 0 || name.find('.') != std::string::npos;
}

struct Named {
  std::string name, value;
};

// Every (name, value) a point gets: the fixed ones, then its parameters (the seed of a repetition).
std::vector<Named> values_of(const SweepSpec& spec, const SweepPoint& p) {
  std::vector<Named> out;
  for (const auto& [k, v] : spec.fixed) out.push_back({k, v.text});
  for (const auto& [k, v] : p.params) {
    if (k == "repeat" && spec.repeat > 1)
      out.push_back({spec.seed_option, v});
    else
      out.push_back({k, v});
  }
  return out;
}

platform::ConfigChoice choice_of(const SweepSpec& spec, const std::vector<Named>& values,
                                 const std::vector<std::string>& dirs) {
  platform::ConfigChoice c;
  c.config_dirs = dirs;
  if (spec.command == "gemm") c.arch = "sohu";  // gemm has no system: its device is the arch alone
  for (const Named& n : values) {
    if (n.name == "system") c.system = n.value;
    if (n.name == "arch") c.arch = n.value;
    if (n.name == "hbm") c.hbm = n.value;
    if (n.name == "config") c.configs.push_back(n.value);
    if (n.name == "fidelity") c.fidelity = n.value;
    if (n.name == "mode") c.mode = n.value;
    if (n.name.find('.') != std::string::npos) c.overrides.push_back(n.name + "=" + n.value);
  }
  return c;
}

std::string choice_text(const platform::ConfigChoice& c) {
  nlohmann::json j = {{"s", c.system},    {"a", c.arch},     {"h", c.hbm}, {"c", c.configs},
                      {"o", c.overrides}, {"f", c.fidelity}, {"m", c.mode}};
  return j.dump();
}

// The value among `values` a message is about: the first whose option (--name) or key it
// names; else the first of `fallback` present; else none.
const Named* culprit(const std::vector<Named>& values, const std::string& message,
                     const std::vector<std::string>& fallback = {}) {
  for (const Named& n : values) {
    const std::string flag = n.name.find('.') != std::string::npos ? n.name : "--" + n.name;
    if (message.find(flag) != std::string::npos) return &n;
  }
  for (const std::string& f : fallback)
    for (const Named& n : values)
      if (n.name == f && message.find(n.value) != std::string::npos) return &n;
  return nullptr;
}

}  // namespace

void prepare_points(const SweepSpec& spec, std::vector<SweepPoint>& points, const std::vector<std::string>& config_dirs,
                    const ArgsCheck& check_args) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  auto report = [&](const Named* n, const std::string& key, const std::string& message) {
    std::string line = n ? spec.where(spec.place_of(n->name, n->value)) : spec.source + ": ";
    line += (key.empty() ? (n ? n->name : std::string("point")) : key) + ": " + message;
    if (seen.insert(line).second) problems.push_back(line);
  };
  std::map<std::string, std::string> config_hash;  // choice -> hash, or "" when it failed
  std::map<std::string, bool> models;
  for (SweepPoint& p : points) {
    const std::vector<Named> values = values_of(spec, p);
    if (check_args) {
      const std::string err = check_args(p.args);
      if (!err.empty()) report(culprit(values, err), "", err);
    }
    const platform::ConfigChoice choice = choice_of(spec, values, config_dirs);
    const std::string ct = choice_text(choice);
    auto it = config_hash.find(ct);
    if (it == config_hash.end()) {
      std::string hash;
      try {
        hash = platform::resolve_configuration(choice).hash;
      } catch (const config::ConfigError& e) {
        for (const config::ConfigDiagnostic& d : e.diagnostics()) {
          const Named* n = nullptr;
          for (const Named& v : values) n = n == nullptr && v.name == d.key ? &v : n;
          if (n != nullptr) {
            report(n, d.key, d.message + (d.allowed.empty() ? "" : "; allowed: " + d.allowed));
          } else {
            report(nullptr, "", d.to_string());
          }
        }
      } catch (const std::invalid_argument& e) {
        report(culprit(values, e.what(), {"arch", "hbm", "system", "config"}), "", e.what());
      }
      it = config_hash.emplace(ct, hash).first;
    }
    if (it->second.empty()) continue;
    std::vector<std::pair<std::string, std::string>> options;
    for (const Named& n : values) {
      if (n.name == "model" && models.find(n.value) == models.end()) {
        try {
          workloads::load_model(n.value, config_dirs);
          models[n.value] = true;
        } catch (const std::exception& e) {
          models[n.value] = false;
          report(&n, "", e.what());
        }
      }
      if (!configuration_option(n.name)) options.emplace_back(n.name, n.value);
    }
    std::sort(options.begin(), options.end());
    const nlohmann::json key = {{"command", spec.command}, {"options", options}, {"configuration", it->second}};
    p.key = platform::fnv1a_hex(key.dump());
  }
  if (!problems.empty()) {
    // In file order: "<source>:<line>:<column>: ..." sorted by line and column.
    auto place = [&spec](const std::string& p) {
      int line = 0, column = 0;
      std::sscanf(p.c_str() + std::min(p.size(), spec.source.size()), ":%d:%d", &line, &column);
      return std::make_pair(line, column);
    };
    std::stable_sort(problems.begin(), problems.end(),
                     [&](const std::string& a, const std::string& b) { return place(a) < place(b); });
    std::string text;
    for (const std::string& s : problems) text += (text.empty() ? "" : "\n") + s;
    throw std::invalid_argument(text);
  }
  // Two points with one key would overwrite each other's row: a spec that names one machine
  // twice (an axis over a value equal to the default) is told so.
  std::map<std::string, unsigned> first;
  for (const SweepPoint& p : points) {
    auto [at, fresh] = first.emplace(p.key, p.index);
    if (!fresh) {
      std::string a, b;
      for (const auto& [k, v] : points[at->second].params) a += (a.empty() ? "" : ", ") + k + "=" + v;
      for (const auto& [k, v] : p.params) b += (b.empty() ? "" : ", ") + k + "=" + v;
      throw std::invalid_argument(spec.source + ": points " + std::to_string(at->second) + " (" + a + ") and " +
                                  std::to_string(p.index) + " (" + b +
                                  ") simulate the same configuration with the same options; drop one of the values");
    }
  }
}

}  // namespace sohusim::studies
