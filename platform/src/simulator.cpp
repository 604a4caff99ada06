#include "sohusim/platform/simulator.hpp"

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "sohusim/counters/sampler_trace_sink.hpp"
#include "sohusim/counters/trace_writer.hpp"
#include "sohusim/platform/profiling/command_profile.hpp"
#include "sohusim/platform/profiling/profile_sampler.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::platform {

namespace {

class Context : public HostContext {
 public:
  Context(System& sys, unsigned h, counters::Registry& registry, counters::TraceRecorder& trace,
          std::unique_ptr<driver::Runtime>& runtime)
      : sys_(sys), h_(h), name_(sys.spec().hosts.at(h).name), registry_(registry), trace_(trace), runtime_(runtime) {}

  unsigned host_index() const override { return h_; }
  const std::string& host_name() const override { return name_; }
  driver::DeviceAccess& access() override { return sys_.access(h_); }
  driver::Runtime& runtime() override {
    if (!runtime_) {
      driver::RuntimeOptions o;
      o.costs = sys_.spec().costs;
      o.registry = &registry_;
      o.prefix = name_ + ".runtime";
      if (trace_.enabled()) {
        o.trace = &trace_;
        o.api_track = trace_.thread_track(sys_.host_track(h_), "runtime API");
        o.driver_track = trace_.thread_track(sys_.host_track(h_), "driver");
        o.trace_summary = sys_.host_config(h_).get_string("trace.detail") == "summary";
      }
      // Correlation ids of different hosts never collide: host h uses (h + 1) << 40 onward.
      o.correlation_base = static_cast<std::uint64_t>(h_ + 1) << 40;
      runtime_ = std::make_unique<driver::Runtime>(sys_.access(h_), o);
    }
    return *runtime_;
  }
  std::uint64_t now_ns() override { return sim::to_ns(sc_core::sc_time_stamp()); }
  void net_send(unsigned to, std::uint64_t bytes, std::uint32_t tag) override {
    sys_.network().send(h_, to, bytes, tag);
  }
  void net_recv(unsigned from, std::uint64_t bytes, std::uint32_t tag) override {
    sys_.network().recv(h_, from, bytes, tag);
  }
  PingStamps ping(unsigned peer) override { return ping_host(sys_.network(), sys_.access(h_), h_, peer); }
  void answer_ping(unsigned peer) override { platform::answer_ping(sys_.network(), sys_.access(h_), h_, peer); }

 private:
  System& sys_;
  unsigned h_;
  std::string name_;
  counters::Registry& registry_;
  counters::TraceRecorder& trace_;
  std::unique_ptr<driver::Runtime>& runtime_;
};

}  // namespace

struct Simulator::State {
  std::vector<std::unique_ptr<driver::Runtime>> runtimes;
  double stop_time_s = 1.0;
  sc_core::sc_event programs_done;  // the last host program of a run returned
};

Simulator::Simulator(const SimulatorOptions& options) {
  sim::ensure_time_resolution();
  configuration_ = std::make_unique<RunConfiguration>(resolve_configuration(options));
  registry_ = std::make_unique<counters::Registry>();
  trace_ = std::make_unique<counters::TraceRecorder>(
      options.trace_file.empty() ? nullptr
                                 : counters::make_trace_writer(options.trace_file, counters::TraceFormat::Auto));
  system_ = std::make_unique<System>(*configuration_, *registry_, trace_.get());
  state_ = std::make_unique<State>();
  state_->runtimes.resize(system_->host_count());
  state_->stop_time_s = system_->host_config(0).get_quantity("sim.stop_time");
  if (options.profile_interval_ns > 0) {
    sampler_ = std::make_unique<ProfileSampler>(*system_, *registry_, options.profile_interval_ns, 4096, trace_.get());
    // Counters at every TIMESTAMP command: the profile splits the engines' buckets per op.
    for (unsigned d = 0; d < system_->device_count(); ++d) {
      system_->device(d).executor().set_timestamp_observer([s = sampler_.get(), d](std::uint64_t device_ns) {
        s->stamp(d, device_ns, sim::to_ns(sc_core::sc_time_stamp()));
      });
    }
    // Every command that moves or computes data, by shape, for the per-command speed of light.
    command_profile_ = std::make_unique<CommandProfile>(system_->device_count());
    for (unsigned d = 0; d < system_->device_count(); ++d) {
      system_->device(d).executor().set_command_observer(
          [c = command_profile_.get(), d](const device::Sqe& sqe, std::uint64_t ps, const device::CommandWork& w) {
            c->observe(d, sqe, ps, w);
          });
    }
  }
  if (!options.sample_patterns.empty()) {
    if (options.sample_interval_ns == 0) throw std::invalid_argument("sample interval must be > 0 ns");
    stats_sampler_ = std::make_unique<counters::Sampler>(*registry_, options.sample_patterns,
                                                         /*counters_as_rates=*/true, /*keep_in_memory=*/false);
    stats_interval_ns_ = options.sample_interval_ns;
    if (trace_->enabled()) counters::attach_trace_counters(*stats_sampler_, *trace_, trace_->process_track("stats"));
  }
}

