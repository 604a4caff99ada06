#pragma once
// What every simulating subcommand writes besides its summary: the statistics
// file and the trace, opened before the run (a bad path is a usage error, found
// before minutes of simulation) and written whatever happens to the run.

#include <memory>
#include <string>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"

namespace sohusim::tools {

// Creates the stats file now to prove the path works; throws UsageError if not.
void check_stats_path(const std::string& path);
// The file's extension decides (.csv / .json); otherwise `format` (stats.format) does.
void write_stats(const counters::Registry& registry, const std::string& path, const std::string& format);
// A recorder writing `path` in `format` (auto | perfetto | json); disabled when
// path is empty. A path that cannot be created is a UsageError.
std::unique_ptr<counters::TraceRecorder> open_trace(const std::string& path, const std::string& format);

}  // namespace sohusim::tools
