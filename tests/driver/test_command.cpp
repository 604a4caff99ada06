// The command builders against the register map: every field is decoded here with the
// generated SOHU_* macros (independently of the builders' own code) and must hold the value
// put in, and no bit outside the command's defined fields may be set (the device fails
// such a command with INVALID_FIELD). Plus the names of statuses, opcodes and data types.
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/driver/command.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {
namespace {

// A 32-bit field of a command, by the header's macros.
#define GET(cmd, F) ((static_cast<std::uint64_t>((cmd).dw[F##_DW]) & static_cast<std::uint64_t>(F##_MASK)) >> F##_SHIFT)
// A 64-bit field (two dwords, little-endian).
#define GET64(cmd, F) \
  (static_cast<std::uint64_t>((cmd).dw[F##_DW]) | (static_cast<std::uint64_t>((cmd).dw[F##_DW + 1]) << 32))

/// The bits a command may set: its operands' fields plus the common header.
struct Defined {
  std::array<std::uint32_t, 16> m{};
  void add(unsigned dw, std::uint64_t mask) {
    m[dw] |= static_cast<std::uint32_t>(mask);
    if (mask > 0xFFFFFFFFull) m[dw + 1] |= static_cast<std::uint32_t>(mask >> 32);
  }
  Defined() {
    add(SOHU_SQE_OPCODE_DW, SOHU_SQE_OPCODE_MASK);
    add(SOHU_SQE_FENCE_BEFORE_DW, SOHU_SQE_FENCE_BEFORE_MASK);
    add(SOHU_SQE_NO_COMPLETION_IRQ_DW, SOHU_SQE_NO_COMPLETION_IRQ_MASK);
    add(SOHU_SQE_CID_DW, SOHU_SQE_CID_MASK);
    add(SOHU_SQE_CONTEXT_DW, SOHU_SQE_CONTEXT_MASK);
    add(SOHU_SQE_CORRELATION_DW, SOHU_SQE_CORRELATION_MASK);
  }
};
#define DEF(d, F) (d).add(F##_DW, static_cast<std::uint64_t>(F##_MASK))

void expect_no_reserved_bits(const Command& c, const Defined& d) {
  for (unsigned i = 0; i < 16; ++i) {
    EXPECT_EQ(c.dw[i] & ~d.m[i], 0u) << "reserved bits set in DW" << i;
  }
}

// ---- common fields --------------------------------------------------------------------

TEST(CommandHeader, CidCorrelationContextAndFlagsLandInTheirFields) {
  Command c = nop();
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_NOP);
  c.set_cid(0xBEEF);
  c.set_correlation(0x0123'4567'89AB'CDEFull);
  c.set_context(0x7AB);
  EXPECT_EQ(GET(c, SOHU_SQE_CID), 0xBEEFu);
  EXPECT_EQ(GET64(c, SOHU_SQE_CORRELATION), 0x0123'4567'89AB'CDEFull);
  EXPECT_EQ(GET(c, SOHU_SQE_CONTEXT), 0x7ABu);
  EXPECT_EQ(c.cid(), 0xBEEF);
  EXPECT_EQ(c.correlation(), 0x0123'4567'89AB'CDEFull);
  EXPECT_EQ(c.opcode(), SOHU_IO_OP_NOP);

  c.no_irq();
  EXPECT_EQ(GET(c, SOHU_SQE_NO_COMPLETION_IRQ), 1u);
  EXPECT_EQ(GET(c, SOHU_SQE_FENCE_BEFORE), 0u);
  c.fence_before();
  EXPECT_EQ(GET(c, SOHU_SQE_FENCE_BEFORE), 1u);
  c.no_irq(false);
  EXPECT_EQ(GET(c, SOHU_SQE_NO_COMPLETION_IRQ), 0u);
  EXPECT_EQ(GET(c, SOHU_SQE_FENCE_BEFORE), 1u);
  // Setting the CID again replaces it and leaves the opcode and flags alone.
  c.set_cid(7);
  EXPECT_EQ(GET(c, SOHU_SQE_CID), 7u);
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_NOP);
  EXPECT_EQ(GET(c, SOHU_SQE_FENCE_BEFORE), 1u);
  expect_no_reserved_bits(c, Defined{});
}

TEST(CommandHeader, ToBytesIsLittleEndianDwords) {
  Command c = nop();
  c.set_cid(0x1234);
  c.set_correlation(0x1122334455667788ull);
  std::uint8_t b[64];
  c.to_bytes(b);
  EXPECT_EQ(b[0], SOHU_IO_OP_NOP);
  EXPECT_EQ(b[2], 0x34);
  EXPECT_EQ(b[3], 0x12);
  EXPECT_EQ(b[8], 0x88);  // DW2 low byte: correlation bits 7:0
  EXPECT_EQ(b[15], 0x11);
}

// ---- I/O commands ---------------------------------------------------------------------

TEST(CommandBuilders, DmaCopyFields) {
  const Command c = dma_copy(Space::Host, 0x1'2345'6000ull, Space::PeerHbm, 0xFF'0000'0040ull, 0x3'0000'0001ull, 5);
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_DMA_COPY);
  EXPECT_EQ(GET64(c, SOHU_IO_DMA_COPY_SRC), 0x1'2345'6000ull);
  EXPECT_EQ(GET64(c, SOHU_IO_DMA_COPY_DST), 0xFF'0000'0040ull);
  EXPECT_EQ(GET64(c, SOHU_IO_DMA_COPY_LENGTH), 0x3'0000'0001ull);
  EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_SRC_SPACE), SOHU_SPACE_HOST);
  EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_DST_SPACE), SOHU_SPACE_PEER_HBM);
  EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_PEER), 5u);
  const Command d = dma_copy(Space::Sram, 1, Space::Hbm, 2, 3);
  EXPECT_EQ(GET(d, SOHU_IO_DMA_COPY_SRC_SPACE), SOHU_SPACE_SRAM);
  EXPECT_EQ(GET(d, SOHU_IO_DMA_COPY_DST_SPACE), SOHU_SPACE_HBM);
  Defined def;
  DEF(def, SOHU_IO_DMA_COPY_SRC);
  DEF(def, SOHU_IO_DMA_COPY_DST);
  DEF(def, SOHU_IO_DMA_COPY_LENGTH);
  DEF(def, SOHU_IO_DMA_COPY_SRC_SPACE);
  DEF(def, SOHU_IO_DMA_COPY_DST_SPACE);
  DEF(def, SOHU_IO_DMA_COPY_PEER);
  expect_no_reserved_bits(c, def);
  EXPECT_THROW(dma_copy(Space::Hbm, 0, Space::PeerHbm, 0, 1, 256), std::invalid_argument);  // PEER is 8 bits
}

