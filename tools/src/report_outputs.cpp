#include "report_outputs.hpp"

#include <fstream>

#include "cli.hpp"
#include "sohusim/profiler/profile_export.hpp"
#include "sohusim/profiler/report_html.hpp"

namespace sohusim::tools {

namespace {

template <class Write>
void write_file(const std::string& path, const char* what, Write&& write) {
  if (path.empty()) return;
  std::ofstream os(path, std::ios::binary);
  if (!os) throw UsageError(std::string(what) + ": cannot write `" + path + "`");
  write(os);
  os.flush();
  if (!os) throw UsageError(std::string(what) + ": writing `" + path + "` failed");
}

}  // namespace

void write_report(const profiler::RunProfile& profile, const profiler::Analysis& analysis, const std::string& html,
                  const std::string& dot, const std::string& csv, const std::string& subtitle) {
  write_file(html, "report", [&](std::ostream& os) {
    profiler::ReportOptions ro;
    ro.subtitle = subtitle;
    profiler::write_html_report(os, profile, analysis, ro);
  });
  write_file(dot, "--dot", [&](std::ostream& os) { profiler::write_dot(os, profile, analysis); });
  write_file(csv, "--csv", [&](std::ostream& os) { profiler::write_op_csv(os, profile, analysis); });
}

}  // namespace sohusim::tools
