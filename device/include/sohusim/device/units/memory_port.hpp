#pragma once
// MemoryPort: how a unit of the device (command processor, DMA channels, engines' operand
// loaders, trace unit) reaches one of the memories it can address — host memory over PCIe,
// its own HBM, its SRAM, a peer's HBM over a chip-to-chip link — without knowing which
// socket, link or bridge lies behind. access() is blocking (call it from a SystemC thread);
// it returns when the transfer has completed in simulated time.
//
// `data` may be nullptr for a timing-only transfer (no bytes move; used in timing data mode
// for device-internal streams, whose memories then hold no data). `correlation` is put on
// the payload as a sim::CorrelationExtension so that every hop can stamp its trace events
// with the command it serves.
#include <cstdint>
#include <string>

namespace sohusim::device {

/// Address spaces a command can name (SQE DMA_COPY SRC_SPACE/DST_SPACE, TIMESTAMP SPACE).
enum class Space : std::uint8_t { Host = 0, Hbm = 1, Sram = 2, PeerHbm = 3 };
inline constexpr unsigned kNumSpaces = 4;
const char* to_string(Space s);

enum class PortStatus : std::uint8_t { Ok, AddressError, Error };

class MemoryPort {
 public:
  virtual ~MemoryPort() = default;
  virtual PortStatus access(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes,
                            std::uint64_t correlation) = 0;
  /// Moves bytes without simulated time (TLM debug transport): the functional side of an
  /// engine's work, whose timing the tiles carry. False if the memory holds no data or the
  /// range is not all inside it.
  virtual bool debug(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes) = 0;
  /// Bytes addressable through this port (for range checks before any transfer).
  virtual std::uint64_t size() const = 0;
  /// True when the memory behind holds real bytes (sim.data_mode functional).
  virtual bool holds_data() const = 0;
};

}  // namespace sohusim::device
