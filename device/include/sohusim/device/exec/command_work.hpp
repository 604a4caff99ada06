#pragma once
// CommandWork: what one command did on each unit of its device, and the per-class counters
// the executor adds it to, so that a profiler can give every class of command its speed of
// light (work / time / peak per unit), as Nsight Compute does per kernel.
//
// The executor tallies a command's work where it moves it (its engine tiles, its DMA, its
// link transfers), not from device-wide counters: commands of other queues running at the
// same time do not leak into it. For each class below, under the device's prefix:
//
//   exec.<class>.duration        ns   distribution of the command's execution time (from the
//                                     executor taking it to its outcome; failed commands are
//                                     not counted)
//   exec.<class>.matrix_flops    FLOP FLOP on the matrix engines (2 x useful MACs, plus an
//                                     attention's softmax on the engines' own lanes), as
//                                     their me*.flops.* counters count them
//   exec.<class>.vector_flops    FLOP FLOP on the vector engines (and a collective's adds)
//   exec.<class>.hbm_bytes       B    bytes read from and written to HBM
//   exec.<class>.sram_bytes      B    bytes read from and written to SRAM
//   exec.<class>.host_read_bytes B    bytes read from host memory (PCIe host-to-device)
//   exec.<class>.host_write_bytes B   bytes written to host memory (PCIe device-to-host)
//   exec.<class>.link_bytes      B    bytes moved over chip-to-chip ports in the command's
//                                     time: a DMA_COPY to a peer's HBM and an ALL_REDUCE count
//                                     what they send, a RECV, REDUCE_STEP or GATHER_STEP what
//                                     it received; an (eager) SEND none, its transfer going on
//                                     after it completes
//
// Replayed commands (device.replay) add the recorded command's counters and sample its
// duration, as a simulated run would have.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/counters/distribution.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/device/frontend/command.hpp"

namespace sohusim::device {

struct CommandWork {
  std::uint64_t matrix_flops = 0;
  std::uint64_t vector_flops = 0;
  std::uint64_t hbm_bytes = 0;
  std::uint64_t sram_bytes = 0;
  std::uint64_t host_read_bytes = 0;
  std::uint64_t host_write_bytes = 0;
  std::uint64_t link_bytes = 0;
  CommandWork& operator+=(const CommandWork& o) {
    matrix_flops += o.matrix_flops;
    vector_flops += o.vector_flops;
    hbm_bytes += o.hbm_bytes;
    sram_bytes += o.sram_bytes;
    host_read_bytes += o.host_read_bytes;
    host_write_bytes += o.host_write_bytes;
    link_bytes += o.link_bytes;
    return *this;
  }
};

/// A class of command whose work is accounted: one I/O opcode.
struct WorkClass {
  std::uint8_t opcode;
  const char* name;     // counter scope: "gemm" (exec.gemm.*)
  const char* command;  // the opcode's name in the register map: "GEMM"
};
/// DMA_COPY, GEMM, ATTENTION, VECTOR, COLLECTIVE: the commands that move or compute data.
const std::vector<WorkClass>& work_classes();
/// The class of `opcode`, or nullptr (NOP, FENCE, semaphores, TIMESTAMP, ...).
const WorkClass* work_class(std::uint8_t opcode);

/// What a profiler groups the commands of a class by: the opcode and the fields that set a
/// command's cost, without its addresses, ids and tags. Attention KV lengths and copy and
/// collective sizes are rounded up to a power of two (a decode run's KV length grows every
/// step: one row per step would bury the table).
struct WorkShape {
  std::uint8_t opcode = 0;
  std::array<std::uint64_t, 7> fields{};
  bool operator==(const WorkShape& o) const { return opcode == o.opcode && fields == o.fields; }
  /// "GEMM 1x8192x1024 bf16", "ATTENTION b64 q1 kv<=2048 h64/8 d128 bf16",
  /// "VECTOR rmsnorm 64x8192 bf16", "DMA_COPY host->hbm <=2 MiB", "COLLECTIVE all_reduce <=1 MiB bf16 7 peers".
  std::string describe() const;
};
struct WorkShapeHash {
  std::size_t operator()(const WorkShape& s) const noexcept;
};
/// The shape of a command that decodes (the executor calls its observer only for those);
/// an entry that does not decode gets its opcode and no fields.
WorkShape work_shape(const Sqe& sqe);

/// The counters of one class, registered under `device_scope` (exec.<class>.*).
class WorkCounters {
 public:
  WorkCounters(const counters::Scope& device_scope, const WorkClass& c);
  /// One command of the class took `duration_ps` and did `w`.
  void add(const CommandWork& w, std::uint64_t duration_ps);
  /// A replayed command: its counters come with the replay; only its duration is sampled.
  void sample_duration(std::uint64_t duration_ps);

 private:
  WorkCounters(const counters::Scope& class_scope, const WorkClass& c, int);
  counters::Distribution& duration_;
  counters::Counter &matrix_flops_, &vector_flops_, &hbm_bytes_, &sram_bytes_, &host_read_bytes_, &host_write_bytes_,
      &link_bytes_;
};

}  // namespace sohusim::device
