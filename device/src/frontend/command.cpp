#include "sohusim/device/frontend/command.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "hex.hpp"
#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/regmap/sohu_regs.h"

// Field extraction from the generated layout: F(SOHU_IO_GEMM_M) reads DW, masks, shifts.
#define F(P) ((sqe.dw[P##_DW] & static_cast<std::uint32_t>(P##_MASK)) >> P##_SHIFT)
#define F64(P) (sqe.u64(P##_DW))

namespace sohusim::device {

using detail::hex;

namespace {

/// Reserved bits: every bit the register map does not define for this opcode must be 0.
Outcome check_reserved(const Sqe& sqe, CommandQueue queue) {
  const CommandDesc* d = find_command(queue, sqe.opcode());
  if (d == nullptr) {
    return Outcome::fail(Status::InvalidOpcode, std::string(queue == CommandQueue::Admin ? "admin" : "I/O") +
                                                    " opcode " + hex(sqe.opcode()) + " is not defined");
  }
  for (unsigned i = 0; i < 16; ++i) {
    const std::uint32_t bad = sqe.dw[i] & ~d->defined_mask[i];
    if (bad != 0) {
      return Outcome::fail(Status::InvalidField,
                           std::string(d->name) + ": reserved bits " + hex(bad) + " set in DW" + std::to_string(i));
    }
  }
  return {};
}

Outcome dtype_field(unsigned code, const char* cmd, const char* field, DataType& out) {
  if (!valid_data_type(code)) {
    return Outcome::fail(Status::InvalidDtype, std::string(cmd) + ": " + field + " " + std::to_string(code) +
                                                   " is not a data type (0 FP8_E4M3 .. 4 FP32)");
  }
  out = static_cast<DataType>(code);
  return {};
}

Outcome space_field(unsigned code, const char* cmd, const char* field, Space& out) {
  if (code >= kNumSpaces) {
    return Outcome::fail(Status::InvalidField, std::string(cmd) + ": " + field + " " + std::to_string(code) +
                                                   " is not an address space (0 HOST, 1 HBM, 2 SRAM, 3 PEER_HBM)");
  }
  out = static_cast<Space>(code);
  return {};
}

Outcome nonzero(std::uint64_t v, const char* cmd, const char* field) {
  if (v == 0) return Outcome::fail(Status::InvalidDimensions, std::string(cmd) + ": " + field + " must be > 0");
  return {};
}

}  // namespace

const char* to_string(Status s) {
  return status_name(static_cast<std::uint16_t>(s));
}

Sqe Sqe::from_bytes(const std::uint8_t* p) {
  Sqe s;
  std::memcpy(s.dw.data(), p, 64);  // little-endian host, as the register map says
  return s;
}
void Sqe::to_bytes(std::uint8_t* p) const {
  std::memcpy(p, dw.data(), 64);
}

std::uint8_t Sqe::opcode() const {
  const Sqe& sqe = *this;
  return static_cast<std::uint8_t>(F(SOHU_SQE_OPCODE));
}
std::uint8_t Sqe::flags() const {
  const Sqe& sqe = *this;
  return static_cast<std::uint8_t>(F(SOHU_SQE_FLAGS));
}
std::uint16_t Sqe::cid() const {
  const Sqe& sqe = *this;
  return static_cast<std::uint16_t>(F(SOHU_SQE_CID));
}
std::uint16_t Sqe::context() const {
  const Sqe& sqe = *this;
  return static_cast<std::uint16_t>(F(SOHU_SQE_CONTEXT));
}
void Sqe::set_context(std::uint16_t context) {
  dw[SOHU_SQE_CONTEXT_DW] = (dw[SOHU_SQE_CONTEXT_DW] & ~SOHU_SQE_CONTEXT_MASK) |
                            ((static_cast<std::uint32_t>(context) << SOHU_SQE_CONTEXT_SHIFT) & SOHU_SQE_CONTEXT_MASK);
}
std::uint64_t Sqe::correlation() const {
  return u64(SOHU_SQE_CORRELATION_DW);
}
bool Sqe::no_completion_irq() const {
  const Sqe& sqe = *this;
  return F(SOHU_SQE_NO_COMPLETION_IRQ) != 0;
}

void Cqe::to_bytes(std::uint8_t* p) const {
  std::uint32_t dw[4];
  dw[SOHU_CQE_RESULT_DW] = static_cast<std::uint32_t>(result);
  dw[SOHU_CQE_RESULT_DW + 1] = static_cast<std::uint32_t>(result >> 32);
  dw[SOHU_CQE_SQ_HEAD_DW] = (static_cast<std::uint32_t>(sq_head) << SOHU_CQE_SQ_HEAD_SHIFT) |
                            (static_cast<std::uint32_t>(sq_id) << SOHU_CQE_SQ_ID_SHIFT);
  dw[SOHU_CQE_CID_DW] = (static_cast<std::uint32_t>(cid) << SOHU_CQE_CID_SHIFT) |
                        ((phase ? 1u : 0u) << SOHU_CQE_PHASE_SHIFT) |
                        ((static_cast<std::uint32_t>(status) << SOHU_CQE_STATUS_SHIFT) & SOHU_CQE_STATUS_MASK);
  std::memcpy(p, dw, 16);
}

Cqe Cqe::from_bytes(const std::uint8_t* p) {
  std::uint32_t dw[4];
  std::memcpy(dw, p, 16);
  Cqe c;
  c.result = dw[0] | (static_cast<std::uint64_t>(dw[1]) << 32);
  c.sq_head = static_cast<std::uint16_t>((dw[SOHU_CQE_SQ_HEAD_DW] & SOHU_CQE_SQ_HEAD_MASK) >> SOHU_CQE_SQ_HEAD_SHIFT);
  c.sq_id = static_cast<std::uint16_t>((dw[SOHU_CQE_SQ_ID_DW] & SOHU_CQE_SQ_ID_MASK) >> SOHU_CQE_SQ_ID_SHIFT);
  c.cid = static_cast<std::uint16_t>((dw[SOHU_CQE_CID_DW] & SOHU_CQE_CID_MASK) >> SOHU_CQE_CID_SHIFT);
  c.phase = ((dw[SOHU_CQE_PHASE_DW] & SOHU_CQE_PHASE_MASK) >> SOHU_CQE_PHASE_SHIFT) != 0;
  c.status = static_cast<std::uint16_t>((dw[SOHU_CQE_STATUS_DW] & SOHU_CQE_STATUS_MASK) >> SOHU_CQE_STATUS_SHIFT);
  return c;
}

// ---- admin ---------------------------------------------------------------------------

Outcome decode(const Sqe& sqe, CreateQueueCmd& c, bool cq) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  if (cq) {
    c.base = F64(SOHU_ADMIN_CREATE_CQ_BASE);
    c.qid = static_cast<std::uint16_t>(F(SOHU_ADMIN_CREATE_CQ_QID));
    c.entries = F(SOHU_ADMIN_CREATE_CQ_QSIZE) + 1;
    c.vector = static_cast<std::uint16_t>(F(SOHU_ADMIN_CREATE_CQ_VECTOR));
    c.ien = F(SOHU_ADMIN_CREATE_CQ_IEN) != 0;
    c.cqid = 0;
  } else {
    c.base = F64(SOHU_ADMIN_CREATE_SQ_BASE);
    c.qid = static_cast<std::uint16_t>(F(SOHU_ADMIN_CREATE_SQ_QID));
    c.entries = F(SOHU_ADMIN_CREATE_SQ_QSIZE) + 1;
    c.cqid = static_cast<std::uint16_t>(F(SOHU_ADMIN_CREATE_SQ_CQID));
    c.vector = 0;
    c.ien = false;
  }
  return {};
}

