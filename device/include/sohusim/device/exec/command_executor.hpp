#pragma once
// CommandExecutor: runs decoded I/O commands on the device's units and memories — the
// device's sequencer (docs/device.md, "A command's life"). One call per command, from the thread of the
// queue it came from (commands of one queue run in order; queues run concurrently and
// contend for the units).
//
//   DMA_COPY      DmaEngine between host (IOVA, through the host IOMMU), HBM, SRAM and a
//                 peer's HBM (chip-to-chip).
//   GEMM          plan_gemm() tiles the GEMM over the matrix engines, SRAM and HBM; each
//                 engine runs its tiles through the double-buffered pipeline
//                 (engine_pipeline.hpp); the matrix unit is held for the whole command.
//   ATTENTION     one work item per (batch, KV head): stream that head's K and V (and its
//                 queries) from HBM, Q K^T and P V on a matrix engine (fold timing as for
//                 GEMM) with the softmax on the engine's vector lanes in between; items are
//                 dealt round-robin over the matrix engines.
//   VECTOR        rows split into tiles over the vector engines; per-op cost table
//                 (vector_cost.hpp); operands streamed from HBM and results written back.
//   COLLECTIVE    SEND/RECV/REDUCE_STEP/GATHER_STEP, eager: a SEND reads its buffer, books
//                 the chip-to-chip port and completes; the receiver's matching command (by
//                 peer, tag) waits for the message's arrival and writes it into its HBM (a
//                 reduce step adds it into the buffer on the vector lanes first).
//                 ALL_REDUCE does a one-shot all-reduce in one command: one read of the
//                 buffer, sent on every named peer's port at once; when all the peers'
//                 buffers (same tag) have arrived, the adds on the vector lanes and one
//                 write. Functional sums run in device order, so every device gets the
//                 same bits.
//   SEM_SIGNAL/SEM_WAIT, FENCE, TIMESTAMP, PMU_SNAPSHOT, NOP, EXEC_PROGRAM.
//
// Functional mode (sim.data_mode functional): after a compute command's timing, its
// operands are read from device memory, decoded to float, computed with the Eigen kernels
// (kernels.hpp; FP32 accumulation) and the results rounded to the output type and written
// back — timing per tile, data per command.
//
// Replay (device.replay; fast fidelity and timing mode only): a GEMM, ATTENTION or VECTOR
// command whose shape already ran on an idle device is checked as usual and then replays the
// recorded duration and counter increments (command_replay.hpp).
//
// Every operand is checked before anything runs: device-MMU translation of the command's
// context (a fault fails the command with MMU_FAULT), range against the memory
// (OUT_OF_RANGE), element alignment (MISALIGNED); a failed transfer later in the command
// gives HOST_DMA_ERROR (host side) or OUT_OF_RANGE.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/device/compute/engine_pipeline.hpp"
#include "sohusim/device/device_params.hpp"
#include "sohusim/device/exec/command_replay.hpp"
#include "sohusim/device/exec/command_work.hpp"
#include "sohusim/device/exec/replay_cache.hpp"
#include "sohusim/device/exec/semaphore_bank.hpp"
#include "sohusim/device/frontend/command.hpp"
#include "sohusim/device/units/c2c_link.hpp"
#include "sohusim/device/units/device_mmu.hpp"
#include "sohusim/device/units/dma_engine.hpp"
#include "sohusim/device/units/memory_port.hpp"
#include "sohusim/device/units/pmu.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"

namespace sohusim::device {

class CommandExecutor;

/// The far end of a chip-to-chip port: the peer's executor (for semaphores and collective
/// rendezvous), its HBM, and the two channel directions.
struct PeerLink {
  CommandExecutor* peer = nullptr;
  C2cChannel* tx = nullptr;  // this device -> peer
  C2cChannel* rx = nullptr;  // peer -> this device
};

struct ExecutorWiring {
  const DeviceParams* params = nullptr;
  MemoryPort* host = nullptr;
  MemoryPort* hbm = nullptr;
  MemoryPort* sram = nullptr;
  DmaEngine* dma = nullptr;
  DeviceMmu* mmu = nullptr;
  Pmu* pmu = nullptr;
  const TimestampCounter* clock = nullptr;
  SemaphoreBank* semaphores = nullptr;
  counters::TraceRecorder* trace = nullptr;
  std::vector<counters::TrackId> matrix_tracks, vector_tracks;
  counters::TrackId dma_track = 0;  // async track: DMA copies as slices with their correlation id
  /// Called for each engine's activity of a command (trace unit): engine, tiles, first start ps, last end ps.
  std::function<void(unsigned engine, std::uint32_t tiles, std::uint64_t correlation)> engine_activity;
};

/// Who issued a command. The PF: the device's host port (its requester ID) and the context
/// the entry names. A VF (SR-IOV): its own host port, so that its DMA carries the VF's
/// requester ID and the host IOMMU translates it in the VF's domain; its entries run in the
/// device-MMU context its PF assigned (VF_CONTEXT), whatever context they name, so that a VF
/// reaches only the device memory its PF gave it.
struct Issuer {
  MemoryPort* host = nullptr;  // nullptr: the device's (PF's) host port
  int vf = -1;                 // VF index (0-based); -1: the PF
  std::uint16_t context = 0;   // a VF's assigned context; 0: none assigned yet
};

class CommandExecutor {
 public:
  /// The context a VF's commands carry while its PF has assigned none: every device-memory
  /// operand faults (MMU_FAULT) instead of reaching physical memory.
  static constexpr std::uint16_t kNoContext = 0xFFFF;
  CommandExecutor(ExecutorWiring wiring, unsigned device_index, const counters::Scope& device_scope);
  /// Called with the value each TIMESTAMP command stamps (device ns), as it executes: a
  /// profiler snapshots counters there to split them per op.
  void set_timestamp_observer(std::function<void(std::uint64_t device_ns)> observer) {
    on_timestamp_ = std::move(observer);
  }
  /// Called after each successful command of a work class (command_work.hpp), simulated or
  /// replayed, with its execution time and its work: a profiler groups them by shape.
  using CommandObserver = std::function<void(const Sqe&, std::uint64_t duration_ps, const CommandWork&)>;
  void set_command_observer(CommandObserver observer) { on_command_ = std::move(observer); }
  /// Executes one I/O command (already fetched). Blocking. The outcome's status goes into
  /// the completion entry; `result` into its RESULT field.
  Outcome execute(const Sqe& sqe, std::uint16_t qid, const Issuer& who = {});
  /// Connects chip-to-chip port `peer_index` (the peer's device index).
  void connect(unsigned peer_index, PeerLink link) { peers_[peer_index] = link; }
  unsigned device_index() const { return index_; }
  SemaphoreBank& semaphores() { return *w_.semaphores; }
  MemoryPort& hbm() { return *w_.hbm; }
  /// Engine counters (for the PMU, reports and tests).
  const std::vector<std::unique_ptr<EngineCounters>>& matrix_engines() const { return me_; }
  const std::vector<std::unique_ptr<EngineCounters>>& vector_engines() const { return ve_; }
  /// Unblocks waiters (semaphores, rendezvous) after a reset; their commands are abandoned.
  void abort_waiters();
  /// Shares replay records (device.replay) with the other devices given the same cache.
  void share_replays(std::shared_ptr<ReplayCache> cache) { replay_.share(std::move(cache)); }

