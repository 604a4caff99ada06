#include "sohusim/driver/command.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {

/// Puts `value` into the field described by (dw, shift, mask) of the generated header. A mask
/// wider than 32 bits is a 64-bit little-endian field starting at dword `dw` (the header's
/// convention). Throws when the value has bits outside the field: a silently truncated
/// dimension would reach the device as a different, valid-looking number.
void put_field(Command& c, const char* field, unsigned dw, unsigned shift, std::uint64_t mask, std::uint64_t value) {
  const std::uint64_t max = mask >> shift;
  if (value > max) {
    throw std::invalid_argument(std::string("command field ") + field + " = " + std::to_string(value) +
                                " does not fit (maximum " + std::to_string(max) + ")");
  }
  if (mask > 0xFFFFFFFFull) {
    std::uint64_t v = c.dw[dw] | (static_cast<std::uint64_t>(c.dw[dw + 1]) << 32);
    v = (v & ~mask) | ((value << shift) & mask);
    c.dw[dw] = static_cast<std::uint32_t>(v);
    c.dw[dw + 1] = static_cast<std::uint32_t>(v >> 32);
  } else {
    const auto m32 = static_cast<std::uint32_t>(mask);
    c.dw[dw] = (c.dw[dw] & ~m32) | (static_cast<std::uint32_t>(value << shift) & m32);
  }
}

