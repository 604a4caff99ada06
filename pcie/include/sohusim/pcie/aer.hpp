// sohusim/pcie/aer.hpp — Advanced Error Reporting extended capability (ID 0x0001).
//
// What it models. PCIe Base Spec 7.8.4 (AER capability) and 6.2 (error signalling/logging).
// Register offsets and bit positions as in the spec; checked against Linux's
// include/uapi/linux/pci_regs.h (PCI_ERR_UNCOR_STATUS = 0x04, PCI_ERR_UNCOR_MASK = 0x08,
// PCI_ERR_UNCOR_SEVER = 0x0C, PCI_ERR_COR_STATUS = 0x10, PCI_ERR_COR_MASK = 0x14,
// PCI_ERR_CAP = 0x18, PCI_ERR_HEADER_LOG = 0x1C; PCI_ERR_UNC_* and PCI_ERR_COR_* bits):
//   +0x04 Uncorrectable Error Status   RW1CS
//   +0x08 Uncorrectable Error Mask     RWS
//   +0x0C Uncorrectable Error Severity RWS  (1 = fatal; reset value per spec: DLP, FCP,
//                                            Receiver Overflow, Malformed TLP fatal)
//   +0x10 Correctable Error Status     RW1CS
//   +0x14 Correctable Error Mask       RWS  (Advisory Non-Fatal masked at reset)
//   +0x18 Advanced Error Capabilities and Control: First Error Pointer [4:0] ROS
//   +0x1C Header Log, 4 dwords         ROS
// Status, mask, severity, First Error Pointer and Header Log are sticky: a Function Level
// Reset leaves them (spec 6.6.2), which ConfigSpace's preserve mask implements.
//
// Recording (spec 6.2.5, figure "Flowchart Showing Sequence of Device Error Signaling and
// Logging Operations"): the status bit is always set; the Device Status register of the PCI
// Express capability gets Correctable / Non-Fatal / Fatal Error Detected (and Unsupported
// Request Detected for UR) regardless of the AER masks; an unmasked uncorrectable error whose
// status was the only one set updates the First Error Pointer and the Header Log (no
// multiple-header recording). The returned report says which error message (ERR_COR,
// ERR_NONFATAL, ERR_FATAL) the function would send upstream: unmasked, and enabled in
// Device Control (or, for uncorrectable errors, by SERR# Enable in Command).
//
// Simplifications: no Advisory Non-Fatal handling (an uncorrectable error is never
// downgraded to correctable), no ECRC generation/checking, no root-port registers, no TLP
// prefix log. Only the bits listed in the enums are implemented; the others are RsvdZ.
#pragma once

#include <array>
#include <cstdint>

#include "sohusim/pcie/config_space.hpp"

namespace sohusim::pcie {

/// Uncorrectable Error Status bits (PCI_ERR_UNC_*).
enum class UncorrectableError : std::uint32_t {
  DataLinkProtocol = 1u << 4,
  PoisonedTlp = 1u << 12,
  FlowControlProtocol = 1u << 13,
  CompletionTimeout = 1u << 14,
  CompleterAbort = 1u << 15,
  UnexpectedCompletion = 1u << 16,
  ReceiverOverflow = 1u << 17,
  MalformedTlp = 1u << 18,
  EcrcError = 1u << 19,
  UnsupportedRequest = 1u << 20,
};

/// Correctable Error Status bits (PCI_ERR_COR_*).
enum class CorrectableError : std::uint32_t {
  ReceiverError = 1u << 0,
  BadTlp = 1u << 6,
  BadDllp = 1u << 7,
  ReplayNumRollover = 1u << 8,
  ReplayTimerTimeout = 1u << 12,
  AdvisoryNonFatal = 1u << 13,
};

/// The error message the function would send upstream for a recorded error.
enum class ErrorMessage { None, ErrCor, ErrNonFatal, ErrFatal };

struct AerReport {
  bool masked = false;  // masked in the AER mask register: logged in status only
  bool fatal = false;   // uncorrectable and marked fatal in the severity register
  ErrorMessage message = ErrorMessage::None;
};

class Aer {
 public:
  static constexpr unsigned kCapLength = 0x2C;  // header .. end of Header Log
  // Register offsets inside the capability.
  static constexpr std::uint16_t kUncStatus = 0x04;
  static constexpr std::uint16_t kUncMask = 0x08;
  static constexpr std::uint16_t kUncSeverity = 0x0C;
  static constexpr std::uint16_t kCorStatus = 0x10;
  static constexpr std::uint16_t kCorMask = 0x14;
  static constexpr std::uint16_t kCapControl = 0x18;
  static constexpr std::uint16_t kHeaderLog = 0x1C;

  static constexpr std::uint32_t kUncImplemented = 0x001FF010u;      // bits 4, 12..20
  static constexpr std::uint32_t kUncSeverityDefault = 0x00062010u;  // DLP, FCP, RxOverflow, Malformed
  static constexpr std::uint32_t kCorImplemented = 0x000031C1u;      // bits 0, 6, 7, 8, 12, 13
  static constexpr std::uint32_t kCorMaskDefault = 0x00002000u;      // Advisory Non-Fatal

  /// Defines the registers at `cap_offset` (header already written by the builder).
  /// `pcie_cap_offset` locates Device Control/Status in the PCI Express capability.
  Aer(ConfigSpace& cs, std::uint16_t cap_offset, std::uint16_t pcie_cap_offset);

  std::uint16_t cap_offset() const { return cap_; }

  AerReport record_uncorrectable(UncorrectableError e, const std::array<std::uint32_t, 4>& tlp_header = {});
  AerReport record_correctable(CorrectableError e);

  // Convenience wrappers for the errors the link reports.
  AerReport poisoned_tlp(const std::array<std::uint32_t, 4>& h = {}) {
    return record_uncorrectable(UncorrectableError::PoisonedTlp, h);
  }
  AerReport completion_timeout() { return record_uncorrectable(UncorrectableError::CompletionTimeout); }
  AerReport unexpected_completion(const std::array<std::uint32_t, 4>& h = {}) {
    return record_uncorrectable(UncorrectableError::UnexpectedCompletion, h);
  }
  AerReport malformed_tlp(const std::array<std::uint32_t, 4>& h = {}) {
    return record_uncorrectable(UncorrectableError::MalformedTlp, h);
  }
  AerReport unsupported_request(const std::array<std::uint32_t, 4>& h = {}) {
    return record_uncorrectable(UncorrectableError::UnsupportedRequest, h);
  }
  AerReport receiver_error() { return record_correctable(CorrectableError::ReceiverError); }
  AerReport bad_tlp() { return record_correctable(CorrectableError::BadTlp); }
  AerReport bad_dllp() { return record_correctable(CorrectableError::BadDllp); }
  AerReport replay_num_rollover() { return record_correctable(CorrectableError::ReplayNumRollover); }
  AerReport replay_timer_timeout() { return record_correctable(CorrectableError::ReplayTimerTimeout); }

  std::uint32_t uncorrectable_status() const;
  std::uint32_t correctable_status() const;
  unsigned first_error_pointer() const;
  std::array<std::uint32_t, 4> header_log() const;

 private:
  ConfigSpace* cs_;
  std::uint16_t cap_;
  std::uint16_t pcie_;
};

}  // namespace sohusim::pcie
