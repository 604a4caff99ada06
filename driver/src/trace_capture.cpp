#include "sohusim/driver/trace_capture.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

namespace sohusim::driver {

namespace {

template <typename T>
T load_le(const std::uint8_t* p) {
  // Little-endian fields, assembled byte by byte: no assumption about the host's byte order.
  std::uint64_t v = 0;
  for (unsigned i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return static_cast<T>(v);
}

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

}  // namespace

const char* trace_record_type_name(TraceRecordType t) {
  switch (t) {
    case TraceRecordType::CommandStart:
      return "command start";
    case TraceRecordType::CommandEnd:
      return "command end";
    case TraceRecordType::EngineActivity:
      return "engine activity";
    case TraceRecordType::Dma:
      return "DMA";
    case TraceRecordType::Interrupt:
      return "interrupt";
  }
  return "unknown";
}

CapturedRecord decode_trace_record(const std::uint8_t* in, std::uint32_t ring_offset) {
  const auto type = load_le<std::uint16_t>(in + 0);
  if (type < static_cast<std::uint16_t>(TraceRecordType::CommandStart) ||
      type > static_cast<std::uint16_t>(TraceRecordType::Interrupt)) {
    throw TraceFormatError("trace record at ring offset " + hex(ring_offset) + " has unknown type " +
                           std::to_string(type) + " (1..5 are defined): the ring is corrupt or was overwritten");
  }
  CapturedRecord r;
  r.type = static_cast<TraceRecordType>(type);
  r.unit = load_le<std::uint16_t>(in + 2);
  r.queue = load_le<std::uint16_t>(in + 4);
  r.command = load_le<std::uint16_t>(in + 6);
  r.device_ns = load_le<std::uint64_t>(in + 8);
  r.correlation = load_le<std::uint64_t>(in + 16);
  r.status = load_le<std::uint32_t>(in + 24);
  r.arg = load_le<std::uint32_t>(in + 28);
  r.ring_offset = ring_offset;
  return r;
}

// ---- TraceCapture -------------------------------------------------------------------------------

TraceCapture::TraceCapture(Device& device, const TraceCaptureOptions& options) : device_(device), opt_(options) {
  const std::uint64_t n = opt_.ring_bytes;
  if (n < 4096 || (n & (n - 1)) != 0 || n > (1ULL << 31)) {
    throw std::invalid_argument("TraceCapture: ring of " + std::to_string(n) + " bytes (a power of two, 4096 .. 2^31)");
  }
}

void TraceCapture::start() {
  ring_ = device_.trace_configure(opt_.ring_bytes, opt_.mask);
  tail_ = 0;
  running_ = true;
}

std::size_t TraceCapture::drain() {
  if (ring_ == 0) throw DriverError("TraceCapture::drain: start() was not called");
  const auto size = static_cast<std::uint32_t>(opt_.ring_bytes);
  const std::uint32_t head = device_.read32(SOHU_TRC_HEAD);
  if (head >= size || head % CapturedRecord::kBytes != 0) {
    throw TraceFormatError("TraceCapture: TRC_HEAD reads " + hex(head) + ", not a record offset inside the ring of " +
                           std::to_string(size) + " bytes");
  }
  const std::uint32_t avail = (head + size - tail_) % size;
  ++drains_;
  std::size_t added = 0;
  if (avail != 0) {
    buffer_.resize(avail);
    const std::uint32_t first = std::min(avail, size - tail_);  // up to the end of the ring
    device_.access().host_read(ring_ + tail_, buffer_.data(), first);
    if (first < avail) device_.access().host_read(ring_, buffer_.data() + first, avail - first);  // wrapped
    const std::uint32_t n = avail / CapturedRecord::kBytes;
    max_backlog_ = std::max<std::uint64_t>(max_backlog_, n);
    records_.reserve(records_.size() + n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t offset = (tail_ + i * CapturedRecord::kBytes) % size;
      try {
        records_.push_back(decode_trace_record(buffer_.data() + std::size_t{i} * CapturedRecord::kBytes, offset));
      } catch (const TraceFormatError&) {
        // Keep what came before the bad record; hand the ring back up to it, then report.
        tail_ = offset;
        device_.write32(SOHU_TRC_TAIL, tail_);
        throw;
      }
      ++added;
    }
    tail_ = head;
    device_.write32(SOHU_TRC_TAIL, tail_);
  }
  drops_ += device_.read32(SOHU_TRC_DROPS);  // read-clear: every drop is counted once
  return added;
}

void TraceCapture::stop() {
  if (!running_) return;
  device_.write32(SOHU_TRC_CTRL, 0);  // EN = 0: no new records; the ring and its pointers stay
  running_ = false;
  drain();
  // A record the device queued before EN dropped may still be on its way to host memory
  // (TRC_HEAD publishes a record once written): give it time, then drain until quiet.
  for (unsigned i = 0; i < 16; ++i) {
    device_.access().spend_ns(opt_.settle_ns);
    if (drain() == 0) break;
  }
}

std::vector<CapturedRecord> TraceCapture::take() {
  std::vector<CapturedRecord> out;
  out.swap(records_);
  return out;
}

// ---- PmuCapture ---------------------------------------------------------------------------------

std::uint64_t PmuSnapshot::value(unsigned event) const {
  for (unsigned i = 0; i < SOHU_PMU_COUNTER_COUNT; ++i) {
    if (events[i] == event && event != 0) return counters[i];
  }
  throw std::invalid_argument("PmuSnapshot: no counter counts event " + std::to_string(event));
}

PmuCapture::PmuCapture(Device& device, std::vector<unsigned> events) : device_(device) {
  if (events.size() > SOHU_PMU_COUNTER_COUNT) {
    throw std::invalid_argument("PmuCapture: " + std::to_string(events.size()) + " events (the PMU has " +
                                std::to_string(SOHU_PMU_COUNTER_COUNT) + " counters)");
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] > SOHU_PMU_EVTSEL_EVENT_MASK) {
      throw std::invalid_argument("PmuCapture: event id " + std::to_string(events[i]) + " does not fit PMU_EVTSEL");
    }
    events_[i] = static_cast<std::uint16_t>(events[i]);
  }
}