TEST(CommandBuilders, GemmFields) {
  GemmDesc g;
  g.a = 0x100;
  g.b = 0x2'0000'0000ull;
  g.c = 0x3000;
  g.d = 0x4'0000'4000ull;
  g.m = 64;
  g.k = 12288;
  g.n = 0xFFFF'FFFFu;
  g.in = DType::Fp8E4M3;
  g.out = DType::Fp32;
  g.trans_a = false;
  g.trans_b = true;
  g.act = Act::Silu;
  g.bias = true;
  g.residual = false;
  g.dataflow = SOHU_IO_GEMM_DATAFLOW_OS;
  const Command c = gemm(g);
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_GEMM);
  EXPECT_EQ(GET64(c, SOHU_IO_GEMM_A), 0x100u);
  EXPECT_EQ(GET64(c, SOHU_IO_GEMM_B), 0x2'0000'0000ull);
  EXPECT_EQ(GET64(c, SOHU_IO_GEMM_C), 0x3000u);
  EXPECT_EQ(GET64(c, SOHU_IO_GEMM_D), 0x4'0000'4000ull);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_M), 64u);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_K), 12288u);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_N), 0xFFFF'FFFFu);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_IN_DTYPE), SOHU_DTYPE_FP8_E4M3);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_OUT_DTYPE), SOHU_DTYPE_FP32);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_TRANS_A), 0u);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_TRANS_B), 1u);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_ACT), SOHU_ACT_SILU);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_BIAS), 1u);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_RESIDUAL), 0u);
  EXPECT_EQ(GET(c, SOHU_IO_GEMM_DATAFLOW), SOHU_IO_GEMM_DATAFLOW_OS);

  g.trans_a = true;
  g.trans_b = false;
  g.bias = false;
  g.residual = true;
  g.act = Act::Gelu;
  g.in = DType::Bf16;
  g.out = DType::Fp16;
  const Command c2 = gemm(g);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_TRANS_A), 1u);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_TRANS_B), 0u);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_BIAS), 0u);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_RESIDUAL), 1u);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_ACT), SOHU_ACT_GELU);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_IN_DTYPE), SOHU_DTYPE_BF16);
  EXPECT_EQ(GET(c2, SOHU_IO_GEMM_OUT_DTYPE), SOHU_DTYPE_FP16);

  Defined def;
  for (unsigned dw : {4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u}) def.m[dw] = 0xFFFFFFFFu;
  DEF(def, SOHU_IO_GEMM_IN_DTYPE);
  DEF(def, SOHU_IO_GEMM_OUT_DTYPE);
  DEF(def, SOHU_IO_GEMM_TRANS_A);
  DEF(def, SOHU_IO_GEMM_TRANS_B);
  DEF(def, SOHU_IO_GEMM_ACT);
  DEF(def, SOHU_IO_GEMM_BIAS);
  DEF(def, SOHU_IO_GEMM_RESIDUAL);
  DEF(def, SOHU_IO_GEMM_DATAFLOW);
  expect_no_reserved_bits(c, def);
  expect_no_reserved_bits(c2, def);
}

