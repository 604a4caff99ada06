#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/device/frontend/command_processor.hpp"

#include <sstream>
#include <vector>

#include "hex.hpp"
#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::device {

using detail::hex;

namespace {
std::uint64_t now_ps() {
  return sc_core::sc_time_stamp().value();
}
}  // namespace

CommandProcessor::CommandProcessor(const DeviceParams& params, MemoryPort& host, FunctionSignals& function,
                                   CommandBackend& backend, const counters::Scope& s, counters::TraceRecorder* trace,
                                   counters::TrackId track)
    : p_(params),
      host_(host),
      function_(function),
      backend_(backend),
      trace_(trace),
      track_(track),
      fetched_(s.counter("commands_fetched", "count", "submission entries fetched from host memory")),
      completed_(s.counter("commands_completed", "count", "commands completed (any status)")),
      failed_(s.counter("commands_failed", "count", "commands completed with an error status")),
      admin_commands_(s.counter("admin_commands", "count", "admin commands completed")),
      fetch_reads_(s.counter("fetch_reads", "count", "DMA reads of submission entries")),
      completions_written_(s.counter("completions_written", "count", "completion entries DMA-written")),
      interrupts_(s.counter("interrupts", "count", "MSI-X messages raised for completion queues")),
      doorbell_errors_(s.counter("doorbell_errors", "count", "doorbell writes rejected")),
      queue_depth_(s.gauge("queue_depth", "commands", "commands fetched and not yet completed, all queues")),
      submit_to_start_(s.distribution("submit_to_start", "ns", "doorbell to command start",
                                      counters::DistributionSpec::log(10, 1e10, 80))),
      start_to_complete_(s.distribution("start_to_complete", "ns", "command start to completion entry written",
                                        counters::DistributionSpec::log(10, 1e10, 80))) {
  // Read at any moment (a sampler's tick), it includes the stretch still going on, so a
  // long command counts as it runs instead of in one lump when it ends.
  s.registry().formula(s.prefix() + ".busy_ns", "ns", "time with at least one command fetched and not yet completed",
                       [this] {
                         const std::uint64_t open = depth_ > 0 ? now_ps() - busy_since_ps_ : 0;
                         return static_cast<double>(busy_ps_ + open) / 1000.0;
                       });
}

void CommandProcessor::set_depth(unsigned depth) {
  const std::uint64_t now = now_ps();
  if (depth_ == 0 && depth > 0) busy_since_ps_ = now;
  if (depth_ > 0 && depth == 0) busy_ps_ += now - busy_since_ps_;
  depth_ = depth;
  queue_depth_.set(depth_);
}

void CommandProcessor::log(Status s, std::uint16_t qid, std::uint16_t cid, std::uint64_t addr, std::string msg) {
  ErrorEntry e;
  e.status = static_cast<std::uint16_t>(s);
  e.queue = qid;
  e.command = cid;
  e.address = addr;
  e.time_ps = now_ps();
  e.message = std::move(msg);
  function_.report_error(std::move(e));
}

std::string CommandProcessor::enable(std::uint32_t aqa, std::uint64_t asq, std::uint64_t acq) {
  const std::uint32_t sqs = ((aqa & SOHU_AQA_ASQS_MASK) >> SOHU_AQA_ASQS_SHIFT) + 1;
  const std::uint32_t cqs = ((aqa & SOHU_AQA_ACQS_MASK) >> SOHU_AQA_ACQS_SHIFT) + 1;
  if (sqs < 2 || cqs < 2 || sqs > p_.max_queue_entries || cqs > p_.max_queue_entries) {
    return "AQA: admin queue sizes " + std::to_string(sqs) + "/" + std::to_string(cqs) + " entries must be in 2 .. " +
           std::to_string(p_.max_queue_entries);
  }
  if (asq % 4096 != 0 || acq % 4096 != 0 || asq == 0 || acq == 0) {
    return "ASQ/ACQ: admin queue bases " + hex(asq) + "/" + hex(acq) + " must be non-zero and 4 KiB aligned";
  }
  ++epoch_;
  enabled_ = true;
  auto cq = std::make_shared<CompletionQueue>();
  cq->id = 0;
  cq->base = acq;
  cq->entries = cqs;
  cq->vector = 0;
  cq->irq_enabled = true;
  cq->sq_refs = 1;
  cq_[0] = cq;
  auto sq = std::make_shared<SubmissionQueue>();
  sq->id = 0;
  sq->base = asq;
  sq->entries = sqs;
  sq->cqid = 0;
  sq_[0] = sq;
  submitted_[0].clear();
  submitted_total_[0] = fetched_total_[0] = 0;
  const std::uint64_t epoch = epoch_;
  start_cq(cq);
  sc_core::sc_spawn([this, sq, epoch] {
    sc_core::wait(sc_core::sc_time::from_value(p_.enable_latency_ps));
    if (epoch != epoch_) return;
    function_.set_ready(true);
    sq_loop(sq, epoch);
  });
  return {};
}

