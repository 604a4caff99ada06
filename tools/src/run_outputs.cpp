#include "run_outputs.hpp"

#include <fstream>

#include "cli.hpp"
#include "sohusim/counters/trace_writer.hpp"

namespace sohusim::tools {

void check_stats_path(const std::string& path) {
  if (!path.empty() && !std::ofstream(path)) {
    throw UsageError("--stats / stats.file: cannot create '" + path + "'");
  }
}

void write_stats(const counters::Registry& registry, const std::string& path, const std::string& format) {
  std::ofstream os(path);
  if (!os) throw std::runtime_error("cannot write stats file '" + path + "'");
  auto ends_with = [&](const char* ext) {
    const std::size_t n = std::char_traits<char>::length(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  if (ends_with(".csv") || (!ends_with(".json") && format == "csv")) {
    registry.write_csv(os);
  } else {
    registry.write_json(os);
  }
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

}  // namespace sohusim::tools
