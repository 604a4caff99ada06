// driver::Device (device.hpp): completions — reaping the CQ by phase bit, waiting on
// interrupts or by polling, wait() and drain(), the trace of reaps — and errors: a failed
// completion described with the device's error-log entry and thrown as a CommandError.
#include <algorithm>
#include <utility>

#include "device_detail.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/driver/device.hpp"

namespace sohusim::driver {

using detail::has_no_irq;
using detail::hex;

namespace {

/// An interrupt wait is cut into slices of this length, after each of which the CQ is read
/// anyway: a lost interrupt (or a coalescing count with no time limit) then costs latency,
/// never a hang.
constexpr std::uint64_t kInterruptSliceNs = 1'000'000;
/// Un-waited successful completions kept per queue (their results stay readable by wait()).
constexpr std::size_t kMaxRetained = 8192;
/// ERRLOG entries popped while looking for one command's entry, and kept for later lookups.
constexpr unsigned kMaxErrlogPops = 16;
constexpr std::size_t kMaxErrlogSeen = 64;

}  // namespace

unsigned Device::reap(Queue& q) {
  unsigned n = 0;
  const std::uint64_t start_ns = trace_ != nullptr ? access_.now_ns() : 0;
  const std::size_t finished_before = finished_flows_.size();
  std::vector<counters::Flow> flows;  // the reaped commands' correlation ids, each once
  while (n < q.entries) {
    std::uint8_t b[SOHU_CQE_SIZE];
    access_.host_read(q.cq.iova + std::uint64_t{SOHU_CQE_SIZE} * q.cq_head, b, sizeof b);
    std::uint32_t dw[4];
    for (unsigned i = 0; i < 4; ++i) {
      dw[i] = static_cast<std::uint32_t>(b[4 * i]) | (static_cast<std::uint32_t>(b[4 * i + 1]) << 8) |
              (static_cast<std::uint32_t>(b[4 * i + 2]) << 16) | (static_cast<std::uint32_t>(b[4 * i + 3]) << 24);
    }
    if ((SOHU_GET(dw[SOHU_CQE_PHASE_DW], SOHU_CQE_PHASE) != 0) != q.phase) break;  // not written yet
    Completion c;
    c.result = dw[SOHU_CQE_RESULT_DW] | (static_cast<std::uint64_t>(dw[SOHU_CQE_RESULT_DW + 1]) << 32);
    c.sq_head = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_SQ_HEAD_DW], SOHU_CQE_SQ_HEAD));
    c.sq_id = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_SQ_ID_DW], SOHU_CQE_SQ_ID));
    c.cid = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_CID_DW], SOHU_CQE_CID));
    c.status = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_STATUS_DW], SOHU_CQE_STATUS));
    access_.spend_ns(costs_.reap_per_cqe_ns);
    ++n;
    q.cq_head = (q.cq_head + 1) % q.entries;
    if (q.cq_head == 0) q.phase = !q.phase;
    if (c.sq_head < q.entries) q.sq_head = c.sq_head;
    const auto it = q.in_flight.find(c.cid);
    if (it == q.in_flight.end()) continue;  // a command the driver no longer tracks
    Reaped r;
    r.completion = c;
    r.command = it->second;
    if (has_no_irq(r.command) && q.no_irq_in_flight > 0) --q.no_irq_in_flight;
    q.in_flight.erase(it);
    if (c.status != SOHU_STATUS_SUCCESS) r.message = describe_failure(q, r.command, c);
    if (trace_ != nullptr) note_reaped(r.command.correlation(), flows);
    q.done[c.cid] = std::move(r);
    q.done_order.push_back(c.cid);
  }
  if (n > 0) {
    access_.mmio_write32(bar0() + cq_doorbell(q.qid),
                         static_cast<std::uint32_t>(SOHU_PUT(SOHU_CQ_HEAD_DB_HEAD, q.cq_head)));
    trim_done(q);
    if (trace_ != nullptr && trace_->enabled() && (!trace_summary_ || finished_flows_.size() > finished_before)) {
      const counters::Arg args[] = {{"queue", q.qid}, {"completions", n}};
      counters::TraceEvent e;
      e.type = counters::EventType::Complete;
      e.track = trace_track_;
      e.ts = start_ns;
      e.duration = access_.now_ns() - start_ns;
      e.name = "reap";
      e.extras.args = counters::ConstSpan<counters::Arg>(args, 2);
      e.extras.flows = counters::ConstSpan<counters::Flow>(flows.data(), flows.size());
      trace_->record(e);
    }
  }
  return n;
}

