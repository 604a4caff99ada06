// The core parameters: simulation control, clock domains, trace and statistics output.
#include "sohusim/sim/core_schema.hpp"

#include "sohusim/config/config.hpp"

namespace sohusim::sim {

config::Schema core_schema() {
  config::Schema schema;

  schema.section("sim", "simulation control")
      .uinteger("seed", 1, "seed of every random stream; the same seed gives the same run")
      .enumeration("fidelity", "fast", {"detailed", "fast"},
                   "detailed: HBM commands, PCIe TLPs, systolic folds; fast: calibrated transfer-level timing")
      .enumeration("data_mode", "timing", {"timing", "functional"},
                   "timing: no data moves; functional: real bytes through sparse backing stores")
      // 1 h is far beyond any useful run; the cap catches a typo like "1000000 s".
      .quantity("stop_time", config::Dimension::Time, "1 s", "1 ns", "3600 s",
                "simulated-time limit; a run that reaches it stops as hung");

  // Sohu's clocks are not public: these defaults are assumptions, to be swept.
  schema.section("sim.clocks", "clock domains by name; frequencies are assumptions")
      .quantity("*", config::Dimension::Frequency, "", "1 MHz", "10 GHz", "frequency of a clock domain")
      .entry("host", "3 GHz", "host CPU clock (assumption)")
      .entry("engine", "1.5 GHz", "matrix/vector engine clock (assumption)")
      .entry("hbm", "1.6 GHz", "HBM controller clock (assumption)")
      .entry("link", "1 GHz", "PCIe and chip-to-chip link layer clock (assumption)");

  schema.section("trace", "timeline trace output")
      .string("file", "", "trace file to write; empty: no trace")
      .enumeration("format", "auto", {"auto", "perfetto", "json"},
                   "perfetto: protobuf; json: Chrome trace JSON; auto: from the file extension")
      .strings("categories", {"all"},
               "kinds of module that record trace events (generator, stats, ...); \"all\" records every one")
      .enumeration("detail", "full", {"full", "summary"},
                   "full: every event; summary: for long runs (a whole 70B request), counter tracks binned at "
                   "100 us and no per-transfer PCIe slices, so the trace stays a few tens of MB");

  schema.section("stats", "statistics output")
      .string("file", "", "statistics file to write; empty: no file")
      .enumeration("format", "json", {"json", "csv"}, "statistics file format")
      .quantity("sample_interval", config::Dimension::Time, "0 s", "0 s", "1 s",
                "period of sampled statistics over time; 0 s: end-of-run values only");
  // A period of a few picoseconds is in range but would take a sample per simulated event and
  // more: a run that never ends. Sampling is for curves over time, not for every cycle.
  schema.add_check([](const config::Config& c, std::vector<config::ConfigDiagnostic>& out) {
    const double s = c.get_quantity("stats.sample_interval");
    if (s > 0 && s < 1e-9)
      out.push_back(c.diagnose("stats.sample_interval", "a period below 1 ns samples faster than anything changes",
                               "0 s (none), or 1 ns .. 1 s"));
  });

  return schema;
}

}  // namespace sohusim::sim