void CommandProcessor::disable() {
  ++epoch_;
  enabled_ = false;
  for (unsigned q = 0; q < kMaxQueues; ++q) {
    if (sq_[q]) {
      sq_[q]->deleted = true;
      sq_[q]->doorbell.notify(sc_core::SC_ZERO_TIME);
      sq_[q].reset();
    }
    if (cq_[q]) {
      cq_[q]->deleted = true;
      cq_[q]->space.notify(sc_core::SC_ZERO_TIME);
      cq_[q]->timer.notify(sc_core::SC_ZERO_TIME);
      cq_[q].reset();
    }
    submitted_[q].clear();
  }
  set_depth(0);
  function_.set_ready(false);
}

void CommandProcessor::sq_doorbell(unsigned qid, std::uint32_t value) {
  if (!enabled_) {
    doorbell_errors_.inc();
    log(Status::DeviceDisabled, static_cast<std::uint16_t>(qid), 0, value,
        "SQ " + std::to_string(qid) + " tail doorbell written while the device is disabled");
    return;
  }
  std::shared_ptr<SubmissionQueue>& sq = sq_[qid % kMaxQueues];
  if (qid >= kMaxQueues || !sq) {
    doorbell_errors_.inc();
    log(Status::InvalidDoorbell, static_cast<std::uint16_t>(qid), 0, value,
        "SQ tail doorbell of queue " + std::to_string(qid) + ", which does not exist");
    return;
  }
  if (value >= sq->entries) {
    doorbell_errors_.inc();
    log(Status::InvalidDoorbell, static_cast<std::uint16_t>(qid), 0, value,
        "SQ " + std::to_string(qid) + " tail doorbell " + std::to_string(value) + " is beyond the queue's " +
            std::to_string(sq->entries) + " entries");
    return;
  }
  const std::uint32_t added = (value + sq->entries - sq->tail) % sq->entries;
  // A tail that would overrun entries not yet fetched (more than size-1 outstanding) is
  // software overwriting its own commands: rejected like an out-of-range tail.
  if (ring_used(sq->head, value, sq->entries) < ring_used(sq->head, sq->tail, sq->entries)) {
    doorbell_errors_.inc();
    log(Status::InvalidDoorbell, static_cast<std::uint16_t>(qid), 0, value,
        "SQ " + std::to_string(qid) + " tail doorbell " + std::to_string(value) + " moves behind the device's head " +
            std::to_string(sq->head));
    return;
  }
  sq->tail = value;
  submitted_total_[qid] += added;
  submitted_[qid].emplace_back(submitted_total_[qid], now_ps());
  sq->doorbell.notify(sc_core::SC_ZERO_TIME);
}

void CommandProcessor::cq_doorbell(unsigned qid, std::uint32_t value) {
  if (!enabled_) {
    doorbell_errors_.inc();
    log(Status::DeviceDisabled, static_cast<std::uint16_t>(qid), 0, value,
        "CQ " + std::to_string(qid) + " head doorbell written while the device is disabled");
    return;
  }
  std::shared_ptr<CompletionQueue>& cq = cq_[qid % kMaxQueues];
  if (qid >= kMaxQueues || !cq || value >= cq->entries) {
    doorbell_errors_.inc();
    log(Status::InvalidDoorbell, static_cast<std::uint16_t>(qid), 0, value,
        !cq ? "CQ head doorbell of queue " + std::to_string(qid) + ", which does not exist"
            : "CQ " + std::to_string(qid) + " head doorbell " + std::to_string(value) + " is beyond the queue's " +
                  std::to_string(cq->entries) + " entries");
    return;
  }
  cq->head = value;
  cq->space.notify(sc_core::SC_ZERO_TIME);
}

