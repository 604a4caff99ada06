// TraceRecorder: what it checks, what it hands to the writer (captured by a fake writer), how
// it assigns async lanes, and that a disabled recorder does nothing.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "sohusim/counters/chrome_json_writer.hpp"
#include "sohusim/counters/perfetto_writer.hpp"
#include "sohusim/counters/trace_recorder.hpp"

namespace sohusim::counters {
namespace {

struct Captured {
  EventType type;
  TrackId track;
  TimeNs ts;
  TimeNs duration;
  NameId name_id;
  std::string name;
  std::vector<std::pair<std::string, std::string>> args;
  std::vector<Flow> flows;
  std::uint64_t correlation;
  double value;
};

// Keeps a copy of everything the recorder hands over; `log` outlives the writer so tests can
// look after the recorder is gone.
struct CaptureLog {
  std::vector<TrackInfo> tracks;
  std::vector<Captured> events;
  int flushes = 0;
  int closes = 0;
};

class CaptureWriter final : public TraceWriter {
 public:
  explicit CaptureWriter(std::shared_ptr<CaptureLog> log) : log_(std::move(log)) {}
  void add_track(const TrackInfo& track) override { log_->tracks.push_back(track); }
  void write(const TraceEvent& e) override {
    Captured c{e.type, e.track, e.ts, e.duration, e.name_id, std::string(e.name), {}, {}, e.extras.correlation_id,
               e.value};
    for (const Arg& a : e.extras.args) {
      c.args.emplace_back(std::string(a.key), std::visit(
                                                  [](const auto& v) {
                                                    std::ostringstream s;
                                                    s << v;
                                                    return s.str();
                                                  },
                                                  a.value));
    }
    c.flows.assign(e.extras.flows.begin(), e.extras.flows.end());
    log_->events.push_back(std::move(c));
  }
  void flush() override { ++log_->flushes; }
  void close() override { ++log_->closes; }
  std::uint64_t bytes_written() const override { return 0; }
  const std::string& path() const override { return path_; }

 private:
  std::shared_ptr<CaptureLog> log_;
  std::string path_ = "capture.trace";
};

struct Fixture {
  std::shared_ptr<CaptureLog> log = std::make_shared<CaptureLog>();
  TraceRecorder rec{std::make_unique<CaptureWriter>(log)};
};

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no TraceError thrown)";
}

TEST(TraceRecorder, DisabledRecorderDoesNothing) {
  TraceRecorder rec(nullptr);
  EXPECT_FALSE(rec.enabled());
  EXPECT_EQ(rec.process_track("p"), 0U);
  EXPECT_EQ(rec.thread_track(5, "t"), 0U);  // no validation either: nothing is recorded
  EXPECT_EQ(rec.intern("x"), 0U);
  rec.begin(99, 1, "x");
  rec.end(99, 2);
  rec.complete(99, 1, 2, NameId{7}, {{"k", 1}}, {{3}}, 9);
  rec.counter(99, 1, 1.0);
  rec.flush();
  rec.close();
  EXPECT_EQ(rec.events(), 0U);
  EXPECT_EQ(rec.bytes_written(), 0U);
  EXPECT_EQ(rec.path(), "");
  EXPECT_EQ(rec.track_count(), 0U);
}

// "Costs nothing measurable": two million calls with arguments must take well under the time
// of even a trivial enabled call (tens of ns each); the bound is loose enough for sanitizers and
// a busy machine, yet a recorder that did real work while disabled would exceed it.
TEST(TraceRecorder, DisabledRecorderIsCheap) {
  TraceRecorder rec(nullptr);
  constexpr int kCalls = 2'000'000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) {
    rec.complete(1, static_cast<TimeNs>(i), 10, NameId{1}, {{"bytes", i}}, {}, 7);
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 200)
      << "a disabled recorder should cost about a nanosecond per call";
  EXPECT_EQ(rec.events(), 0U);
}

