// The serving part of a profile: its JSON round trip, the errors of a bad one (with the JSON
// path), and the report's serving section (outcome with the SLO, latency table, CDFs with
// the targets, throughput and KV occupancy over time) — absent for a single request.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"
#include "sohusim/profiler/report_html.hpp"

namespace sohusim::profiler {
namespace {

// Four requests: three completed (one of them preempted), one rejected; samples every 10 ms.
RunProfile serving_run() {
  RunProfile p;
  p.end_ns = 40e6;
  p.serving.slo_ttft_s = 0.015;
  p.serving.slo_tpot_s = 0.002;
  p.serving.kv_blocks = 100;
  p.serving.requests = {
      {0, 0.000, 100, 10, "completed", 0.010, 0.0015, 0.0235, 0.001, 0, 10},
      {1, 0.002, 200, 10, "completed", 0.020, 0.0010, 0.0290, 0.008, 1, 10},
      {2, 0.004, 50, 4, "completed", 0.012, 0.0030, 0.0210, 0.002, 0, 4},
      {3, 0.005, 9000, 10, "rejected", -1, -1, -1, -1, 0, 0},
  };
  p.serving.samples = {{0.01, 20, 2, 1, 3}, {0.02, 40, 3, 0, 12}, {0.03, 30, 1, 0, 20}, {0.04, 0, 0, 0, 24}};
  return p;
}

std::string render(const RunProfile& p) {
  std::ostringstream os;
  write_html_report(os, p, analyze(p), {});
  return os.str();
}

TEST(ServingProfile, RoundTripsThroughJson) {
  const RunProfile p = serving_run();
  std::stringstream s;
  write_profile(s, p);
  const RunProfile q = read_profile(s, "p.json");
  ASSERT_EQ(q.serving.requests.size(), 4u);
  EXPECT_EQ(q.serving.requests[1].status, "completed");
  EXPECT_EQ(q.serving.requests[1].preemptions, 1u);
  EXPECT_DOUBLE_EQ(q.serving.requests[2].tpot_s, 0.003);
  EXPECT_DOUBLE_EQ(q.serving.requests[3].ttft_s, -1);
  ASSERT_EQ(q.serving.samples.size(), 4u);
  EXPECT_DOUBLE_EQ(q.serving.samples[2].output_tokens, 20);
  EXPECT_DOUBLE_EQ(q.serving.slo_tpot_s, 0.002);
  // A single request's profile has no serving key at all.
  std::stringstream plain;
  write_profile(plain, RunProfile{});
  EXPECT_EQ(plain.str().find("\"serving\""), std::string::npos);
}

TEST(ServingProfile, ABadServingPartNamesItsPath) {
  auto error = [](const std::string& serving) {
    std::stringstream s;
    write_profile(s, RunProfile{});
    std::string text = s.str();
    text.insert(text.rfind('}'), ",\"serving\":" + serving);
    std::istringstream in(text);
    try {
      read_profile(in, "p.json");
    } catch (const ProfileError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(R"({"requests":[{"id":0,"arrival_s":0,"input":1,"output":1,"status":"lost"}],"samples":[]})")
                .find("p.json: $.serving.requests[0].status: \"lost\""),
            std::string::npos);
  EXPECT_NE(error(R"({"requests":[],"samples":[{"t_s":2},{"t_s":1}]})").find("$.serving.samples[1].t_s"),
            std::string::npos);
  EXPECT_NE(error(R"({"samples":[]})").find("$.serving.requests: expected an array"), std::string::npos);
}

TEST(ServingProfile, TheReportHasAServingSectionWithTheSlo) {
  const std::string html = render(serving_run());
  ASSERT_NE(html.find("id=\"serving-section\""), std::string::npos);
  EXPECT_NE(html.find("href=\"#serving-section\""), std::string::npos);
  // Outcome: 3 completed, 1 rejected; within TTFT 15 ms and TPOT 2 ms: request 0 only.
  EXPECT_NE(html.find("4 requests: 3 completed, 1 rejected, 0 unfinished; 1 preemptions"), std::string::npos);
  EXPECT_NE(html.find("<b>1 of 3</b> met (33.3%)"), std::string::npos);
  // TTFT percentiles over 10, 12, 20 ms.
  EXPECT_NE(html.find("<td class=\"t\">TTFT</td><td>12.0 ms</td>"), std::string::npos);
  for (const char* id : {"id=\"serving-cdf\"", "id=\"serving-time\"", "data-metric=\"TTFT\"", "data-metric=\"TPOT\"",
                         "class=\"slo\"", "class=\"serving-kv\"", "class=\"serving-throughput\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  // No serving run, no section.
  EXPECT_EQ(render(RunProfile{}).find("serving-section"), std::string::npos);
}

}  // namespace
}  // namespace sohusim::profiler
