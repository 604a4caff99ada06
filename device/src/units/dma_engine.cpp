#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/device/units/dma_engine.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

namespace sohusim::device {

void DmaParams::validate() const {
  if (channels < 1 || channels > 256) throw std::invalid_argument("device.dma.channels must be in 1 .. 256");
  if (chunk < 64 || chunk > (1ULL << 30)) throw std::invalid_argument("device.dma.chunk must be in 64 B .. 1 GiB");
}

DmaEngine::DmaEngine(const DmaParams& params, std::array<MemoryPort*, kNumSpaces> ports, counters::Scope scope)
    : params_(params),
      ports_(ports),
      scope_(scope),
      channels_(static_cast<int>(params.channels)),
      copies_(scope.counter("copies", "count", "DMA copies executed")),
      bytes_(scope.counter("bytes", "B", "bytes copied by DMA")),
      errors_(scope.counter("errors", "count", "DMA copies that failed (address or transport error)")),
      host_bytes_(scope.counter("host_bytes", "B", "bytes copied to or from host memory (over PCIe)")) {
  params_.validate();
}

counters::Counter& DmaEngine::path_counter(Space src, Space dst) {
  const unsigned k = static_cast<unsigned>(src) * kNumSpaces + static_cast<unsigned>(dst);
  auto it = paths_.find(k);
  if (it != paths_.end()) return *it->second;
  counters::Counter& c = scope_.counter(std::string(to_string(src)) + "_to_" + to_string(dst) + ".bytes", "B",
                                        std::string("bytes copied from ") + to_string(src) + " to " + to_string(dst));
  paths_[k] = &c;
  return c;
}

DmaResult DmaEngine::copy(Space src_space, std::uint64_t src, Space dst_space, std::uint64_t dst, std::uint64_t bytes,
                          std::uint64_t correlation, MemoryPort* host) {
  DmaResult result;
  MemoryPort* in = src_space == Space::Host && host != nullptr ? host : port(src_space);
  MemoryPort* out = dst_space == Space::Host && host != nullptr ? host : port(dst_space);
  copies_.inc();
  if (in == nullptr || out == nullptr) {
    result.status = PortStatus::AddressError;
    result.failed_space = in == nullptr ? src_space : dst_space;
    result.failed_address = in == nullptr ? src : dst;
    errors_.inc();
    return result;
  }
  if (params_.setup_ps > 0) sc_core::wait(sc_core::sc_time::from_value(params_.setup_ps));
  if (bytes == 0) return result;
  const bool move_data = in->holds_data() || out->holds_data();
  const std::uint64_t chunks = (bytes + params_.chunk - 1) / params_.chunk;
  const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(chunks, params_.channels));
  struct Shared {
    std::uint64_t next = 0;
    unsigned running = 0;
    sc_core::sc_event done;
  };
  auto shared = std::make_shared<Shared>();
  shared->running = workers;
  for (unsigned w = 0; w < workers; ++w) {
    sc_core::sc_spawn([=, &result] {
      std::vector<std::uint8_t> buffer(move_data ? static_cast<std::size_t>(std::min(params_.chunk, bytes)) : 0);
      while (result.ok() && shared->next < chunks) {
        const std::uint64_t c = shared->next++;
        const std::uint64_t off = c * params_.chunk;
        const std::uint64_t n = std::min(params_.chunk, bytes - off);
        channels_.wait();
        std::uint8_t* data = move_data ? buffer.data() : nullptr;
        PortStatus st = in->access(false, src + off, data, n, correlation);
        if (st != PortStatus::Ok) {
          if (result.ok()) result = DmaResult{st, src_space, src + off};
        } else {
          st = out->access(true, dst + off, data, n, correlation);
          if (st != PortStatus::Ok && result.ok()) result = DmaResult{st, dst_space, dst + off};
        }
        channels_.post();
      }
      if (--shared->running == 0) shared->done.notify(sc_core::SC_ZERO_TIME);
    });
  }
  sc_core::wait(shared->done);
  if (result.ok()) {
    bytes_.inc(bytes);
    path_counter(src_space, dst_space).inc(bytes);
    if (src_space == Space::Host || dst_space == Space::Host) host_bytes_.inc(bytes);
  } else {
    errors_.inc();
  }
  return result;
}

}  // namespace sohusim::device
