// PerfettoWriter: files are decoded with the real protobuf library (schema:
// tests/counters/perfetto_subset.proto) and interpreted the way trace_processor does
// (perfetto_decode_support.hpp), then compared with what was recorded.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "perfetto_decode_support.hpp"
#include "perfetto_subset.pb.h"
#include "sohusim/counters/perfetto_writer.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "trace_files_support.hpp"

namespace sohusim::counters {
namespace {

namespace pp = perfetto::protos;

using namespace testing_files;
using namespace perfetto_decode;

// ---- the reference scenario --------------------------------------------------------------

struct Ids {
  TrackId host, dev, api, cp, me, dma, bw, queue;
};

const std::string kLongArg(300, 'x');   // nested message longer than 127 bytes
const std::string kLongName(200, 'n');  // interned entry longer than 127 bytes

Ids record_scenario(TraceRecorder& rec) {
  Ids t{};
  t.host = rec.process_track("host0");
  t.dev = rec.process_track("dev0");
  t.api = rec.thread_track(t.host, "api");
  t.cp = rec.thread_track(t.dev, "command processor");
  t.me = rec.thread_track(t.dev, "me0");
  t.dma = rec.async_track(t.dev, "dma");
  t.bw = rec.counter_track(t.dev, "hbm.bw", "GB/s");
  t.queue = rec.counter_track(t.dev, "queue", "count");
  const NameId launch = rec.intern("launch");
  const NameId kernel = rec.intern("kernel");
  const NameId prep = rec.intern("prep");  // first used by a slice with nothing else

  rec.begin(t.api, 100, launch, {{"i64", -5}, {"u64", 7U}, {"dbl", 2.5}, {"flag", true}, {"str", "hello"}}, {{1}}, 42);
  rec.complete(t.api, 150, 100, "marshal");
  rec.complete(t.api, 300, 50, prep);
  rec.end(t.api, 500);
  rec.complete(t.cp, 600, 200, kernel, {}, {{1}}, 42);
  rec.instant(t.cp, 650, "irq", {{"vector", 3}});
  rec.complete(t.me, 700, 300, kLongName, {{"blob", kLongArg}}, {{1, FlowKind::Terminate}}, 42);
  rec.complete(t.dma, 1000, 500, "xfer a");  // lane 1
  rec.complete(t.dma, 1200, 500, "xfer b");  // overlaps a: lane 2
  rec.complete(t.dma, 1250, 100, "xfer d");  // overlaps a and b: lane 3
  rec.complete(t.dma, 1600, 300, "xfer c");  // a ended at 1500: lane 1 again
  rec.counter(t.bw, 1000, 12.5);
  rec.counter(t.bw, 2000, 0);
  rec.counter(t.queue, 1500, 3);
  rec.flush();
  rec.complete(t.cp, 50, 10, "late");  // before everything already written
  rec.complete(t.cp, 3000, 10, "after");
  return t;
}

class PerfettoScenario : public ::testing::TestWithParam<std::tuple<std::size_t, bool>> {};

TEST_P(PerfettoScenario, DecodesToWhatWasRecorded) {
  const auto [window, mark] = GetParam();
  const std::string path = temp_path("scenario.pftrace");
  PerfettoWriterOptions options;
  options.reorder_window = window;
  options.mark_needs_incremental_state = mark;
  Ids t{};
  PerfettoWriterStats stats;
  {
    auto writer = std::make_unique<PerfettoWriter>(path, options);
    PerfettoWriter* raw = writer.get();
    TraceRecorder rec(std::move(writer));
    t = record_scenario(rec);
    rec.close();
    stats = raw->stats();
    EXPECT_EQ(rec.bytes_written(), std::filesystem::file_size(path));
  }
  const Decoded d = decode(read_file(path));

  // Tracks: descriptors with pids, tids, parents and names; lanes as children of the async
  // track.
  ASSERT_EQ(d.tracks.size(), 10U);  // 8 declared + 2 lanes
  EXPECT_EQ(d.tracks.at(t.host).process().pid(), static_cast<int>(t.host));
  EXPECT_EQ(d.tracks.at(t.host).process().process_name(), "host0");
  EXPECT_EQ(d.tracks.at(t.dev).process().process_name(), "dev0");
  EXPECT_EQ(d.tracks.at(t.api).parent_uuid(), t.host);
  EXPECT_EQ(d.tracks.at(t.api).thread().pid(), static_cast<int>(t.host));
  EXPECT_EQ(d.tracks.at(t.api).thread().tid(), static_cast<int>(t.api));
  EXPECT_EQ(d.tracks.at(t.api).thread().thread_name(), "api");
  EXPECT_EQ(d.tracks.at(t.cp).thread().pid(), static_cast<int>(t.dev));
  EXPECT_EQ(d.tracks.at(t.cp).thread().thread_name(), "command processor");
  EXPECT_EQ(d.tracks.at(t.dma).parent_uuid(), t.dev);
  EXPECT_EQ(d.tracks.at(t.dma).name(), "dma");
  EXPECT_EQ(d.tracks.at(t.bw).parent_uuid(), t.dev);
  EXPECT_EQ(d.tracks.at(t.bw).name(), "hbm.bw (GB/s)");  // no enum for GB/s
  EXPECT_EQ(d.tracks.at(t.bw).counter().unit(), pp::CounterDescriptor::UNIT_UNSPECIFIED);
  EXPECT_EQ(d.tracks.at(t.queue).name(), "queue");
  EXPECT_EQ(d.tracks.at(t.queue).counter().unit(), pp::CounterDescriptor::UNIT_COUNT);
  std::map<std::string, std::uint64_t> lane_by_name;
  for (const auto& [uuid, desc] : d.tracks) {
    if (desc.parent_uuid() == t.dma) lane_by_name[desc.name()] = uuid;
  }
  ASSERT_EQ(lane_by_name.size(), 2U);
  const std::uint64_t lane2 = lane_by_name.at("dma #2");
  const std::uint64_t lane3 = lane_by_name.at("dma #3");

  // Slices: absolute times reconstructed from deltas and BOOTTIME packets, nesting, lanes.
  const std::vector<Slice> expected = [&] {
    std::vector<Slice> s = {
        {t.api, "launch", 100, 500, 0, nullptr},   {t.api, "marshal", 150, 250, 1, nullptr},
        {t.api, "prep", 300, 350, 1, nullptr},     {t.cp, "kernel", 600, 800, 0, nullptr},
        {t.cp, "late", 50, 60, 0, nullptr},        {t.cp, "after", 3000, 3010, 0, nullptr},
        {t.me, kLongName, 700, 1000, 0, nullptr},  {t.dma, "xfer a", 1000, 1500, 0, nullptr},
        {lane2, "xfer b", 1200, 1700, 0, nullptr}, {lane3, "xfer d", 1250, 1350, 0, nullptr},
        {t.dma, "xfer c", 1600, 1900, 0, nullptr},
    };
    std::sort(s.begin(), s.end());
    return s;
  }();
  const std::vector<Slice> slices = d.slices();
  ASSERT_EQ(slices.size(), expected.size());
  for (std::size_t i = 0; i < slices.size(); ++i) {
    EXPECT_EQ(slices[i].track, expected[i].track) << expected[i].name;
    EXPECT_EQ(slices[i].name, expected[i].name);
    EXPECT_EQ(slices[i].start, expected[i].start) << expected[i].name;
    EXPECT_EQ(slices[i].end, expected[i].end) << expected[i].name;
    EXPECT_EQ(slices[i].depth, expected[i].depth) << expected[i].name;
  }

  // Arguments of every type, flows, correlation ids.
  static const Event kMissing;
  const auto find = [&](const std::string& name) {
    const auto it = std::find_if(slices.begin(), slices.end(), [&](const Slice& s) { return s.name == name; });
    if (it == slices.end()) {
      ADD_FAILURE() << "no slice named " << name;
      return &kMissing;
    }
    return it->begin;
  };
  const Event* launch = find("launch");
  ASSERT_EQ(launch->args.size(), 5U);
  EXPECT_EQ(launch->args.at("i64"), "int:-5");
  EXPECT_EQ(launch->args.at("u64"), "uint:7");
  EXPECT_EQ(launch->args.at("dbl"), "double:2.500000");
  EXPECT_EQ(launch->args.at("flag"), "bool:true");
  EXPECT_EQ(launch->args.at("str"), "string:hello");
  EXPECT_EQ(launch->flows, std::vector<std::uint64_t>{1});
  EXPECT_EQ(launch->correlation, 42U);
  EXPECT_EQ(find("kernel")->flows, std::vector<std::uint64_t>{1});
  EXPECT_EQ(find("kernel")->correlation, 42U);
  EXPECT_EQ(find(kLongName)->terminating_flows, std::vector<std::uint64_t>{1});
  EXPECT_TRUE(find(kLongName)->flows.empty());
  EXPECT_EQ(find(kLongName)->args.at("blob"), "string:" + kLongArg);
  EXPECT_EQ(find("marshal")->correlation, 0U);
  EXPECT_TRUE(find("marshal")->args.empty());

  const auto instants = d.of_type(pp::TrackEvent::TYPE_INSTANT, t.cp);
  ASSERT_EQ(instants.size(), 1U);
  EXPECT_EQ(instants[0]->name, "irq");
  EXPECT_EQ(instants[0]->ts, 650U);
  EXPECT_EQ(instants[0]->args.at("vector"), "int:3");

  const auto bw = d.of_type(pp::TrackEvent::TYPE_COUNTER, t.bw);
  ASSERT_EQ(bw.size(), 2U);
  EXPECT_EQ(bw[0]->ts, 1000U);
  EXPECT_EQ(bw[0]->counter, 12.5);
  EXPECT_EQ(bw[1]->ts, 2000U);
  EXPECT_EQ(bw[1]->counter, 0.0);
  const auto queue = d.of_type(pp::TrackEvent::TYPE_COUNTER, t.queue);
  ASSERT_EQ(queue.size(), 1U);
  EXPECT_EQ(queue[0]->counter, 3.0);

  // The late slice was written with absolute BOOTTIME timestamps; the slice after it was a
  // delta from the last clock-64 packet, which the reconstruction above already confirmed.
  const Event* late = find("late");
  EXPECT_TRUE(late->absolute);
  EXPECT_FALSE(find("after")->absolute);
  EXPECT_EQ(d.absolute, stats.absolute_timestamps);
  if (window >= 64) {
    EXPECT_EQ(d.absolute, 2U) << "only the late slice should need absolute timestamps";
  }
  EXPECT_EQ(d.state_clears, 1U);
  EXPECT_EQ(stats.packets, d.packets);
}

INSTANTIATE_TEST_SUITE_P(WindowsAndFlags, PerfettoScenario,
                         ::testing::Combine(::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{3},
                                                              std::size_t{1024}),
                                            ::testing::Bool()));

TEST(PerfettoWriter, SequenceFlagIsWrittenOnlyWhenAsked) {
  for (const bool mark : {false, true}) {
    const std::string path = temp_path(mark ? "mark.pftrace" : "nomark.pftrace");
    PerfettoWriterOptions options;
    options.mark_needs_incremental_state = mark;
    {
      TraceRecorder rec(std::make_unique<PerfettoWriter>(path, options));
      const TrackId p = rec.process_track("p");
      const TrackId th = rec.thread_track(p, "t");
      rec.complete(th, 10, 5, "s");
    }
    pp::Trace trace;
    ASSERT_TRUE(trace.ParseFromString(read_file(path)));
    int events = 0;
    for (const auto& packet : trace.packet()) {
      if (!packet.has_track_event()) continue;
      ++events;
      EXPECT_EQ(packet.sequence_flags(),
                mark ? static_cast<std::uint32_t>(pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) : 0U);
    }
    EXPECT_EQ(events, 2);
  }
}

TEST(PerfettoWriter, SameCallsGiveIdenticalFiles) {
  const std::string a = temp_path("a.pftrace");
  const std::string b = temp_path("b.pftrace");
  for (const std::string& path : {a, b}) {
    TraceRecorder rec(std::make_unique<PerfettoWriter>(path));
    record_scenario(rec);
  }
  const std::string bytes = read_file(a);
  EXPECT_GT(bytes.size(), 100U);
  EXPECT_EQ(bytes, read_file(b));
}

// Many names with a tiny intern cap: every overflow starts a new generation, which must
// re-declare clocks and defaults and re-intern names, and decode to the same events.
TEST(PerfettoWriter, InternOverflowResetsStateAndStillDecodes) {
  const std::string path = temp_path("overflow.pftrace");
  PerfettoWriterOptions options;
  options.max_interned_names = 4;
  options.reorder_window = 16;
  PerfettoWriterStats stats;
  std::vector<std::tuple<std::string, std::uint64_t, std::string>> expected;
  TrackId thread = 0;
  {
    auto writer = std::make_unique<PerfettoWriter>(path, options);
    PerfettoWriter* raw = writer.get();
    TraceRecorder rec(std::move(writer));
    const TrackId p = rec.process_track("p");
    thread = rec.thread_track(p, "t");
    std::vector<NameId> fixed;
    fixed.reserve(6);
    for (int i = 0; i < 6; ++i) fixed.push_back(rec.intern("fixed" + std::to_string(i)));
    std::uint64_t ts = 1000;
    for (int i = 0; i < 200; ++i) {
      const std::string key = "k" + std::to_string(i % 9);
      if (i % 3 == 0) {
        rec.complete(thread, ts, 50, fixed[static_cast<std::size_t>(i) % fixed.size()], {{key, i}});
        expected.emplace_back("fixed" + std::to_string(i % 6), ts, key);
      } else {
        const std::string name = "dyn" + std::to_string(i % 13);
        rec.complete(thread, ts, 50, name, {{key, i}});
        expected.emplace_back(name, ts, key);
      }
      ts += 100 + static_cast<std::uint64_t>(i % 7) * 10;
    }
    rec.close();
    stats = raw->stats();
  }
  const Decoded d = decode(read_file(path));
  EXPECT_GT(stats.state_resets, 10U);
  EXPECT_EQ(d.state_clears, stats.state_resets + 1);
  for (const std::size_t entries : d.interned_per_generation) {
    EXPECT_LE(entries, 2 * options.max_interned_names) << "a generation outgrew the cap";
  }
  const std::vector<Slice> slices = d.slices();
  ASSERT_EQ(slices.size(), expected.size());
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const auto& [name, start, key] = expected[i];
    EXPECT_EQ(slices[i].track, thread);
    EXPECT_EQ(slices[i].name, name) << "slice " << i;
    EXPECT_EQ(slices[i].start, start) << "slice " << i;
    EXPECT_EQ(slices[i].end, start + 50) << "slice " << i;
    EXPECT_EQ(slices[i].begin->args.at(key), "int:" + std::to_string(i)) << "slice " << i;
  }
}

