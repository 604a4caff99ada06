#include "sohusim/workloads/serving_scheduler.hpp"

#include <algorithm>
#include <stdexcept>

namespace sohusim::workloads {

SchedulerKind parse_scheduler_kind(const std::string& text) {
  if (text == "static") return SchedulerKind::Static;
  if (text == "continuous") return SchedulerKind::Continuous;
  if (text == "chunked") return SchedulerKind::Chunked;
  throw std::invalid_argument("scheduler: `" + text + "` is not static, continuous or chunked");
}

const char* to_string(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::Static:
      return "static";
    case SchedulerKind::Continuous:
      return "continuous";
    case SchedulerKind::Chunked:
      return "chunked";
  }
  return "?";
}

void SchedulerOptions::validate() const {
  if (max_batch == 0) throw std::invalid_argument("scheduler: max_batch must be >= 1");
  if (max_tokens == 0) throw std::invalid_argument("scheduler: max_tokens must be >= 1");
  if (max_positions == 0) throw std::invalid_argument("scheduler: max_positions must be >= 1");
  // Without chunking a prompt is computed in one step: the longest one a sequence can need
  // (a recompute of max_positions - 1 tokens) must fit the step's budget.
  if (kind != SchedulerKind::Chunked && max_tokens < max_positions)
    throw std::invalid_argument("scheduler: max_tokens (" + std::to_string(max_tokens) +
                                ") must be at least the model's positions (" + std::to_string(max_positions) +
                                ") unless prefill is chunked");
}

std::uint32_t StepPlan::prefill_tokens() const {
  std::uint32_t n = 0;
  for (const StepItem& i : items) n += i.prefill ? i.tokens : 0;
  return n;
}

std::uint32_t StepPlan::decodes() const {
  std::uint32_t n = 0;
  for (const StepItem& i : items) n += i.prefill ? 0 : 1;
  return n;
}

std::uint32_t StepPlan::sampled() const {
  std::uint32_t n = 0;
  for (const StepItem& i : items) n += i.samples ? 1 : 0;
  return n;
}

ServingScheduler::ServingScheduler(const SchedulerOptions& options, const KvCacheOptions& kv,
                                   const counters::Scope& scope)
    : options_(options),
      kv_(kv, scope),
      steps_(scope.counter("steps", "steps", "model steps the scheduler planned and saw finish")),
      rejected_(scope.counter("rejected", "requests",
                              "requests refused at arrival (too long for the model or the KV cache)")) {
  options_.validate();
}

void ServingScheduler::arrive(const Request& r) {
  RequestRecord rec;
  rec.request = r;
  const std::uint64_t total = std::uint64_t{r.input} + r.output;
  if (total > options_.max_positions) {
    rec.rejected = true;
    rec.reject_reason = std::to_string(r.input) + " + " + std::to_string(r.output) + " tokens exceed the model's " +
                        std::to_string(options_.max_positions) + " positions";
  } else if (!kv_.admittable(total)) {
    rec.rejected = true;
    rec.reject_reason = std::to_string(total) + " positions need " + std::to_string(kv_.blocks_for(total)) +
                        " KV blocks; the cache admits at most " + std::to_string(kv_.admittable_blocks());
  }
  records_.push_back(rec);
  if (rec.rejected) {
    rejected_.inc();
    return;
  }
  Seq s;
  s.request = records_.size() - 1;
  s.prompt = r.input;
  waiting_.push_back(s);
}

bool ServingScheduler::idle() const {
  return waiting_.empty() && running_.empty() && swapped_.empty();
}

std::vector<std::string> ServingScheduler::blocked(double now_s) const {
  std::vector<std::string> out;
  const auto why = [&](const Seq& s, bool swapped) {
    const Request& r = records_[s.request].request;
    std::string line = "request " + std::to_string(r.id) + (swapped ? " (swapped out)" : "") + ": ";
    if (r.arrival_s > now_s) return line + "arrives at " + std::to_string(r.arrival_s) + " s";
    const std::uint64_t need = kv_.blocks_for(swapped ? kv_.tokens(s.request) : s.prompt);
    return line + "needs " + std::to_string(need) + " KV blocks, " + std::to_string(kv_.blocks_free()) + " of " +
           std::to_string(kv_.options().blocks) + " free, " + std::to_string(running_.size()) + " running";
  };
  for (const Seq& s : swapped_) out.push_back(why(s, true));
  for (const Seq& s : waiting_) out.push_back(why(s, false));
  return out;
}

