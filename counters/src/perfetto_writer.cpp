#include "sohusim/counters/perfetto_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "sohusim/counters/proto_wire.hpp"

namespace sohusim::counters {
namespace {

// Field numbers and enum values from Perfetto protos/perfetto/trace/*.proto (mirrored in
// tests/counters/perfetto_subset.proto, which the tests decode with).
namespace field {
constexpr std::uint32_t kTracePacket = 1;  // Trace.packet

// TracePacket
constexpr std::uint32_t kTimestamp = 8;
constexpr std::uint32_t kTimestampClockId = 58;
constexpr std::uint32_t kSequenceId = 10;  // trusted_packet_sequence_id
constexpr std::uint32_t kClockSnapshot = 6;
constexpr std::uint32_t kTrackEvent = 11;
constexpr std::uint32_t kInternedData = 12;
constexpr std::uint32_t kSequenceFlags = 13;
constexpr std::uint32_t kPacketDefaults = 59;
constexpr std::uint32_t kTrackDescriptor = 60;
constexpr std::uint32_t kFirstPacketOnSequence = 87;

// ClockSnapshot and ClockSnapshot.Clock
constexpr std::uint32_t kClocks = 1;
constexpr std::uint32_t kPrimaryTraceClock = 2;
constexpr std::uint32_t kClockId = 1;
constexpr std::uint32_t kClockTimestamp = 2;
constexpr std::uint32_t kClockIsIncremental = 3;

// TracePacketDefaults
constexpr std::uint32_t kDefaultTimestampClockId = 58;

// InternedData; each entry is {iid = 1, name = 2}
constexpr std::uint32_t kEventNames = 2;
constexpr std::uint32_t kDebugAnnotationNames = 3;
constexpr std::uint32_t kInternedIid = 1;
constexpr std::uint32_t kInternedName = 2;

// TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor
constexpr std::uint32_t kUuid = 1;
constexpr std::uint32_t kTrackName = 2;
constexpr std::uint32_t kProcess = 3;
constexpr std::uint32_t kThread = 4;
constexpr std::uint32_t kParentUuid = 5;
constexpr std::uint32_t kCounter = 8;
constexpr std::uint32_t kPid = 1;
constexpr std::uint32_t kProcessName = 6;
constexpr std::uint32_t kTid = 2;
constexpr std::uint32_t kThreadName = 5;
constexpr std::uint32_t kCounterUnit = 3;
constexpr std::uint32_t kCounterUnitMultiplier = 4;

// TrackEvent
constexpr std::uint32_t kDebugAnnotations = 4;
constexpr std::uint32_t kType = 9;
constexpr std::uint32_t kNameIid = 10;
constexpr std::uint32_t kTrackUuid = 11;
constexpr std::uint32_t kCounterValue = 30;
constexpr std::uint32_t kDoubleCounterValue = 44;
constexpr std::uint32_t kFlowIds = 47;
constexpr std::uint32_t kTerminatingFlowIds = 48;
constexpr std::uint32_t kCorrelationId = 52;

// DebugAnnotation
constexpr std::uint32_t kAnnotationNameIid = 1;
constexpr std::uint32_t kBoolValue = 2;
constexpr std::uint32_t kUintValue = 3;
constexpr std::uint32_t kIntValue = 4;
constexpr std::uint32_t kDoubleValue = 5;
constexpr std::uint32_t kStringValue = 6;
}  // namespace field

constexpr std::uint32_t kClockBoottime = 6;      // BuiltinClock BOOTTIME
constexpr std::uint32_t kClockIncremental = 64;  // first sequence-scoped clock id
constexpr std::uint32_t kSequenceId = 1;
constexpr std::uint32_t kSeqIncrementalStateCleared = 1;
constexpr std::uint32_t kSeqNeedsIncrementalState = 2;

enum PacketType : std::uint8_t {  // TrackEvent.Type values
  kSliceBegin = 1,
  kSliceEnd = 2,
  kInstant = 3,
  kCounter = 4,
};

// CounterDescriptor.Unit, with a multiplier for the units that are a scaled enum value. Units
// that fit none go into the track name instead, so that they are still shown.
struct UnitEncoding {
  std::uint32_t unit;
  std::int64_t multiplier;
  bool in_name;
};

UnitEncoding encode_unit(std::string_view unit) {
  struct Known {
    std::string_view text;
    std::uint32_t unit;
    std::int64_t multiplier;
  };
  static constexpr Known kKnown[] = {
      {"ns", 1, 1},
      {"us", 1, 1000},
      {"ms", 1, 1000000},
      {"s", 1, 1000000000},
      {"count", 2, 1},
      {"B", 3, 1},
      {"bytes", 3, 1},
      {"KiB", 3, 1024},
      {"MiB", 3, std::int64_t{1024} * 1024},
      {"GiB", 3, std::int64_t{1024} * 1024 * 1024},
  };
  if (unit.empty()) return {0, 1, false};
  for (const Known& k : kKnown) {
    if (k.text == unit) return {k.unit, k.multiplier, false};
  }
  return {0, 1, true};
}

// Sort key of an event in the reorder window: timestamp, then `order`, then call order.
// `order` keeps slices nested when timestamps tie: the synthesized end of a complete slice goes
// first (rank 0), then explicit begins/ends, instants and counters in call order (rank 1,
// secondary 0), then begins of complete slices, longest first (rank 1, secondary > 0), and last
// the end of a zero-length complete slice (rank 2), which must follow its own begin.
constexpr std::uint32_t order_key(std::uint32_t rank, std::uint32_t secondary) {
  return (rank << 30) | secondary;
}
constexpr std::uint32_t kOrderEnd = order_key(0, 0);
constexpr std::uint32_t kOrderInCallOrder = order_key(1, 0);
constexpr std::uint32_t kOrderZeroLengthEnd = order_key(2, 0);

// A duration squeezed into 30 bits, monotonically: exact below 2^24 ns (16.7 ms), then 24
// significant bits with an exponent. Only ever compared, for slices that start together.
constexpr std::uint32_t squeeze_duration(TimeNs d) {
  constexpr TimeNs kExact = TimeNs{1} << 24;
  if (d < kExact) return static_cast<std::uint32_t>(d);
  unsigned exponent = 0;
  while ((d >> exponent) >= kExact) ++exponent;          // 1..40
  const TimeNs mantissa = (d >> exponent) - kExact / 2;  // [0, 2^23)
  return static_cast<std::uint32_t>(kExact + (exponent - 1) * (kExact / 2) + mantissa);
}
static_assert(squeeze_duration(~TimeNs{0}) < (1U << 30) - 1);

constexpr std::uint32_t complete_begin_order(TimeNs duration) {
  return order_key(1, (1U << 30) - 1 - squeeze_duration(duration));
}

// One event in the writer's pipeline, small enough to be sorted by value. Everything a plain
// slice needs is here; what the caller only lent us (a name given as text, arguments, flows) or
// what few events have (a counter value) lives in an Extras slot.
struct WindowEvent {
  TimeNs ts;
  std::uint64_t correlation_id;  // 0 = none; most device slices have one
  std::uint32_t order;           // tie-break at equal ts, see order_key()
  std::uint32_t track_and_type;  // TrackId << 3 | PacketType: keeps the struct at 32 bytes
  NameId name_id;                // 0: no name, or a name given as text (in the extras)
  std::uint32_t extras;          // slot index, or kNoExtras

