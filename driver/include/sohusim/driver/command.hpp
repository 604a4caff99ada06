#pragma once
// Commands as the driver writes them: 64-byte submission entries built with the field
// macros of the generated register-map header (sohusim/regmap/sohu_regs.h), so that driver
// and device share one definition of every bit (docs/registers.md).
//
// The builders fill the operand dwords only; the driver sets CID and CORRELATION when it
// submits. The only check they make is that each value fits its field (a head count of 1024
// in the 10-bit Q_HEADS would otherwise reach the device as 0): std::invalid_argument names
// the command, the field, the value and the field's maximum. Everything else (dimensions,
// alignment, ranges, data types an operation supports) is the device's to check: it answers
// a bad entry with an error status, which the driver turns into a CommandError (errors.hpp).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sohusim::driver {

enum class DType : std::uint8_t { Fp8E4M3 = 0, Fp8E5M2 = 1, Bf16 = 2, Fp16 = 3, Fp32 = 4 };  // SOHU_DTYPE_*
enum class Act : std::uint8_t { None = 0, Relu = 1, Gelu = 2, Silu = 3 };                    // SOHU_ACT_*
enum class VOp : std::uint8_t {                                                              // SOHU_VOP_*
  RmsNorm = 0,
  LayerNorm = 1,
  Rope = 2,
  Silu = 3,
  Gelu = 4,
  Swiglu = 5,
  Add = 6,
  Scale = 7,
  Cast = 8,
  Softmax = 9
};
enum class Space : std::uint8_t { Host = 0, Hbm = 1, Sram = 2, PeerHbm = 3 };  // SOHU_SPACE_*
enum class CollOp : std::uint8_t { Send = 0, Recv = 1, ReduceStep = 2, GatherStep = 3, AllReduce = 4 };

/// Bytes per element (FP8 1, BF16/FP16 2, FP32 4).
unsigned dtype_bytes(DType t);
const char* dtype_name(DType t);  // "fp8", "fp8_e5m2", "bf16", "fp16", "fp32"
/// The inverse of dtype_name, "fp8_e4m3" too; std::invalid_argument naming the allowed names.
DType parse_dtype(const std::string& name);

struct Command {
  std::array<std::uint32_t, 16> dw{};

  std::uint8_t opcode() const { return static_cast<std::uint8_t>(dw[0] & 0xFFu); }
  std::uint16_t cid() const { return static_cast<std::uint16_t>(dw[0] >> 16); }
  std::uint64_t correlation() const { return dw[2] | (static_cast<std::uint64_t>(dw[3]) << 32); }
  void set_cid(std::uint16_t cid);
  void set_correlation(std::uint64_t id);
  void set_context(std::uint16_t context);
  /// FENCE_BEFORE: start after every earlier command of the queue completed (queues run in
  /// order on this device, so this documents intent and keeps programs portable).
  Command& fence_before(bool on = true);
  /// NO_COMPLETION_IRQ: post the completion entry without an interrupt.
  Command& no_irq(bool on = true);
  void to_bytes(std::uint8_t* out64) const;
};

/// A sequence of commands that run in order on one queue, with a name for traces.
struct Program {
  std::string name;
  std::vector<Command> commands;
};

/// Puts `value` into a command field given as the generated header gives it (dword, shift,
/// mask; a mask wider than 32 bits is a 64-bit field starting at `dw`). Throws
/// std::invalid_argument naming `field` when the value has bits outside the field.
void put_field(Command& c, const char* field, unsigned dw, unsigned shift, std::uint64_t mask, std::uint64_t value);

// ---- builders (operand layouts: docs/registers.md) ----
Command nop();
Command dma_copy(Space src_space, std::uint64_t src, Space dst_space, std::uint64_t dst, std::uint64_t length,
                 unsigned peer = 0);

struct GemmDesc {
  std::uint64_t a = 0, b = 0, c = 0, d = 0;  // device addresses; d = bias row or residual
  std::uint32_t m = 0, k = 0, n = 0;
  DType in = DType::Bf16, out = DType::Bf16;
  bool trans_a = false, trans_b = false;
  Act act = Act::None;
  bool bias = false, residual = false;
  std::uint8_t dataflow = 0;  // SOHU_IO_GEMM_DATAFLOW_*: 0 the device's default, 1 WS, 2 OS, 3 IS
};
Command gemm(const GemmDesc& g);

struct AttentionDesc {
  std::uint64_t q = 0, k = 0, v = 0, o = 0;
  std::uint32_t batch = 1, q_len = 0, kv_len = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  DType dtype = DType::Bf16;
  bool causal = false;
};
Command attention(const AttentionDesc& a);

struct VectorDesc {
  VOp op = VOp::Add;
  std::uint64_t x = 0, y = 0, out = 0;
  std::uint32_t rows = 0, cols = 0;
  DType in = DType::Bf16, out_type = DType::Bf16;
  float scalar = 0.0f;           // eps (norms), scale (SCALE), theta base (ROPE)
  std::uint32_t aux = 0;         // ROPE: head_dim (AUX: 16 bits once the register map has GROUP)
  std::uint32_t aux2 = 0;        // ROPE: position of row 0; row r is at aux2 + r / rope_group
  std::uint32_t rope_group = 1;  // ROPE: consecutive rows sharing one position (the batch,
                                 // with rows ordered position-major); 0 or 1 = one row each.
                                 // Needs VECTOR.GROUP in the register map: without it, a
                                 // value other than 0/1 is std::invalid_argument.
};
Command vector(const VectorDesc& v);

Command collective(CollOp op, std::uint64_t addr, std::uint64_t length, unsigned peer, DType dtype, std::uint32_t tag);
/// COLLECTIVE ALL_REDUCE: a one-shot all-reduce of the buffer with every device of `peers`
/// (bit i = device i), whose ALL_REDUCEs carry the same tag.
Command all_reduce(std::uint64_t addr, std::uint64_t length, std::uint32_t peers, DType dtype, std::uint32_t tag);
/// SEM_SIGNAL.DEVICE meaning "this device" (SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL).
inline constexpr unsigned kLocalDevice = 0xFF;
Command sem_signal(unsigned sem, unsigned device, std::uint32_t value);  // device 0xFF = local
Command sem_wait(unsigned sem, std::uint32_t value, std::uint32_t timeout_us = 0);
Command fence();
Command timestamp(Space space, std::uint64_t addr);
Command pmu_snapshot(std::uint64_t host_iova);
/// Runs `count` 64-byte entries stored at device address `addr` in order.
Command exec_program(std::uint64_t addr, std::uint32_t count);

}  // namespace sohusim::driver