TEST(CommandBuilders, AttentionFieldsIncludingThePackedHeadCounts) {
  AttentionDesc a;
  a.q = 0x1000;
  a.k = 0x2000;
  a.v = 0x3000;
  a.o = 0x4'0000'0000ull;
  a.batch = 0xFFFF;
  a.q_len = 1;
  a.kv_len = 32768;
  a.q_heads = 1023;  // the widest values each packed field holds
  a.kv_heads = 1023;
  a.head_dim = 4095;
  a.dtype = DType::Fp8E5M2;
  a.causal = true;
  const Command c = attention(a);
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_ATTENTION);
  EXPECT_EQ(GET64(c, SOHU_IO_ATTENTION_Q), 0x1000u);
  EXPECT_EQ(GET64(c, SOHU_IO_ATTENTION_K), 0x2000u);
  EXPECT_EQ(GET64(c, SOHU_IO_ATTENTION_V), 0x3000u);
  EXPECT_EQ(GET64(c, SOHU_IO_ATTENTION_O), 0x4'0000'0000ull);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_Q_LEN), 1u);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_KV_LEN), 32768u);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_Q_HEADS), 1023u);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_KV_HEADS), 1023u);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_HEAD_DIM), 4095u);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_DTYPE), SOHU_DTYPE_FP8_E5M2);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_CAUSAL), 1u);
  EXPECT_EQ(GET(c, SOHU_IO_ATTENTION_BATCH), 0xFFFFu);

  // Distinct small values: no field bleeds into its neighbour.
  a.q_heads = 64;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.causal = false;
  a.batch = 3;
  const Command c2 = attention(a);
  EXPECT_EQ(GET(c2, SOHU_IO_ATTENTION_Q_HEADS), 64u);
  EXPECT_EQ(GET(c2, SOHU_IO_ATTENTION_KV_HEADS), 8u);
  EXPECT_EQ(GET(c2, SOHU_IO_ATTENTION_HEAD_DIM), 128u);
  EXPECT_EQ(GET(c2, SOHU_IO_ATTENTION_CAUSAL), 0u);
  EXPECT_EQ(GET(c2, SOHU_IO_ATTENTION_BATCH), 3u);

  Defined def;
  for (unsigned dw : {4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u}) def.m[dw] = 0xFFFFFFFFu;
  DEF(def, SOHU_IO_ATTENTION_Q_HEADS);
  DEF(def, SOHU_IO_ATTENTION_KV_HEADS);
  DEF(def, SOHU_IO_ATTENTION_HEAD_DIM);
  DEF(def, SOHU_IO_ATTENTION_DTYPE);
  DEF(def, SOHU_IO_ATTENTION_CAUSAL);
  DEF(def, SOHU_IO_ATTENTION_BATCH);
  expect_no_reserved_bits(c, def);
}

