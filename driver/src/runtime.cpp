#include "sohusim/driver/runtime.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <utility>

#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {

namespace {

constexpr std::uint16_t kSohuVendor = SOHU_ID_RESET & SOHU_ID_VENDOR_MASK;
constexpr std::uint16_t kSohuDevice = (SOHU_ID_RESET & SOHU_ID_DEVICE_MASK) >> SOHU_ID_DEVICE_SHIFT;
/// An event's SEM_SIGNAL completes with its stream's commands before it; past this many later
/// commands its command id may have been reused, so the runtime stops asking for its status.
constexpr std::uint64_t kCidReuseDistance = 0x8000;

std::string hex(std::uint64_t v) {
  std::array<char, 24> b{};
  std::snprintf(b.data(), b.size(), "0x%llX", static_cast<unsigned long long>(v));
  return b.data();
}

/// The semaphore a stream's events signal: one per queue id, from the top of the bank down,
/// so that programs keep the low ids. Per stream (not per event) because a stream's signals
/// run in order: value >= n then means exactly "the stream's n-th event has completed".
std::uint8_t stream_semaphore(std::uint16_t qid) {
  return static_cast<std::uint8_t>(256 - qid);
}

counters::Counter* make_counter(counters::Registry* r, const std::string& name, const char* unit,
                                const char* description) {
  if (r == nullptr) return nullptr;
  if (counters::Stat* s = r->find(name)) {
    if (auto* c = dynamic_cast<counters::Counter*>(s)) return c;
    throw std::invalid_argument("Runtime: statistic " + name + " exists and is not a counter");
  }
  return &r->counter(name, unit, description);
}

void add(counters::Counter* c, std::uint64_t n) {
  if (c != nullptr) c->inc(n);
}

}  // namespace

// ---- device memory allocator --------------------------------------------------------------

/// First fit over [0, capacity) with free blocks kept by address, so that freeing merges a
/// block with its neighbours in O(log n) and the first fit is the lowest address that fits.
class Runtime::Allocator {
 public:
  explicit Allocator(std::uint64_t capacity) : capacity_(capacity) {
    if (capacity > 0) free_[0] = capacity;
  }

  std::optional<std::uint64_t> allocate(std::uint64_t bytes, std::uint64_t align) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const std::uint64_t start = it->first, end = it->first + it->second;
      const std::uint64_t a = (start + align - 1) & ~(align - 1);
      if (a < start || a > end || end - a < bytes) continue;
      free_.erase(it);
      if (a > start) free_[start] = a - start;  // the alignment gap stays free
      if (a + bytes < end) free_[a + bytes] = end - (a + bytes);
      used_[a] = bytes;
      in_use_ += bytes;
      peak_ = std::max(peak_, in_use_);
      return a;
    }
    return std::nullopt;
  }

  bool release(std::uint64_t addr) {
    const auto u = used_.find(addr);
    if (u == used_.end()) return false;
    std::uint64_t start = addr, size = u->second;
    used_.erase(u);
    in_use_ -= size;
    auto next = free_.lower_bound(start);
    if (next != free_.end() && start + size == next->first) {
      size += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        prev->second += size;
        return true;
      }
    }
    free_[start] = size;
    return true;
  }

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t used() const { return in_use_; }
  std::uint64_t peak() const { return peak_; }
  std::uint64_t free_bytes() const { return capacity_ - in_use_; }
  std::uint64_t largest_free() const {
    std::uint64_t m = 0;
    for (const auto& [a, s] : free_) m = std::max(m, s);
    return m;
  }

 private:
  std::uint64_t capacity_;
  std::map<std::uint64_t, std::uint64_t> free_;  // address -> bytes
  std::map<std::uint64_t, std::uint64_t> used_;  // address -> bytes requested
  std::uint64_t in_use_ = 0, peak_ = 0;
};

// ---- API call scope -------------------------------------------------------------------------

/// One public call: a new correlation id and the API-call cost on entry; the slice and the
/// host-busy time on exit, also when the call throws.
class Runtime::ApiScope {
 public:
  ApiScope(Runtime& rt, const char* name) : rt_(rt), name_(name), start_(rt.begin_call()), id_(rt.correlation_) {}
  ~ApiScope() {
    try {
      rt_.end_call(name_, start_, id_, detail);
    } catch (...) {  // a trace-writer failure must not replace the call's own outcome
    }
  }
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;
  std::uint64_t id() const { return id_; }
  std::string detail;  // shown as the slice's "program" argument (launch)