Outcome decode(const Sqe& sqe, QueueIdCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  c.qid = static_cast<std::uint16_t>(sqe.opcode() == SOHU_ADMIN_OP_DELETE_SQ ? F(SOHU_ADMIN_DELETE_SQ_QID)
                                                                             : F(SOHU_ADMIN_DELETE_CQ_QID));
  return {};
}

Outcome decode(const Sqe& sqe, FeatureCmd& c, bool set) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  if (set) {
    c.fid = static_cast<std::uint8_t>(F(SOHU_ADMIN_SET_FEATURES_FID));
    c.value = F(SOHU_ADMIN_SET_FEATURES_VALUE);
    c.value2 = F(SOHU_ADMIN_SET_FEATURES_VALUE2);
  } else {
    c.fid = static_cast<std::uint8_t>(F(SOHU_ADMIN_GET_FEATURES_FID));
    c.value = c.value2 = 0;
  }
  return {};
}

Outcome decode(const Sqe& sqe, PmuConfigCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  c.counter = F(SOHU_ADMIN_PMU_CONFIG_COUNTER);
  c.event = static_cast<std::uint16_t>(F(SOHU_ADMIN_PMU_CONFIG_EVENT));
  c.enable = F(SOHU_ADMIN_PMU_CONFIG_ENABLE) != 0;
  c.reset = F(SOHU_ADMIN_PMU_CONFIG_RESET) != 0;
  return {};
}