Simulator::~Simulator() {
  try {
    close_trace();
  } catch (...) {  // a destructor must not throw; close_trace() reports errors to callers who ask
  }
  if (abandoned_) {
    // See run(): threads are suspended inside these objects; keep them (reachable) until exit.
    static std::vector<std::unique_ptr<ProfileSampler>> samplers;
    samplers.push_back(std::move(sampler_));
    static std::vector<std::unique_ptr<CommandProfile>> command_profiles;
    command_profiles.push_back(std::move(command_profile_));
    static std::vector<std::unique_ptr<counters::Sampler>> stats_samplers;
    stats_samplers.push_back(std::move(stats_sampler_));
    static std::vector<std::unique_ptr<State>> states;
    static std::vector<std::unique_ptr<System>> systems;
    states.push_back(std::move(state_));
    systems.push_back(std::move(system_));
  }
}

double Simulator::run(const HostProgram& program, const std::vector<unsigned>& hosts) {
  std::vector<unsigned> which = hosts;
  if (which.empty())
    for (unsigned h = 0; h < system_->host_count(); ++h) which.push_back(h);
  for (unsigned h : which) {
    if (h >= system_->host_count()) {
      throw std::invalid_argument("Simulator::run: host " + std::to_string(h) + " does not exist (the system has " +
                                  std::to_string(system_->host_count()) + ")");
    }
  }
  const double t0 = sc_core::sc_time_stamp().to_seconds();
  const auto wall0 = std::chrono::steady_clock::now();
  auto remaining = std::make_shared<unsigned>(static_cast<unsigned>(which.size()));
  auto failure = std::make_shared<std::optional<std::string>>();
  std::vector<std::unique_ptr<Context>> contexts;
  for (unsigned h : which) {
    contexts.push_back(std::make_unique<Context>(*system_, h, *registry_, *trace_, state_->runtimes[h]));
    Context* ctx = contexts.back().get();
    sc_core::sc_spawn(
        [ctx, program, remaining, failure, done = &state_->programs_done] {
          try {
            program(*ctx);
          } catch (const std::exception& e) {
            if (!*failure) *failure = ctx->host_name() + ": " + e.what();
            sc_core::sc_pause();  // one host failed: the run is over, the others may wait forever
            return;
          }
          // The last one to finish does not pause the kernel: what the programs started
          // (posted writes, completions, interrupts) runs out first, and sc_start returns
          // when nothing is left to happen.
          if (--*remaining == 0) done->notify();
        },
        ("host_program_" + std::to_string(h) + "_" + std::to_string(runs_)).c_str());
  }
  // Samplers run until the last program returns (then sample once more), never keeping the
  // kernel busy after that: each waits on its interval or the programs' end, whichever is first.
  auto spawn_sampler = [&](const char* name, std::function<std::uint64_t()> interval,
                           std::function<void(std::uint64_t)> sample) {
    sc_core::sc_spawn(
        [interval, sample, remaining, done = &state_->programs_done] {
          sample(sim::to_ns(sc_core::sc_time_stamp()));
          while (*remaining != 0) {
            // Nothing else pending, now or later: the programs wait for something that can never
            // come. Stop, so that the kernel starves and run() reports them at once instead of
            // sampling an idle system until sim.stop_time.
            if (!sc_core::sc_pending_activity()) break;
            sc_core::wait(sc_core::sc_time(static_cast<double>(interval()), sc_core::SC_NS), *done);
            sample(sim::to_ns(sc_core::sc_time_stamp()));
          }
        },
        (std::string(name) + "_" + std::to_string(runs_)).c_str());
  };
  if (sampler_) {
    ProfileSampler* s = sampler_.get();
    spawn_sampler(
        "profile_sampler", [s] { return s->interval_ns(); }, [s](std::uint64_t t) { s->sample(t); });
  }
  if (stats_sampler_) {
    counters::Sampler* s = stats_sampler_.get();
    std::uint64_t* last = &stats_last_ns_;
    spawn_sampler(
        "stats_sampler", [i = stats_interval_ns_] { return i; },
        [s, last](std::uint64_t t) {
          if (s->samples() > 0 && t <= *last) return;  // the Sampler refuses going back
          *last = t;
          s->sample(t);
        });
  }
  ++runs_;
  const sc_core::sc_time limit(state_->stop_time_s, sc_core::SC_SEC);
  std::string kernel_error;
  try {
    if (sc_core::sc_time_stamp() < limit)
      sc_core::sc_start(limit - sc_core::sc_time_stamp(), sc_core::SC_EXIT_ON_STARVATION);
  } catch (const std::exception& e) {
    kernel_error = e.what();
  }
  wall_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  system_->sync_stats();
  trace_->flush();
  // SystemC cannot unwind a thread that is suspended forever (a host program that waits for
  // something that never comes, or the rest of a run a failure stopped): destroying the
  // modules under it is undefined. Such a system is kept, unused, until the process ends.
  if (*remaining != 0 || *failure || !kernel_error.empty()) abandoned_ = true;
  if (!kernel_error.empty()) throw SimulationError("simulation failed: " + kernel_error);
  if (*failure) throw SimulationError(**failure);
  if (*remaining != 0) {
    // Cut by the limit: the clock reached it, or work was still scheduled beyond it (with
    // SC_EXIT_ON_STARVATION the kernel may return before moving the clock to the limit).
    const bool at_limit = sc_core::sc_time_stamp() >= limit || sc_core::sc_pending_activity();
    throw SimulationError(
        std::to_string(*remaining) + " host program(s) did not finish: " +
        (at_limit ? "the simulated-time limit sim.stop_time (" + limit.to_string() +
                        ") was reached; a longer run needs a higher one (--set \"sim.stop_time=100 s\", or "
                        "`set: [sim.stop_time=100 s]` in the system file)"
                  : std::string("nothing is left to happen (a wait that no device or host will satisfy)")));
  }
  return sc_core::sc_time_stamp().to_seconds() - t0;
}