  std::uint32_t track() const { return track_and_type >> 3; }
  PacketType type() const { return static_cast<PacketType>(track_and_type & 7); }
  bool has_name() const { return type() == kSliceBegin || type() == kInstant; }
};

static_assert(sizeof(WindowEvent) == 32, "the window sorts events by value: keep them small");

constexpr std::uint32_t kMaxTrackId = (1U << 29) - 1;

constexpr std::uint32_t kNoExtras = ~std::uint32_t{0};

// Blobs keep their capacity when a slot is reused, so a steady stream allocates nothing.
struct Extras {
  double value = 0.0;
  std::uint32_t name_size = 0;  // bytes of name text at the start of `blob`
  std::uint32_t arg_count = 0;
  std::uint32_t flow_count = 0;
  std::string blob;  // [name text][args][flows], see append_args() and fill_extras()
};

// The reorder window: holds events back and releases them sorted by (timestamp, order, call
// order), so that an event may arrive up to `capacity` events late and still be written as a
// delta.
//
// It works in rounds rather than as a heap: a heap costs ~log2(capacity) badly predicted
// branches per event, as much as encoding the packet. Arrivals are appended unsorted; when
// `capacity` of them have accumulated they are radix-sorted on their timestamp (stable, so call
// order survives; the rare runs of equal timestamps are then ordered by `order`), merged with
// the `capacity` events kept from the previous round, and the smaller half is released. An
// event that sorts before a released one must have arrived more than `capacity` events after
// some kept event it precedes: the same tolerance a heap of `capacity` gives.
class ReorderWindow {
 public:
  explicit ReorderWindow(std::size_t capacity) : capacity_(capacity) {}

