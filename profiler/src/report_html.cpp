// The HTML run report (report_html.hpp): inline CSS and SVG, drawn here.
#include "sohusim/profiler/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <locale>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report_common.hpp"
#include "report_serving.hpp"
#include "sohusim/profiler/report_style.hpp"

namespace sohusim::profiler {
namespace {

using report_detail::dur;
using report_detail::kCriticalColor;
using report_detail::num;
using report_detail::pct;
using report_detail::si;
using report_detail::strf;
using report_detail::verdict_class;
using report_detail::verdict_color;
using report_detail::write_serving_section;

/// Text for HTML content and attribute values.
std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// SVG coordinates: one decimal, "-0.0" folded to "0.0".
std::string px(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = strf("%.1f", v);
  return s == "-0.0" ? "0.0" : s;
}

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::size_t kPaletteSize = sizeof kPalette / sizeof kPalette[0];

const char* resource_unit(Resource r) {
  switch (r) {
    case Resource::Compute:
    case Resource::Vector:
      return "FLOP/s";
    case Resource::Host:
      return "ns/s";
    default:
      return "B/s";
  }
}

/// Percentile of sorted values, nearest rank.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  if (rank > sorted.size()) rank = sorted.size();
  return sorted[rank - 1];
}

void no_data(std::ostream& os, const char* what) {
  os << "<p class=\"no-data\">no data" << (what[0] ? ": " : "") << what << "</p>\n";
}

/// A power of ten as an axis label: "1", "10", "100", "1k", ..., "1P"; "0.1", "0.01" below 1.
std::string decade(double e) {
  int k = static_cast<int>(std::lround(e));
  if (k < 0) return k >= -3 ? strf("%.*f", -k, std::pow(10.0, k)) : strf("1e%d", k);
  static const char* const kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  if (k / 3 > 6) return strf("1e%d", k);
  return strf("%.0f%s", std::pow(10.0, k % 3), kPrefix[k / 3]);
}

/// Linear time axis of a chart.
struct TimeAxis {
  double t0 = 0, span = 1, left = 0, width = 1;
  double x(double t) const { return left + (t - t0) / span * width; }
};

/// A step of about span/target on the 1-2-5 series.
double nice_step(double span, int target) {
  double raw = span / target;
  if (!(raw > 0)) return 1;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

void time_ticks(std::ostream& os, const TimeAxis& ax, double y_top, double y_axis) {
  double step = nice_step(ax.span, 8);
  os << "<g class=\"axis time-axis\">";
  os << "<line x1=\"" << px(ax.left) << "\" y1=\"" << px(y_axis) << "\" x2=\"" << px(ax.left + ax.width) << "\" y2=\""
     << px(y_axis) << "\" stroke=\"#555\"/>";
  for (int i = 0;; ++i) {
    double rel = step * i;
    if (rel > ax.span * 1.0000001) break;
    double x = ax.x(ax.t0 + rel);
    os << "<line x1=\"" << px(x) << "\" y1=\"" << px(y_top) << "\" x2=\"" << px(x) << "\" y2=\"" << px(y_axis + 4)
       << "\" stroke=\"#ddd\"/>";
    os << "<text x=\"" << px(x) << "\" y=\"" << px(y_axis + 16) << "\" text-anchor=\"middle\">" << esc(dur(rel))
       << "</text>";
    if (i > 1000) break;
  }
  os << "</g>\n";
}

/// Rectangles on one lane, merged when narrower than a pixel so that a lane holds about one
/// rectangle per pixel column whatever the number of items.
struct LaneItem {
  double x0 = 0, x1 = 0;
  unsigned color = 0;  // index into the lane's palette
  double weight = 0;   // for the colour of a merged rectangle
  bool critical = false;
  std::string tip;  // tooltip (already plain text; escaped on output)
  std::string cls;  // extra class of a single item
};

class LaneWriter {
 public:
  LaneWriter(std::ostream& os, std::vector<std::string> palette, double y, double h, std::string base_class)
      : os_(os), palette_(std::move(palette)), y_(y), h_(h), base_(std::move(base_class)) {}

  void add(const LaneItem& it) {
    double w = it.x1 - it.x0;
    if (w >= 1.0) {
      flush();
      emit(it.x0, it.x1, it.color, it.critical, it.tip, it.cls);
      return;
    }
    if (pending_n_ > 0 && it.x0 <= p_x1_ + 1.0 && it.x1 - p_x0_ <= 3.0) {
      p_x1_ = std::max(p_x1_, it.x1);
      ++pending_n_;
      weights_[it.color] += std::max(it.weight, 1e-12);
      p_crit_ = p_crit_ || it.critical;
      p_total_ += it.weight;
      return;
    }
    flush();
    pending_n_ = 1;
    p_x0_ = it.x0;
    p_x1_ = it.x1;
    weights_.clear();
    weights_[it.color] = std::max(it.weight, 1e-12);
    p_crit_ = it.critical;
    p_tip_ = it.tip;
    p_cls_ = it.cls;
    p_total_ = it.weight;
  }

  void flush() {
    if (pending_n_ == 0) return;
    unsigned color = 0;
    double best = -1;
    for (const auto& [c, w] : weights_) {
      if (w > best) best = w, color = c;
    }
    if (pending_n_ == 1) {
      emit(p_x0_, std::max(p_x1_, p_x0_ + 1.0), color, p_crit_, p_tip_, p_cls_);
    } else {
      emit(p_x0_, std::max(p_x1_, p_x0_ + 1.0), color, p_crit_,
           strf("%zu items merged (narrower than a pixel), ", pending_n_) + dur(p_total_), "merged");
    }
    pending_n_ = 0;
  }

  std::size_t emitted() const { return emitted_; }

 private:
  void emit(double x0, double x1, unsigned color, bool crit, const std::string& tip, const std::string& cls) {
    ++emitted_;
    os_ << "<rect class=\"" << base_;
    if (!cls.empty()) os_ << ' ' << cls;
    if (crit) os_ << " crit";
    os_ << "\" x=\"" << px(x0) << "\" y=\"" << px(y_) << "\" width=\"" << px(std::max(x1 - x0, 1.0)) << "\" height=\""
        << px(h_) << "\" fill=\"" << (color < palette_.size() ? palette_[color] : "#999") << '"';
    if (crit) os_ << " stroke=\"" << kCriticalColor << "\" stroke-width=\"1.5\"";
    os_ << "><title>" << esc(tip) << "</title></rect>\n";
  }

  std::ostream& os_;
  std::vector<std::string> palette_;
  double y_, h_;
  std::string base_;
  std::size_t pending_n_ = 0;
  double p_x0_ = 0, p_x1_ = 0, p_total_ = 0;
  bool p_crit_ = false;
  std::map<unsigned, double> weights_;
  std::string p_tip_, p_cls_;
  std::size_t emitted_ = 0;
};

class Report {
 public:
  Report(std::ostream& os, const RunProfile& p, const Analysis& a, const ReportOptions& o)
      : os_(os), p_(p), a_(a), o_(o) {
    width_ = std::max(o.width, 400);
    // Places: in the order the units name them, then any that only ops or windows name.
    auto add_place = [this](const std::string& s) {
      if (std::find(places_.begin(), places_.end(), s) == places_.end()) places_.push_back(s);
    };
    for (const Unit& u : p.units) add_place(u.place);
    for (const OpRecord& op : p.ops) add_place(op.place);
    for (const Window& w : p.windows) add_place(w.place);
    std::set<std::string> kinds;
    for (const OpRecord& op : p.ops) kinds.insert(op.kind);
    for (const std::string& k : kinds) kind_index_[k] = static_cast<unsigned>(kind_index_.size());
    // The profiled span: the profile's, else the ops'.
    t0_ = p.start_ns;
    t1_ = p.end_ns;
    if (!(t1_ > t0_)) {
      bool first = true;
      for (const OpRecord& op : p.ops) {
        t0_ = first ? op.start_ns : std::min(t0_, op.start_ns);
        t1_ = first ? op.end_ns() : std::max(t1_, op.end_ns());
        first = false;
      }
      for (const Window& w : p.windows) {
        t0_ = first ? w.start_ns : std::min(t0_, w.start_ns);
        t1_ = first ? w.end_ns : std::max(t1_, w.end_ns);
        first = false;
      }
    }
    if (!(t1_ > t0_)) t1_ = t0_ + 1;
  }

  void write() {
    head();
    summary();
    if (!p_.serving.empty()) write_serving_section(os_, p_.serving, static_cast<int>(width_));
    timeline();
    utilization();
    roofline();
    stalls();
    top_ops();
    commands();
    findings();
    os_ << "</main>\n</body>\n</html>\n";
  }

 private:
  const OpAnalysis* oa(std::size_t i) const { return i < a_.ops.size() ? &a_.ops[i] : nullptr; }
  Verdict verdict(std::size_t i) const { return oa(i) ? oa(i)->verdict : Verdict::Latency; }
  bool critical(std::size_t i) const { return oa(i) && oa(i)->critical; }
  const char* kind_color(const std::string& kind) const {
    auto it = kind_index_.find(kind);
    return kPalette[(it == kind_index_.end() ? 0 : it->second) % kPaletteSize];
  }
  std::vector<std::string> verdict_palette() const {
    std::vector<std::string> v;
    for (unsigned i = 0; i < kVerdicts; ++i) v.push_back(verdict_color(static_cast<Verdict>(i)));
    return v;
  }
  std::string op_tip(std::size_t i) const {
    const OpRecord& op = p_.ops[i];
    std::string s = op.name + " (" + op.kind + ") on " + op.place + ", start " + dur(op.start_ns - t0_) +
                    ", duration " + dur(op.duration_ns);
    if (const OpAnalysis* x = oa(i)) {
      s += std::string(", ") + verdict_name(x->verdict) + ", top " + resource_name(x->top) + " at " + pct(x->top_sol) +
           " of peak";
      if (x->critical) s += ", on the critical path";
    }
    return s;
  }
  struct LegendEntry {
    std::string color, label, cls;
    int style = 0;  // 0 filled, 1 outlined in the critical path's red, 2 translucent
  };
  static double entry_width(const LegendEntry& e) {
    std::size_t chars = 0;
    for (char c : e.label) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 code points
    return 30 + 6.6 * static_cast<double>(chars);
  }
  /// Rows a left-to-right legend takes between x0 and x1.
  static int legend_rows(const std::vector<LegendEntry>& es, double x0, double x1) {
    int rows = es.empty() ? 0 : 1;
    double x = x0;
    for (const LegendEntry& e : es) {
      double w = entry_width(e);
      if (x > x0 && x + w > x1) ++rows, x = x0;
      x += w;
    }
    return rows;
  }
  /// Draws it, the first row's text baseline at y, rows 16 px apart.
  void flow_legend(const std::vector<LegendEntry>& es, double x0, double y, double x1) {
    double x = x0;
    for (const LegendEntry& e : es) {
      double w = entry_width(e);
      if (x > x0 && x + w > x1) y += 16, x = x0;
      os_ << "<g class=\"legend-item " << e.cls << "\"><rect x=\"" << px(x) << "\" y=\"" << px(y - 9)
          << "\" width=\"10\" height=\"10\"";
      if (e.style == 1) {
        os_ << " fill=\"none\" stroke=\"" << kCriticalColor << "\" stroke-width=\"1.5\"";
      } else {
        os_ << " fill=\"" << e.color << '"' << (e.style == 2 ? " fill-opacity=\"0.25\"" : "");
      }
      os_ << "/><text x=\"" << px(x + 14) << "\" y=\"" << px(y) << "\">" << esc(e.label) << "</text></g>";
      x += w;
    }
    os_ << '\n';
  }
  void legend_swatch(double x, double y, const std::string& color, const std::string& label, const char* cls) {
    os_ << "<g class=\"legend-item " << cls << "\"><rect x=\"" << px(x) << "\" y=\"" << px(y - 9)
        << "\" width=\"10\" height=\"10\" fill=\"" << color << "\"/><text x=\"" << px(x + 14) << "\" y=\"" << px(y)
        << "\">" << esc(label) << "</text></g>";
  }

  void head() {
    os_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"generator\" content=\"sohusim report\">\n"
        << "<title>" << esc(o_.title) << "</title>\n<style>\n"
        << report_stylesheet(static_cast<int>(width_))
        << ".verdict{font-weight:bold;padding:1px 6px;border-radius:3px}\n"
        << ".detector{font-family:monospace;background:#eee;padding:0 4px;border-radius:3px}\n"
        << "ol.findings li{margin:0 0 8px}ol.findings .numbers{color:#555;font-family:monospace}\n"
        << "</style>\n</head>\n<body>\n<main>\n"
        << "<h1>" << esc(o_.title) << "</h1>\n";
    if (!o_.subtitle.empty()) os_ << "<p class=\"subtitle\">" << esc(o_.subtitle) << "</p>\n";
    if (const std::string c = configuration_line(p_); !c.empty())
      os_ << "<p class=\"subtitle\" id=\"configuration\">" << esc(c) << "</p>\n";
    os_ << "<nav><a href=\"#summary\">summary</a>"
        << (p_.serving.empty() ? "" : "<a href=\"#serving-section\">serving</a>")
        << "<a href=\"#timeline-section\">timeline</a>"
           "<a href=\"#utilization-section\">utilization</a><a href=\"#roofline-section\">roofline</a>"
           "<a href=\"#stalls-section\">stalls</a><a href=\"#top-ops-section\">top ops</a>"
           "<a href=\"#commands-section\">commands</a><a href=\"#findings-section\">findings</a></nav>\n";
  }

  // ---------------------------------------------------------------- summary
  void summary() {
    os_ << "<section id=\"summary\">\n<h2>Run summary</h2>\n";
    os_ << "<table class=\"data\" id=\"summary-table\"><tr><th>key</th><th>value</th></tr>\n";
    auto row = [this](const std::string& k, const std::string& v) {
      os_ << "<tr><td class=\"t\">" << esc(k) << "</td><td class=\"t\">" << esc(v) << "</td></tr>\n";
    };
    if (p_.ops.empty() && p_.windows.empty() && !(p_.end_ns > p_.start_ns)) {
      row("profiled span", "none");
    } else {
      row("profiled span", dur(t1_ - t0_) + " (" + num(t0_) + " ns to " + num(t1_) + " ns)");
    }
    row("ops", num(static_cast<double>(p_.ops.size())));
    // Numbers and strings of the summary, by key (a key in both shows both).
    std::map<std::string, std::vector<std::string>> kv;
    for (const auto& [k, v] : p_.summary) kv[k].push_back(num(v));
    for (const auto& [k, v] : p_.summary_text) kv[k].push_back(v);
    for (const auto& [k, vs] : kv) {
      for (const std::string& v : vs) row(k, v);
    }
    os_ << "</table>\n";

    double total = 0;
    for (unsigned v = 0; v < kVerdicts; ++v) total += std::max(a_.verdict_ns[v], 0.0);
    if (a_.critical_path.empty() && total <= 0) {
      os_ << "<h3>Run verdict</h3>\n";
      no_data(os_, "no critical path");
    } else {
      os_ << "<h3>Run verdict: <span class=\"verdict " << verdict_class(a_.run_verdict)
          << "\" style=\"background:" << verdict_color(a_.run_verdict) << "\">" << esc(verdict_name(a_.run_verdict))
          << "</span></h3>\n";
      double gap_ns = 0;
      for (const Gap& g : a_.gaps) gap_ns += g.end_ns - g.start_ns;
      os_ << "<p>Critical path: " << a_.critical_path.size() << " ops over " << esc(dur(a_.critical_ns)) << ", "
          << a_.gaps.size() << " gaps totalling " << esc(dur(gap_ns)) << ".</p>\n";
      verdict_bar(total);
    }
    facts_table();
    os_ << "</section>\n";
  }

  void verdict_bar(double total) {
    const double left = 10, bar_w = width_ - 20, bar_y = 8, bar_h = 28;
    std::vector<LegendEntry> legend;
    for (unsigned i = 0; i < kVerdicts; ++i) {
      auto v = static_cast<Verdict>(i);
      double share = total > 0 ? std::max(a_.verdict_ns[i], 0.0) / total : 0;
      legend.push_back(
          {verdict_color(v),
           std::string(verdict_name(v)) + " " + pct(share) + " (" + dur(std::max(a_.verdict_ns[i], 0.0)) + ")",
           verdict_class(v)});
    }
    double h = bar_y + bar_h + 14 + 16.0 * legend_rows(legend, left, width_ - 10.0);
    os_ << "<svg class=\"chart\" id=\"verdict-share\" width=\"" << width_ << "\" height=\"" << px(h)
        << "\" viewBox=\"0 0 " << width_ << ' ' << px(h)
        << "\" role=\"img\" aria-label=\"share of each verdict on the critical path\">\n";
    double x = left;
    for (unsigned i = 0; i < kVerdicts; ++i) {
      auto v = static_cast<Verdict>(i);
      double share = total > 0 ? std::max(a_.verdict_ns[i], 0.0) / total : 0;
      double w = share * bar_w;
      if (w > 0) {
        os_ << "<rect class=\"share " << verdict_class(v) << "\" x=\"" << px(x) << "\" y=\"" << px(bar_y)
            << "\" width=\"" << px(w) << "\" height=\"" << px(bar_h) << "\" fill=\"" << verdict_color(v) << "\"><title>"
            << esc(std::string(verdict_name(v)) + ": " + pct(share) + ", " + dur(a_.verdict_ns[i]))
            << "</title></rect>";
        if (w > 46) {
          os_ << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(bar_y + bar_h / 2 + 4) << "\" text-anchor=\"middle\">"
              << esc(pct(share)) << "</text>";
        }
        os_ << '\n';
      }
      x += w;
    }
    flow_legend(legend, left, bar_y + bar_h + 20, width_ - 10.0);
    os_ << "</svg>\n";
  }

  void facts_table() {
    if (p_.facts.empty()) return;
    os_ << "<h3>Facts</h3>\n<table class=\"data\" id=\"facts\"><tr><th>place</th><th>key</th><th>value</th></tr>\n";
    for (const auto& [place, m] : p_.facts) {
      for (const auto& [k, v] : m) {
        os_ << "<tr><td class=\"t\">" << esc(place) << "</td><td class=\"t\">" << esc(k) << "</td><td>" << esc(num(v))
            << "</td></tr>\n";
      }
    }
    os_ << "</table>\n";
  }

  // ---------------------------------------------------------------- timeline
  void timeline() {
    os_ << "<section id=\"timeline-section\">\n<h2>Timeline</h2>\n";
    if (p_.ops.empty()) {
      no_data(os_, "no ops");
      os_ << "</section>\n";
      return;
    }
    constexpr std::size_t kMaxSubLanes = 6;
    constexpr double kRowH = 16, kRowGap = 2, kPlaceGap = 10, kTop = 10;
    const double label_w = 120;
    TimeAxis ax{t0_, t1_ - t0_, label_w, width_ - label_w - 20};

    // Per place, the ops in start order, packed into sub-lanes where they overlap.
    struct PlaceLanes {
      std::vector<std::vector<std::size_t>> lanes;
    };
    std::map<std::string, PlaceLanes> by_place;
    {
      std::map<std::string, std::vector<std::size_t>> ops_of;
      for (std::size_t i = 0; i < p_.ops.size(); ++i) ops_of[p_.ops[i].place].push_back(i);
      for (auto& [place, ids] : ops_of) {
        std::stable_sort(ids.begin(), ids.end(),
                         [this](std::size_t a, std::size_t b) { return p_.ops[a].start_ns < p_.ops[b].start_ns; });
        PlaceLanes& pl = by_place[place];
        std::vector<double> lane_end;
        for (std::size_t i : ids) {
          const OpRecord& op = p_.ops[i];
          std::size_t lane = lane_end.size();
          for (std::size_t l = 0; l < lane_end.size(); ++l) {
            if (lane_end[l] <= op.start_ns) {
              lane = l;
              break;
            }
          }
          if (lane == lane_end.size() && lane_end.size() >= kMaxSubLanes) {
            lane = static_cast<std::size_t>(std::min_element(lane_end.begin(), lane_end.end()) - lane_end.begin());
          }
          if (lane == lane_end.size()) {
            lane_end.push_back(op.end_ns());
            pl.lanes.emplace_back();
          } else {
            lane_end[lane] = std::max(lane_end[lane], op.end_ns());
          }
          pl.lanes[lane].push_back(i);
        }
      }
    }

    bool has_crit = !a_.critical_path.empty();
    double h = kTop + (has_crit ? kRowH + kPlaceGap : 0);
    for (const std::string& place : places_) {
      auto it = by_place.find(place);
      if (it == by_place.end()) continue;
      h += static_cast<double>(it->second.lanes.size()) * (kRowH + kRowGap) + kPlaceGap;
    }
    std::vector<LegendEntry> legend;
    if (o_.timeline_by_kind) {
      for (const auto& [kind, idx] : kind_index_) legend.push_back({kPalette[idx % kPaletteSize], kind, "kind"});
    } else {
      for (unsigned i = 0; i < kVerdicts; ++i) {
        auto v = static_cast<Verdict>(i);
        legend.push_back({verdict_color(v), verdict_name(v), verdict_class(v)});
      }
    }
    legend.push_back({kCriticalColor, "critical path", "critical", 1});
    legend.push_back({kCriticalColor, "gap on the critical path", "gap", 2});
    const double axis_y = h;
    h += 44 + 16.0 * legend_rows(legend, 10, width_ - 10.0);  // axis labels and legend

    os_ << "<svg class=\"chart\" id=\"timeline\" width=\"" << width_ << "\" height=\"" << px(h) << "\" viewBox=\"0 0 "
        << width_ << ' ' << px(h) << "\" role=\"img\" aria-label=\"timeline of the ops per place\">\n";
    time_ticks(os_, ax, kTop - 4, axis_y);

    std::vector<std::string> palette;
    if (o_.timeline_by_kind) {
      for (std::size_t k = 0; k < kind_index_.size(); ++k) palette.push_back(kPalette[k % kPaletteSize]);
    } else {
      palette = verdict_palette();
    }
    auto color_of = [this](std::size_t i) -> unsigned {
      if (o_.timeline_by_kind) return kind_index_.at(p_.ops[i].kind);
      return static_cast<unsigned>(verdict(i));
    };

    double y = kTop;
    std::size_t rects = 0;
    if (has_crit) {
      os_ << "<g class=\"lane critical-lane\"><text x=\"4\" y=\"" << px(y + kRowH - 4)
          << "\" font-weight=\"bold\" fill=\"" << kCriticalColor << "\">critical path</text>\n";
      LaneWriter lw(os_, palette, y, kRowH, "op");
      for (std::uint32_t id : a_.critical_path) {
        if (id >= p_.ops.size()) continue;
        const OpRecord& op = p_.ops[id];
        lw.add({ax.x(op.start_ns), ax.x(op.end_ns()), color_of(id), op.duration_ns, false, op_tip(id), ""});
      }
      lw.flush();
      rects += lw.emitted();
      gap_marks(ax, y, kRowH, nullptr, rects);
      os_ << "</g>\n";
      y += kRowH + kPlaceGap;
    }
    for (const std::string& place : places_) {
      auto it = by_place.find(place);
      if (it == by_place.end()) continue;
      const auto& lanes = it->second.lanes;
      double block_h = static_cast<double>(lanes.size()) * (kRowH + kRowGap) - kRowGap;
      os_ << "<g class=\"lane place\" data-place=\"" << esc(place) << "\"><text x=\"4\" y=\""
          << px(y + std::min(block_h, kRowH) - 4) << "\">" << esc(place) << "</text>\n";
      os_ << "<rect class=\"lane-bg\" x=\"" << px(ax.left) << "\" y=\"" << px(y) << "\" width=\"" << px(ax.width)
          << "\" height=\"" << px(block_h) << "\" fill=\"#f6f6f6\"/>\n";
      for (std::size_t l = 0; l < lanes.size(); ++l) {
        LaneWriter lw(os_, palette, y + static_cast<double>(l) * (kRowH + kRowGap), kRowH, "op");
        for (std::size_t i : lanes[l]) {
          const OpRecord& op = p_.ops[i];
          lw.add({ax.x(op.start_ns), ax.x(op.end_ns()), color_of(i), op.duration_ns, critical(i), op_tip(i), ""});
        }
        lw.flush();
        rects += lw.emitted();
      }
      gap_marks(ax, y, block_h, &place, rects);
      os_ << "</g>\n";
      y += block_h + kRowGap + kPlaceGap;
    }

    flow_legend(legend, 10, axis_y + 40, width_ - 10.0);
    os_ << "</svg>\n";
    os_ << "<p class=\"note\">" << p_.ops.size() << " ops drawn as " << rects
        << " rectangles (ops narrower than a pixel are merged); hover for details.</p>\n";
    os_ << "</section>\n";
  }

  /// The critical path's gaps on one lane: all of them (place == nullptr) or those before an
  /// op of `place`.
  void gap_marks(const TimeAxis& ax, double y, double h, const std::string* place, std::size_t& rects) {
    std::vector<std::string> palette{kCriticalColor};
    LaneWriter lw(os_, palette, y, h, "gap");
    bool any = false;
    for (const Gap& g : a_.gaps) {
      if (place && (g.after >= p_.ops.size() || p_.ops[g.after].place != *place)) continue;
      std::string tip = std::string(g.launch ? "launch gap" : "bubble") + " of " + dur(g.end_ns - g.start_ns) + " (" +
                        verdict_name(g.verdict) + ")";
      if (g.before < p_.ops.size() && g.after < p_.ops.size()) {
        tip += ": " + p_.ops[g.before].name + " -> " + p_.ops[g.after].name;
      }
      lw.add({ax.x(g.start_ns), ax.x(g.end_ns), 0, g.end_ns - g.start_ns, false, tip, g.launch ? "launch" : "bubble"});
      any = true;
    }
    if (!any) return;
    // Gaps are translucent so that they mark without hiding.
    os_ << "<g fill-opacity=\"0.25\">";
    lw.flush();
    os_ << "</g>\n";
    rects += lw.emitted();
  }

  // ---------------------------------------------------------------- utilization
  void utilization() {
    os_ << "<section id=\"utilization-section\">\n<h2>Utilization over time</h2>\n";
    struct Panel {
      std::string place;
      std::vector<const Window*> windows;
      std::vector<const Unit*> units;
    };
    std::vector<Panel> panels;
    for (const std::string& place : places_) {
      Panel pn{place, {}, {}};
      for (const Window& w : p_.windows) {
        if (w.place == place && w.end_ns > w.start_ns) pn.windows.push_back(&w);
      }
      for (const Unit& u : p_.units) {
        if (u.place == place && u.peak > 0) pn.units.push_back(&u);
      }
      if (pn.windows.empty() || pn.units.empty()) continue;
      std::stable_sort(pn.windows.begin(), pn.windows.end(),
                       [](const Window* a, const Window* b) { return a->start_ns < b->start_ns; });
      panels.push_back(std::move(pn));
    }
    if (panels.empty()) {
      no_data(os_, "no windows");
      os_ << "</section>\n";
      return;
    }
    constexpr double kPanelH = 90, kPanelGap = 50, kTop = 20;
    const double label_w = 60;
    TimeAxis ax{t0_, t1_ - t0_, label_w, width_ - label_w - 170};
    double h = kTop + static_cast<double>(panels.size()) * (kPanelH + kPanelGap);
    os_ << "<svg class=\"chart\" id=\"utilization\" width=\"" << width_ << "\" height=\"" << px(h)
        << "\" viewBox=\"0 0 " << width_ << ' ' << px(h)
        << "\" role=\"img\" aria-label=\"achieved rate over peak per unit over time\">\n";
    double y = kTop;
    for (const Panel& pn : panels) {
      os_ << "<g class=\"panel\" data-place=\"" << esc(pn.place) << "\">";
      os_ << "<text x=\"" << px(ax.left) << "\" y=\"" << px(y - 6) << "\" font-weight=\"bold\">" << esc(pn.place)
          << "</text>";
      for (int pc : {0, 50, 100}) {
        double yy = y + kPanelH - kPanelH * pc / 100.0;
        os_ << "<line x1=\"" << px(ax.left) << "\" y1=\"" << px(yy) << "\" x2=\"" << px(ax.left + ax.width)
            << "\" y2=\"" << px(yy) << "\" stroke=\"" << (pc == 0 ? "#555" : "#ddd") << "\"/><text x=\""
            << px(ax.left - 4) << "\" y=\"" << px(yy + 4) << "\" text-anchor=\"end\">" << pc << "%</text>";
      }
      os_ << '\n';
      time_ticks(os_, ax, y, y + kPanelH);
      double ly = y + 10;
      std::size_t ci = 0;
      for (const Unit* u : pn.units) {
        auto r = static_cast<unsigned>(u->resource);
        const char* color = kPalette[r % kPaletteSize];
        ++ci;
        // Per pixel column, the time-weighted mean of the windows' rate / peak.
        std::map<long, std::pair<double, double>> cols;  // column -> (sum rate*dt, sum dt)
        bool any = false;
        for (const Window* w : pn.windows) {
          double dt = w->end_ns - w->start_ns;
          double mid = (w->start_ns + w->end_ns) / 2;
          long col = std::lround(ax.x(mid));
          auto& c = cols[col];
          c.first += w->rate[r] / u->peak * dt;
          c.second += dt;
          if (w->rate[r] > 0) any = true;
        }
        std::string label = std::string(resource_name(u->resource));
        for (const PlaceSummary& ps : a_.places) {
          if (ps.place == pn.place) label += " (avg " + pct(ps.sol[r]) + ")";
        }
        if (!any) label += " idle";
        legend_swatch(ax.left + ax.width + 12, ly, color, label, "resource");
        ly += 14;
        if (!any) continue;
        os_ << "<polyline class=\"util r-" << resource_name(u->resource) << "\" fill=\"none\" stroke=\"" << color
            << "\" stroke-width=\"1.5\" points=\"";
        bool first = true;
        for (const auto& [col, c] : cols) {
          double frac = c.second > 0 ? c.first / c.second : 0;
          frac = std::clamp(frac, 0.0, 1.1);
          if (!first) os_ << ' ';
          first = false;
          os_ << col << ',' << px(y + kPanelH - frac * kPanelH);
        }
        os_ << "\"><title>"
            << esc(pn.place + "." + resource_name(u->resource) + ", peak " + si(u->peak, resource_unit(u->resource)))
            << "</title></polyline>\n";
      }
      os_ << "</g>\n";
      y += kPanelH + kPanelGap;
    }
    os_ << "</svg>\n</section>\n";
  }

  // ---------------------------------------------------------------- roofline
  void roofline() {
    os_ << "<section id=\"roofline-section\">\n<h2>Roofline</h2>\n";
    struct Roofs {
      double compute = 0, hbm = 0, sram = 0;
      std::string places;
    };
    std::vector<Roofs> roofs;
    for (const std::string& place : places_) {
      Roofs r;
      for (const Unit& u : p_.units) {
        if (u.place != place) continue;
        if (u.resource == Resource::Compute) r.compute = u.peak;
        if (u.resource == Resource::Hbm) r.hbm = u.peak;
        if (u.resource == Resource::Sram) r.sram = u.peak;
      }
      if (!(r.compute > 0) || !(r.hbm > 0 || r.sram > 0)) continue;
      bool merged = false;
      for (Roofs& o : roofs) {
        if (o.compute == r.compute && o.hbm == r.hbm && o.sram == r.sram) {
          o.places += ", " + place;
          merged = true;
        }
      }
      if (!merged) {
        r.places = place;
        roofs.push_back(r);
      }
    }
    struct Pt {
      double x, y;
      std::size_t op;
      bool sram;  // the op's SRAM point (hollow), beside its HBM point (filled)
    };
    std::vector<Pt> pts;
    std::size_t unplotted = 0;
    for (std::size_t i = 0; i < p_.ops.size(); ++i) {
      const OpAnalysis* x = oa(i);
      if (!x || !(p_.ops[i].work[static_cast<unsigned>(Resource::Compute)] > 0)) continue;
      if (x->roofline.intensity_hbm > 0 && x->roofline.achieved > 0) {
        pts.push_back({x->roofline.intensity_hbm, x->roofline.achieved, i, false});
      } else {
        ++unplotted;
      }
      if (x->roofline.intensity_sram > 0 && x->roofline.achieved > 0)
        pts.push_back({x->roofline.intensity_sram, x->roofline.achieved, i, true});
    }
    if (roofs.empty() && pts.empty()) {
      no_data(os_, "no device with compute and memory units, no op with FLOP and HBM bytes");
      os_ << "</section>\n";
      return;
    }
    // Log ranges over the points, the roofs and their ridges.
    double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
    auto take_x = [&](double v) {
      if (v > 0 && std::isfinite(v)) xmin = std::min(xmin, v), xmax = std::max(xmax, v);
    };
    auto take_y = [&](double v) {
      if (v > 0 && std::isfinite(v)) ymin = std::min(ymin, v), ymax = std::max(ymax, v);
    };
    for (const Pt& pt : pts) take_x(pt.x), take_y(pt.y);
    for (const Roofs& r : roofs) {
      take_y(r.compute);
      if (r.hbm > 0) take_x(r.compute / r.hbm);
      if (r.sram > 0) take_x(r.compute / r.sram);
    }
    if (xmin > xmax) xmin = 1, xmax = 100;
    if (ymin > ymax) ymin = 1e9, ymax = 1e12;
    double lx0 = std::floor(std::log10(xmin)) - (xmin == xmax ? 1 : 0), lx1 = std::ceil(std::log10(xmax) + 0.05);
    double ly0 = std::floor(std::log10(ymin)) - (ymin == ymax ? 1 : 0), ly1 = std::ceil(std::log10(ymax) + 0.05);
    if (lx1 <= lx0) lx1 = lx0 + 1;
    if (ly1 <= ly0) ly1 = ly0 + 1;
    if (ly1 - ly0 > 12) ly0 = ly1 - 12;
    if (lx1 - lx0 > 12) lx0 = lx1 - 12;
    const double left = 80, top = 14, pw = std::min(width_ - 300.0, 720.0), ph = 380;
    auto X = [&](double v) { return left + (std::log10(v) - lx0) / (lx1 - lx0) * pw; };
    auto Y = [&](double v) { return top + ph - (std::log10(v) - ly0) / (ly1 - ly0) * ph; };
    double h = top + ph + 50;
    os_ << "<svg class=\"chart\" id=\"roofline\" width=\"" << width_ << "\" height=\"" << px(h) << "\" viewBox=\"0 0 "
        << width_ << ' ' << px(h) << "\" role=\"img\" aria-label=\"roofline with the ops\">\n";
    os_ << "<defs><clipPath id=\"roofline-clip\"><rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\""
        << px(pw) << "\" height=\"" << px(ph) << "\"/></clipPath></defs>\n";
    os_ << "<g class=\"axis\">";
    for (double e = lx0; e <= lx1 + 1e-9; e += 1) {
      double x = left + (e - lx0) / (lx1 - lx0) * pw;
      os_ << "<line x1=\"" << px(x) << "\" y1=\"" << px(top) << "\" x2=\"" << px(x) << "\" y2=\"" << px(top + ph)
          << "\" stroke=\"#e4e4e4\"/><text x=\"" << px(x) << "\" y=\"" << px(top + ph + 14)
          << "\" text-anchor=\"middle\">" << decade(e) << "</text>";
    }
    for (double e = ly0; e <= ly1 + 1e-9; e += 1) {
      double y = top + ph - (e - ly0) / (ly1 - ly0) * ph;
      os_ << "<line x1=\"" << px(left) << "\" y1=\"" << px(y) << "\" x2=\"" << px(left + pw) << "\" y2=\"" << px(y)
          << "\" stroke=\"#e4e4e4\"/><text x=\"" << px(left - 4) << "\" y=\"" << px(y + 4) << "\" text-anchor=\"end\">"
          << decade(e) << "</text>";
    }
    os_ << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(pw) << "\" height=\"" << px(ph)
        << "\" fill=\"none\" stroke=\"#555\"/>";
    os_ << "<text x=\"" << px(left + pw / 2) << "\" y=\"" << px(top + ph + 34)
        << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte: filled HBM, hollow SRAM)</text>";
    os_ << "<text transform=\"translate(14," << px(top + ph / 2)
        << ") rotate(-90)\" text-anchor=\"middle\">achieved FLOP/s</text></g>\n";

    const double xlo = std::pow(10.0, lx0), xhi = std::pow(10.0, lx1), ylo = std::pow(10.0, ly0);
    double legend_y = top + 10;
    const double legend_x = left + pw + 16;
    os_ << "<g class=\"roofs\" clip-path=\"url(#roofline-clip)\">\n";
    std::size_t ri = 0;
    for (const Roofs& r : roofs) {
      for (int mem = 0; mem < 2; ++mem) {
        double bw = mem == 0 ? r.hbm : r.sram;
        if (!(bw > 0)) continue;
        double ridge = r.compute / bw;
        double xs = std::max(xlo, ylo / bw);
        std::string pts_s = px(X(xs)) + "," + px(Y(std::min(r.compute, xs * bw)));
        if (ridge > xs && ridge < xhi) pts_s += " " + px(X(ridge)) + "," + px(Y(r.compute));
        pts_s += " " + px(X(xhi)) + "," + px(Y(std::min(r.compute, xhi * bw)));
        const char* name = mem == 0 ? "hbm" : "sram";
        os_ << "<polyline class=\"roof roof-" << name << "\" points=\"" << pts_s << "\" fill=\"none\" stroke=\""
            << (mem == 0 ? "#333" : "#888") << "\" stroke-width=\"2\"" << (mem == 0 ? "" : " stroke-dasharray=\"6 4\"")
            << (ri > 0 ? " stroke-opacity=\"0.6\"" : "") << "><title>"
            << esc(r.places + ": " + (mem == 0 ? "HBM " : "SRAM ") + si(bw, "B/s") + ", compute " +
                   si(r.compute, "FLOP/s"))
            << "</title></polyline>\n";
        os_ << "<g class=\"ridge ridge-" << name << "\"><line x1=\"" << px(X(ridge)) << "\" y1=\"" << px(top + ph)
            << "\" x2=\"" << px(X(ridge)) << "\" y2=\"" << px(Y(r.compute))
            << "\" stroke=\"#999\" stroke-dasharray=\"2 3\"/>"
            << "<circle cx=\"" << px(X(ridge)) << "\" cy=\"" << px(Y(r.compute))
            << "\" r=\"4\" fill=\"#fff\" stroke=\"#333\"/>"
            << "<text x=\"" << px(X(ridge) + 6) << "\" y=\"" << px(Y(r.compute) + (mem == 0 ? 14 : 26)) << "\">"
            << esc(std::string("ridge ") + (mem == 0 ? "HBM " : "SRAM ") + si(ridge, "FLOP/B")) << "</text></g>\n";
      }
      ++ri;
    }
    os_ << "</g>\n";
    for (const Roofs& r : roofs) {
      std::string label = r.places + ": " + si(r.compute, "FLOP/s");
      os_ << "<text class=\"legend-item\" x=\"" << px(legend_x) << "\" y=\"" << px(legend_y) << "\">" << esc(label)
          << "</text>\n";
      legend_y += 14;
    }
    os_ << "<g class=\"legend-item\"><line x1=\"" << px(legend_x) << "\" y1=\"" << px(legend_y - 4) << "\" x2=\""
        << px(legend_x + 20) << "\" y2=\"" << px(legend_y - 4) << "\" stroke=\"#333\" stroke-width=\"2\"/><text x=\""
        << px(legend_x + 26) << "\" y=\"" << px(legend_y) << "\">HBM roof</text></g>\n";
    legend_y += 14;
    os_ << "<g class=\"legend-item\"><line x1=\"" << px(legend_x) << "\" y1=\"" << px(legend_y - 4) << "\" x2=\""
        << px(legend_x + 20) << "\" y2=\"" << px(legend_y - 4)
        << "\" stroke=\"#888\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/><text x=\"" << px(legend_x + 26)
        << "\" y=\"" << px(legend_y) << "\">SRAM roof</text></g>\n";
    legend_y += 20;

    // The points, one per op; ops on the same pixel of the same kind are drawn once.
    os_ << "<g class=\"points\" clip-path=\"url(#roofline-clip)\">\n";
    std::set<std::tuple<long, long, unsigned, bool>> seen;
    std::map<std::tuple<long, long, unsigned, bool>, std::size_t> counts;
    for (const Pt& pt : pts) {
      auto key =
          std::make_tuple(std::lround(X(pt.x)), std::lround(Y(pt.y)), kind_index_.at(p_.ops[pt.op].kind), pt.sram);
      ++counts[key];
    }
    for (const Pt& pt : pts) {
      const OpRecord& op = p_.ops[pt.op];
      auto key = std::make_tuple(std::lround(X(pt.x)), std::lround(Y(pt.y)), kind_index_.at(op.kind), pt.sram);
      if (!seen.insert(key).second) continue;
      std::size_t n = counts[key];
      std::string tip = op.name + " (" + op.kind + "): " + si(pt.x, "FLOP/B") + (pt.sram ? " at SRAM, " : " at HBM, ") +
                        si(pt.y, "FLOP/s");
      if (const OpAnalysis* x = oa(pt.op)) tip += " of " + si(x->roofline.attainable, "FLOP/s") + " attainable";
      if (n > 1) tip += strf(" (and %zu more ops here)", n - 1);
      if (pt.sram) {
        os_ << "<circle class=\"pt pt-sram k-" << kind_index_.at(op.kind) << "\" cx=\"" << px(X(pt.x)) << "\" cy=\""
            << px(Y(pt.y)) << "\" r=\"3.5\" fill=\"none\" stroke=\"" << kind_color(op.kind)
            << "\" stroke-width=\"1.5\"><title>" << esc(tip) << "</title></circle>\n";
        continue;
      }
      os_ << "<circle class=\"pt k-" << kind_index_.at(op.kind) << "\" cx=\"" << px(X(pt.x)) << "\" cy=\""
          << px(Y(pt.y)) << "\" r=\"3.5\" fill=\"" << kind_color(op.kind)
          << "\" fill-opacity=\"0.8\" stroke=\"#222\" stroke-width=\"0.5\"><title>" << esc(tip)
          << "</title></circle>\n";
    }
    os_ << "</g>\n";
    for (const auto& [kind, idx] : kind_index_) {
      legend_swatch(legend_x, legend_y, kPalette[idx % kPaletteSize], kind, "kind");
      legend_y += 14;
    }
    os_ << "</svg>\n";
    const auto sram_pts =
        static_cast<std::size_t>(std::count_if(pts.begin(), pts.end(), [](const Pt& q) { return q.sram; }));
    os_ << "<p class=\"note\">" << pts.size() - sram_pts << " ops plotted at their HBM intensity";
    if (sram_pts > 0) os_ << ", " << sram_pts << " at their SRAM intensity too (hollow)";
    if (unplotted > 0) os_ << "; " << unplotted << " ops with FLOP but no HBM traffic are not plotted";
    os_ << ".</p>\n</section>\n";
  }

  // ---------------------------------------------------------------- stalls
  void stalls() {
    os_ << "<section id=\"stalls-section\">\n<h2>Matrix engine stall breakdown</h2>\n";
    std::vector<const PlaceSummary*> rows;
    for (const PlaceSummary& ps : a_.places) {
      if (ps.stalls.total() > 0) rows.push_back(&ps);
    }
    if (rows.empty()) {
      no_data(os_, "no engine cycle buckets");
      os_ << "</section>\n";
      return;
    }
    static const char* const kNames[] = {"busy useful", "busy padding", "busy overhead",   "wait SRAM",
                                         "wait HBM",    "wait PCIe",    "wait dependency", "idle"};
    static const char* const kIds[] = {"busy_useful", "busy_padding", "busy_overhead",   "wait_sram",
                                       "wait_hbm",    "wait_pcie",    "wait_dependency", "idle"};
    static const char* const kColors[] = {"#59a14f", "#8cd17d", "#c9e5b8", "#76b7b2",
                                          "#f28e2b", "#b07aa1", "#e15759", "#d0d0d0"};
    constexpr int kBuckets = 8;
    const double left = 90, bar_w = width_ - left - 20, bar_h = 24, gap = 10, top = 8;
    std::vector<LegendEntry> legend;
    for (int i = 0; i < kBuckets; ++i) legend.push_back({kColors[i], kNames[i], kIds[i]});
    double h =
        top + static_cast<double>(rows.size()) * (bar_h + gap) + 14 + 16.0 * legend_rows(legend, left, width_ - 10.0);
    os_ << "<svg class=\"chart\" id=\"stalls\" width=\"" << width_ << "\" height=\"" << px(h) << "\" viewBox=\"0 0 "
        << width_ << ' ' << px(h) << "\" role=\"img\" aria-label=\"matrix engine cycles by bucket per place\">\n";
    double y = top;
    for (const PlaceSummary* ps : rows) {
      const StallBuckets& s = ps->stalls;
      const double v[] = {s.busy_useful, s.busy_padding, s.busy_overhead,   s.wait_sram,
                          s.wait_hbm,    s.wait_pcie,    s.wait_dependency, s.idle};
      double total = s.total();
      os_ << "<g class=\"stall-bar\" data-place=\"" << esc(ps->place) << "\"><text x=\"4\" y=\""
          << px(y + bar_h / 2 + 4) << "\">" << esc(ps->place) << "</text>";
      double x = left;
      for (int i = 0; i < kBuckets; ++i) {
        double share = std::max(v[i], 0.0) / total;
        double w = share * bar_w;
        if (w <= 0) continue;
        os_ << "<rect class=\"stall " << kIds[i] << "\" x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w)
            << "\" height=\"" << px(bar_h) << "\" fill=\"" << kColors[i] << "\"><title>"
            << esc(ps->place + ": " + kNames[i] + " " + pct(share) + " (" + num(v[i]) + " engine-cycles)")
            << "</title></rect>";
        if (w > 40) {
          os_ << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(y + bar_h / 2 + 4) << "\" text-anchor=\"middle\">"
              << esc(pct(share)) << "</text>";
        }
        x += w;
      }
      os_ << "</g>\n";
      y += bar_h + gap;
    }
    flow_legend(legend, left, y + 12, width_ - 10.0);
    os_ << "</svg>\n</section>\n";
  }

  // ---------------------------------------------------------------- top ops
  // The matrix engines' cycles over an op or a group: useful / overhead / wait HBM / wait SRAM / idle.
  void engine_cell(const StallBuckets& s) {
    os_ << "<td class=\"t\">";
    const double cycles = s.total();
    if (cycles > 0) {
      os_ << pct(s.busy_useful / cycles) << " / " << pct(s.busy_overhead / cycles) << " / " << pct(s.wait_hbm / cycles)
          << " / " << pct(s.wait_sram / cycles) << " / " << pct(s.idle / cycles);
    } else {
      os_ << "&ndash;";
    }
    os_ << "</td>";
  }

  void verdict_cell(Verdict v) {
    os_ << "<td class=\"t\"><span class=\"verdict " << verdict_class(v) << "\" style=\"background:" << verdict_color(v)
        << "\">" << esc(verdict_name(v)) << "</span></td>";
  }

  void top_ops() {
    os_ << "<section id=\"top-ops-section\">\n<h2>Top ops</h2>\n";
    if (p_.ops.empty()) {
      no_data(os_, "no ops");
      os_ << "</section>\n";
      return;
    }
    struct Group {
      std::string pattern, kind;
      std::vector<double> durations;
      double total = 0, sol_weighted = 0;
      double by_verdict[kVerdicts] = {};
      double by_top[kResources] = {};
      std::size_t critical = 0;
      StallBuckets stalls;  // summed over the group's ops that have them
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    double all = 0;
    for (std::size_t i = 0; i < p_.ops.size(); ++i) {
      const OpRecord& op = p_.ops[i];
      Group& g = groups[{report_detail::name_pattern(op.name), op.kind}];
      g.pattern = report_detail::name_pattern(op.name);
      g.kind = op.kind;
      g.durations.push_back(op.duration_ns);
      g.total += op.duration_ns;
      all += op.duration_ns;
      g.stalls += op.stalls;
      if (const OpAnalysis* x = oa(i)) {
        g.sol_weighted += x->top_sol * op.duration_ns;
        g.by_verdict[static_cast<unsigned>(x->verdict)] += op.duration_ns;
        g.by_top[static_cast<unsigned>(x->top)] += op.duration_ns;
        if (x->critical) ++g.critical;
      }
    }
    std::vector<Group*> order;
    for (auto& [k, g] : groups) {
      std::sort(g.durations.begin(), g.durations.end());
      order.push_back(&g);
    }
    std::stable_sort(order.begin(), order.end(), [](const Group* a, const Group* b) { return a->total > b->total; });
    os_ << "<h3>By name pattern and kind (" << groups.size() << " groups, by total time)</h3>\n";
    os_ << "<table class=\"data\" id=\"top-groups\"><tr><th>pattern</th><th>kind</th><th>count</th><th>total</th>"
           "<th>share</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>top unit</th><th>SoL</th>"
           "<th>verdict</th><th>critical</th><th>matrix engines: useful / overhead / wait HBM / wait SRAM / "
           "idle</th></tr>\n";
    for (std::size_t n = 0; n < order.size() && n < o_.top_groups; ++n) {
      const Group& g = *order[n];
      unsigned top = static_cast<unsigned>(std::max_element(g.by_top, g.by_top + kResources) - g.by_top);
      unsigned v = static_cast<unsigned>(std::max_element(g.by_verdict, g.by_verdict + kVerdicts) - g.by_verdict);
      auto count = static_cast<double>(g.durations.size());
      os_ << "<tr><td class=\"t\">" << esc(g.pattern) << "</td><td class=\"t\">" << esc(g.kind) << "</td><td>"
          << g.durations.size() << "</td><td>" << esc(dur(g.total)) << "</td><td>" << pct(all > 0 ? g.total / all : 0)
          << "</td><td>" << esc(dur(g.total / count)) << "</td><td>" << esc(dur(percentile(g.durations, 0.5)))
          << "</td><td>" << esc(dur(percentile(g.durations, 0.9))) << "</td><td>"
          << esc(dur(percentile(g.durations, 0.99))) << "</td><td class=\"t\">"
          << resource_name(static_cast<Resource>(top)) << "</td><td>" << pct(g.total > 0 ? g.sol_weighted / g.total : 0)
          << "</td>";
      verdict_cell(static_cast<Verdict>(v));
      os_ << "<td>" << g.critical << "</td>";
      engine_cell(g.stalls);
      os_ << "</tr>\n";
    }
    os_ << "</table>\n";
    if (order.size() > o_.top_groups) {
      os_ << "<p class=\"note\">" << order.size() - o_.top_groups << " more groups not shown.</p>\n";
    }

    std::vector<std::size_t> ids(p_.ops.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
    std::stable_sort(ids.begin(), ids.end(),
                     [this](std::size_t a, std::size_t b) { return p_.ops[a].duration_ns > p_.ops[b].duration_ns; });
    std::size_t n_top = std::min(ids.size(), o_.top_ops);
    os_ << "<h3>Longest ops (top " << n_top << " of " << ids.size() << ")</h3>\n";
    os_ << "<table class=\"data\" id=\"top-ops\"><tr><th>id</th><th>name</th><th>kind</th><th>place</th>"
           "<th>layer</th><th>start</th><th>duration</th><th>top unit</th><th>SoL</th><th>achieved</th>"
           "<th>verdict</th><th>critical</th><th>matrix engines: useful / overhead / wait HBM / wait SRAM / "
           "idle</th></tr>\n";
    for (std::size_t n = 0; n < n_top; ++n) {
      std::size_t i = ids[n];
      const OpRecord& op = p_.ops[i];
      const OpAnalysis* x = oa(i);
      os_ << "<tr><td>" << op.id << "</td><td class=\"t\">" << esc(op.name) << "</td><td class=\"t\">" << esc(op.kind)
          << "</td><td class=\"t\">" << esc(op.place) << "</td><td>" << op.layer << "</td><td>"
          << esc(dur(op.start_ns - t0_)) << "</td><td>" << esc(dur(op.duration_ns)) << "</td>";
      if (x) {
        os_ << "<td class=\"t\">" << resource_name(x->top) << "</td><td>" << pct(x->top_sol) << "</td><td>"
            << (x->roofline.achieved > 0 ? esc(si(x->roofline.achieved, "FLOP/s")) : "") << "</td>";
        verdict_cell(x->verdict);
        os_ << "<td>" << (x->critical ? "yes" : "") << "</td>";
        engine_cell(op.stalls);
        os_ << "</tr>\n";
      } else {
        os_ << "<td></td><td></td><td></td><td></td><td></td><td></td></tr>\n";
      }
    }
    os_ << "</table>\n</section>\n";
  }

  // ---------------------------------------------------------------- commands, hosts
  void commands() {
    os_ << "<section id=\"commands-section\">\n<h2>Commands</h2>\n";
    if (p_.commands.empty()) {
      no_data(os_, "no command latencies");
    } else {
      // Latency rows (the command processor's, the captured per-opcode ones) as they come.
      os_ << "<table class=\"data\" id=\"commands\"><tr><th>place</th><th>command</th><th>count</th><th>mean</th>"
             "<th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n";
      for (const CommandStat& c : p_.commands) {
        if (c.has_work()) continue;
        os_ << "<tr><td class=\"t\">" << esc(c.place) << "</td><td class=\"t\">" << esc(c.name) << "</td><td>"
            << esc(num(c.count)) << "</td><td>" << esc(dur(c.mean)) << "</td><td>" << esc(dur(c.p50)) << "</td><td>"
            << esc(dur(c.p90)) << "</td><td>" << esc(dur(c.p99)) << "</td><td>" << esc(dur(c.max)) << "</td></tr>\n";
      }
      os_ << "</table>\n";
      // Kinds of command with their work, by total time: each kind's places together, its
      // speed of light weighted by each place's time; percentiles of its busiest place.
      os_ << "<h3>Kinds of command: speed of light</h3>\n";
      if (a_.kinds.empty()) {
        no_data(os_, "no command work measured");
      } else {
        const std::size_t shown = std::min(a_.kinds.size(), o_.top_commands);
        os_ << "<table class=\"data\" id=\"command-kinds\"><tr><th>command</th><th>places</th><th>count</th>"
               "<th>total</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>top unit</th>"
               "<th>SoL</th><th>verdict</th></tr>\n";
        for (std::size_t n = 0; n < shown; ++n) {
          const CommandKind& k = a_.kinds[n];
          const CommandStat* busiest = &p_.commands[k.rows.front()];
          for (std::uint32_t r : k.rows) {
            const CommandStat& c = p_.commands[r];
            if (c.count * c.mean > busiest->count * busiest->mean) busiest = &c;
          }
          // Every unit's speed of light in the tooltip, the top one in the cell.
          std::string all;
          for (unsigned r = 0; r < kResources; ++r) {
            if (k.sol[r] <= 0) continue;
            all +=
                (all.empty() ? "" : ", ") + std::string(resource_name(static_cast<Resource>(r))) + " " + pct(k.sol[r]);
          }
          os_ << "<tr><td class=\"t\">" << esc(k.name) << "</td><td class=\"t\">" << esc(kind_places(p_, k))
              << "</td><td>" << esc(num(k.count)) << "</td><td>" << esc(dur(k.total_ns)) << "</td><td>"
              << esc(dur(k.total_ns / k.count)) << "</td><td>" << esc(dur(busiest->p50)) << "</td><td>"
              << esc(dur(busiest->p90)) << "</td><td>" << esc(dur(busiest->p99)) << "</td><td>"
              << esc(dur(busiest->max)) << "</td><td class=\"t\">" << resource_name(k.top) << "</td><td title=\""
              << esc(all) << "\">" << pct(k.top_sol) << "</td>";
          verdict_cell(k.verdict);
          os_ << "</tr>\n";
        }
        os_ << "</table>\n";
        if (a_.kinds.size() > shown) {
          os_ << "<p class=\"note\">" << a_.kinds.size() - shown
              << " more kinds of command not shown (all are in the profile).</p>\n";
        }
      }
    }
    os_ << "<h3>Hosts</h3>\n";
    if (p_.hosts.empty()) {
      no_data(os_, "no host activity");
    } else {
      os_ << "<table class=\"data\" id=\"hosts\"><tr><th>place</th><th>busy</th><th>busy share</th><th>API calls</th>"
             "<th>commands</th><th>waiting</th></tr>\n";
      for (const HostActivity& h : p_.hosts) {
        os_ << "<tr><td class=\"t\">" << esc(h.place) << "</td><td>" << esc(dur(h.busy_ns)) << "</td><td>"
            << pct(h.busy_ns / (t1_ - t0_)) << "</td><td>" << esc(num(h.api_calls)) << "</td><td>"
            << esc(num(h.commands)) << "</td><td>" << esc(dur(h.wait_ns)) << "</td></tr>\n";
      }
      os_ << "</table>\n";
    }
    os_ << "</section>\n";
  }

  // ---------------------------------------------------------------- findings
  void findings() {
    os_ << "<section id=\"findings-section\">\n<h2>Findings</h2>\n";
    if (a_.findings.empty()) {
      no_data(os_, "no findings");
      os_ << "</section>\n";
      return;
    }
    os_ << "<ol class=\"findings\" id=\"findings-list\">\n";
    for (const Finding& f : a_.findings) {
      os_ << "<li class=\"finding\" data-detector=\"" << esc(f.detector) << "\"><span class=\"detector\">"
          << esc(f.detector) << "</span> <b>" << esc(f.place) << "</b>, " << esc(dur(f.start_ns - t0_)) << " to "
          << esc(dur(f.end_ns - t0_)) << ", costs " << esc(dur(f.cost_ns)) << ": " << esc(f.message);
      if (!f.numbers.empty()) {
        os_ << "<br><span class=\"numbers\">";
        bool first = true;
        for (const auto& [k, v] : f.numbers) {
          os_ << (first ? "" : ", ") << esc(k) << " = " << esc(num(v));
          first = false;
        }
        os_ << "</span>";
      }
      os_ << "</li>\n";
    }
    os_ << "</ol>\n</section>\n";
  }

  std::ostream& os_;
  const RunProfile& p_;
  const Analysis& a_;
  const ReportOptions& o_;
  int width_ = 1100;
  std::vector<std::string> places_;
  std::map<std::string, unsigned> kind_index_;
  double t0_ = 0, t1_ = 1;
};

}  // namespace

void write_html_report(std::ostream& os, const RunProfile& profile, const Analysis& analysis,
                       const ReportOptions& options) {
  // Build in memory: a stream in a failed state or with odd flags must not change the output.
  std::ostringstream out;
  out.imbue(std::locale::classic());
  Report(out, profile, analysis, options).write();
  os << out.str();
}

}  // namespace sohusim::profiler
