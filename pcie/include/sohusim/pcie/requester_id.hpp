#pragma once
// Requester ID: the bus/device/function number that names a PCIe function in every
// TLP it sends (requester ID) or completes (completer ID), 16 bits: bus[15:8],
// device[7:3], function[2:0]. With ARI (which SR-IOV virtual functions use) the
// device and function fields merge into an 8-bit function number.
#include <cstdint>
#include <string>

namespace sohusim::pcie {

using RequesterId = std::uint16_t;

constexpr RequesterId make_rid(unsigned bus, unsigned device, unsigned function) {
  return static_cast<RequesterId>(((bus & 0xFFu) << 8) | ((device & 0x1Fu) << 3) | (function & 0x7u));
}
constexpr unsigned rid_bus(RequesterId rid) {
  return rid >> 8;
}
constexpr unsigned rid_device(RequesterId rid) {
  return (rid >> 3) & 0x1Fu;
}
constexpr unsigned rid_function(RequesterId rid) {
  return rid & 0x7u;
}

/// "bb:dd.f" as lspci prints it.
std::string format_rid(RequesterId rid);

}  // namespace sohusim::pcie