TEST(CommandBuilders, ValuesTooWideForTheirFieldAreRefusedNamingThem) {
  AttentionDesc a;
  a.q_heads = 1024;  // Q_HEADS is 10 bits
  try {
    (void)attention(a);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Q_HEADS"), std::string::npos) << m;
    EXPECT_NE(m.find("1024"), std::string::npos) << m;
    EXPECT_NE(m.find("1023"), std::string::npos) << m;
  }
  a = AttentionDesc{};
  a.batch = 0x10000;  // BATCH is 16 bits
  EXPECT_THROW((void)attention(a), std::invalid_argument);
  EXPECT_THROW((void)sem_signal(256, kLocalDevice, 1), std::invalid_argument);  // SEM is 8 bits
  GemmDesc g;
  g.dataflow = 4;  // DATAFLOW is 2 bits
  EXPECT_THROW((void)gemm(g), std::invalid_argument);
}

TEST(CommandBuilders, VectorFieldsAndTheRopeGroup) {
  VectorDesc v;
  v.op = VOp::Rope;
  v.x = 0x10;
  v.y = 0x2'0000'0000ull;
  v.out = 0x30;
  v.rows = 4096;
  v.cols = 8192;
  v.in = DType::Bf16;
  v.out_type = DType::Fp8E4M3;
  v.scalar = 500000.0f;
  v.aux = 128;
  v.aux2 = 2047;
  v.rope_group = 64;
  const Command c = vector(v);
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_VECTOR);
  EXPECT_EQ(GET64(c, SOHU_IO_VECTOR_X), 0x10u);
  EXPECT_EQ(GET64(c, SOHU_IO_VECTOR_Y), 0x2'0000'0000ull);
  EXPECT_EQ(GET64(c, SOHU_IO_VECTOR_OUT), 0x30u);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_ROWS), 4096u);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_COLS), 8192u);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_VOP), SOHU_VOP_ROPE);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_IN_DTYPE), SOHU_DTYPE_BF16);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_OUT_DTYPE), SOHU_DTYPE_FP8_E4M3);
  const auto bits = static_cast<std::uint32_t>(GET(c, SOHU_IO_VECTOR_SCALAR));
  float scalar = 0;
  std::memcpy(&scalar, &bits, sizeof scalar);
  EXPECT_EQ(scalar, 500000.0f);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_AUX), 128u);
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_AUX2), 2047u);
#ifdef SOHU_IO_VECTOR_GROUP_SHIFT
  EXPECT_EQ(GET(c, SOHU_IO_VECTOR_GROUP), 64u);
  // AUX is 16 bits once GROUP shares its dword.
  v.aux = 0x10000;
  EXPECT_THROW((void)vector(v), std::invalid_argument);
#else
  EXPECT_THROW((void)vector(v), std::invalid_argument);  // a group cannot be expressed
