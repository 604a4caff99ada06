#pragma once
// The serving loop: requests arrive, the scheduler plans a step, a StepRunner runs it and says
// when it ended, the scheduler records the tokens; until every request is done. The runner is
// where the cost of a step comes from: on the simulated system it launches the step's
// programs on the devices and waits (the host thread's simulated time moves); in unit tests a
// formula stands in.
//
// Time never moves backwards and nothing runs while the scheduler has no work: the loop jumps
// to the next arrival. If the scheduler holds requests it will never schedule (none running,
// no arrival to come, none admissible), the loop throws ServingStuck naming each waiting
// request and why.
#include <stdexcept>
#include <vector>

#include "sohusim/workloads/request_stream.hpp"
#include "sohusim/workloads/serving_scheduler.hpp"

namespace sohusim::workloads {

class StepRunner {
 public:
  virtual ~StepRunner() = default;
  /// Runs `plan` starting at `start_s`; returns when it ended (>= start_s).
  virtual double run(const StepPlan& plan, double start_s) = 0;
};

class ServingStuck : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ServingRun {
  std::uint64_t steps = 0;
  double end_s = 0;
};

/// Open streams: `requests` in arrival order. Closed loops: pass the loop; its first()
/// requests start the run and each completion brings the client's next one.
ServingRun run_serving(ServingScheduler& scheduler, std::vector<Request> requests, StepRunner& runner,
                       ClosedLoop* closed = nullptr);

}  // namespace sohusim::workloads
