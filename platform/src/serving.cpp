#include "sohusim/platform/serving.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "sohusim/device/sohu_device.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/workloads/serving_loop.hpp"

namespace sohusim::platform {

namespace {

counters::TimeNs ns_at(std::uint64_t origin_ns, double t_s) {
  return origin_ns + static_cast<counters::TimeNs>(std::llround(t_s * 1e9));
}

// The device runner, watched: the KV cache and the queues after each step, and in the trace
// (a "serving" process) each step with its composition on the "scheduler" track and the
// occupancy as counter tracks.
class WatchedRunner : public workloads::StepRunner {
 public:
  WatchedRunner(workloads::StepRunner& inner, const workloads::ServingScheduler& sched,
                std::vector<OccupancySample>& out, counters::TraceRecorder& trace, std::uint64_t origin_ns)
      : inner_(inner), sched_(sched), out_(out), trace_(trace), origin_ns_(origin_ns) {
    if (!trace_.enabled()) return;
    process_ = trace_.process_track("serving");
    steps_ = trace_.thread_track(process_, "scheduler");
    kv_ = trace_.counter_track(process_, "KV blocks used", "blocks");
    running_ = trace_.counter_track(process_, "sequences running", "sequences");
    waiting_ = trace_.counter_track(process_, "requests waiting", "requests");
    step_name_ = trace_.intern("step");
  }
  double run(const workloads::StepPlan& plan, double start_s) override {
    const double end = inner_.run(plan, start_s);
    out_.push_back(OccupancySample{end, sched_.kv().blocks_used(), sched_.running(), sched_.waiting()});
    if (trace_.enabled()) {
      const counters::TimeNs t0 = ns_at(origin_ns_, start_s), t1 = ns_at(origin_ns_, end);
      trace_.complete(steps_, t0, t1 - t0, step_name_,
                      {{"prefill_tokens", std::uint64_t{plan.prefill_tokens()}},
                       {"decodes", std::uint64_t{plan.decodes()}},
                       {"sequences", std::uint64_t{plan.items.size()}},
                       {"swap_out_bytes", plan.swap_out_bytes},
                       {"swap_in_bytes", plan.swap_in_bytes}});
      trace_.counter(kv_, t1, static_cast<double>(out_.back().kv_blocks));
      trace_.counter(running_, t1, static_cast<double>(out_.back().running));
      trace_.counter(waiting_, t1, static_cast<double>(out_.back().waiting));
    }
    return end;
  }
  counters::TrackId process() const { return process_; }

