#pragma once
// Internal to the driver's Device sources (device.cpp, device_probe.cpp, device_queues.cpp,
// device_completion.cpp, device_units.cpp): register-field macros over the generated
// register header and the small helpers they share.
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sohusim/driver/command.hpp"
#include "sohusim/regmap/sohu_regs.h"

// A field of a register value, positioned by the generated header: GET(v, SOHU_CAP0_MQP).
#define SOHU_GET(v, F) ((static_cast<std::uint64_t>(v) & static_cast<std::uint64_t>(F##_MASK)) >> F##_SHIFT)
// A field value in place: PUT(SOHU_AQA_ASQS, n - 1).
#define SOHU_PUT(F, v) ((static_cast<std::uint64_t>(v) << F##_SHIFT) & static_cast<std::uint64_t>(F##_MASK))
// A field of a command: SOHU_CMD_SET(c, SOHU_ADMIN_CREATE_CQ_QID, qid).
#define SOHU_CMD_SET(cmd, F, v) \
  put_field((cmd), #F, F##_DW, F##_SHIFT, static_cast<std::uint64_t>(F##_MASK), static_cast<std::uint64_t>(v))

namespace sohusim::driver::detail {

inline std::string hex(std::uint64_t v) {
  std::array<char, 24> b{};
  std::snprintf(b.data(), b.size(), "0x%llX", static_cast<unsigned long long>(v));
  return b.data();
}

inline std::string rid_text(std::uint16_t rid) {
  std::array<char, 16> b{};
  std::snprintf(b.data(), b.size(), "%02x:%02x.%x", rid >> 8, (rid >> 3) & 0x1F, rid & 7);
  return b.data();
}

inline Command admin_command(std::uint8_t opcode) {
  Command c;
  SOHU_CMD_SET(c, SOHU_SQE_OPCODE, opcode);
  return c;
}

inline bool has_no_irq(const Command& c) {
  return SOHU_GET(c.dw[SOHU_SQE_NO_COMPLETION_IRQ_DW], SOHU_SQE_NO_COMPLETION_IRQ) != 0;
}

}  // namespace sohusim::driver::detail
