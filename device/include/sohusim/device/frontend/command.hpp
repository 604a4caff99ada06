#pragma once
// Commands as the device sees them: a 64-byte submission entry decoded into a typed command
// (with every field and reserved bit checked), and the 16-byte completion entry it answers
// with. The layouts are those of the register map (regmap/sohu_regmap.yaml, the one
// source; docs/registers.md): decoding uses the generated sohu_regs.h, so the device and a
// driver built on the same header cannot disagree.
//
// Decoding is pure (no device state): it checks what can be checked from the entry alone —
// opcode, reserved bits, encodings (data types, activations, vector ops, spaces),
// dimensions (non-zero, within 32-bit element counts, heads divisible) and byte lengths that
// overflow 64 bits — and returns the status a bad entry completes with, plus a message
// naming the field for the error log. Range and alignment checks against the device's
// memories happen at execution (command_executor.hpp).
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/compute/ops.hpp"
#include "sohusim/device/units/memory_port.hpp"

namespace sohusim::device {

/// Status codes (SOHU_STATUS_*). Values are fixed by the register map.
enum class Status : std::uint16_t {
  Success = 0x00,
  InvalidOpcode = 0x01,
  InvalidField = 0x02,
  InvalidQueueId = 0x03,
  QueueExists = 0x04,
  InvalidQueueSize = 0x05,
  Misaligned = 0x06,
  OutOfRange = 0x07,
  HostDmaError = 0x08,
  MmuFault = 0x09,
  InvalidDtype = 0x0A,
  InvalidDimensions = 0x0B,
  InvalidFeature = 0x0C,
  AbortedReset = 0x0D,
  SemTimeout = 0x0E,
  PeerUnreachable = 0x0F,
  DeviceDisabled = 0x10,
  InvalidDoorbell = 0x11,
  QueueInUse = 0x12,
  InternalError = 0x13,
};
const char* to_string(Status s);

struct Sqe {
  std::array<std::uint32_t, 16> dw{};
  static Sqe from_bytes(const std::uint8_t* p);
  void to_bytes(std::uint8_t* p) const;
  std::uint64_t u64(unsigned i) const { return dw[i] | (static_cast<std::uint64_t>(dw[i + 1]) << 32); }
  void set_u64(unsigned i, std::uint64_t v) {
    dw[i] = static_cast<std::uint32_t>(v);
    dw[i + 1] = static_cast<std::uint32_t>(v >> 32);
  }
  std::uint8_t opcode() const;
  std::uint8_t flags() const;
  std::uint16_t cid() const;
  std::uint16_t context() const;
  void set_context(std::uint16_t context);
  std::uint64_t correlation() const;
  bool no_completion_irq() const;
};

struct Cqe {
  std::uint64_t result = 0;
  std::uint16_t sq_head = 0;
  std::uint16_t sq_id = 0;
  std::uint16_t cid = 0;
  bool phase = false;
  std::uint16_t status = 0;
  void to_bytes(std::uint8_t* p) const;
  static Cqe from_bytes(const std::uint8_t* p);
};

/// What a decode or an execution step reports.
struct Outcome {
  Status status = Status::Success;
  std::string message;        // for the error log: names the field or address
  std::uint64_t address = 0;  // faulting address, if any
  std::uint64_t result = 0;   // CQE RESULT on success
  bool ok() const { return status == Status::Success; }
  static Outcome fail(Status s, std::string m, std::uint64_t addr = 0) { return Outcome{s, std::move(m), addr, 0}; }
};

// ---- admin ----
struct CreateQueueCmd {
  std::uint64_t base;
  std::uint16_t qid;
  std::uint32_t entries;
  std::uint16_t vector;
  bool ien;
  std::uint16_t cqid;
};
struct QueueIdCmd {
  std::uint16_t qid;
};
struct FeatureCmd {
  std::uint8_t fid;
  std::uint32_t value;
  std::uint32_t value2;
};
struct PmuConfigCmd {
  unsigned counter;
  std::uint16_t event;
  bool enable;
  bool reset;
};
struct TraceConfigCmd {
  std::uint64_t ring;
  std::uint32_t size;
  std::uint32_t mask;
  bool enable;
};
struct SetContextCmd {
  std::uint64_t table;
  std::uint16_t context;
  bool valid;
  std::uint32_t entries;
};
struct VfContextCmd {
  std::uint16_t vf;       // 0-based VF index
  std::uint16_t context;  // 0: none
};
struct IdentifyCmd {
  std::uint64_t addr;
};

// ---- I/O ----
struct DmaCopyCmd {
  std::uint64_t src, dst, length;
  Space src_space, dst_space;
  unsigned peer;
};
struct GemmCmd {
  std::uint64_t a, b, c, d;
  std::uint32_t m, k, n;
  DataType in, out;
  bool trans_a, trans_b;
  Activation act;
  bool bias, residual;
  std::optional<Dataflow> dataflow;
};
struct AttentionCmd {
  std::uint64_t q, k, v, o;
  std::uint32_t q_len, kv_len, q_heads, kv_heads, head_dim, batch;
  DataType dtype;
  bool causal;
};
struct VectorCmd {
  std::uint64_t x, y, out;
  std::uint32_t rows, cols;
  VectorOp op;
  DataType in, out_type;
  float scalar;
  std::uint32_t aux, aux2;
  std::uint32_t group;  // ROPE: rows sharing a position (>= 1)
};
enum class CollectiveOp : std::uint8_t { Send = 0, Recv = 1, ReduceStep = 2, GatherStep = 3, AllReduce = 4 };
struct CollectiveCmd {
  std::uint64_t addr, length;
  CollectiveOp op;
  unsigned peer;
  std::uint32_t peers;  // ALL_REDUCE: bit i = device i
  DataType dtype;
  std::uint32_t tag;
};
struct SemSignalCmd {
  unsigned sem;
  unsigned device;
  std::uint32_t value;
};
struct SemWaitCmd {
  unsigned sem;
  std::uint32_t value;
  std::uint32_t timeout_us;
};
struct AddressCmd {
  std::uint64_t addr;
  Space space;
};  // TIMESTAMP, PMU_SNAPSHOT
struct ExecProgramCmd {
  std::uint64_t addr;
  std::uint32_t count;
};

Outcome decode(const Sqe&, CreateQueueCmd&, bool completion_queue);
Outcome decode(const Sqe&, QueueIdCmd&);
Outcome decode(const Sqe&, FeatureCmd&, bool set);
Outcome decode(const Sqe&, PmuConfigCmd&);
Outcome decode(const Sqe&, TraceConfigCmd&);
Outcome decode(const Sqe&, SetContextCmd&);
Outcome decode(const Sqe&, VfContextCmd&);
Outcome decode(const Sqe&, IdentifyCmd&);
Outcome decode(const Sqe&, DmaCopyCmd&);
Outcome decode(const Sqe&, GemmCmd&);
Outcome decode(const Sqe&, AttentionCmd&);
Outcome decode(const Sqe&, VectorCmd&);
Outcome decode(const Sqe&, CollectiveCmd&);
Outcome decode(const Sqe&, SemSignalCmd&);
Outcome decode(const Sqe&, SemWaitCmd&);
Outcome decode_timestamp(const Sqe&, AddressCmd&);
Outcome decode_pmu_snapshot(const Sqe&, AddressCmd&);
Outcome decode(const Sqe&, ExecProgramCmd&);
/// Checks the reserved bits of a command without operands (NOP, FENCE, FW_STATUS).
Outcome decode_no_operands(const Sqe&, bool admin);

}  // namespace sohusim::device