void Device::note_reaped(std::uint64_t correlation, std::vector<counters::Flow>& flows) {
  const auto open = open_flows_.find(correlation);
  if (open == open_flows_.end()) return;  // 0, or submitted before set_trace
  bool listed = false;
  for (const counters::Flow& f : flows) listed = listed || f.id == correlation;
  if (!listed) flows.push_back(counters::Flow{correlation});
  if (--open->second == 0) {
    finished_flows_.push_back(correlation);
    open_flows_.erase(open);
  }
}

void Device::set_trace(counters::TraceRecorder* trace, counters::TrackId track, bool summary) {
  trace_ = trace;
  trace_track_ = track;
  trace_summary_ = summary;
  open_flows_.clear();
  finished_flows_.clear();
}

std::vector<std::uint64_t> Device::take_finished_flows() {
  std::vector<std::uint64_t> out;
  out.swap(finished_flows_);
  return out;
}

void Device::trim_done(Queue& q) {
  // done_order also holds cids already waited for; drop those once they dominate.
  if (q.done_order.size() > 2 * q.done.size() + 64) {
    std::deque<std::uint16_t> live;
    for (std::uint16_t cid : q.done_order) {
      if (q.done.count(cid) != 0) live.push_back(cid);
    }
    q.done_order.swap(live);
  }
  // Successes no one waits for are retired oldest first; errors stay until reported.
  std::deque<std::uint16_t> errors;
  while (q.done.size() > kMaxRetained && !q.done_order.empty()) {
    const std::uint16_t cid = q.done_order.front();
    q.done_order.pop_front();
    const auto it = q.done.find(cid);
    if (it == q.done.end()) continue;
    if (it->second.completion.status == SOHU_STATUS_SUCCESS) {
      q.done.erase(it);
    } else {
      errors.push_back(cid);
    }
  }
  q.done_order.insert(q.done_order.begin(), errors.begin(), errors.end());
}

void Device::block_for_completion(Queue& q, std::uint64_t deadline_ns, const std::string& what) {
  const std::uint64_t now = access_.now_ns();
  if (deadline_ns != 0 && now >= deadline_ns) {
    const std::uint32_t st = read32(SOHU_STATUS);
    const std::string state = "SQ tail " + std::to_string(q.sq_tail) + ", device SQ head " + std::to_string(q.sq_head) +
                              ", CQ head " + std::to_string(q.cq_head) + ", phase " + std::to_string(q.phase ? 1 : 0) +
                              ", " + std::to_string(q.in_flight.size()) + " in flight, STATUS " + hex(st);
    if ((st & SOHU_STATUS_CFS_MASK) != 0) {
      throw FatalError(label() + ": " + what + ": the controller reports a fatal status (" + state + ")");
    }
    throw TimeoutError(label() + ": " + what + ": no completion in time (" + state + ")");
  }
  const std::uint64_t left = deadline_ns == 0 ? ~std::uint64_t{0} : deadline_ns - now;
  // Polling queues read the CQ every poll interval; so does a wait on commands posted without
  // an interrupt when none in flight will raise one. Otherwise the host sleeps until an
  // interrupt: the queue runs in order, so a command that raises one completes after those
  // posted before it without (one interrupt per launch, as drivers batch them), and polling
  // through a whole program would cost the host a wake-up every interval.
  const bool interrupt_coming = q.in_flight.size() > q.no_irq_in_flight;
  if (q.mode == CompletionMode::Polling || (q.no_irq_in_flight > 0 && !interrupt_coming)) {
    access_.poll_ns(std::min(left, std::max<std::uint64_t>(costs_.poll_interval_ns, 1)));
    return;
  }
  if (access_.wait_interrupt(rid_, q.vector, std::min(left, kInterruptSliceNs))) {
    access_.spend_ns(costs_.interrupt_ns);
  }
}

Completion Device::wait(const Ticket& t, std::uint64_t timeout_ns) {
  Queue& q = queue(t.qid, "wait");
  const std::uint64_t deadline = timeout_ns == 0 ? 0 : access_.now_ns() + timeout_ns;
  for (;;) {
    const auto d = q.done.find(t.cid);
    if (d != q.done.end()) {
      Reaped r = std::move(d->second);
      q.done.erase(d);
      if (r.completion.status != SOHU_STATUS_SUCCESS) fail(q, r);
      return r.completion;
    }
    const auto f = q.in_flight.find(t.cid);
    if (f == q.in_flight.end()) {
      // Retired without being waited for: only successes are (drain reports errors).
      Completion c;
      c.sq_id = t.qid;
      c.cid = t.cid;
      return c;
    }
    if (reap(q) > 0) continue;
    block_for_completion(q, deadline,
                         std::string("wait for ") + opcode_name(f->second.opcode(), t.qid == 0) + " (qid " +
                             std::to_string(t.qid) + ", cid " + std::to_string(t.cid) + ", correlation " +
                             std::to_string(f->second.correlation()) + ")");
  }
}