#endif

  VectorDesc n;
  n.op = VOp::RmsNorm;
  n.rows = 1;
  n.cols = 8192;
  n.scalar = 1e-5f;
  n.rope_group = 64;  // only ROPE uses it
  const Command rms = vector(n);
  EXPECT_EQ(GET(rms, SOHU_IO_VECTOR_VOP), SOHU_VOP_RMSNORM);
  EXPECT_EQ(rms.dw[14], 0u);
  for (VOp op : {VOp::LayerNorm, VOp::Silu, VOp::Gelu, VOp::Swiglu, VOp::Add, VOp::Scale, VOp::Cast, VOp::Softmax}) {
    n.op = op;
    EXPECT_EQ(GET(vector(n), SOHU_IO_VECTOR_VOP), static_cast<unsigned>(op));
  }
  EXPECT_EQ(static_cast<unsigned>(VOp::Softmax), SOHU_VOP_SOFTMAX);
  EXPECT_EQ(static_cast<unsigned>(VOp::Swiglu), SOHU_VOP_SWIGLU);

  Defined def;
  for (unsigned dw : {4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 13u, 14u, 15u}) def.m[dw] = 0xFFFFFFFFu;
  DEF(def, SOHU_IO_VECTOR_VOP);
  DEF(def, SOHU_IO_VECTOR_IN_DTYPE);
  DEF(def, SOHU_IO_VECTOR_OUT_DTYPE);
  expect_no_reserved_bits(c, def);
}

TEST(CommandBuilders, CollectiveFields) {
  const Command c = collective(CollOp::ReduceStep, 0x8000, 0x1'0000'0000ull, 7, DType::Bf16, 0xCAFEF00Du);
  EXPECT_EQ(GET(c, SOHU_SQE_OPCODE), SOHU_IO_OP_COLLECTIVE);
  EXPECT_EQ(GET64(c, SOHU_IO_COLLECTIVE_ADDR), 0x8000u);
  EXPECT_EQ(GET64(c, SOHU_IO_COLLECTIVE_LENGTH), 0x1'0000'0000ull);
  EXPECT_EQ(GET(c, SOHU_IO_COLLECTIVE_OP), SOHU_IO_COLLECTIVE_OP_REDUCE_STEP);
  EXPECT_EQ(GET(c, SOHU_IO_COLLECTIVE_PEER), 7u);
  EXPECT_EQ(GET(c, SOHU_IO_COLLECTIVE_DTYPE), SOHU_DTYPE_BF16);
  EXPECT_EQ(GET(c, SOHU_IO_COLLECTIVE_TAG), 0xCAFEF00Du);
  EXPECT_EQ(GET(collective(CollOp::Send, 0, 1, 0, DType::Fp32, 0), SOHU_IO_COLLECTIVE_OP), SOHU_IO_COLLECTIVE_OP_SEND);
  EXPECT_EQ(GET(collective(CollOp::Recv, 0, 1, 0, DType::Fp32, 0), SOHU_IO_COLLECTIVE_OP), SOHU_IO_COLLECTIVE_OP_RECV);
  EXPECT_EQ(GET(collective(CollOp::GatherStep, 0, 1, 0, DType::Fp32, 0), SOHU_IO_COLLECTIVE_OP),
            SOHU_IO_COLLECTIVE_OP_GATHER_STEP);
  const Command a = all_reduce(0x4000, 4096, 0xFEu, DType::Fp8E4M3, 42);
  EXPECT_EQ(GET(a, SOHU_IO_COLLECTIVE_OP), SOHU_IO_COLLECTIVE_OP_ALL_REDUCE);
  EXPECT_EQ(GET(a, SOHU_IO_COLLECTIVE_PEERS), 0xFEu);
  EXPECT_EQ(GET64(a, SOHU_IO_COLLECTIVE_LENGTH), 4096u);
  EXPECT_EQ(GET(a, SOHU_IO_COLLECTIVE_TAG), 42u);
  Defined def;
  DEF(def, SOHU_IO_COLLECTIVE_ADDR);
  DEF(def, SOHU_IO_COLLECTIVE_LENGTH);
  DEF(def, SOHU_IO_COLLECTIVE_OP);
  DEF(def, SOHU_IO_COLLECTIVE_PEER);
  DEF(def, SOHU_IO_COLLECTIVE_DTYPE);
  DEF(def, SOHU_IO_COLLECTIVE_TAG);
  DEF(def, SOHU_IO_COLLECTIVE_PEERS);
  expect_no_reserved_bits(c, def);
  expect_no_reserved_bits(a, def);
}

