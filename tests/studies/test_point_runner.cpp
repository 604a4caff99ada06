// PointRunner: points as processes, N at a time; exit codes, stderr tails, time-outs that kill
// the whole process group, and stop().
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "sohusim/studies/point_runner.hpp"

namespace sohusim::studies {
namespace {

SweepPoint shell(unsigned index, const std::string& script) {
  SweepPoint p;
  p.index = index;
  p.key = "p" + std::to_string(index);
  p.args = {"-c", script};
  return p;
}

std::string work_dir(const std::string& name) {
  const std::string d = testing::TempDir() + name;
  std::filesystem::remove_all(d);
  return d;
}

TEST(PointRunner, ReportsOutputExitCodesAndStderr) {
  PointRunner r("/bin/sh", work_dir("runner_basic"), 2, 30);
  std::map<std::string, PointOutcome> got;
  const std::vector<SweepPoint> points = {shell(0, "echo '{\"x\": 1}'"), shell(1, "echo bad input >&2; exit 2"),
                                          shell(2, "echo no json"), shell(3, "kill -SEGV $$")};
  EXPECT_EQ(r.run(points, [&](const SweepPoint& p, const PointOutcome& o) { got[p.key] = o; }), 4U);
  ASSERT_EQ(got.size(), 4U);
  EXPECT_EQ(got["p0"].status, "ok");
  EXPECT_EQ(got["p0"].result, "{\"x\": 1}\n");
  EXPECT_EQ(got["p1"].status, "failed");
  EXPECT_EQ(got["p1"].exit_code, 2);
  EXPECT_EQ(got["p1"].error, "bad input\n");
  EXPECT_EQ(got["p2"].status, "failed");  // exit 0 without a JSON object
  EXPECT_EQ(got["p3"].status, "failed");
  EXPECT_NE(got["p3"].error.find("killed by signal 11"), std::string::npos) << got["p3"].error;
}

TEST(PointRunner, ATimeOutKillsThePointAndWhatItStarted) {
  const std::string dir = work_dir("runner_timeout");
  PointRunner r("/bin/sh", dir, 1, 0.3);
  const std::string marker = dir + "/child-survived";
  std::map<std::string, PointOutcome> got;
  const auto t0 = std::chrono::steady_clock::now();
  // The point starts a grandchild that would write the marker after 1 s.
  r.run({shell(0, "(sleep 1; touch " + marker + ") & echo started >&2; sleep 30")},
        [&](const SweepPoint& p, const PointOutcome& o) { got[p.key] = o; });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
  EXPECT_EQ(got["p0"].status, "timeout");
  EXPECT_NE(got["p0"].error.find("started"), std::string::npos);
  EXPECT_NE(got["p0"].error.find("timeout of 0.3 s"), std::string::npos) << got["p0"].error;
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(PointRunner, StopEndsTheRunWithoutReportingKilledPoints) {
  PointRunner r("/bin/sh", work_dir("runner_stop"), 1, 30);
  std::vector<std::string> done;
  r.run({shell(0, "echo '{}'"), shell(1, "sleep 30"), shell(2, "echo '{}'")},
        [&](const SweepPoint& p, const PointOutcome&) {
          done.push_back(p.key);
          r.stop();
        });
  EXPECT_EQ(done, (std::vector<std::string>{"p0"}));
  EXPECT_TRUE(r.stopped());
}

TEST(PointRunner, AProgramThatCannotRunFailsEachPoint) {
  PointRunner r("/nonexistent/sohusim", work_dir("runner_missing"), 1, 30);
  PointOutcome got;
  r.run({shell(0, "true")}, [&](const SweepPoint&, const PointOutcome& o) { got = o; });
  EXPECT_EQ(got.status, "failed");
  EXPECT_EQ(got.exit_code, 127);
  EXPECT_NE(got.error.find("cannot execute"), std::string::npos);
}

}  // namespace
}  // namespace sohusim::studies
