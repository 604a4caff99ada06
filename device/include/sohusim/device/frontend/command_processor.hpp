#pragma once
// Command processor: the device side of the NVMe-style queues (queue_pair.hpp). It owns
// the admin queue pair (set up from AQA/ASQ/ACQ when software enables the device) and the
// I/O queue pairs software creates with admin commands, and for each submission queue runs
// one fetch-execute loop:
//
//   wait for the SQ tail doorbell -> DMA-read up to fetch_batch entries from host memory
//   over PCIe (through the IOMMU) -> per entry: decode/check/dispatch (command_latency),
//   execute (queue admin commands: here; I/O and device admin commands: the CommandBackend)
//   -> DMA-write the 16-byte completion entry (phase bit, SQ head, SQ id, command id,
//   status) -> MSI-X on the CQ's vector, coalesced, raised through the FunctionSignals.
//
// Two interfaces connect it: FunctionSignals (function_signals.hpp), to the PCI function
// whose registers it serves (interrupts, error log, STATUS.RDY), and CommandBackend
// (command_backend.hpp), to the device that runs the commands (sohu_device.hpp, which hands
// I/O commands to its CommandExecutor).
//
// Trace (the "command processor" thread track): a `fetch` slice per batch of entries, one
// slice per command named by its opcode (GEMM, DMA_COPY, ...; admin commands by theirs), a
// `completion` slice per completion entry written and an `MSI-X` slice per interrupt
// raised. Each carries the flows of the correlation ids it serves (docs/trace.md, "Flows in a simulation"), so
// that a runtime call's flow runs doorbell -> fetch -> command -> engines -> completion ->
// interrupt before the driver reaps it. With trace.detail=summary the flow skips the
// middle of a long program (set_trace_summary).
//
// Commands of one queue run in order (a queue is a stream); queues run concurrently and
// contend for the engines, the DMA channels and the PCIe link. FENCE and the FENCE_BEFORE
// flag are therefore satisfied by construction. Queues are not arbitrated against each other
// (each has its own fetch loop); the ARBITRATION feature is stored and read back only.
//
// Interrupt coalescing (per CQ; defaults from the INTERRUPTS page, changed for all I/O CQs
// by SET_FEATURES INT_COALESCING): an interrupt is raised after `count` completions, or
// `time` after the first completion not yet signalled, whichever comes first.
//
// Errors: a bad command completes with its status and an error-log entry; a bad doorbell
// (unknown queue, value beyond the queue's size, device disabled) is logged with
// INVALID_DOORBELL / DEVICE_DISABLED and raises the error interrupt where enabled; a failed
// fetch or completion write (IOMMU fault) is logged as HOST_DMA_ERROR and stops that queue.
// Other queues keep running. Disable (CTRL.EN 1->0) or reset abandons every queue: commands
// in flight finish their timing but post nothing; the device can be enabled again.
//
// Stats (<prefix>.cp): commands_fetched, commands_completed, commands_failed,
// admin_commands, fetch_reads, completions_written, interrupts, doorbell_errors,
// queue_depth (gauge: fetched and not completed, over all queues), submit_to_start and
// start_to_complete (ns distributions).
#include <array>
#include <cstdint>
#include <deque>
#include <memory>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/device/device_params.hpp"
#include "sohusim/device/frontend/command.hpp"
#include "sohusim/device/frontend/command_backend.hpp"
#include "sohusim/device/frontend/error_log.hpp"
#include "sohusim/device/frontend/function_signals.hpp"
#include "sohusim/device/frontend/queue_pair.hpp"
#include "sohusim/device/units/memory_port.hpp"

namespace sohusim::device {

class CommandProcessor {
 public:
  static constexpr unsigned kMaxQueues = 64;  // queue ids 0 (admin) .. 63

  /// `function` gets the interrupts, errors and readiness; `backend` runs what the queues
  /// do not (I/O and device-level admin commands). Both must outlive the processor.
  CommandProcessor(const DeviceParams& params, MemoryPort& host, FunctionSignals& function, CommandBackend& backend,
                   const counters::Scope& scope, counters::TraceRecorder* trace, counters::TrackId track);