  std::size_t size() const { return kept_end_ - kept_begin_ + fresh_.size(); }
  bool round_due() const { return fresh_.size() >= capacity_; }
  // The next arrival, to be filled in place; `ts` is noted for the radix sort's range.
  WindowEvent& add(TimeNs ts) {
    if (fresh_.empty()) {
      fresh_lo_ = fresh_hi_ = ts;
    } else {
      fresh_lo_ = std::min(fresh_lo_, ts);
      fresh_hi_ = std::max(fresh_hi_, ts);
    }
    return fresh_.emplace_back();
  }

  struct Range {
    const WindowEvent* first;
    const WindowEvent* last;
    const WindowEvent* begin() const { return first; }
    const WindowEvent* end() const { return last; }
  };

  // Sorts what arrived since the last round into the kept events and returns the events to
  // write, in order: all of them if `all`, else all but the `capacity` last. The range stays
  // valid until the next call. The two merge buffers alternate, so the kept events are never
  // copied: they are simply the tail of the last merge.
  Range take(bool all) {
    sort_fresh();
    std::vector<WindowEvent>& from = merged_[current_];
    std::vector<WindowEvent>& into = merged_[1 - current_];
    into.resize(kept_end_ - kept_begin_ + fresh_.size());
    std::merge(from.begin() + static_cast<std::ptrdiff_t>(kept_begin_),
               from.begin() + static_cast<std::ptrdiff_t>(kept_end_), fresh_.begin(), fresh_.end(), into.begin(),
               before);  // ties: kept first (called earlier)
    fresh_.clear();
    current_ = 1 - current_;
    const std::size_t keep = all ? 0 : std::min(capacity_, into.size());
    kept_begin_ = into.size() - keep;
    kept_end_ = into.size();
    return {into.data(), into.data() + kept_begin_};
  }

 private:
  static bool before(const WindowEvent& a, const WindowEvent& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.order < b.order;
  }

  // LSD radix sort on ts - min(ts), one byte per pass and only as many passes as the spread of
  // the round needs (two or three typically); then equal-timestamp runs by order.
  void sort_fresh() {
    if (fresh_.size() < 2) return;
    const TimeNs lo = fresh_lo_;
    const TimeNs hi = fresh_hi_;
    scratch_.resize(fresh_.size());
    for (unsigned shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += 8) {
      std::size_t count[257] = {};
      for (const WindowEvent& e : fresh_) ++count[((e.ts - lo) >> shift & 0xFF) + 1];
      for (std::size_t b = 1; b < 257; ++b) count[b] += count[b - 1];
      for (const WindowEvent& e : fresh_) scratch_[count[(e.ts - lo) >> shift & 0xFF]++] = e;
      fresh_.swap(scratch_);
    }
    for (std::size_t i = 1; i < fresh_.size(); ++i) {
      if (fresh_[i].ts != fresh_[i - 1].ts || !(fresh_[i].order < fresh_[i - 1].order)) continue;
      const WindowEvent e = fresh_[i];  // stable insertion into its equal-timestamp run
      std::size_t j = i;
      while (j > 0 && fresh_[j - 1].ts == e.ts && e.order < fresh_[j - 1].order) {
        fresh_[j] = fresh_[j - 1];
        --j;
      }
      fresh_[j] = e;
    }
  }

  std::size_t capacity_;
  std::vector<WindowEvent> merged_[2];  // the last merge is merged_[current_]
  std::size_t current_ = 0;
  std::size_t kept_begin_ = 0;      // merged_[current_][kept_begin_, kept_end_): sorted,
  std::size_t kept_end_ = 0;        // at most capacity_, not yet written
  std::vector<WindowEvent> fresh_;  // arrival order
  TimeNs fresh_lo_ = 0;             // smallest and largest ts in fresh_
  TimeNs fresh_hi_ = 0;
  std::vector<WindowEvent> scratch_;  // radix sort buffer
};

template <typename T>
void append_pod(std::string& blob, const T& value) {
  blob.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
T read_pod(const char*& p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  p += sizeof value;
  return value;
}

// Arguments in a blob: [u32 key size][key][u8 variant index][8-byte scalar | u32 size, bytes].
void append_args(std::string& blob, ConstSpan<Arg> args) {
  for (const Arg& arg : args) {
    append_pod(blob, static_cast<std::uint32_t>(arg.key.size()));
    blob.append(arg.key);
    append_pod(blob, static_cast<std::uint8_t>(arg.value.index()));
    std::visit(
        [&blob](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string_view>) {
            append_pod(blob, static_cast<std::uint32_t>(v.size()));
            blob.append(v);
          } else if constexpr (std::is_same_v<V, bool>) {
            append_pod(blob, std::uint64_t{v ? 1U : 0U});  // every scalar takes 8 bytes
          } else {
            append_pod(blob, v);
          }
        },
        arg.value);
  }
}

constexpr std::uint8_t kStringArg = 4;  // index of std::string_view in Arg::Value

}  // namespace

class PerfettoWriter::Impl {
 public:
  Impl(std::string path, PerfettoWriterOptions options)
      : file_(std::move(path)), options_(options), out_(options.flush_chunk + 4096), window_(options.reorder_window) {
    if (options_.max_interned_names == 0) options_.max_interned_names = 1;
    write_incremental_state(/*first=*/true);
  }

