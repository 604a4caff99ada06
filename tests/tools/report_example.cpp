// Writes the report outputs of the hand-built example run
// (tests/profiler/example_profile_support.hpp) into a folder, for render_report.py to open in
// a browser and lay out with Graphviz:
//   report_example DIR
// DIR/report.html, DIR/graph.dot, DIR/ops.csv: a small run (2 devices, 4 layers);
// DIR/report_big.html, DIR/graph_big.dot: a big one (8 devices, 80 layers, thousands of ops),
// to check that the outputs stay bounded and quick to render.
#include <fstream>
#include <iostream>
#include <string>

#include "profiler/example_profile_support.hpp"
#include "sohusim/profiler/profile_export.hpp"
#include "sohusim/profiler/report_html.hpp"

namespace {

template <typename Fn>
bool write(const std::string& path, const Fn& fn) {
  std::ofstream f(path, std::ios::binary);
  fn(f);
  f.close();
  if (!f) {
    std::cerr << "report_example: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sohusim::profiler;
  if (argc != 2) {
    std::cerr << "usage: report_example DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  const test::ExampleRun small = test::example_run(4, 2);
  const test::ExampleRun big = test::example_run(80, 8);
  ReportOptions o;
  o.title = "sohusim report: example run";
  o.subtitle = "hand-built profile (tests/profiler/example_profile_support.hpp)";
  bool ok =
      write(dir + "/report.html", [&](std::ostream& os) { write_html_report(os, small.profile, small.analysis, o); }) &&
      write(dir + "/graph.dot", [&](std::ostream& os) { write_dot(os, small.profile, small.analysis); }) &&
      write(dir + "/ops.csv", [&](std::ostream& os) { write_op_csv(os, small.profile, small.analysis); }) &&
      write(dir + "/report_big.html", [&](std::ostream& os) { write_html_report(os, big.profile, big.analysis, o); }) &&
      write(dir + "/graph_big.dot", [&](std::ostream& os) { write_dot(os, big.profile, big.analysis); });
  return ok ? 0 : 1;
}
