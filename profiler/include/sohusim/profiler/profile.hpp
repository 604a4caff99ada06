#pragma once
// RunProfile: what the profiler keeps of one run, as one self-describing document — the
// units of the system with their peaks, the ops with their time and the work they did on
// each unit, the dependencies between ops, per-device time windows (each unit's achieved
// rate, the matrix engines' cycle buckets), command latency percentiles, the host's
// launch activity, and the run's summary. `sohusim run --profile FILE` writes it as JSON;
// `sohusim report FILE` reads it back, analyses it (analysis.hpp) and renders the report
// (report_html.hpp, profile_export.hpp). Plain C++17: it knows nothing of SystemC or of the
// models that produced it, so a tool can build one from any source (tests build them by
// hand).
//
// Times are nanoseconds of the run's reference clock (host 0's aligned time; in simulation
// the ground truth). Work is in the unit's own quantity: FLOP for compute, bytes for memory
// and links, nanoseconds of CPU for hosts.
//
// JSON (field names are the members' below; work and rate are objects keyed by
// resource_name(), absent = 0):
//   {"format": "sohusim-profile", "version": 1, "start_ns", "end_ns",
//    "summary": {key: number | string},
//    "units":    [{"place", "resource", "peak"}],
//    "ops":      [{"id", "name", "kind", "phase", "place", "layer", "launch", "start_ns",
//                  "duration_ns", "work": {"compute": F, "hbm": B, ...}, "padded_flops",
//                  "deps": [id...]}],
//    "windows":  [{"place", "start_ns", "end_ns", "busy", "rate": {resource: per_s},
//                  "stalls": {"busy_useful", "busy_padding", "busy_overhead", "wait_sram", "wait_hbm",
//                             "wait_pcie", "wait_dependency", "idle"}}],
//    "commands": [{"place", "name", "count", "mean", "p50", "p90", "p99", "max",
//                  "work": {resource: amount}}],
//    "hosts":    [{"place", "busy_ns", "api_calls", "commands", "wait_ns"}],
//    "facts":    {place: {key: number}},
//    "serving":  a serving run's requests and occupancy (serving_profile.hpp; optional)}
// read_profile() checks
// the format tag, the version and every field, and throws ProfileError naming the file, the
// JSON path (e.g. `ops[12].duration_ns`) and what was wrong: a truncated file, another
// program's JSON or a trace given by mistake get a clear message, never a crash.
#include <cstdint>
#include <istream>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sohusim/profiler/serving_profile.hpp"

