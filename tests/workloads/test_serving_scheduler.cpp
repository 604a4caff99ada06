// The serving scheduler and loop with a formula for a step's cost: batching policies,
// preemption under KV pressure, rejections, closed loops, and the metrics.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sohusim/counters/registry.hpp"
#include "sohusim/workloads/request_stream.hpp"
#include "sohusim/workloads/serving_loop.hpp"
#include "sohusim/workloads/serving_metrics.hpp"
#include "sohusim/workloads/serving_scheduler.hpp"

namespace sohusim::workloads {
namespace {

// A step costs a fixed launch time, a time per prompt token and a time per decode (a decode
// reads the weights once for the whole batch, so it is cheap per sequence), plus swap traffic.
struct FormulaRunner : StepRunner {
  double fixed = 2e-3, per_prompt_token = 20e-6, per_decode = 50e-6, swap_bytes_per_s = 25e9;
  std::vector<StepPlan> plans;
  double run(const StepPlan& p, double start) override {
    plans.push_back(p);
    return start + fixed + per_prompt_token * p.prefill_tokens() + per_decode * p.decodes() +
           static_cast<double>(p.swap_in_bytes + p.swap_out_bytes) / swap_bytes_per_s;
  }
};

struct Served {
  counters::Registry reg;
  ServingScheduler sched;
  Served(SchedulerOptions o, std::uint64_t blocks, double watermark = 0.0)
      : sched(o, KvCacheOptions{16, blocks, 16 * 1024, watermark}, counters::Scope(reg, "serve")) {}
};

SchedulerOptions options(SchedulerKind k, unsigned batch = 32, std::uint32_t tokens = 4096) {
  SchedulerOptions o;
  o.kind = k;
  o.max_batch = batch;
  o.max_tokens = tokens;
  o.max_positions = 4096;
  return o;
}

std::vector<Request> poisson(double rate, std::uint64_t n, const std::string& in, const std::string& out,
                             std::uint64_t seed = 1) {
  StreamSpec s;
  s.kind = StreamKind::Poisson;
  s.rate = rate;
  s.requests = n;
  s.input = parse_length_spec(in);
  s.output = parse_length_spec(out);
  s.seed = seed;
  return generate_requests(s);
}

// Serving metrics of the same Poisson stream under the static and the continuous scheduler.
std::pair<ServingMetrics, ServingMetrics> static_vs_continuous(double rate) {
  const std::vector<Request> reqs = poisson(rate, 400, "uniform:64:512", "uniform:16:256");
  ServingMetrics m[2];
  for (int k = 0; k < 2; ++k) {
    Served s(options(k == 0 ? SchedulerKind::Static : SchedulerKind::Continuous), 4096);
    FormulaRunner runner;
    run_serving(s.sched, reqs, runner);
    m[k] = serving_metrics(s.sched.records(), SloTargets{0.5, 0.02});
  }
  return {m[0], m[1]};
}

TEST(ServingScheduler, ContinuousBatchingBeatsStaticOnThroughputAndLatencyUnderPoisson) {
  // Saturated (arrivals faster than either serves them): throughput is the schedulers' own.
  // A static batch decodes until its longest sequence ends, with ever fewer sequences.
  const auto [st, co] = static_vs_continuous(1000);
  ASSERT_EQ(st.completed, 400U);
  ASSERT_EQ(co.completed, 400U);
  EXPECT_GT(co.output_tokens_per_s, st.output_tokens_per_s * 1.25)
      << co.output_tokens_per_s << " vs " << st.output_tokens_per_s;
  // At a load both sustain, arrivals under static wait for the running batch to end.
  const auto [st2, co2] = static_vs_continuous(20);
  EXPECT_LT(co2.ttft_s.p90, st2.ttft_s.p90 / 2) << co2.ttft_s.p90 << " vs " << st2.ttft_s.p90;
  EXPECT_GT(co2.slo_attainment, st2.slo_attainment) << co2.slo_attainment << " vs " << st2.slo_attainment;
}

TEST(ServingScheduler, StaticBatchingKeepsArrivalsWaitingUntilTheBatchEnds) {
  Served s(options(SchedulerKind::Static, 2), 1024);
  s.sched.arrive(Request{0, 0.0, 100, 3});
  s.sched.arrive(Request{1, 0.0, 50, 1});
  StepPlan p = s.sched.plan(0.0);
  ASSERT_EQ(p.items.size(), 2U);
  EXPECT_EQ(p.prefill_tokens(), 150U);
  s.sched.finish_step(1.0);  // both first tokens; request 1 is done
  s.sched.arrive(Request{2, 1.0, 10, 1});
  p = s.sched.plan(1.0);
  ASSERT_EQ(p.items.size(), 1U);  // request 0 decodes alone; 2 waits
  EXPECT_EQ(p.items[0].request, 0U);
  EXPECT_EQ(p.items[0].context, 101U);
  s.sched.finish_step(1.1);
  p = s.sched.plan(1.1);
  ASSERT_EQ(p.items.size(), 1U);
  s.sched.finish_step(1.2);  // request 0's third token: the batch ends
  p = s.sched.plan(1.2);
  ASSERT_EQ(p.items.size(), 1U);
  EXPECT_EQ(p.items[0].request, 2U);
  EXPECT_TRUE(p.items[0].prefill);
  s.sched.finish_step(1.3);
  EXPECT_TRUE(s.sched.idle());
  EXPECT_EQ(s.sched.records()[0].token_times_s, (std::vector<double>{1.0, 1.1, 1.2}));
}

TEST(ServingScheduler, ContinuousBatchingAdmitsWholePromptsWithinTheTokenBudget) {
  SchedulerOptions o = options(SchedulerKind::Continuous, 8, 4096);
  Served s(o, 1024);
  s.sched.arrive(Request{0, 0.0, 3000, 4});
  s.sched.arrive(Request{1, 0.0, 2000, 4});
  StepPlan p = s.sched.plan(0.0);
  ASSERT_EQ(p.items.size(), 1U);  // 3000 + 2000 > 4096: the second waits for the next step
  s.sched.finish_step(0.1);
  p = s.sched.plan(0.1);
  ASSERT_EQ(p.items.size(), 2U);  // request 0 decodes, request 1's prompt joins
  EXPECT_FALSE(p.items[0].prefill);
  EXPECT_EQ(p.items[1].tokens, 2000U);
}

TEST(ServingScheduler, ChunkedPrefillSpreadsALongPromptAndNeverStallsTheDecodes) {
  Served s(options(SchedulerKind::Chunked, 8, 512), 1024);
  s.sched.arrive(Request{0, 0.0, 100, 20});
  StepPlan p = s.sched.plan(0.0);
  s.sched.finish_step(0.01);
  s.sched.arrive(Request{1, 0.01, 2000, 2});
  std::vector<std::uint32_t> chunks;
  for (int i = 0; i < 5; ++i) {
    p = s.sched.plan(0.01 * (i + 1));
    ASSERT_GE(p.items.size(), 1U);
    EXPECT_FALSE(p.items[0].prefill);  // request 0's decode, every step
    std::uint32_t step_tokens = 0;
    for (const StepItem& it : p.items) step_tokens += it.tokens;
    EXPECT_LE(step_tokens, 512U);
    if (p.items.size() > 1 && p.items[1].prefill) chunks.push_back(p.items[1].tokens);
    s.sched.finish_step(0.01 * (i + 2));
  }
  EXPECT_EQ(chunks, (std::vector<std::uint32_t>{511, 511, 511, 467}));
  // Its prompt ends with the fourth chunk (its first token), then it decodes its second.
  EXPECT_EQ(s.sched.records()[1].token_times_s, (std::vector<double>{0.01 * 5, 0.01 * 6}));
}

TEST(ServingScheduler, KvPressurePreemptsTheNewestAndEveryRequestStillCompletes) {
  for (bool swap : {false, true}) {
    SchedulerOptions o = options(SchedulerKind::Continuous, 16);
    o.swap = swap;
    Served s(o, 64);  // 1,024 positions for up to 16 sequences of up to 512 + 256
    FormulaRunner runner;
    run_serving(s.sched, poisson(200, 60, "uniform:64:256", "uniform:64:256", 3), runner);
    const ServingMetrics m = serving_metrics(s.sched.records());
    EXPECT_EQ(m.completed, 60U) << swap;
    EXPECT_GT(m.preemptions, 0U) << swap;
    EXPECT_EQ(s.sched.kv().blocks_used(), 0U);
    EXPECT_EQ(s.reg.value("serve.preemptions"), static_cast<double>(m.preemptions));
    if (swap) {
      EXPECT_GT(s.reg.value("serve.swapped_out_bytes"), 0.0);
      EXPECT_EQ(s.reg.value("serve.swapped_out_bytes"), s.reg.value("serve.swapped_in_bytes"));
    }
    // Every request's tokens are in order and it got all of them.
    for (const RequestRecord& r : s.sched.records()) {
      ASSERT_EQ(r.token_times_s.size(), r.request.output);
      EXPECT_TRUE(std::is_sorted(r.token_times_s.begin(), r.token_times_s.end()));
    }
  }
}

TEST(ServingScheduler, RequestsTooLongForTheModelOrTheCacheAreRejectedAndCounted) {
  Served s(options(SchedulerKind::Continuous), 8, 0.25);  // 6 blocks admissible: 96 positions
  s.sched.arrive(Request{0, 0.0, 4000, 200});
  s.sched.arrive(Request{1, 0.0, 90, 10});
  s.sched.arrive(Request{2, 0.0, 50, 10});
  const auto& r = s.sched.records();
  EXPECT_EQ(r[0].reject_reason, "4000 + 200 tokens exceed the model's 4096 positions");
  EXPECT_EQ(r[1].reject_reason, "100 positions need 7 KV blocks; the cache admits at most 6");
  EXPECT_FALSE(r[2].rejected);
  EXPECT_EQ(s.reg.value("serve.rejected"), 2.0);
  FormulaRunner runner;
  run_serving(s.sched, {}, runner);
  const ServingMetrics m = serving_metrics(s.sched.records());
  EXPECT_EQ(m.rejected, 2U);
  EXPECT_EQ(m.completed, 1U);
}

TEST(ServingScheduler, AClosedLoopKeepsItsClientsBusy) {
  StreamSpec spec;
  spec.kind = StreamKind::Closed;
  spec.clients = 4;
  spec.think_s = 0.05;
  spec.requests = 40;
  spec.input = parse_length_spec("128");
  spec.output = parse_length_spec("32");
  ClosedLoop loop(spec);
  Served s(options(SchedulerKind::Continuous), 1024);
  FormulaRunner runner;
  run_serving(s.sched, {}, runner, &loop);
  const auto& recs = s.sched.records();
  ASSERT_EQ(recs.size(), 40U);
  for (const RequestRecord& r : recs) EXPECT_TRUE(r.finished());
  // Never more than four in flight: each step's batch holds at most the four clients.
  for (const StepPlan& p : runner.plans) EXPECT_LE(p.items.size(), 4U);
}

TEST(ServingScheduler, PlanningOverAnUnfinishedStepIsRefusedAndWaitingRequestsSayWhy) {
  Served s(options(SchedulerKind::Continuous), 8);
  s.sched.arrive(Request{0, 0.0, 100, 1});
  s.sched.arrive(Request{1, 0.5, 20, 1});
  ASSERT_EQ(s.sched.plan(0.0).items.size(), 1U);
  EXPECT_THROW(s.sched.plan(0.0), std::logic_error);
  EXPECT_EQ(s.sched.blocked(0.0), (std::vector<std::string>{"request 1: arrives at 0.500000 s"}));
  s.sched.arrive(Request{2, 0.0, 60, 1});
  EXPECT_EQ(s.sched.blocked(0.6)[1], "request 2: needs 4 KV blocks, 1 of 8 free, 1 running");
}

TEST(ServingMetrics, PercentilesTokensPerSecondAndGoodputFromKnownRecords) {
  std::vector<RequestRecord> recs(3);
  recs[0].request = Request{0, 0.0, 100, 3};
  recs[0].first_scheduled_s = 0.0;
  recs[0].token_times_s = {0.1, 0.2, 0.3};  // TTFT 0.1, TPOT 0.1
  recs[1].request = Request{1, 1.0, 50, 2};
  recs[1].first_scheduled_s = 1.5;
  recs[1].token_times_s = {2.0, 2.5};  // TTFT 1.0, TPOT 0.5
  recs[2].request = Request{2, 1.0, 10, 5};
  recs[2].rejected = true;
  const ServingMetrics m = serving_metrics(recs, SloTargets{0.5, 0.2});
  EXPECT_EQ(m.completed, 2U);
  EXPECT_EQ(m.rejected, 1U);
  EXPECT_DOUBLE_EQ(m.makespan_s, 2.5);
  EXPECT_DOUBLE_EQ(m.input_tokens_per_s, 150 / 2.5);
  EXPECT_DOUBLE_EQ(m.output_tokens_per_s, 5 / 2.5);
  EXPECT_DOUBLE_EQ(m.ttft_s.p50, 0.55);  // between 0.1 and 1.0
  EXPECT_DOUBLE_EQ(m.ttft_s.max, 1.0);
  EXPECT_DOUBLE_EQ(m.queueing_s.mean, 0.25);
  EXPECT_EQ(m.itl_s.count, 3U);
  EXPECT_EQ(m.met_slo, 1U);
  EXPECT_DOUBLE_EQ(m.goodput_per_s, 1 / 2.5);
  EXPECT_DOUBLE_EQ(m.slo_attainment, 0.5);
  nlohmann::json j;
  to_json(j, m);
  EXPECT_EQ(j["ttft_s"]["p50"], 0.55);
  std::ostringstream csv;
  write_request_csv(csv, recs);
  EXPECT_EQ(csv.str(),
            "id,arrival_s,input_tokens,output_tokens,status,ttft_s,tpot_s,e2e_s,queueing_s,preemptions\n"
            "0,0,100,3,completed,0.1,0.1,0.3,0,0\n"
            "1,1,50,2,completed,1,0.5,1.5,0.5,0\n"
            "2,1,10,5,rejected,,,,,0\n");
}

}  // namespace
}  // namespace sohusim::workloads
