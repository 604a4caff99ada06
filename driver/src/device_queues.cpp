// driver::Device (device.hpp): the queues — DMA memory for the rings, CREATE/DELETE of I/O
// queue pairs, command ids — and submit(), which writes entries at the SQ tail and rings
// the doorbell, and admin(), a synchronous admin command.
#include <stdexcept>
#include <utility>

#include "device_detail.hpp"
#include "sohusim/driver/device.hpp"

namespace sohusim::driver {

using detail::admin_command;
using detail::has_no_irq;

namespace {

/// Admin commands are synchronous; NVMe's default admin timeout is 60 s, the simulated
/// device answers in microseconds: 1 s separates "slow" from "never" with room to spare.
constexpr std::uint64_t kAdminTimeoutNs = 1'000'000'000;

}  // namespace

// ---- queues -----------------------------------------------------------------------------------

DmaBuffer Device::take_dma(std::uint64_t bytes, std::uint64_t align) {
  for (auto it = spare_dma_.lower_bound(bytes); it != spare_dma_.end(); ++it) {
    if (it->second.iova % align == 0) {
      const DmaBuffer b = it->second;
      spare_dma_.erase(it);
      return b;
    }
  }
  return access_.alloc_dma(rid_, bytes, align);
}

void Device::setup_queue_memory(Queue& q) {
  // Queue bases must be 4 KiB aligned (CREATE_SQ/CREATE_CQ BASE, ASQ/ACQ).
  q.sq = take_dma(std::uint64_t{SOHU_SQE_SIZE} * q.entries, 4096);
  q.cq = take_dma(std::uint64_t{SOHU_CQE_SIZE} * q.entries, 4096);
  reset_ring(q);
}

void Device::reset_ring(Queue& q) {
  // A zeroed CQ has phase 0 everywhere, and the device writes phase 1 on its first pass: the
  // driver never mistakes an old entry (from before a reset, or reused memory) for a new one.
  const std::vector<std::uint8_t> zeros(std::size_t{SOHU_CQE_SIZE} * q.entries, 0);
  access_.host_write(q.cq.iova, zeros.data(), zeros.size());
  q.sq_tail = q.sq_head = q.sq_rung = q.cq_head = 0;
  q.phase = true;
}

void Device::create_on_device(Queue& q) {
  Command cq = admin_command(SOHU_ADMIN_OP_CREATE_CQ);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_BASE, q.cq.iova);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_QID, q.qid);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_QSIZE, q.entries - 1);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_VECTOR, q.vector);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_IEN, q.mode == CompletionMode::Interrupt ? 1 : 0);
  admin(cq);
  Command sq = admin_command(SOHU_ADMIN_OP_CREATE_SQ);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_BASE, q.sq.iova);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_QID, q.qid);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_QSIZE, q.entries - 1);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_CQID, q.qid);
  try {
    admin(sq);
  } catch (...) {
    Command del = admin_command(SOHU_ADMIN_OP_DELETE_CQ);
    SOHU_CMD_SET(del, SOHU_ADMIN_DELETE_CQ_QID, q.qid);
    try {
      admin(del);
    } catch (const DriverError&) {
      // The CREATE_SQ error is the one to report.
    }
    throw;
  }
}

std::uint16_t Device::create_queue(unsigned entries, CompletionMode mode) {
  require_enabled("create_queue");
  if (entries < 2 || entries > info_.max_queue_entries) {
    throw std::invalid_argument(label() + ": create_queue: " + std::to_string(entries) + " entries (allowed 2 .. " +
                                std::to_string(info_.max_queue_entries) + ", CAP0.MQES + 1)");
  }
  std::uint16_t qid = 0;
  for (unsigned i = 1; i <= info_.max_queues; ++i) {
    if (io_.count(static_cast<std::uint16_t>(i)) == 0) {
      qid = static_cast<std::uint16_t>(i);
      break;
    }
  }
  if (qid == 0) {
    throw DriverError(label() + ": create_queue: all " + std::to_string(info_.max_queues) +
                      " I/O queue pairs (CAP0.MQP) are in use");
  }
  Queue q;
  q.qid = qid;
  q.entries = entries;
  q.mode = mode;
  // Vector 0 belongs to the admin queue and errors; I/O queues take 1.. and share them
  // round-robin when there are more queues than vectors.
  q.vector =
      (mode == CompletionMode::Interrupt && info_.msix_vectors > 1) ? 1 + (qid - 1u) % (info_.msix_vectors - 1) : 0;
  setup_queue_memory(q);
  try {
    create_on_device(q);
  } catch (...) {
    spare_dma_.emplace(q.sq.size, q.sq);
    spare_dma_.emplace(q.cq.size, q.cq);
    throw;
  }
  io_.emplace(qid, std::move(q));
  return qid;
}

