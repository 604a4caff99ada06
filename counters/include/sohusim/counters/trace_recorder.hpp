// TraceRecorder: the front door of the trace substrate. Models (through sim/'s bridge), the
// driver and the tools declare tracks and record slices, instants, counters and flows on them;
// the recorder checks each call and hands it to one TraceWriter (Perfetto protobuf or Chrome
// JSON, see trace_writer.hpp), which streams it to a file.
//
// The trace model (Perfetto's; docs/trace.md has the layout sohusim uses):
//  - process_track(): a host or a device. Gets a pid (its TrackId).
//  - thread_track(): a sequential agent of a process (API thread, command processor, engine,
//    DMA channel). Gets a tid (its TrackId). Slices on it must nest; end() pops the innermost
//    open begin(). complete() slices are not checked for nesting (they may arrive in any
//    order); the Perfetto writer's reorder window puts same-start slices longest first (with
//    the window off, record the outer one first).
//  - async_track(): work that overlaps (transfers in flight). Perfetto only draws nested slices
//    on a track, so the recorder spreads the slices of an async track over *lanes*: the track
//    itself, then child tracks "name #2", "name #3"... created when first needed. A slice goes
//    to the lowest lane whose slices have all ended by its start, so lanes are reused as soon as
//    they are free. On an async track end() closes the oldest open begin() (FIFO).
//  - counter_track(): a sampled value with a unit ("ns", "bytes", "GB/s"...).
//  - Flows join slices across tracks by id; a correlation id is stored with the slice.
//
// Costs: a recorder built without a writer is disabled; every recording call is then an inline
// test of one bool, so instrumentation can stay in hot paths. Names that recur (slice names,
// argument keys known in advance) should be intern()ed once; the string_view overloads exist
// for names made up on the fly and are interned by the writer in bounded tables instead.
//
// Errors (unknown track or name id, a track of the wrong kind, end() without begin(), file I/O)
// throw TraceError with a message naming the file and the track. After close() (or after the
// destructor, which closes), the file is complete; later calls are ignored.
//
// Not thread-safe: one recorder per simulation thread, as SystemC runs one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sohusim/counters/trace_types.hpp"
#include "sohusim/counters/trace_writer.hpp"

namespace sohusim::counters {

class TraceRecorder {
 public:
  using Args = std::initializer_list<Arg>;
  using Flows = std::initializer_list<Flow>;

  explicit TraceRecorder(std::unique_ptr<TraceWriter> writer);  // nullptr = disabled
  ~TraceRecorder();  // closes; errors are swallowed, call close() to see them
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  bool enabled() const { return enabled_; }

  // ---- tracks (return 0 when disabled or closed) ----------------------------------------
  TrackId process_track(std::string_view name);
  TrackId thread_track(TrackId process, std::string_view name);
  TrackId async_track(TrackId parent, std::string_view name);  // parent: any non-counter or 0
  TrackId counter_track(TrackId parent, std::string_view name, std::string_view unit);

  // ---- names ----------------------------------------------------------------------------
  NameId intern(std::string_view name);  // same text, same id; 0 when disabled
  std::string_view name(NameId id) const;

  // ---- events ---------------------------------------------------------------------------
  void begin(TrackId track, TimeNs ts, NameId name, Args args = {}, Flows flows = {},
             std::uint64_t correlation_id = 0) {
    if (enabled_) {
      TraceEvent e = make(EventType::SliceBegin, track, ts, 0, name, {}, args, flows, correlation_id);
      submit(e);
    }
  }
  void begin(TrackId track, TimeNs ts, std::string_view name, Args args = {}, Flows flows = {},
             std::uint64_t correlation_id = 0) {
    if (enabled_) {
      TraceEvent e = make(EventType::SliceBegin, track, ts, 0, 0, name, args, flows, correlation_id);
      submit(e);
    }
  }

  void end(TrackId track, TimeNs ts, Flows flows = {}) {
    if (enabled_) {
      TraceEvent e = make(EventType::SliceEnd, track, ts, 0, 0, {}, {}, flows, 0);
      submit(e);
    }
  }