Outcome decode(const Sqe& sqe, TraceConfigCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  c.ring = F64(SOHU_ADMIN_TRACE_CONFIG_RING);
  c.size = F(SOHU_ADMIN_TRACE_CONFIG_SIZE);
  c.mask = F(SOHU_ADMIN_TRACE_CONFIG_MASK);
  c.enable = F(SOHU_ADMIN_TRACE_CONFIG_ENABLE) != 0;
  return {};
}

Outcome decode(const Sqe& sqe, SetContextCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  c.table = F64(SOHU_ADMIN_SET_CONTEXT_TABLE);
  c.context = static_cast<std::uint16_t>(F(SOHU_ADMIN_SET_CONTEXT_CONTEXT));
  c.valid = F(SOHU_ADMIN_SET_CONTEXT_VALID) != 0;
  c.entries = F(SOHU_ADMIN_SET_CONTEXT_ENTRIES);
  if (c.valid && c.entries == 0)
    return Outcome::fail(Status::InvalidField, "SET_CONTEXT: ENTRIES must be > 0 when VALID");
  if (c.valid && c.table % 8 != 0) {
    return Outcome::fail(Status::Misaligned, "SET_CONTEXT: TABLE " + hex(c.table) + " is not 8-byte aligned", c.table);
  }
  return {};
}

Outcome decode(const Sqe& sqe, VfContextCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  c.vf = static_cast<std::uint16_t>(F(SOHU_ADMIN_VF_CONTEXT_VF));
  c.context = static_cast<std::uint16_t>(F(SOHU_ADMIN_VF_CONTEXT_CONTEXT));
  return {};
}

Outcome decode(const Sqe& sqe, IdentifyCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Admin);
  if (!o.ok()) return o;
  c.addr = F64(SOHU_ADMIN_IDENTIFY_ADDR);
  if (c.addr % 4096 != 0)
    return Outcome::fail(Status::Misaligned, "IDENTIFY: ADDR " + hex(c.addr) + " is not 4 KiB aligned", c.addr);
  return {};
}

// ---- I/O -------------------------------------------------------------------------------

Outcome decode_no_operands(const Sqe& sqe, bool admin) {
  return check_reserved(sqe, admin ? CommandQueue::Admin : CommandQueue::Io);
}

Outcome decode(const Sqe& sqe, DmaCopyCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.src = F64(SOHU_IO_DMA_COPY_SRC);
  c.dst = F64(SOHU_IO_DMA_COPY_DST);
  c.length = F64(SOHU_IO_DMA_COPY_LENGTH);
  c.peer = F(SOHU_IO_DMA_COPY_PEER);
  if (!(o = space_field(F(SOHU_IO_DMA_COPY_SRC_SPACE), "DMA_COPY", "SRC_SPACE", c.src_space)).ok()) return o;
  if (!(o = space_field(F(SOHU_IO_DMA_COPY_DST_SPACE), "DMA_COPY", "DST_SPACE", c.dst_space)).ok()) return o;
  if (c.src + c.length < c.src || c.dst + c.length < c.dst) {
    return Outcome::fail(Status::OutOfRange, "DMA_COPY: LENGTH " + std::to_string(c.length) + " overflows the address",
                         c.src);
  }
  return {};
}

Outcome decode(const Sqe& sqe, GemmCmd& g) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  g.a = F64(SOHU_IO_GEMM_A);
  g.b = F64(SOHU_IO_GEMM_B);
  g.c = F64(SOHU_IO_GEMM_C);
  g.d = F64(SOHU_IO_GEMM_D);
  g.m = F(SOHU_IO_GEMM_M);
  g.k = F(SOHU_IO_GEMM_K);
  g.n = F(SOHU_IO_GEMM_N);
  if (!(o = nonzero(g.m, "GEMM", "M")).ok() || !(o = nonzero(g.k, "GEMM", "K")).ok() ||
      !(o = nonzero(g.n, "GEMM", "N")).ok())
    return o;
  if (!(o = dtype_field(F(SOHU_IO_GEMM_IN_DTYPE), "GEMM", "IN_DTYPE", g.in)).ok()) return o;
  if (!(o = dtype_field(F(SOHU_IO_GEMM_OUT_DTYPE), "GEMM", "OUT_DTYPE", g.out)).ok()) return o;
  g.trans_a = F(SOHU_IO_GEMM_TRANS_A) != 0;
  g.trans_b = F(SOHU_IO_GEMM_TRANS_B) != 0;
  g.act = static_cast<Activation>(F(SOHU_IO_GEMM_ACT));
  g.bias = F(SOHU_IO_GEMM_BIAS) != 0;
  g.residual = F(SOHU_IO_GEMM_RESIDUAL) != 0;
  if (g.bias && g.residual)
    return Outcome::fail(Status::InvalidField, "GEMM: BIAS and RESIDUAL both set (D is one or the other)");
  const unsigned df = F(SOHU_IO_GEMM_DATAFLOW);
  g.dataflow.reset();
  if (df != 0) g.dataflow = static_cast<Dataflow>(df - 1);
  return {};
}

