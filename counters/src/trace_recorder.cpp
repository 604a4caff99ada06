#include "sohusim/counters/trace_recorder.hpp"

#include <algorithm>
#include <utility>

namespace sohusim::counters {
namespace {

const char* kind_name(TrackKind kind) {
  switch (kind) {
    case TrackKind::Process:
      return "process";
    case TrackKind::Thread:
      return "thread";
    case TrackKind::Async:
      return "async";
    case TrackKind::Counter:
      return "counter";
  }
  return "?";
}

}  // namespace

TraceRecorder::TraceRecorder(std::unique_ptr<TraceWriter> writer)
    : writer_(std::move(writer)), enabled_(writer_ != nullptr) {}

TraceRecorder::~TraceRecorder() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

// ---- errors -------------------------------------------------------------------------------

const std::string& TraceRecorder::path() const {
  static const std::string kNone;
  return writer_ ? writer_->path() : kNone;
}

void TraceRecorder::fail(const std::string& message) const {
  throw TraceError("trace '" + path() + "': " + message);
}

std::string TraceRecorder::describe(TrackId id) const {
  const TrackInfo& info = infos_[id - 1];
  return std::string(kind_name(info.kind)) + " track '" + info.name + "' (id " + std::to_string(id) + ")";
}

void TraceRecorder::fail_unknown_track(TrackId id) const {
  fail("unknown track id " + std::to_string(id) + " (this recorder has tracks 1.." + std::to_string(tracks_.size()) +
       ")");
}

const TrackInfo& TraceRecorder::track(TrackId id) const {
  if (id == 0 || id > infos_.size()) fail_unknown_track(id);
  return infos_[id - 1];
}

// ---- tracks -------------------------------------------------------------------------------

TrackId TraceRecorder::add_track(TrackInfo info) {
  info.id = tracks_.size() + 1;
  if (info.kind == TrackKind::Process) info.pid = static_cast<std::uint32_t>(info.id);
  if (info.kind == TrackKind::Thread) info.tid = static_cast<std::uint32_t>(info.id);
  tracks_.push_back(TrackState{info.kind, 0, 0});
  infos_.push_back(info);
  writer_->add_track(infos_.back());
  return info.id;
}

TrackId TraceRecorder::process_track(std::string_view name) {
  if (!enabled_) return 0;
  TrackInfo info;
  info.kind = TrackKind::Process;
  info.name = std::string(name);
  return add_track(std::move(info));
}

TrackId TraceRecorder::thread_track(TrackId process, std::string_view name) {
  if (!enabled_) return 0;
  if (track(process).kind != TrackKind::Process) {
    fail("thread_track('" + std::string(name) + "'): parent " + describe(process) + " is not a process track");
  }
  TrackInfo info;
  info.kind = TrackKind::Thread;
  info.parent = process;
  info.name = std::string(name);
  info.pid = infos_[process - 1].pid;
  return add_track(std::move(info));
}

TrackId TraceRecorder::async_track(TrackId parent, std::string_view name) {
  if (!enabled_) return 0;
  if (parent != 0 && track(parent).kind == TrackKind::Counter) {
    fail("async_track('" + std::string(name) + "'): parent " + describe(parent) + " is a counter track");
  }
  TrackInfo info;
  info.kind = TrackKind::Async;
  info.parent = parent;
  info.name = std::string(name);
  info.pid = parent != 0 ? infos_[parent - 1].pid : 0;
  const TrackId id = add_track(std::move(info));
  async_.emplace_back();
  async_.back().lanes.push_back(Lane{id});
  tracks_[id - 1].async = static_cast<std::uint32_t>(async_.size());
  return id;
}

TrackId TraceRecorder::counter_track(TrackId parent, std::string_view name, std::string_view unit) {
  if (!enabled_) return 0;
  if (parent != 0 && track(parent).kind == TrackKind::Counter) {
    fail("counter_track('" + std::string(name) + "'): parent " + describe(parent) + " is a counter track");
  }
  TrackInfo info;
  info.kind = TrackKind::Counter;
  info.parent = parent;
  info.name = std::string(name);
  info.unit = std::string(unit);
  info.pid = parent != 0 ? infos_[parent - 1].pid : 0;
  return add_track(std::move(info));
}

// The lowest lane that holds no open slice and whose slices all ended by `start`; a new lane
// if there is none. Lanes are children of the async track, named "<name> #<n>".
std::uint32_t TraceRecorder::pick_lane(AsyncState& async, TrackId base, TimeNs start) {
  for (std::uint32_t i = 0; i < async.lanes.size(); ++i) {
    const Lane& lane = async.lanes[i];
    if (!lane.open && lane.free_at <= start) return i;
  }
  const auto index = static_cast<std::uint32_t>(async.lanes.size());
  const TrackInfo& base_info = infos_[base - 1];
  TrackInfo info;
  info.kind = TrackKind::Async;
  info.parent = base;
  info.name = base_info.name + " #" + std::to_string(index + 1);
  info.pid = base_info.pid;
  info.lane_of = base;
  info.lane = index;
  const TrackId id = add_track(std::move(info));
  async.lanes.push_back(Lane{id});
  return index;
}

// ---- names --------------------------------------------------------------------------------

NameId TraceRecorder::intern(std::string_view name) {
  if (!enabled_) return 0;
  const auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  const std::string_view stored = names_.emplace_back(name);
  const auto id = static_cast<NameId>(names_.size());
  name_views_.push_back(stored);
  name_ids_.emplace(stored, id);
  return id;
}

std::string_view TraceRecorder::name(NameId id) const {
  if (id == 0 || id > name_views_.size()) {
    fail("unknown name id " + std::to_string(id) + " (this recorder has names 1.." +
         std::to_string(name_views_.size()) + ")");
  }
  return name_views_[id - 1];
}

// ---- events -------------------------------------------------------------------------------

void TraceRecorder::submit(TraceEvent& e) {
  if (e.track == 0 || e.track > tracks_.size()) fail_unknown_track(e.track);
  TrackState& t = tracks_[e.track - 1];
  if (e.name_id != 0) {
    if (e.name_id > name_views_.size()) name(e.name_id);  // throws, naming the id
    e.name = name_views_[e.name_id - 1];
  }

  if ((e.type == EventType::Counter) != (t.kind == TrackKind::Counter)) {
    fail(e.type == EventType::Counter
             ? "counter() on " + describe(e.track) + ", which is not a counter track"
             : "a slice or instant on " + describe(e.track) + "; counter tracks take counter()");
  }

  if (t.kind == TrackKind::Process || t.kind == TrackKind::Thread) {
    if (e.type == EventType::SliceBegin) {
      ++t.open_slices;
    } else if (e.type == EventType::SliceEnd) {
      if (t.open_slices == 0) fail("end() without a matching begin() on " + describe(e.track));
      --t.open_slices;
    }
  } else if (t.kind == TrackKind::Async && t.async != 0) {
    AsyncState& async = async_[t.async - 1];
    const TrackId base = e.track;
    switch (e.type) {
      case EventType::SliceBegin: {
        const std::uint32_t lane = pick_lane(async, base, e.ts);
        async.lanes[lane].open = true;
        async.open_order.push_back(lane);
        e.track = async.lanes[lane].track;
        break;
      }
      case EventType::SliceEnd: {
        if (async.open_order.empty()) {
          fail("end() without a matching begin() on " + describe(e.track));
        }
        Lane& lane = async.lanes[async.open_order.front()];
        async.open_order.pop_front();
        lane.open = false;
        lane.free_at = std::max(lane.free_at, e.ts);
        e.track = lane.track;
        break;
      }
      case EventType::Complete: {
        const std::uint32_t lane = pick_lane(async, base, e.ts);
        async.lanes[lane].free_at = e.ts + e.duration;
        e.track = async.lanes[lane].track;
        break;
      }
      case EventType::Instant:
      case EventType::Counter:
        break;  // instants take no room: they stay on the async track itself
    }
  }
  // (Events addressed directly to a lane track are passed through unchanged.)

  writer_->write(e);
  ++events_;
}

void TraceRecorder::flush() {
  if (enabled_) writer_->flush();
}

void TraceRecorder::close() {
  if (!enabled_) return;
  enabled_ = false;
  writer_->close();
}

std::uint64_t TraceRecorder::bytes_written() const {
  return writer_ ? writer_->bytes_written() : 0;
}

}  // namespace sohusim::counters
