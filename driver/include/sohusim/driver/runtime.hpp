#pragma once
// Runtime: the API a model runner calls (the CUDA-runtime-shaped layer over the driver).
// One Runtime per host process; it owns one Device per Sohu function the host sees.
//
//   devices      device_count(), device_info()
//   memory       malloc/free of device memory (HBM, first-fit with coalescing), pinned host
//                buffers (DMA memory mapped for one device), host-side reads/writes of them
//   streams      a stream is an I/O queue pair of one device; work on a stream runs in order
//   copies       memcpy_h2d_async / memcpy_d2h_async / memcpy_d2d_async: DMA_COPY commands
//   launch       a Program (command list, e.g. from workloads/' compiler) onto a stream
//   events       record on a stream; synchronize on it, or make another stream of the same
//                device wait for it (a device semaphore: SEM_SIGNAL / SEM_WAIT). Each stream
//                owns semaphore 256 - qid (193..255 with 63 queues): programs should keep to
//                semaphores below 193. A stream of another device waits on the host instead
//                (stream_wait_event synchronizes the event first).
//   synchronize  a stream, an event, or everything
//
// Streams keep their commands in order (the device runs a queue in order), so an event is
// "the first seq commands of its stream": it completes when the stream has that many
// completions. Submitting to a stream's queue through device().submit() directly breaks this
// bookkeeping; use the runtime or a queue of your own.
//
// Every call costs host time (HostCosts) and gets a correlation id: a new one per call,
// written by the driver into every command the call submits (SQE CORRELATION), and recorded
// with the call's slice on the host's API track when tracing is on, so the profiler can
// follow a call through PCIe and the device and back. Getters (device_count, device_info,
// device, hbm_used, hbm_peak, last_correlation, access) are not calls in this sense: they
// cost nothing and take no id. Errors: CommandError (with the
// command that failed), AccessError/ProbeError/TimeoutError from the layers below, and
// std::invalid_argument for bad arguments (unknown device or stream, memory that does not fit,
// a copy outside its buffer), each naming the call and the numbers.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/driver/device.hpp"

namespace sohusim::driver {

struct RuntimeOptions {
  HostCosts costs;
  CompletionMode completion = CompletionMode::Interrupt;
  unsigned queue_entries = 4096;
  // Optional counters <prefix>.api_calls, .commands_submitted, .bytes_h2d, .bytes_d2h and
  // .host_busy_ns (host time inside runtime calls, blocking included). Counters that already
  // exist under these names are reused (two runtimes may share a prefix).
  counters::Registry* registry = nullptr;
  std::string prefix = "host0.runtime";
  counters::TraceRecorder* trace = nullptr;  // optional: API slices (when enabled)
  counters::TrackId api_track = 0;           // the host's API thread track; 0 = no API slices
  counters::TrackId driver_track = 0;        // "submit" / "wait" / "reap" slices of the driver; 0 = none
  bool trace_summary = false;                // trace.detail=summary: fewer reap slices (Device::set_trace)
  std::uint64_t correlation_base = 0;        // ids are base + 1, base + 2, ... (one range per host)
};

struct Stream {
  unsigned device = 0;
  std::uint16_t qid = 0;
};

struct HostBuffer {
  unsigned device = 0;
  DmaBuffer dma;
};

struct Event {
  unsigned device = 0;
  std::uint16_t qid = 0;
  std::uint16_t cid = 0;        // the SEM_SIGNAL the event appended to the stream
  bool empty = true;            // recorded on an idle stream: already complete
  std::uint8_t sem = 0;         // device semaphore signalled when it completes
  std::uint32_t sem_value = 0;  // ... reaching this value
  std::uint64_t seq = 0;        // commands submitted to the stream up to and including the signal
  std::uint64_t resets = 0;     // Device::reset_count() when recorded (a reset completes it)
};

class Runtime {
 public:
  /// Probes and enables every Sohu function `access` enumerates (physical functions only).
  Runtime(DeviceAccess& access, RuntimeOptions options = {});
  ~Runtime();

  unsigned device_count() const { return static_cast<unsigned>(devices_.size()); }
  const DeviceInfo& device_info(unsigned dev) const;
  Device& device(unsigned dev);

