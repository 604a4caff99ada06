#pragma once
// HostAgent: the smallest host software that brings the device up and runs commands through
// the real interface — config space, BAR0 registers, queues in host DRAM, doorbells, MSI-X —
// for `sohusim gemm`, the device's own tests and the benchmarks. It is not the driver (that
// is driver/, written against DeviceAccess, with host-time costs, error types, SR-IOV, ...);
// it does the same register-level steps a driver's bring-up does, in the NVMe order:
//
//   probe():  size and place BAR0/BAR2, enable memory space and bus mastering, program the
//             MSI-X table (vector v -> interrupt controller vector v) and enable MSI-X;
//   enable(): allocate the admin queues in DMA memory, write AQA/ASQ/ACQ, set CTRL.EN,
//             poll STATUS.RDY;
//   create_io_queue(): CREATE_CQ and CREATE_SQ admin commands;
//   submit()/wait(): write a 64-byte entry at the SQ tail, ring the doorbell; wait for the
//             CQ's interrupt (or poll), reap entries by their phase bit, ring the CQ head
//             doorbell.
// Every call blocks its SystemC thread for the simulated time it takes.
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "sohusim/device/frontend/command.hpp"
#include "sohusim/platform/host_system.hpp"

namespace sohusim::platform {

class HostAgent {
 public:
  explicit HostAgent(HostSystem& system) : sys_(system) {}

  void probe(unsigned vectors = 8);
  /// Throws std::runtime_error if RDY does not come within `timeout_us`.
  void enable(unsigned admin_entries = 64, unsigned timeout_us = 10'000);
  /// Admin command, completed synchronously. The returned entry's status may be an error.
  device::Cqe admin(device::Sqe sqe);
  /// CQ `qid` on MSI-X `vector`, then SQ `qid` on it. Throws std::runtime_error on an error status.
  void create_io_queue(std::uint16_t qid, unsigned entries, unsigned vector, bool interrupts = true);
  /// Places `sqe` (its CID is assigned here and returned) on SQ `qid` and rings the doorbell.
  std::uint16_t submit(std::uint16_t qid, device::Sqe sqe);
  /// The next completion of queue `qid`: interrupt-driven, or polling the CQ in host memory
  /// for a queue created without interrupts.
  device::Cqe wait(std::uint16_t qid);
  device::Cqe run(std::uint16_t qid, const device::Sqe& sqe) {
    submit(qid, sqe);
    return wait(qid);
  }

  std::uint32_t read32(std::uint32_t offset) { return sys_.cpu().read32(HostSystem::kBar0 + offset); }
  std::uint64_t read64(std::uint32_t offset) { return sys_.cpu().read64(HostSystem::kBar0 + offset); }
  void write32(std::uint32_t offset, std::uint32_t v) { sys_.cpu().write32(HostSystem::kBar0 + offset, v); }
  void write64(std::uint32_t offset, std::uint64_t v) { sys_.cpu().write64(HostSystem::kBar0 + offset, v); }
  HostSystem& system() { return sys_; }

  struct Queue {
    std::uint64_t sq_base = 0, cq_base = 0;
    unsigned entries = 0;
    std::uint32_t sq_tail = 0, cq_head = 0;
    bool phase = true;
    unsigned vector = 0;
    bool interrupts = true;
    std::uint16_t next_cid = 1;
    std::deque<device::Cqe> reaped;
  };
  const Queue& queue(std::uint16_t qid) const { return queues_.at(qid); }

 private:
  bool reap(std::uint16_t qid);
  HostSystem& sys_;
  std::map<std::uint16_t, Queue> queues_;
};

// ---- submission-entry builders (the formats of docs/registers.md) ----
device::Sqe make_nop();
device::Sqe make_gemm(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint32_t m, std::uint32_t k,
                      std::uint32_t n, device::DataType in, device::DataType out,
                      device::Activation act = device::Activation::None, bool trans_a = false, bool trans_b = false);
device::Sqe make_dma_copy(device::Space src_space, std::uint64_t src, device::Space dst_space, std::uint64_t dst,
                          std::uint64_t length, unsigned peer = 0);
device::Sqe make_vector(device::VectorOp op, std::uint64_t x, std::uint64_t y, std::uint64_t out, std::uint32_t rows,
                        std::uint32_t cols, device::DataType in, device::DataType out_type, float scalar = 0,
                        std::uint32_t aux = 0, std::uint32_t aux2 = 0);
device::Sqe make_attention(std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o, std::uint32_t batch,
                           std::uint32_t q_len, std::uint32_t kv_len, std::uint32_t q_heads, std::uint32_t kv_heads,
                           std::uint32_t head_dim, device::DataType dtype, bool causal);
device::Sqe make_timestamp(device::Space space, std::uint64_t addr);
device::Sqe make_admin(std::uint8_t opcode);

}  // namespace sohusim::platform