TEST(TraceRecorder, TracksGetSequentialIdsPidsAndTids) {
  Fixture f;
  const TrackId host = f.rec.process_track("host0");
  const TrackId api = f.rec.thread_track(host, "api");
  const TrackId dev = f.rec.process_track("dev0");
  const TrackId me = f.rec.thread_track(dev, "me0");
  const TrackId bw = f.rec.counter_track(dev, "bw", "GB/s");
  const TrackId global = f.rec.async_track(0, "network");
  EXPECT_EQ(host, 1U);
  EXPECT_EQ(api, 2U);
  EXPECT_EQ(dev, 3U);
  EXPECT_EQ(me, 4U);
  EXPECT_EQ(bw, 5U);
  EXPECT_EQ(global, 6U);
  ASSERT_EQ(f.log->tracks.size(), 6U);
  EXPECT_EQ(f.log->tracks[1].pid, host);
  EXPECT_EQ(f.log->tracks[1].tid, api);
  EXPECT_EQ(f.log->tracks[1].parent, host);
  EXPECT_EQ(f.log->tracks[3].pid, dev);
  EXPECT_EQ(f.log->tracks[4].pid, dev);
  EXPECT_EQ(f.log->tracks[4].unit, "GB/s");
  EXPECT_EQ(f.log->tracks[5].pid, 0U);
  EXPECT_EQ(f.rec.track(me).name, "me0");
  EXPECT_EQ(f.rec.track(me).kind, TrackKind::Thread);
}

TEST(TraceRecorder, InterningIsStableAndResolvedForTheWriter) {
  Fixture f;
  const NameId a = f.rec.intern("alpha");
  const NameId b = f.rec.intern("beta");
  EXPECT_EQ(a, 1U);
  EXPECT_EQ(b, 2U);
  EXPECT_EQ(f.rec.intern(std::string("alpha")), a);
  EXPECT_EQ(f.rec.name(b), "beta");
  const TrackId p = f.rec.process_track("p");
  const TrackId t = f.rec.thread_track(p, "t");
  f.rec.instant(t, 5, b, {{"n", 3U}, {"s", "v"}}, {{11}}, 99);
  f.rec.instant(t, 6, "free text");
  ASSERT_EQ(f.log->events.size(), 2U);
  EXPECT_EQ(f.log->events[0].name_id, b);
  EXPECT_EQ(f.log->events[0].name, "beta");
  EXPECT_EQ(f.log->events[0].correlation, 99U);
  ASSERT_EQ(f.log->events[0].args.size(), 2U);
  EXPECT_EQ(f.log->events[0].args[1].second, "v");
  ASSERT_EQ(f.log->events[0].flows.size(), 1U);
  EXPECT_EQ(f.log->events[0].flows[0].id, 11U);
  EXPECT_EQ(f.log->events[1].name_id, 0U);
  EXPECT_EQ(f.log->events[1].name, "free text");
  EXPECT_EQ(f.rec.events(), 2U);
}

// Arguments built at run time go through record() with pointer + size spans.
TEST(TraceRecorder, RecordTakesRuntimeArgumentLists) {
  Fixture f;
  const TrackId p = f.rec.process_track("p");
  const TrackId t = f.rec.thread_track(p, "t");
  std::vector<std::string> keys = {"a", "b", "c"};
  std::vector<Arg> args;
  for (std::size_t i = 0; i < keys.size(); ++i) args.emplace_back(keys[i], i);
  const std::vector<Flow> flows = {{7}, {8, FlowKind::Terminate}};
  TraceEvent e;
  e.type = EventType::Complete;
  e.track = t;
  e.ts = 10;
  e.duration = 5;
  e.name = "dynamic";
  e.extras.args = ConstSpan<Arg>(args.data(), args.size());
  e.extras.flows = ConstSpan<Flow>(flows.data(), flows.size());
  e.extras.correlation_id = 3;
  f.rec.record(e);
  ASSERT_EQ(f.log->events.size(), 1U);
  const Captured& c = f.log->events[0];
  EXPECT_EQ(c.type, EventType::Complete);
  EXPECT_EQ(c.duration, 5U);
  ASSERT_EQ(c.args.size(), 3U);
  EXPECT_EQ(c.args[2].first, "c");
  EXPECT_EQ(c.args[2].second, "2");
  ASSERT_EQ(c.flows.size(), 2U);
  EXPECT_EQ(c.flows[1].kind, FlowKind::Terminate);
  EXPECT_EQ(c.correlation, 3U);
  e.track = 1000;
  EXPECT_THROW(f.rec.record(e), TraceError);  // checked like the other calls
}