TEST(CommandBuilders, SemaphoreFields) {
  const Command s = sem_signal(200, kLocalDevice, 3);
  EXPECT_EQ(GET(s, SOHU_SQE_OPCODE), SOHU_IO_OP_SEM_SIGNAL);
  EXPECT_EQ(GET(s, SOHU_IO_SEM_SIGNAL_SEM), 200u);
  EXPECT_EQ(GET(s, SOHU_IO_SEM_SIGNAL_DEVICE), SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL);
  EXPECT_EQ(GET(s, SOHU_IO_SEM_SIGNAL_VALUE), 3u);
  EXPECT_EQ(GET(sem_signal(1, 6, 1), SOHU_IO_SEM_SIGNAL_DEVICE), 6u);
  const Command w = sem_wait(17, 0xFFFF'FFFFu, 250);
  EXPECT_EQ(GET(w, SOHU_SQE_OPCODE), SOHU_IO_OP_SEM_WAIT);
  EXPECT_EQ(GET(w, SOHU_IO_SEM_WAIT_SEM), 17u);
  EXPECT_EQ(GET(w, SOHU_IO_SEM_WAIT_VALUE), 0xFFFF'FFFFu);
  EXPECT_EQ(GET(w, SOHU_IO_SEM_WAIT_TIMEOUT_US), 250u);
  EXPECT_EQ(GET(sem_wait(1, 1), SOHU_IO_SEM_WAIT_TIMEOUT_US), 0u);  // default: wait forever
  Defined ds, dw;
  DEF(ds, SOHU_IO_SEM_SIGNAL_SEM);
  DEF(ds, SOHU_IO_SEM_SIGNAL_DEVICE);
  DEF(ds, SOHU_IO_SEM_SIGNAL_VALUE);
  DEF(dw, SOHU_IO_SEM_WAIT_SEM);
  DEF(dw, SOHU_IO_SEM_WAIT_VALUE);
  DEF(dw, SOHU_IO_SEM_WAIT_TIMEOUT_US);
  expect_no_reserved_bits(s, ds);
  expect_no_reserved_bits(w, dw);
}

TEST(CommandBuilders, NopFenceTimestampSnapshotAndProgram) {
  const Defined header;
  const Command n = nop(), f = fence();
  EXPECT_EQ(GET(n, SOHU_SQE_OPCODE), SOHU_IO_OP_NOP);
  EXPECT_EQ(GET(f, SOHU_SQE_OPCODE), SOHU_IO_OP_FENCE);
  expect_no_reserved_bits(n, header);
  expect_no_reserved_bits(f, header);
  const Command t = timestamp(Space::Host, 0xABC0);
  EXPECT_EQ(GET(t, SOHU_SQE_OPCODE), SOHU_IO_OP_TIMESTAMP);
  EXPECT_EQ(GET64(t, SOHU_IO_TIMESTAMP_ADDR), 0xABC0u);
  EXPECT_EQ(GET(t, SOHU_IO_TIMESTAMP_SPACE), SOHU_SPACE_HOST);
  EXPECT_EQ(GET(timestamp(Space::Hbm, 8), SOHU_IO_TIMESTAMP_SPACE), SOHU_SPACE_HBM);
  const Command p = pmu_snapshot(0x1'0000'1000ull);
  EXPECT_EQ(GET(p, SOHU_SQE_OPCODE), SOHU_IO_OP_PMU_SNAPSHOT);
  EXPECT_EQ(GET64(p, SOHU_IO_PMU_SNAPSHOT_ADDR), 0x1'0000'1000ull);
  const Command e = exec_program(0x40000, 12);
  EXPECT_EQ(GET(e, SOHU_SQE_OPCODE), SOHU_IO_OP_EXEC_PROGRAM);
  EXPECT_EQ(GET64(e, SOHU_IO_EXEC_PROGRAM_ADDR), 0x40000u);
  EXPECT_EQ(GET(e, SOHU_IO_EXEC_PROGRAM_COUNT), 12u);
}

TEST(CommandBuilders, EnumsMatchTheRegisterMapEncodings) {
  EXPECT_EQ(static_cast<unsigned>(DType::Fp8E4M3), SOHU_DTYPE_FP8_E4M3);
  EXPECT_EQ(static_cast<unsigned>(DType::Fp8E5M2), SOHU_DTYPE_FP8_E5M2);
  EXPECT_EQ(static_cast<unsigned>(DType::Bf16), SOHU_DTYPE_BF16);
  EXPECT_EQ(static_cast<unsigned>(DType::Fp16), SOHU_DTYPE_FP16);
  EXPECT_EQ(static_cast<unsigned>(DType::Fp32), SOHU_DTYPE_FP32);
  EXPECT_EQ(static_cast<unsigned>(Act::Relu), SOHU_ACT_RELU);
  EXPECT_EQ(static_cast<unsigned>(Act::Silu), SOHU_ACT_SILU);
  EXPECT_EQ(static_cast<unsigned>(Space::Host), SOHU_SPACE_HOST);
  EXPECT_EQ(static_cast<unsigned>(Space::Hbm), SOHU_SPACE_HBM);
  EXPECT_EQ(static_cast<unsigned>(Space::Sram), SOHU_SPACE_SRAM);
  EXPECT_EQ(static_cast<unsigned>(Space::PeerHbm), SOHU_SPACE_PEER_HBM);
  EXPECT_EQ(static_cast<unsigned>(VOp::Cast), SOHU_VOP_CAST);
  EXPECT_EQ(kLocalDevice, SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL);
}

// ---- data types and names ---------------------------------------------------------------

TEST(DataTypes, BytesAndNames) {
  EXPECT_EQ(dtype_bytes(DType::Fp8E4M3), 1u);
  EXPECT_EQ(dtype_bytes(DType::Fp8E5M2), 1u);
  EXPECT_EQ(dtype_bytes(DType::Bf16), 2u);
  EXPECT_EQ(dtype_bytes(DType::Fp16), 2u);
  EXPECT_EQ(dtype_bytes(DType::Fp32), 4u);
  EXPECT_THROW(dtype_bytes(static_cast<DType>(9)), std::invalid_argument);
  EXPECT_STREQ(dtype_name(DType::Fp8E4M3), "fp8");
  EXPECT_STREQ(dtype_name(DType::Fp8E5M2), "fp8_e5m2");
  EXPECT_STREQ(dtype_name(DType::Bf16), "bf16");
  EXPECT_STREQ(dtype_name(DType::Fp16), "fp16");
  EXPECT_STREQ(dtype_name(DType::Fp32), "fp32");
}

TEST(ErrorNames, EveryStatusCodeHasItsRegisterMapName) {
  EXPECT_STREQ(status_name(SOHU_STATUS_SUCCESS), "SUCCESS");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_OPCODE), "INVALID_OPCODE");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_FIELD), "INVALID_FIELD");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_QUEUE_ID), "INVALID_QUEUE_ID");
  EXPECT_STREQ(status_name(SOHU_STATUS_QUEUE_EXISTS), "QUEUE_EXISTS");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_QUEUE_SIZE), "INVALID_QUEUE_SIZE");
  EXPECT_STREQ(status_name(SOHU_STATUS_MISALIGNED), "MISALIGNED");
  EXPECT_STREQ(status_name(SOHU_STATUS_OUT_OF_RANGE), "OUT_OF_RANGE");
  EXPECT_STREQ(status_name(SOHU_STATUS_HOST_DMA_ERROR), "HOST_DMA_ERROR");
  EXPECT_STREQ(status_name(SOHU_STATUS_MMU_FAULT), "MMU_FAULT");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_DTYPE), "INVALID_DTYPE");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_DIMENSIONS), "INVALID_DIMENSIONS");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_FEATURE), "INVALID_FEATURE");
  EXPECT_STREQ(status_name(SOHU_STATUS_ABORTED_RESET), "ABORTED_RESET");
  EXPECT_STREQ(status_name(SOHU_STATUS_SEM_TIMEOUT), "SEM_TIMEOUT");
  EXPECT_STREQ(status_name(SOHU_STATUS_PEER_UNREACHABLE), "PEER_UNREACHABLE");
  EXPECT_STREQ(status_name(SOHU_STATUS_DEVICE_DISABLED), "DEVICE_DISABLED");
  EXPECT_STREQ(status_name(SOHU_STATUS_INVALID_DOORBELL), "INVALID_DOORBELL");
  EXPECT_STREQ(status_name(SOHU_STATUS_QUEUE_IN_USE), "QUEUE_IN_USE");
  EXPECT_STREQ(status_name(SOHU_STATUS_INTERNAL_ERROR), "INTERNAL_ERROR");
  // Unknown codes are named by number; two of them can be used in one expression.
  const std::string a = status_name(0x7F), b = status_name(0x80);
  EXPECT_EQ(a, "STATUS_0x7F");
  EXPECT_EQ(b, "STATUS_0x80");
}