System& Simulator::system() {
  return *system_;
}
counters::Registry& Simulator::stats() {
  return *registry_;
}
counters::TraceRecorder& Simulator::trace() {
  return *trace_;
}
double Simulator::simulated_seconds() const {
  return sc_core::sc_time_stamp().to_seconds();
}

std::string Simulator::write_stats(const std::string& path) const {
  std::ofstream os(path);
  if (!os) return "cannot create stats file '" + path + "'";
  const nlohmann::json record = configuration_->record();
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0) {
    registry_->write_csv(os);
    // The configuration as rows of their own kind: name, kind, unit, value (text), description.
    for (const auto& [k, v] : record.items()) {
      std::string text = v.is_string() ? v.get<std::string>() : v.dump();
      if (text.find_first_of(",\"\n") != std::string::npos) {
        std::string quoted = "\"";
        for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        text = quoted + "\"";
      }
      os << "configuration." << k << ",config,," << text << ",the run's configuration\n";
    }
  } else {
    nlohmann::json j = registry_->to_json();
    j["configuration"] = record;
    os << j.dump(2) << '\n';
  }
  os.flush();
  if (!os) return "writing stats file '" + path + "' failed (device full or I/O error)";
  return {};
}

void Simulator::close_trace() {
  if (trace_) trace_->close();
}

}  // namespace sohusim::platform
