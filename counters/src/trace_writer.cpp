#include "sohusim/counters/trace_writer.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "sohusim/counters/chrome_json_writer.hpp"
#include "sohusim/counters/perfetto_writer.hpp"

namespace sohusim::counters {

TraceFormat resolve_trace_format(std::string_view path, TraceFormat format) {
  if (format != TraceFormat::Auto) return format;
  constexpr std::string_view kJson = ".json";
  const bool json = path.size() >= kJson.size() && path.compare(path.size() - kJson.size(), kJson.size(), kJson) == 0;
  return json ? TraceFormat::ChromeJson : TraceFormat::Perfetto;
}

std::unique_ptr<TraceWriter> make_trace_writer(const std::string& path, TraceFormat format) {
  switch (resolve_trace_format(path, format)) {
    case TraceFormat::ChromeJson:
      return std::make_unique<ChromeJsonWriter>(path);
    case TraceFormat::Perfetto:
    case TraceFormat::Auto:
      break;
  }
  return std::make_unique<PerfettoWriter>(path);
}

TraceOutputFile::TraceOutputFile(std::string path) : path_(std::move(path)) {
  errno = 0;
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) fail("cannot open for writing", errno);
  // The writers already hand over large chunks; a second stdio buffer would only copy them.
  std::setvbuf(file_, nullptr, _IONBF, 0);
}

TraceOutputFile::~TraceOutputFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void TraceOutputFile::write(const void* data, std::size_t size) {
  if (file_ == nullptr || size == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, size, file_) != size) fail("write failed", errno);
  bytes_written_ += size;
}

void TraceOutputFile::close() {
  if (file_ == nullptr) return;
  std::FILE* f = std::exchange(file_, nullptr);
  errno = 0;
  if (std::fclose(f) != 0) fail("close failed", errno);
}

void TraceOutputFile::fail(const char* what, int error) const {
  std::string message = "trace file '" + path_ + "': " + what;
  if (error != 0) {
    message += ": ";
    message += std::strerror(error);
  }
  throw TraceError(message);
}

}  // namespace sohusim::counters
