#pragma once
// The driver's typed errors. Everything the driver or runtime throws derives from
// DriverError, so a caller can catch one type; the subclasses say what failed, with the
// numbers a bug report needs.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sohusim::driver {

class DriverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The platform could not serve a request (unknown function, address outside the BARs,
/// DMA memory exhausted).
class AccessError : public DriverError {
 public:
  using DriverError::DriverError;
};

/// Probe found something other than a supported device (IDs, version, BAR sizes).
class ProbeError : public DriverError {
 public:
  using DriverError::DriverError;
};

/// The device did not reach a state in time (RDY after enable, a completion, a reset).
class TimeoutError : public DriverError {
 public:
  using DriverError::DriverError;
};

/// The device reported a fatal controller status (STATUS.CFS); only a reset recovers.
class FatalError : public DriverError {
 public:
  using DriverError::DriverError;
};

/// A command completed with an error status. what() names the opcode, queue, command id,
/// status and, when the device logged one, the error-log entry's message.
class CommandError : public DriverError {
 public:
  CommandError(const std::string& what, std::uint16_t status, std::uint8_t opcode, std::uint16_t qid, std::uint16_t cid,
               std::uint64_t correlation)
      : DriverError(what), status_(status), opcode_(opcode), qid_(qid), cid_(cid), correlation_(correlation) {}
  std::uint16_t status() const noexcept { return status_; }  // SOHU_STATUS_*
  std::uint8_t opcode() const noexcept { return opcode_; }
  std::uint16_t qid() const noexcept { return qid_; }
  std::uint16_t cid() const noexcept { return cid_; }
  std::uint64_t correlation() const noexcept { return correlation_; }

 private:
  std::uint16_t status_;
  std::uint8_t opcode_;
  std::uint16_t qid_, cid_;
  std::uint64_t correlation_;
};

/// Name of a SOHU_STATUS_* code ("OUT_OF_RANGE"); "STATUS_0x.." for unknown codes.
/// Known names are string literals; the text of an unknown code lives in a small per-thread
/// ring of buffers, valid until four more unknown codes have been named on that thread.
const char* status_name(std::uint16_t status);
/// Name of an I/O opcode ("GEMM") or, with admin = true, an admin opcode ("CREATE_CQ");
/// "OPCODE_0x.." / "ADMIN_OPCODE_0x.." for unknown ones (same lifetime rule as above).
const char* opcode_name(std::uint8_t opcode, bool admin = false);

}  // namespace sohusim::driver
