#include "sohusim/platform/host_agent.hpp"

#include <cstring>
#include <stdexcept>

#include "sohusim/regmap/sohu_regs.h"

#define SET(sqe, P, v) \
  ((sqe).dw[P##_DW] |= (static_cast<std::uint32_t>(v) << P##_SHIFT) & static_cast<std::uint32_t>(P##_MASK))
#define SET64(sqe, P, v) ((sqe).set_u64(P##_DW, (v)))

namespace sohusim::platform {

namespace {
constexpr std::uint64_t kMsiAddress = 0xFEE0'0000ULL;

unsigned find_capability(host::CpuAgent& cpu, pcie::RequesterId rid, unsigned id) {
  unsigned ptr = cpu.cfg_read(rid, 0x34) & 0xFC;
  for (int guard = 0; ptr != 0 && guard < 48; ++guard) {
    const std::uint32_t h = cpu.cfg_read(rid, ptr);
    if ((h & 0xFF) == id) return ptr;
    ptr = (h >> 8) & 0xFC;
  }
  return 0;
}
}  // namespace

void HostAgent::probe(unsigned vectors) {
  host::CpuAgent& cpu = sys_.cpu();
  const pcie::RequesterId d = HostSystem::kDeviceRid;
  cpu.cfg_write(d, 0x10, static_cast<std::uint32_t>(HostSystem::kBar0));
  cpu.cfg_write(d, 0x14, static_cast<std::uint32_t>(HostSystem::kBar0 >> 32));
  cpu.cfg_write(d, 0x18, static_cast<std::uint32_t>(HostSystem::kBar2));
  cpu.cfg_write(d, 0x1C, static_cast<std::uint32_t>(HostSystem::kBar2 >> 32));
  cpu.cfg_write(d, 0x04, 0x6);  // Memory Space + Bus Master
  for (unsigned v = 0; v < vectors; ++v) {
    const std::uint64_t e = HostSystem::kBar0 + SOHU_PAGE_MSIX_TABLE + 16ULL * v;
    cpu.write32(e + 0, static_cast<std::uint32_t>(kMsiAddress));
    cpu.write32(e + 4, 0);
    cpu.write32(e + 8, v);
    cpu.write32(e + 12, 0);  // unmasked
  }
  const unsigned msix = find_capability(cpu, d, 0x11);
  if (msix == 0) throw std::runtime_error("probe: the device has no MSI-X capability");
  cpu.cfg_write(d, msix, cpu.cfg_read(d, msix) | (1u << 31));
}

void HostAgent::enable(unsigned entries, unsigned timeout_us) {
  Queue q;
  q.entries = entries;
  q.sq_base = sys_.alloc_dma(64ULL * entries);
  q.cq_base = sys_.alloc_dma(16ULL * entries);
  q.vector = 0;
  queues_[0] = q;
  write32(SOHU_AQA, ((entries - 1) << SOHU_AQA_ASQS_SHIFT) | ((entries - 1) << SOHU_AQA_ACQS_SHIFT));
  write64(SOHU_ASQ, q.sq_base);
  write64(SOHU_ACQ, q.cq_base);
  write32(SOHU_CTRL, SOHU_CTRL_EN_MASK);
  for (unsigned waited = 0; (read32(SOHU_STATUS) & SOHU_STATUS_RDY_MASK) == 0; waited += 5) {
    if ((read32(SOHU_STATUS) & SOHU_STATUS_CFS_MASK) != 0 || waited > timeout_us) {
      throw std::runtime_error("enable: the device did not become ready (STATUS " +
                               std::to_string(read32(SOHU_STATUS)) + ", ERR_CODE " +
                               std::to_string(read32(SOHU_ERR_CODE)) + ")");
    }
    sc_core::wait(5, sc_core::SC_US);
  }
}

device::Cqe HostAgent::admin(device::Sqe sqe) {
  submit(0, sqe);
  return wait(0);
}

void HostAgent::create_io_queue(std::uint16_t qid, unsigned entries, unsigned vector, bool interrupts) {
  Queue q;
  q.entries = entries;
  q.sq_base = sys_.alloc_dma(64ULL * entries);
  q.cq_base = sys_.alloc_dma(16ULL * entries);
  q.vector = vector;
  q.interrupts = interrupts;
  device::Sqe cq = make_admin(SOHU_ADMIN_OP_CREATE_CQ);
  SET64(cq, SOHU_ADMIN_CREATE_CQ_BASE, q.cq_base);
  SET(cq, SOHU_ADMIN_CREATE_CQ_QID, qid);
  SET(cq, SOHU_ADMIN_CREATE_CQ_QSIZE, entries - 1);
  SET(cq, SOHU_ADMIN_CREATE_CQ_VECTOR, vector);
  SET(cq, SOHU_ADMIN_CREATE_CQ_IEN, interrupts ? 1 : 0);
  device::Cqe r = admin(cq);
  if (r.status != 0)
    throw std::runtime_error("CREATE_CQ " + std::to_string(qid) +
                             " failed: " + to_string(static_cast<device::Status>(r.status)));
  device::Sqe sq = make_admin(SOHU_ADMIN_OP_CREATE_SQ);
  SET64(sq, SOHU_ADMIN_CREATE_SQ_BASE, q.sq_base);
  SET(sq, SOHU_ADMIN_CREATE_SQ_QID, qid);
  SET(sq, SOHU_ADMIN_CREATE_SQ_QSIZE, entries - 1);
  SET(sq, SOHU_ADMIN_CREATE_SQ_CQID, qid);
  r = admin(sq);
  if (r.status != 0)
    throw std::runtime_error("CREATE_SQ " + std::to_string(qid) +
                             " failed: " + to_string(static_cast<device::Status>(r.status)));
  queues_[qid] = q;
}

std::uint16_t HostAgent::submit(std::uint16_t qid, device::Sqe sqe) {
  Queue& q = queues_.at(qid);
  const std::uint16_t cid = q.next_cid++;
  if (q.next_cid == 0) q.next_cid = 1;
  sqe.dw[SOHU_SQE_CID_DW] =
      (sqe.dw[SOHU_SQE_CID_DW] & ~SOHU_SQE_CID_MASK) | (static_cast<std::uint32_t>(cid) << SOHU_SQE_CID_SHIFT);
  std::uint8_t bytes[64];
  sqe.to_bytes(bytes);
  sys_.cpu().mem_write(q.sq_base + 64ULL * q.sq_tail, bytes, 64);
  q.sq_tail = (q.sq_tail + 1) % q.entries;
  write32(SOHU_SQ_TAIL_DB(qid), q.sq_tail);
  return cid;
}

bool HostAgent::reap(std::uint16_t qid) {
  Queue& q = queues_.at(qid);
  bool any = false;
  for (;;) {
    std::uint8_t bytes[16];
    sys_.cpu().mem_read(q.cq_base + 16ULL * q.cq_head, bytes, 16);
    const device::Cqe e = device::Cqe::from_bytes(bytes);
    if (e.phase != q.phase) break;
    q.reaped.push_back(e);
    q.cq_head = (q.cq_head + 1) % q.entries;
    if (q.cq_head == 0) q.phase = !q.phase;
    any = true;
  }
  if (any) write32(SOHU_CQ_HEAD_DB(qid), q.cq_head);
  return any;
}

device::Cqe HostAgent::wait(std::uint16_t qid) {
  Queue& q = queues_.at(qid);
  while (q.reaped.empty()) {
    if (reap(qid)) break;
    if (!q.interrupts) {
      sc_core::wait(1, sc_core::SC_US);
    } else {
      sys_.irq().wait_for(q.vector);
    }
  }
  const device::Cqe e = q.reaped.front();
  q.reaped.pop_front();
  return e;
}

// ---- builders -------------------------------------------------------------------------

device::Sqe make_admin(std::uint8_t opcode) {
  device::Sqe s;
  SET(s, SOHU_SQE_OPCODE, opcode);
  return s;
}

device::Sqe make_nop() {
  return make_admin(SOHU_IO_OP_NOP);
}

device::Sqe make_gemm(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint32_t m, std::uint32_t k,
                      std::uint32_t n, device::DataType in, device::DataType out, device::Activation act, bool trans_a,
                      bool trans_b) {
  device::Sqe s = make_admin(SOHU_IO_OP_GEMM);
  SET64(s, SOHU_IO_GEMM_A, a);
  SET64(s, SOHU_IO_GEMM_B, b);
  SET64(s, SOHU_IO_GEMM_C, c);
  SET(s, SOHU_IO_GEMM_M, m);
  SET(s, SOHU_IO_GEMM_K, k);
  SET(s, SOHU_IO_GEMM_N, n);
  SET(s, SOHU_IO_GEMM_IN_DTYPE, static_cast<unsigned>(in));
  SET(s, SOHU_IO_GEMM_OUT_DTYPE, static_cast<unsigned>(out));
  SET(s, SOHU_IO_GEMM_ACT, static_cast<unsigned>(act));
  SET(s, SOHU_IO_GEMM_TRANS_A, trans_a ? 1 : 0);
  SET(s, SOHU_IO_GEMM_TRANS_B, trans_b ? 1 : 0);
  return s;
}

device::Sqe make_dma_copy(device::Space src_space, std::uint64_t src, device::Space dst_space, std::uint64_t dst,
                          std::uint64_t length, unsigned peer) {
  device::Sqe s = make_admin(SOHU_IO_OP_DMA_COPY);
  SET64(s, SOHU_IO_DMA_COPY_SRC, src);
  SET64(s, SOHU_IO_DMA_COPY_DST, dst);
  SET64(s, SOHU_IO_DMA_COPY_LENGTH, length);
  SET(s, SOHU_IO_DMA_COPY_SRC_SPACE, static_cast<unsigned>(src_space));
  SET(s, SOHU_IO_DMA_COPY_DST_SPACE, static_cast<unsigned>(dst_space));
  SET(s, SOHU_IO_DMA_COPY_PEER, peer);
  return s;
}

device::Sqe make_vector(device::VectorOp op, std::uint64_t x, std::uint64_t y, std::uint64_t out, std::uint32_t rows,
                        std::uint32_t cols, device::DataType in, device::DataType out_type, float scalar,
                        std::uint32_t aux, std::uint32_t aux2) {
  device::Sqe s = make_admin(SOHU_IO_OP_VECTOR);
  SET64(s, SOHU_IO_VECTOR_X, x);
  SET64(s, SOHU_IO_VECTOR_Y, y);
  SET64(s, SOHU_IO_VECTOR_OUT, out);
  SET(s, SOHU_IO_VECTOR_ROWS, rows);
  SET(s, SOHU_IO_VECTOR_COLS, cols);
  SET(s, SOHU_IO_VECTOR_VOP, static_cast<unsigned>(op));
  SET(s, SOHU_IO_VECTOR_IN_DTYPE, static_cast<unsigned>(in));
  SET(s, SOHU_IO_VECTOR_OUT_DTYPE, static_cast<unsigned>(out_type));
  std::uint32_t bits = 0;
  std::memcpy(&bits, &scalar, 4);
  SET(s, SOHU_IO_VECTOR_SCALAR, bits);
  SET(s, SOHU_IO_VECTOR_AUX, aux);
  SET(s, SOHU_IO_VECTOR_AUX2, aux2);
  return s;
}

device::Sqe make_attention(std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o, std::uint32_t batch,
                           std::uint32_t q_len, std::uint32_t kv_len, std::uint32_t q_heads, std::uint32_t kv_heads,
                           std::uint32_t head_dim, device::DataType dtype, bool causal) {
  device::Sqe s = make_admin(SOHU_IO_OP_ATTENTION);
  SET64(s, SOHU_IO_ATTENTION_Q, q);
  SET64(s, SOHU_IO_ATTENTION_K, k);
  SET64(s, SOHU_IO_ATTENTION_V, v);
  SET64(s, SOHU_IO_ATTENTION_O, o);
  SET(s, SOHU_IO_ATTENTION_Q_LEN, q_len);
  SET(s, SOHU_IO_ATTENTION_KV_LEN, kv_len);
  SET(s, SOHU_IO_ATTENTION_Q_HEADS, q_heads);
  SET(s, SOHU_IO_ATTENTION_KV_HEADS, kv_heads);
  SET(s, SOHU_IO_ATTENTION_HEAD_DIM, head_dim);
  SET(s, SOHU_IO_ATTENTION_DTYPE, static_cast<unsigned>(dtype));
  SET(s, SOHU_IO_ATTENTION_CAUSAL, causal ? 1 : 0);
  SET(s, SOHU_IO_ATTENTION_BATCH, batch);
  return s;
}

device::Sqe make_timestamp(device::Space space, std::uint64_t addr) {
  device::Sqe s = make_admin(SOHU_IO_OP_TIMESTAMP);
  SET64(s, SOHU_IO_TIMESTAMP_ADDR, addr);
  SET(s, SOHU_IO_TIMESTAMP_SPACE, static_cast<unsigned>(space));
  return s;
}

}  // namespace sohusim::platform
