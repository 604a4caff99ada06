#include "sohusim/studies/study_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "sohusim/config/units.hpp"
#include "sohusim/profiler/report_style.hpp"

namespace sohusim::studies {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::size_t kMaxSeries = 10;

std::string esc(const std::string& s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string px(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// Four significant digits; whole numbers and numbers of 1,000 or more without decimals.
std::string num(double v) {
  if (!std::isfinite(v)) return "";
  char b[32];
  if ((v == std::floor(v) || std::fabs(v) >= 1000) && std::fabs(v) < 1e15)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

double cell_number(const ResultStore::Row& r, const std::string& column) {
  const std::string* t = r.get(column);
  if (t == nullptr || t->empty()) return kNaN;
  char* end = nullptr;
  const double v = std::strtod(t->c_str(), &end);
  return end != nullptr && *end == '\0' ? v : kNaN;
}

std::string cell_text(const ResultStore::Row& r, const std::string& column) {
  const std::string* t = r.get(column);
  return t == nullptr ? std::string() : *t;
}

// "Nice" tick values covering [lo, hi] (about `n` of them).
std::vector<double> ticks(double lo, double hi, int n = 5) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

struct AxisInfo {
  std::string name;
  std::vector<std::string> values;  // in chart order
  std::vector<double> numbers;      // when numeric
  bool numeric = false;
  std::size_t position(const std::string& v) const {
    return static_cast<std::size_t>(std::find(values.begin(), values.end(), v) - values.begin());
  }
};

// A scale from data to pixels: linear or logarithmic.
struct Scale {
  double d0 = 0, d1 = 1, p0 = 0, p1 = 1;
  bool log = false;
  double operator()(double v) const {
    const double a = log ? std::log10(d0) : d0, b = log ? std::log10(d1) : d1, x = log ? std::log10(v) : v;
    return b == a ? (p0 + p1) / 2 : p0 + (x - a) / (b - a) * (p1 - p0);
  }
};

class Page {
 public:
  Page(std::ostream& os, const ResultStore& store, const StudyReportOptions& o) : os_(os), o_(o) {
    rows_ = store.rows();
    command_ = store.meta("command").value_or("run");
    name_ = store.meta("name").value_or("");
    spec_ = store.meta("spec").value_or("");
    for (const std::string& p : store.parameter_columns()) {
      AxisInfo a;
      a.name = p;
      for (const auto& r : rows_) {
        const std::string v = cell_text(r, p);
        if (std::find(a.values.begin(), a.values.end(), v) == a.values.end()) a.values.push_back(v);
      }
      a.numeric = true;
      for (const std::string& v : a.values) {
        double x = 0;
        a.numeric = a.numeric && axis_number(v, x);
        a.numbers.push_back(x);
      }
      if (a.numeric) {  // in numeric order
        std::vector<std::size_t> order(a.values.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&a](std::size_t i, std::size_t j) { return a.numbers[i] < a.numbers[j]; });
        AxisInfo s = a;
        for (std::size_t i = 0; i < order.size(); ++i) {
          s.values[i] = a.values[order[i]];
          s.numbers[i] = a.numbers[order[i]];
        }
        a = s;
      }
      if (p == "repeat") {
        repeats_ = true;
      } else if (a.values.size() > 1) {
        axes_.push_back(a);
      } else {
        fixed_axes_.push_back(a);
      }
    }
    for (const auto& r : rows_) (cell_text(r, "status") == "ok" ? ok_ : bad_).push_back(&r);
    metrics_ = o.metrics;
    if (metrics_.empty()) {
      const std::vector<std::string> usual =
          command_ == "serve"  ? std::vector<std::string>{"metrics.goodput_per_s", "metrics.output_tokens_per_s",
                                                          "ttft_ms.p99", "tpot_ms.p99", "energy_per_output_token_joules"}
          : command_ == "gemm" ? std::vector<std::string>{"tflops", "utilization", "seconds", "energy_joules"}
                               : std::vector<std::string>{"output_tokens_per_second", "tpot_ms", "ttft_ms",
                                                          "average_watts", "output_tokens_per_joule"};
      for (const std::string& m : usual)
        if (has_column(m)) metrics_.push_back(m);
    }
    pareto_ = o.pareto;
    if (pareto_.empty()) {
      const auto usual =
          command_ == "serve"
              ? std::make_pair(Objective{"metrics.goodput_per_s", true}, Objective{"configuration.devices", false})
          : command_ == "gemm"
              ? std::make_pair(Objective{"tflops", true}, Objective{"energy_joules", false})
              : std::make_pair(Objective{"output_tokens_per_second", true}, Objective{"average_watts", false});
      if (has_column(usual.first.metric) && has_column(usual.second.metric)) pareto_.push_back(usual);
    }
    for (const std::string& m : metrics_)
      if (!has_column(m)) throw std::invalid_argument("--metric: the results have no column `" + m + "`");
    for (const auto& [a, b] : pareto_)
      for (const Objective& x : {a, b})
        if (!has_column(x.metric))
          throw std::invalid_argument("--pareto: the results have no column `" + x.metric + "`");
  }

  void write() {
    const std::string title = o_.title.empty() ? "Study: " + (name_.empty() ? std::string("sweep") : name_) : o_.title;
    os_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"generator\" content=\"sohusim sweep --report\">\n<title>" << esc(title)
        << "</title>\n<style>\n"
        << profiler::report_stylesheet(o_.width)
        << "details pre{background:#f6f6f6;padding:8px;overflow-x:auto}\ntr:target td{background:#fff3c4 !important}\n"
        << "td.err{color:#a33;text-align:left;white-space:normal}\ncode.args{display:block;font-size:11px;max-width:"
           "420px;white-space:normal;word-break:break-all}\n"
        << "</style>\n</head>\n<body>\n<main>\n<h1>" << esc(title) << "</h1>\n";
    os_ << "<p class=\"subtitle\">sohusim " << esc(command_) << " &middot; " << rows_.size()
        << " points: " << ok_.size() << " ok, " << bad_.size() << " failed or timed out"
        << (repeats_ ? " &middot; repetitions averaged" : "")
        << "</p>\n<nav><a href=\"#axes\">axes</a><a href=\"#metrics\">metrics</a><a href=\"#pareto\">Pareto fronts</a>"
           "<a href=\"#points\">points</a></nav>\n";
    axes_section();
    metrics_section();
    pareto_section();
    points_section();
    os_ << "</main>\n</body>\n</html>\n";
  }

 private:
  bool has_column(const std::string& c) const {
    for (const auto& r : rows_)
      if (r.get(c) != nullptr) return true;
    return false;
  }

  void axes_section() {
    os_ << "<section id=\"axes\">\n<h2>What the study varied</h2>\n<table class=\"data\" id=\"axes-table\">"
           "<tr><th>parameter</th><th>values</th></tr>\n";
    for (const AxisInfo& a : axes_) {
      os_ << "<tr><td class=\"t\">" << esc(a.name) << "</td><td class=\"t\">";
      for (std::size_t i = 0; i < a.values.size(); ++i) os_ << (i ? ", " : "") << esc(a.values[i]);
      os_ << "</td></tr>\n";
    }
    for (const AxisInfo& a : fixed_axes_)
      os_ << "<tr><td class=\"t\">" << esc(a.name) << "</td><td class=\"t\">" << esc(a.values.front())
          << "</td></tr>\n";
    os_ << "</table>\n";
    if (!spec_.empty()) os_ << "<details><summary>the spec</summary><pre>" << esc(spec_) << "</pre></details>\n";
    os_ << "</section>\n";
  }

  // The mean of `metric` over the ok rows matching every (axis, value) of `where`.
  double mean(const std::string& metric, const std::vector<std::pair<const AxisInfo*, std::string>>& where,
              unsigned* count = nullptr) const {
    double sum = 0;
    unsigned n = 0;
    for (const ResultStore::Row* r : ok_) {
      bool match = true;
      for (const auto& [a, v] : where) match = match && cell_text(*r, a->name) == v;
      const double x = cell_number(*r, metric);
      if (match && std::isfinite(x)) {
        sum += x;
        ++n;
      }
    }
    if (count != nullptr) *count = n;
    return n ? sum / n : kNaN;
  }

  void y_axis(double left, double top, double h, const Scale& y, double x_end) {
    for (const double t : ticks(y.d0, y.d1)) {
      const double py = y(t);
      os_ << "<line x1=\"" << px(left) << "\" x2=\"" << px(x_end) << "\" y1=\"" << px(py) << "\" y2=\"" << px(py)
          << "\" stroke=\"#eee\"/><text x=\"" << px(left - 4) << "\" y=\"" << px(py + 4) << "\" text-anchor=\"end\">"
          << num(t) << "</text>";
    }
    os_ << "<line x1=\"" << px(left) << "\" x2=\"" << px(left) << "\" y1=\"" << px(top) << "\" y2=\"" << px(top + h)
        << "\" stroke=\"#888\"/>";
  }

  void metrics_section() {
    os_ << "<section id=\"metrics\">\n<h2>Metrics over the axes</h2>\n";
    if (axes_.empty() || ok_.empty()) {
      os_ << "<p class=\"no-data\">" << (ok_.empty() ? "no point finished" : "no parameter took two values")
          << "</p>\n</section>\n";
      return;
    }
    for (const std::string& m : metrics_) {
      chart_ = static_cast<unsigned>(&m - metrics_.data());
      os_ << "<h3>" << esc(m) << "</h3>\n";
      if (line_chart(m) && axes_.size() >= 2) heat_map(m);
    }
    os_ << "</section>\n";
  }

  // False when there was nothing to draw (no value, or the same value everywhere).
  bool line_chart(const std::string& metric) {
    // Across: the numeric axis with the most values (a curve), else the first axis.
    const AxisInfo* x_axis = &axes_.front();
    for (const AxisInfo& a : axes_)
      if (a.numeric && (!x_axis->numeric || a.values.size() > x_axis->values.size())) x_axis = &a;
    std::vector<const AxisInfo*> others;
    for (const AxisInfo& a : axes_)
      if (&a != x_axis) others.push_back(&a);
    // Every combination of the other axes, in order, the first slowest.
    std::vector<std::vector<std::string>> combos = {{}};
    for (const AxisInfo* a : others) {
      std::vector<std::vector<std::string>> next;
      for (const auto& c : combos)
        for (const std::string& v : a->values) {
          next.push_back(c);
          next.back().push_back(v);
        }
      combos = next;
    }
    const std::size_t shown = std::min(combos.size(), kMaxSeries);
    const double w = o_.width, h = 260, left = 70, right = 20, top = 12, bottom = 40 + 16.0 * ((shown + 2) / 3);
    const double plot_h = h - top - 40;
    Scale x{0, 1, left, w - right, false};
    const bool log_x =
        x_axis->numeric && x_axis->numbers.front() > 0 && x_axis->numbers.back() / x_axis->numbers.front() >= 16;
    if (x_axis->numeric) {
      x = Scale{x_axis->numbers.front(), x_axis->numbers.back(), left + 10, w - right - 10, log_x};
    } else {
      x = Scale{0, static_cast<double>(x_axis->values.size() - 1), left + 30, w - right - 30, false};
    }
    std::vector<std::vector<double>> series(shown, std::vector<double>(x_axis->values.size(), kNaN));
    double lo = 0, hi = 0;
    bool any = false;
    for (std::size_t s = 0; s < shown; ++s) {
      for (std::size_t i = 0; i < x_axis->values.size(); ++i) {
        std::vector<std::pair<const AxisInfo*, std::string>> where = {{x_axis, x_axis->values[i]}};
        for (std::size_t k = 0; k < others.size(); ++k) where.emplace_back(others[k], combos[s][k]);
        const double v = mean(metric, where);
        series[s][i] = v;
        if (std::isfinite(v)) {
          lo = any ? std::min(lo, v) : v;
          hi = any ? std::max(hi, v) : v;
          any = true;
        }
      }
    }
    if (!any) {
      os_ << "<p class=\"no-data\">no value of " << esc(metric) << "</p>\n";
      return false;
    }
    if (hi == lo) {
      os_ << "<p class=\"no-data\">" << esc(metric) << " is " << num(lo) << " at every point</p>\n";
      return false;
    }
    // The data's own range with a margin (not from zero: differences of a few percent must show).
    const double margin = (hi - lo) * 0.08;
    lo = lo >= 0 && lo - margin < 0 ? 0 : lo - margin;
    hi += margin;
    const std::vector<double> yt = ticks(lo, hi);
    const Scale y{lo, hi, top + plot_h, top, false};
    os_ << "<svg class=\"chart line-chart\" id=\"line-" << chart_ << "\" width=\"" << px(w) << "\" height=\""
        << px(h + bottom - 40) << "\" role=\"img\" aria-label=\"" << esc(metric) << " over " << esc(x_axis->name)
        << "\">";
    y_axis(left, top, plot_h, y, w - right);
    double last_label = -1e9;
    for (std::size_t i = 0; i < x_axis->values.size(); ++i) {
      const double p = x(x_axis->numeric ? x_axis->numbers[i] : static_cast<double>(i));
      const double half = 3.5 * static_cast<double>(x_axis->values[i].size());  // about half the label's width
      if (p - half < last_label + 6) continue;                                  // it would overlap the last one
      last_label = p + half;
      os_ << "<text x=\"" << px(p) << "\" y=\"" << px(top + plot_h + 14) << "\" text-anchor=\"middle\">"
          << esc(x_axis->values[i]) << "</text>";
    }
    os_ << "<text x=\"" << px((left + w - right) / 2) << "\" y=\"" << px(top + plot_h + 30)
        << "\" text-anchor=\"middle\" font-weight=\"bold\">" << esc(x_axis->name) << (log_x ? " (log scale)" : "")
        << "</text>";
    for (std::size_t s = 0; s < shown; ++s) {
      const char* color = kPalette[s % 10];
      std::string path;
      for (std::size_t i = 0; i < x_axis->values.size(); ++i) {
        if (!std::isfinite(series[s][i])) continue;
        const double px_ = x(x_axis->numeric ? x_axis->numbers[i] : static_cast<double>(i));
        path += (path.empty() ? "M" : " L") + px(px_) + "," + px(y(series[s][i]));
        os_ << "<circle cx=\"" << px(px_) << "\" cy=\"" << px(y(series[s][i])) << "\" r=\"3\" fill=\"" << color
            << "\"><title>" << esc(x_axis->name + "=" + x_axis->values[i] + label(others, combos[s])) << ": "
            << num(series[s][i]) << "</title></circle>";
      }
      os_ << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\"/>";
      const double lx = left + static_cast<double>(s % 3) * (w - left) / 3, ly = top + plot_h + 48 + 16.0 * (s / 3);
      os_ << "<g class=\"legend-item\"><rect x=\"" << px(lx) << "\" y=\"" << px(ly - 9)
          << "\" width=\"10\" height=\"10\" fill=\"" << color << "\"/><text x=\"" << px(lx + 14) << "\" y=\"" << px(ly)
          << "\">" << esc(others.empty() ? metric : label(others, combos[s]).substr(2)) << "</text></g>";
    }
    os_ << "</svg>\n";
    if (combos.size() > shown)
      os_ << "<p class=\"no-data\">" << shown << " of " << combos.size()
          << " combinations of the other axes drawn; the points table has them all</p>\n";
    return true;
  }

  static std::string label(const std::vector<const AxisInfo*>& axes, const std::vector<std::string>& values) {
    std::string t;
    for (std::size_t k = 0; k < axes.size(); ++k) t += ", " + axes[k]->name + "=" + values[k];
    return t;
  }

  void heat_map(const std::string& metric) {
    const AxisInfo& ra = axes_[0];
    const AxisInfo& ca = axes_[1];
    const double cell_w = std::min(110.0, (o_.width - 160.0) / static_cast<double>(ca.values.size())), cell_h = 24,
                 left = 150, top = 30;
    double lo = 0, hi = 0;
    bool any = false;
    unsigned per_cell = 0;
    std::vector<std::vector<double>> v(ra.values.size(), std::vector<double>(ca.values.size(), kNaN));
    for (std::size_t i = 0; i < ra.values.size(); ++i)
      for (std::size_t j = 0; j < ca.values.size(); ++j) {
        v[i][j] = mean(metric, {{&ra, ra.values[i]}, {&ca, ca.values[j]}}, &per_cell);
        if (std::isfinite(v[i][j])) {
          lo = any ? std::min(lo, v[i][j]) : v[i][j];
          hi = any ? std::max(hi, v[i][j]) : v[i][j];
          any = true;
        }
      }
    if (!any) return;
    const double w = left + cell_w * static_cast<double>(ca.values.size()) + 10,
                 h = top + cell_h * static_cast<double>(ra.values.size()) + 10;
    os_ << "<svg class=\"chart heat-map\" id=\"heat-" << chart_ << "\" width=\"" << px(w) << "\" height=\"" << px(h)
        << "\" role=\"img\" aria-label=\"" << esc(metric) << " over " << esc(ra.name) << " and " << esc(ca.name)
        << "\">";
    os_ << "<text x=\"" << px(left) << "\" y=\"12\" font-weight=\"bold\">" << esc(ca.name) << " &#8594;</text>"
        << "<text x=\"4\" y=\"" << px(top - 4) << "\" font-weight=\"bold\">" << esc(ra.name) << " &#8595;</text>";
    for (std::size_t j = 0; j < ca.values.size(); ++j)
      os_ << "<text x=\"" << px(left + cell_w * (static_cast<double>(j) + 0.5)) << "\" y=\"" << px(top - 4)
          << "\" text-anchor=\"middle\">" << esc(ca.values[j]) << "</text>";
    for (std::size_t i = 0; i < ra.values.size(); ++i) {
      const double y = top + cell_h * static_cast<double>(i);
      os_ << "<text x=\"" << px(left - 6) << "\" y=\"" << px(y + 16) << "\" text-anchor=\"end\">" << esc(ra.values[i])
          << "</text>";
      for (std::size_t j = 0; j < ca.values.size(); ++j) {
        const double f = hi > lo && std::isfinite(v[i][j]) ? (v[i][j] - lo) / (hi - lo) : 0.5;
        // From a pale to a deep blue; dark cells get white text.
        const int r = static_cast<int>(235 - 190 * f), g = static_cast<int>(243 - 150 * f),
                  b = static_cast<int>(251 - 80 * f);
        char color[16];
        std::snprintf(color, sizeof color, "#%02x%02x%02x", r, g, b);
        const double x = left + cell_w * static_cast<double>(j);
        os_ << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(cell_w - 1) << "\" height=\""
            << px(cell_h - 1) << "\" fill=\"" << (std::isfinite(v[i][j]) ? color : "#f4f4f4") << "\"><title>"
            << esc(ra.name + "=" + ra.values[i] + ", " + ca.name + "=" + ca.values[j]) << ": " << num(v[i][j])
            << "</title></rect><text x=\"" << px(x + cell_w / 2) << "\" y=\"" << px(y + 16)
            << "\" text-anchor=\"middle\" fill=\"" << (f > 0.55 ? "#fff" : "#222") << "\">" << num(v[i][j])
            << "</text>";
      }
    }
    os_ << "</svg>\n";
    if (axes_.size() > 2) os_ << "<p class=\"subtitle\">each cell: the mean over the other axes</p>\n";
  }

  void pareto_section() {
    os_ << "<section id=\"pareto\">\n<h2>Pareto fronts</h2>\n";
    if (pareto_.empty()) os_ << "<p class=\"no-data\">no pair of objectives (give --pareto X,Y)</p>\n";
    for (const auto& [ox, oy] : pareto_) pareto_chart(ox, oy);
    os_ << "</section>\n";
  }

  void pareto_chart(const Objective& ox, const Objective& oy) {
    std::vector<std::pair<double, double>> xy;
    std::vector<const ResultStore::Row*> who;
    for (const ResultStore::Row* r : ok_) {
      const double a = cell_number(*r, ox.metric), b = cell_number(*r, oy.metric);
      if (std::isfinite(a) && std::isfinite(b)) {
        xy.emplace_back(a, b);
        who.push_back(r);
      }
    }
    const auto dir = [](const Objective& o) {
      return o.metric + (o.maximize ? " (more is better)" : " (less is better)");
    };
    os_ << "<h3>" << esc(dir(ox)) << " against " << esc(dir(oy)) << "</h3>\n";
    if (xy.empty()) {
      os_ << "<p class=\"no-data\">no point has both</p>\n";
      return;
    }
    const std::vector<std::size_t> front = pareto_front(xy, ox.maximize, oy.maximize);
    double x0 = xy[0].first, x1 = x0, y0 = xy[0].second, y1 = y0;
    for (const auto& [a, b] : xy) {
      x0 = std::min(x0, a);
      x1 = std::max(x1, a);
      y0 = std::min(y0, b);
      y1 = std::max(y1, b);
    }
    const double padx = x1 > x0 ? (x1 - x0) * 0.05 : std::max(1.0, std::fabs(x0) * 0.05),
                 pady = y1 > y0 ? (y1 - y0) * 0.05 : std::max(1.0, std::fabs(y0) * 0.05);
    const double w = o_.width, h = 340, left = 70, right = 20, top = 12, plot_h = h - top - 40;
    const Scale x{x0 - padx, x1 + padx, left, w - right, false}, y{y0 - pady, y1 + pady, top + plot_h, top, false};
    os_ << "<svg class=\"chart pareto\" id=\"pareto-" << pareto_index_++ << "\" width=\"" << px(w) << "\" height=\""
        << px(h) << "\" role=\"img\" aria-label=\"Pareto front of " << esc(ox.metric) << " and " << esc(oy.metric)
        << "\">";
    y_axis(left, top, plot_h, y, w - right);
    for (const double t : ticks(x.d0, x.d1))
      os_ << "<text x=\"" << px(x(t)) << "\" y=\"" << px(top + plot_h + 14) << "\" text-anchor=\"middle\">" << num(t)
          << "</text>";
    os_ << "<line x1=\"" << px(left) << "\" x2=\"" << px(w - right) << "\" y1=\"" << px(top + plot_h) << "\" y2=\""
        << px(top + plot_h) << "\" stroke=\"#888\"/><text x=\"" << px((left + w - right) / 2) << "\" y=\""
        << px(top + plot_h + 30) << "\" text-anchor=\"middle\" font-weight=\"bold\">" << esc(ox.metric) << "</text>";
    std::string path;
    for (const std::size_t i : front)
      path += (path.empty() ? "M" : " L") + px(x(xy[i].first)) + "," + px(y(xy[i].second));
    os_ << "<path class=\"front\" d=\"" << path << "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>";
    const std::set<std::size_t> on(front.begin(), front.end());
    for (std::size_t i = 0; i < xy.size(); ++i) {
      const std::string idx = cell_text(*who[i], "idx");
      std::string params;
      for (const AxisInfo& a : axes_)
        params += (params.empty() ? "" : ", ") + a.name + "=" + cell_text(*who[i], a.name);
      os_ << "<a href=\"#p" << esc(idx) << "\"><circle class=\"" << (on.count(i) ? "on-front" : "point") << "\" cx=\""
          << px(x(xy[i].first)) << "\" cy=\"" << px(y(xy[i].second)) << "\" r=\"" << (on.count(i) ? 5 : 3.5)
          << "\" fill=\"" << (on.count(i) ? "#d62728" : "#9aa7b8") << "\"><title>point " << esc(idx) << ": "
          << esc(params) << " | " << esc(ox.metric) << " " << num(xy[i].first) << ", " << esc(oy.metric) << " "
          << num(xy[i].second) << "</title></circle></a>";
    }
    os_ << "</svg>\n<p>" << front.size() << " of " << xy.size() << " points on the front (red; each links to its row):";
    for (const std::size_t i : front)
      os_ << " <a href=\"#p" << esc(cell_text(*who[i], "idx")) << "\">#" << esc(cell_text(*who[i], "idx")) << "</a>";
    os_ << "</p>\n";
  }

  void points_section() {
    std::vector<std::string> shown = metrics_;
    for (const auto& [a, b] : pareto_)
      for (const std::string& m : {a.metric, b.metric})
        if (std::find(shown.begin(), shown.end(), m) == shown.end()) shown.push_back(m);
    os_ << "<section id=\"points\">\n<h2>Points</h2>\n<table class=\"data\" "
           "id=\"points-table\"><tr><th>#</th><th>status</th>";
    for (const AxisInfo& a : axes_) os_ << "<th>" << esc(a.name) << "</th>";
    if (repeats_) os_ << "<th>repeat</th>";
    for (const std::string& m : shown) os_ << "<th>" << esc(m) << "</th>";
    os_ << "<th>configuration (click: its command line)</th></tr>\n";
    for (const ResultStore::Row& r : rows_) {
      const std::string idx = cell_text(r, "idx"), status = cell_text(r, "status");
      os_ << "<tr id=\"p" << esc(idx) << "\"><td>" << esc(idx) << "</td><td>" << esc(status) << "</td>";
      for (const AxisInfo& a : axes_) os_ << "<td>" << esc(cell_text(r, a.name)) << "</td>";
      if (repeats_) os_ << "<td>" << esc(cell_text(r, "repeat")) << "</td>";
      if (status == "ok") {
        for (const std::string& m : shown) {
          const double v = cell_number(r, m);
          os_ << "<td>" << (std::isfinite(v) ? num(v) : esc(cell_text(r, m))) << "</td>";
        }
      } else {
        std::string e = cell_text(r, "error");
        if (e.size() > 300) e = "..." + e.substr(e.size() - 300);
        os_ << "<td class=\"err\" colspan=\"" << shown.size() << "\">" << esc(e) << "</td>";
      }
      const std::string hash = cell_text(r, "configuration.hash");
      os_ << "<td class=\"t\"><details><summary>" << esc(hash.empty() ? "(none)" : hash)
          << "</summary><code class=\"args\">sohusim " << esc(cell_text(r, "args")) << "</code></details></td></tr>\n";
    }
    os_ << "</table>\n</section>\n";
  }

  std::ostream& os_;
  const StudyReportOptions& o_;
  std::vector<ResultStore::Row> rows_;
  std::vector<const ResultStore::Row*> ok_, bad_;
  std::string command_, name_, spec_;
  std::vector<AxisInfo> axes_, fixed_axes_;
  bool repeats_ = false;
  unsigned chart_ = 0, pareto_index_ = 0;  // ids: line-<metric index>, heat-<metric index>, pareto-<pair index>
  std::vector<std::string> metrics_;
  std::vector<std::pair<Objective, Objective>> pareto_;
};

}  // namespace

Objective parse_objective(const std::string& text) {
  Objective o;
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && (text.substr(colon + 1) == "max" || text.substr(colon + 1) == "min")) {
    o.metric = text.substr(0, colon);
    o.maximize = text.substr(colon + 1) == "max";
  } else {
    o.metric = text;
    bool more = false;
    for (const char* hint :
         {"per_s", "per_second", "tflops", "utilization", "goodput", "attainment", "per_joule", "met_slo"})
      more = more || text.find(hint) != std::string::npos;
    o.maximize = more;
  }
  if (o.metric.empty()) throw std::invalid_argument("--pareto: an empty metric name in `" + text + "`");
  return o;
}

std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& xy, bool max_x, bool max_y) {
  const auto better_or_equal = [](double a, double b, bool max) { return max ? a >= b : a <= b; };
  const auto better = [](double a, double b, bool max) { return max ? a > b : a < b; };
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < xy.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < xy.size() && !dominated; ++j) {
      dominated = better_or_equal(xy[j].first, xy[i].first, max_x) &&
                  better_or_equal(xy[j].second, xy[i].second, max_y) &&
                  (better(xy[j].first, xy[i].first, max_x) || better(xy[j].second, xy[i].second, max_y));
    }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end(), [&xy](std::size_t a, std::size_t b) { return xy[a].first < xy[b].first; });
  return front;
}

bool axis_number(const std::string& text, double& value) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && end != nullptr && *end == '\0' && std::isfinite(v)) {
    value = v;
    return true;
  }
  using D = config::Dimension;
  for (const D d :
       {D::Time, D::Frequency, D::Bytes, D::Bandwidth, D::BitRate, D::TransferRate, D::Power, D::Energy, D::Ratio}) {
    try {
      value = config::parse_quantity(text, d);
      return true;
    } catch (const std::exception&) {
    }
  }
  return false;
}

void write_study_report(std::ostream& os, const ResultStore& store, const StudyReportOptions& options) {
  Page page(os, store, options);
  page.write();
}

}  // namespace sohusim::studies
