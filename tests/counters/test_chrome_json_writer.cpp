// ChromeJsonWriter: files are parsed with nlohmann::json (which rejects invalid UTF-8 and bad
// escapes) and checked event by event; number formatting is checked on the raw text.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sohusim/counters/chrome_json_writer.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "trace_files_support.hpp"

namespace sohusim::counters {
namespace {

using nlohmann::json;

using namespace testing_files;

std::vector<json> events_of(const std::string& text) {
  const json doc = json::parse(text);  // throws (fails the test) if not valid JSON
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  return doc.at("traceEvents").get<std::vector<json>>();
}

std::vector<json> with(const std::vector<json>& events, const std::string& ph) {
  std::vector<json> out;
  std::copy_if(events.begin(), events.end(), std::back_inserter(out), [&](const json& e) { return e.at("ph") == ph; });
  return out;
}

std::string micros(TimeNs ns) {
  std::string s;
  append_json_microseconds(s, ns);
  return s;
}

std::string json_quoted(std::string_view bytes) {
  std::string s;
  append_json_string(s, bytes);
  return s;
}

TEST(ChromeJsonWriter, MicrosecondsHaveExactlyThreeDecimals) {
  EXPECT_EQ(micros(0), "0.000");
  EXPECT_EQ(micros(1), "0.001");
  EXPECT_EQ(micros(10), "0.010");
  EXPECT_EQ(micros(999), "0.999");
  EXPECT_EQ(micros(1000), "1.000");
  EXPECT_EQ(micros(1234), "1.234");
  EXPECT_EQ(micros(1234567), "1234.567");
  EXPECT_EQ(micros(std::numeric_limits<TimeNs>::max()), "18446744073709551.615");
}

TEST(ChromeJsonWriter, StringsAreEscapedAndInvalidUtf8Replaced) {
  const std::string fffd = "\xEF\xBF\xBD";
  static const char kControls[] = "nul\0soh\x01us\x1f del\x7f";
  struct Case {
    std::string in;
    std::string decoded;  // what a JSON reader must get back
  };
  const std::vector<Case> cases = {
      {"plain", "plain"},
      {"quote\" back\\slash", "quote\" back\\slash"},
      {"nl\n tab\t cr\r bs\b ff\f", "nl\n tab\t cr\r bs\b ff\f"},
      {std::string(kControls, sizeof kControls - 1), std::string(kControls, sizeof kControls - 1)},
      {"caf\xC3\xA9 \xF0\x9D\x84\x9E \xE2\x82\xAC", "caf\xC3\xA9 \xF0\x9D\x84\x9E \xE2\x82\xAC"},
      {"bad \xFF byte", "bad " + fffd + " byte"},
      {"cut \xC3", "cut " + fffd},
      {"cut3 \xE2\x82"
       "A",
       "cut3 " + fffd + "A"},
      {"overlong \xE0\x80\x80", "overlong " + fffd + fffd + fffd},
      {"overlong2 \xC0\xAF", "overlong2 " + fffd + fffd},
      {"surrogate \xED\xA0\x80", "surrogate " + fffd + fffd + fffd},
      {"too big \xF4\x90\x80\x80", "too big " + fffd + fffd + fffd + fffd},
      {"lone cont \x80\xBF", "lone cont " + fffd + fffd},
  };
  for (const Case& c : cases) {
    const std::string text = json_quoted(c.in);
    json parsed;
    ASSERT_NO_THROW(parsed = json::parse(text)) << text;
    EXPECT_EQ(parsed.get<std::string>(), c.decoded) << text;
  }
  EXPECT_EQ(json_quoted(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(json_quoted("a\"b"), "\"a\\\"b\"");
}

struct Ids {
  TrackId host, dev, api, cp, dma, bw;
};

const std::string kNasty = std::string("we\"ird\\ name\n\x01 \xFF end");

Ids record_scenario(TraceRecorder& rec) {
  Ids t{};
  t.host = rec.process_track("host0");
  t.dev = rec.process_track("dev0");
  t.api = rec.thread_track(t.host, kNasty);
  t.cp = rec.thread_track(t.dev, "cp");
  t.dma = rec.async_track(t.dev, "dma");
  t.bw = rec.counter_track(t.dev, "hbm.bw", "GB/s");
  rec.begin(t.api, 1234, rec.intern("launch"),
            {{"i64", -5}, {"u64", 7U}, {"dbl", 2.5}, {"flag", true}, {"str", kNasty}}, {{5}}, 42);
  rec.complete(t.api, 1500, 1, "tiny");
  rec.end(t.api, 5000);
  rec.complete(t.cp, 6000, 2000, kNasty, {}, {{5}}, 42);
  rec.instant(t.cp, 6500, "irq", {{"vector", 3}});
  rec.complete(t.cp, 9000, 100, "done", {}, {{5, FlowKind::Terminate}});
  rec.complete(t.cp, 9500, 100, "again", {}, {{5}});  // id 5 reused after termination
  rec.complete(t.dma, 10000, 500, "xfer a");
  rec.complete(t.dma, 10200, 500, "xfer b");  // overlaps: lane 2 in the recorder
  rec.begin(t.dma, 11000, "open");
  rec.end(t.dma, 11500);
  rec.counter(t.bw, 10000, 12.5);
  rec.counter(t.bw, 20000, 0);
  rec.complete(t.cp, std::uint64_t{123456789012345}, 1, "late in the run");
  return t;
}

TEST(ChromeJsonWriter, ScenarioParsesAndMapsEveryEvent) {
  const std::string path = temp_path("scenario.json");
  Ids t{};
  {
    TraceRecorder rec(std::make_unique<ChromeJsonWriter>(path));
    t = record_scenario(rec);
  }
  const std::string text = read_file(path);
  const std::vector<json> events = events_of(text);

  // One event per line, between the header and the footer.
  EXPECT_EQ(text.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", 0), 0U);
  EXPECT_EQ(text.substr(text.size() - 4), "\n]}\n");
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), events.size() + 2);

  // Timestamps: raw text, exactly three decimals.
  EXPECT_NE(text.find("\"ts\":1.234"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":1.500,"), std::string::npos);
  EXPECT_NE(text.find("\"dur\":0.001"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":123456789012.345,"), std::string::npos);

  // Metadata.
  const auto meta = with(events, "M");
  ASSERT_EQ(meta.size(), 4U);  // 2 processes, 2 threads
  std::map<std::string, std::string> names;
  for (const json& m : meta) {
    names[m.at("name").get<std::string>() + "/" + std::to_string(m.at("pid").get<int>()) + "/" +
          std::to_string(m.at("tid").get<int>())] = m.at("args").at("name");
  }
  const std::string nasty_decoded = "we\"ird\\ name\n\x01 \xEF\xBF\xBD end";
  EXPECT_EQ(names.at("process_name/" + std::to_string(t.host) + "/0"), "host0");
  EXPECT_EQ(names.at("process_name/" + std::to_string(t.dev) + "/0"), "dev0");
  EXPECT_EQ(names.at("thread_name/" + std::to_string(t.host) + "/" + std::to_string(t.api)), nasty_decoded);
  EXPECT_EQ(names.at("thread_name/" + std::to_string(t.dev) + "/" + std::to_string(t.cp)), "cp");

  // Thread slices.
  const auto begins = with(events, "B");
  ASSERT_EQ(begins.size(), 1U);
  EXPECT_EQ(begins[0].at("name"), "launch");
  EXPECT_EQ(begins[0].at("pid"), t.host);
  EXPECT_EQ(begins[0].at("tid"), t.api);
  const json& args = begins[0].at("args");
  EXPECT_EQ(args.at("i64"), -5);
  EXPECT_EQ(args.at("u64"), 7U);
  EXPECT_EQ(args.at("dbl"), 2.5);
  EXPECT_EQ(args.at("flag"), true);
  EXPECT_EQ(args.at("str"), nasty_decoded);
  EXPECT_EQ(args.at("correlation_id"), 42);
  const auto ends = with(events, "E");
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_DOUBLE_EQ(ends[0].at("ts").get<double>(), 5.0);
  const auto completes = with(events, "X");
  ASSERT_EQ(completes.size(), 5U);
  EXPECT_EQ(completes[1].at("name"), nasty_decoded);
  EXPECT_DOUBLE_EQ(completes[1].at("dur").get<double>(), 2.0);
  EXPECT_EQ(completes[1].at("args").at("correlation_id"), 42);
  EXPECT_EQ(completes[0].count("args"), 0U);

  // Instants are thread-scoped.
  const auto instants = with(events, "i");
  ASSERT_EQ(instants.size(), 1U);
  EXPECT_EQ(instants[0].at("s"), "t");
  EXPECT_EQ(instants[0].at("args").at("vector"), 3);

  // Async: b/e pairs with one id per slice, category = the async track, also on its lanes.
  const auto b = with(events, "b");
  const auto e = with(events, "e");
  ASSERT_EQ(b.size(), 3U);
  ASSERT_EQ(e.size(), 3U);
  std::set<std::uint64_t> ids;
  for (std::size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i].at("cat"), "dma");
    EXPECT_EQ(e[i].at("cat"), "dma");
    EXPECT_EQ(b[i].at("pid"), t.dev);
    ids.insert(b[i].at("id").get<std::uint64_t>());
    const auto match = std::find_if(e.begin(), e.end(), [&](const json& x) { return x.at("id") == b[i].at("id"); });
    ASSERT_NE(match, e.end());
    EXPECT_EQ(match->at("name"), b[i].at("name"));
    EXPECT_GT(match->at("ts").get<double>(), b[i].at("ts").get<double>());
  }
  EXPECT_EQ(ids.size(), 3U);
  EXPECT_EQ(b[1].at("name"), "xfer b");
  EXPECT_LT(b[1].at("ts").get<double>(), e[0].at("ts").get<double>());  // they overlap