  void add_track(const TrackInfo& info) {
    if (info.id == 0 || info.id > kMaxTrackId) {
      throw TraceError("perfetto trace '" + file_.path() + "': track id " + std::to_string(info.id) + " out of range");
    }
    if (info.id >= tracks_.size()) tracks_.resize(info.id + 1);
    TrackSlot& slot = tracks_[info.id];
    slot.info = info;
    slot.known = true;
    slot.described = false;
  }

  void write(const TraceEvent& e) {
    if (closed_) return;
    if (e.track == 0 || e.track >= tracks_.size() || !tracks_[e.track].known) {
      throw TraceError("perfetto trace '" + file_.path() + "': event on unknown track id " + std::to_string(e.track));
    }
    if (!tracks_[e.track].described) describe(e.track);
    if (e.name_id != 0) remember_name(e.name_id, e.name);

    switch (e.type) {
      case EventType::SliceBegin:
        enqueue(e, kSliceBegin, e.ts, kOrderInCallOrder, true);
        break;
      case EventType::SliceEnd:
        enqueue(e, kSliceEnd, e.ts, kOrderInCallOrder, true);
        break;
      case EventType::Complete: {
        const TimeNs end = e.duration > std::numeric_limits<TimeNs>::max() - e.ts ? std::numeric_limits<TimeNs>::max()
                                                                                  : e.ts + e.duration;
        enqueue(e, kSliceBegin, e.ts, complete_begin_order(e.duration), true);
        enqueue(e, kSliceEnd, end, e.duration > 0 ? kOrderEnd : kOrderZeroLengthEnd, false);
        break;
      }
      case EventType::Instant:
        enqueue(e, kInstant, e.ts, kOrderInCallOrder, true);
        break;
      case EventType::Counter:
        enqueue(e, kCounter, e.ts, kOrderInCallOrder, true);
        break;
    }
  }

  void flush() {
    if (window_.size() != 0) release_window(/*all=*/true);
    write_out();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    flush();
    file_.close();
  }

  std::uint64_t bytes_written() const { return file_.bytes_written(); }
  const std::string& path() const { return file_.path(); }
  const PerfettoWriterStats& stats() const { return stats_; }

 private:
  struct TrackSlot {
    TrackInfo info;
    bool known = false;
    bool described = false;
  };

  // A name the recorder interned. Its text is copied once; `generation` says whether its
  // InternedData entry has been written since the last incremental-state reset.
  struct NameSlot {
    std::string text;
    bool known = false;
    std::uint32_t generation = 0;
    std::uint64_t iid = 0;
  };

  struct NewEntry {
    std::uint32_t table;  // field number inside InternedData
    std::uint64_t iid;
    std::string_view text;
  };

  // ---- packets --------------------------------------------------------------------------

  void end_packet(std::size_t mark) {
    out_.close(mark);
    ++stats_.packets;
    if (out_.size() >= options_.flush_chunk) write_out();
  }

  void write_out() {
    file_.write(out_.data(), out_.size());
    out_.clear();
  }