void PmuCapture::start() {
  device_.pmu_enable(false);  // PMU_CONFIG writes PMU_CTRL.EN too: program with the PMU off
  for (unsigned i = 0; i < SOHU_PMU_COUNTER_COUNT; ++i) device_.pmu_configure(i, events_[i]);
  device_.pmu_enable(true, true);
}

void PmuCapture::freeze(bool on) {
  device_.write32(SOHU_PMU_CTRL, SOHU_PMU_CTRL_EN_MASK | (on ? SOHU_PMU_CTRL_FREEZE_MASK : 0u));
}

void PmuCapture::stop() {
  device_.pmu_enable(false);
}

PmuSnapshot PmuCapture::snapshot() {
  PmuSnapshot s;
  DeviceAccess& a = device_.access();
  s.events = events_;
  s.host_before = a.host_clock_ns();
  s.device_ns = device_.device_time_ns();
  s.cycles = device_.pmu_cycles();
  for (unsigned i = 0; i < SOHU_PMU_COUNTER_COUNT; ++i) s.counters[i] = device_.pmu_counter(i);
  s.host_after = a.host_clock_ns();
  return s;
}

// ---- commands -----------------------------------------------------------------------------------

PairedCommands pair_commands(const std::vector<CapturedRecord>& records) {
  PairedCommands out;
  std::map<std::pair<std::uint16_t, std::uint16_t>, const CapturedRecord*> open;  // (queue, cid) -> start
  for (const CapturedRecord& r : records) {
    const std::pair<std::uint16_t, std::uint16_t> key{r.queue, r.command};
    if (r.type == TraceRecordType::CommandStart) {
      const auto [it, fresh] = open.emplace(key, &r);
      if (!fresh) {
        ++out.unmatched_starts;  // the earlier start's end never came
        it->second = &r;
      }
    } else if (r.type == TraceRecordType::CommandEnd) {
      const auto it = open.find(key);
      if (it == open.end()) {
        ++out.unmatched_ends;
        continue;
      }
      CommandRecord c;
      c.queue = r.queue;
      c.command = r.command;
      c.correlation = it->second->correlation;
      c.opcode = static_cast<std::uint16_t>(it->second->arg);
      c.status = r.status;
      c.device_start_ns = it->second->device_ns;
      c.device_end_ns = r.device_ns;
      out.commands.push_back(c);
      open.erase(it);
    }
  }
  out.unmatched_starts += open.size();
  return out;
}

void align_commands(std::vector<CommandRecord>& commands, const profiler::ClockFit& fit) {
  for (CommandRecord& c : commands) {
    c.host_start_ns = fit.to_local(static_cast<std::int64_t>(c.device_start_ns));
    c.host_end_ns = fit.to_local(static_cast<std::int64_t>(c.device_end_ns));
    c.aligned = true;
  }
}

std::vector<profiler::CommandStat> command_stats(const std::vector<CommandRecord>& commands, const std::string& place) {
  std::vector<profiler::CommandStat> out;
  if (commands.empty()) return out;
  std::vector<double> all;
  std::map<std::uint16_t, std::vector<double>> by_opcode;
  for (const CommandRecord& c : commands) {
    const double d = static_cast<double>(c.device_end_ns - c.device_start_ns);
    all.push_back(d);
    by_opcode[c.opcode].push_back(d);
  }
  out.push_back(profiler::command_stat(place, "start_to_complete", std::move(all)));
  for (auto& [op, v] : by_opcode)
    out.push_back(profiler::command_stat(place, opcode_name(static_cast<std::uint8_t>(op)), std::move(v)));
  return out;
}

}  // namespace sohusim::driver
