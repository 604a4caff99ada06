#pragma once
// Checking a sweep before any point runs, and the key that identifies each point's result.
//
// Every point is checked as its run would check it: its arguments parsed by the command line
// (`check_args`, given by the caller that owns the command line), its configuration resolved
// against the full schema (platform::resolve_configuration: unknown keys, values out of range,
// presets that do not exist) and its model looked up. Every problem is reported with the spec
// file, line and column of the value that caused it and the key:
//
//   study.yaml:9:35: device.matrix.engines: value 0 is below the minimum; allowed: 1 .. 4096
//
// A point's key is FNV-1a 64 of its command, its options other than the configuration's (the
// model, batch, scenario...) and the hash of its resolved configuration: two spellings of the
// same machine (a preset named or left as the default) share a key, so a resumed sweep never
// runs a finished point again.
#include <functional>
#include <string>
#include <vector>

#include "sohusim/studies/sweep_spec.hpp"

namespace sohusim::studies {

/// Parses `args` (a point's sohusim arguments) as the command line would; "" or the error.
using ArgsCheck = std::function<std::string(const std::vector<std::string>& args)>;

/// Checks every point and sets its key. Throws std::invalid_argument with every problem, one
/// per line (at most one per distinct message), before anything runs.
void prepare_points(const SweepSpec& spec, std::vector<SweepPoint>& points, const std::vector<std::string>& config_dirs,
                    const ArgsCheck& check_args);

}  // namespace sohusim::studies
