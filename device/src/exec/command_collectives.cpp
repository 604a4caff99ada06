// CommandExecutor's synchronisation and collective commands (command_executor.hpp):
// SEM_SIGNAL and SEM_WAIT, and COLLECTIVE (SEND, RECV, REDUCE_STEP, GATHER_STEP, ALL_REDUCE)
// over the chip-to-chip ports, with the inbox where eager messages wait for their receiver.
#include <algorithm>

#include "exec/executor_detail.hpp"
#include "sohusim/device/compute/numerics.hpp"
#include "sohusim/device/compute/vector_cost.hpp"
#include "sohusim/device/exec/command_executor.hpp"

namespace sohusim::device {

using detail::now_ps;

Outcome CommandExecutor::exec_sem_signal(const Sqe& sqe) {
  SemSignalCmd s{};
  Outcome o = decode(sqe, s);
  if (!o.ok()) return o;
  if (s.device == 0xFF || s.device == index_) {
    w_.semaphores->signal(s.sem, s.value);
    return {};
  }
  auto it = peers_.find(s.device);
  if (it == peers_.end() || it->second.peer == nullptr) {
    return Outcome::fail(Status::PeerUnreachable,
                         "SEM_SIGNAL: no chip-to-chip port to device " + std::to_string(s.device));
  }
  const std::uint64_t arrive = it->second.tx->send(now_ps(), 16);  // a small message packet
  wait_ps(arrive - now_ps());
  it->second.peer->semaphores().signal(s.sem, s.value);
  return {};
}

Outcome CommandExecutor::exec_sem_wait(const Sqe& sqe) {
  SemWaitCmd s{};
  Outcome o = decode(sqe, s);
  if (!o.ok()) return o;
  const std::uint64_t gen = abort_generation_;
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  const bool reached = w_.semaphores->wait_geq(s.sem, s.value, static_cast<std::uint64_t>(s.timeout_us) * 1'000'000ULL);
  if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "SEM_WAIT: aborted by a reset");
  const std::uint64_t cycles = (sc_core::sc_time_stamp() - t0).value() / w_.params->period_ps();
  for (auto& e : me_) e->stall_dependency_cycles.inc(cycles);
  if (!reached) {
    return Outcome::fail(Status::SemTimeout, "SEM_WAIT: semaphore " + std::to_string(s.sem) + " stayed at " +
                                                 std::to_string(w_.semaphores->value(s.sem)) + " < " +
                                                 std::to_string(s.value) + " for " + std::to_string(s.timeout_us) +
                                                 " us");
  }
  return {};
}

void CommandExecutor::deliver(unsigned from, std::uint32_t tag, Message m) {
  inbox_[{from, tag}].push_back(std::move(m));
  arrived_.notify(sc_core::SC_ZERO_TIME);
}