namespace {

// SOHU_SET(cmd, SOHU_IO_GEMM_M, v): the field's position comes from the register-map header
// only, so a change in the YAML reaches the driver by recompiling; the macro's name is the
// field's name in error messages.
#define SOHU_SET(cmd, F, v) \
  put_field((cmd), #F, F##_DW, F##_SHIFT, static_cast<std::uint64_t>(F##_MASK), static_cast<std::uint64_t>(v))

Command make(std::uint8_t opcode) {
  Command c;
  SOHU_SET(c, SOHU_SQE_OPCODE, opcode);
  return c;
}

std::uint32_t float_bits(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

unsigned code(DType t) {
  return static_cast<unsigned>(t);
}

}  // namespace

unsigned dtype_bytes(DType t) {
  switch (t) {
    case DType::Fp8E4M3:
    case DType::Fp8E5M2:
      return 1;
    case DType::Bf16:
    case DType::Fp16:
      return 2;
    case DType::Fp32:
      return 4;
  }
  throw std::invalid_argument("dtype_bytes: " + std::to_string(static_cast<unsigned>(t)) +
                              " is not a data type (0 .. " + std::to_string(SOHU_DTYPE_COUNT - 1) + ")");
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Fp8E4M3:
      return "fp8";
    case DType::Fp8E5M2:
      return "fp8_e5m2";
    case DType::Bf16:
      return "bf16";
    case DType::Fp16:
      return "fp16";
    case DType::Fp32:
      return "fp32";
  }
  return "unknown";
}

DType parse_dtype(const std::string& name) {
  if (name == "fp8" || name == "fp8_e4m3") return DType::Fp8E4M3;
  if (name == "fp8_e5m2") return DType::Fp8E5M2;
  if (name == "bf16") return DType::Bf16;
  if (name == "fp16") return DType::Fp16;
  if (name == "fp32") return DType::Fp32;
  throw std::invalid_argument("dtype `" + name + "`: allowed fp8 (= fp8_e4m3), fp8_e5m2, bf16, fp16, fp32");
}

// ---- common fields ----------------------------------------------------------------------

void Command::set_cid(std::uint16_t cid) {
  SOHU_SET(*this, SOHU_SQE_CID, cid);
}

void Command::set_correlation(std::uint64_t id) {
  SOHU_SET(*this, SOHU_SQE_CORRELATION, id);
}

void Command::set_context(std::uint16_t context) {
  SOHU_SET(*this, SOHU_SQE_CONTEXT, context);
}

Command& Command::fence_before(bool on) {
  SOHU_SET(*this, SOHU_SQE_FENCE_BEFORE, on ? 1 : 0);
  return *this;
}

Command& Command::no_irq(bool on) {
  SOHU_SET(*this, SOHU_SQE_NO_COMPLETION_IRQ, on ? 1 : 0);
  return *this;
}

void Command::to_bytes(std::uint8_t* out64) const {
  // Little-endian on the wire whatever the host's byte order.
  for (std::size_t i = 0; i < dw.size(); ++i) {
    for (unsigned b = 0; b < 4; ++b) out64[4 * i + b] = static_cast<std::uint8_t>(dw[i] >> (8 * b));
  }
}

// ---- builders ---------------------------------------------------------------------------

Command nop() {
  return make(SOHU_IO_OP_NOP);
}

Command dma_copy(Space src_space, std::uint64_t src, Space dst_space, std::uint64_t dst, std::uint64_t length,
                 unsigned peer) {
  Command c = make(SOHU_IO_OP_DMA_COPY);
  SOHU_SET(c, SOHU_IO_DMA_COPY_SRC, src);
  SOHU_SET(c, SOHU_IO_DMA_COPY_DST, dst);
  SOHU_SET(c, SOHU_IO_DMA_COPY_LENGTH, length);
  SOHU_SET(c, SOHU_IO_DMA_COPY_SRC_SPACE, static_cast<unsigned>(src_space));
  SOHU_SET(c, SOHU_IO_DMA_COPY_DST_SPACE, static_cast<unsigned>(dst_space));
  SOHU_SET(c, SOHU_IO_DMA_COPY_PEER, peer);
  return c;
}

Command gemm(const GemmDesc& g) {
  Command c = make(SOHU_IO_OP_GEMM);
  SOHU_SET(c, SOHU_IO_GEMM_A, g.a);
  SOHU_SET(c, SOHU_IO_GEMM_B, g.b);
  SOHU_SET(c, SOHU_IO_GEMM_C, g.c);
  SOHU_SET(c, SOHU_IO_GEMM_D, g.d);
  SOHU_SET(c, SOHU_IO_GEMM_M, g.m);
  SOHU_SET(c, SOHU_IO_GEMM_K, g.k);
  SOHU_SET(c, SOHU_IO_GEMM_N, g.n);
  SOHU_SET(c, SOHU_IO_GEMM_IN_DTYPE, code(g.in));
  SOHU_SET(c, SOHU_IO_GEMM_OUT_DTYPE, code(g.out));
  SOHU_SET(c, SOHU_IO_GEMM_TRANS_A, g.trans_a ? 1 : 0);
  SOHU_SET(c, SOHU_IO_GEMM_TRANS_B, g.trans_b ? 1 : 0);
  SOHU_SET(c, SOHU_IO_GEMM_ACT, static_cast<unsigned>(g.act));
  SOHU_SET(c, SOHU_IO_GEMM_BIAS, g.bias ? 1 : 0);
  SOHU_SET(c, SOHU_IO_GEMM_RESIDUAL, g.residual ? 1 : 0);
  SOHU_SET(c, SOHU_IO_GEMM_DATAFLOW, g.dataflow);
  return c;
}

Command attention(const AttentionDesc& a) {
  Command c = make(SOHU_IO_OP_ATTENTION);
  SOHU_SET(c, SOHU_IO_ATTENTION_Q, a.q);
  SOHU_SET(c, SOHU_IO_ATTENTION_K, a.k);
  SOHU_SET(c, SOHU_IO_ATTENTION_V, a.v);
  SOHU_SET(c, SOHU_IO_ATTENTION_O, a.o);
  SOHU_SET(c, SOHU_IO_ATTENTION_Q_LEN, a.q_len);
  SOHU_SET(c, SOHU_IO_ATTENTION_KV_LEN, a.kv_len);
  SOHU_SET(c, SOHU_IO_ATTENTION_Q_HEADS, a.q_heads);
  SOHU_SET(c, SOHU_IO_ATTENTION_KV_HEADS, a.kv_heads);
  SOHU_SET(c, SOHU_IO_ATTENTION_HEAD_DIM, a.head_dim);
  SOHU_SET(c, SOHU_IO_ATTENTION_DTYPE, code(a.dtype));
  SOHU_SET(c, SOHU_IO_ATTENTION_CAUSAL, a.causal ? 1 : 0);
  SOHU_SET(c, SOHU_IO_ATTENTION_BATCH, a.batch);
  return c;
}

Command vector(const VectorDesc& v) {
  Command c = make(SOHU_IO_OP_VECTOR);
  SOHU_SET(c, SOHU_IO_VECTOR_X, v.x);
  SOHU_SET(c, SOHU_IO_VECTOR_Y, v.y);
  SOHU_SET(c, SOHU_IO_VECTOR_OUT, v.out);
  SOHU_SET(c, SOHU_IO_VECTOR_ROWS, v.rows);
  SOHU_SET(c, SOHU_IO_VECTOR_COLS, v.cols);
  SOHU_SET(c, SOHU_IO_VECTOR_VOP, static_cast<unsigned>(v.op));
  SOHU_SET(c, SOHU_IO_VECTOR_IN_DTYPE, code(v.in));
  SOHU_SET(c, SOHU_IO_VECTOR_OUT_DTYPE, code(v.out_type));
  SOHU_SET(c, SOHU_IO_VECTOR_SCALAR, float_bits(v.scalar));
  SOHU_SET(c, SOHU_IO_VECTOR_AUX, v.aux);
  SOHU_SET(c, SOHU_IO_VECTOR_AUX2, v.aux2);
  // VECTOR.GROUP (dw14 31:16, AUX narrowed to 15:0) lets one ROPE command cover a batch whose
  // rows are position-major. It was added to the register map together with this driver;
  // compiled against a header without it, a group other than 0/1 cannot be expressed, and
  // sending it as 1 would rotate every row by a different position: refuse instead.
  if (v.op == VOp::Rope) {
#ifdef SOHU_IO_VECTOR_GROUP_SHIFT
    SOHU_SET(c, SOHU_IO_VECTOR_GROUP, v.rope_group);
#else
    if (v.rope_group > 1) {
      throw std::invalid_argument("VECTOR ROPE: rope_group " + std::to_string(v.rope_group) +
                                  " needs the VECTOR.GROUP operand, which this register map does not define");
    }
#endif
  }
  return c;
}

Command collective(CollOp op, std::uint64_t addr, std::uint64_t length, unsigned peer, DType dtype, std::uint32_t tag) {
  Command c = make(SOHU_IO_OP_COLLECTIVE);
  SOHU_SET(c, SOHU_IO_COLLECTIVE_ADDR, addr);
  SOHU_SET(c, SOHU_IO_COLLECTIVE_LENGTH, length);
  SOHU_SET(c, SOHU_IO_COLLECTIVE_OP, static_cast<unsigned>(op));
  SOHU_SET(c, SOHU_IO_COLLECTIVE_PEER, peer);
  SOHU_SET(c, SOHU_IO_COLLECTIVE_DTYPE, code(dtype));
  SOHU_SET(c, SOHU_IO_COLLECTIVE_TAG, tag);
  return c;
}

Command all_reduce(std::uint64_t addr, std::uint64_t length, std::uint32_t peers, DType dtype, std::uint32_t tag) {
  Command c = collective(CollOp::AllReduce, addr, length, 0, dtype, tag);
  SOHU_SET(c, SOHU_IO_COLLECTIVE_PEERS, peers);
  return c;
}

Command sem_signal(unsigned sem, unsigned device, std::uint32_t value) {
  Command c = make(SOHU_IO_OP_SEM_SIGNAL);
  SOHU_SET(c, SOHU_IO_SEM_SIGNAL_SEM, sem);
  SOHU_SET(c, SOHU_IO_SEM_SIGNAL_DEVICE, device);
  SOHU_SET(c, SOHU_IO_SEM_SIGNAL_VALUE, value);
  return c;
}

Command sem_wait(unsigned sem, std::uint32_t value, std::uint32_t timeout_us) {
  Command c = make(SOHU_IO_OP_SEM_WAIT);
  SOHU_SET(c, SOHU_IO_SEM_WAIT_SEM, sem);
  SOHU_SET(c, SOHU_IO_SEM_WAIT_VALUE, value);
  SOHU_SET(c, SOHU_IO_SEM_WAIT_TIMEOUT_US, timeout_us);
  return c;
}

Command fence() {
  return make(SOHU_IO_OP_FENCE);
}

Command timestamp(Space space, std::uint64_t addr) {
  Command c = make(SOHU_IO_OP_TIMESTAMP);
  SOHU_SET(c, SOHU_IO_TIMESTAMP_ADDR, addr);
  SOHU_SET(c, SOHU_IO_TIMESTAMP_SPACE, static_cast<unsigned>(space));
  return c;
}

Command pmu_snapshot(std::uint64_t host_iova) {
  Command c = make(SOHU_IO_OP_PMU_SNAPSHOT);
  SOHU_SET(c, SOHU_IO_PMU_SNAPSHOT_ADDR, host_iova);
  return c;
}

Command exec_program(std::uint64_t addr, std::uint32_t count) {
  Command c = make(SOHU_IO_OP_EXEC_PROGRAM);
  SOHU_SET(c, SOHU_IO_EXEC_PROGRAM_ADDR, addr);
  SOHU_SET(c, SOHU_IO_EXEC_PROGRAM_COUNT, count);
  return c;
}

}  // namespace sohusim::driver
