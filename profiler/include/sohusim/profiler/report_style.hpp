#pragma once
// The look of sohusim's HTML pages (the profiler's report, the study report): one stylesheet,
// so that every page reads alike. Pages put it in their <style> element.
#include <string>

namespace sohusim::profiler {

/// The CSS rules (no <style> element) for a page whose content is `content_width_px` wide:
/// body and headings, .subtitle, table.data (t-cells left-aligned), svg.chart, .no-data, nav.
std::string report_stylesheet(int content_width_px);

}  // namespace sohusim::profiler
