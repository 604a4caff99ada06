#include "sohusim/driver/errors.hpp"

#include <array>
#include <cstdio>

#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {

namespace {

/// Text for a code no table names. A few rotating per-thread buffers, so that two unknown
/// codes can appear in one expression (a message naming status and opcode) and each
/// pointer stays valid until several more unknown codes have been named on the thread.
const char* unknown(const char* prefix, unsigned value) {
  thread_local std::array<std::array<char, 24>, 4> ring{};
  thread_local unsigned next = 0;
  std::array<char, 24>& buf = ring[next++ % ring.size()];
  std::snprintf(buf.data(), buf.size(), "%s0x%02X", prefix, value);
  return buf.data();
}

}  // namespace

const char* status_name(std::uint16_t status) {
  switch (status) {
    case SOHU_STATUS_SUCCESS:
      return "SUCCESS";
    case SOHU_STATUS_INVALID_OPCODE:
      return "INVALID_OPCODE";
    case SOHU_STATUS_INVALID_FIELD:
      return "INVALID_FIELD";
    case SOHU_STATUS_INVALID_QUEUE_ID:
      return "INVALID_QUEUE_ID";
    case SOHU_STATUS_QUEUE_EXISTS:
      return "QUEUE_EXISTS";
    case SOHU_STATUS_INVALID_QUEUE_SIZE:
      return "INVALID_QUEUE_SIZE";
    case SOHU_STATUS_MISALIGNED:
      return "MISALIGNED";
    case SOHU_STATUS_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case SOHU_STATUS_HOST_DMA_ERROR:
      return "HOST_DMA_ERROR";
    case SOHU_STATUS_MMU_FAULT:
      return "MMU_FAULT";
    case SOHU_STATUS_INVALID_DTYPE:
      return "INVALID_DTYPE";
    case SOHU_STATUS_INVALID_DIMENSIONS:
      return "INVALID_DIMENSIONS";
    case SOHU_STATUS_INVALID_FEATURE:
      return "INVALID_FEATURE";
    case SOHU_STATUS_ABORTED_RESET:
      return "ABORTED_RESET";
    case SOHU_STATUS_SEM_TIMEOUT:
      return "SEM_TIMEOUT";
    case SOHU_STATUS_PEER_UNREACHABLE:
      return "PEER_UNREACHABLE";
    case SOHU_STATUS_DEVICE_DISABLED:
      return "DEVICE_DISABLED";
    case SOHU_STATUS_INVALID_DOORBELL:
      return "INVALID_DOORBELL";
    case SOHU_STATUS_QUEUE_IN_USE:
      return "QUEUE_IN_USE";
    case SOHU_STATUS_INTERNAL_ERROR:
      return "INTERNAL_ERROR";
    default:
      return unknown("STATUS_", status);
  }
}

const char* opcode_name(std::uint8_t opcode, bool admin) {
  if (admin) {
    switch (opcode) {
      case SOHU_ADMIN_OP_IDENTIFY:
        return "IDENTIFY";
      case SOHU_ADMIN_OP_CREATE_CQ:
        return "CREATE_CQ";
      case SOHU_ADMIN_OP_CREATE_SQ:
        return "CREATE_SQ";
      case SOHU_ADMIN_OP_DELETE_SQ:
        return "DELETE_SQ";
      case SOHU_ADMIN_OP_DELETE_CQ:
        return "DELETE_CQ";
      case SOHU_ADMIN_OP_SET_FEATURES:
        return "SET_FEATURES";
      case SOHU_ADMIN_OP_GET_FEATURES:
        return "GET_FEATURES";
      case SOHU_ADMIN_OP_PMU_CONFIG:
        return "PMU_CONFIG";
      case SOHU_ADMIN_OP_TRACE_CONFIG:
        return "TRACE_CONFIG";
      case SOHU_ADMIN_OP_FW_STATUS:
        return "FW_STATUS";
      case SOHU_ADMIN_OP_SET_CONTEXT:
        return "SET_CONTEXT";
      case SOHU_ADMIN_OP_VF_CONTEXT:
        return "VF_CONTEXT";
      default:
        return unknown("ADMIN_OPCODE_", opcode);
    }
  }
  switch (opcode) {
    case SOHU_IO_OP_NOP:
      return "NOP";
    case SOHU_IO_OP_DMA_COPY:
      return "DMA_COPY";
    case SOHU_IO_OP_GEMM:
      return "GEMM";
    case SOHU_IO_OP_ATTENTION:
      return "ATTENTION";
    case SOHU_IO_OP_VECTOR:
      return "VECTOR";
    case SOHU_IO_OP_COLLECTIVE:
      return "COLLECTIVE";
    case SOHU_IO_OP_SEM_SIGNAL:
      return "SEM_SIGNAL";
    case SOHU_IO_OP_SEM_WAIT:
      return "SEM_WAIT";
    case SOHU_IO_OP_FENCE:
      return "FENCE";
    case SOHU_IO_OP_TIMESTAMP:
      return "TIMESTAMP";
    case SOHU_IO_OP_PMU_SNAPSHOT:
      return "PMU_SNAPSHOT";
    case SOHU_IO_OP_EXEC_PROGRAM:
      return "EXEC_PROGRAM";
    default:
      return unknown("OPCODE_", opcode);
  }
}

}  // namespace sohusim::driver
