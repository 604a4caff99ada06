// A reader of the Perfetto writer's files that applies trace_processor's rules: sequence
// flags, interning generations, incremental clock 64 vs absolute BOOTTIME timestamps, slice
// stacks per track. Decoded with the real protobuf library through
// tests/counters/perfetto_subset.proto. Shared by the writer's tests and by tests that check
// what a whole simulation traced (flows in tests/platform).
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "perfetto_subset.pb.h"

namespace sohusim::counters::perfetto_decode {

namespace pp = perfetto::protos;

// ---- a reader that applies Perfetto's rules ----------------------------------------------

struct Event {
  std::size_t packet = 0;  // index in the file
  std::uint64_t ts = 0;
  bool absolute = false;  // timestamp_clock_id = 6
  pp::TrackEvent::Type type = pp::TrackEvent::TYPE_UNSPECIFIED;
  std::uint64_t track = 0;
  std::string name;
  std::map<std::string, std::string> args;  // value rendered as "<kind>:<value>"
  std::vector<std::uint64_t> flows;
  std::vector<std::uint64_t> terminating_flows;
  std::uint64_t correlation = 0;
  double counter = 0;
};

struct Slice {
  std::uint64_t track;
  std::string name;
  std::uint64_t start;
  std::uint64_t end;
  std::size_t depth;
  const Event* begin;
  bool operator<(const Slice& o) const {
    return std::tie(track, start, name, end) < std::tie(o.track, o.start, o.name, o.end);
  }
};

struct Decoded {
  std::size_t packets = 0;
  std::size_t state_clears = 0;
  std::size_t absolute = 0;
  std::map<std::uint64_t, pp::TrackDescriptor> tracks;
  std::vector<Event> events;
  std::vector<std::size_t> interned_per_generation;