void CommandProcessor::start_cq(std::shared_ptr<CompletionQueue> cq) {
  const std::uint64_t epoch = epoch_;
  sc_core::sc_spawn([this, cq, epoch] { coalesce_loop(cq, epoch); });
}

void CommandProcessor::coalesce_loop(std::shared_ptr<CompletionQueue> cq, std::uint64_t epoch) {
  for (;;) {
    sc_core::wait(cq->timer);
    if (cq->deleted || epoch != epoch_) return;
    if (cq->pending > 0) raise(*cq);
  }
}

counters::NameId CommandProcessor::command_name(bool admin, std::uint8_t opcode) {
  counters::NameId& id = names_[(admin ? 256u : 0u) + opcode];
  if (id == 0) {
    const CommandDesc* d = find_command(admin ? CommandQueue::Admin : CommandQueue::Io, opcode);
    id = trace_->intern(d != nullptr ? std::string(d->name)
                                     : std::string(admin ? "admin opcode " : "opcode ") + hex(opcode));
  }
  return id;
}

void CommandProcessor::trace_fetch(unsigned qid, const std::vector<std::uint8_t>& entries, std::uint64_t start_ns) {
  std::vector<counters::Flow> flows;  // each correlation id once, in entry order
  for (std::size_t off = 0; off + 64 <= entries.size(); off += 64) {
    const std::uint64_t c = Sqe::from_bytes(entries.data() + off).correlation();
    const bool continues = c == last_fetched_flow_[qid];
    last_fetched_flow_[qid] = c;
    if (c == 0 || (summary_ && continues)) continue;
    bool seen = false;
    for (const counters::Flow& f : flows) seen = seen || f.id == c;
    if (!seen) flows.push_back(counters::Flow{c});
  }
  if (summary_ && flows.empty()) return;  // summary: only the fetches a flow goes through
  const counters::Arg args[] = {{"entries", entries.size() / 64}, {"bytes", entries.size()}};
  counters::TraceEvent e;
  e.type = counters::EventType::Complete;
  e.track = track_;
  e.ts = start_ns;
  e.duration = sim::to_ns(sc_core::sc_time_stamp()) - start_ns;
  e.name = "fetch";
  e.extras.args = counters::ConstSpan<counters::Arg>(args, 2);
  e.extras.flows = counters::ConstSpan<counters::Flow>(flows.data(), flows.size());
  trace_->record(e);
}

void CommandProcessor::raise(CompletionQueue& cq) {
  cq.pending = 0;
  cq.timer.cancel();
  interrupts_.inc();
  if (tracing()) {
    std::vector<counters::Flow> flows;
    flows.reserve(cq.pending_flows.size());
    for (const std::uint64_t c : cq.pending_flows) flows.push_back(counters::Flow{c});
    const counters::Arg args[] = {{"vector", cq.vector}, {"cq", cq.id}};
    // A zero-length slice rather than an instant: at equal times the writers order complete
    // slices by recording order, so it follows the completion write it signals.
    counters::TraceEvent e;
    e.type = counters::EventType::Complete;
    e.track = track_;
    e.ts = sim::to_ns(sc_core::sc_time_stamp());
    e.name = "MSI-X";
    e.extras.args = counters::ConstSpan<counters::Arg>(args, 2);
    e.extras.flows = counters::ConstSpan<counters::Flow>(flows.data(), flows.size());
    trace_->record(e);
  }
  cq.pending_flows.clear();
  function_.raise_vector(cq.vector);
}