  // The packet that (re)starts the sequence's incremental state. Clock 64 is declared equal to
  // BOOTTIME at the current clock-64 value, so deltas continue from where they were whichever
  // way a reader treats the snapshot (Perfetto's ClockTracker resets the delta base to it).
  void write_incremental_state(bool first) {
    const std::size_t packet = out_.open(field::kTracePacket);
    out_.field_varint(field::kSequenceId, kSequenceId);
    if (first) out_.field_bool(field::kFirstPacketOnSequence, true);
    out_.field_varint(field::kSequenceFlags, kSeqIncrementalStateCleared);
    const std::size_t snapshot = out_.open(field::kClockSnapshot);
    {
      const std::size_t clock = out_.open(field::kClocks);
      out_.field_varint(field::kClockId, kClockBoottime);
      out_.field_varint(field::kClockTimestamp, clock64_);
      out_.close(clock);
    }
    {
      const std::size_t clock = out_.open(field::kClocks);
      out_.field_varint(field::kClockId, kClockIncremental);
      out_.field_varint(field::kClockTimestamp, clock64_);
      out_.field_bool(field::kClockIsIncremental, true);
      out_.close(clock);
    }
    if (first) out_.field_varint(field::kPrimaryTraceClock, kClockBoottime);
    out_.close(snapshot);
    const std::size_t defaults = out_.open(field::kPacketDefaults);
    out_.field_varint(field::kDefaultTimestampClockId, kClockIncremental);
    out_.close(defaults);
    end_packet(packet);
  }

  void reset_incremental_state() {
    ++generation_;
    next_event_iid_ = 1;
    next_annotation_iid_ = 1;
    event_iids_by_text_.clear();
    annotation_iids_.clear();
    interned_text_.clear();
    ++stats_.state_resets;
    write_incremental_state(/*first=*/false);
  }

  void describe(TrackId id) {
    TrackSlot& slot = tracks_[id];
    if (slot.described) return;
    slot.described = true;
    const TrackInfo& t = slot.info;
    if (t.parent != 0 && t.parent < tracks_.size() && tracks_[t.parent].known) {
      describe(t.parent);
    }

    const std::size_t packet = out_.open(field::kTracePacket);
    out_.field_varint(field::kSequenceId, kSequenceId);
    const std::size_t desc = out_.open(field::kTrackDescriptor);
    out_.field_varint(field::kUuid, t.id);
    if (t.parent != 0) out_.field_varint(field::kParentUuid, t.parent);
    switch (t.kind) {
      case TrackKind::Process: {
        const std::size_t process = out_.open(field::kProcess);
        out_.field_int64(field::kPid, t.pid);
        out_.field_bytes(field::kProcessName, t.name);
        out_.close(process);
        break;
      }
      case TrackKind::Thread: {
        const std::size_t thread = out_.open(field::kThread);
        out_.field_int64(field::kPid, t.pid);
        out_.field_int64(field::kTid, t.tid);
        out_.field_bytes(field::kThreadName, t.name);
        out_.close(thread);
        break;
      }
      case TrackKind::Async:
        out_.field_bytes(field::kTrackName, t.name);
        break;
      case TrackKind::Counter: {
        const UnitEncoding unit = encode_unit(t.unit);
        if (unit.in_name) {
          out_.field_bytes(field::kTrackName, t.name + " (" + t.unit + ")");
        } else {
          out_.field_bytes(field::kTrackName, t.name);
        }
        const std::size_t counter = out_.open(field::kCounter);
        if (unit.unit != 0) out_.field_varint(field::kCounterUnit, unit.unit);
        if (unit.multiplier != 1) out_.field_int64(field::kCounterUnitMultiplier, unit.multiplier);
        out_.close(counter);
        break;
      }
    }
    out_.close(desc);
    end_packet(packet);
  }

  // ---- names ----------------------------------------------------------------------------

  void remember_name(NameId id, std::string_view text) {
    if (id >= names_.size()) names_.resize(std::max<std::size_t>(id + 1, names_.size() * 2));
    NameSlot& slot = names_[id];
    if (!slot.known) {
      slot.text.assign(text);
      slot.known = true;
    }
  }

  bool table_full(std::uint64_t next_iid) const { return next_iid > options_.max_interned_names; }

  // Looks up a name given as text in one of the per-generation tables, adding it (and noting
  // the InternedData entry to write) if it is new. Returns 0 when the table is full and
  // `enforce_cap` is set.
  std::uint64_t intern_text(std::unordered_map<std::string_view, std::uint64_t>& table, std::uint64_t& next_iid,
                            std::uint32_t entry_field, std::string_view text, bool enforce_cap) {
    const auto it = table.find(text);
    if (it != table.end()) return it->second;
    if (enforce_cap && table_full(next_iid)) return 0;
    const std::string_view stored = interned_text_.emplace_back(text);
    const std::uint64_t iid = next_iid++;
    table.emplace(stored, iid);
    new_entries_.push_back({entry_field, iid, stored});
    return iid;
  }