// An exception unwinding through the recorder closes it: the file holds every event.
TEST(PerfettoWriter, RecorderDestroyedByExceptionLeavesCompleteFile) {
  const std::string path = temp_path("exception.pftrace");
  TrackId thread = 0;
  try {
    TraceRecorder rec(std::make_unique<PerfettoWriter>(path));
    const TrackId p = rec.process_track("p");
    thread = rec.thread_track(p, "t");
    for (std::uint64_t i = 0; i < 1000; ++i) rec.complete(thread, i * 100, 50, "work");
    rec.begin(thread, 200000, "never ended");
    throw std::runtime_error("model failed");
  } catch (const std::runtime_error&) {
  }
  const Decoded d = decode(read_file(path));
  EXPECT_EQ(d.of_type(pp::TrackEvent::TYPE_SLICE_BEGIN, thread).size(), 1001U);
  EXPECT_EQ(d.of_type(pp::TrackEvent::TYPE_SLICE_END, thread).size(), 1000U);
}

// A run killed at any moment leaves whole packets on disk: read the file while the recorder is
// still writing (small chunks force many partial flushes) and decode it.
TEST(PerfettoWriter, FileIsValidAtEveryChunkBoundary) {
  const std::string path = temp_path("partial.pftrace");
  PerfettoWriterOptions options;
  options.flush_chunk = 700;  // not a multiple of any packet size
  TraceRecorder rec(std::make_unique<PerfettoWriter>(path, options));
  const TrackId p = rec.process_track("p");
  const TrackId thread = rec.thread_track(p, "t");
  std::size_t checks = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    rec.complete(thread, i * 100, 50, i % 2 ? "odd" : "even", {{"i", i}});
    if (i % 997 == 0) {
      const std::string partial = read_file(path);
      pp::Trace trace;
      ASSERT_TRUE(trace.ParseFromString(partial)) << "at slice " << i;
      ++checks;
    }
  }
  const std::string before_close = read_file(path);
  rec.close();
  const std::string after_close = read_file(path);
  EXPECT_GT(before_close.size(), 0U);
  EXPECT_LT(before_close.size(), after_close.size());
  EXPECT_EQ(checks, 6U);
  const Decoded d = decode(after_close);
  EXPECT_EQ(d.slices().size(), 5000U);
}

