#include "sohusim/workloads/serving_loop.hpp"

#include <algorithm>
#include <deque>

namespace sohusim::workloads {

ServingRun run_serving(ServingScheduler& scheduler, std::vector<Request> requests, StepRunner& runner,
                       ClosedLoop* closed) {
  if (closed != nullptr) {
    const std::vector<Request> first = closed->first();
    requests.insert(requests.end(), first.begin(), first.end());
  }
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  std::deque<Request> pending(requests.begin(), requests.end());
  ServingRun run;
  double t = 0;
  std::vector<bool> notified;  // per record: its completion went to the closed loop
  for (;;) {
    while (!pending.empty() && pending.front().arrival_s <= t) {
      scheduler.arrive(pending.front());
      pending.pop_front();
    }
    const StepPlan plan = scheduler.plan(t);
    if (plan.empty()) {
      if (!pending.empty()) {
        t = std::max(t, pending.front().arrival_s);
        continue;
      }
      if (scheduler.idle()) break;
      std::string msg = "serving: requests that can never be scheduled (nothing runs, nothing more arrives):";
      for (const std::string& line : scheduler.blocked(t)) msg += "\n  " + line;
      throw ServingStuck(msg);
    }
    const double end = runner.run(plan, t);
    if (!(end >= t)) throw std::logic_error("serving: the step runner returned an end before the step's start");
    scheduler.finish_step(end);
    ++run.steps;
    t = end;
    if (closed != nullptr) {
      const std::vector<RequestRecord>& recs = scheduler.records();
      notified.resize(recs.size(), false);
      for (const StepItem& it : plan.items) {
        if (notified[it.request] || !recs[it.request].finished()) continue;
        notified[it.request] = true;
        Request next;
        if (closed->completed(recs[it.request].request.id, end, next)) {
          const auto at = std::upper_bound(pending.begin(), pending.end(), next.arrival_s,
                                           [](double a, const Request& r) { return a < r.arrival_s; });
          pending.insert(at, next);
        }
      }
    }
  }
  run.end_s = t;
  return run;
}

}  // namespace sohusim::workloads