  // Resolves the iids of every name the event uses. Returns false if a table overflowed; the
  // caller then resets incremental state (which forgets whatever this call added) and retries.
  bool resolve_names(const WindowEvent& w, const Extras* x, bool enforce_cap) {
    new_entries_.clear();
    arg_iids_.clear();
    name_iid_ = 0;
    if (w.has_name()) {
      if (w.name_id != 0) {
        NameSlot& slot = names_[w.name_id];
        if (slot.generation != generation_) {
          if (enforce_cap && table_full(next_event_iid_)) return false;
          slot.generation = generation_;
          slot.iid = next_event_iid_++;
          new_entries_.push_back({field::kEventNames, slot.iid, slot.text});
        }
        name_iid_ = slot.iid;
      } else {
        name_iid_ = intern_text(event_iids_by_text_, next_event_iid_, field::kEventNames,
                                std::string_view(x->blob.data(), x->name_size), enforce_cap);
        if (name_iid_ == 0) return false;
      }
    }
    if (x == nullptr) return true;
    const char* cursor = x->blob.data() + x->name_size;
    for (std::uint32_t i = 0; i < x->arg_count; ++i) {
      const auto key_size = read_pod<std::uint32_t>(cursor);
      const std::string_view key(cursor, key_size);
      cursor += key_size;
      const std::uint64_t iid =
          intern_text(annotation_iids_, next_annotation_iid_, field::kDebugAnnotationNames, key, enforce_cap);
      if (iid == 0) return false;
      arg_iids_.push_back(iid);
      if (read_pod<std::uint8_t>(cursor) == kStringArg) {
        cursor += read_pod<std::uint32_t>(cursor);
      } else {
        cursor += 8;
      }
    }
    return true;
  }

  // ---- events ---------------------------------------------------------------------------

  void enqueue(const TraceEvent& e, PacketType type, TimeNs ts, std::uint32_t order, bool with_payload) {
    const bool has_name = type == kSliceBegin || type == kInstant;
    const bool needs_extras = with_payload && ((has_name && e.name_id == 0) || type == kCounter ||
                                               !e.extras.args.empty() || !e.extras.flows.empty());
    WindowEvent direct;
    WindowEvent& w = options_.reorder_window == 0 ? direct : window_.add(ts);
    w.ts = ts;
    w.correlation_id = with_payload ? e.extras.correlation_id : 0;
    w.order = order;
    w.track_and_type = static_cast<std::uint32_t>(e.track) << 3 | type;
    w.name_id = has_name ? e.name_id : 0;
    w.extras = kNoExtras;
    if (options_.reorder_window == 0) {
      if (needs_extras) fill_extras(direct_, e);
      emit(w, needs_extras ? &direct_ : nullptr);
      return;
    }
    if (needs_extras) {
      w.extras = acquire_extras();
      fill_extras(extras_[w.extras], e);
    }
    if (window_.round_due()) release_window(/*all=*/false);
  }

  void release_window(bool all) {
    for (const WindowEvent& w : window_.take(all)) {
      if (w.extras == kNoExtras) {
        emit(w, nullptr);
      } else {
        free_extras_.push_back(w.extras);  // emit() reads it before anything can reuse it
        emit(w, &extras_[w.extras]);
      }
    }
  }

  std::uint32_t acquire_extras() {
    if (free_extras_.empty()) {
      extras_.emplace_back();
      return static_cast<std::uint32_t>(extras_.size() - 1);
    }
    const std::uint32_t slot = free_extras_.back();
    free_extras_.pop_back();
    return slot;
  }

  static void fill_extras(Extras& x, const TraceEvent& e) {
    x.value = e.value;
    x.blob.clear();
    x.name_size = 0;
    if (e.name_id == 0 &&
        (e.type == EventType::SliceBegin || e.type == EventType::Complete || e.type == EventType::Instant)) {
      x.blob.append(e.name);
      x.name_size = static_cast<std::uint32_t>(e.name.size());
    }
    x.arg_count = static_cast<std::uint32_t>(e.extras.args.size());
    append_args(x.blob, e.extras.args);
    x.flow_count = static_cast<std::uint32_t>(e.extras.flows.size());
    for (const Flow& flow : e.extras.flows) {
      append_pod(x.blob, flow.id);
      append_pod(x.blob, static_cast<std::uint8_t>(flow.kind));
    }
  }

