#pragma once
// SweepSpec: a design-space study as a YAML file, expanded into the points it runs.
//
//   name: hbm-engines
//   command: run                    # run | serve | gemm: the sohusim subcommand of every point
//   fixed:                          # what every point gets
//     model: llama-3-70b            #   a name without a dot: the command's option (--model)
//     system: sohu-8
//     decode-only: true             #   a flag: true gives it, false leaves it out
//     sim.stop_time: 100 s          #   a name with a dot: a config key (--set key=value)
//   axes:                           # crossed with each other, in order (the first varies slowest)
//     - {name: hbm, values: [hbm3e-8000, hbm3e-9600]}
//     - {name: device.matrix.engines, values: [32, 64]}
//     - zip:                        # these move together (equal lengths), crossed with the rest
//         - {name: batch, values: [1, 64]}
//         - {name: prompt, values: [128, 2048]}
//   exclude:                        # points matching every pair of an entry are left out
//     - {hbm: hbm3e-8000, device.matrix.engines: 64}
//   repeat: 2                       # each point this many times, with --seed 1, 2, ...
//   seed_option: seed
//   timeout: 10 min                 # wall time of one point (ms, s, min, h; default 1 h)
//
// Errors name the file, line and column, and the key: unknown keys, empty axes, a zip of
// unequal lengths, an axis named twice, an output option in a point (a point's output is its
// JSON). What a value means is checked later, per point (see sweep_validation.hpp).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sohusim::studies {

struct SpecPlace {
  int line = 0, column = 0;  // 1-based; 0 = unknown
};

struct SpecValue {
  std::string text;  // as written (a YAML scalar)
  SpecPlace at;
};

struct Axis {
  std::string name;  // an option of the command (no dot) or a config key (dotted)
  std::vector<SpecValue> values;
  SpecPlace at;
  bool config_key() const { return name.find('.') != std::string::npos; }
};

/// Axes crossed with the others; a zipped group's axes advance together.
struct AxisGroup {
  std::vector<Axis> axes;
  bool zipped = false;
  std::size_t size() const { return axes.front().values.size(); }
};

struct SweepSpec {
  std::string source;  // the file, for errors
  std::string name, command = "run";
  std::vector<std::pair<std::string, SpecValue>> fixed;  // in file order
  std::vector<AxisGroup> groups;
  std::vector<std::vector<std::pair<std::string, std::string>>> exclude;
  unsigned repeat = 1;
  std::string seed_option = "seed";
  double timeout_s = 3600;

  /// Throws std::invalid_argument "<source>:<line>:<col>: <key>: <message>".
  static SweepSpec parse(const std::string& yaml, const std::string& source);
  static SweepSpec load(const std::string& path);

  /// "<source>:<line>:<col>: " for a place in the file.
  std::string where(const SpecPlace& at) const;
  /// The place of the value `value` of parameter `name` (an axis value, or the fixed entry).
  SpecPlace place_of(const std::string& param, const std::string& value) const;
};

/// One point: its parameters (every axis with its value; "repeat" when repeat > 1) and the
/// sohusim arguments that run it: {command, --opt, value, ..., --set, key=value, ..., --json}.
struct SweepPoint {
  unsigned index = 0;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<std::string> args;
  std::string key;  // set by the caller (resolved configuration and options: sweep_validation.hpp)
};

/// Every point, crossed, zipped and filtered, in order (the first axis varies slowest).
std::vector<SweepPoint> expand(const SweepSpec& spec);

}  // namespace sohusim::studies
