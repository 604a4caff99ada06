// The DOT and CSV exports: nodes and edges, the critical path in red, collapsing big graphs,
// escaping, the CSV's header, rows and quoting, determinism. tests/tools/render_report.py lays
// the DOT out with Graphviz for real.
#include <algorithm>
#include <cstddef>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "profiler/example_profile_support.hpp"
#include "sohusim/profiler/profile_export.hpp"

namespace sohusim::profiler {
namespace {

std::string dot_of(const RunProfile& p, const Analysis& a, const DotOptions& o = {}) {
  std::ostringstream os;
  write_dot(os, p, a, o);
  return os.str();
}

std::string csv_of(const RunProfile& p, const Analysis& a) {
  std::ostringstream os;
  write_op_csv(os, p, a);
  return os.str();
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

/// The line of the DOT holding `what`, or "".
std::string line_with(const std::string& dot, const std::string& what) {
  for (const std::string& l : lines(dot)) {
    if (l.find(what) != std::string::npos) return l;
  }
  return "";
}

const std::string kRed = "color=\"#d62728\", penwidth=3";

/// Digits at `pos` of `s` as a number, advancing pos; false when there are none.
bool digits(const std::string& s, std::size_t& pos, unsigned& value) {
  std::size_t start = pos;
  value = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') value = value * 10 + static_cast<unsigned>(s[pos++] - '0');
  return pos > start;
}

/// "  <prefix>N [label=..." -> N.
bool node_line(const std::string& l, const std::string& prefix, unsigned& id) {
  std::string head = "  " + prefix;
  if (l.rfind(head, 0) != 0) return false;
  std::size_t pos = head.size();
  return digits(l, pos, id) && l.compare(pos, 8, " [label=") == 0;
}

/// "  opA -> opB..." -> A, B.
bool edge_line(const std::string& l, unsigned& from, unsigned& to) {
  if (l.rfind("  op", 0) != 0) return false;
  std::size_t pos = 4;
  if (!digits(l, pos, from) || l.compare(pos, 6, " -> op") != 0) return false;
  pos += 6;
  return digits(l, pos, to) && (pos == l.size() - 1 || l[pos] == ' ') && l.back() == ';';
}

TEST(ProfileDot, NodePerOpEdgePerDependencyCriticalPathInRed) {
  test::ExampleRun run = test::example_run();
  const RunProfile& p = run.profile;
  const Analysis& a = run.analysis;
  std::string dot = dot_of(p, a);
  EXPECT_EQ(dot.rfind("digraph ops {\n", 0), 0u);
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");

  std::size_t deps = 0;
  for (const OpRecord& op : p.ops) deps += op.deps.size();
  std::set<unsigned> nodes;
  std::size_t edges = 0, red_edges = 0;
  std::set<std::pair<unsigned, unsigned>> critical_steps;
  for (std::size_t k = 0; k + 1 < a.critical_path.size(); ++k) {
    critical_steps.insert({a.critical_path[k], a.critical_path[k + 1]});
  }
  for (const std::string& l : lines(dot)) {
    unsigned id = 0, from = 0, to = 0;
    if (node_line(l, "op", id)) {
      nodes.insert(id);
      // Critical nodes red and thick, the others not.
      EXPECT_EQ(l.find(kRed) != std::string::npos, a.ops[id].critical) << l;
      EXPECT_NE(l.find(verdict_name(a.ops[id].verdict)), std::string::npos) << l;
      EXPECT_NE(l.find(p.ops[id].name), std::string::npos) << l;
    } else if (edge_line(l, from, to)) {
      ++edges;
      auto step = std::make_pair(from, to);
      bool red = l.find(kRed) != std::string::npos;
      red_edges += red;
      EXPECT_EQ(red, critical_steps.count(step) == 1) << l;
    }
  }
  EXPECT_EQ(nodes.size(), p.ops.size());
  // Every dependency, plus the critical steps to the previous op on the place that are not
  // dependencies (dashed).
  std::size_t non_dep_steps = 0;
  for (const auto& [from, to] : critical_steps) {
    const auto& d = p.ops[to].deps;
    if (std::find(d.begin(), d.end(), from) == d.end()) {
      ++non_dep_steps;
      EXPECT_NE(line_with(dot, "op" + std::to_string(from) + " -> op" + std::to_string(to)).find("style=dashed"),
                std::string::npos);
    }
  }
  EXPECT_EQ(edges, deps + non_dep_steps);
  EXPECT_EQ(red_edges, a.critical_path.size() - 1);
  // Gaps on the critical path label their edge.
  const Gap& g = a.gaps.front();
  std::string gl = line_with(dot, "op" + std::to_string(g.before) + " -> op" + std::to_string(g.after));
  EXPECT_NE(gl.find(g.launch ? "label=\"launch gap " : "label=\"bubble "), std::string::npos) << gl;
}

TEST(ProfileDot, EscapesNames) {
  test::ExampleRun run = test::example_run(1, 1);
  run.profile.ops[1].name = "a\"b\\c\nd";
  std::string dot = dot_of(run.profile, run.analysis);
  EXPECT_NE(dot.find("label=\"a\\\"b\\\\c d\\n"), std::string::npos);
}

TEST(ProfileDot, BigGraphsCollapseByPatternAcrossLayers) {
  test::ExampleRun run = test::example_run(80, 4);  // 4 x (1 + 80 x 8) ops
  ASSERT_GT(run.profile.ops.size(), 2000u);
  std::string dot = dot_of(run.profile, run.analysis);
  EXPECT_NE(dot.find("collapsed into"), std::string::npos);
  EXPECT_EQ(dot.find("  op0 ["), std::string::npos);
  std::size_t nodes = 0, red = 0;
  unsigned id = 0;
  for (const std::string& l : lines(dot)) {
    if (node_line(l, "g", id)) {
      ++nodes;
      red += l.find(kRed) != std::string::npos;
    }
  }
  // Per device: the upload, and 8 patterns each for prefill and decode.
  EXPECT_EQ(nodes, 4u * (1 + 8 + 8));
  EXPECT_EQ(red, 1u + 8 + 8);  // the critical path runs on one device
  EXPECT_NE(dot.find("decode.L*.mlp.down_proj (gemm)\\ndev0\\n78 ops, "), std::string::npos);
  EXPECT_LT(dot.size(), 100u * 1024);

  // Capped when even the patterns are too many: the critical ones kept, a note says so.
  DotOptions o;
  o.max_nodes = 20;
  std::string capped = dot_of(run.profile, run.analysis, o);
  EXPECT_NE(capped.find("showing 20 of 68 nodes"), std::string::npos);
  nodes = red = 0;
  for (const std::string& l : lines(capped)) {
    if (node_line(l, "g", id)) {
      ++nodes;
      red += l.find(kRed) != std::string::npos;
    }
  }
  EXPECT_EQ(nodes, 20u);
  EXPECT_EQ(red, 17u);
}

TEST(ProfileDot, ModesCanBeForced) {
  test::ExampleRun run = test::example_run(2, 1);
  DotOptions o;
  o.mode = DotOptions::Mode::Patterns;
  o.left_to_right = true;
  std::string dot = dot_of(run.profile, run.analysis, o);
  EXPECT_NE(dot.find("rankdir=LR"), std::string::npos);
  EXPECT_NE(dot.find("  g0 [label="), std::string::npos);
  o.mode = DotOptions::Mode::Ops;
  o.max_nodes = 5;
  dot = dot_of(run.profile, run.analysis, o);
  EXPECT_NE(dot.find("  op"), std::string::npos);
  EXPECT_NE(dot.find("showing 5 of 17 nodes"), std::string::npos);
}

TEST(ProfileDot, EmptyAndDeterministic) {
  std::string empty = dot_of(RunProfile{}, Analysis{});
  EXPECT_EQ(empty.rfind("digraph ops {", 0), 0u);
  EXPECT_NE(empty.find("0 ops"), std::string::npos);
  test::ExampleRun a = test::example_run(), b = test::example_run();
  EXPECT_EQ(dot_of(a.profile, a.analysis), dot_of(b.profile, b.analysis));
}

TEST(ProfileCsv, HeaderNamesEveryColumnAndARowPerOp) {
  test::ExampleRun run = test::example_run();
  std::string csv = csv_of(run.profile, run.analysis);
  std::vector<std::string> ls = lines(csv);
  ASSERT_EQ(ls.size(), run.profile.ops.size() + 1);
  EXPECT_EQ(ls[0], op_csv_header());
  EXPECT_EQ(ls[0],
            "id,name,kind,phase,place,layer,launch,start_ns,duration_ns,end_ns,flops,vector_flops,hbm_bytes,"
            "sram_bytes,pcie_h2d_bytes,pcie_d2h_bytes,link_bytes,network_bytes,host_ns,padded_flops,sol_compute,"
            "sol_vector,sol_hbm,sol_sram,sol_pcie_h2d,sol_pcie_d2h,sol_link,sol_network,sol_host,top,top_sol,verdict,"
            "critical,intensity_hbm,intensity_sram,attainable,achieved,me_busy_useful,me_busy_padding,me_busy_overhead,"
            "me_wait_sram,"
            "me_wait_hbm,me_wait_pcie,me_wait_dependency,me_idle,deps");
  std::size_t columns = static_cast<std::size_t>(std::count(ls[0].begin(), ls[0].end(), ',')) + 1;
  for (std::size_t i = 1; i < ls.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(std::count(ls[i].begin(), ls[i].end(), ',')) + 1, columns) << ls[i];
  }
  // Op 2 (layer 0's qkv projection on dev0): its values.
  const OpRecord& op = run.profile.ops[2];
  const OpAnalysis& x = run.analysis.ops[2];
  EXPECT_EQ(ls[3].rfind("2," + op.name + ",gemm,prefill,dev0,0,1,", 0), 0u) << ls[3];
  EXPECT_NE(ls[3].find(",350000,"), std::string::npos);   // duration_ns
  EXPECT_NE(ls[3].find(",compute,"), std::string::npos);  // top
  EXPECT_NE(ls[3].find(std::string(",") + verdict_name(x.verdict) + "," + (x.critical ? "1" : "0") + ","),
            std::string::npos)
      << ls[3];
  EXPECT_EQ(ls[3].substr(ls[3].rfind(',') + 1), "1");  // deps: op 1
  // The critical column marks exactly the critical path (no text here holds a comma).
  auto fields = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    for (std::string v; std::getline(ss, v, ',');) f.push_back(v);
    if (!l.empty() && l.back() == ',') f.push_back("");
    return f;
  };
  std::vector<std::string> header = fields(ls[0]);
  std::size_t col = static_cast<std::size_t>(std::find(header.begin(), header.end(), "critical") - header.begin());
  ASSERT_LT(col, header.size());
  std::size_t critical = 0;
  for (std::size_t i = 1; i < ls.size(); ++i) critical += fields(ls[i]).at(col) == "1";
  EXPECT_EQ(critical, run.analysis.critical_path.size());
}

TEST(ProfileCsv, QuotesTextAndHandlesMissingAnalysis) {
  test::ExampleRun run = test::example_run(1, 1);
  run.profile.ops[1].name = "a,b \"c\"";
  run.profile.ops[2].deps = {0, 1};
  run.analysis.ops.resize(2);
  std::vector<std::string> ls = lines(csv_of(run.profile, run.analysis));
  EXPECT_EQ(ls[2].rfind("1,\"a,b \"\"c\"\"\",norm,", 0), 0u) << ls[2];
  // Op 2 has no analysis: empty analysis columns, its deps still there.
  std::string row = ls[3];
  EXPECT_NE(row.find(",,,,,,,,,,,,,,,,,0 1"), std::string::npos) << row;
  EXPECT_EQ(row.substr(row.size() - 4), ",0 1");
}

TEST(ProfileCsv, EmptyIsHeaderOnlyAndOutputIsDeterministic) {
  EXPECT_EQ(csv_of(RunProfile{}, Analysis{}), op_csv_header() + "\n");
  test::ExampleRun a = test::example_run(), b = test::example_run();
  EXPECT_EQ(csv_of(a.profile, a.analysis), csv_of(b.profile, b.analysis));
}

}  // namespace
}  // namespace sohusim::profiler
