#pragma once
// serve(): a stream of requests served on one host of a Simulator — the serving scheduler on
// the host, each step on the devices through the runtime and driver (DeviceStepRunner) — and
// what came of it: per-request records, the serving metrics, the KV cache's and the queues'
// occupancy after every step, the devices' energy. What `sohusim serve` runs; C++ tools call
// it the same way:
//
//   sohusim::platform::Simulator sim(options);
//   sohusim::platform::ServingOptions so;
//   so.stream.kind = sohusim::workloads::StreamKind::Poisson;  so.stream.rate = 8;  ...
//   so.scheduler.kind = sohusim::workloads::SchedulerKind::Continuous;
//   sohusim::platform::ServingResult r = sohusim::platform::serve(sim, model, so);
//   double p99_ttft = r.metrics.ttft_s.p99;
//
// serve() may be called again on the same simulator (time goes on; each run's statistics
// are under "serve", then "serve2", ...).
//
// Failures: options that cannot run (a model that does not fit, a bad stream) throw
// std::invalid_argument before anything is simulated; requests that can never be scheduled
// and device failures end the run with ServingResult::failure set, the records so far kept.
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/platform/simulator.hpp"
#include "sohusim/profiler/serving_profile.hpp"
#include "sohusim/workloads/device_step_runner.hpp"
#include "sohusim/workloads/model_config.hpp"
#include "sohusim/workloads/request_stream.hpp"
#include "sohusim/workloads/serving_metrics.hpp"
#include "sohusim/workloads/serving_scheduler.hpp"

namespace sohusim::platform {

struct ServingOptions {
  workloads::StreamSpec stream;              // generates the requests (closed: the loop)
  std::vector<workloads::Request> requests;  // or these (an open stream), when not empty
  workloads::SchedulerOptions scheduler;     // max_positions is set from the model
  workloads::DeviceServingOptions device;    // max_batch and max_tokens are the scheduler's
  workloads::SloTargets slo;
  unsigned host = 0;  // the host whose devices serve
};

/// After a step: KV blocks in use (the step's sequences still hold theirs) and the queues.
struct OccupancySample {
  double t_s = 0;
  std::uint64_t kv_blocks = 0;
  std::size_t running = 0, waiting = 0;
};

struct ServingResult {
  std::vector<workloads::RequestRecord> records;
  workloads::ServingMetrics metrics;
  workloads::KvCacheOptions kv;  // the cache the devices hold
  std::vector<OccupancySample> occupancy;
  std::uint64_t steps = 0, steps_simulated = 0, steps_reused = 0, commands = 0;
  std::uint64_t weight_bytes = 0, kv_bytes = 0;  // per device
  double end_s = 0;                              // the last step's end, from the loop's t = 0
  double start_seconds = 0;                      // simulated time of the loop's t = 0
  /// The serving devices' energy: static power over the run plus the activity their counters
  /// saw in the simulated steps, scaled to all steps (reused steps do not run the devices).
  double energy_j = 0;
  double output_tokens = 0;
  std::string failure;  // empty: every request completed or was rejected
};

ServingResult serve(Simulator& sim, const workloads::ModelConfig& model, const ServingOptions& options);

/// The run as the profiler keeps it (RunProfile::serving): each request's latencies, the
/// occupancy after each step with the output tokens produced so far, the SLO.
profiler::ServingProfile serving_profile(const ServingResult& r, const workloads::SloTargets& slo);

}  // namespace sohusim::platform