  // Counters.
  const auto counters = with(events, "C");
  ASSERT_EQ(counters.size(), 2U);
  EXPECT_EQ(counters[0].at("name"), "hbm.bw (GB/s)");
  EXPECT_EQ(counters[0].at("args").at("hbm.bw (GB/s)"), 12.5);
  EXPECT_EQ(counters[1].at("args").at("hbm.bw (GB/s)"), 0);
  EXPECT_EQ(counters[0].at("pid"), t.dev);

  // Flows: s at the first point in time, t later, f at termination; a reused id starts again
  // with s. Points go in time order whatever order they were recorded in.
  std::map<int, std::vector<std::string>> flow_phases;
  std::map<int, std::vector<double>> flow_times;
  for (const json& ev : events) {
    const std::string ph = ev.at("ph");
    if (ph == "s" || ph == "t" || ph == "f") {
      EXPECT_EQ(ev.at("bp"), "e");
      flow_phases[ev.at("id").get<int>()].push_back(ph);
      flow_times[ev.at("id").get<int>()].push_back(ev.at("ts").get<double>());
    }
  }
  ASSERT_EQ(flow_phases.size(), 1U);
  EXPECT_EQ(flow_phases[5], (std::vector<std::string>{"s", "t", "f", "s"}));
  EXPECT_EQ(flow_times[5], (std::vector<double>{1.234, 6.0, 9.0, 9.5}));
  const auto flow_start = with(events, "s")[0];
  EXPECT_EQ(flow_start.at("pid"), t.host);
  EXPECT_EQ(flow_start.at("tid"), t.api);
  EXPECT_DOUBLE_EQ(flow_start.at("ts").get<double>(), 1.234);
}

// Slices are recorded when they end, so a flow's points arrive out of time order: the one
// that starts the flow in time gets "s", whatever was recorded first. A terminating id that is
// not open ends nothing; points on async tracks are left out.
TEST(ChromeJsonWriter, FlowPhasesFollowTimeNotRecordingOrder) {
  const std::string path = temp_path("flow_order.json");
  {
    TraceRecorder rec(std::make_unique<ChromeJsonWriter>(path));
    const TrackId host = rec.process_track("host0"), dev = rec.process_track("dev0");
    const TrackId api = rec.thread_track(host, "api"), cp = rec.thread_track(dev, "cp");
    const TrackId dma = rec.async_track(dev, "dma");
    rec.complete(cp, 30000, 100, "device part", {}, {{6}}, 43);
    rec.complete(cp, 31000, 100, "late end", {}, {{7, FlowKind::Terminate}});  // 7 never started
    rec.complete(dma, 26000, 100, "on an async track", {}, {{6}}, 43);
    rec.complete(api, 25000, 8000, "call", {}, {{6}}, 43);
    rec.instant(api, 40000, "return", {}, {{6, FlowKind::Terminate}});
  }
  std::ifstream in(path);
  const json doc = json::parse(in);
  std::filesystem::remove(path);
  std::vector<std::pair<std::string, double>> points;
  for (const json& ev : doc.at("traceEvents")) {
    const std::string ph = ev.at("ph");
    if (ph != "s" && ph != "t" && ph != "f") continue;
    EXPECT_EQ(ev.at("id"), 6);
    points.emplace_back(ph, ev.at("ts").get<double>());
  }
  EXPECT_EQ(points, (std::vector<std::pair<std::string, double>>{{"s", 25.0}, {"t", 30.0}, {"f", 40.0}}));
}

TEST(ChromeJsonWriter, SameCallsGiveIdenticalFiles) {
  const std::string a = temp_path("a.json");
  const std::string b = temp_path("b.json");
  for (const std::string& path : {a, b}) {
    TraceRecorder rec(std::make_unique<ChromeJsonWriter>(path));
    record_scenario(rec);
  }
  EXPECT_GT(read_file(a).size(), 100U);
  EXPECT_EQ(read_file(a), read_file(b));
}

TEST(ChromeJsonWriter, FileClosedByExceptionUnwindingParses) {
  const std::string path = temp_path("exception.json");
  try {
    ChromeJsonWriterOptions options;
    options.flush_chunk = 512;  // several partial writes before the exception
    TraceRecorder rec(std::make_unique<ChromeJsonWriter>(path, options));
    const TrackId p = rec.process_track("p");
    const TrackId th = rec.thread_track(p, "t");
    for (std::uint64_t i = 0; i < 500; ++i) rec.complete(th, i * 100, 50, "work", {{"i", i}});
    rec.begin(th, 100000, "never ended");
    throw std::runtime_error("model failed");
  } catch (const std::runtime_error&) {
  }
  const std::vector<json> events = events_of(read_file(path));
  EXPECT_EQ(with(events, "X").size(), 500U);
  EXPECT_EQ(with(events, "B").size(), 1U);
}

TEST(ChromeJsonWriter, EmptyTraceIsValid) {
  const std::string path = temp_path("empty.json");
  { ChromeJsonWriter writer(path); }
  EXPECT_TRUE(events_of(read_file(path)).empty());
}

TEST(ChromeJsonWriter, NonFiniteNumbersBecomeNull) {
  const std::string path = temp_path("nonfinite.json");
  {
    TraceRecorder rec(std::make_unique<ChromeJsonWriter>(path));
    const TrackId p = rec.process_track("p");
    const TrackId c = rec.counter_track(p, "c", "");
    rec.counter(c, 1, std::numeric_limits<double>::quiet_NaN());
    const TrackId th = rec.thread_track(p, "t");
    rec.instant(th, 2, "x", {{"inf", std::numeric_limits<double>::infinity()}});
  }
  const std::vector<json> events = events_of(read_file(path));
  EXPECT_TRUE(with(events, "C")[0].at("args").at("c").is_null());
  EXPECT_TRUE(with(events, "i")[0].at("args").at("inf").is_null());
}

TEST(ChromeJsonWriter, OpenFailureNamesPathAndReason) {
  const std::string path = "/nonexistent-dir-sohusim/trace.json";
  try {
    ChromeJsonWriter writer(path);
    FAIL() << "opening " << path << " should have thrown";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace sohusim::counters