TEST(ErrorNames, OpcodesOfBothQueueTypes) {
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_NOP), "NOP");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_DMA_COPY), "DMA_COPY");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_GEMM), "GEMM");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_ATTENTION), "ATTENTION");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_VECTOR), "VECTOR");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_COLLECTIVE), "COLLECTIVE");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_SEM_SIGNAL), "SEM_SIGNAL");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_SEM_WAIT), "SEM_WAIT");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_FENCE), "FENCE");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_TIMESTAMP), "TIMESTAMP");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_PMU_SNAPSHOT), "PMU_SNAPSHOT");
  EXPECT_STREQ(opcode_name(SOHU_IO_OP_EXEC_PROGRAM), "EXEC_PROGRAM");
  EXPECT_STREQ(opcode_name(0x5A), "OPCODE_0x5A");
  // The same code means different commands on the two queue types.
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_CREATE_CQ, true), "CREATE_CQ");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_IDENTIFY, true), "IDENTIFY");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_CREATE_SQ, true), "CREATE_SQ");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_DELETE_SQ, true), "DELETE_SQ");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_DELETE_CQ, true), "DELETE_CQ");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_SET_FEATURES, true), "SET_FEATURES");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_GET_FEATURES, true), "GET_FEATURES");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_PMU_CONFIG, true), "PMU_CONFIG");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_TRACE_CONFIG, true), "TRACE_CONFIG");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_FW_STATUS, true), "FW_STATUS");
  EXPECT_STREQ(opcode_name(SOHU_ADMIN_OP_SET_CONTEXT, true), "SET_CONTEXT");
  EXPECT_STREQ(opcode_name(0x00, true), "ADMIN_OPCODE_0x00");
}

TEST(ErrorTypes, CommandErrorCarriesItsNumbersAndIsADriverError) {
  const CommandError e("GEMM failed", SOHU_STATUS_OUT_OF_RANGE, SOHU_IO_OP_GEMM, 3, 9, 42);
  EXPECT_EQ(e.status(), SOHU_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(e.opcode(), SOHU_IO_OP_GEMM);
  EXPECT_EQ(e.qid(), 3);
  EXPECT_EQ(e.cid(), 9);
  EXPECT_EQ(e.correlation(), 42u);
  const DriverError& base = e;
  EXPECT_STREQ(base.what(), "GEMM failed");
  EXPECT_NO_THROW((void)dynamic_cast<const std::runtime_error&>(base));
}

}  // namespace
}  // namespace sohusim::driver