// Recorded in the order a simulator produces them (at their end), slices start before the
// previous packet; the reorder window must absorb that without absolute timestamps.
TEST(PerfettoWriter, EndOrderedSlicesStayIncrementalWithinTheWindow) {
  const std::string path = temp_path("endordered.pftrace");
  PerfettoWriterStats stats;
  std::size_t recorded = 0;
  {
    auto writer = std::make_unique<PerfettoWriter>(path);
    PerfettoWriter* raw = writer.get();
    TraceRecorder rec(std::move(writer));
    const TrackId p = rec.process_track("p");
    std::vector<TrackId> threads;
    threads.reserve(16);
    for (int i = 0; i < 16; ++i) threads.push_back(rec.thread_track(p, "t" + std::to_string(i)));
    // Thread i runs slices of length 300 + 40 i back to back; record them in end order.
    std::vector<std::tuple<std::uint64_t, TrackId, std::uint64_t>> ends;
    for (std::size_t i = 0; i < threads.size(); ++i) {
      const std::uint64_t length = 300 + 40 * i;
      for (std::uint64_t start = 0; start < 100000; start += length + 20) {
        ends.emplace_back(start + length, threads[i], start);
      }
    }
    std::sort(ends.begin(), ends.end());
    for (const auto& [end, track, start] : ends) rec.complete(track, start, end - start, "op");
    recorded = ends.size();
    rec.close();
    stats = raw->stats();
  }
  EXPECT_EQ(stats.absolute_timestamps, 0U);
  const Decoded d = decode(read_file(path));
  EXPECT_EQ(d.absolute, 0U);
  EXPECT_EQ(d.slices().size(), recorded);
}

