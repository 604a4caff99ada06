// The sink side of the trace substrate: a TraceWriter turns the validated event stream of a
// TraceRecorder into one file format. Two formats exist:
//  - Perfetto's native protobuf trace (the main output: streamed, interned names, incremental
//    timestamps; opens in ui.perfetto.dev and trace_processor), see perfetto_writer.hpp;
//  - Chrome's JSON trace event format (the small-run fallback, readable by eye and by any JSON
//    tool), see chrome_json_writer.hpp.
//
// Contract between the recorder and a writer:
//  - add_track() is called once per track, a parent before its children, before any event on
//    the track. A writer describes the track lazily, when it first writes an event on it.
//  - write() receives events already checked by the recorder (existing track of the right kind;
//    async slices already moved onto a lane track where they nest). Views inside the event are
//    valid only during the call.
//  - Output is streamed through a bounded buffer that goes to the file only at event/packet
//    boundaries, so the file is well-formed at every flush; close() finishes it and is
//    idempotent.
//  - The same calls produce byte-identical files: nothing that depends on addresses, hashing
//    order or wall-clock time reaches the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sohusim/counters/trace_types.hpp"

namespace sohusim::counters {

// Every failure of the trace substrate (file cannot be opened or written, unknown track, end
// without begin) is reported with this type; messages name the file and the track.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;

  virtual void add_track(const TrackInfo& track) = 0;
  virtual void write(const TraceEvent& event) = 0;
  // Pushes everything recorded so far to the file.
  virtual void flush() = 0;
  // Completes the file; later calls to write() are ignored. Idempotent.
  virtual void close() = 0;
  // Bytes that have reached the file; after close(), the file's size.
  virtual std::uint64_t bytes_written() const = 0;
  // The file written ("" for a writer without a file); used in error messages.
  virtual const std::string& path() const = 0;

 protected:
  TraceWriter() = default;
  TraceWriter(const TraceWriter&) = default;
  TraceWriter& operator=(const TraceWriter&) = default;
};

// Accepts everything and writes nothing: measures the recorder's own cost, and stands in where a
// writer is required but no file is wanted.
class NullTraceWriter final : public TraceWriter {
 public:
  void add_track(const TrackInfo&) override {}
  void write(const TraceEvent&) override {}
  void flush() override {}
  void close() override {}
  std::uint64_t bytes_written() const override { return 0; }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
};

enum class TraceFormat : std::uint8_t {
  Auto,        // Chrome JSON if the path ends in ".json", Perfetto otherwise
  Perfetto,    // protobuf, conventionally "*.pftrace" or "*.perfetto-trace"
  ChromeJson,  // Chrome trace event JSON
};

// The format Auto stands for, given a path. Any other format is returned unchanged.
TraceFormat resolve_trace_format(std::string_view path, TraceFormat format);

// Opens `path` (truncating it) in the requested format. Throws TraceError if the file cannot be
// created; the message names the path and the system's reason.
std::unique_ptr<TraceWriter> make_trace_writer(const std::string& path, TraceFormat format = TraceFormat::Auto);

// The file a writer streams into. It only ever receives whole events/packets, handed over by
// the writer in large chunks, so what is on disk is always a complete prefix of the trace.
class TraceOutputFile {
 public:
  explicit TraceOutputFile(std::string path);  // throws TraceError naming path and strerror
  ~TraceOutputFile();
  TraceOutputFile(const TraceOutputFile&) = delete;
  TraceOutputFile& operator=(const TraceOutputFile&) = delete;

  void write(const void* data, std::size_t size);  // all of it, or throws TraceError
  void close();                                    // idempotent; throws on a failed final flush
  bool is_open() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }
  std::uint64_t bytes_written() const { return bytes_written_; }

 private:
  [[noreturn]] void fail(const char* what, int error) const;

  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t bytes_written_ = 0;
};

// Size of the chunks in which writers hand their buffers to the file.
inline constexpr std::size_t kTraceFlushChunk = std::size_t{256} * 1024;

}  // namespace sohusim::counters
