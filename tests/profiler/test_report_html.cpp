// The HTML run report: its sections and charts, escaping, the critical path and gaps on the
// timeline, bounded size with many ops, "no data" when empty, determinism. The profile and
// analysis are built by hand (example_profile_support.hpp); tests/tools/render_report.py
// renders the same report in a real browser.
#include <cctype>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "profiler/example_profile_support.hpp"
#include "sohusim/profiler/report_html.hpp"

namespace sohusim::profiler {
namespace {

std::string render(const RunProfile& p, const Analysis& a, const ReportOptions& o = {}) {
  std::ostringstream os;
  write_html_report(os, p, a, o);
  return os.str();
}

/// The SVG chart with this id, from its id to its closing tag.
std::string chart(const std::string& html, const std::string& id) {
  std::string svg = html.substr(html.find("id=\"" + id + "\""));
  return svg.substr(0, svg.find("</svg>"));
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + what.size())) ++n;
  return n;
}

/// The markup's tags nest properly (every element closed in order; void elements and
/// self-closing SVG elements aside), and text holds no stray angle bracket (something not
/// escaped). Returns the first problem, or "".
std::string check_nesting(const std::string& html) {
  std::vector<std::string> stack;
  std::size_t pos = 0;
  while (true) {
    std::size_t lt = html.find('<', pos);
    std::string text = html.substr(pos, lt == std::string::npos ? std::string::npos : lt - pos);
    if (text.find('>') != std::string::npos) return "stray '>' in text: " + text.substr(0, 80);
    if (lt == std::string::npos) break;
    std::size_t gt = html.find('>', lt);
    if (gt == std::string::npos) return "unterminated tag at " + std::to_string(lt);
    std::string tag = html.substr(lt + 1, gt - lt - 1);
    pos = gt + 1;
    if (tag.rfind("!DOCTYPE", 0) == 0) continue;
    if (tag.find('<') != std::string::npos) return "stray '<' in text near: " + tag.substr(0, 80);
    bool closing = !tag.empty() && tag[0] == '/';
    std::size_t n0 = closing ? 1 : 0, n1 = n0;
    while (n1 < tag.size() && std::isalnum(static_cast<unsigned char>(tag[n1]))) ++n1;
    std::string name = tag.substr(n0, n1 - n0);
    if (name.empty()) return "stray '<' in text near: " + tag.substr(0, 80);
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        return "</" + name + "> closes <" + (stack.empty() ? std::string("nothing") : stack.back()) + ">";
      }
      stack.pop_back();
    } else if (name != "meta" && name != "br" && tag.back() != '/') {
      stack.push_back(name);
    }
  }
  return stack.empty() ? "" : "<" + stack.back() + "> never closed";
}

TEST(ReportHtml, NestingCheckCatchesWhatItLooksFor) {
  EXPECT_EQ(check_nesting("<!DOCTYPE html><p>a &lt; b<br><rect x=\"1\"/></p>"), "");
  EXPECT_NE(check_nesting("<p>a < b</p>"), "");
  EXPECT_NE(check_nesting("<p>a > b</p>"), "");
  EXPECT_NE(check_nesting("<p><b></p>"), "");
  EXPECT_NE(check_nesting("<p>"), "");
}

