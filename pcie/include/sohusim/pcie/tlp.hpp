#pragma once
// A Transaction Layer Packet as the link model moves it: the fields a protocol analyzer
// shows (type, requester, tag, address, length, completion status), the flow-control
// class it is counted in, and a reference to the data it carries in the functional
// data mode (shared, so that a 1 MiB DMA is not copied per TLP).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sohusim/pcie/requester_id.hpp"

namespace sohusim::pcie {

enum class TlpType : std::uint8_t { MRd, MWr, CfgRd, CfgWr, Cpl, CplD, Msg };
enum class FcClass : std::uint8_t { Posted, NonPosted, Completion };
/// Completion status (PCIe Base Spec 2.2.9): successful, unsupported request,
/// configuration request retry, completer abort.
enum class CplStatus : std::uint8_t { SC = 0, UR = 1, CRS = 2, CA = 4 };

std::string_view to_string(TlpType t);
std::string_view to_string(CplStatus s);

constexpr FcClass fc_class(TlpType t) {
  switch (t) {
    case TlpType::MWr:
    case TlpType::Msg:
      return FcClass::Posted;
    case TlpType::MRd:
    case TlpType::CfgRd:
    case TlpType::CfgWr:
      return FcClass::NonPosted;
    default:
      return FcClass::Completion;
  }
}
/// Whether the TLP carries a data payload (and so data credits).
constexpr bool carries_data(TlpType t) {
  return t == TlpType::MWr || t == TlpType::CplD || t == TlpType::CfgWr || t == TlpType::Msg;
}
constexpr bool is_completion(TlpType t) {
  return t == TlpType::Cpl || t == TlpType::CplD;
}

using DataBuffer = std::shared_ptr<std::vector<std::uint8_t>>;

struct Tlp {
  TlpType type = TlpType::MWr;
  bool four_dw = false;
  bool poisoned = false;  // EP bit: the data is known bad
  CplStatus status = CplStatus::SC;
  RequesterId requester = 0;
  RequesterId completer = 0;
  std::uint16_t tag = 0;
  std::uint64_t address = 0;      // requests: target address; completions: address of the first byte
  std::uint32_t length = 0;       // payload bytes (MWr, CplD, CfgWr, Msg) or requested bytes (MRd, CfgRd)
  std::uint32_t byte_count = 0;   // completions: bytes still to come, this one included
  std::uint32_t wire_bytes = 0;   // bytes on the link (framing, header, payload, digest)
  std::uint64_t txn = 0;          // the requester's transaction this TLP belongs to
  std::uint64_t correlation = 0;  // the correlation id of the request that caused it (0: none)
  std::uint8_t replays = 0;       // times this TLP has been sent again from the replay buffer
  std::uint64_t bulk_tlps = 1;    // >1: an aggregate of that many TLPs (the bulk path)
  std::uint64_t bulk_min_ps = 0;  // bulk: the aggregate takes at least this long (credit/tag bound)
  bool want_data = false;         // reads: the requester wants the bytes (functional mode, MMIO)
  DataBuffer data;                // functional data mode: the bytes, at data_offset
  std::uint32_t data_offset = 0;

  FcClass fc() const { return fc_class(type); }
  /// Data credits (16-byte units) it consumes.
  /// Data credits (16-byte units) it consumes; an aggregate is paced by bulk_min_ps instead.
  std::uint32_t data_credits() const { return carries_data(type) && bulk_tlps <= 1 ? (length + 15) / 16 : 0; }
};

}  // namespace sohusim::pcie