Outcome CommandExecutor::exec_all_reduce(const Sqe& sqe, const CollectiveCmd& c, CommandWork& work) {
  std::vector<unsigned> peers;
  for (unsigned d = 0; d < 32; ++d) {
    if (((c.peers >> d) & 1u) == 0) continue;
    if (d == index_) {
      return Outcome::fail(Status::InvalidField,
                           "COLLECTIVE ALL_REDUCE: PEERS names this device (" + std::to_string(d) + ") itself");
    }
    auto it = peers_.find(d);
    if (it == peers_.end() || it->second.peer == nullptr) {
      return Outcome::fail(Status::PeerUnreachable,
                           "COLLECTIVE ALL_REDUCE: no chip-to-chip port to device " + std::to_string(d));
    }
    peers.push_back(d);
  }
  Operand local;
  Outcome o = check_device_range(sqe.context(), Space::Hbm, c.addr, c.length, true, bytes_of(c.dtype),
                                 "COLLECTIVE buffer", local);
  if (!o.ok()) return o;
  const bool data = w_.hbm->holds_data();
  // One read of the buffer, then one transfer per port, all ports at once (each link
  // serialises its own transfers); the messages land in the peers' inboxes.
  std::vector<std::uint8_t> mine(data ? c.length : 0);
  w_.hbm->access(false, local.phys, data ? mine.data() : nullptr, c.length, sqe.correlation());
  for (unsigned d : peers) {
    PeerLink& l = peers_[d];
    Message m;
    m.length = c.length;
    if (data && l.peer->hbm().holds_data()) m.data = mine;
    m.arrive_ps = l.tx->send(now_ps(), c.length);
    l.peer->deliver(index_, c.tag, std::move(m));
  }
  // Every peer's buffer with this tag, in whatever order they come.
  const std::uint64_t gen = abort_generation_;
  std::vector<Message> got(peers.size());
  std::vector<bool> have(peers.size(), false);
  std::size_t missing = peers.size();
  std::uint64_t last_arrival = now_ps();
  while (missing > 0) {
    if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE ALL_REDUCE: aborted");
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (have[i]) continue;
      auto q = inbox_.find(std::make_pair(peers[i], c.tag));
      if (q == inbox_.end() || q->second.empty()) continue;
      got[i] = std::move(q->second.front());
      q->second.pop_front();
      if (q->second.empty()) inbox_.erase(q);
      if (got[i].length != c.length) {
        return Outcome::fail(Status::InvalidField, "COLLECTIVE ALL_REDUCE of " + std::to_string(c.length) +
                                                       " bytes met a message of " + std::to_string(got[i].length) +
                                                       " from device " + std::to_string(peers[i]) + " (tag " +
                                                       std::to_string(c.tag) + ")");
      }
      last_arrival = std::max(last_arrival, got[i].arrive_ps);
      have[i] = true;
      --missing;
    }
    if (missing > 0) sc_core::wait(arrived_);
  }
  if (last_arrival > now_ps()) wait_ps(last_arrival - now_ps());
  if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE ALL_REDUCE: aborted");
  // The adds, spread over every vector engine; the buffer is read again and written once.
  w_.hbm->access(false, local.phys, nullptr, c.length, sqe.correlation());
  const std::uint64_t elems = c.length / bytes_of(c.dtype);
  const VectorWork add = vector_op_cost(w_.params->vector, VectorOp::Add, static_cast<std::uint32_t>(peers.size()),
                                        std::max<std::uint64_t>(1, elems), c.dtype, c.dtype);
  const std::uint64_t engines = std::max(1u, w_.params->vector.engines);
  wait_ps((add.cycles + engines - 1) / engines * w_.params->period_ps());
  if (data) {
    // Summed in device order, the same order on every device: every device gets the same bits.
    std::vector<std::pair<unsigned, const std::vector<std::uint8_t>*>> parts{{index_, &mine}};
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (!got[i].data.empty()) parts.emplace_back(peers[i], &got[i].data);
    }
    std::sort(parts.begin(), parts.end());
    std::vector<float> total(static_cast<std::size_t>(elems), 0.0f), y(total.size());
    for (const auto& part : parts) {
      decode(c.dtype, part.second->data(), y.data(), y.size());
      for (std::size_t e = 0; e < total.size(); ++e) total[e] += y[e];
    }
    encode(c.dtype, total.data(), mine.data(), total.size());
  }
  w_.hbm->access(true, local.phys, data ? mine.data() : nullptr, c.length, sqe.correlation());
  work.hbm_bytes += 3 * c.length;  // read to send, read to add, write
  work.link_bytes += c.length * peers.size();
  work.vector_flops += add.flops;
  return {};
}

