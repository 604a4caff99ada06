#pragma once
// ServingScheduler: the host-side scheduler of a serving engine, deciding what each model step
// (one forward pass over the batch) computes. It owns the sequences' states and the KV
// cache's bookkeeping (KvBlockManager); the caller runs each planned step on the devices,
// tells the scheduler when it ended (finish_step), and reads the requests' token times.
//
// Policies (SchedulerKind), all first-come first-served:
//   static      today's `sohusim run`: when nothing runs, up to max_batch waiting requests
//               start together; their prompts are prefilled in one step, then the batch
//               decodes until its last sequence ends; arrivals meanwhile wait.
//   continuous  iteration-level batching (Orca, vLLM): every step decodes one token of each
//               running sequence and admits waiting requests whose whole prompt fits the
//               step's token budget (max_tokens) and the KV cache; up to max_batch sequences.
//   chunked     continuous, plus chunked prefill (Sarathi-Serve): decodes first, then the
//               budget left goes to prompt chunks, so a long prompt is spread over steps
//               and never stalls the running decodes.
// When a running sequence needs a KV block and none is free, the scheduler preempts the most
// recently admitted running sequence (recompute: its blocks are freed and it goes back to the
// front of the queue, to be prefilled again with the tokens it had generated; or swap, when
// `swap` is set: its blocks go to host memory, the step plan carries the bytes to move, and it
// comes back before any waiting request when blocks allow).
//
// A request whose prompt plus output exceeds max_positions is rejected at arrival and counted,
// never scheduled; one whose positions could never all be in the KV cache (above its
// watermark) likewise.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/workloads/kv_block_manager.hpp"
#include "sohusim/workloads/request_stream.hpp"

namespace sohusim::workloads {

enum class SchedulerKind { Static, Continuous, Chunked };
SchedulerKind parse_scheduler_kind(const std::string& text);  // static|continuous|chunked
const char* to_string(SchedulerKind k);

struct SchedulerOptions {
  SchedulerKind kind = SchedulerKind::Continuous;
  unsigned max_batch = 64;             // sequences in one step
  std::uint32_t max_tokens = 8192;     // tokens computed in one step (prompt tokens + decodes)
  std::uint32_t max_positions = 8192;  // the model's context (prompt + output)
  bool swap = false;                   // preempt by swapping to host memory instead of recomputing
  void validate() const;               // std::invalid_argument naming the field
};

/// One sequence's work in a step: `tokens` new positions computed (a prompt chunk, or 1 for a
/// decode), attending over `context` positions in all (those before plus these).
struct StepItem {
  std::uint64_t request = 0;
  std::uint32_t tokens = 0;
  std::uint32_t context = 0;
  bool prefill = false;  // a prompt chunk (the last one also yields the first output token)
  bool samples = true;   // the step yields this sequence's next token (a decode, or a prompt's last chunk)
};

struct StepPlan {
  std::vector<StepItem> items;       // prefill chunks and decodes, in the order admitted
  std::uint64_t swap_out_bytes = 0;  // KV to move device -> host before the step
  std::uint64_t swap_in_bytes = 0;   // and host -> device
  std::uint32_t prefill_tokens() const;
  std::uint32_t decodes() const;
  std::uint32_t sampled() const;  // sequences that get a token from this step
  bool empty() const { return items.empty() && swap_out_bytes == 0 && swap_in_bytes == 0; }
};

/// What happened to one request; times in seconds from the start of the run.
struct RequestRecord {
  Request request;
  bool rejected = false;
  std::string reject_reason;
  double first_scheduled_s = -1;      // its first step's start (queueing ends)
  std::vector<double> token_times_s;  // when each output token was produced (step ends)
  unsigned preemptions = 0;
  bool finished() const { return !rejected && token_times_s.size() == request.output; }
};

class ServingScheduler {
 public:
  ServingScheduler(const SchedulerOptions& options, const KvCacheOptions& kv, const counters::Scope& scope);

  /// A request arrives (now_s >= its arrival); rejected ones are recorded as such.
  void arrive(const Request& r);
  /// The next step's plan at `now_s` (empty: nothing to run until a request arrives).
  StepPlan plan(double now_s);
  /// The planned step ran from its start to `end_s`: prefills that completed and decodes
  /// produce their token at end_s; finished sequences free their blocks.
  void finish_step(double end_s);

  bool idle() const;  // nothing waiting, running or swapped
  /// Why each waiting or swapped request is not scheduled now, one line each.
  std::vector<std::string> blocked(double now_s) const;
  std::size_t waiting() const { return waiting_.size(); }
  std::size_t running() const { return running_.size(); }
  const std::vector<RequestRecord>& records() const { return records_; }
  const KvBlockManager& kv() const { return kv_; }

 private:
  struct Seq {
    std::uint64_t request = 0;    // index into records_
    std::uint32_t prompt = 0;     // positions to prefill (the prompt, plus generated tokens after a recompute)
    std::uint32_t prefilled = 0;  // of them, computed
    std::uint32_t generated = 0;  // output tokens so far
  };
  void preempt_last(StepPlan& plan);

  SchedulerOptions options_;
  KvBlockManager kv_;
  std::vector<RequestRecord> records_;
  std::deque<Seq> waiting_;   // FCFS
  std::vector<Seq> running_;  // admission order
  std::deque<Seq> swapped_;   // preempted by swap, oldest first
  StepPlan current_;          // the step planned and not finished
  double current_start_s_ = 0;
  counters::Counter& steps_;
  counters::Counter& rejected_;
};

}  // namespace sohusim::workloads
