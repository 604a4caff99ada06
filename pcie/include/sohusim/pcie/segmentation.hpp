#pragma once
// How a request becomes TLPs (PCIe Base Spec 2.2.7, 2.3.1.1):
//   - memory writes (and completions merged up to MPS) carry at most MPS bytes; the model
//     cuts at MPS-aligned addresses, which also keeps every TLP inside a 4 KiB page (a
//     request must never cross a 4 KiB boundary);
//   - memory reads ask for at most MRRS bytes, cut at MRRS-aligned addresses;
//   - a completer returns a read as completions that end on Read Completion Boundaries
//     (64 or 128 bytes) except the last: one per RCB, or merged up to MPS when allowed.
// Closed forms (count, wire bytes) serve the bulk path, which must agree with the
// TLP-by-TLP cut exactly.
#include <cstdint>

namespace sohusim::pcie {

struct Segment {
  std::uint64_t address;
  std::uint32_t length;
};

/// Cuts [address, address + length) into pieces of at most `max` bytes ending on
/// `max`-aligned addresses (max a power of two <= 4096).
class Segmenter {
 public:
  Segmenter() = default;
  Segmenter(std::uint64_t address, std::uint64_t length, std::uint32_t max) noexcept
      : address_(address), remaining_(length), max_(max) {}
  bool done() const noexcept { return remaining_ == 0; }
  std::uint64_t remaining() const noexcept { return remaining_; }
  std::uint64_t address() const noexcept { return address_; }
  Segment peek() const noexcept;
  Segment next() noexcept;

 private:
  std::uint64_t address_ = 0;
  std::uint64_t remaining_ = 0;
  std::uint32_t max_ = 4096;
};

/// Completion pieces of a read: at most `mps` bytes (merged) or `rcb` bytes (not merged),
/// each but the last ending on an RCB-aligned address.
class CompletionSegmenter {
 public:
  CompletionSegmenter() = default;
  CompletionSegmenter(std::uint64_t address, std::uint64_t length, std::uint32_t rcb, std::uint32_t mps,
                      bool merge) noexcept
      : address_(address), remaining_(length), rcb_(rcb), max_(merge ? mps : rcb) {}
  bool done() const noexcept { return remaining_ == 0; }
  std::uint64_t remaining() const noexcept { return remaining_; }
  Segment next() noexcept;

 private:
  std::uint64_t address_ = 0;
  std::uint64_t remaining_ = 0;
  std::uint32_t rcb_ = 64;
  std::uint32_t max_ = 64;
};

/// Number of pieces Segmenter(address, length, max) yields, in O(1).
std::uint64_t segment_count(std::uint64_t address, std::uint64_t length, std::uint32_t max) noexcept;
/// Number of pieces CompletionSegmenter yields, in O(1) when merged pieces keep alignment.
std::uint64_t completion_count(std::uint64_t address, std::uint64_t length, std::uint32_t rcb, std::uint32_t mps,
                               bool merge) noexcept;

}  // namespace sohusim::pcie