TEST(TraceRecorder, ArgConvertsEveryArithmeticType) {
  const Arg a("a", short{-3});
  const Arg b("b", 5U);
  const Arg c("c", 2.5F);
  const Arg d("d", false);
  const Arg e("e", "text");
  const Arg g("g", std::uint8_t{200});
  EXPECT_EQ(std::get<std::int64_t>(a.value), -3);
  EXPECT_EQ(std::get<std::uint64_t>(b.value), 5U);
  EXPECT_EQ(std::get<double>(c.value), 2.5);
  EXPECT_EQ(std::get<bool>(d.value), false);
  EXPECT_EQ(std::get<std::string_view>(e.value), "text");
  EXPECT_EQ(std::get<std::uint64_t>(g.value), 200U);
}

TEST(TraceRecorder, UnknownTrackThrowsNamingIt) {
  Fixture f;
  const TrackId p = f.rec.process_track("p");
  const std::string what = error_of([&] { f.rec.complete(p + 76, 0, 1, "x"); });
  EXPECT_NE(what.find("unknown track id 77"), std::string::npos) << what;
  EXPECT_NE(what.find("capture.trace"), std::string::npos) << what;
  EXPECT_NE(error_of([&] { f.rec.instant(0, 0, "x"); }).find("unknown track id 0"), std::string::npos);
  EXPECT_NE(error_of([&] { f.rec.thread_track(42, "t"); }).find("unknown track id 42"), std::string::npos);
  EXPECT_TRUE(f.log->events.empty());
}

TEST(TraceRecorder, EndWithoutBeginThrowsNamingTheTrack) {
  Fixture f;
  const TrackId p = f.rec.process_track("dev0");
  const TrackId t = f.rec.thread_track(p, "command processor");
  f.rec.begin(t, 1, "a");
  f.rec.end(t, 2);
  const std::string what = error_of([&] { f.rec.end(t, 3); });
  EXPECT_NE(what.find("end() without a matching begin()"), std::string::npos) << what;
  EXPECT_NE(what.find("'command processor'"), std::string::npos) << what;
  const TrackId dma = f.rec.async_track(p, "dma");
  EXPECT_NE(error_of([&] { f.rec.end(dma, 3); }).find("'dma'"), std::string::npos);
}

TEST(TraceRecorder, TrackKindsAreEnforced) {
  Fixture f;
  const TrackId p = f.rec.process_track("p");
  const TrackId t = f.rec.thread_track(p, "t");
  const TrackId c = f.rec.counter_track(p, "c", "ns");
  EXPECT_NE(error_of([&] { f.rec.counter(t, 1, 2.0); }).find("not a counter track"), std::string::npos);
  EXPECT_NE(error_of([&] { f.rec.complete(c, 1, 2, "x"); }).find("counter tracks take"), std::string::npos);
  EXPECT_NE(error_of([&] { f.rec.thread_track(t, "nested"); }).find("is not a process track"), std::string::npos);
  EXPECT_NE(error_of([&] { f.rec.async_track(c, "a"); }).find("counter track"), std::string::npos);
  EXPECT_NE(error_of([&] { f.rec.begin(t, 1, NameId{9}); }).find("unknown name id 9"), std::string::npos);
}

