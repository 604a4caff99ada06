#pragma once
// Internal to memory/: what the three memory targets (HBM, SRAM, host DRAM) do the same
// way with a generic payload before any timing — reject what no memory can serve, and
// move the bytes through a SparseStore in the functional data mode.
//
// Rules shared by the targets (documented for users in docs/memory-frontend.md):
//   - TLM_IGNORE_COMMAND: answered TLM_OK_RESPONSE at once, no access, no time.
//   - data_length 0: TLM_GENERIC_ERROR_RESPONSE (there is nothing to time).
//   - any byte of [address, address + data_length) outside the memory:
//     TLM_ADDRESS_ERROR_RESPONSE (the caller counts it).
//   - streaming_width != 0 and < data_length: TLM_BURST_ERROR_RESPONSE. A memory is not a
//     FIFO; a streaming burst to DRAM would be a modelling mistake upstream.
//   - byte enables with byte_enable_length 0: TLM_BYTE_ENABLE_ERROR_RESPONSE.
//   - functional mode and no data pointer: TLM_GENERIC_ERROR_RESPONSE.
// Byte enables are honoured: a disabled byte is neither written to the store nor
// copied into the initiator's buffer on a read. Timing ignores them (the access happens).

#include <algorithm>
#include <cstdint>

#include <tlm>

#include "sohusim/sim/sparse_memory.hpp"

namespace sohusim::memory::detail {

/// TLM_OK_RESPONSE when the payload may be served, else the error response to give.
/// TLM_IGNORE_COMMAND is "OK" here: the caller answers it without an access.
inline tlm::tlm_response_status check_payload(const tlm::tlm_generic_payload& gp, std::uint64_t capacity,
                                              bool functional) {
  if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) return tlm::TLM_OK_RESPONSE;
  const std::uint64_t addr = gp.get_address();
  const std::uint64_t len = gp.get_data_length();
  if (len == 0) return tlm::TLM_GENERIC_ERROR_RESPONSE;
  if (addr >= capacity || len > capacity - addr) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  const unsigned int width = gp.get_streaming_width();
  if (width != 0 && width < len) return tlm::TLM_BURST_ERROR_RESPONSE;
  if (gp.get_byte_enable_ptr() != nullptr && gp.get_byte_enable_length() == 0) {
    return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  }
  if (functional && gp.get_data_ptr() == nullptr) return tlm::TLM_GENERIC_ERROR_RESPONSE;
  return tlm::TLM_OK_RESPONSE;
}

/// The common front of serve(): answers a payload that cannot be served (counting the
/// error) or a TLM_IGNORE_COMMAND, and returns false then; true when the caller should time
/// and perform the access.
template <typename Counter>
bool admit(tlm::tlm_generic_payload& gp, std::uint64_t capacity, bool functional, Counter& address_errors,
           Counter& other_errors) {
  const tlm::tlm_response_status status = check_payload(gp, capacity, functional);
  if (status != tlm::TLM_OK_RESPONSE) {
    (status == tlm::TLM_ADDRESS_ERROR_RESPONSE ? address_errors : other_errors).inc();
    gp.set_response_status(status);
    return false;
  }
  if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return false;
  }
  return true;
}

/// Moves the payload's bytes to or from `store` (functional mode). Precondition:
/// check_payload() said OK and the command is a read or a write.
inline void move_data(sim::SparseStore& store, tlm::tlm_generic_payload& gp) {
  const std::uint64_t addr = gp.get_address();
  const unsigned int len = gp.get_data_length();
  unsigned char* data = gp.get_data_ptr();
  const unsigned char* enables = gp.get_byte_enable_ptr();
  const unsigned int enables_len = gp.get_byte_enable_length();
  if (enables == nullptr) {
    if (gp.is_read()) {
      store.read(addr, data, len);
    } else {
      store.write(addr, data, len);
    }
    return;
  }
  // Byte by byte: byte enables are rare (partial writes of a register or a tail).
  for (unsigned int i = 0; i < len; ++i) {
    if (enables[i % enables_len] == TLM_BYTE_DISABLED) continue;
    if (gp.is_read()) {
      store.read(addr + i, data + i, 1);
    } else {
      store.write(addr + i, data + i, 1);
    }
  }
}

/// Debug transport over a store: no time, no counters; clipped at the end of the memory
/// (a debugger reading a window that straddles the end gets the bytes that exist); 0 bytes
/// in the timing data mode, which holds no data.
inline unsigned int debug_transport(sim::SparseStore* store, tlm::tlm_generic_payload& gp) {
  const std::uint64_t addr = gp.get_address();
  if (store == nullptr || addr >= store->size() || gp.get_data_ptr() == nullptr || !(gp.is_read() || gp.is_write())) {
    return 0;
  }
  const auto n = static_cast<unsigned int>(std::min<std::uint64_t>(gp.get_data_length(), store->size() - addr));
  if (gp.is_read()) {
    store->read(addr, gp.get_data_ptr(), n);
  } else {
    store->write(addr, gp.get_data_ptr(), n);
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  return n;
}

}  // namespace sohusim::memory::detail