void Device::delete_queue(std::uint16_t qid) {
  require_enabled("delete_queue");
  if (qid == 0) throw std::invalid_argument(label() + ": delete_queue: queue 0 is the admin queue");
  Queue& q = queue(qid, "delete_queue");
  // DELETE_SQ aborts what is still queued; the driver forgets those commands with the queue.
  Command sq = admin_command(SOHU_ADMIN_OP_DELETE_SQ);
  SOHU_CMD_SET(sq, SOHU_ADMIN_DELETE_SQ_QID, qid);
  admin(sq);
  Command cq = admin_command(SOHU_ADMIN_OP_DELETE_CQ);
  SOHU_CMD_SET(cq, SOHU_ADMIN_DELETE_CQ_QID, qid);
  admin(cq);
  spare_dma_.emplace(q.sq.size, q.sq);
  spare_dma_.emplace(q.cq.size, q.cq);
  io_.erase(qid);
}

Device::Queue& Device::queue(std::uint16_t qid, const char* call) {
  return const_cast<Queue&>(static_cast<const Device*>(this)->queue(qid, call));
}

const Device::Queue& Device::queue(std::uint16_t qid, const char* call) const {
  if (qid == 0) return admin_;
  const auto it = io_.find(qid);
  if (it == io_.end()) {
    std::string have;
    for (const auto& [id, q] : io_) have += (have.empty() ? "" : ", ") + std::to_string(id);
    throw std::invalid_argument(label() + ": " + call + ": queue " + std::to_string(qid) +
                                " does not exist (I/O queues: " + (have.empty() ? "none" : have) + ")");
  }
  return it->second;
}

std::uint16_t Device::allocate_cid(Queue& q) {
  for (unsigned tries = 0; tries < 0x10000; ++tries) {
    const std::uint16_t cid = q.next_cid;
    q.next_cid = static_cast<std::uint16_t>(q.next_cid == 0xFFFF ? 1 : q.next_cid + 1);
    if (cid != 0 && q.in_flight.count(cid) == 0 && q.done.count(cid) == 0) return cid;
  }
  throw DriverError(label() + ": queue " + std::to_string(q.qid) + " has no free command id (" +
                    std::to_string(q.in_flight.size()) + " in flight, " + std::to_string(q.done.size()) +
                    " completions not waited for)");
}

void Device::ring_sq_doorbell(Queue& q) {
  if (q.sq_tail == q.sq_rung) return;
  access_.spend_ns(costs_.doorbell_ns);
  access_.mmio_write32(bar0() + sq_doorbell(q.qid),
                       static_cast<std::uint32_t>(SOHU_PUT(SOHU_SQ_TAIL_DB_TAIL, q.sq_tail)));
  q.sq_rung = q.sq_tail;
}

std::vector<Ticket> Device::submit(std::uint16_t qid, const std::vector<Command>& cmds, std::uint64_t correlation) {
  require_enabled("submit");
  Queue& q = queue(qid, "submit");
  std::vector<Ticket> tickets;
  tickets.reserve(cmds.size());
  // Entries that sit next to each other in the ring are stored with one host write.
  std::vector<std::uint8_t> run;
  std::uint32_t run_start = q.sq_tail;
  const auto flush = [&] {
    if (!run.empty()) access_.host_write(q.sq.iova + std::uint64_t{SOHU_SQE_SIZE} * run_start, run.data(), run.size());
    run.clear();
    run_start = q.sq_tail;
  };
  for (const Command& in : cmds) {
    // One slot stays empty: tail + 1 == head is full. The device must see what is queued
    // before it can free slots, so ring first, then reap (or wait) until one frees.
    while ((q.sq_tail + 1) % q.entries == q.sq_head) {
      flush();
      ring_sq_doorbell(q);
      if (q.in_flight.empty()) {
        throw DriverError(label() + ": SQ " + std::to_string(qid) + " is full (head " + std::to_string(q.sq_head) +
                          ", tail " + std::to_string(q.sq_tail) + ") with nothing in flight");
      }
      if (reap(q) == 0) block_for_completion(q, 0, "a free slot in SQ " + std::to_string(qid));
    }
    Command c = in;
    const std::uint16_t cid = allocate_cid(q);
    c.set_cid(cid);
    c.set_correlation(correlation);
    access_.spend_ns(costs_.per_command_ns);
    std::uint8_t bytes[SOHU_SQE_SIZE];
    c.to_bytes(bytes);
    run.insert(run.end(), bytes, bytes + SOHU_SQE_SIZE);
    if (has_no_irq(c)) ++q.no_irq_in_flight;
    if (trace_ != nullptr && correlation != 0) ++open_flows_[correlation];
    q.in_flight.emplace(cid, c);
    tickets.push_back(Ticket{qid, cid});
    q.sq_tail = (q.sq_tail + 1) % q.entries;
    if (q.sq_tail == 0) flush();  // the ring wrapped: the next entries start at slot 0
  }
  flush();
  ring_sq_doorbell(q);
  return tickets;
}

Ticket Device::submit(std::uint16_t qid, Command cmd, std::uint64_t correlation) {
  return submit(qid, std::vector<Command>{cmd}, correlation).front();
}

Completion Device::admin(Command cmd) {
  require_enabled("admin");
  access_.spend_ns(costs_.admin_ns);
  const Ticket t = submit(0, cmd, 0);
  return wait(t, kAdminTimeoutNs);
}

}  // namespace sohusim::driver