  void emit(const WindowEvent& w, const Extras* x) {
    if (x == nullptr) {  // fast path: a plain event whose name (if any) is already interned
      if (!w.has_name()) {
        emit_plain(w, nullptr);
        return count_event();
      }
      const NameSlot& slot = names_[w.name_id];
      if (slot.generation == generation_) {
        name_iid_ = slot.iid;
        emit_plain(w, nullptr);
        return count_event();
      }
    }
    if (!resolve_names(w, x, /*enforce_cap=*/true)) {
      reset_incremental_state();
      resolve_names(w, x, /*enforce_cap=*/false);  // an event alone may exceed a tiny cap
    }
    if (new_entries_.empty() && (x == nullptr || (x->arg_count == 0 && x->flow_count == 0))) {
      emit_plain(w, x);
    } else {
      static const Extras kNone;
      emit_general(w, x != nullptr ? *x : kNone);
    }
    count_event();
  }

  void count_event() {
    ++stats_.event_packets;
    ++stats_.packets;
    if (out_.size() >= options_.flush_chunk) write_out();
  }

  // The common packet (no InternedData, arguments or flows), laid out by hand with a single
  // capacity check. Every length fits one byte: the packet is at most ~80 bytes.
  void emit_plain(const WindowEvent& w, const Extras* x) {
    using proto::put_varint;
    using proto::tag1;
    using proto::WireType;
    constexpr std::size_t kMaxPlainPacket = 96;
    std::uint8_t* q = out_.tail(kMaxPlainPacket);
    *q++ = tag1(field::kTracePacket, WireType::LengthDelimited);
    std::uint8_t* const packet_size = q++;
    *q++ = tag1(field::kTimestamp, WireType::Varint);
    if (w.ts >= clock64_) {
      q = put_varint(q, w.ts - clock64_);
      clock64_ = w.ts;
    } else {
      // Too late for the window: an absolute timestamp that leaves the clock-64 base alone.
      q = put_varint(q, w.ts);
      q = put_varint(q, proto::tag(field::kTimestampClockId, WireType::Varint));
      *q++ = kClockBoottime;
      ++stats_.absolute_timestamps;
    }
    *q++ = tag1(field::kSequenceId, WireType::Varint);
    *q++ = kSequenceId;
    if (options_.mark_needs_incremental_state) {
      *q++ = tag1(field::kSequenceFlags, WireType::Varint);
      *q++ = kSeqNeedsIncrementalState;
    }
    *q++ = tag1(field::kTrackEvent, WireType::LengthDelimited);
    std::uint8_t* const event_size = q++;
    *q++ = tag1(field::kType, WireType::Varint);
    *q++ = w.type();
    *q++ = tag1(field::kTrackUuid, WireType::Varint);
    q = put_varint(q, w.track());
    if (w.has_name()) {
      *q++ = tag1(field::kNameIid, WireType::Varint);
      q = put_varint(q, name_iid_);
    }
    if (w.correlation_id != 0) {
      q = put_varint(q, proto::tag(field::kCorrelationId, WireType::Varint));
      q = put_varint(q, w.correlation_id);
    }
    if (w.type() == kCounter && x != nullptr) q = put_counter_value(q, x->value);
    *event_size = static_cast<std::uint8_t>(q - event_size - 1);
    *packet_size = static_cast<std::uint8_t>(q - packet_size - 1);
    out_.commit(q);
  }

  // Integral values take a varint (counter_value); the rest a fixed64 double.
  static std::uint8_t* put_counter_value(std::uint8_t* q, double value) {
    using proto::WireType;
    constexpr double kInt64Range = 9.2e18;
    if (std::trunc(value) == value && std::fabs(value) < kInt64Range) {
      q = proto::put_varint(q, proto::tag(field::kCounterValue, WireType::Varint));
      return proto::put_varint(q, static_cast<std::uint64_t>(static_cast<std::int64_t>(value)));
    }
    q = proto::put_varint(q, proto::tag(field::kDoubleCounterValue, WireType::Fixed64));
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 8; ++i) *q++ = static_cast<std::uint8_t>(bits >> (8 * i));
    return q;
  }

