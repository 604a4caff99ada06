#pragma once
// Capture through the driver interface (docs/profiler.md): what a profiler's collector does on a real
// machine to get the device's own view of a run, with nothing but the driver and the host's
// DMA memory.
//
//   TraceCapture   configures the trace unit (TRACE_CONFIG: a host ring and a class mask),
//                  drains the ring (TRC_HEAD over MMIO, the records [tail, head) from host
//                  memory, two pieces when they wrap, TRC_TAIL written back, TRC_DROPS read
//                  and added up) and decodes the 32-byte records. Call drain() as often as the
//                  ring needs (a ring of N bytes holds N / 32 - 1 records) and stop() at the end.
//   PmuCapture     programs the 8 event counters (PMU_CONFIG), resets/enables/freezes the PMU
//                  (PMU_CTRL) and snapshots the cycle counter and the 8 counters over MMIO,
//                  with the device time (TIMESTAMP) and the host clock read alongside.
//   pair_commands  CommandStart/CommandEnd records -> one CommandRecord per command (queue,
//                  CID, correlation, opcode, device start/end, status), and align_commands puts
//                  the host clock on them through a profiler::ClockFit (DeviceClockSampler).
//
// Record layout (little-endian, 32 bytes; the device's trace unit writes it, docs/profiler.md
// "Capture through the driver"):
//   bytes 0-1   type (1 command start, 2 command end, 3 engine activity, 4 DMA, 5 interrupt)
//   bytes 2-3   unit (engine index for type 3, MSI-X vector for type 5, else 0)
//   bytes 4-5   queue id          bytes 6-7   command id
//   bytes 8-15  device timestamp (ns, the device's clock)
//   bytes 16-23 correlation id (the SQE's CORRELATION)
//   bytes 24-27 status (command end) or 0
//   bytes 28-31 arg (the opcode for command records, bytes / 4 KiB for DMA, tiles for type 3)
// A record of unknown type is a TraceFormatError naming its ring offset (the capture stops
// there: nothing after a corrupt record can be trusted to be aligned).
//
// Plain C++17 on Device/DeviceAccess (no SystemC). On a VF these throw what Device's PMU and
// trace calls throw (the units are the PF's).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sohusim/driver/device.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/profiler/clock_sync.hpp"
#include "sohusim/profiler/profile.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {

enum class TraceRecordType : std::uint16_t {
  CommandStart = 1,
  CommandEnd = 2,
  EngineActivity = 3,
  Dma = 4,
  Interrupt = 5
};
const char* trace_record_type_name(TraceRecordType t);

/// One decoded trace-unit record.
struct CapturedRecord {
  static constexpr unsigned kBytes = 32;
  TraceRecordType type = TraceRecordType::CommandStart;
  std::uint16_t unit = 0;
  std::uint16_t queue = 0;
  std::uint16_t command = 0;
  std::uint64_t device_ns = 0;
  std::uint64_t correlation = 0;
  std::uint32_t status = 0;
  std::uint32_t arg = 0;
  std::uint32_t ring_offset = 0;  // where in the ring it was read
};

/// A malformed record in the trace ring (unknown type); the message names the ring offset.
class TraceFormatError : public DriverError {
 public:
  using DriverError::DriverError;
};

/// Decodes the 32 bytes at `bytes`; `ring_offset` only names the record in errors.
CapturedRecord decode_trace_record(const std::uint8_t* bytes, std::uint32_t ring_offset);

struct TraceCaptureOptions {
  std::uint64_t ring_bytes = 1u << 20;  // a power of two, 4 KiB .. 2 GiB
  unsigned mask = SOHU_TRC_MASK_CMD_MASK;
  /// stop(): host time given to records the device had queued but not yet written before
  /// the last drain (its writer is one DMA write behind at most).
  std::uint64_t settle_ns = 20'000;
};

class TraceCapture {
 public:
  explicit TraceCapture(Device& device, const TraceCaptureOptions& options = {});

  /// Device::trace_configure(ring, mask): a new ring, enabled, head = tail = 0. Records and
  /// drops captured so far are kept (a restart appends).
  void start();
  /// Reads TRC_HEAD, decodes [tail, head) from host memory (two reads when the span wraps),
  /// writes TRC_TAIL = head, reads TRC_DROPS (read-clear) and adds it to drops(). Returns the
  /// number of records appended. Costs 2 MMIO reads, 1 posted write and the host reads.
  std::size_t drain();
  /// TRC_CTRL.EN = 0, then drains until a drain after `settle_ns` finds nothing new.
  void stop();

