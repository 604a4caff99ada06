// Vocabulary of the trace substrate: the values a TraceRecorder accepts and hands to a
// TraceWriter. The model is Perfetto's: a trace is a set of *tracks* (a process, a thread of a
// process, an async track whose slices may overlap, a counter), and *events* placed on them at
// integer-nanosecond timestamps: slices (begin/end, or complete with a duration), instants and
// counter samples. Slices carry typed arguments, a correlation id (the id a request keeps from
// the driver down to the engines, docs/trace.md "Flows in a simulation") and flows, the arrows that join slices
// on different tracks.
//
// Every string in these types is a view: it must stay valid for the duration of the call that
// receives it, and no longer. Writers copy what they keep.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace sohusim::counters {

// Trace timestamps are integer nanoseconds of the time base the caller chose (simulated time for
// the simulator). Integers, not doubles, so that files are byte-identical across runs and the
// Perfetto encoding can use short varint deltas.
using TimeNs = std::uint64_t;

// Tracks are numbered 1, 2, 3... in creation order; 0 means "no track" (e.g. no parent). Small
// sequential numbers keep the Perfetto track uuids one or two bytes long.
using TrackId = std::uint64_t;

// An interned event or argument name; stable for the lifetime of the recorder that issued it.
// 0 means "not interned" (the name travels as text).
using NameId = std::uint32_t;

enum class TrackKind : std::uint8_t {
  Process,  // a host or device; its slices must nest
  Thread,   // a sequential agent of a process (API thread, engine, DMA channel); slices nest
  Async,    // work that overlaps (in-flight transfers); the recorder spreads it over lanes
  Counter,  // a sampled value (bandwidth, occupancy)
};

// One typed argument of an event. The constructor maps every C++ arithmetic type onto one of
// the five stored alternatives, so `{"bytes", n}` works for any integer type n without the
// variant's conversion ambiguities.
struct Arg {
  using Value = std::variant<std::int64_t, std::uint64_t, double, bool, std::string_view>;

  std::string_view key;
  Value value;

  template <typename T>
  Arg(std::string_view k, T&& v) : key(k), value(to_value(std::forward<T>(v))) {}

 private:
  template <typename T>
  static Value to_value(T&& v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, bool>) {
      return Value(std::in_place_type<bool>, v);
    } else if constexpr (std::is_integral_v<D> && std::is_signed_v<D>) {
      return Value(std::in_place_type<std::int64_t>, static_cast<std::int64_t>(v));
    } else if constexpr (std::is_integral_v<D>) {
      return Value(std::in_place_type<std::uint64_t>, static_cast<std::uint64_t>(v));
    } else if constexpr (std::is_floating_point_v<D>) {
      return Value(std::in_place_type<double>, static_cast<double>(v));
    } else if constexpr (std::is_same_v<D, Value>) {
      return std::forward<T>(v);
    } else {
      static_assert(std::is_convertible_v<T, std::string_view>,
                    "an Arg value is an integer, a floating-point number, a bool or a string");
      return Value(std::in_place_type<std::string_view>, std::string_view(v));
    }
  }
};

// A flow joins the slices that carry the same id, in timestamp order: Out starts the flow or
// continues it through this slice, Terminate ends it here.
enum class FlowKind : std::uint8_t { Out, Terminate };

struct Flow {
  std::uint64_t id;
  FlowKind kind = FlowKind::Out;
};

// A read-only view of a contiguous array (C++17 has no std::span), built from pointer + size so
// that callers with argument lists made at run time can pass a vector's data(). Deliberately not
// constructible from an initializer_list, whose array would die before the view.
template <typename T>
class ConstSpan {
 public:
  constexpr ConstSpan() = default;
  constexpr ConstSpan(const T* data, std::size_t size) : data_(data), size_(size) {}

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

// What an event may carry besides its track, time and name. Everything is optional.
struct EventExtras {
  ConstSpan<Arg> args;
  ConstSpan<Flow> flows;
  std::uint64_t correlation_id = 0;  // 0 = none
};

// One event as a TraceWriter receives it, already validated by the recorder: the track exists,
// has the right kind, and for async tracks the recorder has already picked the lane track.
enum class EventType : std::uint8_t {
  SliceBegin,
  SliceEnd,
  Complete,  // a slice whose duration is known: [ts, ts + duration]
  Instant,
  Counter,
};

struct TraceEvent {
  EventType type = EventType::Instant;
  TrackId track = 0;
  TimeNs ts = 0;
  TimeNs duration = 0;    // Complete only
  NameId name_id = 0;     // the recorder's id for `name`, or 0 when the name was given as text
  std::string_view name;  // SliceBegin, Complete, Instant
  double value = 0.0;     // Counter only
  EventExtras extras;
};

// A track as the recorder declares it to the writer (once, parents before children).
struct TrackInfo {
  TrackId id = 0;
  TrackKind kind = TrackKind::Thread;
  TrackId parent = 0;      // 0 = a top-level track
  std::string name;        // for async lanes: "<async track name> #<n>"
  std::string unit;        // counter tracks: free text ("ns", "bytes", "GB/s", ...)
  std::uint32_t pid = 0;   // the process this track belongs to, 0 if none
  std::uint32_t tid = 0;   // thread tracks only
  TrackId lane_of = 0;     // async lanes: the async track the user created; 0 otherwise
  std::uint32_t lane = 0;  // async tracks: 0 for the user's track itself, n-1 for "name #n"
};

}  // namespace sohusim::counters