  // ---- from register writes (no wait(): called in the BAR handler) ----
  /// CTRL.EN 0->1 with the admin queue registers. Empty string if accepted.
  std::string enable(std::uint32_t aqa, std::uint64_t asq, std::uint64_t acq);
  /// CTRL.EN 1->0, CTRL.RST, FLR: every queue abandoned.
  void disable();
  bool enabled() const { return enabled_; }
  void sq_doorbell(unsigned qid, std::uint32_t value);
  void cq_doorbell(unsigned qid, std::uint32_t value);
  /// trace.detail=summary: a correlation id's flow steps through the first command of a run
  /// of commands with that id and the one that asks for an interrupt (not every command),
  /// and only completions that raise an interrupt or carry an error get a slice.
  void set_trace_summary(bool summary) { summary_ = summary; }
  void set_default_coalescing(unsigned count, std::uint64_t time_ns) {
    default_count_ = count;
    default_time_ps_ = time_ns * 1000;
  }

 private:
  void sq_loop(std::shared_ptr<SubmissionQueue> sq, std::uint64_t epoch);
  void coalesce_loop(std::shared_ptr<CompletionQueue> cq, std::uint64_t epoch);
  bool post(const std::shared_ptr<CompletionQueue>& cq, const Cqe& e, bool irq, std::uint64_t epoch,
            std::uint64_t correlation);
  void raise(CompletionQueue& cq);
  // Trace (only when tracing): the fetch of a batch of entries, a command's slice name.
  bool tracing() const { return trace_ != nullptr && trace_->enabled(); }
  void trace_fetch(unsigned qid, const std::vector<std::uint8_t>& entries, std::uint64_t start_ns);
  counters::NameId command_name(bool admin, std::uint8_t opcode);
  Outcome admin(const Sqe& sqe);
  Outcome create_cq(const Sqe& sqe);
  Outcome create_sq(const Sqe& sqe);
  Outcome delete_sq(const Sqe& sqe);
  Outcome delete_cq(const Sqe& sqe);
  Outcome features(const Sqe& sqe, bool set);
  void log(Status s, std::uint16_t qid, std::uint16_t cid, std::uint64_t addr, std::string msg);
  void start_cq(std::shared_ptr<CompletionQueue> cq);

  const DeviceParams& p_;
  MemoryPort& host_;
  FunctionSignals& function_;
  CommandBackend& backend_;
  counters::TraceRecorder* trace_;
  counters::TrackId track_;
  std::array<counters::NameId, 512> names_{};  // [admin * 256 + opcode], interned on first use
  bool summary_ = false;
  // Per SQ, the correlation id of the entry fetched / command started before (summary flows).
  std::array<std::uint64_t, kMaxQueues> last_fetched_flow_{}, last_command_flow_{};
  bool enabled_ = false;
  std::uint64_t epoch_ = 0;
  std::array<std::shared_ptr<SubmissionQueue>, kMaxQueues> sq_{};
  std::array<std::shared_ptr<CompletionQueue>, kMaxQueues> cq_{};
  // Doorbell times per SQ, for submit-to-start: (cumulative entries submitted, time).
  std::array<std::deque<std::pair<std::uint64_t, std::uint64_t>>, kMaxQueues> submitted_{};
  std::array<std::uint64_t, kMaxQueues> submitted_total_{}, fetched_total_{};
  unsigned default_count_ = 0;
  std::uint64_t default_time_ps_ = 0;
  unsigned arbitration_burst_ = 1;
  unsigned depth_ = 0;
  std::uint64_t busy_ps_ = 0, busy_since_ps_ = 0;  // `busy_ns`: closed stretches, the open one's start
  void set_depth(unsigned depth);                  // queue_depth and busy_ns follow
  counters::Counter& fetched_;
  counters::Counter& completed_;
  counters::Counter& failed_;
  counters::Counter& admin_commands_;
  counters::Counter& fetch_reads_;
  counters::Counter& completions_written_;
  counters::Counter& interrupts_;
  counters::Counter& doorbell_errors_;
  counters::Gauge& queue_depth_;
  counters::Distribution& submit_to_start_;
  counters::Distribution& start_to_complete_;
};

}  // namespace sohusim::device