bool CommandProcessor::post(const std::shared_ptr<CompletionQueue>& cq, const Cqe& e, bool irq, std::uint64_t epoch,
                            std::uint64_t correlation) {
  while (ring_next(cq->tail, cq->entries) == cq->head) {  // full: wait for software to consume
    sc_core::wait(cq->space);
    if (cq->deleted || epoch != epoch_) return false;
  }
  Cqe entry = e;
  entry.phase = cq->phase;
  std::uint8_t bytes[16];
  entry.to_bytes(bytes);
  const std::uint64_t addr = cq->base + static_cast<std::uint64_t>(cq->tail) * 16;
  const counters::TimeNs write_start = sim::to_ns(sc_core::sc_time_stamp());
  const PortStatus written = host_.access(true, addr, bytes, 16, correlation);
  if (tracing() && (!summary_ || (irq && cq->irq_enabled) || e.status != 0)) {
    const counters::TimeNs d = sim::to_ns(sc_core::sc_time_stamp()) - write_start;
    if (correlation != 0) {
      trace_->complete(track_, write_start, d, "completion",
                       {counters::Arg{"cid", e.cid}, counters::Arg{"status", e.status}}, {counters::Flow{correlation}},
                       correlation);
    } else {
      trace_->complete(track_, write_start, d, "completion",
                       {counters::Arg{"cid", e.cid}, counters::Arg{"status", e.status}});
    }
  }
  if (written != PortStatus::Ok) {
    log(Status::HostDmaError, cq->id, e.cid, addr,
        "completion write to CQ " + std::to_string(cq->id) + " at " + hex(addr) + " failed");
    return false;
  }
  if (cq->deleted || epoch != epoch_) return false;
  completions_written_.inc();
  cq->tail = ring_next(cq->tail, cq->entries);
  if (cq->tail == 0) cq->phase = !cq->phase;
  if (irq && cq->irq_enabled) {
    ++cq->pending;
    if (tracing() && correlation != 0 && (cq->pending_flows.empty() || cq->pending_flows.back() != correlation))
      cq->pending_flows.push_back(correlation);
    const unsigned threshold = cq->coalesce_count <= 1 ? 1 : cq->coalesce_count;
    if (cq->pending >= threshold) {
      raise(*cq);
    } else if (cq->pending == 1 && cq->coalesce_time_ps > 0) {
      cq->timer.notify(sc_core::sc_time::from_value(cq->coalesce_time_ps));
    }
  }
  return true;
}