TEST(TraceRecorder, OverlappingAsyncSlicesGoToLanesThatAreReused) {
  Fixture f;
  const TrackId p = f.rec.process_track("dev0");
  const TrackId dma = f.rec.async_track(p, "dma");
  f.rec.complete(dma, 100, 100, "a");   // [100, 200] lane 1 (the track itself)
  f.rec.complete(dma, 150, 100, "b");   // [150, 250] lane 2
  f.rec.complete(dma, 200, 100, "c");   // [200, 300] lane 1 again: a ended at 200
  f.rec.complete(dma, 210, 10, "d");    // [210, 220] lane 3
  f.rec.complete(dma, 260, 10, "e");    // [260, 270] lane 2 again
  ASSERT_EQ(f.log->tracks.size(), 4U);  // p, dma, 2 lanes
  const TrackInfo& lane2 = f.log->tracks[2];
  const TrackInfo& lane3 = f.log->tracks[3];
  EXPECT_EQ(lane2.name, "dma #2");
  EXPECT_EQ(lane2.parent, dma);
  EXPECT_EQ(lane2.lane_of, dma);
  EXPECT_EQ(lane2.lane, 1U);
  EXPECT_EQ(lane2.pid, p);
  EXPECT_EQ(lane2.kind, TrackKind::Async);
  EXPECT_EQ(lane3.name, "dma #3");
  const std::vector<TrackId> expected = {dma, lane2.id, dma, lane3.id, lane2.id};
  ASSERT_EQ(f.log->events.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(f.log->events[i].track, expected[i]) << "slice " << f.log->events[i].name;
  }
  // Instants take no lane.
  f.rec.instant(dma, 215, "mark");
  EXPECT_EQ(f.log->events.back().track, dma);
  EXPECT_EQ(f.rec.track_count(), 4U);
}

TEST(TraceRecorder, AsyncBeginEndCloseOldestFirst) {
  Fixture f;
  const TrackId p = f.rec.process_track("dev0");
  const TrackId q = f.rec.async_track(p, "queue");
  f.rec.begin(q, 100, "A");  // lane 1
  f.rec.begin(q, 150, "B");  // lane 2
  f.rec.end(q, 200);         // closes A on lane 1
  f.rec.begin(q, 250, "C");  // lane 1, free since 200
  f.rec.end(q, 300);         // closes B on lane 2
  f.rec.end(q, 400);         // closes C on lane 1
  const TrackId lane2 = f.log->tracks.back().id;
  const std::vector<std::pair<EventType, TrackId>> expected = {
      {EventType::SliceBegin, q}, {EventType::SliceBegin, lane2}, {EventType::SliceEnd, q},
      {EventType::SliceBegin, q}, {EventType::SliceEnd, lane2},   {EventType::SliceEnd, q}};
  ASSERT_EQ(f.log->events.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(f.log->events[i].type, expected[i].first) << i;
    EXPECT_EQ(f.log->events[i].track, expected[i].second) << i;
  }
}

