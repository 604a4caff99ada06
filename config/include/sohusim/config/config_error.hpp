// sohusim/config/config_error.hpp — what is wrong with a configuration, and where.
//
// Configuration problems are reported the way a compiler reports errors: one line per
// problem, naming the file, line and column, the key, what is wrong and what is allowed:
//
//   configs/x.yaml:12:5: hbm.timing.tRC: value "20 ns" is below the minimum; allowed: 30 ns .. 100 ns
//   --set: sim.sed: unknown key; did you mean `sim.seed`?; allowed: keys of `sim`: clocks, ...
//   sim.seed: required key is missing; allowed: an integer
//
// Validation collects every problem it finds before throwing, so that one run shows the
// user all of them rather than one per attempt.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sohusim::config {

struct ConfigDiagnostic {
  /// Where the offending text is: a file path, "--set" for a command-line override, or
  /// empty when the problem has no place in any file (a required key nobody wrote).
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
  /// The dotted key path ("hbm.timing.tRC", "hosts[1].cores"); empty for whole-file problems.
  std::string key;
  /// What is wrong, e.g. `value "20 ns" is below the minimum`.
  std::string message;
  /// What would be accepted, e.g. "30 ns .. 100 ns"; empty when there is nothing to list.
  std::string allowed;

  /// `file:line:column: key: message; allowed: allowed`, leaving out the parts that are empty.
  std::string to_string() const {
    std::string out;
    if (!file.empty()) {
      out += file;
      if (line > 0) {
        out += ":" + std::to_string(line);
        if (column > 0) out += ":" + std::to_string(column);
      }
      out += ": ";
    }
    if (!key.empty()) out += key + ": ";
    out += message;
    if (!allowed.empty()) out += "; allowed: " + allowed;
    return out;
  }
};

/// Thrown by the config loader with every diagnostic it found; what() is their
/// to_string() lines joined by newlines.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<ConfigDiagnostic> diagnostics)
      : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

  const std::vector<ConfigDiagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  static std::string join(const std::vector<ConfigDiagnostic>& diagnostics) {
    std::string text;
    for (const ConfigDiagnostic& diagnostic : diagnostics) {
      if (!text.empty()) text += '\n';
      text += diagnostic.to_string();
    }
    return text;
  }

  std::vector<ConfigDiagnostic> diagnostics_;
};

}  // namespace sohusim::config
