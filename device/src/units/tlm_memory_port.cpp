#include "sohusim/device/units/tlm_memory_port.hpp"

#include <algorithm>
#include <vector>

#include "sohusim/sim/correlation_extension.hpp"

namespace sohusim::device {

const char* to_string(Space s) {
  switch (s) {
    case Space::Host:
      return "host";
    case Space::Hbm:
      return "hbm";
    case Space::Sram:
      return "sram";
    case Space::PeerHbm:
      return "peer";
  }
  return "?";
}

PortStatus TlmMemoryPort::access(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes,
                                 std::uint64_t correlation) {
  if (data == nullptr && holds_data_) {
    // A timing-only transfer on a memory that holds bytes (an engine's operand stream in
    // functional mode, whose data the engine moves by debug transport): reads go to a
    // scratch buffer, writes put back what is there, so the timing is exact and the
    // contents unchanged. The scratch holds at most 16 MiB (the HBM port's bursts are larger):
    // a larger transfer goes in several such pieces.
    std::vector<std::uint8_t> scratch(
        static_cast<std::size_t>(std::min(bytes, std::min<std::uint64_t>(max_burst_, 16ULL << 20))));
    for (std::uint64_t off = 0; off < bytes; off += scratch.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(scratch.size(), bytes - off);
      if (write && !debug(false, address + off, scratch.data(), n)) return PortStatus::AddressError;
      const PortStatus st = access(write, address + off, scratch.data(), n, correlation);
      if (st != PortStatus::Ok) return st;
    }
    return PortStatus::Ok;
  }
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t n = std::min(bytes - done, max_burst_);
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(address + done);
    gp.set_data_ptr(data == nullptr ? nullptr : data + done);
    gp.set_data_length(static_cast<unsigned>(n));
    gp.set_streaming_width(static_cast<unsigned>(n));
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sim::CorrelationExtension corr(correlation, requester_);
    gp.set_extension(&corr);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    (*socket_)->b_transport(gp, delay);
    gp.clear_extension(&corr);
    if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
    const tlm::tlm_response_status st = gp.get_response_status();
    if (st == tlm::TLM_ADDRESS_ERROR_RESPONSE) return PortStatus::AddressError;
    if (st != tlm::TLM_OK_RESPONSE) return PortStatus::Error;
    done += n;
  }
  return PortStatus::Ok;
}

bool TlmMemoryPort::debug(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes) {
  if (!holds_data_) return false;
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t n = std::min<std::uint64_t>(bytes - done, 1U << 30);
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(address + done);
    gp.set_data_ptr(data + done);
    gp.set_data_length(static_cast<unsigned>(n));
    gp.set_streaming_width(static_cast<unsigned>(n));
    if ((*socket_)->transport_dbg(gp) != n) return false;
    done += n;
  }
  return true;
}

}  // namespace sohusim::device
