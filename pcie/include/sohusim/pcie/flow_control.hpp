#pragma once
// VC0 flow-control credits as a transmitter sees them (PCIe Base Spec 2.6): for each of
// posted, non-posted and completion TLPs, header credits (one per TLP) and data credits
// (16 bytes each). The receiver advertises its buffers at InitFC; a limit of 0 is the
// spec's "infinite". A TLP may go out only when its class has a header credit and enough
// data credits; the receiver returns them with UpdateFC DLLPs as it drains its buffers.
#include <array>
#include <cstdint>
#include <vector>

#include "sohusim/pcie/link_params.hpp"
#include "sohusim/pcie/tlp.hpp"

namespace sohusim::pcie {

class FlowControl {
 public:
  explicit FlowControl(const CreditLimits& limits);

  bool can_send(FcClass c, std::uint32_t data_credits) const noexcept;
  void consume(FcClass c, std::uint32_t data_credits) noexcept;
  void release(FcClass c, std::uint32_t data_credits) noexcept;

  std::uint32_t header_limit(FcClass c) const noexcept { return header_limit_[index(c)]; }
  std::uint32_t data_limit(FcClass c) const noexcept { return data_limit_[index(c)]; }
  std::uint32_t headers_in_use(FcClass c) const noexcept { return header_used_[index(c)]; }
  std::uint32_t data_in_use(FcClass c) const noexcept { return data_used_[index(c)]; }

 private:
  static constexpr unsigned index(FcClass c) noexcept { return static_cast<unsigned>(c); }
  std::array<std::uint32_t, 3> header_limit_{};
  std::array<std::uint32_t, 3> data_limit_{};
  std::array<std::uint32_t, 3> header_used_{};
  std::array<std::uint32_t, 3> data_used_{};
};

/// Tags for outstanding non-posted requests: 32 (5-bit), 256 (8-bit) or 768 (10-bit; the
/// values 256-1023, as the spec reserves the low 256 for 8-bit-tag peers).
class TagPool {
 public:
  explicit TagPool(unsigned tag_bits);
  bool available() const noexcept { return !free_.empty(); }
  std::uint16_t allocate();  // precondition: available()
  void release(std::uint16_t tag);
  unsigned capacity() const noexcept { return capacity_; }
  unsigned in_use() const noexcept { return capacity_ - static_cast<unsigned>(free_.size()); }
  bool in_use(std::uint16_t tag) const noexcept;

 private:
  unsigned capacity_;
  unsigned first_;
  std::vector<std::uint16_t> free_;  // a stack: the most recently freed tag is reused first
  std::vector<bool> used_;
};

}  // namespace sohusim::pcie
