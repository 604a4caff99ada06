#include "sohusim/pcie/segmentation.hpp"

namespace sohusim::pcie {

Segment Segmenter::peek() const noexcept {
  const std::uint64_t to_boundary = max_ - (address_ & (max_ - 1));
  const std::uint64_t len = remaining_ < to_boundary ? remaining_ : to_boundary;
  return {address_, static_cast<std::uint32_t>(len)};
}

Segment Segmenter::next() noexcept {
  const Segment s = peek();
  address_ += s.length;
  remaining_ -= s.length;
  return s;
}

Segment CompletionSegmenter::next() noexcept {
  // The piece may run up to max_ bytes, shortened so that it ends on an RCB boundary
  // unless it is the last one.
  std::uint64_t len = max_ - (address_ & (rcb_ - 1));
  if (len > remaining_) len = remaining_;
  const Segment s{address_, static_cast<std::uint32_t>(len)};
  address_ += len;
  remaining_ -= len;
  return s;
}

std::uint64_t segment_count(std::uint64_t address, std::uint64_t length, std::uint32_t max) noexcept {
  if (length == 0) return 0;
  const std::uint64_t first = address / max;
  const std::uint64_t last = (address + length - 1) / max;
  return last - first + 1;
}

std::uint64_t completion_count(std::uint64_t address, std::uint64_t length, std::uint32_t rcb, std::uint32_t mps,
                               bool merge) noexcept {
  if (length == 0) return 0;
  if (!merge) return segment_count(address, length, rcb);
  // The first piece takes the address to an RCB boundary plus whole RCBs up to MPS; after
  // it every piece starts RCB-aligned and is MPS long.
  std::uint64_t first = mps - (address & (rcb - 1));
  if (first >= length) return 1;
  return 1 + (length - first + mps - 1) / mps;
}

}  // namespace sohusim::pcie