 private:
  Runtime& rt_;
  const char* name_;
  std::uint64_t start_;
  std::uint64_t id_;
};

std::uint64_t Runtime::begin_call() {
  const std::uint64_t start = access_.now_ns();
  ++correlation_;
  // Flows finished outside a call (a Device driven directly) are not this call's to end.
  if (tracing()) {
    for (auto& d : devices_) d->take_finished_flows();
  }
  add(api_calls_, 1);
  access_.spend_ns(opt_.costs.api_call_ns);
  return start;
}

bool Runtime::tracing() const {
  return opt_.trace != nullptr && opt_.trace->enabled() && opt_.api_track != 0;
}

void Runtime::end_call(const char* name, std::uint64_t start_ns, std::uint64_t correlation, const std::string& detail) {
  const std::uint64_t end = access_.now_ns();
  add(host_busy_ns_, end - start_ns);
  if (!tracing()) return;
  // A call that put commands on a queue starts its correlation id's flow (docs/trace.md):
  // driver submit -> device fetch, command, engines, completion, MSI-X -> reap.
  const counters::Flow out[] = {{correlation}};
  const counters::Arg args[] = {{"correlation", correlation}, {"program", detail}};
  counters::TraceEvent e;
  e.type = counters::EventType::Complete;
  e.track = opt_.api_track;
  e.ts = start_ns;
  e.duration = end - start_ns;
  e.name = name;
  e.extras.args = counters::ConstSpan<counters::Arg>(args, detail.empty() ? 1 : 2);
  if (submitted_by_ == correlation) e.extras.flows = counters::ConstSpan<counters::Flow>(out, 1);
  e.extras.correlation_id = correlation;
  opt_.trace->record(e);
  // The flows of the commands this call reaped to the last one end where it returns.
  std::vector<counters::Flow> done;
  for (auto& d : devices_) {
    for (const std::uint64_t c : d->take_finished_flows())
      done.push_back(counters::Flow{c, counters::FlowKind::Terminate});
  }
  if (!done.empty()) {
    counters::TraceEvent r;
    r.type = counters::EventType::Instant;
    r.track = opt_.api_track;
    r.ts = end;
    r.name = "return";
    r.extras.flows = counters::ConstSpan<counters::Flow>(done.data(), done.size());
    opt_.trace->record(r);
  }
}

void Runtime::driver_slice(const char* name, std::uint64_t start_ns, std::uint64_t correlation, std::uint64_t commands,
                           bool flow) {
  if (opt_.trace != nullptr && opt_.trace->enabled() && opt_.driver_track != 0) {
    if (flow && correlation != 0) {
      opt_.trace->complete(opt_.driver_track, start_ns, access_.now_ns() - start_ns, name,
                           {counters::Arg{"commands", commands}}, {counters::Flow{correlation}}, correlation);
    } else {
      opt_.trace->complete(opt_.driver_track, start_ns, access_.now_ns() - start_ns, name,
                           {counters::Arg{"commands", commands}}, {}, correlation);
    }
  }
}

// ---- construction ---------------------------------------------------------------------------

Runtime::Runtime(DeviceAccess& access, RuntimeOptions options)
    : access_(access), opt_(std::move(options)), correlation_(opt_.correlation_base) {
  const std::string p = opt_.prefix.empty() ? "" : opt_.prefix + ".";
  api_calls_ = make_counter(opt_.registry, p + "api_calls", "count", "runtime API calls");
  commands_submitted_ =
      make_counter(opt_.registry, p + "commands_submitted", "count", "commands the runtime placed on device queues");
  bytes_h2d_ = make_counter(opt_.registry, p + "bytes_h2d", "bytes", "bytes copied host to device (memcpy_h2d_async)");
  bytes_d2h_ = make_counter(opt_.registry, p + "bytes_d2h", "bytes", "bytes copied device to host (memcpy_d2h_async)");
  host_busy_ns_ = make_counter(opt_.registry, p + "host_busy_ns", "ns",
                               "host time inside runtime API calls, blocking waits included");
  for (const PciFunction& f : access_.functions()) {
    // VFs have no register pages in this device yet; only PFs are driven.
    if (f.virtual_function || f.vendor_id != kSohuVendor || f.device_id != kSohuDevice) continue;
    auto d = std::make_unique<Device>(access_, f.rid, opt_.costs);
    d->probe();
    d->enable();
    if (tracing() && opt_.driver_track != 0) d->set_trace(opt_.trace, opt_.driver_track, opt_.trace_summary);
    allocators_.push_back(std::make_unique<Allocator>(d->info().hbm_bytes));
    semaphores_.emplace_back();
    devices_.push_back(std::move(d));
  }
}