 private:
  workloads::StepRunner& inner_;
  const workloads::ServingScheduler& sched_;
  std::vector<OccupancySample>& out_;
  counters::TraceRecorder& trace_;
  std::uint64_t origin_ns_;
  counters::TrackId process_ = 0, steps_ = 0, kv_ = 0, running_ = 0, waiting_ = 0;
  counters::NameId step_name_ = 0;
};

// Each request's life on an async track: queued (arrival to its first step), prefill (to its
// first token), decode (to its last token).
void trace_requests(counters::TraceRecorder& trace, counters::TrackId process, std::uint64_t origin_ns,
                    const std::vector<workloads::RequestRecord>& records) {
  if (!trace.enabled()) return;
  const counters::TrackId track = trace.async_track(process, "requests");
  const counters::NameId queued = trace.intern("queued"), prefill = trace.intern("prefill"),
                         decode = trace.intern("decode");
  for (const workloads::RequestRecord& r : records) {
    if (r.rejected || r.first_scheduled_s < 0) continue;
    const counters::TimeNs arrival = ns_at(origin_ns, r.request.arrival_s);
    const counters::TimeNs scheduled = ns_at(origin_ns, r.first_scheduled_s);
    const std::uint64_t id = r.request.id;
    if (scheduled > arrival) trace.complete(track, arrival, scheduled - arrival, queued, {{"request", id}});
    if (r.token_times_s.empty()) continue;
    const counters::TimeNs first = ns_at(origin_ns, r.token_times_s.front());
    trace.complete(track, scheduled, first - scheduled, prefill,
                   {{"request", id},
                    {"input_tokens", std::uint64_t{r.request.input}},
                    {"preemptions", std::uint64_t{r.preemptions}}});
    const counters::TimeNs last = ns_at(origin_ns, r.token_times_s.back());
    if (last > first) {
      trace.complete(track, first, last - first, decode,
                     {{"request", id}, {"output_tokens", std::uint64_t{r.token_times_s.size()}}});
    }
  }
}

}  // namespace

ServingResult serve(Simulator& sim, const workloads::ModelConfig& model, const ServingOptions& options) {
  const SystemSpec& spec = sim.system().spec();
  if (options.host >= spec.hosts.size()) {
    throw std::invalid_argument("serving: host " + std::to_string(options.host) + " of a system with " +
                                std::to_string(spec.hosts.size()));
  }
  workloads::SchedulerOptions sched = options.scheduler;
  sched.max_positions = model.max_positions;
  sched.validate();
  workloads::DeviceServingOptions dev = options.device;
  dev.max_batch = sched.max_batch;
  dev.max_tokens = sched.max_tokens;
  if (dev.c2c_index.empty()) {
    unsigned first = 0;
    for (unsigned h = 0; h < options.host; ++h) first += spec.hosts[h].devices;
    for (unsigned i = 0; i < spec.hosts[options.host].devices; ++i) dev.c2c_index.push_back(first + i);
  }
  dev.validate();
  // What can be checked before simulating: the shard and every rank's memory plan (the run's
  // own set-up then cannot fail on them, inside host programs).
  {
    const unsigned devices = spec.hosts[options.host].devices;
    const unsigned tp = dev.tp == 0 ? devices : dev.tp;
    if (tp > devices) {
      throw std::invalid_argument("serving: tensor-parallel degree " + std::to_string(tp) + " but host " +
                                  std::to_string(options.host) + " has " + std::to_string(devices) + " devices");
    }
    unsigned first_device = 0;
    for (unsigned h = 0; h < options.host; ++h) first_device += spec.hosts[h].devices;
    std::vector<std::uint64_t> hbm;
    for (unsigned r = 0; r < tp; ++r) hbm.push_back(sim.system().device(first_device + r).params().hbm_bytes);
    workloads::DeviceStepRunner::plan_pool(model, dev, hbm);
  }
  workloads::StreamSpec stream = options.stream;
  stream.max_length = std::min(stream.max_length, model.max_positions);
  std::vector<workloads::Request> requests = options.requests;
  std::unique_ptr<workloads::ClosedLoop> closed;
  if (requests.empty()) {
    stream.validate();
    if (stream.kind == workloads::StreamKind::Closed) {
      closed = std::make_unique<workloads::ClosedLoop>(stream);
    } else {
      requests = workloads::generate_requests(stream);
    }
  }

  // The devices' activity so far (an earlier run on the same simulator) is not this run's.
  unsigned first = 0;
  for (unsigned h = 0; h < options.host; ++h) first += spec.hosts[h].devices;
  std::vector<double> dynamic_before;
  for (unsigned d = first; d < first + spec.hosts[options.host].devices; ++d)
    dynamic_before.push_back(sim.system().device(d).energy(0).total_j);
  // Statistics under "serve", or "serve2", "serve3"... for later runs on the same simulator.
  std::string scope = "serve";
  for (unsigned n = 2; sim.stats().find(scope + ".steps") != nullptr; ++n) scope = "serve" + std::to_string(n);

  ServingResult res;
  std::string setup_error;
  double step_s = 0, simulated_step_s = 0;
  unsigned tp = 0;
  try {
    sim.run(
        [&](HostContext& host) {
          std::unique_ptr<workloads::DeviceStepRunner> runner;
          try {
            runner = std::make_unique<workloads::DeviceStepRunner>(host.runtime(), model, dev);
          } catch (const std::invalid_argument& e) {
            setup_error = e.what();
            return;
          }
          tp = runner->tp();
          res.kv = runner->kv_cache();
          res.weight_bytes = runner->weight_bytes();
          res.kv_bytes = runner->kv_bytes();
          res.start_seconds = static_cast<double>(runner->origin_ns()) * 1e-9;
          workloads::ServingScheduler scheduler(sched, res.kv, counters::Scope(sim.stats(), scope));
          WatchedRunner watched(*runner, scheduler, res.occupancy, sim.trace(), runner->origin_ns());
          try {
            const workloads::ServingRun run = workloads::run_serving(scheduler, requests, watched, closed.get());
            res.steps = run.steps;
            res.end_s = run.end_s;
          } catch (const workloads::ServingStuck& e) {
            res.failure = e.what();
            res.end_s = res.occupancy.empty() ? 0 : res.occupancy.back().t_s;
          }
          res.records = scheduler.records();
          trace_requests(sim.trace(), watched.process(), runner->origin_ns(), res.records);
          res.steps_simulated = runner->simulated_steps();
          res.steps_reused = runner->reused_steps();
          res.commands = runner->commands();
          step_s = runner->step_seconds();
          simulated_step_s = runner->simulated_step_seconds();
        },
        {options.host});
  } catch (const SimulationError& e) {
    res.failure = e.what();
  }
  if (!setup_error.empty()) res.failure = setup_error;  // checked before the run: not expected

  res.metrics = workloads::serving_metrics(res.records, options.slo);
  for (const workloads::RequestRecord& r : res.records)
    res.output_tokens += static_cast<double>(r.token_times_s.size());
  const double scale = simulated_step_s > 0 ? step_s / simulated_step_s : 1.0;
  for (unsigned d = first; d < first + tp; ++d) {
    const device::SohuDevice& dev_d = sim.system().device(d);
    const double all_dynamic = dev_d.energy(0).total_j;  // every run's activity on this device
    const double static_j = dev_d.energy(res.end_s).total_j - all_dynamic;
    res.energy_j += static_j + (all_dynamic - dynamic_before[d - first]) * scale;
  }
  return res;
}

profiler::ServingProfile serving_profile(const ServingResult& r, const workloads::SloTargets& slo) {
  profiler::ServingProfile p;
  p.slo_ttft_s = slo.ttft_s;
  p.slo_tpot_s = slo.tpot_s;
  p.kv_blocks = static_cast<double>(r.kv.blocks);
  std::vector<double> tokens;  // every output token's time
  for (const workloads::RequestRecord& rec : r.records) {
    profiler::ServingRequestRecord q;
    q.id = rec.request.id;
    q.arrival_s = rec.request.arrival_s;
    q.input = rec.request.input;
    q.output = rec.request.output;
    q.status = rec.rejected ? "rejected" : rec.finished() ? "completed" : "unfinished";
    q.preemptions = rec.preemptions;
    q.tokens = static_cast<std::uint32_t>(rec.token_times_s.size());
    if (rec.first_scheduled_s >= 0) q.queueing_s = rec.first_scheduled_s - rec.request.arrival_s;
    if (!rec.token_times_s.empty()) {
      q.ttft_s = rec.token_times_s.front() - rec.request.arrival_s;
      if (rec.finished()) q.e2e_s = rec.token_times_s.back() - rec.request.arrival_s;
      if (rec.token_times_s.size() >= 2) {
        q.tpot_s =
            (rec.token_times_s.back() - rec.token_times_s.front()) / static_cast<double>(rec.token_times_s.size() - 1);
      }
    }
    tokens.insert(tokens.end(), rec.token_times_s.begin(), rec.token_times_s.end());
    p.requests.push_back(std::move(q));
  }
  std::sort(tokens.begin(), tokens.end());
  for (const OccupancySample& o : r.occupancy) {
    const auto produced = std::upper_bound(tokens.begin(), tokens.end(), o.t_s) - tokens.begin();
    p.samples.push_back(profiler::ServingSample{o.t_s, static_cast<double>(o.kv_blocks), static_cast<double>(o.running),
                                                static_cast<double>(o.waiting), static_cast<double>(produced)});
  }
  return p;
}

}  // namespace sohusim::platform