Outcome decode(const Sqe& sqe, AttentionCmd& a) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  a.q = F64(SOHU_IO_ATTENTION_Q);
  a.k = F64(SOHU_IO_ATTENTION_K);
  a.v = F64(SOHU_IO_ATTENTION_V);
  a.o = F64(SOHU_IO_ATTENTION_O);
  a.q_len = F(SOHU_IO_ATTENTION_Q_LEN);
  a.kv_len = F(SOHU_IO_ATTENTION_KV_LEN);
  a.q_heads = F(SOHU_IO_ATTENTION_Q_HEADS);
  a.kv_heads = F(SOHU_IO_ATTENTION_KV_HEADS);
  a.head_dim = F(SOHU_IO_ATTENTION_HEAD_DIM);
  a.batch = F(SOHU_IO_ATTENTION_BATCH);
  a.causal = F(SOHU_IO_ATTENTION_CAUSAL) != 0;
  if (!(o = dtype_field(F(SOHU_IO_ATTENTION_DTYPE), "ATTENTION", "DTYPE", a.dtype)).ok()) return o;
  for (auto [v, n] : {std::pair<std::uint32_t, const char*>{a.q_len, "Q_LEN"},
                      {a.kv_len, "KV_LEN"},
                      {a.q_heads, "Q_HEADS"},
                      {a.kv_heads, "KV_HEADS"},
                      {a.head_dim, "HEAD_DIM"},
                      {a.batch, "BATCH"}}) {
    if (!(o = nonzero(v, "ATTENTION", n)).ok()) return o;
  }
  if (a.q_heads % a.kv_heads != 0) {
    return Outcome::fail(Status::InvalidDimensions, "ATTENTION: Q_HEADS " + std::to_string(a.q_heads) +
                                                        " is not a multiple of KV_HEADS " + std::to_string(a.kv_heads));
  }
  if (a.causal && a.q_len > a.kv_len) {
    return Outcome::fail(Status::InvalidDimensions, "ATTENTION: causal with Q_LEN " + std::to_string(a.q_len) +
                                                        " > KV_LEN " + std::to_string(a.kv_len));
  }
  return {};
}

Outcome decode(const Sqe& sqe, VectorCmd& v) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  v.x = F64(SOHU_IO_VECTOR_X);
  v.y = F64(SOHU_IO_VECTOR_Y);
  v.out = F64(SOHU_IO_VECTOR_OUT);
  v.rows = F(SOHU_IO_VECTOR_ROWS);
  v.cols = F(SOHU_IO_VECTOR_COLS);
  const unsigned op = F(SOHU_IO_VECTOR_VOP);
  if (op >= kNumVectorOps) {
    return Outcome::fail(Status::InvalidField, "VECTOR: VOP " + std::to_string(op) +
                                                   " is not a vector operation (0 .. " +
                                                   std::to_string(kNumVectorOps - 1) + ")");
  }
  v.op = static_cast<VectorOp>(op);
  if (!(o = dtype_field(F(SOHU_IO_VECTOR_IN_DTYPE), "VECTOR", "IN_DTYPE", v.in)).ok()) return o;
  if (!(o = dtype_field(F(SOHU_IO_VECTOR_OUT_DTYPE), "VECTOR", "OUT_DTYPE", v.out_type)).ok()) return o;
  const std::uint32_t bits = F(SOHU_IO_VECTOR_SCALAR);
  std::memcpy(&v.scalar, &bits, 4);
  v.aux = F(SOHU_IO_VECTOR_AUX);
  v.aux2 = F(SOHU_IO_VECTOR_AUX2);
  v.group = std::max<std::uint32_t>(1, F(SOHU_IO_VECTOR_GROUP));
  if (!(o = nonzero(v.rows, "VECTOR", "ROWS")).ok() || !(o = nonzero(v.cols, "VECTOR", "COLS")).ok()) return o;
  if (!std::isfinite(v.scalar)) return Outcome::fail(Status::InvalidField, "VECTOR: SCALAR is not a finite float");
  if (v.op == VectorOp::Swiglu && v.cols % 2 != 0) {
    return Outcome::fail(Status::InvalidDimensions,
                         "VECTOR SWIGLU: COLS " + std::to_string(v.cols) + " must be even ([gate | up])");
  }
  if (v.op == VectorOp::Rope && (v.aux == 0 || v.aux % 2 != 0 || v.cols % v.aux != 0 || !(v.scalar > 0))) {
    return Outcome::fail(Status::InvalidDimensions, "VECTOR ROPE: AUX (head_dim) " + std::to_string(v.aux) +
                                                        " must be even and divide COLS " + std::to_string(v.cols) +
                                                        ", and SCALAR (theta) > 0");
  }
  if ((v.op == VectorOp::RmsNorm || v.op == VectorOp::LayerNorm) && v.scalar < 0) {
    return Outcome::fail(Status::InvalidField, "VECTOR: norm epsilon (SCALAR) must be >= 0");
  }
  return {};
}

