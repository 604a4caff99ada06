#include "run_outputs.hpp"

#include <chrono>
#include <fstream>
#include <iostream>

#include <systemc>

#include "cli.hpp"
#include "sohusim/counters/trace_writer.hpp"

namespace sohusim::tools {

void check_stats_path(const std::string& path) {
  if (!path.empty() && !std::ofstream(path)) {
    throw UsageError("--stats / stats.file: cannot create '" + path + "'");
  }
}

bool write_stats(const counters::Registry& registry, const std::string& path, const std::string& format) {
  std::ofstream os(path);
  auto ends_with = [&](const char* ext) {
    const std::size_t n = std::char_traits<char>::length(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  if (os) {
    if (ends_with(".csv") || (!ends_with(".json") && format == "csv")) {
      registry.write_csv(os);
    } else {
      registry.write_json(os);
    }
    os.flush();
  }
  if (!os) {
    std::cerr << "sohusim: --stats / stats.file: writing '" << path << "' failed (device full or I/O error)\n";
    return false;
  }
  return true;
}

std::unique_ptr<counters::TraceRecorder> open_trace(const std::string& path, const std::string& format) {
  if (path.empty()) return std::make_unique<counters::TraceRecorder>(nullptr);
  const auto fmt = format == "json"       ? counters::TraceFormat::ChromeJson
                   : format == "perfetto" ? counters::TraceFormat::Perfetto
                                          : counters::TraceFormat::Auto;
  try {
    return std::make_unique<counters::TraceRecorder>(counters::make_trace_writer(path, fmt));
  } catch (const std::exception& e) {
    throw UsageError(std::string("--trace / trace.file: ") + e.what());
  }
}

void add_output_options(CLI::App* cmd, OutputOptions& o, const std::string& config_help) {
  cmd->add_option("--config", o.files, config_help);
  cmd->add_option("--set", o.sets, "override key.path=value (repeatable)");
  cmd->add_option("--trace", o.trace, "write a timeline: Perfetto protobuf, or Chrome JSON for *.json");
  cmd->add_option("--stats", o.stats, "write every statistic: JSON, or CSV for *.csv");
  cmd->add_flag("--json", o.json, "print the result as one JSON object");
}

void apply_output_options(config::ConfigLoader& loader, const OutputOptions& o) {
  check_distinct_outputs({{"--trace", o.trace}, {"--stats", o.stats}});
  for (const auto& f : o.files) loader.load_file(f);
  for (const auto& s : o.sets) loader.set(s);
  if (!o.trace.empty()) loader.set("trace.file=" + o.trace);
  if (!o.stats.empty()) loader.set("stats.file=" + o.stats);
}

SimulationRun run_simulation(const config::Config& config) {
  SimulationRun run;
  const sc_core::sc_time limit(config.get_quantity("sim.stop_time"), sc_core::SC_SEC);
  const auto wall0 = std::chrono::steady_clock::now();
  try {
    sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
  } catch (const std::exception& e) {
    run.failure = e.what();
    run.exit_code = kSimulationError;
  }
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  // sc_start returns at the last event before the limit when the next one lies beyond it:
  // the kernel stopped for the limit if it still has something scheduled.
  run.at_stop_time = sc_core::sc_time_stamp() >= limit || sc_core::sc_pending_activity();
  run.ended_at = sc_core::sc_time_stamp().to_string();
  return run;
}

std::string SimulationRun::unfinished() const {
  if (at_stop_time) return "stopped at sim.stop_time (" + ended_at + ")";
  return "the simulation ran out of events at " + ended_at +
         " with work left unfinished (no model had anything scheduled: a simulator bug, please report it)";
}

}  // namespace sohusim::tools