Runtime::~Runtime() = default;

// ---- checks ---------------------------------------------------------------------------------

void Runtime::check_device(unsigned dev, const char* call) const {
  if (dev >= devices_.size()) {
    throw std::invalid_argument(std::string(call) + ": device " + std::to_string(dev) + " does not exist (" +
                                std::to_string(devices_.size()) + " devices)");
  }
}

Runtime::StreamState& Runtime::check_stream(const Stream& s, const char* call) {
  check_device(s.device, call);
  const auto it = streams_.find({s.device, s.qid});
  if (it == streams_.end()) {
    throw std::invalid_argument(std::string(call) + ": stream (device " + std::to_string(s.device) + ", queue " +
                                std::to_string(s.qid) + ") was not created by create_stream");
  }
  return it->second;
}

void Runtime::check_hbm_range(unsigned dev, std::uint64_t addr, std::uint64_t bytes, const char* call) const {
  const std::uint64_t hbm = devices_[dev]->info().hbm_bytes;
  if (addr > hbm || bytes > hbm - addr) {
    throw std::invalid_argument(std::string(call) + ": device range " + hex(addr) + " + " + std::to_string(bytes) +
                                " bytes is outside device " + std::to_string(dev) + "'s HBM (" + std::to_string(hbm) +
                                " bytes)");
  }
}

namespace {
void check_host_range(const HostBuffer& b, std::uint64_t offset, std::uint64_t bytes, const char* call) {
  if (offset > b.dma.size || bytes > b.dma.size - offset) {
    throw std::invalid_argument(std::string(call) + ": offset " + std::to_string(offset) + " + " +
                                std::to_string(bytes) + " bytes is outside the host buffer of " +
                                std::to_string(b.dma.size) + " bytes (IOVA " + hex(b.dma.iova) + ")");
  }
}
}  // namespace

// ---- devices --------------------------------------------------------------------------------

const DeviceInfo& Runtime::device_info(unsigned dev) const {
  check_device(dev, "device_info");
  return devices_[dev]->info();
}

Device& Runtime::device(unsigned dev) {
  check_device(dev, "device");
  return *devices_[dev];
}

// ---- memory ---------------------------------------------------------------------------------

std::uint64_t Runtime::malloc(unsigned dev, std::uint64_t bytes, std::uint64_t align) {
  ApiScope call(*this, "malloc");
  check_device(dev, "malloc");
  access_.spend_ns(opt_.costs.malloc_ns);
  const std::string what = "malloc(device " + std::to_string(dev) + ", " + std::to_string(bytes) + " bytes, align " +
                           std::to_string(align) + ")";
  if (bytes == 0) throw std::invalid_argument(what + ": zero bytes");
  if (align == 0 || (align & (align - 1)) != 0) throw std::invalid_argument(what + ": align is not a power of two");
  Allocator& a = *allocators_[dev];
  const std::optional<std::uint64_t> addr = a.allocate(bytes, align);
  if (!addr) {
    throw std::invalid_argument(what + ": does not fit: " + std::to_string(a.free_bytes()) +
                                " bytes free, largest free block " + std::to_string(a.largest_free()) + " bytes (HBM " +
                                std::to_string(a.capacity()) + " bytes)");
  }
  return *addr;
}

void Runtime::free(unsigned dev, std::uint64_t addr) {
  ApiScope call(*this, "free");
  check_device(dev, "free");
  access_.spend_ns(opt_.costs.malloc_ns);
  if (!allocators_[dev]->release(addr)) {
    throw std::invalid_argument("free(device " + std::to_string(dev) + ", " + hex(addr) +
                                "): not an address malloc returned, or already freed");
  }
}

std::uint64_t Runtime::hbm_used(unsigned dev) const {
  check_device(dev, "hbm_used");
  return allocators_[dev]->used();
}

std::uint64_t Runtime::hbm_peak(unsigned dev) const {
  check_device(dev, "hbm_peak");
  return allocators_[dev]->peak();
}

HostBuffer Runtime::alloc_host(unsigned dev, std::uint64_t bytes) {
  ApiScope call(*this, "alloc_host");
  check_device(dev, "alloc_host");
  if (bytes == 0) throw std::invalid_argument("alloc_host(device " + std::to_string(dev) + "): zero bytes");
  access_.spend_ns(opt_.costs.malloc_ns);
  HostBuffer b;
  b.device = dev;
  b.dma = access_.alloc_dma(devices_[dev]->info().rid, bytes, 4096);
  return b;
}