TEST(ReportHtml, HasEverySectionAndChart) {
  test::ExampleRun run = test::example_run();
  std::string html = render(run.profile, run.analysis);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  for (const char* section : {"summary", "timeline-section", "utilization-section", "roofline-section",
                              "stalls-section", "top-ops-section", "commands-section", "findings-section"}) {
    EXPECT_EQ(count(html, std::string("<section id=\"") + section + "\""), 1u) << section;
  }
  for (const char* chart : {"verdict-share", "timeline", "utilization", "roofline", "stalls"}) {
    EXPECT_EQ(count(html, std::string("<svg class=\"chart\" id=\"") + chart + "\""), 1u) << chart;
  }
  for (const char* table : {"summary-table", "facts", "top-groups", "top-ops", "commands", "hosts"}) {
    EXPECT_EQ(count(html, std::string("<table class=\"data\" id=\"") + table + "\""), 1u) << table;
  }
  EXPECT_NE(html.find("<ol class=\"findings\" id=\"findings-list\">"), std::string::npos);
  EXPECT_EQ(html.find("no data"), std::string::npos);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, HeaderNamesTheConfiguration) {
  test::ExampleRun run = test::example_run();
  EXPECT_EQ(render(run.profile, run.analysis).find("id=\"configuration\""), std::string::npos);  // none recorded
  run.profile.configuration = {{"system", "sohu-8"},        {"devices", "8"},     {"arch", "sohu"},
                               {"hbm", "hbm3e-9600"},       {"hbm_stacks", "6"},  {"sets", "[\"a.b=1\"]"},
                               {"configs", "[]"},           {"version", "0.1.0"}, {"commit", "abc123"},
                               {"hash", "00ff00ff00ff00ff"}};
  const std::string line = configuration_line(run.profile);
  EXPECT_EQ(line,
            "sohu-8 (8 devices) \u00b7 arch sohu \u00b7 HBM hbm3e-9600 x 6 \u00b7 set [\"a.b=1\"] \u00b7 sohusim 0.1.0 "
            "(abc123) \u00b7 config 00ff00ff00ff00ff");
  const std::string html = render(run.profile, run.analysis);
  EXPECT_NE(html.find("<p class=\"subtitle\" id=\"configuration\">sohu-8 (8 devices)"), std::string::npos);
  EXPECT_NE(html.find("set [&quot;a.b=1&quot;]"), std::string::npos);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, IsSelfContained) {
  test::ExampleRun run = test::example_run();
  std::string html = render(run.profile, run.analysis);
  for (const char* bad : {"http:", "https:", "file:", "//", "<script", "<link", "<img", "@import", "src="}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  // The only url() is the roofline's clip path, a fragment of the document itself.
  EXPECT_EQ(count(html, "url("), count(html, "url(#roofline-clip)"));
}

TEST(ReportHtml, SummaryShowsRunVerdictAndEveryShare) {
  test::ExampleRun run = test::example_run();
  std::string html = render(run.profile, run.analysis);
  std::string verdict = verdict_name(run.analysis.run_verdict);
  EXPECT_NE(html.find("Run verdict: <span class=\"verdict"), std::string::npos);
  EXPECT_NE(html.find(">" + verdict + "</span></h3>"), std::string::npos);
  EXPECT_NE(html.find("llama-3-70b (made up)"), std::string::npos);
  EXPECT_NE(html.find("tpot_ms"), std::string::npos);
  // One legend entry per verdict, the bar's segments for the verdicts holding time.
  std::size_t nonzero = 0;
  for (double ns : run.analysis.verdict_ns) nonzero += ns > 0;
  std::string bar = html.substr(html.find("id=\"verdict-share\""));
  bar = bar.substr(0, bar.find("</svg>"));
  EXPECT_EQ(count(bar, "<rect class=\"share "), nonzero);
  EXPECT_EQ(count(bar, "<g class=\"legend-item"), kVerdicts);
}

TEST(ReportHtml, TimelineOutlinesTheCriticalPathAndMarksGaps) {
  test::ExampleRun run = test::example_run();
  ASSERT_FALSE(run.analysis.critical_path.empty());
  ASSERT_FALSE(run.analysis.gaps.empty());
  ReportOptions o;
  o.width = 20000;  // every op (2.5 us and more) and most gaps wider than a pixel
  std::string html = render(run.profile, run.analysis, o);
  std::string tl = html.substr(html.find("<svg class=\"chart\" id=\"timeline\""));
  tl = tl.substr(0, tl.find("</svg>"));
  EXPECT_NE(tl.find("critical path</text>"), std::string::npos);
  // Every critical op outlined on its place's lane and drawn on the critical lane, one
  // rectangle each.
  std::size_t crit = run.analysis.critical_path.size();
  EXPECT_EQ(count(tl, "<rect class=\"op crit\""), crit);
  EXPECT_EQ(count(tl, "<rect class=\"op"), run.profile.ops.size() + crit);
  EXPECT_GT(count(tl, "<rect class=\"gap"), 0u);
  EXPECT_NE(tl.find("launch gap of"), std::string::npos);
  EXPECT_NE(tl.find("bubble of"), std::string::npos);
  // A lane per place.
  EXPECT_NE(tl.find("data-place=\"dev0\""), std::string::npos);
  EXPECT_NE(tl.find("data-place=\"dev1\""), std::string::npos);
}

TEST(ReportHtml, TimelineByKindUsesKindColours) {
  test::ExampleRun run = test::example_run();
  ReportOptions o;
  o.timeline_by_kind = true;
  std::string html = render(run.profile, run.analysis, o);
  const std::string tl = chart(html, "timeline");
  for (const char* kind : {"gemm", "attention", "norm", "all_reduce", "upload"}) {
    EXPECT_NE(tl.find(std::string("<g class=\"legend-item kind\">")), std::string::npos);
    EXPECT_NE(tl.find(std::string(">") + kind + "</text>"), std::string::npos) << kind;
  }
}

TEST(ReportHtml, ManyOpsStayBounded) {
  // 20,000 ops of 40 ns in a 1 ms run: far narrower than a pixel, merged.
  RunProfile p;
  p.units.push_back({"dev0", Resource::Compute, 1e15});
  p.units.push_back({"dev0", Resource::Hbm, 3e12});
  p.start_ns = 0;
  p.end_ns = 1e6;
  for (std::uint32_t i = 0; i < 20000; ++i) {
    OpRecord op;
    op.id = i;
    op.name = "decode.L" + std::to_string(i % 80) + ".op" + std::to_string(i % 7);
    op.kind = i % 2 ? "gemm" : "norm";
    op.place = "dev0";
    op.start_ns = 50.0 * i;
    op.duration_ns = 40;
    op.work[static_cast<unsigned>(Resource::Compute)] = 1e6 + i;
    op.work[static_cast<unsigned>(Resource::Hbm)] = 1e4;
    if (i > 0) op.deps.push_back(i - 1);
    p.ops.push_back(op);
  }
  Analysis a = analyze(p);
  std::string html = render(p, a);
  const std::string tl = chart(html, "timeline");
  std::size_t rects = count(tl, "<rect class=\"op");
  EXPECT_GT(rects, 100u);
  EXPECT_LT(rects, 3000u);  // about one per pixel column on each of the two lanes
  EXPECT_NE(tl.find("items merged"), std::string::npos);
  EXPECT_LT(html.size(), 3u * 1024 * 1024);
  // The roofline draws one point per pixel and kind.
  const std::string roof = chart(html, "roofline");
  EXPECT_LT(count(roof, "<circle class=\"pt"), 200u);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, EscapesEveryTextFromTheProfile) {
  test::ExampleRun run = test::example_run(1, 1);
  RunProfile& p = run.profile;
  const std::string evil = "<script>alert(\"x\")</script>&'";
  p.ops[1].name = "decode.L0." + evil;
  p.ops[1].kind = "k<" + evil;
  p.summary_text["note " + evil] = evil;
  p.facts["dev0"]["key" + evil] = 1;
  p.commands.push_back({"dev0", evil, 1, 2, 3, 4, 5, 6});
  p.hosts[0].place = "host<0>";
  run.analysis.findings[0].message = evil;
  run.analysis.findings[0].detector = evil;
  run.analysis.findings[0].numbers[evil] = 1;
  ReportOptions o;
  o.title = "title " + evil;
  o.subtitle = evil;
  std::string html = render(p, run.analysis, o);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("alert(\"x\")"), std::string::npos);
  EXPECT_EQ(html.find("host<0>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"), std::string::npos);
  EXPECT_NE(html.find("host&lt;0&gt;"), std::string::npos);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, EmptyProfileSaysNoData) {
  RunProfile p;
  Analysis a;
  std::string html = render(p, a);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  for (const char* section : {"timeline-section", "utilization-section", "roofline-section", "stalls-section",
                              "top-ops-section", "commands-section", "findings-section"}) {
    std::string s = html.substr(html.find(std::string("<section id=\"") + section));
    s = s.substr(0, s.find("</section>"));
    EXPECT_NE(s.find("<p class=\"no-data\">no data"), std::string::npos) << section;
  }
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, AnalysisShorterThanTheOpsStillRenders) {
  test::ExampleRun run = test::example_run(1, 1);
  run.analysis.ops.resize(3);
  run.analysis.critical_path.push_back(100000);  // out of range: ignored
  std::string html = render(run.profile, run.analysis);
  EXPECT_NE(html.find("id=\"timeline\""), std::string::npos);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, IsDeterministic) {
  test::ExampleRun a = test::example_run();
  test::ExampleRun b = test::example_run();
  std::string first = render(a.profile, a.analysis);
  EXPECT_EQ(first, render(a.profile, a.analysis));
  EXPECT_EQ(first, render(b.profile, b.analysis));
}

