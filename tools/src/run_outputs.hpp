#pragma once
// What every simulating subcommand writes besides its summary: the statistics
// file and the trace, opened before the run (a bad path is a usage error, found
// before minutes of simulation) and written whatever happens to the run.

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"

namespace sohusim::tools {

// The options every simulating subcommand takes: configuration files and overrides, the
// stats file, the trace, and a JSON summary.
struct OutputOptions {
  std::vector<std::string> files, sets;
  std::string trace, stats;
  bool json = false;
};
void add_output_options(CLI::App* cmd, OutputOptions& o, const std::string& config_help);
// Loads the files, applies the overrides, then --trace / --stats as trace.file / stats.file.
void apply_output_options(config::ConfigLoader& loader, const OutputOptions& o);

// Runs the kernel until it runs out of events or reaches sim.stop_time. A model's
// exception ends the run with exit code 1 and its message; what was produced stays.
struct SimulationRun {
  int exit_code = 0;
  std::string failure;
  double wall_seconds = 0;
  bool at_stop_time = false;  // the kernel stopped for sim.stop_time (else it ran out of events)
  std::string ended_at;       // the simulated time it stopped at, as SystemC prints it
  // Why work the caller expected was left unfinished: "stopped at sim.stop_time (T)", or,
  // when the kernel ran out of events first, that no model had anything left to do at T
  // (a model lost the work: a simulator bug to report).
  std::string unfinished() const;
};
SimulationRun run_simulation(const config::Config& config);

// Creates the stats file now to prove the path works; throws UsageError if not.
void check_stats_path(const std::string& path);
// The file's extension decides (.csv / .json); otherwise `format` (stats.format) does. False,
// with the reason on stderr, when the file could not be written (a full disk): the command
// then ends with exit code 1, its other outputs written.
bool write_stats(const counters::Registry& registry, const std::string& path, const std::string& format);
// A recorder writing `path` in `format` (auto | perfetto | json); disabled when
// path is empty. A path that cannot be created is a UsageError.
std::unique_ptr<counters::TraceRecorder> open_trace(const std::string& path, const std::string& format);

}  // namespace sohusim::tools
