#include "sohusim/counters/chrome_json_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace sohusim::counters {
namespace {

constexpr std::string_view kHeader = R"({"displayTimeUnit":"ns","traceEvents":[)";
constexpr std::string_view kFooter = "\n]}\n";

template <typename T>
void append_number(std::string& out, T value) {
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, result.ptr);
}

// JSON has no NaN or infinity: those become null.
void append_json_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  append_number(out, value);  // shortest form that reads back to the same double
}

// U+FFFD REPLACEMENT CHARACTER, in UTF-8.
void append_replacement(std::string& out) {
  out += "\xEF\xBF\xBD";
}

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 if it is not one; `consumed`
// is then the size of the maximal invalid subpart to replace (Unicode's "substitution of
// maximal subparts" practice).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t& consumed) {
  const auto byte = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  std::size_t length;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) lo = 0xA0;  // no overlong forms
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) lo = 0x90;  // no overlong forms
    if (lead == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    consumed = 1;
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= s.size()) {
      consumed = k;
      return 0;
    }
    const unsigned char c = byte(i + k);
    const unsigned char min = k == 1 ? lo : 0x80;
    const unsigned char max = k == 1 ? hi : 0xBF;
    if (c < min || c > max) {
      consumed = k;
      return 0;
    }
  }
  consumed = length;
  return length;
}

}  // namespace