TEST(ReportHtml, TopOpsGroupsByPatternWithPercentiles) {
  // 100 ops of one pattern across layers, 1..100 us: p50 = 50 us, p90 = 90 us, p99 = 99 us.
  RunProfile p;
  p.units.push_back({"dev0", Resource::Compute, 1e15});
  p.start_ns = 0;
  double t = 0;
  for (std::uint32_t i = 0; i < 100; ++i) {
    OpRecord op;
    op.id = i;
    op.name = "decode.L" + std::to_string(i) + ".mlp.down_proj";
    op.kind = "gemm";
    op.place = "dev0";
    op.layer = static_cast<int>(i);
    op.start_ns = t;
    op.duration_ns = 1000.0 * ((i * 37) % 100 + 1);
    t += op.duration_ns;
    p.ops.push_back(op);
  }
  OpRecord other;
  other.id = 100;
  other.name = "decode.final_norm";
  other.kind = "norm";
  other.place = "dev0";
  other.start_ns = t;
  other.duration_ns = 500;
  p.ops.push_back(other);
  p.end_ns = t + 500;
  Analysis a = analyze(p);
  ReportOptions o;
  o.top_ops = 5;
  std::string html = render(p, a, o);
  std::string groups = html.substr(html.find("id=\"top-groups\""));
  groups = groups.substr(0, groups.find("</table>"));
  // The pattern's row first (most time), then the norm.
  std::size_t row = groups.find("<td class=\"t\">decode.L*.mlp.down_proj</td><td class=\"t\">gemm</td><td>100</td>");
  ASSERT_NE(row, std::string::npos) << groups;
  EXPECT_LT(row, groups.find("decode.final_norm"));
  std::string cells = groups.substr(row, groups.find("</tr>", row) - row);
  EXPECT_NE(cells.find("<td>5.05 ms</td>"), std::string::npos) << cells;  // total
  EXPECT_NE(cells.find("<td>50.5 µs</td><td>50.0 µs</td><td>90.0 µs</td><td>99.0 µs</td>"), std::string::npos) << cells;
  std::string top = html.substr(html.find("id=\"top-ops\""));
  top = top.substr(0, top.find("</table>"));
  EXPECT_EQ(count(top, "<tr><td>"), 5u);
  EXPECT_NE(top.find("<td>100 µs</td>"), std::string::npos);
}

