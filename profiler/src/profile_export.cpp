// DOT and CSV exports of an analysed run (profile_export.hpp).
#include "sohusim/profiler/profile_export.hpp"

#include <algorithm>
#include <cstdint>
#include <locale>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report_common.hpp"

namespace sohusim::profiler {
namespace {

using report_detail::dur;
using report_detail::kCriticalColor;
using report_detail::pct;
using report_detail::strf;
using report_detail::verdict_color;

/// A DOT double-quoted string's contents: quotes and backslashes escaped, line breaks of the
/// input folded to spaces (our own line breaks are added as "\n" by the caller).
std::string dq(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 4);
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

/// A graph node: one op, or every op of a name pattern on a place.
struct Node {
  std::string key;  // DOT id
  std::string label, tooltip;
  double time = 0;  // total duration of its ops
  double by_verdict[kVerdicts] = {};
  bool critical = false;
  std::size_t ops = 0;
};

struct EdgeInfo {
  std::size_t deps = 0;  // dependencies it stands for
  bool critical = false;
  bool dep = false;  // at least one dependency (else a same-place step of the critical path)
  double gap_ns = 0;
  std::string gap_kind;
};

Verdict dominant(const Node& n) {
  return static_cast<Verdict>(std::max_element(n.by_verdict, n.by_verdict + kVerdicts) - n.by_verdict);
}

void dot(std::ostream& os, const RunProfile& p, const Analysis& a, const DotOptions& o) {
  const std::size_t n_ops = p.ops.size();
  bool patterns = o.mode == DotOptions::Mode::Patterns || (o.mode == DotOptions::Mode::Auto && n_ops > o.max_nodes);
  auto oa = [&](std::size_t i) -> const OpAnalysis* { return i < a.ops.size() ? &a.ops[i] : nullptr; };

  // Op -> node.
  std::vector<Node> nodes;
  std::vector<std::size_t> node_of(n_ops);
  std::map<std::pair<std::string, std::string>, std::size_t> by_pattern;  // (place, pattern) -> node
  for (std::size_t i = 0; i < n_ops; ++i) {
    const OpRecord& op = p.ops[i];
    std::size_t n;
    if (patterns) {
      auto key = std::make_pair(op.place, report_detail::name_pattern(op.name));
      auto it = by_pattern.find(key);
      if (it == by_pattern.end()) {
        it = by_pattern.emplace(key, nodes.size()).first;
        nodes.emplace_back();
        nodes.back().key = strf("g%zu", nodes.size() - 1);
        nodes.back().label = dq(key.second + " (" + op.kind + ")") + "\\n" + dq(op.place);
      }
      n = it->second;
    } else {
      n = nodes.size();
      nodes.emplace_back();
      nodes.back().key = strf("op%u", static_cast<unsigned>(i));
      nodes.back().label = dq(op.name) + "\\n" + dur(op.duration_ns);
      std::string tip = op.kind + " on " + op.place;
      if (op.layer >= 0) tip += strf(", layer %d", op.layer);
      if (const OpAnalysis* x = oa(i)) tip += std::string(", top ") + resource_name(x->top) + " " + pct(x->top_sol);
      nodes.back().tooltip = tip;
    }
    node_of[i] = n;
    Node& nd = nodes[n];
    nd.time += op.duration_ns;
    ++nd.ops;
    const OpAnalysis* x = oa(i);
    nd.by_verdict[static_cast<unsigned>(x ? x->verdict : Verdict::Latency)] += std::max(op.duration_ns, 1e-9);
    nd.critical = nd.critical || (x && x->critical);
  }
  if (patterns) {
    for (Node& nd : nodes) {
      nd.label += strf("\\n%zu ops, ", nd.ops) + dur(nd.time);
      nd.tooltip = strf("%zu ops", nd.ops);
    }
  }
  for (Node& nd : nodes) nd.label += std::string("\\n") + verdict_name(dominant(nd));

  // Which nodes to draw: all, or the critical ones then those holding most time.
  std::vector<bool> keep(nodes.size(), true);
  std::size_t kept = nodes.size();
  if (nodes.size() > o.max_nodes) {
    std::vector<std::size_t> order(nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      if (nodes[x].critical != nodes[y].critical) return nodes[x].critical;
      return nodes[x].time > nodes[y].time;
    });
    std::fill(keep.begin(), keep.end(), false);
    for (std::size_t i = 0; i < o.max_nodes; ++i) keep[order[i]] = true;
    kept = o.max_nodes;
  }