  /// Device memory: first fit over [0, HBM_SIZE), `align` a power of two. Out of memory is
  /// std::invalid_argument naming the request, the free bytes and the largest free block.
  std::uint64_t malloc(unsigned dev, std::uint64_t bytes, std::uint64_t align = 256);
  /// Frees an address malloc returned (neighbouring free blocks merge).
  void free(unsigned dev, std::uint64_t addr);
  std::uint64_t hbm_used(unsigned dev) const;  // bytes allocated now
  std::uint64_t hbm_peak(unsigned dev) const;  // high-water mark

  /// Pinned host memory mapped for device `dev` only (its IOMMU domain).
  HostBuffer alloc_host(unsigned dev, std::uint64_t bytes);
  void write_host(const HostBuffer& buf, std::uint64_t offset, const void* data, std::uint64_t bytes);
  void read_host(const HostBuffer& buf, std::uint64_t offset, void* data, std::uint64_t bytes);

  /// An I/O queue pair in the options' completion mode, with min(queue_entries, the device's
  /// maximum) entries.
  Stream create_stream(unsigned dev);
  /// Copies are one DMA_COPY each (LENGTH is 64 bits; the register map sets no maximum).
  /// The host buffer must belong to the stream's device; ranges are checked on the host.
  void memcpy_h2d_async(const Stream& s, std::uint64_t dst, const HostBuffer& src, std::uint64_t src_offset,
                        std::uint64_t bytes);
  void memcpy_d2h_async(const Stream& s, const HostBuffer& dst, std::uint64_t dst_offset, std::uint64_t src,
                        std::uint64_t bytes);
  void memcpy_d2d_async(const Stream& s, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes);
  void launch(const Stream& s, const Program& program);

  /// Appends SEM_SIGNAL(stream's semaphore, +1) unless the stream is idle (empty event).
  Event record_event(const Stream& s);
  /// Same device, other stream: SEM_WAIT on the event's semaphore value, the host does not
  /// block. Same stream or an empty event: nothing to do. Another device: the host blocks in
  /// synchronize(e) first (no cross-device semaphore routing yet).
  void stream_wait_event(const Stream& s, const Event& e);
  /// Blocks until the event completed; throws the CommandError of its SEM_SIGNAL, if any.
  void synchronize(const Event& e);
  /// Drains the stream; throws the first error of its commands (CommandError).
  void synchronize(const Stream& s);
  /// Drains every stream of every device; throws the first error after draining them all.
  void synchronize();

  /// The correlation id the most recent call used.
  std::uint64_t last_correlation() const { return correlation_; }
  DeviceAccess& access() { return access_; }

 private:
  class Allocator;
  class ApiScope;
  struct StreamState {
    std::uint64_t submitted = 0;  // commands the runtime put on the stream so far
  };
  struct DeviceSemaphores {
    std::uint64_t resets = 0;  // Device::reset_count() the values belong to
    std::vector<std::uint32_t> value = std::vector<std::uint32_t>(256, 0);  // signals recorded per semaphore
  };
  std::uint64_t begin_call();
  void end_call(const char* name, std::uint64_t start_ns, std::uint64_t correlation, const std::string& detail);
  void check_device(unsigned dev, const char* call) const;
  StreamState& check_stream(const Stream& s, const char* call);
  void check_hbm_range(unsigned dev, std::uint64_t addr, std::uint64_t bytes, const char* call) const;
  std::vector<Ticket> submit(const Stream& s, const std::vector<Command>& cmds, std::uint64_t correlation);
  void wait_event(const Event& e);
  void driver_slice(const char* name, std::uint64_t start_ns, std::uint64_t correlation, std::uint64_t commands,
                    bool flow = false);
  bool tracing() const;  // API slices are recorded

  DeviceAccess& access_;
  RuntimeOptions opt_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<Allocator>> allocators_;
  std::vector<DeviceSemaphores> semaphores_;                           // per device
  std::map<std::pair<unsigned, std::uint16_t>, StreamState> streams_;  // (device, qid)
  std::uint64_t correlation_ = 0;
  std::uint64_t submitted_by_ = 0;  // the last call that put commands on a queue (its flow starts)
  counters::Counter* api_calls_ = nullptr;
  counters::Counter* commands_submitted_ = nullptr;
  counters::Counter* bytes_h2d_ = nullptr;
  counters::Counter* bytes_d2h_ = nullptr;
  counters::Counter* host_busy_ns_ = nullptr;
};

}  // namespace sohusim::driver