TEST(ReportHtml, StallsAreShares) {
  RunProfile p;
  p.units.push_back({"dev0", Resource::Compute, 1e15});
  p.end_ns = 1000;
  Analysis a;
  PlaceSummary s;
  s.place = "dev0";
  s.stalls.busy_useful = 500;
  s.stalls.busy_overhead = 100;
  s.stalls.wait_hbm = 300;
  s.stalls.idle = 100;
  a.places.push_back(s);
  std::string html = render(p, a);
  std::string st = html.substr(html.find("id=\"stalls\""));
  st = st.substr(0, st.find("</svg>"));
  EXPECT_EQ(count(st, "<rect class=\"stall "), 4u);
  EXPECT_NE(st.find(">50.0%</text>"), std::string::npos);
  EXPECT_NE(st.find("busy overhead 10.0%"), std::string::npos);
  EXPECT_NE(st.find(">30.0%</text>"), std::string::npos);
  EXPECT_NE(st.find("idle 10.0%"), std::string::npos);
}

TEST(ReportHtml, RooflineHasBothRoofsRidgesAndPoints) {
  test::ExampleRun run = test::example_run();
  std::string html = render(run.profile, run.analysis);
  const std::string roof = chart(html, "roofline");
  EXPECT_EQ(count(roof, "class=\"roof roof-hbm\""), 1u);  // both devices alike: one set of roofs
  EXPECT_EQ(count(roof, "class=\"roof roof-sram\""), 1u);
  EXPECT_NE(roof.find("ridge HBM 333 FLOP/B"), std::string::npos);  // 1 PFLOP/s / 3 TB/s
  EXPECT_NE(roof.find("ridge SRAM 50.0 FLOP/B"), std::string::npos);
  EXPECT_GT(count(roof, "<circle class=\"pt"), 5u);
  EXPECT_NE(roof.find("dev0, dev1: 1.00 PFLOP/s"), std::string::npos);
}

