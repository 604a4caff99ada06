#pragma once
// The study report: a sweep's results as one self-contained HTML page (the profiler report's
// style, inline SVG, no script, no network) — what the study varied, each metric over the
// axes (a line chart over the first numeric axis, one line per combination of the others; a
// heat map over the first two axes), Pareto fronts on chosen pairs of metrics, and a table of
// every point whose rows the charts link to (#p<index>: its parameters, metrics, status or
// error, configuration hash and command line). Chart ids: line-<i> and heat-<i> for the i-th
// metric, pareto-<j> for the j-th pair.
//
//   studies::ResultStore db("out/results.sqlite");
//   studies::StudyReportOptions o;  o.pareto = {{"output_tokens_per_second", true}, {"average_watts", false}};
//   std::ofstream html("study.html");  studies::write_study_report(html, db, o);
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sohusim/studies/result_store.hpp"

namespace sohusim::studies {

/// A metric and whether more is better.
struct Objective {
  std::string metric;
  bool maximize = true;
};

struct StudyReportOptions {
  std::string title;                                    // "" = the study's name
  std::vector<std::string> metrics;                     // charted metrics; empty = the command's usual ones present
  std::vector<std::pair<Objective, Objective>> pareto;  // empty = the command's usual pair
  int width = 1100;                                     // content width, px
};

/// "name[:max|:min]": the direction given, else guessed from the name (rates, throughputs,
/// utilizations, attainment and per-joule figures are maximized; the rest minimized).
Objective parse_objective(const std::string& text);

/// The points that no other point beats on both objectives (ties kept), as indices into
/// `xy`, sorted by x.
std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& xy, bool max_x, bool max_y);

/// A number read from an axis value: a plain number, or a quantity with a unit ("400 GB/s",
/// "1.5 GHz", "80 %") in its SI base unit. False when it is neither.
bool axis_number(const std::string& text, double& value);

/// Writes the page. Throws std::invalid_argument for a metric or objective the results do not have.
void write_study_report(std::ostream& os, const ResultStore& store, const StudyReportOptions& options);

}  // namespace sohusim::studies