void Device::drain(std::uint16_t qid, std::uint64_t timeout_ns) {
  Queue& q = queue(qid, "drain");
  const std::uint64_t deadline = timeout_ns == 0 ? 0 : access_.now_ns() + timeout_ns;
  reap(q);
  while (!q.in_flight.empty()) {
    block_for_completion(q, deadline,
                         "drain of queue " + std::to_string(qid) + " (" + std::to_string(q.in_flight.size()) +
                             " commands outstanding, oldest cid " + std::to_string(q.in_flight.begin()->first) + ")");
    reap(q);
  }
  std::optional<Reaped> first;
  unsigned failures = 0;
  for (std::uint16_t cid : q.done_order) {
    const auto it = q.done.find(cid);
    if (it == q.done.end()) continue;
    if (it->second.completion.status != SOHU_STATUS_SUCCESS) {
      if (!first) first = it->second;
      ++failures;
    }
    q.done.erase(it);
  }
  q.done.clear();
  q.done_order.clear();
  if (first) {
    if (failures > 1)
      first->message += " (and " + std::to_string(failures - 1) + " more failed commands on this queue)";
    fail(q, *first);
  }
}

unsigned Device::poll(std::uint16_t qid) {
  require_enabled("poll");
  return reap(queue(qid, "poll"));
}

unsigned Device::outstanding(std::uint16_t qid) const {
  return static_cast<unsigned>(queue(qid, "outstanding").in_flight.size());
}

// ---- errors -------------------------------------------------------------------------------------

std::optional<Device::ErrLogEntry> Device::find_error_log(std::uint16_t qid, std::uint16_t cid) {
  const auto match = [&](const ErrLogEntry& e) { return e.qid == qid && e.cid == cid; };
  const auto seen = std::find_if(errlog_seen_.begin(), errlog_seen_.end(), match);
  if (seen != errlog_seen_.end()) {
    const ErrLogEntry e = *seen;
    errlog_seen_.erase(seen);
    return e;
  }
  // The log is a FIFO read at its oldest entry: pop until this command's entry shows up,
  // keeping the others for the commands they belong to.
  for (unsigned i = 0; i < kMaxErrlogPops; ++i) {
    const std::uint32_t code = read32(SOHU_ERR_CODE);
    if (code == 0) break;  // empty
    const std::uint32_t info = read32(SOHU_ERR_INFO);
    ErrLogEntry e;
    e.status = static_cast<std::uint16_t>(code);
    e.qid = static_cast<std::uint16_t>(SOHU_GET(info, SOHU_ERR_INFO_QID));
    e.cid = static_cast<std::uint16_t>(SOHU_GET(info, SOHU_ERR_INFO_CID));
    e.address = read64(SOHU_ERR_ADDR);
    write32(SOHU_ERR_ACK, SOHU_ERR_ACK_ACK_MASK);
    if (match(e)) return e;
    errlog_seen_.push_back(e);
    if (errlog_seen_.size() > kMaxErrlogSeen) errlog_seen_.pop_front();
  }
  return std::nullopt;
}

std::string Device::describe_failure(const Queue& q, const Command& cmd, const Completion& c) {
  std::string s = std::string(opcode_name(cmd.opcode(), q.qid == 0)) + " (qid " + std::to_string(q.qid) + ", cid " +
                  std::to_string(c.cid) + ", correlation " + std::to_string(cmd.correlation()) +
                  ") failed: " + status_name(c.status) + " \xE2\x80\x94 ";
  const std::optional<ErrLogEntry> e = find_error_log(q.qid, c.cid);
  if (e) {
    s += "error log: " + std::string(status_name(e->status)) + " at address " + hex(e->address);
  } else {
    s += "no error-log entry";
  }
  return s + " [" + label() + "]";
}

void Device::fail(const Queue& q, const Reaped& r) const {
  throw CommandError(r.message, r.completion.status, r.command.opcode(), q.qid, r.completion.cid,
                     r.command.correlation());
}

}  // namespace sohusim::driver
