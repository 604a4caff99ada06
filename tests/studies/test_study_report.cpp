// The study report: Pareto fronts, objectives, axis numbers with units, and the page's
// structure over a small results database.
#include <cstdio>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/studies/study_report.hpp"

namespace sohusim::studies {
namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(StudyReport, ParetoFrontKeepsTheUndominatedPoints) {
  // (tokens/s: more is better, watts: less is better)
  const std::vector<std::pair<double, double>> xy = {{100, 50}, {200, 80}, {150, 90}, {200, 70}, {50, 40}, {50, 45}};
  EXPECT_EQ(pareto_front(xy, true, false), (std::vector<std::size_t>{4, 0, 3}));
  EXPECT_EQ(pareto_front(xy, true, true), (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(pareto_front({{1, 1}, {1, 1}}, true, true), (std::vector<std::size_t>{0, 1}));  // ties both stay
  EXPECT_TRUE(pareto_front({}, true, true).empty());
}

TEST(StudyReport, ObjectivesTakeAGivenDirectionOrGuessIt) {
  EXPECT_TRUE(parse_objective("output_tokens_per_second").maximize);
  EXPECT_TRUE(parse_objective("metrics.goodput_per_s").maximize);
  EXPECT_FALSE(parse_objective("average_watts").maximize);
  EXPECT_FALSE(parse_objective("ttft_ms.p99").maximize);
  const Objective o = parse_objective("configuration.devices:max");
  EXPECT_EQ(o.metric, "configuration.devices");
  EXPECT_TRUE(o.maximize);
  EXPECT_THROW(parse_objective(":min"), std::invalid_argument);
}

TEST(StudyReport, AxisValuesWithUnitsAreNumbers) {
  double v = 0;
  EXPECT_TRUE(axis_number("64", v));
  EXPECT_EQ(v, 64);
  EXPECT_TRUE(axis_number("400 GB/s", v));
  EXPECT_DOUBLE_EQ(v, 400e9);
  EXPECT_TRUE(axis_number("1.5 GHz", v));
  EXPECT_DOUBLE_EQ(v, 1.5e9);
  EXPECT_FALSE(axis_number("hbm3e-9600", v));
  EXPECT_FALSE(axis_number("", v));
}

std::string fresh_db(const std::string& name) {
  const std::string path = testing::TempDir() + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

void add(ResultStore& db, unsigned index, const std::string& hbm, const std::string& c2c, double tps, double watts,
         const std::string& status = "ok") {
  SweepPoint p;
  p.index = index;
  p.key = "k" + std::to_string(index);
  p.params = {{"hbm", hbm}, {"device.c2c.bandwidth", c2c}};
  p.args = {"run", "--hbm", hbm, "--json"};
  PointOutcome o;
  o.status = status;
  if (status == "ok") {
    o.result = "{\"output_tokens_per_second\": " + std::to_string(tps) +
               ", \"average_watts\": " + std::to_string(watts) + ", \"tpot_ms\": 7, \"configuration\": {\"hash\": \"h" +
               std::to_string(index) + "\"}}";
  } else {
    o.exit_code = 1;
    o.error = "sohusim run: <something> failed";
  }
  db.record(p, o);
}

TEST(StudyReport, PageHasAxesChartsFrontsAndLinkedPoints) {
  ResultStore db(fresh_db("report.sqlite"));
  db.set_meta("name", "tiny <study>");
  db.set_meta("command", "run");
  db.set_meta("spec", "name: tiny\n");
  add(db, 0, "hbm3e-8000", "100 GB/s", 8000, 1300);
  add(db, 1, "hbm3e-8000", "400 GB/s", 8600, 1350);
  add(db, 2, "hbm3e-9600", "100 GB/s", 8100, 1290);
  add(db, 3, "hbm3e-9600", "400 GB/s", 0, 0, "failed");
  std::ostringstream os;
  write_study_report(os, db, StudyReportOptions{});
  const std::string html = os.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_NE(html.find("<h1>Study: tiny &lt;study&gt;</h1>"), std::string::npos);
  EXPECT_NE(html.find("4 points: 3 ok, 1 failed or timed out"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"t\">device.c2c.bandwidth</td><td class=\"t\">100 GB/s, 400 GB/s</td>"),
            std::string::npos);
  // The usual run metrics present: tokens/s, TPOT, watts (a line chart each; TPOT is the same
  // everywhere: said, not drawn) and the tokens/s-against-watts front.
  EXPECT_EQ(count(html, "<svg class=\"chart line-chart\""), 2U);
  EXPECT_EQ(count(html, "<svg class=\"chart heat-map\""), 2U);
  EXPECT_NE(html.find("tpot_ms is 7 at every point"), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"chart pareto\" id=\"pareto-0\""), 1U);
  // Point 2 beats point 0 on both; 1 and 2 trade tokens/s against watts.
  EXPECT_EQ(count(html, "class=\"on-front\""), 2U);
  EXPECT_NE(
      html.find(
          "2 of 3 points on the front (red; each links to its row): <a href=\"#p2\">#2</a> <a href=\"#p1\">#1</a>"),
      std::string::npos);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(count(html, "<tr id=\"p" + std::to_string(i) + "\">"), 1U) << i;
  EXPECT_EQ(count(html, "<a href=\"#p1\">"), 2U);  // the chart's point and the front's list
  EXPECT_NE(html.find("<td class=\"err\" colspan=\"3\">sohusim run: &lt;something&gt; failed</td>"), std::string::npos);
  EXPECT_NE(html.find("<summary>h2</summary><code class=\"args\">sohusim run --hbm hbm3e-9600 --json</code>"),
            std::string::npos);
  for (const char* bad : {"http://", "https://", "<script", "<link", "<img"})
    EXPECT_EQ(html.find(bad), std::string::npos);
}

TEST(StudyReport, UnknownMetricsAreNamed) {
  ResultStore db(fresh_db("report_bad.sqlite"));
  add(db, 0, "hbm3e-8000", "100 GB/s", 8000, 1300);
  StudyReportOptions o;
  o.metrics = {"tokens"};
  std::ostringstream os;
  try {
    write_study_report(os, db, o);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no column `tokens`"), std::string::npos);
  }
}

}  // namespace
}  // namespace sohusim::studies