namespace sohusim::profiler {

class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The kind of resource a unit is. The verdicts (analysis.hpp) are named after them.
enum class Resource : std::uint8_t {
  Compute,  // matrix engines at the run's data type (FLOP/s)
  Vector,   // vector engines (FLOP/s)
  Hbm,      // device memory (B/s, read + write)
  Sram,     // on-chip scratchpad (B/s)
  PcieH2d,  // PCIe, host to device (B/s of payload)
  PcieD2h,  // PCIe, device to host
  Link,     // chip-to-chip links of a device, all ports together (B/s)
  Network,  // host network (B/s)
  Host,     // a host's CPU (busy fraction: peak 1 ns per ns)
};
const char* resource_name(Resource r);              // "compute", "hbm", "pcie_h2d", ...
Resource resource_from_name(const std::string& s);  // throws ProfileError
constexpr unsigned kResources = static_cast<unsigned>(Resource::Host) + 1;

/// One resource of one place (a device or a host) and its peak rate.
struct Unit {
  std::string place;  // "dev0", "host0"
  Resource resource = Resource::Compute;
  double peak = 0;  // per second, > 0
  std::string name() const { return place + "." + resource_name(resource); }
};

/// Where the matrix engines' cycles went over an interval, in engine-cycles. The buckets
/// are disjoint and sum to the engines' cycles in the interval (engines x cycles).
struct StallBuckets {
  double busy_useful = 0;      // MACs that counted, at the array's peak rate
  double busy_padding = 0;     // MACs spent on padding of edge folds, at the peak rate
  double busy_overhead = 0;    // busy beyond its MACs: pipeline fill and drain, weight loads,
                               // lane work (an attention's softmax)
  double wait_sram = 0;        // SRAM operand reads outlasting compute, result stores draining
  double wait_hbm = 0;         // operands not yet in from HBM
  double wait_pcie = 0;        // operands from the host (engines never read the host here: 0)
  double wait_dependency = 0;  // a semaphore, a fence, another engine's result
  double idle = 0;             // no work
  double total() const {
    return busy_useful + busy_padding + busy_overhead + wait_sram + wait_hbm + wait_pcie + wait_dependency + idle;
  }
  StallBuckets& operator+=(const StallBuckets& o) {
    busy_useful += o.busy_useful;
    busy_padding += o.busy_padding;
    busy_overhead += o.busy_overhead;
    wait_sram += o.wait_sram;
    wait_hbm += o.wait_hbm;
    wait_pcie += o.wait_pcie;
    wait_dependency += o.wait_dependency;
    idle += o.idle;
    return *this;
  }
};

/// One operator (or one activity: a weight upload, a copy) as it ran on one place.
struct OpRecord {
  std::uint32_t id = 0;      // index in RunProfile::ops
  std::string name;          // "decode.L3.mlp.down_proj"
  std::string kind;          // "gemm", "attention", "norm", "all_reduce", "upload", ...
  std::string phase;         // "prefill", "decode", "load", ...
  std::string place;         // where it ran: "dev0"
  int layer = -1;            // transformer layer, -1 for none
  std::uint64_t launch = 0;  // the launch (program, copy) it belongs to: gaps between
                             // launches are launch gaps, inside one they are bubbles
  double start_ns = 0, duration_ns = 0;
  /// Work per resource, in the resource's quantity. Compute work is useful FLOP; padded_flops
  /// adds what the arrays did on padding of edge folds (0 when unknown).
  double work[kResources] = {};
  double padded_flops = 0;
  std::vector<std::uint32_t> deps;  // ids of ops whose output this op reads (earlier ops)
  StallBuckets stalls;              // the matrix engines' cycles over the op; all 0 when not measured
  double end_ns() const { return start_ns + duration_ns; }
};

/// One time window of one place: each unit's achieved rate and the engines' buckets.
struct Window {
  std::string place;
  double start_ns = 0, end_ns = 0;
  double rate[kResources] = {};  // achieved per second; the place's units only
  StallBuckets stalls;           // devices only
  double busy = -1;              // devices: fraction of the window with a command in flight; < 0 unknown
};

/// Latency of one command class on one device (from its distributions), ns, and — for the
/// classes that move or compute data — the work its commands did, summed over them (the
/// analysis gives the class its speed of light: work / (count x mean) / peak).
struct CommandStat {
  std::string place, name;  // "dev0", "submit_to_start" / "start_to_complete" / an opcode
  double count = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double work[kResources] = {};  // in each resource's quantity; all 0 when not measured
  bool has_work() const {
    for (double w : work) {
      if (w > 0) return true;
    }
    return false;
  }
};

/// A row from its commands' durations (ns, any order): count, mean, p50 / p90 / p99
/// interpolated between the closest ranks, max; all 0 for no durations.
CommandStat command_stat(std::string place, std::string name, std::vector<double> durations_ns);

/// A host's launch activity: how long its API calls and driver took, and the gaps it left.
struct HostActivity {
  std::string place;     // "host0"
  double busy_ns = 0;    // CPU time spent in the runtime and driver (host cost table)
  double api_calls = 0;  // runtime API calls
  double commands = 0;   // commands submitted
  double wait_ns = 0;    // time blocked waiting for the devices
};

struct RunProfile {
  static constexpr int kVersion = 1;
  /// Free-form facts of the run (model, system, dtype, TTFT...), numbers and strings.
  std::map<std::string, std::string> summary_text;
  std::map<std::string, double> summary;
  /// What the run was configured with (system, arch, hbm, sets, version, commit, hash...),
  /// as the producer records it; values as text.
  std::map<std::string, std::string> configuration;
  double start_ns = 0, end_ns = 0;  // the profiled span
  std::vector<Unit> units;
  std::vector<OpRecord> ops;  // ascending start per place
  std::vector<Window> windows;
  std::vector<CommandStat> commands;
  std::vector<HostActivity> hosts;
  /// Per-place facts the detectors read, by documented key (analysis.hpp): e.g.
  /// "dev0" -> {"pcie_mps_bytes": 256, "pcie_h2d_avg_payload_bytes": 64, "hbm_row_hit_rate": 0.4}.
  std::map<std::string, std::map<std::string, double>> facts;
  /// A serving run's requests and occupancy (empty for a single request).
  ServingProfile serving;

  /// The unit of `place` and `resource`, or nullptr.
  const Unit* unit(const std::string& place, Resource r) const;
  /// Throws ProfileError for what a producer got wrong: an op whose dep is not an earlier
  /// op, a negative duration, a unit with peak <= 0, an op on a place with no units, negative
  /// work (of an op or a command row).
  void validate() const;
};

/// The configuration in one line for a report header: "sohu-8 (8 devices) · arch sohu · HBM
/// hbm3e-8000 x 6 · set k=v, ... · sohusim 0.1.0 (commit) · config <hash>"; "" when none.
std::string configuration_line(const RunProfile& p);

void write_profile(std::ostream& os, const RunProfile& p);
/// `source` names the input in errors (a file name).
RunProfile read_profile(std::istream& is, const std::string& source);
RunProfile read_profile_file(const std::string& path);

}  // namespace sohusim::profiler
