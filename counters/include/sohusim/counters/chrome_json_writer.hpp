// ChromeJsonWriter: the small-run fallback output, Chrome's trace event JSON format, which
// ui.perfetto.dev, chrome://tracing and any JSON tool read. Larger and slower than Perfetto's
// protobuf (see docs/trace.md), but readable by eye.
//
// Mapping from the trace model:
//  - the file is {"displayTimeUnit":"ns","traceEvents":[ ...one event per line... ]}; close()
//    (or the destructor, also during exception unwinding) writes the closing "]}";
//  - timestamps and durations are microseconds with exactly three decimals, printed from the
//    integer nanoseconds (1234 ns -> 1.234), so no precision is lost and no floating point is
//    involved;
//  - process and thread tracks get "M" process_name / thread_name metadata (pid = the process
//    track's pid, tid = the thread track's tid) before their first event;
//  - on process and thread tracks: complete slices are "X", begin/end "B"/"E", instants "i"
//    with thread scope;
//  - on async tracks: "b"/"e" nestable async events, cat = the async track's name and a fresh
//    id per slice, so overlaps need no lanes (lane tracks the recorder made are folded back
//    into their async track); instants are process-scoped "i";
//  - counters are "C" events whose args are {<track name>: value}; a unit goes into the name;
//  - flows become v1 flow events written at close(), in time order per id: "s" at the first
//    point, "t" at the next ones, "f" at a termination (bp:"e"), at the slice's timestamp on its
//    pid/tid. Slices are recorded when they end, out of time order, so the points are held
//    until then (32 bytes each). Points on async tracks are left out: a v1 flow event binds to
//    a slice of a thread track only (the Perfetto output keeps them);
//  - args go to "args"; a correlation id becomes the arg "correlation_id";
//  - strings are escaped for any input bytes; invalid UTF-8 becomes U+FFFD.
// The only state that grows is the list of flow points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sohusim/counters/trace_writer.hpp"

namespace sohusim::counters {

struct ChromeJsonWriterOptions {
  // The buffer goes to the file once it holds this many bytes.
  std::size_t flush_chunk = kTraceFlushChunk;
};

class ChromeJsonWriter final : public TraceWriter {
 public:
  // Opens (truncates) `path`; throws TraceError naming the path and strerror on failure.
  explicit ChromeJsonWriter(std::string path, ChromeJsonWriterOptions options = {});
  ~ChromeJsonWriter() override;  // close(); errors are swallowed, call close() to see them
  ChromeJsonWriter(const ChromeJsonWriter&) = delete;
  ChromeJsonWriter& operator=(const ChromeJsonWriter&) = delete;

  void add_track(const TrackInfo& track) override;
  void write(const TraceEvent& event) override;
  void flush() override;
  void close() override;
  std::uint64_t bytes_written() const override;
  const std::string& path() const override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Appends `bytes` as a quoted JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 sequences (each maximal invalid subpart) replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view bytes);

// Appends integer nanoseconds as microseconds with exactly three decimals ("1.234", "0.001").
void append_json_microseconds(std::string& out, TimeNs ns);

}  // namespace sohusim::counters
