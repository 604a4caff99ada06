#pragma once
// An optional TLP capture, listed the way a protocol analyzer shows a trace: one line per
// TLP on the lanes (replays included), with the time it started, the direction, type,
// requester, tag, address, length and completion status. Filtered by TLP type and by an
// address range, for debugging a driver's register accesses or a DMA's segmentation.
//
//   time_ns       dir   type   requester tag  address             len  status
//   1234.567      down  MWr    00:00.0   0    0x00000000f0000040  4
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include "sohusim/pcie/tlp.hpp"

namespace sohusim::pcie {

struct CaptureFilter {
  std::set<TlpType> types;  // empty: every type
  std::uint64_t address_lo = 0;
  std::uint64_t address_hi = ~0ULL;  // inclusive; completions match by their lower address
  /// Parses "MWr,MRd" (names as to_string(TlpType) prints them; CfgRd/CfgWr accepted).
  /// Throws std::invalid_argument naming the unknown type.
  static std::set<TlpType> parse_types(std::string_view list);
};

class TlpCapture {
 public:
  TlpCapture(std::ostream& out, CaptureFilter filter = {});
  void record(std::uint64_t time_ps, std::string_view direction, const Tlp& tlp);
  std::uint64_t lines() const noexcept { return lines_; }

 private:
  std::ostream& out_;
  CaptureFilter filter_;
  std::uint64_t lines_ = 0;
};

}  // namespace sohusim::pcie
