#pragma once
// Simulator: the embedding API. Build a system (from a system file or preset name, with
// key=value overrides), run a host program on it, read the statistics, write the trace.
//
//   sohusim::platform::SimulatorOptions opt;
//   opt.system = "sohu-1";                      // configs/systems/sohu-1.yaml, or a path
//   sohusim::platform::Simulator sim(opt);
//   sim.run([](sohusim::platform::HostContext& host) {
//     sohusim::driver::Runtime& rt = host.runtime();   // probed and enabled on first use
//     auto s = rt.create_stream(0);
//     ...
//     rt.synchronize();
//   });
//   double dev_busy = sim.stats().value("dev0.me0.active_cycles");
//
// run() calls the program once per host, each in that host's own simulated thread,
// and returns when all have returned (or throws SimulationError with the first failure,
// after the statistics and the trace so far are kept). It may be called again: time goes
// on from where the last run stopped. SystemC allows one simulator per process.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/sampler.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/driver/device_access.hpp"
#include "sohusim/driver/runtime.hpp"
#include "sohusim/platform/profiling/clock_ping.hpp"
#include "sohusim/platform/run_configuration.hpp"

namespace sohusim::platform {

class System;
class ProfileSampler;
class CommandProfile;

/// The machine (ConfigChoice: system, arch, HBM preset, config layers, overrides, fidelity,
/// mode; run_configuration.hpp) and what to record while it runs.
struct SimulatorOptions : ConfigChoice {
  std::string trace_file;  // .pftrace/.perfetto-trace (protobuf) or .json; "" = none
  /// > 0: sample the counters the profiler needs every this many ns of simulated time while
  /// host programs run (ProfileSampler; the interval doubles as samples accumulate).
  std::uint64_t profile_interval_ns = 0;
  /// Registry sampling into trace counter tracks (under a "stats" process): every stat
  /// matching one of the globs, every `sample_interval_ns` of simulated time while host
  /// programs run; counters as rates per second, the rest as values. Empty: none.
  std::vector<std::string> sample_patterns;
  std::uint64_t sample_interval_ns = 10'000;
};

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a host program sees: its host, its runtime and the raw DeviceAccess.
class HostContext {
 public:
  virtual ~HostContext() = default;
  virtual unsigned host_index() const = 0;
  virtual const std::string& host_name() const = 0;
  virtual driver::DeviceAccess& access() = 0;
  /// The host's runtime, created (probe + enable of every device) on first use.
  virtual driver::Runtime& runtime() = 0;
  virtual std::uint64_t now_ns() = 0;
  /// Host network (pipeline parallelism): send `bytes` to host `to` under `tag`; recv blocks
  /// until the matching message from `from` has arrived.
  virtual void net_send(unsigned to, std::uint64_t bytes, std::uint32_t tag) = 0;
  virtual void net_recv(unsigned from, std::uint64_t bytes, std::uint32_t tag) = 0;
  /// Clock sync (clock_ping.hpp): a four-timestamp ping to host `peer` over the host
  /// network, stamped on each host's own clock; `peer` must answer it with answer_ping(this
  /// host's index).
  virtual PingStamps ping(unsigned peer) = 0;
  virtual void answer_ping(unsigned peer) = 0;
};

using HostProgram = std::function<void(HostContext&)>;

class Simulator {
 public:
  explicit Simulator(const SimulatorOptions& options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Runs `program` on every host (or only on `hosts` when given). Returns the simulated
  /// seconds the run took.
  double run(const HostProgram& program, const std::vector<unsigned>& hosts = {});

  System& system();
  /// What the simulator was built from, resolved; configuration().record() is what results carry.
  const RunConfiguration& configuration() const { return *configuration_; }
  counters::Registry& stats();
  counters::TraceRecorder& trace();
  /// Writes the statistics (.json or .csv by extension), with the configuration record (JSON:
  /// under "configuration"; CSV: rows of kind "config"). Returns "" or what went wrong (the
  /// file could not be created, the device was full); never throws, as it often runs after a
  /// failed simulation whose other outputs must still be written.
  std::string write_stats(const std::string& path) const;
  /// Flushes and closes the trace (also done by the destructor).
  void close_trace();
  double simulated_seconds() const;
  /// The profile's counter samples (nullptr unless SimulatorOptions::profile_interval_ns).
  const ProfileSampler* profile_sampler() const { return sampler_.get(); }
  /// The commands that moved or computed data, by shape (nullptr unless profiling).
  const CommandProfile* command_profile() const { return command_profile_.get(); }
  double wall_seconds() const { return wall_seconds_; }
  /// A run left host programs suspended (a failure, the time limit): their threads cannot be
  /// unwound, so what they hold stays allocated until the process ends (see run()).
  bool abandoned() const { return abandoned_; }

 private:
  struct State;
  std::unique_ptr<RunConfiguration> configuration_;
  std::unique_ptr<counters::Registry> registry_;
  std::unique_ptr<counters::TraceRecorder> trace_;
  std::unique_ptr<System> system_;
  std::unique_ptr<ProfileSampler> sampler_;
  std::unique_ptr<CommandProfile> command_profile_;
  std::unique_ptr<counters::Sampler> stats_sampler_;
  std::uint64_t stats_interval_ns_ = 0, stats_last_ns_ = 0;
  std::unique_ptr<State> state_;  // the runtimes: destroyed first, they use the system
  double wall_seconds_ = 0;
  unsigned runs_ = 0;
  bool abandoned_ = false;  // a run left host programs suspended: the system outlives the Simulator
};

}  // namespace sohusim::platform
