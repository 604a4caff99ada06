#include "report_serving.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report_common.hpp"

namespace sohusim::profiler::report_detail {

namespace {

std::string px(double v) {
  return strf("%.1f", v);
}

// Percentile with linear interpolation between the closest ranks (sorted input).
double at(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

struct Series {
  const char* name;
  std::vector<double> sorted_s;  // the completed requests' values, ascending
  double slo_s;
};

// One CDF panel: x from 0 to the largest value, y the share of requests at or below.
void cdf_panel(std::ostream& os, const Series& s, double x0, double y0, double w, double h) {
  const double xmax = std::max({s.sorted_s.empty() ? 0.0 : s.sorted_s.back(), s.slo_s, 1e-9}) * 1.05;
  auto X = [&](double v) { return x0 + v / xmax * w; };
  auto Y = [&](double frac) { return y0 + h - frac * h; };
  os << "<g class=\"cdf\" data-metric=\"" << s.name << "\"><text x=\"" << px(x0) << "\" y=\"" << px(y0 - 6)
     << "\" font-weight=\"bold\">" << s.name << " (CDF over completed requests)</text>";
  for (int pc : {0, 50, 90, 100}) {
    os << "<line x1=\"" << px(x0) << "\" y1=\"" << px(Y(pc / 100.0)) << "\" x2=\"" << px(x0 + w) << "\" y2=\""
       << px(Y(pc / 100.0)) << "\" stroke=\"" << (pc == 0 ? "#555" : "#ddd") << "\"/><text x=\"" << px(x0 - 4)
       << "\" y=\"" << px(Y(pc / 100.0) + 4) << "\" text-anchor=\"end\">" << pc << "%</text>";
  }
  for (int i = 0; i <= 4; ++i) {
    const double v = xmax * i / 4;
    os << "<text x=\"" << px(X(v)) << "\" y=\"" << px(y0 + h + 14) << "\" text-anchor=\"middle\">" << dur(v * 1e9)
       << "</text>";
  }
  if (!s.sorted_s.empty()) {
    os << "<polyline class=\"cdf-line\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" points=\"" << px(X(0))
       << ',' << px(Y(0));
    const double n = static_cast<double>(s.sorted_s.size());
    for (std::size_t i = 0; i < s.sorted_s.size(); ++i) {
      os << ' ' << px(X(s.sorted_s[i])) << ',' << px(Y(static_cast<double>(i) / n)) << ' ' << px(X(s.sorted_s[i]))
         << ',' << px(Y(static_cast<double>(i + 1) / n));
    }
    os << "\"/>";
  }
  if (s.slo_s > 0) {
    os << "<line class=\"slo\" x1=\"" << px(X(s.slo_s)) << "\" y1=\"" << px(y0) << "\" x2=\"" << px(X(s.slo_s))
       << "\" y2=\"" << px(y0 + h) << "\" stroke=\"" << kCriticalColor << "\" stroke-dasharray=\"4 3\"/><text x=\""
       << px(X(s.slo_s) + 4) << "\" y=\"" << px(y0 + 12) << "\" fill=\"" << kCriticalColor << "\">SLO "
       << dur(s.slo_s * 1e9) << "</text>";
  }
  os << "</g>\n";
}

// One panel over time: `values` at `times` (seconds), drawn as steps, y from 0 to ymax.
void time_panel(std::ostream& os, const char* title, const char* cls, const std::vector<double>& times,
                const std::vector<double>& values, double t_end, double ymax, const std::string& ymax_label,
                const char* color, double x0, double y0, double w, double h) {
  auto X = [&](double t) { return x0 + (t_end > 0 ? t / t_end : 0) * w; };
  auto Y = [&](double v) { return y0 + h - (ymax > 0 ? std::min(v / ymax, 1.0) : 0) * h; };
  os << "<g class=\"" << cls << "\"><text x=\"" << px(x0) << "\" y=\"" << px(y0 - 6) << "\" font-weight=\"bold\">"
     << title << "</text>";
  os << "<line x1=\"" << px(x0) << "\" y1=\"" << px(y0 + h) << "\" x2=\"" << px(x0 + w) << "\" y2=\"" << px(y0 + h)
     << "\" stroke=\"#555\"/><line x1=\"" << px(x0) << "\" y1=\"" << px(y0) << "\" x2=\"" << px(x0 + w) << "\" y2=\""
     << px(y0) << "\" stroke=\"#ddd\"/><text x=\"" << px(x0 - 4) << "\" y=\"" << px(y0 + 4) << "\" text-anchor=\"end\">"
     << ymax_label << "</text><text x=\"" << px(x0 - 4) << "\" y=\"" << px(y0 + h + 4)
     << "\" text-anchor=\"end\">0</text>";
  for (int i = 0; i <= 4; ++i) {
    const double t = t_end * i / 4;
    os << "<text x=\"" << px(X(t)) << "\" y=\"" << px(y0 + h + 14) << "\" text-anchor=\"middle\">" << dur(t * 1e9)
       << "</text>";
  }
  if (!times.empty()) {
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"" << px(X(0)) << ','
       << px(Y(0));
    double prev = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      os << ' ' << px(X(times[i])) << ',' << px(Y(prev)) << ' ' << px(X(times[i])) << ',' << px(Y(values[i]));
      prev = values[i];
    }
    os << "\"/>";
  }
  os << "</g>\n";
}

}  // namespace

void write_serving_section(std::ostream& os, const ServingProfile& s, int width) {
  os << "<section id=\"serving-section\">\n<h2>Serving</h2>\n";
  std::size_t completed = 0, rejected = 0, unfinished = 0, met = 0;
  unsigned preemptions = 0;
  std::vector<double> ttft, tpot, e2e, queueing;
  for (const ServingRequestRecord& r : s.requests) {
    preemptions += r.preemptions;
    if (r.status == "rejected") {
      ++rejected;
      continue;
    }
    if (r.status != "completed") {
      ++unfinished;
      continue;
    }
    ++completed;
    if (r.ttft_s >= 0) ttft.push_back(r.ttft_s);
    if (r.tpot_s >= 0) tpot.push_back(r.tpot_s);
    if (r.e2e_s >= 0) e2e.push_back(r.e2e_s);
    if (r.queueing_s >= 0) queueing.push_back(r.queueing_s);
    const bool ok_ttft = s.slo_ttft_s <= 0 || (r.ttft_s >= 0 && r.ttft_s <= s.slo_ttft_s);
    const bool ok_tpot = s.slo_tpot_s <= 0 || r.tpot_s < 0 || r.tpot_s <= s.slo_tpot_s;
    met += ok_ttft && ok_tpot ? 1 : 0;
  }
  for (auto* v : {&ttft, &tpot, &e2e, &queueing}) std::sort(v->begin(), v->end());
  const double t_end = s.samples.empty() ? 0 : s.samples.back().t_s;
  const double out_tokens = s.samples.empty() ? 0 : s.samples.back().output_tokens;

  os << "<p id=\"serving-outcome\">" << s.requests.size() << " requests: " << completed << " completed, " << rejected
     << " rejected, " << unfinished << " unfinished; " << preemptions << " preemptions. ";
  if (t_end > 0) os << "Output " << si(out_tokens / t_end, "tokens/s") << " over " << dur(t_end * 1e9) << ". ";
  if (s.slo_ttft_s > 0 || s.slo_tpot_s > 0) {
    os << "SLO (TTFT &le; " << (s.slo_ttft_s > 0 ? dur(s.slo_ttft_s * 1e9) : std::string("any")) << ", TPOT &le; "
       << (s.slo_tpot_s > 0 ? dur(s.slo_tpot_s * 1e9) : std::string("any")) << "): <b>" << met << " of " << completed
       << "</b> met (" << pct(completed > 0 ? static_cast<double>(met) / static_cast<double>(completed) : 0) << ")";
    if (t_end > 0) os << ", goodput " << num(static_cast<double>(met) / t_end) << " requests/s";
    os << ".";
  }
  os << "</p>\n<table class=\"data\" id=\"serving-latency\">\n<tr><th>latency</th><th>p50</th><th>p90</th><th>p99"
        "</th><th>max</th></tr>\n";
  const std::pair<const char*, const std::vector<double>*> rows[] = {
      {"TTFT", &ttft}, {"TPOT", &tpot}, {"end to end", &e2e}, {"queueing", &queueing}};
  for (const auto& [name, v] : rows) {
    os << "<tr><td class=\"t\">" << name << "</td>";
    for (double p : {0.5, 0.9, 0.99, 1.0}) os << "<td>" << (v->empty() ? "—" : dur(at(*v, p) * 1e9)) << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";

  // The CDFs side by side.
  const double gap = 80, left = 70, h = 150;
  const double pw = (width - 2 * left - gap) / 2;
  os << "<svg class=\"chart\" id=\"serving-cdf\" width=\"" << width << "\" height=\"" << px(h + 50)
     << "\" viewBox=\"0 0 " << width << ' ' << px(h + 50)
     << "\" role=\"img\" aria-label=\"cumulative distributions of TTFT and TPOT\">\n";
  cdf_panel(os, Series{"TTFT", ttft, s.slo_ttft_s}, left, 20, pw, h);
  cdf_panel(os, Series{"TPOT", tpot, s.slo_tpot_s}, left + pw + gap, 20, pw, h);
  os << "</svg>\n";

  // Over time: output tokens per second (binned) and the KV cache's occupancy.
  std::vector<double> tt, rate, kv_t, kv;
  if (t_end > 0) {
    const int bins = 60;
    const double bw = t_end / bins;
    std::size_t i = 0;
    double before = 0;
    for (int b = 1; b <= bins; ++b) {
      const double edge = bw * b;
      double upto = before;
      while (i < s.samples.size() && s.samples[i].t_s <= edge + 1e-15) upto = s.samples[i++].output_tokens;
      tt.push_back(edge);
      rate.push_back((upto - before) / bw);
      before = upto;
    }
  }
  double rate_max = 0;
  for (double r : rate) rate_max = std::max(rate_max, r);
  for (const ServingSample& x : s.samples) {
    kv_t.push_back(x.t_s);
    kv.push_back(s.kv_blocks > 0 ? x.kv_blocks / s.kv_blocks : 0);
  }
  const double tw = width - 2 * left;
  os << "<svg class=\"chart\" id=\"serving-time\" width=\"" << width << "\" height=\"" << px(2 * h + 90)
     << "\" viewBox=\"0 0 " << width << ' ' << px(2 * h + 90)
     << "\" role=\"img\" aria-label=\"output tokens per second and KV occupancy over time\">\n";
  time_panel(os, "output tokens/s", "serving-throughput", tt, rate, t_end, rate_max, si(rate_max, "/s"), "#59a14f",
             left, 20, tw, h);
  // Occupancy on a scale up to its peak (a cache the size of HBM may stay nearly empty).
  double kv_peak = 0;
  for (double v : kv) kv_peak = std::max(kv_peak, v);
  const double kv_top = kv_peak > 0 ? std::min(1.0, kv_peak * 1.25) : 1.0;
  time_panel(os, "KV cache occupancy (share of blocks in use)", "serving-kv", kv_t, kv, t_end, kv_top, pct(kv_top),
             "#f28e2b", left, h + 70, tw, h);
  os << "</svg>\n</section>\n";
}

}  // namespace sohusim::profiler::report_detail