void ServingScheduler::preempt_last(StepPlan& plan) {
  Seq victim = running_.back();
  running_.pop_back();
  RequestRecord& rec = records_[victim.request];
  ++rec.preemptions;
  if (options_.swap) {
    plan.swap_out_bytes += kv_.swap_out(victim.request);
    swapped_.push_back(victim);
    return;
  }
  // Recompute: everything the sequence has (its prompt and the tokens it generated) is
  // prefilled again when it is readmitted; that prefill yields its next token.
  kv_.release(victim.request, /*preempted=*/true);
  victim.prompt = rec.request.input + victim.generated;
  victim.prefilled = 0;
  waiting_.push_front(victim);
}

StepPlan ServingScheduler::plan(double now_s) {
  if (!current_.empty()) throw std::logic_error("ServingScheduler::plan: the previous step has not finished");
  StepPlan plan;
  std::uint32_t budget = options_.max_tokens;
  const bool is_static = options_.kind == SchedulerKind::Static;
  const bool chunked = options_.kind == SchedulerKind::Chunked;

  // Decodes of the running sequences first, each needing one more KV position.
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Seq& s = running_[i];
    if (s.prefilled < s.prompt) continue;  // still in its prompt (chunked)
    bool preempted_self = false;
    while (!kv_.append(s.request)) {
      const bool last = i + 1 == running_.size();
      preempt_last(plan);
      if (last) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) break;
    plan.items.push_back(StepItem{s.request, 1, static_cast<std::uint32_t>(kv_.tokens(s.request)), false, true});
    budget = budget > 0 ? budget - 1 : 0;
  }
  // Swapped sequences come back before anything new is admitted.
  if (!is_static) {
    while (!swapped_.empty() && running_.size() < options_.max_batch && budget > 0 &&
           kv_.can_swap_in(swapped_.front().request)) {
      Seq s = swapped_.front();
      swapped_.pop_front();
      plan.swap_in_bytes += kv_.swap_in(s.request);
      running_.push_back(s);
    }
  }
  // Prompts under way get the next chunk (chunked prefill).
  for (Seq& s : running_) {
    if (s.prefilled >= s.prompt || budget == 0) continue;
    const std::uint32_t chunk = std::min(s.prompt - s.prefilled, budget);
    budget -= chunk;
    plan.items.push_back(StepItem{s.request, chunk, s.prefilled + chunk, true, s.prefilled + chunk == s.prompt});
  }
  // New sequences, first come first served; the head of the queue blocks the rest. A static
  // batch prefills its prompts together whatever the token budget.
  if (!is_static || running_.empty()) {
    while (!waiting_.empty() && running_.size() < options_.max_batch && swapped_.empty()) {
      Seq s = waiting_.front();
      if (records_[s.request].request.arrival_s > now_s || !kv_.can_admit(s.prompt)) break;
      std::uint32_t chunk = s.prompt;
      if (chunked) chunk = std::min(s.prompt, budget);
      if (chunk == 0 || (!is_static && chunk > budget)) break;
      kv_.admit(s.request, s.prompt);
      budget -= std::min(chunk, budget);
      plan.items.push_back(StepItem{s.request, chunk, chunk, true, chunk == s.prompt});
      waiting_.pop_front();
      running_.push_back(s);
    }
  }
  for (const StepItem& it : plan.items) {
    RequestRecord& rec = records_[it.request];
    if (rec.first_scheduled_s < 0) rec.first_scheduled_s = now_s;
  }
  current_ = plan;
  current_start_s_ = now_s;
  return plan;
}

void ServingScheduler::finish_step(double end_s) {
  if (end_s < current_start_s_) throw std::logic_error("ServingScheduler::finish_step: the step ends before it began");
  for (const StepItem& it : current_.items) {
    const auto sit =
        std::find_if(running_.begin(), running_.end(), [&](const Seq& s) { return s.request == it.request; });
    if (sit == running_.end()) continue;  // preempted after its item was planned
    Seq& s = *sit;
    RequestRecord& rec = records_[s.request];
    if (it.prefill) {
      s.prefilled += it.tokens;
      if (s.prefilled < s.prompt) continue;  // more chunks to come
    }
    ++s.generated;
    rec.token_times_s.push_back(end_s);
    if (s.generated >= rec.request.output) {
      kv_.release(s.request);
      running_.erase(sit);
    }
  }
  current_ = StepPlan{};
  steps_.inc();
}

}  // namespace sohusim::workloads