// Property: whatever order slices arrive in, no two slices on one lane overlap; when they
// arrive in start order, the number of lanes is the maximum overlap (first fit is optimal).
TEST(TraceRecorder, LanesNeverOverlapAndAreMinimalInStartOrder) {
  std::mt19937_64 rng(1234);
  std::vector<std::pair<TimeNs, TimeNs>> intervals;
  for (int i = 0; i < 2000; ++i) {
    const TimeNs start = rng() % 100000;
    intervals.emplace_back(start, 1 + rng() % 3000);
  }
  for (const bool start_order : {false, true}) {
    if (start_order) std::sort(intervals.begin(), intervals.end());
    Fixture f;
    const TrackId p = f.rec.process_track("p");
    const TrackId a = f.rec.async_track(p, "a");
    for (const auto& [start, duration] : intervals) f.rec.complete(a, start, duration, "s");
    std::map<TrackId, std::vector<std::pair<TimeNs, TimeNs>>> by_lane;
    for (const Captured& c : f.log->events) by_lane[c.track].emplace_back(c.ts, c.ts + c.duration);
    for (auto& [lane, slices] : by_lane) {
      std::sort(slices.begin(), slices.end());
      for (std::size_t i = 1; i < slices.size(); ++i) {
        EXPECT_LE(slices[i - 1].second, slices[i].first) << "overlap on lane " << lane;
      }
    }
    if (start_order) {
      std::vector<std::pair<TimeNs, int>> edges;
      for (const auto& [start, duration] : intervals) {
        edges.emplace_back(start, 1);
        edges.emplace_back(start + duration, -1);
      }
      std::sort(edges.begin(), edges.end());  // ends (-1) before starts at equal times
      int depth = 0;
      int max_depth = 0;
      for (const auto& edge : edges) max_depth = std::max(max_depth, depth += edge.second);
      EXPECT_EQ(by_lane.size(), static_cast<std::size_t>(max_depth));
    }
  }
}

TEST(TraceRecorder, CloseIsIdempotentAndLaterCallsAreIgnored) {
  auto log = std::make_shared<CaptureLog>();
  {
    TraceRecorder rec(std::make_unique<CaptureWriter>(log));
    const TrackId p = rec.process_track("p");
    const TrackId t = rec.thread_track(p, "t");
    rec.complete(t, 1, 2, "x");
    rec.flush();
    EXPECT_EQ(log->flushes, 1);
    rec.close();
    rec.close();
    EXPECT_FALSE(rec.enabled());
    rec.complete(t, 5, 2, "y");
    rec.complete(999, 5, 2, "no error after close");
    EXPECT_EQ(rec.events(), 1U);
  }
  EXPECT_EQ(log->closes, 1);  // the destructor does not close twice
  EXPECT_EQ(log->events.size(), 1U);
}

TEST(TraceRecorder, DestructorCloses) {
  auto log = std::make_shared<CaptureLog>();
  { TraceRecorder rec(std::make_unique<CaptureWriter>(log)); }
  EXPECT_EQ(log->closes, 1);
}

TEST(TraceWriterFactory, FormatFollowsTheExtension) {
  EXPECT_EQ(resolve_trace_format("run.json", TraceFormat::Auto), TraceFormat::ChromeJson);
  EXPECT_EQ(resolve_trace_format("run.pftrace", TraceFormat::Auto), TraceFormat::Perfetto);
  EXPECT_EQ(resolve_trace_format("json", TraceFormat::Auto), TraceFormat::Perfetto);
  EXPECT_EQ(resolve_trace_format("run.json", TraceFormat::Perfetto), TraceFormat::Perfetto);
  const auto dir = std::filesystem::temp_directory_path();
  const std::string stem = "sohusim_" + std::to_string(::getpid()) + "_factory";
  const std::string json = (dir / (stem + ".json")).string();
  const std::string proto = (dir / (stem + ".pftrace")).string();
  auto a = make_trace_writer(json);
  auto b = make_trace_writer(proto);
  const std::string forced = (dir / (stem + "_forced.json")).string();
  auto c = make_trace_writer(forced, TraceFormat::Perfetto);
  EXPECT_NE(dynamic_cast<ChromeJsonWriter*>(a.get()), nullptr);
  EXPECT_NE(dynamic_cast<PerfettoWriter*>(b.get()), nullptr);
  EXPECT_NE(dynamic_cast<PerfettoWriter*>(c.get()), nullptr);
  EXPECT_EQ(a->path(), json);
  a.reset();
  b.reset();
  c.reset();
  for (const std::string& path : {json, proto, forced}) std::filesystem::remove(path);
  const std::string what = error_of([] { make_trace_writer("/no/such/dir/x.json"); });
  EXPECT_NE(what.find("/no/such/dir/x.json"), std::string::npos) << what;
  EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
}

}  // namespace
}  // namespace sohusim::counters