void append_json_string(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < bytes.size()) {
    std::size_t plain = i;  // copy runs that need no escaping in one go
    while (plain < bytes.size()) {
      const auto b = static_cast<unsigned char>(bytes[plain]);
      if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\') break;
      ++plain;
    }
    out.append(bytes.data() + i, plain - i);
    i = plain;
    if (i == bytes.size()) break;
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x80) {
      std::size_t consumed = 0;
      if (utf8_sequence(bytes, i, consumed) != 0) {
        out.append(bytes.data() + i, consumed);
      } else {
        append_replacement(out);
      }
      i += consumed;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

void append_json_microseconds(std::string& out, TimeNs ns) {
  append_number(out, ns / 1000);
  const auto fraction = static_cast<unsigned>(ns % 1000);
  const char decimals[4] = {'.', static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                            static_cast<char>('0' + fraction % 10)};
  out.append(decimals, sizeof decimals);
}

class ChromeJsonWriter::Impl {
 public:
  Impl(std::string path, ChromeJsonWriterOptions options) : file_(std::move(path)), options_(options) {
    out_.reserve(options_.flush_chunk + 4096);
    out_ += kHeader;
  }

  void add_track(const TrackInfo& info) {
    if (info.id == 0) throw TraceError("chrome json trace '" + file_.path() + "': track id 0");
    if (info.id >= tracks_.size()) tracks_.resize(info.id + 1);
    TrackSlot& slot = tracks_[info.id];
    slot = TrackSlot{};
    slot.info = info;
    slot.known = true;
    slot.tid = info.pid;
    if (info.kind == TrackKind::Thread) slot.tid = info.tid;
    if ((info.kind == TrackKind::Async || info.kind == TrackKind::Counter) && known(info.parent)) {
      slot.tid = tracks_[info.parent].tid;
    }
    // Lanes exist for Perfetto's sake; JSON async events overlap freely, so a lane's events
    // keep the category of the async track the user created.
    slot.category = info.name;
    if (info.lane_of != 0 && known(info.lane_of)) slot.category = tracks_[info.lane_of].info.name;
    if (info.kind == TrackKind::Counter && !info.unit.empty()) {
      slot.category = info.name + " (" + info.unit + ")";
    }
  }

  void write(const TraceEvent& e) {
    if (closed_) return;
    if (!known(e.track)) {
      throw TraceError("chrome json trace '" + file_.path() + "': event on unknown track id " +
                       std::to_string(e.track));
    }
    describe(e.track);
    TrackSlot& t = tracks_[e.track];
    switch (t.info.kind) {
      case TrackKind::Process:
      case TrackKind::Thread:
        write_thread_event(t, e);
        break;
      case TrackKind::Async:
        write_async_event(t, e);
        break;
      case TrackKind::Counter:
        write_counter(t, e);
        break;
    }
  }

  void flush() { write_out(); }

  void close() {
    if (closed_) return;
    closed_ = true;
    write_flows();
    out_ += kFooter;
    write_out();
    file_.close();
  }

  std::uint64_t bytes_written() const { return file_.bytes_written(); }
  const std::string& path() const { return file_.path(); }

 private:
  struct TrackSlot {
    TrackInfo info;
    bool known = false;
    bool described = false;
    std::uint32_t tid = 0;
    std::string category;  // async: "cat" of its events; counter: the counter's name
    // An async lane holds at most one begin()/end() slice at a time (the recorder's lanes).
    std::uint64_t open_async_id = 0;
    std::string open_async_name;
  };

  bool known(TrackId id) const { return id != 0 && id < tracks_.size() && tracks_[id].known; }

  // ---- output ---------------------------------------------------------------------------

  void write_out() {
    file_.write(out_.data(), out_.size());
    out_.clear();
  }

  void begin_event(std::string_view phase) {
    out_ += first_event_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
    first_event_ = false;
    out_ += phase;
    out_ += '"';
  }

  void end_event() {
    out_ += '}';
    if (out_.size() >= options_.flush_chunk) write_out();
  }

  void key(std::string_view k) {
    out_ += ",\"";
    out_ += k;
    out_ += "\":";
  }

  void name(std::string_view n) {
    key("name");
    append_json_string(out_, n);
  }

  void place(const TrackSlot& t, bool with_tid = true) {
    key("pid");
    append_number(out_, t.info.pid);
    if (with_tid) {
      key("tid");
      append_number(out_, t.tid);
    }
  }

  void timestamp(std::string_view k, TimeNs ns) {
    key(k);
    append_json_microseconds(out_, ns);
  }

  void args(const EventExtras& extras) {
    if (extras.args.empty() && extras.correlation_id == 0) return;
    key("args");
    out_ += '{';
    bool first = true;
    for (const Arg& arg : extras.args) {
      if (!first) out_ += ',';
      first = false;
      append_json_string(out_, arg.key);
      out_ += ':';
      std::visit(
          [this](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::string_view>) {
              append_json_string(out_, v);
            } else if constexpr (std::is_same_v<V, bool>) {
              out_ += v ? "true" : "false";
            } else if constexpr (std::is_same_v<V, double>) {
              append_json_double(out_, v);
            } else {
              append_number(out_, v);
            }
          },
          arg.value);
    }
    if (extras.correlation_id != 0) {
      if (!first) out_ += ',';
      out_ += "\"correlation_id\":";
      append_number(out_, extras.correlation_id);
    }
    out_ += '}';
  }

  // ---- tracks ---------------------------------------------------------------------------

  void describe(TrackId id) {
    TrackSlot& t = tracks_[id];
    if (t.described) return;
    t.described = true;
    if (known(t.info.parent)) describe(t.info.parent);
    if (t.info.kind != TrackKind::Process && t.info.kind != TrackKind::Thread) return;
    const bool process = t.info.kind == TrackKind::Process;
    begin_event("M");
    name(process ? "process_name" : "thread_name");
    key("pid");
    append_number(out_, t.info.pid);
    key("tid");
    append_number(out_, process ? 0U : t.info.tid);
    key("args");
    out_ += "{\"name\":";
    append_json_string(out_, t.info.name);
    out_ += '}';
    end_event();
  }

  // ---- events ---------------------------------------------------------------------------

  void write_thread_event(const TrackSlot& t, const TraceEvent& e) {
    switch (e.type) {
      case EventType::SliceBegin:
        begin_event("B");
        name(e.name);
        break;
      case EventType::SliceEnd:
        begin_event("E");
        break;
      case EventType::Complete:
        begin_event("X");
        name(e.name);
        break;
      case EventType::Instant:
        begin_event("i");
        out_ += R"(,"s":"t")";
        name(e.name);
        break;
      case EventType::Counter:
        return;  // the recorder only sends counters to counter tracks
    }
    place(t);
    timestamp("ts", e.ts);
    if (e.type == EventType::Complete) timestamp("dur", e.duration);
    args(e.extras);
    end_event();
    flows(t, e.ts, e.extras);
  }

  void write_async_event(TrackSlot& t, const TraceEvent& e) {
    switch (e.type) {
      case EventType::SliceBegin:
        t.open_async_id = next_async_id_++;
        t.open_async_name.assign(e.name);
        async_slice_event("b", t, t.open_async_id, e.name, e.ts, &e.extras);
        break;
      case EventType::SliceEnd:
        async_slice_event("e", t, t.open_async_id, t.open_async_name, e.ts, &e.extras);
        t.open_async_id = 0;
        break;
      case EventType::Complete: {
        const std::uint64_t id = next_async_id_++;
        async_slice_event("b", t, id, e.name, e.ts, &e.extras);
        async_slice_event("e", t, id, e.name, e.ts + e.duration, nullptr);
        break;
      }
      case EventType::Instant:
        begin_event("i");
        out_ += R"(,"s":"p")";
        key("cat");
        append_json_string(out_, t.category);
        name(e.name);
        place(t, /*with_tid=*/false);
        timestamp("ts", e.ts);
        args(e.extras);
        end_event();
        break;
      case EventType::Counter:
        return;
    }
    flows(t, e.ts, e.extras);
  }

  void async_slice_event(std::string_view phase, const TrackSlot& t, std::uint64_t id, std::string_view slice_name,
                         TimeNs ts, const EventExtras* extras) {
    begin_event(phase);
    key("cat");
    append_json_string(out_, t.category);
    name(slice_name);
    key("id");
    append_number(out_, id);
    place(t);
    timestamp("ts", ts);
    if (extras != nullptr) args(*extras);
    end_event();
  }

  void write_counter(const TrackSlot& t, const TraceEvent& e) {
    if (e.type != EventType::Counter) return;  // the recorder only sends counters here
    begin_event("C");
    name(t.category);
    place(t, /*with_tid=*/false);
    timestamp("ts", e.ts);
    key("args");
    out_ += '{';
    append_json_string(out_, t.category);
    out_ += ':';
    append_json_double(out_, e.value);
    out_ += '}';
    end_event();
  }

  // Flow points wait for close(): whether a point starts ("s"), continues ("t") or ends ("f")
  // its flow depends on its place in time among its id's points, and complete() slices are
  // recorded when they end, out of time order. Points on async tracks are left out: v1 flow
  // events bind to a slice of a thread track only (the Perfetto output has them).
  void flows(const TrackSlot& t, TimeNs ts, const EventExtras& extras) {
    if (t.info.kind == TrackKind::Async) return;
    for (const Flow& flow : extras.flows) {
      flow_points_.push_back(
          FlowPoint{flow.id, ts, flow_points_.size(), t.info.pid, t.tid, flow.kind == FlowKind::Terminate});
    }
  }

  void write_flows() {
    std::sort(flow_points_.begin(), flow_points_.end(), [](const FlowPoint& a, const FlowPoint& b) {
      return a.id != b.id ? a.id < b.id : a.ts != b.ts ? a.ts < b.ts : a.seq < b.seq;
    });
    bool open = false;
    for (std::size_t i = 0; i < flow_points_.size(); ++i) {
      const FlowPoint& p = flow_points_[i];
      if (i == 0 || flow_points_[i - 1].id != p.id) open = false;
      std::string_view phase;
      if (p.terminate) {
        if (!open) continue;  // nothing to end (as trace_processor: a terminating id starts nothing)
        phase = "f";
        open = false;
      } else {
        phase = open ? "t" : "s";
        open = true;
      }
      begin_event(phase);
      out_ += R"(,"cat":"flow","name":"flow")";
      key("id");
      append_number(out_, p.id);
      key("pid");
      append_number(out_, p.pid);
      key("tid");
      append_number(out_, p.tid);
      timestamp("ts", p.ts);
      out_ += R"(,"bp":"e")";
      end_event();
      if (out_.size() >= options_.flush_chunk) write_out();
    }
    flow_points_.clear();
  }

  struct FlowPoint {
    std::uint64_t id;
    TimeNs ts;
    std::size_t seq;  // arrival order: ties keep it
    std::uint32_t pid, tid;
    bool terminate;
  };

  TraceOutputFile file_;
  ChromeJsonWriterOptions options_;
  std::string out_;
  bool closed_ = false;
  bool first_event_ = true;
  std::vector<TrackSlot> tracks_;       // indexed by TrackId
  std::vector<FlowPoint> flow_points_;  // held until close() (JSON is the small-run format)
  std::uint64_t next_async_id_ = 1;
};

ChromeJsonWriter::ChromeJsonWriter(std::string path, ChromeJsonWriterOptions options)
    : impl_(std::make_unique<Impl>(std::move(path), options)) {}

ChromeJsonWriter::~ChromeJsonWriter() {
  try {
    impl_->close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

void ChromeJsonWriter::add_track(const TrackInfo& track) {
  impl_->add_track(track);
}
void ChromeJsonWriter::write(const TraceEvent& event) {
  impl_->write(event);
}
void ChromeJsonWriter::flush() {
  impl_->flush();
}
void ChromeJsonWriter::close() {
  impl_->close();
}
std::uint64_t ChromeJsonWriter::bytes_written() const {
  return impl_->bytes_written();
}
const std::string& ChromeJsonWriter::path() const {
  return impl_->path();
}

}  // namespace sohusim::counters