  // Slices per track, from SLICE_BEGIN/SLICE_END after a stable sort by timestamp, as
  // trace_processor's sorter does.
  std::vector<Slice> slices() const {
    std::vector<const Event*> order;
    for (const Event& e : events) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
    std::map<std::uint64_t, std::vector<const Event*>> stacks;
    std::vector<Slice> out;
    for (const Event* e : order) {
      auto& stack = stacks[e->track];
      if (e->type == pp::TrackEvent::TYPE_SLICE_BEGIN) {
        stack.push_back(e);
      } else if (e->type == pp::TrackEvent::TYPE_SLICE_END) {
        if (stack.empty()) {
          ADD_FAILURE() << "SLICE_END without begin on track " << e->track << " at " << e->ts;
          continue;
        }
        const Event* b = stack.back();
        stack.pop_back();
        out.push_back({e->track, b->name, b->ts, e->ts, stack.size(), b});
      }
    }
    for (const auto& [track, stack] : stacks) {
      EXPECT_TRUE(stack.empty()) << "unterminated slice on track " << track;
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  /// A thread track's thread name, or the track's own name (async, counter, process tracks).
  std::string track_name(std::uint64_t uuid) const {
    const auto it = tracks.find(uuid);
    if (it == tracks.end()) return "?";
    return it->second.has_thread() ? it->second.thread().thread_name() : it->second.name();
  }

  /// The process a track belongs to (itself, or the nearest ancestor with a process).
  std::string process_name(std::uint64_t uuid) const {
    for (auto it = tracks.find(uuid); it != tracks.end(); it = tracks.find(it->second.parent_uuid())) {
      if (it->second.has_process()) return it->second.process().process_name();
      if (!it->second.has_parent_uuid()) break;
    }
    return "?";
  }

  std::vector<const Event*> of_type(pp::TrackEvent::Type type, std::uint64_t track) const {
    std::vector<const Event*> out;
    for (const Event& e : events) {
      if (e.type == type && e.track == track) out.push_back(&e);
    }
    return out;
  }
};

inline std::string render(const pp::DebugAnnotation& a) {
  if (a.has_int_value()) return "int:" + std::to_string(a.int_value());
  if (a.has_uint_value()) return "uint:" + std::to_string(a.uint_value());
  if (a.has_double_value()) return "double:" + std::to_string(a.double_value());
  if (a.has_bool_value()) return std::string("bool:") + (a.bool_value() ? "true" : "false");
  if (a.has_string_value()) return "string:" + a.string_value();
  return "none";
}

inline Decoded decode(const std::string& bytes) {
  Decoded d;
  pp::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    ADD_FAILURE() << "protobuf could not parse the trace (" << bytes.size() << " bytes)";
    return d;
  }
  std::map<std::uint64_t, std::string> event_names;
  std::map<std::uint64_t, std::string> annotation_names;
  std::uint32_t default_clock = 0;
  std::uint64_t clock64 = 0;
  bool state_valid = false;
  std::size_t generation_entries = 0;

  for (int i = 0; i < trace.packet_size(); ++i) {
    const pp::TracePacket& p = trace.packet(i);
    ++d.packets;
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1U) << "packet " << i;
    if (i == 0) {
      EXPECT_TRUE(p.first_packet_on_sequence());
      EXPECT_EQ(p.sequence_flags() & 1U, 1U) << "first packet must clear incremental state";
    }
    if (p.sequence_flags() & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      if (state_valid) d.interned_per_generation.push_back(generation_entries);
      generation_entries = 0;
      ++d.state_clears;
      event_names.clear();
      annotation_names.clear();
      default_clock = 0;
      state_valid = true;
      EXPECT_TRUE(p.has_clock_snapshot()) << "a reset must redefine the clocks";
      EXPECT_TRUE(p.has_trace_packet_defaults());
    }
    if (p.has_trace_packet_defaults()) default_clock = p.trace_packet_defaults().timestamp_clock_id();
    if (p.has_clock_snapshot()) {
      bool saw64 = false;
      for (const auto& c : p.clock_snapshot().clocks()) {
        if (c.clock_id() == 64) {
          EXPECT_TRUE(c.is_incremental());
          clock64 = c.timestamp();  // the delta base restarts at the snapshot's value
          saw64 = true;
        }
      }
      EXPECT_TRUE(saw64);
    }
    if (p.has_interned_data()) {
      for (const auto& n : p.interned_data().event_names()) {
        EXPECT_EQ(event_names.count(n.iid()), 0U) << "event name iid " << n.iid() << " reused";
        event_names[n.iid()] = n.name();
        ++generation_entries;
      }
      for (const auto& n : p.interned_data().debug_annotation_names()) {
        EXPECT_EQ(annotation_names.count(n.iid()), 0U) << "arg name iid " << n.iid() << " reused";
        annotation_names[n.iid()] = n.name();
        ++generation_entries;
      }
    }
    if (p.has_track_descriptor()) {
      const auto& t = p.track_descriptor();
      EXPECT_EQ(d.tracks.count(t.uuid()), 0U) << "track " << t.uuid() << " described twice";
      if (t.has_parent_uuid()) {
        EXPECT_EQ(d.tracks.count(t.parent_uuid()), 1U) << "track " << t.uuid() << " described before its parent";
      }
      d.tracks[t.uuid()] = t;
    }
    if (!p.has_track_event()) continue;

    EXPECT_TRUE(state_valid);
    Event e;
    e.packet = static_cast<std::size_t>(i);
    const std::uint32_t clock = p.has_timestamp_clock_id() ? p.timestamp_clock_id() : default_clock;
    if (clock == 64) {
      clock64 += p.timestamp();
      e.ts = clock64;
    } else if (clock == 6) {
      e.ts = p.timestamp();
      e.absolute = true;
      ++d.absolute;
    } else {
      ADD_FAILURE() << "packet " << i << " uses clock " << clock;
    }
    const pp::TrackEvent& te = p.track_event();
    e.type = te.type();
    e.track = te.track_uuid();
    EXPECT_EQ(d.tracks.count(e.track), 1U) << "event before the descriptor of track " << e.track;
    if (te.has_name_iid()) {
      const auto it = event_names.find(te.name_iid());
      EXPECT_NE(it, event_names.end()) << "name iid " << te.name_iid() << " not interned";
      if (it != event_names.end()) e.name = it->second;
    }
    for (const auto& a : te.debug_annotations()) {
      const auto it = annotation_names.find(a.name_iid());
      EXPECT_NE(it, annotation_names.end()) << "arg iid " << a.name_iid() << " not interned";
      if (it != annotation_names.end()) e.args[it->second] = render(a);
    }
    e.flows.assign(te.flow_ids().begin(), te.flow_ids().end());
    e.terminating_flows.assign(te.terminating_flow_ids().begin(), te.terminating_flow_ids().end());
    e.correlation = te.correlation_id();
    if (te.has_counter_value()) e.counter = static_cast<double>(te.counter_value());
    if (te.has_double_counter_value()) e.counter = te.double_counter_value();
    d.events.push_back(std::move(e));
  }
  if (state_valid) d.interned_per_generation.push_back(generation_entries);
  return d;
}

/// decode() of the file at `path` (a failure if it cannot be read).
inline Decoded decode_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read the trace " << path;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return decode(bytes.str());
}

}  // namespace sohusim::counters::perfetto_decode
