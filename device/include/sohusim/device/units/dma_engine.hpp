#pragma once
// DMA engine: moves bytes between the address spaces a command can name (host memory over
// PCIe, HBM, SRAM, a peer's HBM over a chip-to-chip link) with several channels.
//
// A copy is cut into chunks of `chunk` bytes; up to `channels` chunks are in flight at once,
// each on a channel that reads its chunk from the source and then writes it to the
// destination (store-and-forward per chunk, as a descriptor-based engine with a chunk-sized
// staging buffer does). Channels are shared by every copy in flight on the device, so two
// queues' copies contend for them. The source and destination memories time each chunk
// themselves (PCIe TLPs and credits, HBM banks, SRAM ports), so the engine adds only a
// per-copy descriptor set-up time. Bytes move only when one side holds data (functional
// mode, or host memory, which always does); otherwise the chunks are timing-only.
//
// Stats (under <prefix>.dma): copies, bytes, errors, host_bytes (to or from host memory), and per path
// `<src>_to_<dst>.bytes` (e.g. `dev0.dma.host_to_hbm.bytes`), registered when the path is first used.
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/device/units/memory_port.hpp"

namespace sohusim::device {

struct DmaParams {
  unsigned channels = 8;
  std::uint64_t chunk = 1ULL << 20;  // bytes per channel transfer
  std::uint64_t setup_ps = 100'000;  // descriptor fetch and set-up per copy (assumption)
  void validate() const;
};

struct DmaResult {
  PortStatus status = PortStatus::Ok;
  Space failed_space = Space::Host;
  std::uint64_t failed_address = 0;
  bool ok() const { return status == PortStatus::Ok; }
};

class DmaEngine {
 public:
  /// `ports[s]` serves Space s (nullptr: the space is unreachable from this device).
  DmaEngine(const DmaParams& params, std::array<MemoryPort*, kNumSpaces> ports, counters::Scope scope);
  /// Copies `bytes` from (src_space, src) to (dst_space, dst). Blocking: call from a thread.
  /// `host`, if given, serves the host space instead of ports[Host] (a VF's own port, whose
  /// DMA carries the VF's requester ID).
  DmaResult copy(Space src_space, std::uint64_t src, Space dst_space, std::uint64_t dst, std::uint64_t bytes,
                 std::uint64_t correlation, MemoryPort* host = nullptr);
  MemoryPort* port(Space s) const { return ports_[static_cast<unsigned>(s)]; }
  const DmaParams& params() const noexcept { return params_; }

 private:
  counters::Counter& path_counter(Space src, Space dst);
  DmaParams params_;
  std::array<MemoryPort*, kNumSpaces> ports_;
  counters::Scope scope_;
  sc_core::sc_semaphore channels_;
  counters::Counter& copies_;
  counters::Counter& bytes_;
  counters::Counter& errors_;
  counters::Counter& host_bytes_;
  std::map<unsigned, counters::Counter*> paths_;
};

}  // namespace sohusim::device
