#pragma once
// The report's serving section (report_html.cpp calls it when the profile has a serving
// run): the requests' outcome and latency percentiles with the SLO, the CDFs of TTFT and
// TPOT with the targets marked, and over time the output tokens per second and the KV
// cache's occupancy. Internal to profiler/src.
#include <ostream>

#include "sohusim/profiler/serving_profile.hpp"

namespace sohusim::profiler::report_detail {

void write_serving_section(std::ostream& os, const ServingProfile& s, int width);

}  // namespace sohusim::profiler::report_detail
