#pragma once
// The run report as one self-contained HTML file: inline CSS and inline SVG charts drawn
// here, no script, no font, no image and no URL of any kind, so it opens anywhere offline
// and can be mailed or attached to an issue as is.
//
// Sections, each a <section id=...>; each chart an <svg class="chart" id=...> (tests and
// scripts find them by these ids):
//   summary      the run's summary values and facts, the run verdict and the share of every
//                verdict in Analysis::verdict_ns as a stacked bar (svg#verdict-share)
//   timeline     per place, the ops as rectangles coloured by verdict (or kind), the critical
//                path outlined in red and drawn again on a lane of its own, the gaps on it
//                marked; ops narrower than a pixel are merged, so the SVG stays bounded
//                (about a rectangle per pixel column and lane) whatever the op count
//                                                                (svg#timeline)
//   utilization  per place, each unit's achieved rate over peak, window by window
//                                                                (svg#utilization)
//   roofline     log-log, the HBM and SRAM roofs of each kind of device with their ridge
//                points, the ops at their HBM intensity by kind (svg#roofline)
//   stalls       per device, where the matrix engines' cycles went, 100% stacked
//                                                                (svg#stalls)
//   top-ops      ops grouped by name pattern (digit runs -> "*", so layers fall together) and
//                kind, by total time: count, total, share, mean, p50/p90/p99 of duration
//                (nearest rank), the unit on top for most of the time, the time-weighted SoL of each
//                op's top unit, the verdict holding most time (table#top-groups); then the
//                longest single ops (table#top-ops)
//   commands     command latency percentiles (table#commands); the kinds of command with
//                their work, by total time: places, count, total, mean, the busiest place's
//                percentiles, top unit, speed of light (every unit's in the cell's tooltip),
//                verdict (table#command-kinds); hosts' activity (table#hosts)
//   findings     the detectors' findings with their numbers (ol#findings-list)
// A section with nothing to show says "no data" (<p class="no-data">) instead of a chart.
// The output is deterministic: no time stamp, stable order, fixed number formatting; all
// text from the profile (names come from user configs) is escaped. Times on the axes are
// relative to RunProfile::start_ns. An Analysis shorter than the profile's ops (or naming
// ops that do not exist) is drawn as far as it goes.
#include <cstddef>
#include <ostream>
#include <string>

#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::profiler {

struct ReportOptions {
  std::string title = "sohusim run report";
  std::string subtitle;           // e.g. the profile's file name; omitted when empty
  std::size_t top_groups = 25;    // rows of the grouped ops table
  std::size_t top_ops = 20;       // rows of the single ops table
  std::size_t top_commands = 40;  // command rows with work (by total time) in the commands table
  int width = 1100;               // of the charts, CSS pixels
  bool timeline_by_kind = false;  // colour the timeline's ops by kind instead of verdict
};

void write_html_report(std::ostream& os, const RunProfile& profile, const Analysis& analysis,
                       const ReportOptions& options = {});

}  // namespace sohusim::profiler
