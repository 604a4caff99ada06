#pragma once
// A MemoryPort over a TLM-2.0 initiator socket: each access is one blocking b_transport
// carrying a CorrelationExtension (with the requester ID the PCIe endpoint uses for DMA;
// none: the endpoint's physical function).
// Transfers larger than `max_burst` are split so that no single payload exceeds what the
// target accepts in one piece (the PCIe endpoint's bulk path, HBM's bulk requests).
#include <cstdint>
#include <optional>

#include <systemc>
#include <tlm>

#include "sohusim/device/units/memory_port.hpp"

namespace sohusim::device {

class TlmMemoryPort : public MemoryPort {
 public:
  /// `socket` must be bound before the first access (the port may be built during elaboration).
  TlmMemoryPort(tlm::tlm_initiator_socket<>& socket, std::uint64_t size, bool holds_data,
                std::optional<std::uint32_t> requester = std::nullopt, std::uint64_t max_burst = 1ULL << 20)
      : socket_(&socket), size_(size), holds_data_(holds_data), requester_(requester), max_burst_(max_burst) {}
  PortStatus access(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes,
                    std::uint64_t correlation) override;
  bool debug(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes) override;
  std::uint64_t size() const override { return size_; }
  bool holds_data() const override { return holds_data_; }

 private:
  tlm::tlm_initiator_socket<>* socket_;
  std::uint64_t size_;
  bool holds_data_;
  std::optional<std::uint32_t> requester_;
  std::uint64_t max_burst_;
};

}  // namespace sohusim::device