  void complete(TrackId track, TimeNs start, TimeNs duration, NameId name, Args args = {}, Flows flows = {},
                std::uint64_t correlation_id = 0) {
    if (enabled_) {
      TraceEvent e = make(EventType::Complete, track, start, duration, name, {}, args, flows, correlation_id);
      submit(e);
    }
  }
  void complete(TrackId track, TimeNs start, TimeNs duration, std::string_view name, Args args = {}, Flows flows = {},
                std::uint64_t correlation_id = 0) {
    if (enabled_) {
      TraceEvent e = make(EventType::Complete, track, start, duration, 0, name, args, flows, correlation_id);
      submit(e);
    }
  }

  void instant(TrackId track, TimeNs ts, NameId name, Args args = {}, Flows flows = {},
               std::uint64_t correlation_id = 0) {
    if (enabled_) {
      TraceEvent e = make(EventType::Instant, track, ts, 0, name, {}, args, flows, correlation_id);
      submit(e);
    }
  }
  void instant(TrackId track, TimeNs ts, std::string_view name, Args args = {}, Flows flows = {},
               std::uint64_t correlation_id = 0) {
    if (enabled_) {
      TraceEvent e = make(EventType::Instant, track, ts, 0, 0, name, args, flows, correlation_id);
      submit(e);
    }
  }

  void counter(TrackId track, TimeNs ts, double value) {
    if (enabled_) {
      TraceEvent e = make(EventType::Counter, track, ts, 0, 0, {}, {}, {}, 0);
      e.value = value;
      submit(e);
    }
  }

  // The general entry, for callers whose arguments or flows are built at run time
  // (EventExtras takes pointer + size). Checked like the calls above.
  void record(const TraceEvent& event) {
    if (enabled_) {
      TraceEvent e = event;
      submit(e);
    }
  }

  void flush();  // pushes everything recorded so far to the file
  void close();  // idempotent; later calls are ignored

  std::uint64_t events() const { return events_; }  // calls accepted (a complete() is one)
  std::uint64_t bytes_written() const;              // bytes in the file so far

  // ---- introspection --------------------------------------------------------------------
  std::size_t track_count() const { return tracks_.size(); }  // including async lanes
  const TrackInfo& track(TrackId id) const;                   // throws TraceError if unknown
  const std::string& path() const;                            // "" when disabled
  TraceWriter* writer() { return writer_.get(); }

 private:
  // Per-track state the hot path needs, kept apart from the (larger) TrackInfo.
  struct TrackState {
    TrackKind kind;
    std::uint32_t open_slices = 0;  // thread/process tracks: depth of begin() nesting
    std::uint32_t async = 0;        // async tracks: index into async_ + 1; lanes: 0
  };
  struct Lane {
    TrackId track;
    TimeNs free_at = 0;  // the end of the lane's last slice
    bool open = false;   // holds a begin() not yet ended
  };
  struct AsyncState {
    std::vector<Lane> lanes;               // lanes[0] is the async track itself
    std::deque<std::uint32_t> open_order;  // lanes with an open begin(), oldest first
  };

  static TraceEvent make(EventType type, TrackId track, TimeNs ts, TimeNs duration, NameId id, std::string_view text,
                         Args args, Flows flows, std::uint64_t correlation_id) {
    TraceEvent e;
    e.type = type;
    e.track = track;
    e.ts = ts;
    e.duration = duration;
    e.name_id = id;
    e.name = text;
    e.extras.args = ConstSpan<Arg>(args.begin(), args.size());
    e.extras.flows = ConstSpan<Flow>(flows.begin(), flows.size());
    e.extras.correlation_id = correlation_id;
    return e;
  }

  void submit(TraceEvent& event);  // may redirect event.track to an async lane
  TrackId add_track(TrackInfo info);
  std::uint32_t pick_lane(AsyncState& async, TrackId base, TimeNs start);
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_unknown_track(TrackId id) const;
  std::string describe(TrackId id) const;

  std::unique_ptr<TraceWriter> writer_;
  bool enabled_ = false;
  std::uint64_t events_ = 0;

  std::vector<TrackState> tracks_;  // index = TrackId - 1
  std::vector<TrackInfo> infos_;    // index = TrackId - 1
  std::vector<AsyncState> async_;

  std::deque<std::string> names_;                          // index = NameId - 1; never moves
  std::vector<std::string_view> name_views_;               // index = NameId - 1
  std::unordered_map<std::string_view, NameId> name_ids_;  // keys view names_
};

}  // namespace sohusim::counters