 private:
  struct Operand {
    std::uint64_t phys = 0;
    std::uint64_t bytes = 0;
  };
  Outcome check_device_range(unsigned ctx, Space space, std::uint64_t addr, std::uint64_t bytes, bool write,
                             unsigned align, const char* what, Operand& out);
  /// validate_only: GEMM, ATTENTION and VECTOR stop after their operand checks (replay).
  /// Otherwise a command of a work class (command_work.hpp) that succeeds adds its work and
  /// duration to its class's counters.
  /// `done` (if given) receives the command's work.
  Outcome dispatch(const Sqe& sqe, std::uint16_t qid, bool validate_only = false, const Issuer& who = {},
                   CommandWork* done = nullptr);
  Outcome route(const Sqe& sqe, std::uint16_t qid, bool validate_only, const Issuer& who, CommandWork& work);
  /// A replayed command's duration, into its class's distribution (its counters come with
  /// the replay), and to the observer with the recorded work.
  void replayed(const Sqe& sqe, std::uint64_t duration_ps, const CommandWork& work);
  Outcome exec_dma(const Sqe&, const Issuer& who, CommandWork& work);
  Outcome exec_gemm(const Sqe&, bool validate_only, CommandWork& work);
  Outcome exec_attention(const Sqe&, bool validate_only, CommandWork& work);
  Outcome exec_vector(const Sqe&, bool validate_only, CommandWork& work);
  Outcome exec_collective(const Sqe&, CommandWork& work);
  Outcome exec_all_reduce(const Sqe&, const CollectiveCmd&, CommandWork& work);
  Outcome exec_sem_signal(const Sqe&);
  Outcome exec_sem_wait(const Sqe&);
  Outcome exec_timestamp(const Sqe&, const Issuer& who);
  Outcome exec_pmu_snapshot(const Sqe&, const Issuer& who);
  Outcome exec_program(const Sqe&, std::uint16_t qid, const Issuer& who);
  /// Runs per-engine tile lists on the matrix (or vector) engines and adds their work to
  /// `work`; false on a memory error.
  bool run_engines(bool matrix, std::vector<std::vector<EngineTile>>& per_engine, DataType dt,
                   std::uint64_t correlation, const char* tile_name, CommandWork& work);
  bool read_tensor(std::uint64_t addr, std::uint64_t count, DataType t, std::vector<float>& out);
  bool write_tensor(std::uint64_t addr, const std::vector<float>& v, DataType t);
  void wait_ps(std::uint64_t ps);

  // Collectives are eager: a SEND completes once its data is on the link, and the message
  // waits in the receiver's inbox, keyed by (sender, tag), until a RECV/REDUCE_STEP/
  // GATHER_STEP takes it. So SENDs never wait for their receiver, a device can send to all its
  // peers at once (one transfer per port in flight), and no order of commands across queues
  // or devices deadlocks.
  struct Message {
    std::uint64_t length = 0;
    std::uint64_t arrive_ps = 0;     // when the last byte reaches the receiver
    std::vector<std::uint8_t> data;  // functional mode: the bytes as read at send time
  };
  void deliver(unsigned from, std::uint32_t tag, Message m);

  ExecutorWiring w_;
  unsigned index_;
  std::map<unsigned, PeerLink> peers_;
  std::map<std::pair<unsigned, std::uint32_t>, std::deque<Message>> inbox_;
  sc_core::sc_event arrived_;
  std::uint64_t abort_generation_ = 0;
  sc_core::sc_mutex matrix_unit_, vector_unit_;
  std::vector<std::unique_ptr<EngineCounters>> me_, ve_;
  counters::Counter& commands_;
  counters::Counter& functional_ops_;
  counters::Counter& replayed_;
  std::unique_ptr<WorkCounters> work_[256];  // by I/O opcode: the work classes' counters
  CommandReplay replay_;                     // device.replay: records and replays of command shapes
  std::function<void(std::uint64_t)> on_timestamp_;
  CommandObserver on_command_;
};

}  // namespace sohusim::device