void CommandProcessor::sq_loop(std::shared_ptr<SubmissionQueue> sq, std::uint64_t epoch) {
  std::vector<std::uint8_t>& buf = sq->fetch_buffer;
  const unsigned qid = sq->id;
  for (;;) {
    while (sq->head == sq->tail && !sq->deleted && epoch == epoch_) sc_core::wait(sq->doorbell);
    if (sq->deleted || epoch != epoch_) return;
    // Fetch up to fetch_batch entries, not across the end of the ring.
    const std::uint32_t avail = ring_used(sq->head, sq->tail, sq->entries);
    const std::uint32_t n = std::min({avail, p_.fetch_batch, sq->entries - sq->head});
    buf.resize(static_cast<std::size_t>(n) * 64);
    const std::uint64_t addr = sq->base + static_cast<std::uint64_t>(sq->head) * 64;
    fetch_reads_.inc();
    const counters::TimeNs fetch_start = sim::to_ns(sc_core::sc_time_stamp());
    if (host_.access(false, addr, buf.data(), buf.size(), 0) != PortStatus::Ok) {
      log(Status::HostDmaError, static_cast<std::uint16_t>(qid), 0, addr,
          "fetch of SQ " + std::to_string(qid) + " entries at " + hex(addr) +
              " failed (IOMMU fault or unsupported "
              "request); the queue is stopped");
      return;
    }
    if (sq->deleted || epoch != epoch_) return;
    if (tracing()) trace_fetch(qid, buf, fetch_start);
    for (std::uint32_t i = 0; i < n; ++i) {
      const Sqe sqe = Sqe::from_bytes(buf.data() + static_cast<std::size_t>(i) * 64);
      sq->head = ring_next(sq->head, sq->entries);
      fetched_.inc();
      ++sq->in_flight;
      set_depth(depth_ + 1);
      // Submit time: the doorbell that made this entry visible.
      const std::uint64_t index = ++fetched_total_[qid];
      auto& times = submitted_[qid];
      while (!times.empty() && times.front().first < index) times.pop_front();
      const std::uint64_t submitted_ps = times.empty() ? now_ps() : times.front().second;
      sc_core::wait(sc_core::sc_time::from_value(p_.command_latency_ps));
      const std::uint64_t start_ps = now_ps();
      submit_to_start_.sample(static_cast<double>(start_ps - submitted_ps) / 1000.0);
      backend_.command_started(sqe, static_cast<std::uint16_t>(qid));
      Outcome o;
      if (tracing()) {
        const std::uint64_t c = sqe.correlation();
        const counters::NameId name = command_name(qid == 0, sqe.opcode());
        const counters::TimeNs now = sim::to_ns(sc_core::sc_time_stamp());
        const bool continues = c == last_command_flow_[qid] && sqe.no_completion_irq();
        last_command_flow_[qid] = c;
        // Summary: no arguments (a long run has millions of commands), the correlation id stays.
        const counters::Arg args[] = {{"cid", sqe.cid()}, {"queue", qid}};
        const counters::Flow flow[] = {{c}};
        counters::TraceEvent e;
        e.type = counters::EventType::SliceBegin;
        e.track = track_;
        e.ts = now;
        e.name_id = name;
        if (!summary_) e.extras.args = counters::ConstSpan<counters::Arg>(args, 2);
        if (c != 0 && !(summary_ && continues)) e.extras.flows = counters::ConstSpan<counters::Flow>(flow, 1);
        e.extras.correlation_id = c;
        trace_->record(e);
      }
      try {
        if (qid == 0) {
          o = admin(sqe);
          admin_commands_.inc();
        } else {
          o = backend_.execute_io(sqe, static_cast<std::uint16_t>(qid));
        }
      } catch (const std::exception& ex) {  // a model limit fails the command, not the simulation
        o = Outcome::fail(Status::InternalError, std::string("command ") + hex(sqe.opcode()) + ": " + ex.what());
      }
      if (tracing()) trace_->end(track_, sim::to_ns(sc_core::sc_time_stamp()));
      --sq->in_flight;
      set_depth(depth_ > 0 ? depth_ - 1 : 0);
      if (sq->in_flight == 0) sq->drained.notify(sc_core::SC_ZERO_TIME);
      if (epoch != epoch_) return;  // reset while it ran: nothing is posted
      if (!o.ok()) {
        failed_.inc();
        log(o.status, static_cast<std::uint16_t>(qid), sqe.cid(), o.address, o.message);
      }
      Cqe e;
      e.result = o.result;
      e.sq_head = static_cast<std::uint16_t>(sq->head);
      e.sq_id = static_cast<std::uint16_t>(qid);
      e.cid = sqe.cid();
      e.status = static_cast<std::uint16_t>(o.status);
      std::shared_ptr<CompletionQueue> cq = cq_[sq->cqid];
      if (!cq) return;
      if (!post(cq, e, !sqe.no_completion_irq(), epoch, sqe.correlation())) return;
      completed_.inc();
      start_to_complete_.sample(static_cast<double>(now_ps() - start_ps) / 1000.0);
      backend_.command_completed(sqe, static_cast<std::uint16_t>(qid), e.status);
      if (sq->deleted) return;
    }
  }
}

// ---- admin -------------------------------------------------------------------------