  bool running() const { return running_; }
  const std::vector<CapturedRecord>& records() const { return records_; }
  /// Records captured so far, handed over and forgotten (a long run keeps memory bounded).
  std::vector<CapturedRecord> take();
  /// Records the device dropped (TRC_DROPS summed over the drains), since construction.
  std::uint64_t drops() const { return drops_; }
  std::uint64_t drains() const { return drains_; }
  /// Largest number of records one drain found waiting: how close the ring came to full.
  std::uint64_t max_backlog() const { return max_backlog_; }
  std::uint64_t ring_iova() const { return ring_; }
  const TraceCaptureOptions& options() const { return opt_; }

 private:
  Device& device_;
  TraceCaptureOptions opt_;
  bool running_ = false;
  std::uint64_t ring_ = 0;
  std::uint32_t tail_ = 0;
  std::vector<CapturedRecord> records_;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t drops_ = 0, drains_ = 0, max_backlog_ = 0;
};

/// What PmuCapture::snapshot() read: the host clock around the reads, the device time, the
/// cycle counter and the 8 counters (counter i counts events[i]; 0 = unused).
struct PmuSnapshot {
  std::uint64_t host_before = 0, host_after = 0;  // DeviceAccess::host_clock_ns()
  std::uint64_t device_ns = 0;                    // TIMESTAMP, read first
  std::uint64_t cycles = 0;
  std::array<std::uint16_t, SOHU_PMU_COUNTER_COUNT> events{};
  std::array<std::uint64_t, SOHU_PMU_COUNTER_COUNT> counters{};
  /// The value of the counter that counts `event` (std::invalid_argument if none does).
  std::uint64_t value(unsigned event) const;
};

class PmuCapture {
 public:
  /// Counter i will count events[i] (SOHU_PMU_EVT_*; at most 8, 0 = none).
  PmuCapture(Device& device, std::vector<unsigned> events);
  /// PMU disabled, each counter programmed (PMU_CONFIG), then PMU_CTRL = EN | RESET: every
  /// counter and the cycle counter start from 0 now.
  void start();
  /// PMU_CTRL = EN | FREEZE (true) or EN (false): frozen counters hold their values.
  void freeze(bool on);
  /// PMU_CTRL = 0.
  void stop();
  /// TIMESTAMP, PMU_CYCLES and the 8 counters over MMIO (10 reads), between two host clock
  /// readings.
  PmuSnapshot snapshot();
  const std::array<std::uint16_t, SOHU_PMU_COUNTER_COUNT>& events() const { return events_; }

 private:
  Device& device_;
  std::array<std::uint16_t, SOHU_PMU_COUNTER_COUNT> events_{};
};

/// One command as the trace unit saw it: its CommandStart and CommandEnd records.
struct CommandRecord {
  std::uint16_t queue = 0, command = 0;
  std::uint64_t correlation = 0;
  std::uint16_t opcode = 0;
  std::uint32_t status = 0;
  std::uint64_t device_start_ns = 0, device_end_ns = 0;
  /// Host clock readings at start and end, from align_commands (0 until aligned).
  std::int64_t host_start_ns = 0, host_end_ns = 0;
  bool aligned = false;
};

struct PairedCommands {
  std::vector<CommandRecord> commands;  // in order of their end records
  std::size_t unmatched_starts = 0;     // starts with no end (still running, or its end dropped)
  std::size_t unmatched_ends = 0;       // ends with no start (its start dropped, or before the capture)
};

/// Pairs CommandStart/CommandEnd by (queue, command id); other record types are skipped.
/// A start while the same (queue, cid) is open replaces it (its end was dropped).
PairedCommands pair_commands(const std::vector<CapturedRecord>& records);
/// Host times through `fit` (remote = device clock, local = host clock; what
/// DeviceClockSampler::sync().fit() gives).
void align_commands(std::vector<CommandRecord>& commands, const profiler::ClockFit& fit);
/// The profiler's command-latency rows from captured commands: "start_to_complete" over all
/// of them, then one row per opcode (I/O opcode names: "GEMM", "NOP", ...), in ns of device
/// time (end - start). Percentiles interpolate linearly between the sorted durations' ranks;
/// `place` names the device ("dev0"). No commands: no rows.
std::vector<profiler::CommandStat> command_stats(const std::vector<CommandRecord>& commands, const std::string& place);

}  // namespace sohusim::driver