TEST(ReportHtml, OpsWithSramBytesGetAHollowPointAtTheirSramIntensity) {
  test::ExampleRun run = test::example_run();
  RunProfile& p = run.profile;
  std::size_t with_sram = 0;
  for (OpRecord& op : p.ops) {
    const double flops = op.work[static_cast<unsigned>(Resource::Compute)];
    if (flops > 0 && op.work[static_cast<unsigned>(Resource::Hbm)] > 0) {
      op.work[static_cast<unsigned>(Resource::Sram)] = flops / 4;  // 4 FLOP per SRAM byte
      ++with_sram;
    }
  }
  ASSERT_GT(with_sram, 0u);
  const Analysis a = analyze(p);
  const std::string html = render(p, a);
  const std::string roof = chart(html, "roofline");
  EXPECT_GT(count(roof, "<circle class=\"pt pt-sram"), 0u);
  EXPECT_NE(roof.find("4.00 FLOP/B at SRAM"), std::string::npos);
  EXPECT_NE(roof.find(" at HBM, "), std::string::npos);
  EXPECT_NE(html.find("at their SRAM intensity too (hollow)"), std::string::npos);
  EXPECT_EQ(check_nesting(html), "");
}

TEST(ReportHtml, CommandsAndFindingsCarryTheirNumbers) {
  test::ExampleRun run = test::example_run();
  std::string html = render(run.profile, run.analysis);
  std::string cmd = html.substr(html.find("id=\"commands\""));
  cmd = cmd.substr(0, cmd.find("</table>"));
  EXPECT_NE(cmd.find("<td class=\"t\">dev0</td><td class=\"t\">submit_to_start</td><td>480</td><td>850 ns</td>"
                     "<td>800 ns</td><td>1.20 µs</td><td>2.40 µs</td><td>3.10 µs</td></tr>"),
            std::string::npos)
      << cmd;
  EXPECT_EQ(cmd.find("8192x8192x8192"), std::string::npos);  // rows with work are kinds, below
  // A kind of command with work, on both devices: its count and total over them, its top
  // unit's speed of light, every unit's in the tooltip, and its verdict.
  std::string kinds = html.substr(html.find("id=\"command-kinds\""));
  kinds = kinds.substr(0, kinds.find("</table>"));
  EXPECT_NE(kinds.find("<td class=\"t\">GEMM 8192x8192x8192 bf16</td><td class=\"t\">dev0, dev1</td><td>32</td>"
                       "<td>640 µs</td><td>20.0 µs</td>"),
            std::string::npos)
      << kinds;
  EXPECT_NE(kinds.find("<td class=\"t\">compute</td><td title=\"compute 60.0%, hbm 10.0%\">60.0%</td>"),
            std::string::npos)
      << kinds;
  EXPECT_NE(kinds.find("compute-bound"), std::string::npos);
  std::string f = html.substr(html.find("id=\"findings-list\""));
  f = f.substr(0, f.find("</ol>"));
  EXPECT_EQ(count(f, "<li class=\"finding\""), 2u);
  EXPECT_LT(f.find("pcie_small_payload"), f.find("launch_gap"));  // the analysis' order
  EXPECT_NE(f.find("avg_payload_bytes = 64, mps_bytes = 256"), std::string::npos);
}

}  // namespace
}  // namespace sohusim::profiler