Outcome CommandProcessor::admin(const Sqe& sqe) {
  switch (sqe.opcode()) {
    case SOHU_ADMIN_OP_CREATE_CQ:
      return create_cq(sqe);
    case SOHU_ADMIN_OP_CREATE_SQ:
      return create_sq(sqe);
    case SOHU_ADMIN_OP_DELETE_SQ:
      return delete_sq(sqe);
    case SOHU_ADMIN_OP_DELETE_CQ:
      return delete_cq(sqe);
    case SOHU_ADMIN_OP_SET_FEATURES:
      return features(sqe, true);
    case SOHU_ADMIN_OP_GET_FEATURES:
      return features(sqe, false);
    case SOHU_ADMIN_OP_IDENTIFY:
    case SOHU_ADMIN_OP_PMU_CONFIG:
    case SOHU_ADMIN_OP_TRACE_CONFIG:
    case SOHU_ADMIN_OP_FW_STATUS:
    case SOHU_ADMIN_OP_SET_CONTEXT:
    case SOHU_ADMIN_OP_VF_CONTEXT:
      return backend_.execute_admin(sqe);
    default:
      break;
  }
  return Outcome::fail(Status::InvalidOpcode, "admin opcode " + hex(sqe.opcode()) + " is not defined");
}

Outcome CommandProcessor::create_cq(const Sqe& sqe) {
  CreateQueueCmd c{};
  Outcome o = decode(sqe, c, true);
  if (!o.ok()) return o;
  if (c.qid == 0 || c.qid > p_.max_io_queues) {
    return Outcome::fail(Status::InvalidQueueId, "CREATE_CQ: queue id " + std::to_string(c.qid) + " is not in 1 .. " +
                                                     std::to_string(p_.max_io_queues));
  }
  if (cq_[c.qid])
    return Outcome::fail(Status::QueueExists, "CREATE_CQ: CQ " + std::to_string(c.qid) + " already exists");
  if (c.entries < 2 || c.entries > p_.max_queue_entries) {
    return Outcome::fail(Status::InvalidQueueSize, "CREATE_CQ: " + std::to_string(c.entries) +
                                                       " entries (allowed 2 .. " +
                                                       std::to_string(p_.max_queue_entries) + ")");
  }
  if (c.base % 4096 != 0 || c.base == 0) {
    return Outcome::fail(Status::Misaligned, "CREATE_CQ: base " + hex(c.base) + " must be non-zero and 4 KiB aligned",
                         c.base);
  }
  if (c.vector >= p_.msix_vectors) {
    return Outcome::fail(Status::InvalidField, "CREATE_CQ: MSI-X vector " + std::to_string(c.vector) +
                                                   " >= " + std::to_string(p_.msix_vectors) + " vectors");
  }
  auto cq = std::make_shared<CompletionQueue>();
  cq->id = c.qid;
  cq->base = c.base;
  cq->entries = c.entries;
  cq->vector = c.vector;
  cq->irq_enabled = c.ien;
  cq->coalesce_count = default_count_;
  cq->coalesce_time_ps = default_time_ps_;
  cq_[c.qid] = cq;
  start_cq(cq);
  return {};
}

Outcome CommandProcessor::create_sq(const Sqe& sqe) {
  CreateQueueCmd c{};
  Outcome o = decode(sqe, c, false);
  if (!o.ok()) return o;
  if (c.qid == 0 || c.qid > p_.max_io_queues) {
    return Outcome::fail(Status::InvalidQueueId, "CREATE_SQ: queue id " + std::to_string(c.qid) + " is not in 1 .. " +
                                                     std::to_string(p_.max_io_queues));
  }
  if (sq_[c.qid])
    return Outcome::fail(Status::QueueExists, "CREATE_SQ: SQ " + std::to_string(c.qid) + " already exists");
  if (c.cqid == 0 || c.cqid >= kMaxQueues || !cq_[c.cqid]) {
    return Outcome::fail(Status::InvalidQueueId,
                         "CREATE_SQ: completion queue " + std::to_string(c.cqid) + " does not exist");
  }
  if (c.entries < 2 || c.entries > p_.max_queue_entries) {
    return Outcome::fail(Status::InvalidQueueSize, "CREATE_SQ: " + std::to_string(c.entries) +
                                                       " entries (allowed 2 .. " +
                                                       std::to_string(p_.max_queue_entries) + ")");
  }
  if (c.base % 4096 != 0 || c.base == 0) {
    return Outcome::fail(Status::Misaligned, "CREATE_SQ: base " + hex(c.base) + " must be non-zero and 4 KiB aligned",
                         c.base);
  }
  auto sq = std::make_shared<SubmissionQueue>();
  sq->id = c.qid;
  sq->base = c.base;
  sq->entries = c.entries;
  sq->cqid = c.cqid;
  ++cq_[c.cqid]->sq_refs;
  sq_[c.qid] = sq;
  submitted_[c.qid].clear();
  submitted_total_[c.qid] = fetched_total_[c.qid] = 0;
  const std::uint64_t epoch = epoch_;
  sc_core::sc_spawn([this, sq, epoch] { sq_loop(sq, epoch); });
  return {};
}

