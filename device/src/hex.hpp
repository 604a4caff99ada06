#pragma once
// "0x1f00": how addresses and codes appear in the device's error messages.
#include <cstdint>
#include <sstream>
#include <string>

namespace sohusim::device::detail {

inline std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

}  // namespace sohusim::device::detail