Outcome decode(const Sqe& sqe, CollectiveCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.addr = F64(SOHU_IO_COLLECTIVE_ADDR);
  c.length = F64(SOHU_IO_COLLECTIVE_LENGTH);
  const unsigned op = F(SOHU_IO_COLLECTIVE_OP);
  if (op > 4) return Outcome::fail(Status::InvalidField, "COLLECTIVE: OP " + std::to_string(op) + " is not 0 .. 4");
  c.op = static_cast<CollectiveOp>(op);
  c.peer = F(SOHU_IO_COLLECTIVE_PEER);
  c.peers = F(SOHU_IO_COLLECTIVE_PEERS);
  if (c.op == CollectiveOp::AllReduce && c.peers == 0)
    return Outcome::fail(Status::InvalidField, "COLLECTIVE ALL_REDUCE: PEERS names no device");
  if (!(o = dtype_field(F(SOHU_IO_COLLECTIVE_DTYPE), "COLLECTIVE", "DTYPE", c.dtype)).ok()) return o;
  c.tag = F(SOHU_IO_COLLECTIVE_TAG);
  if (!(o = nonzero(c.length, "COLLECTIVE", "LENGTH")).ok()) return o;
  if (c.length % bytes_of(c.dtype) != 0) {
    return Outcome::fail(Status::Misaligned, "COLLECTIVE: LENGTH " + std::to_string(c.length) +
                                                 " is not a whole number of " + to_string(c.dtype) + " elements");
  }
  return {};
}

Outcome decode(const Sqe& sqe, SemSignalCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.sem = F(SOHU_IO_SEM_SIGNAL_SEM);
  c.device = F(SOHU_IO_SEM_SIGNAL_DEVICE);
  c.value = F(SOHU_IO_SEM_SIGNAL_VALUE);
  return {};
}

Outcome decode(const Sqe& sqe, SemWaitCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.sem = F(SOHU_IO_SEM_WAIT_SEM);
  c.value = F(SOHU_IO_SEM_WAIT_VALUE);
  c.timeout_us = F(SOHU_IO_SEM_WAIT_TIMEOUT_US);
  return {};
}

Outcome decode_timestamp(const Sqe& sqe, AddressCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.addr = F64(SOHU_IO_TIMESTAMP_ADDR);
  return space_field(F(SOHU_IO_TIMESTAMP_SPACE), "TIMESTAMP", "SPACE", c.space);
}

Outcome decode_pmu_snapshot(const Sqe& sqe, AddressCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.addr = F64(SOHU_IO_PMU_SNAPSHOT_ADDR);
  c.space = Space::Host;
  return {};
}

Outcome decode(const Sqe& sqe, ExecProgramCmd& c) {
  Outcome o = check_reserved(sqe, CommandQueue::Io);
  if (!o.ok()) return o;
  c.addr = F64(SOHU_IO_EXEC_PROGRAM_ADDR);
  c.count = F(SOHU_IO_EXEC_PROGRAM_COUNT);
  return nonzero(c.count, "EXEC_PROGRAM", "COUNT");
}

}  // namespace sohusim::device