Outcome CommandProcessor::delete_sq(const Sqe& sqe) {
  QueueIdCmd c{};
  Outcome o = decode(sqe, c);
  if (!o.ok()) return o;
  if (c.qid == 0 || c.qid >= kMaxQueues || !sq_[c.qid]) {
    return Outcome::fail(Status::InvalidQueueId, "DELETE_SQ: SQ " + std::to_string(c.qid) + " does not exist");
  }
  std::shared_ptr<SubmissionQueue> sq = sq_[c.qid];
  // The command executing now finishes first (its completion is posted); entries fetched
  // behind it are dropped with the queue.
  const std::uint64_t epoch = epoch_;
  while (sq->in_flight > 0) {
    sc_core::wait(sq->drained);
    if (epoch != epoch_) return Outcome::fail(Status::AbortedReset, "DELETE_SQ: aborted by a reset");
  }
  sq->deleted = true;
  sq->doorbell.notify(sc_core::SC_ZERO_TIME);
  if (cq_[sq->cqid]) --cq_[sq->cqid]->sq_refs;
  sq_[c.qid].reset();
  return {};
}

Outcome CommandProcessor::delete_cq(const Sqe& sqe) {
  QueueIdCmd c{};
  Outcome o = decode(sqe, c);
  if (!o.ok()) return o;
  if (c.qid == 0 || c.qid >= kMaxQueues || !cq_[c.qid]) {
    return Outcome::fail(Status::InvalidQueueId, "DELETE_CQ: CQ " + std::to_string(c.qid) + " does not exist");
  }
  if (cq_[c.qid]->sq_refs > 0) {
    return Outcome::fail(Status::QueueInUse, "DELETE_CQ: CQ " + std::to_string(c.qid) + " still has " +
                                                 std::to_string(cq_[c.qid]->sq_refs) + " submission queue(s)");
  }
  cq_[c.qid]->deleted = true;
  cq_[c.qid]->timer.notify(sc_core::SC_ZERO_TIME);
  cq_[c.qid].reset();
  return {};
}

Outcome CommandProcessor::features(const Sqe& sqe, bool set) {
  FeatureCmd f{};
  Outcome o = decode(sqe, f, set);
  if (!o.ok()) return o;
  switch (f.fid) {
    case SOHU_FEAT_INT_COALESCING:
      if (set) {
        default_count_ = f.value & 0xFFFF;
        default_time_ps_ = static_cast<std::uint64_t>(f.value2) * 1000;
        for (unsigned q = 1; q < kMaxQueues; ++q) {
          if (cq_[q]) {
            cq_[q]->coalesce_count = default_count_;
            cq_[q]->coalesce_time_ps = default_time_ps_;
          }
        }
      }
      o.result = default_count_ | (static_cast<std::uint64_t>(default_time_ps_ / 1000) << 32);
      return o;
    case SOHU_FEAT_POWER_STATE:
      if (set) return backend_.execute_admin(sqe);
      o.result = backend_.power_state();
      return o;
    case SOHU_FEAT_NUM_QUEUES:
      if (set) return Outcome::fail(Status::InvalidFeature, "SET_FEATURES: NUM_QUEUES is read-only");
      o.result = p_.max_io_queues;
      return o;
    case SOHU_FEAT_ARBITRATION:
      if (set) arbitration_burst_ = std::max(1u, f.value & 0xFF);
      o.result = arbitration_burst_;
      return o;
    default:
      break;
  }
  return Outcome::fail(Status::InvalidFeature,
                       std::string(set ? "SET" : "GET") + "_FEATURES: feature id " + hex(f.fid) + " is not defined");
}

}  // namespace sohusim::device