  // Edges: dependencies, and the critical path's consecutive steps.
  std::map<std::pair<std::size_t, std::size_t>, EdgeInfo> edges;
  for (std::size_t i = 0; i < n_ops; ++i) {
    std::set<std::uint32_t> seen;
    for (std::uint32_t d : p.ops[i].deps) {
      if (d >= n_ops || !seen.insert(d).second) continue;
      std::size_t from = node_of[d], to = node_of[i];
      if (from == to) continue;
      EdgeInfo& e = edges[{from, to}];
      ++e.deps;
      e.dep = true;
    }
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, const Gap*> gap_of;
  for (const Gap& g : a.gaps) gap_of[{g.before, g.after}] = &g;
  for (std::size_t k = 0; k + 1 < a.critical_path.size(); ++k) {
    std::uint32_t from_op = a.critical_path[k], to_op = a.critical_path[k + 1];
    if (from_op >= n_ops || to_op >= n_ops) continue;
    std::size_t from = node_of[from_op], to = node_of[to_op];
    if (from == to) continue;
    EdgeInfo& e = edges[{from, to}];
    e.critical = true;
    auto g = gap_of.find({from_op, to_op});
    if (g != gap_of.end()) {
      e.gap_ns += g->second->end_ns - g->second->start_ns;
      e.gap_kind = g->second->launch ? "launch gap" : "bubble";
    }
  }

  std::string title =
      patterns ? strf("op dependency graph: %zu ops collapsed into %zu patterns (digits -> *)", n_ops, nodes.size())
               : strf("op dependency graph: %zu ops", n_ops);
  if (kept < nodes.size()) {
    title += strf("; showing %zu of %zu nodes (critical first, then by time)", kept, nodes.size());
  }
  title += "; critical path in red";

  os << "digraph ops {\n";
  os << "  graph [rankdir=" << (o.left_to_right ? "LR" : "TB") << ", fontname=\"DejaVu Sans\", fontsize=12, label=\""
     << dq(title) << "\", labelloc=t, nodesep=0.25, ranksep=0.35];\n";
  os << "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=10, color=\"#555555\", "
        "penwidth=1];\n";
  os << "  edge [color=\"#888888\", arrowsize=0.6];\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!keep[i]) continue;
    const Node& nd = nodes[i];
    os << "  " << nd.key << " [label=\"" << nd.label << "\", tooltip=\"" << dq(nd.tooltip) << "\", fillcolor=\""
       << verdict_color(dominant(nd)) << '"';
    if (nd.critical) os << ", color=\"" << kCriticalColor << "\", penwidth=3";
    os << "];\n";
  }
  for (const auto& [fromto, e] : edges) {
    if (!keep[fromto.first] || !keep[fromto.second]) continue;
    os << "  " << nodes[fromto.first].key << " -> " << nodes[fromto.second].key;
    std::vector<std::string> attrs;
    if (e.critical) {
      attrs.push_back(std::string("color=\"") + kCriticalColor + "\"");
      attrs.push_back("penwidth=3");
      if (!e.dep) attrs.push_back("style=dashed");
      if (e.gap_ns > 0) attrs.push_back("label=\"" + dq(e.gap_kind + " " + dur(e.gap_ns)) + "\", fontsize=9");
    }
    if (e.deps > 1 && patterns) attrs.push_back(strf("tooltip=\"%zu dependencies\"", e.deps));
    if (!attrs.empty()) {
      os << " [";
      for (std::size_t k = 0; k < attrs.size(); ++k) os << (k ? ", " : "") << attrs[k];
      os << ']';
    }
    os << ";\n";
  }
  os << "}\n";
}

/// CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_num(double v) {
  std::string s = strf("%.15g", v);
  return s == "-0" ? "0" : s;
}

std::string work_column(Resource r) {
  switch (r) {
    case Resource::Compute:
      return "flops";
    case Resource::Vector:
      return "vector_flops";
    case Resource::Host:
      return "host_ns";
    default:
      return std::string(resource_name(r)) + "_bytes";
  }
}

}  // namespace

void write_dot(std::ostream& os, const RunProfile& profile, const Analysis& analysis, const DotOptions& options) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  dot(out, profile, analysis, options);
  os << out.str();
}

std::string op_csv_header() {
  std::string h = "id,name,kind,phase,place,layer,launch,start_ns,duration_ns,end_ns";
  for (unsigned r = 0; r < kResources; ++r) h += "," + work_column(static_cast<Resource>(r));
  h += ",padded_flops";
  for (unsigned r = 0; r < kResources; ++r) h += std::string(",sol_") + resource_name(static_cast<Resource>(r));
  h += ",top,top_sol,verdict,critical,intensity_hbm,intensity_sram,attainable,achieved";
  h += ",me_busy_useful,me_busy_padding,me_busy_overhead,me_wait_sram,me_wait_hbm,me_wait_pcie,me_wait_dependency,me_"
       "idle,"
       "deps";
  return h;
}

void write_op_csv(std::ostream& os, const RunProfile& profile, const Analysis& analysis) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out << op_csv_header() << '\n';
  for (std::size_t i = 0; i < profile.ops.size(); ++i) {
    const OpRecord& op = profile.ops[i];
    out << op.id << ',' << csv_text(op.name) << ',' << csv_text(op.kind) << ',' << csv_text(op.phase) << ','
        << csv_text(op.place) << ',' << op.layer << ',' << op.launch << ',' << csv_num(op.start_ns) << ','
        << csv_num(op.duration_ns) << ',' << csv_num(op.end_ns());
    for (unsigned r = 0; r < kResources; ++r) out << ',' << csv_num(op.work[r]);
    out << ',' << csv_num(op.padded_flops);
    if (i < analysis.ops.size()) {
      const OpAnalysis& x = analysis.ops[i];
      for (unsigned r = 0; r < kResources; ++r) out << ',' << csv_num(x.sol[r]);
      out << ',' << resource_name(x.top) << ',' << csv_num(x.top_sol) << ',' << csv_text(verdict_name(x.verdict)) << ','
          << (x.critical ? 1 : 0) << ',' << csv_num(x.roofline.intensity_hbm) << ','
          << csv_num(x.roofline.intensity_sram) << ',' << csv_num(x.roofline.attainable) << ','
          << csv_num(x.roofline.achieved);
    } else {
      for (unsigned r = 0; r < kResources + 8; ++r) out << ',';
    }
    // The matrix engines' cycles over the op (empty when not measured).
    const StallBuckets& st = op.stalls;
    if (st.total() > 0) {
      for (const double v : {st.busy_useful, st.busy_padding, st.busy_overhead, st.wait_sram, st.wait_hbm, st.wait_pcie,
                             st.wait_dependency, st.idle})
        out << ',' << csv_num(v);
    } else {
      out << ",,,,,,,,";  // one per bucket
    }
    out << ',';
    for (std::size_t k = 0; k < op.deps.size(); ++k) out << (k ? " " : "") << op.deps[k];
    out << '\n';
  }
  os << out.str();
}

}  // namespace sohusim::profiler