Outcome CommandExecutor::exec_collective(const Sqe& sqe, CommandWork& work) {
  CollectiveCmd c{};
  Outcome o = decode(sqe, c);
  if (!o.ok()) return o;
  if (c.op == CollectiveOp::AllReduce) return exec_all_reduce(sqe, c, work);
  auto it = peers_.find(c.peer);
  if (it == peers_.end() || it->second.peer == nullptr) {
    return Outcome::fail(Status::PeerUnreachable,
                         "COLLECTIVE: no chip-to-chip port to device " + std::to_string(c.peer));
  }
  Operand local;
  if (!(o = check_device_range(sqe.context(), Space::Hbm, c.addr, c.length, c.op != CollectiveOp::Send,
                               bytes_of(c.dtype), "COLLECTIVE buffer", local))
           .ok()) {
    return o;
  }
  const bool data = w_.hbm->holds_data();
  if (c.op == CollectiveOp::Send) {
    // Eager: read the buffer, hand it to the link (which serialises this port's transfers)
    // and complete; the message lands in the peer's inbox when its last byte arrives.
    CommandExecutor& peer = *it->second.peer;
    Message m;
    m.length = c.length;
    if (data && peer.hbm().holds_data()) m.data.assign(c.length, 0);
    w_.hbm->access(false, local.phys, m.data.empty() ? nullptr : m.data.data(), c.length, sqe.correlation());
    m.arrive_ps = it->second.tx->send(now_ps(), c.length);
    peer.deliver(index_, c.tag, std::move(m));
    // The transfer goes on after the SEND completes: its link time is the receive's.
    work.hbm_bytes += c.length;
    return {};
  }
  // RECV / REDUCE_STEP / GATHER_STEP: wait for the peer's message with this tag, then write
  // it into the buffer (a reduce step reads the buffer and adds on the vector lanes first).
  const std::uint64_t gen = abort_generation_;
  const auto key = std::make_pair(c.peer, c.tag);
  for (;;) {
    if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE: receive aborted");
    auto q = inbox_.find(key);
    if (q != inbox_.end() && !q->second.empty()) break;
    sc_core::wait(arrived_);
  }
  std::deque<Message>& queue = inbox_[key];
  Message m = std::move(queue.front());
  queue.pop_front();
  if (queue.empty()) inbox_.erase(key);
  if (m.length != c.length) {
    return Outcome::fail(Status::InvalidField, "COLLECTIVE: a receive of " + std::to_string(c.length) +
                                                   " bytes met a SEND of " + std::to_string(m.length) +
                                                   " from device " + std::to_string(c.peer) + " (tag " +
                                                   std::to_string(c.tag) + ")");
  }
  if (m.arrive_ps > now_ps()) wait_ps(m.arrive_ps - now_ps());
  if (gen != abort_generation_) return Outcome::fail(Status::AbortedReset, "COLLECTIVE: receive aborted");
  work.link_bytes += c.length;  // received: this command waited for the transfer
  if (c.op == CollectiveOp::ReduceStep) {
    w_.hbm->access(false, local.phys, nullptr, c.length, sqe.correlation());
    // The add, spread over every vector engine.
    const std::uint64_t elems = c.length / bytes_of(c.dtype);
    const VectorWork add =
        vector_op_cost(w_.params->vector, VectorOp::Add, 1, std::max<std::uint64_t>(1, elems), c.dtype, c.dtype);
    const std::uint64_t engines = std::max(1u, w_.params->vector.engines);
    wait_ps((add.cycles + engines - 1) / engines * w_.params->period_ps());
    work.hbm_bytes += c.length;
    work.vector_flops += add.flops;
    if (data && !m.data.empty()) {
      std::vector<std::uint8_t> mine(c.length, 0);
      w_.hbm->debug(false, local.phys, mine.data(), c.length);
      std::vector<float> x(static_cast<std::size_t>(elems)), y(static_cast<std::size_t>(elems));
      decode(c.dtype, mine.data(), x.data(), x.size());
      decode(c.dtype, m.data.data(), y.data(), y.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
      encode(c.dtype, x.data(), m.data.data(), x.size());
    }
  }
  w_.hbm->access(true, local.phys, m.data.empty() ? nullptr : m.data.data(), c.length, sqe.correlation());
  work.hbm_bytes += c.length;
  return {};
}

}  // namespace sohusim::device