  // Any other packet: new InternedData entries, arguments, flows; nested lengths as needed.
  void emit_general(const WindowEvent& w, const Extras& x) {
    const std::size_t packet = out_.open(field::kTracePacket);
    if (w.ts >= clock64_) {
      out_.field_varint(field::kTimestamp, w.ts - clock64_);
      clock64_ = w.ts;
    } else {
      out_.field_varint(field::kTimestamp, w.ts);
      out_.field_varint(field::kTimestampClockId, kClockBoottime);
      ++stats_.absolute_timestamps;
    }
    out_.field_varint(field::kSequenceId, kSequenceId);
    if (options_.mark_needs_incremental_state) {
      out_.field_varint(field::kSequenceFlags, kSeqNeedsIncrementalState);
    }

    if (!new_entries_.empty()) {
      const std::size_t interned = out_.open(field::kInternedData);
      for (const NewEntry& entry : new_entries_) {
        const std::size_t item = out_.open(entry.table);
        out_.field_varint(field::kInternedIid, entry.iid);
        out_.field_bytes(field::kInternedName, entry.text);
        out_.close(item);
      }
      out_.close(interned);
      stats_.interned_entries += new_entries_.size();
    }

    const std::size_t event = out_.open(field::kTrackEvent);
    out_.field_varint(field::kType, w.type());
    out_.field_varint(field::kTrackUuid, w.track());
    if (w.has_name()) out_.field_varint(field::kNameIid, name_iid_);
    const char* cursor = x.blob.data() + x.name_size;
    for (std::uint32_t i = 0; i < x.arg_count; ++i) {
      cursor += read_pod<std::uint32_t>(cursor);  // key: already resolved to arg_iids_[i]
      const std::size_t annotation = out_.open(field::kDebugAnnotations);
      out_.field_varint(field::kAnnotationNameIid, arg_iids_[i]);
      switch (read_pod<std::uint8_t>(cursor)) {
        case 0:
          out_.field_int64(field::kIntValue, read_pod<std::int64_t>(cursor));
          break;
        case 1:
          out_.field_varint(field::kUintValue, read_pod<std::uint64_t>(cursor));
          break;
        case 2:
          out_.field_double(field::kDoubleValue, read_pod<double>(cursor));
          break;
        case 3:
          out_.field_bool(field::kBoolValue, read_pod<std::uint64_t>(cursor) != 0);
          break;
        default: {
          const auto size = read_pod<std::uint32_t>(cursor);
          out_.field_bytes(field::kStringValue, std::string_view(cursor, size));
          cursor += size;
          break;
        }
      }
      out_.close(annotation);
    }
    for (std::uint32_t i = 0; i < x.flow_count; ++i) {
      const auto id = read_pod<std::uint64_t>(cursor);
      const auto kind = static_cast<FlowKind>(read_pod<std::uint8_t>(cursor));
      out_.field_fixed64(kind == FlowKind::Terminate ? field::kTerminatingFlowIds : field::kFlowIds, id);
    }
    if (w.correlation_id != 0) out_.field_varint(field::kCorrelationId, w.correlation_id);
    if (w.type() == kCounter) {
      out_.commit(put_counter_value(out_.tail(2 + proto::kMaxVarint + 8), x.value));
    }
    out_.close(event);
    out_.close(packet);
  }

  TraceOutputFile file_;
  PerfettoWriterOptions options_;
  proto::WireBuffer out_;
  PerfettoWriterStats stats_;
  bool closed_ = false;

  std::vector<TrackSlot> tracks_;  // indexed by TrackId
  std::vector<NameSlot> names_;    // indexed by NameId

  // Incremental state of the current generation.
  std::uint32_t generation_ = 1;
  std::uint64_t next_event_iid_ = 1;
  std::uint64_t next_annotation_iid_ = 1;
  std::unordered_map<std::string_view, std::uint64_t> event_iids_by_text_;
  std::unordered_map<std::string_view, std::uint64_t> annotation_iids_;
  std::deque<std::string> interned_text_;  // owns the keys of the two maps above
  TimeNs clock64_ = 0;                     // value of the last packet on clock 64

  ReorderWindow window_;
  std::vector<Extras> extras_;  // slots referenced by events in the window
  std::vector<std::uint32_t> free_extras_;
  Extras direct_;  // the single slot used when the window is 0

  // Scratch of emit(), kept to reuse its capacity.
  std::uint64_t name_iid_ = 0;
  std::vector<std::uint64_t> arg_iids_;
  std::vector<NewEntry> new_entries_;
};

PerfettoWriter::PerfettoWriter(std::string path, PerfettoWriterOptions options)
    : impl_(std::make_unique<Impl>(std::move(path), options)) {}

PerfettoWriter::~PerfettoWriter() {
  try {
    impl_->close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

void PerfettoWriter::add_track(const TrackInfo& track) {
  impl_->add_track(track);
}
void PerfettoWriter::write(const TraceEvent& event) {
  impl_->write(event);
}
void PerfettoWriter::flush() {
  impl_->flush();
}
void PerfettoWriter::close() {
  impl_->close();
}
std::uint64_t PerfettoWriter::bytes_written() const {
  return impl_->bytes_written();
}
const std::string& PerfettoWriter::path() const {
  return impl_->path();
}
const PerfettoWriterStats& PerfettoWriter::stats() const {
  return impl_->stats();
}

}  // namespace sohusim::counters
