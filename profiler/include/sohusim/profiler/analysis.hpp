#pragma once
// Bottleneck analysis of a RunProfile, in the manner of Nsight Compute's speed of light and
// guided rules, VTune's top-down buckets and a critical-path view of the dependency graph.
//
// Speed of light (SoL): for each op and each resource it used, achieved rate = work /
// duration over the peak of the op's place, as a fraction. The same for each kind of
// command with measured work (CommandStat::work): its work over its commands' summed
// execution time (count x mean), so a kind whose commands ran side by side on several
// queues is measured against each command's own time, as Nsight Compute measures a kernel.
// Kinds gather a name's rows over places (CommandKind).
//
// Roofline at HBM and SRAM: arithmetic intensity = FLOP / bytes, ridge = compute peak /
// bandwidth peak, attainable = min(compute peak, intensity x bandwidth), achieved = FLOP /
// duration.
//
// Verdict of an op: the resource with the highest SoL names it (compute, vector ->
// compute-bound; HBM or SRAM -> memory-bound (HBM-bound); PCIe either way -> PCIe-bound;
// chip-to-chip or network -> interconnect-bound) when that SoL reaches
// `bound_threshold`; below it no unit is near its peak and the op's time goes to fixed
// latencies (command fetch, pipeline fill, synchronisation): latency/launch-bound.
//
// Critical path: walked back from the op that ends last, each step to the op it waited
// for — among its dependencies and the previous op on its place, the one that ended last.
// The time between that op's end and this op's start is a gap: a bubble inside a launch,
// a launch gap between launches. Gaps are host-bound when the host that launched was busy
// for at least `host_busy_threshold` of the run (it could not launch sooner), else
// latency/launch-bound. The run's verdict is the one holding most critical-path time; every
// verdict's share is reported (they sum to 1). A critical op of kind "step" (a whole step
// with no per-op breakdown) counts as the broken-down ops of its phase divide: each verdict
// its share of their span, the gaps between them latency/launch.
//
// Detectors (Finding::detector) and the facts they read (RunProfile::facts, per place):
//   pcie_saturation     a window whose PCIe rate in a direction is >= `saturation` of peak
//   pcie_small_payload  pcie_<dir>_avg_payload_bytes < `small_payload` x pcie_mps_bytes on a
//                       direction used at >= `small_payload_min_sol` of its peak
//   hbm_row_miss        hbm_row_hit_rate < `row_hit_floor` on a device moving
//                       >= `busy_floor` of its HBM peak over the run
//   sram_bank_conflicts sram_bank_conflicts / sram_accesses >= `conflict_ceiling`
//   bubble              a gap >= `gap_ns` between dependent ops of one launch (critical path)
//   launch_gap          a gap >= `gap_ns` between launches on the critical path
//   idle_device         a window in which a device had a command in flight for less than
//                       `idle_floor` of it while another device had one for more than
//                       `busy_floor` (Window::busy; without it, compute and HBM SoL stand in,
//                       which read in lumps when counts land as long commands end)
// Each finding names the place, the time span and its numbers; findings are sorted by the
// time they cost (the gap or the window), largest first.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sohusim/profiler/profile.hpp"

namespace sohusim::profiler {

enum class Verdict : std::uint8_t { Compute, Hbm, Pcie, Interconnect, Latency, Host };
constexpr unsigned kVerdicts = static_cast<unsigned>(Verdict::Host) + 1;
const char* verdict_name(Verdict v);  // "compute-bound", "HBM-bound", "PCIe-bound", ...
/// The verdict a resource's saturation gives.
Verdict verdict_of(Resource r);

struct AnalysisOptions {
  double bound_threshold = 0.4;      // SoL from which an op is bound by that unit
  double host_busy_threshold = 0.5;  // host CPU busy fraction from which gaps are host-bound
  double gap_ns = 1000;              // smallest gap reported as a bubble / launch gap
  double saturation = 0.9;
  double small_payload = 0.5;
  double small_payload_min_sol = 0.01;  // a link this idle loses no time to small payloads
  double row_hit_floor = 0.5;
  double conflict_ceiling = 0.1;
  double idle_floor = 0.05;
  double busy_floor = 0.3;
  std::size_t max_findings_per_detector = 20;
};

struct Roofline {
  double intensity_hbm = 0, intensity_sram = 0;  // FLOP per byte (0: no bytes)
  double ridge_hbm = 0, ridge_sram = 0;          // FLOP per byte at which compute and bandwidth meet
  double attainable = 0;                         // FLOP/s the roofs allow at this op's intensities
  double achieved = 0;                           // FLOP/s
};

struct OpAnalysis {
  std::uint32_t op = 0;
  double sol[kResources] = {};  // fraction of peak per resource (0 for unused)
  Resource top = Resource::Compute;
  double top_sol = 0;
  Roofline roofline;
  Verdict verdict = Verdict::Latency;
  bool critical = false;  // on the critical path
};

/// One CommandStat row with work: its speed of light and verdict (the op's rule).
struct CommandAnalysis {
  std::uint32_t row = 0;        // index in RunProfile::commands
  double sol[kResources] = {};  // fraction of peak per resource (0 for unused)
  Resource top = Resource::Compute;
  double top_sol = 0;
  Verdict verdict = Verdict::Latency;
};

/// The rows of one kind of command (same name) on every place that ran it: a tensor-parallel
/// group runs the same shapes on each device. Speed of light weighted by each row's time.
struct CommandKind {
  std::string name;
  std::vector<std::uint32_t> rows;  // RunProfile::commands indices, in profile order
  double count = 0, total_ns = 0;   // summed over the rows
  double sol[kResources] = {};
  Resource top = Resource::Compute;
  double top_sol = 0;
  Verdict verdict = Verdict::Latency;
};

struct Gap {
  std::uint32_t before = 0, after = 0;  // op ids
  double start_ns = 0, end_ns = 0;
  bool launch = false;                 // between launches (else a bubble inside one)
  Verdict verdict = Verdict::Latency;  // Latency or Host
};

struct Finding {
  std::string detector;  // see above
  std::string place;
  double start_ns = 0, end_ns = 0;
  double cost_ns = 0;   // the time it stands for (for sorting)
  std::string message;  // one sentence with the numbers
  std::map<std::string, double> numbers;
};

struct PlaceSummary {
  std::string place;
  double sol[kResources] = {};  // run-average achieved / peak
  StallBuckets stalls;          // summed over the windows
};

struct Analysis {
  std::vector<OpAnalysis> ops;               // one per RunProfile::ops, same order
  std::vector<CommandAnalysis> commands;     // one per RunProfile::commands row with work, in row order
  std::vector<CommandKind> kinds;            // the same by name over places, most total time first
  std::vector<std::uint32_t> critical_path;  // op ids, first to last
  std::vector<Gap> gaps;                     // on the critical path, in time order
  double critical_ns = 0;                    // first critical op's start to the last one's end
  double verdict_ns[kVerdicts] = {};         // critical-path time per verdict (ops + gaps)
  Verdict run_verdict = Verdict::Latency;
  std::vector<PlaceSummary> places;
  std::vector<Finding> findings;
  double verdict_share(Verdict v) const;
};

/// Where a kind of command ran, for a table cell: "dev0", "dev0, dev1", "dev0 .. dev7 (8 places)".
std::string kind_places(const RunProfile& profile, const CommandKind& kind);

/// Throws ProfileError when the profile does not validate.
Analysis analyze(const RunProfile& profile, const AnalysisOptions& options = {});

}  // namespace sohusim::profiler
