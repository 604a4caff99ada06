// CommandReplay: records of command shapes taken on an idle device, and their replay
// (command_replay.hpp).
#include "sohusim/device/exec/command_replay.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <systemc>

#include "exec/executor_detail.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::device {

using detail::wait_ps;

CommandReplay::CommandReplay(const counters::Scope& device_scope, const counters::Counter& excluded)
    : scope_(device_scope), excluded_(excluded), shared_(std::make_shared<ReplayCache>()) {}

bool CommandReplay::replayable(const Sqe& sqe) {
  const std::uint8_t op = sqe.opcode();
  return op == SOHU_IO_OP_GEMM || op == SOHU_IO_OP_ATTENTION || op == SOHU_IO_OP_VECTOR;
}

std::vector<std::uint32_t> CommandReplay::signature(const Sqe& sqe) {
  std::vector<std::uint32_t> k(sqe.dw.begin(), sqe.dw.end());
  k[0] &= 0xFFFFu;  // CID
  k[2] = k[3] = 0;  // correlation
  // The address operands: GEMM A, B, C, D and ATTENTION Q, K, V, O are dwords 4-11;
  // VECTOR X, Y, OUT dwords 4-9.
  const unsigned last = sqe.opcode() == SOHU_IO_OP_VECTOR ? 9 : 11;
  for (unsigned i = 4; i <= last; ++i) k[i] = 0;
  return k;
}

void CommandReplay::refresh_own_counters() {
  // The device's counters, looked up again only when the registry has grown (a glob over a
  // multi-device registry is far dearer than reading the values), and by name below the
  // device's prefix (a shared record names its counters so).
  counters::Registry& r = scope_.registry();
  if (r.size() == counters_seen_) return;
  counters_seen_ = r.size();
  own_counters_.clear();
  by_suffix_.clear();
  const std::size_t prefix = scope_.prefix().empty() ? 0 : scope_.prefix().size() + 1;
  // The trace unit's counters are left out: its writer streams records queued before and
  // during a command on its own schedule, so what it wrote while a command was recorded is
  // not that command's work (replaying it counted records the ring never received).
  const std::string trace_unit = scope_.prefix().empty() ? "trace_unit." : scope_.prefix() + ".trace_unit.";
  for (const counters::Stat* s : r.glob(scope_.prefix() + ".**")) {
    if (s->kind() != counters::StatKind::Counter) continue;
    if (s->name().rfind(trace_unit, 0) == 0) continue;
    auto* c = static_cast<counters::Counter*>(r.find(s->name()));
    own_counters_.push_back(c);
    by_suffix_.emplace(s->name().substr(prefix), c);
  }
}

std::vector<std::pair<counters::Counter*, std::uint64_t>> CommandReplay::device_counters() {
  refresh_own_counters();
  std::vector<std::pair<counters::Counter*, std::uint64_t>> out;
  out.reserve(own_counters_.size());
  for (counters::Counter* c : own_counters_) out.emplace_back(c, c->count());
  return out;
}

const CommandReplay::Record* CommandReplay::find(const std::vector<std::uint32_t>& key) {
  const auto it = records_.find(key);
  if (it != records_.end()) return &it->second;
  const ReplayCache::Record* rec = shared_->find(key);
  if (rec == nullptr) return nullptr;
  // Recorded by a device of the same configuration: its counters, under this device's prefix.
  Record r;
  r.duration_ps = rec->duration_ps;
  r.work = rec->work;
  refresh_own_counters();
  for (const auto& [suffix, n] : rec->increments) {
    const auto c = by_suffix_.find(suffix);
    if (c == by_suffix_.end()) return nullptr;  // not this shape of device
    r.increments->adds.emplace_back(c->second->slot(), n);
  }
  std::sort(r.increments->adds.begin(), r.increments->adds.end());  // ascending slots: a sequential walk
  forget_if_full(r.increments->adds.size());
  return &records_.emplace(key, std::move(r)).first->second;
}

Outcome CommandReplay::execute(const Sqe& sqe, const Dispatch& dispatch, const Replayed& replayed) {
  const bool idle = in_flight_ == 0;
  const InFlight running(*this);
  const std::uint64_t my_start = started_;
  std::vector<std::uint32_t> key = signature(sqe);
  const std::uint64_t t0 = sc_core::sc_time_stamp().value();
  const Record* replay = idle ? find(key) : nullptr;
  if (replay == nullptr && idle) {
    if (const std::shared_ptr<ReplayCache::Pending> p = shared_->pending(key)) {
      // Another device of this configuration is recording the shape: check, wait for its
      // record, then end at this command's own start plus the recorded duration.
      Outcome o = dispatch(true, nullptr);
      if (!o.ok()) return o;
      while (!p->finished) sc_core::wait(p->done);
      replay = find(key);
      if (replay == nullptr) return dispatch(false, nullptr);  // no clean record: simulate (late)
      const Record rec = *replay;                              // the table may change while this command waits
      const std::uint64_t now = sc_core::sc_time_stamp().value();
      if (t0 + rec.duration_ps > now) wait_ps(t0 + rec.duration_ps - now);
      apply(rec);
      replayed(sc_core::sc_time_stamp().value() - t0, rec.work);
      return o;
    }
  }
  if (replay != nullptr) {
    // The same checks as a simulated run, then the recorded time and counters.
    const Record rec = *replay;  // the table may change while this command waits
    Outcome o = dispatch(true, nullptr);
    if (!o.ok()) return o;
    wait_ps(rec.duration_ps);
    apply(rec);
    replayed(rec.duration_ps, rec.work);
    return o;
  }
  const std::vector<std::pair<counters::Counter*, std::uint64_t>> before =
      idle ? device_counters() : decltype(device_counters()){};
  std::shared_ptr<ReplayCache::Pending> recording;
  if (idle) recording = shared_->begin(key);
  Outcome o;
  CommandWork work;
  try {
    o = dispatch(false, &work);
  } catch (...) {
    if (recording) shared_->end(key, recording, std::nullopt);  // followers must not wait forever
    throw;
  }
  std::optional<ReplayCache::Record> shared;
  // Record only a clean run that had the device to itself from start to end.
  if (idle && o.ok() && started_ == my_start && in_flight_ == 1) {
    Record r;
    shared.emplace();
    r.duration_ps = shared->duration_ps = sc_core::sc_time_stamp().value() - t0;
    r.work = shared->work = work;
    std::map<counters::Counter*, std::uint64_t> base;  // counters created meanwhile start at 0
    for (const auto& [c, v] : before) base[c] = v;
    const std::size_t prefix = scope_.prefix().empty() ? 0 : scope_.prefix().size() + 1;
    for (const auto& [c, v] : device_counters()) {
      const auto b = base.find(c);
      const std::uint64_t was = b == base.end() ? 0 : b->second;
      if (v > was && c != &excluded_) {
        r.increments->adds.emplace_back(c->slot(), v - was);
        shared->increments.emplace_back(c->name().substr(prefix), v - was);
      }
    }
    std::sort(r.increments->adds.begin(), r.increments->adds.end());
    forget_if_full(r.increments->adds.size());
    records_.emplace(key, std::move(r));
  }
  if (recording) shared_->end(key, recording, std::move(shared));
  return o;
}

}  // namespace sohusim::device