void Runtime::write_host(const HostBuffer& buf, std::uint64_t offset, const void* data, std::uint64_t bytes) {
  ApiScope call(*this, "write_host");
  check_host_range(buf, offset, bytes, "write_host");
  if (bytes > 0) access_.host_write(buf.dma.iova + offset, data, bytes);
}

void Runtime::read_host(const HostBuffer& buf, std::uint64_t offset, void* data, std::uint64_t bytes) {
  ApiScope call(*this, "read_host");
  check_host_range(buf, offset, bytes, "read_host");
  if (bytes > 0) access_.host_read(buf.dma.iova + offset, data, bytes);
}

// ---- streams, copies, launches ----------------------------------------------------------------

Stream Runtime::create_stream(unsigned dev) {
  ApiScope call(*this, "create_stream");
  check_device(dev, "create_stream");
  Device& d = *devices_[dev];
  const unsigned entries = std::max(2u, std::min(opt_.queue_entries, d.info().max_queue_entries));
  const std::uint16_t qid = d.create_queue(entries, opt_.completion);
  streams_[{dev, qid}] = StreamState{};
  return Stream{dev, qid};
}

std::vector<Ticket> Runtime::submit(const Stream& s, const std::vector<Command>& cmds, std::uint64_t correlation) {
  const std::uint64_t start = access_.now_ns();
  std::vector<Ticket> t = devices_[s.device]->submit(s.qid, cmds, correlation);
  streams_[{s.device, s.qid}].submitted += cmds.size();
  add(commands_submitted_, cmds.size());
  submitted_by_ = correlation;
  driver_slice("submit", start, correlation, cmds.size(), true);
  return t;
}

void Runtime::memcpy_h2d_async(const Stream& s, std::uint64_t dst, const HostBuffer& src, std::uint64_t src_offset,
                               std::uint64_t bytes) {
  ApiScope call(*this, "memcpy_h2d_async");
  check_stream(s, "memcpy_h2d_async");
  if (src.device != s.device) {
    throw std::invalid_argument("memcpy_h2d_async: the host buffer is mapped for device " + std::to_string(src.device) +
                                ", the stream is on device " + std::to_string(s.device));
  }
  check_host_range(src, src_offset, bytes, "memcpy_h2d_async");
  check_hbm_range(s.device, dst, bytes, "memcpy_h2d_async");
  access_.spend_ns(opt_.costs.memcpy_setup_ns);
  if (bytes == 0) return;
  submit(s, {dma_copy(Space::Host, src.dma.iova + src_offset, Space::Hbm, dst, bytes)}, call.id());
  add(bytes_h2d_, bytes);
}

void Runtime::memcpy_d2h_async(const Stream& s, const HostBuffer& dst, std::uint64_t dst_offset, std::uint64_t src,
                               std::uint64_t bytes) {
  ApiScope call(*this, "memcpy_d2h_async");
  check_stream(s, "memcpy_d2h_async");
  if (dst.device != s.device) {
    throw std::invalid_argument("memcpy_d2h_async: the host buffer is mapped for device " + std::to_string(dst.device) +
                                ", the stream is on device " + std::to_string(s.device));
  }
  check_host_range(dst, dst_offset, bytes, "memcpy_d2h_async");
  check_hbm_range(s.device, src, bytes, "memcpy_d2h_async");
  access_.spend_ns(opt_.costs.memcpy_setup_ns);
  if (bytes == 0) return;
  submit(s, {dma_copy(Space::Hbm, src, Space::Host, dst.dma.iova + dst_offset, bytes)}, call.id());
  add(bytes_d2h_, bytes);
}

void Runtime::memcpy_d2d_async(const Stream& s, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
  ApiScope call(*this, "memcpy_d2d_async");
  check_stream(s, "memcpy_d2d_async");
  check_hbm_range(s.device, src, bytes, "memcpy_d2d_async source");
  check_hbm_range(s.device, dst, bytes, "memcpy_d2d_async destination");
  access_.spend_ns(opt_.costs.memcpy_setup_ns);
  if (bytes == 0) return;
  submit(s, {dma_copy(Space::Hbm, src, Space::Hbm, dst, bytes)}, call.id());
}