// Equal timestamps: the window orders them so that slices still nest, whatever the call
// order: a slice ending where the next begins, a parent recorded after a child that shares its
// start, zero-length slices, explicit begin/end at one instant.
TEST(PerfettoWriter, TiesAtEqualTimestampsKeepSlicesNested) {
  const std::string path = temp_path("ties.pftrace");
  TrackId th = 0;
  {
    TraceRecorder rec(std::make_unique<PerfettoWriter>(path));
    const TrackId p = rec.process_track("p");
    th = rec.thread_track(p, "t");
    rec.complete(th, 200, 50, "second");  // recorded before the slice that ends at 200
    rec.complete(th, 100, 100, "first");
    rec.complete(th, 300, 10, "child");  // recorded before its parent, same start
    rec.complete(th, 300, 100, "parent");
    rec.complete(th, 350, 0, "zero");  // inside parent
    rec.begin(th, 500, "open");
    rec.end(th, 500);
    rec.begin(th, 500, "next");
    rec.complete(th, 500, 0, "zero in next");
    rec.end(th, 600);
  }
  const std::vector<Slice> slices = decode(read_file(path)).slices();
  std::map<std::string, std::tuple<std::uint64_t, std::uint64_t, std::size_t>> by_name;
  for (const Slice& s : slices) by_name[s.name] = {s.start, s.end, s.depth};
  using T = std::tuple<std::uint64_t, std::uint64_t, std::size_t>;
  EXPECT_EQ(by_name.at("first"), (T{100, 200, 0}));
  EXPECT_EQ(by_name.at("second"), (T{200, 250, 0}));
  EXPECT_EQ(by_name.at("parent"), (T{300, 400, 0}));
  EXPECT_EQ(by_name.at("child"), (T{300, 310, 1}));
  EXPECT_EQ(by_name.at("zero"), (T{350, 350, 1}));
  EXPECT_EQ(by_name.at("open"), (T{500, 500, 0}));
  EXPECT_EQ(by_name.at("next"), (T{500, 600, 0}));
  EXPECT_EQ(by_name.at("zero in next"), (T{500, 500, 1}));
  EXPECT_EQ(slices.size(), 8U);
}

TEST(PerfettoWriter, OpenFailureNamesPathAndReason) {
  const std::string path = "/nonexistent-dir-sohusim/trace.pftrace";
  try {
    PerfettoWriter writer(path);
    FAIL() << "opening " << path << " should have thrown";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

TEST(PerfettoWriter, EventOnUndeclaredTrackThrows) {
  const std::string path = temp_path("undeclared.pftrace");
  PerfettoWriter writer(path);
  TraceEvent e;
  e.type = EventType::Instant;
  e.track = 3;
  e.name = "x";
  EXPECT_THROW(writer.write(e), TraceError);
}

}  // namespace
}  // namespace sohusim::counters
