// PerfettoWriter: the main trace output, Perfetto's native protobuf format (a `Trace` message,
// i.e. a stream of length-delimited `TracePacket`s), readable by ui.perfetto.dev and
// trace_processor. Field numbers: Perfetto protos/perfetto/trace/*.proto; the subset we use is
// spelled out in tests/counters/perfetto_subset.proto.
//
// Encoding choices (each one is there to meet the trace budget: >= 5 M slices
// per wall-second and <= 32 bytes per slice on disk; docs/trace.md has the figures):
//  - One packet sequence (trusted_packet_sequence_id = 1). Its first packet clears incremental
//    state and carries a ClockSnapshot that declares clock 64 as an incremental clock equal to
//    BOOTTIME (6), plus TracePacketDefaults{timestamp_clock_id = 64}; every event packet then
//    stores its timestamp as a varint delta from the previous packet on clock 64 (usually two
//    bytes instead of five to eight).
//  - Event names and argument names are interned: the InternedData entry rides in the first
//    packet that uses the name, later packets carry only the iid.
//  - Track descriptors are written once, lazily, just before the first event on the track (and
//    after their parent's). Track uuids are the recorder's small TrackIds.
//  - A complete slice is a SLICE_BEGIN + SLICE_END pair (TrackEvent has no duration field).
//  - Timestamps out of order: deltas cannot be negative, and complete slices recorded when they
//    end (the natural order in a simulator) start before the previous packet. A bounded reorder
//    window (default 1024 events) holds events back and releases them in timestamp order; an
//    event may arrive up to that many events late and still be a delta. An event older than
//    what already left the window (or anything written after flush()) gets an absolute BOOTTIME
//    timestamp (timestamp_clock_id = 6); such a packet does not reference clock 64, so the next
//    delta is still taken from the last clock-64 packet, as Perfetto's incremental clocks
//    require. Within the window, equal timestamps are ordered so that slices stay nested:
//    synthesized ends first, then explicit begin/end/instants/counters in call order, then
//    begins of complete slices, longest first, then ends of zero-length complete slices.
//  - Bounded memory: the intern tables hold at most `max_interned_names` entries each. On
//    overflow the writer starts a new generation: a packet with SEQ_INCREMENTAL_STATE_CLEARED,
//    the defaults and a clock snapshot at the current clock-64 value, after which names are
//    interned (and their InternedData re-emitted) again on first use.
//  - SEQ_NEEDS_INCREMENTAL_STATE is off by default: it only tells a reader to skip packets after
//    it lost the start of a sequence, which cannot happen in a file written from its first
//    packet, and it costs 2 bytes per packet (4 per slice) that the byte budget cannot afford.
//    `mark_needs_incremental_state` turns it on.
//  - Output goes through a buffer handed to the file in chunks, only at packet boundaries: a
//    run stopped at any point leaves a file of whole packets that decodes. Events still in the
//    reorder window are lost in a crash; destructor, close() and flush() write them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sohusim/counters/trace_writer.hpp"

namespace sohusim::counters {

struct PerfettoWriterOptions {
  // Entries per intern table (event names, argument names) before incremental state is reset.
  std::size_t max_interned_names = std::size_t{64} * 1024;
  // Events held back to sort timestamps; 0 writes events in call order.
  std::size_t reorder_window = 1024;
  // Sets SEQ_NEEDS_INCREMENTAL_STATE on every packet that uses interned names or clock 64.
  bool mark_needs_incremental_state = false;
  // The buffer goes to the file once it holds this many bytes.
  std::size_t flush_chunk = kTraceFlushChunk;
};

// What the writer did, for tests, benchmarks and docs.
struct PerfettoWriterStats {
  std::uint64_t packets = 0;
  std::uint64_t event_packets = 0;
  std::uint64_t absolute_timestamps = 0;  // events that arrived too late for the reorder window
  std::uint64_t state_resets = 0;         // intern-table overflows
  std::uint64_t interned_entries = 0;     // InternedData entries written, all generations
};

class PerfettoWriter final : public TraceWriter {
 public:
  // Opens (truncates) `path`; throws TraceError naming the path and strerror on failure.
  explicit PerfettoWriter(std::string path, PerfettoWriterOptions options = {});
  ~PerfettoWriter() override;  // close(); errors are swallowed, call close() to see them
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  void add_track(const TrackInfo& track) override;
  void write(const TraceEvent& event) override;
  void flush() override;
  void close() override;
  std::uint64_t bytes_written() const override;
  const std::string& path() const override;

  const PerfettoWriterStats& stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sohusim::counters