void Runtime::launch(const Stream& s, const Program& program) {
  ApiScope call(*this, "launch");
  call.detail = program.name;
  check_stream(s, "launch");
  access_.spend_ns(opt_.costs.launch_ns);
  // One correlation id for the whole program; no FENCE: the device runs a queue in order.
  // One interrupt per launch, as drivers batch them: every command but the last posts its
  // completion without one (errors are still reaped, with the last command's interrupt).
  if (program.commands.empty()) return;
  std::vector<Command> cmds = program.commands;
  for (std::size_t i = 0; i + 1 < cmds.size(); ++i) cmds[i].no_irq();
  submit(s, cmds, call.id());
}

// ---- events and synchronization ---------------------------------------------------------------

Event Runtime::record_event(const Stream& s) {
  ApiScope call(*this, "record_event");
  check_stream(s, "record_event");
  Device& d = *devices_[s.device];
  Event e;
  e.device = s.device;
  e.qid = s.qid;
  e.resets = d.reset_count();
  d.poll(s.qid);
  if (d.outstanding(s.qid) == 0) return e;  // idle: everything before it has completed
  DeviceSemaphores& sem = semaphores_[s.device];
  if (sem.resets != d.reset_count()) {  // a reset set the device's semaphores back to 0
    std::fill(sem.value.begin(), sem.value.end(), 0u);
    sem.resets = d.reset_count();
  }
  e.sem = stream_semaphore(s.qid);
  e.sem_value = ++sem.value[e.sem];
  const std::vector<Ticket> t = submit(s, {sem_signal(e.sem, kLocalDevice, 1)}, call.id());
  e.cid = t.front().cid;
  e.seq = streams_[{s.device, s.qid}].submitted;
  e.empty = false;
  return e;
}

void Runtime::stream_wait_event(const Stream& s, const Event& e) {
  ApiScope call(*this, "stream_wait_event");
  check_stream(s, "stream_wait_event");
  if (e.empty || (e.device == s.device && e.qid == s.qid)) return;  // done, or ordered by the queue
  check_device(e.device, "stream_wait_event");
  if (e.device != s.device || devices_[e.device]->reset_count() != e.resets) {
    // Another device's semaphore cannot be waited on from here (no cross-device routing of
    // SEM_WAIT); the host waits instead. After a reset the semaphore restarted from 0, but
    // the reset also completed the event: waiting on the host returns at once.
    wait_event(e);
    return;
  }
  submit(s, {sem_wait(e.sem, e.sem_value)}, call.id());
}

void Runtime::wait_event(const Event& e) {
  if (e.empty) return;
  check_device(e.device, "synchronize(event)");
  Device& d = *devices_[e.device];
  const auto it = streams_.find({e.device, e.qid});
  if (it == streams_.end()) {
    throw std::invalid_argument("synchronize(event): its stream (device " + std::to_string(e.device) + ", queue " +
                                std::to_string(e.qid) + ") does not exist");
  }
  if (d.reset_count() != e.resets) return;  // the reset aborted or finished everything before it
  const std::uint64_t start = access_.now_ns();
  d.poll(e.qid);
  const std::uint64_t later = it->second.submitted - e.seq;  // commands submitted after the signal
  // The queue completes in order: the last outstanding() commands are the ones in flight.
  if (later >= d.outstanding(e.qid) && later >= kCidReuseDistance) return;
  d.wait(Ticket{e.qid, e.cid});  // at once if already reaped; throws the signal's error
  driver_slice("wait", start, correlation_, 1);
}

void Runtime::synchronize(const Event& e) {
  ApiScope call(*this, "synchronize_event");
  wait_event(e);
}

void Runtime::synchronize(const Stream& s) {
  ApiScope call(*this, "synchronize_stream");
  check_stream(s, "synchronize(stream)");
  const std::uint64_t start = access_.now_ns();
  Device& d = *devices_[s.device];
  const unsigned n = d.outstanding(s.qid);
  d.drain(s.qid);
  driver_slice("wait", start, call.id(), n);
}

void Runtime::synchronize() {
  ApiScope call(*this, "synchronize");
  std::exception_ptr first;
  const std::uint64_t start = access_.now_ns();
  unsigned n = 0;
  for (const auto& [key, st] : streams_) {
    try {
      Device& d = *devices_[key.first];
      n += d.outstanding(key.second);
      d.drain(key.second);
    } catch (const DriverError&) {
      if (!first) first = std::current_exception();  // drain the others before reporting
    }
  }
  driver_slice("wait", start, call.id(), n);
  if (first) std::rethrow_exception(first);
}

}  // namespace sohusim::driver
