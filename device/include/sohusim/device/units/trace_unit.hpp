#pragma once
// Trace unit: the device's hardware tracer. It writes timestamped 32-byte records of command
// start/end, engine activity, DMA copies and interrupts into a ring buffer in HOST memory by
// DMA, the way on-chip trace units (Arm's ETR, GPU hardware tracers) stream to system
// memory. Software programs it through BAR0's TRACE page (or the TRACE_CONFIG admin
// command): ring IOVA and size, an enable bit and a category mask; it consumes records
// between TRC_TAIL (its read offset, which it writes) and TRC_HEAD (the device's write
// offset). When the ring has no room the record is dropped and counted in TRC_DROPS, never
// stalling the device. Records carry DEVICE time (timestamp_counter.hpp), as silicon's
// would; the profiler aligns them.
//
// Record layout (little-endian; docs/registers.md "Trace records"):
//   bytes 0-1  type (1 command start, 2 command end, 3 engine activity, 4 DMA, 5 interrupt)
//   bytes 2-3  unit (engine index for type 3, MSI-X vector for 5, else 0)
//   bytes 4-5  queue id        bytes 6-7  command id
//   bytes 8-15 device timestamp (ns)
//   bytes 16-23 correlation id (from the command)
//   bytes 24-27 status (command end) or 0    bytes 28-31 arg (bytes / 4 KiB for DMA, tiles for 3)
// The writer batches records already queued into one DMA write where they are contiguous.
#include <cstdint>
#include <deque>
#include <vector>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/device/units/memory_port.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"

namespace sohusim::device {

enum class TraceRecordType : std::uint16_t {
  CommandStart = 1,
  CommandEnd = 2,
  EngineActivity = 3,
  Dma = 4,
  Interrupt = 5
};
/// TRC_MASK bits per record type.
enum TraceCategory : std::uint32_t { kTraceCommands = 1, kTraceEngines = 2, kTraceDma = 4, kTraceInterrupts = 8 };

struct TraceRecord {
  TraceRecordType type = TraceRecordType::CommandStart;
  std::uint16_t unit = 0;
  std::uint16_t queue = 0;
  std::uint16_t command = 0;
  std::uint64_t timestamp_ns = 0;
  std::uint64_t correlation = 0;
  std::uint32_t status = 0;
  std::uint32_t arg = 0;
  static constexpr unsigned kBytes = 32;
  void encode(std::uint8_t* out) const;
  static TraceRecord decode(const std::uint8_t* in);
};

class TraceUnit {
 public:
  /// `host`: the device's DMA path to host memory. Starts its writer thread (elaboration).
  TraceUnit(MemoryPort& host, const TimestampCounter& clock, const counters::Scope& scope);
  /// Empty string on success, else what is wrong (base not 64-byte aligned, size not a
  /// power of two >= 4 KiB).
  std::string configure(std::uint64_t base, std::uint64_t size);
  void set_enabled(bool on) { enabled_ = on && size_ != 0; }
  void set_mask(std::uint32_t m) { mask_ = m; }
  bool enabled() const { return enabled_; }
  std::uint32_t mask() const { return mask_; }
  std::uint64_t base() const { return base_; }
  std::uint64_t size() const { return size_; }
  std::uint32_t head() const { return static_cast<std::uint32_t>(head_ % (size_ == 0 ? 1 : size_)); }
  std::uint32_t tail() const { return static_cast<std::uint32_t>(tail_); }
  void set_tail(std::uint32_t t) { tail_ = size_ == 0 ? 0 : t % size_; }
  /// TRC_DROPS reads clear.
  std::uint32_t take_drops() {
    const auto d = static_cast<std::uint32_t>(drops_since_read_);
    drops_since_read_ = 0;
    return d;
  }
  /// Records `r` now (stamped with the device clock) if the unit is on and `category` is in the mask.
  void record(TraceRecord r, std::uint32_t category);
  void reset();

 private:
  void writer();
  MemoryPort& host_;
  const TimestampCounter& clock_;
  bool enabled_ = false;
  std::uint32_t mask_ = 0;
  std::uint64_t base_ = 0, size_ = 0;
  std::uint64_t head_ = 0;  // device write offset (mod size)
  std::uint64_t tail_ = 0;  // host read offset
  std::uint64_t generation_ = 0;
  std::deque<std::pair<std::uint64_t, TraceRecord>> queue_;  // (ring offset, record)
  sc_core::sc_event kick_;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t drops_since_read_ = 0;
  counters::Counter& records_;
  counters::Counter& drops_;
  counters::Counter& bytes_;
};

}  // namespace sohusim::device
