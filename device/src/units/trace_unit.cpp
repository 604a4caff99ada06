#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/device/units/trace_unit.hpp"

#include <cstring>
#include <vector>

namespace sohusim::device {

namespace {
template <typename T>
void put(std::uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);  // the simulator runs on little-endian hosts (x86-64, AArch64)
}
template <typename T>
T get(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

void TraceRecord::encode(std::uint8_t* o) const {
  put(o + 0, static_cast<std::uint16_t>(type));
  put(o + 2, unit);
  put(o + 4, queue);
  put(o + 6, command);
  put(o + 8, timestamp_ns);
  put(o + 16, correlation);
  put(o + 24, status);
  put(o + 28, arg);
}

TraceRecord TraceRecord::decode(const std::uint8_t* i) {
  TraceRecord r;
  r.type = static_cast<TraceRecordType>(get<std::uint16_t>(i));
  r.unit = get<std::uint16_t>(i + 2);
  r.queue = get<std::uint16_t>(i + 4);
  r.command = get<std::uint16_t>(i + 6);
  r.timestamp_ns = get<std::uint64_t>(i + 8);
  r.correlation = get<std::uint64_t>(i + 16);
  r.status = get<std::uint32_t>(i + 24);
  r.arg = get<std::uint32_t>(i + 28);
  return r;
}

TraceUnit::TraceUnit(MemoryPort& host, const TimestampCounter& clock, const counters::Scope& scope)
    : host_(host),
      clock_(clock),
      records_(scope.counter("records", "count", "trace records written to the host ring")),
      drops_(scope.counter("drops", "count", "trace records dropped because the ring was full")),
      bytes_(scope.counter("bytes", "B", "bytes of trace records DMA-written")) {
  sc_core::sc_spawn([this] { writer(); }, sc_core::sc_gen_unique_name("trace_unit_writer"));
}

std::string TraceUnit::configure(std::uint64_t base, std::uint64_t size) {
  if (base % 64 != 0) return "trace ring base must be 64-byte aligned";
  if (size < 4096 || (size & (size - 1)) != 0 || size > (1ULL << 31)) {
    return "trace ring size " + std::to_string(size) + " must be a power of two in 4 KiB .. 2 GiB";
  }
  base_ = base;
  size_ = size;
  head_ = tail_ = 0;
  ++generation_;
  queue_.clear();
  return {};
}

void TraceUnit::record(TraceRecord r, std::uint32_t category) {
  if (!enabled_ || (mask_ & category) == 0) return;
  const std::uint64_t used = (head_ + size_ - tail_) % size_;
  if (used + TraceRecord::kBytes >= size_) {  // one record's room stays empty: full != empty
    ++drops_since_read_;
    drops_.inc();
    return;
  }
  r.timestamp_ns = clock_.device_ns(sc_core::sc_time_stamp().value());
  queue_.emplace_back(head_, r);
  head_ = (head_ + TraceRecord::kBytes) % size_;
  kick_.notify(sc_core::SC_ZERO_TIME);
}

void TraceUnit::writer() {
  std::vector<std::uint8_t>& buf = buffer_;  // a member: this thread never unwinds
  for (;;) {
    while (queue_.empty()) sc_core::wait(kick_);
    // Records that are contiguous in the ring go out in one DMA write.
    const std::uint64_t gen = generation_;
    const std::uint64_t start = queue_.front().first;
    std::size_t n = 0;
    while (n < queue_.size() && queue_[n].first == start + n * TraceRecord::kBytes && n < 128) ++n;
    buf.assign(n * TraceRecord::kBytes, 0);
    for (std::size_t i = 0; i < n; ++i) queue_[i].second.encode(buf.data() + i * TraceRecord::kBytes);
    host_.access(true, base_ + start, buf.data(), buf.size(), 0);
    if (gen != generation_) continue;  // reconfigured while writing: the queue was reset
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    records_.inc(n);
    bytes_.inc(buf.size());
  }
}

void TraceUnit::reset() {
  enabled_ = false;
  mask_ = 0;
  base_ = size_ = head_ = tail_ = 0;
  ++generation_;
  queue_.clear();
  drops_since_read_ = 0;
}

}  // namespace sohusim::device
