// sohusim/pcie/bar.hpp — Base Address Registers: specs, the sizing handshake, decoding.
//
// What it models. PCIe Base Spec 7.5.1.2.1 (Base Address Registers): six dwords at 0x10-0x24 of
// a type-0 header (and, with the same layout, the six VF BARs of the SR-IOV capability at
// +0x24, SR-IOV spec 9.3.3.14). A memory BAR's low dword holds the type bits, read-only:
//   bit 0     0 = memory space
//   bits 2:1  00 = 32-bit address, 10 = 64-bit address (the BAR takes two slots; the next
//             slot holds address bits 63:32)
//   bit 3     prefetchable
// Address bits below the BAR's size are read-only zero, so the sizing handshake falls out of
// the attribute masks: software writes all ones, reads back ~(size - 1) with the type bits,
// and learns the size; the upper dword of a 64-bit BAR is fully writable for sizes below
// 4 GiB (for larger sizes its low bits are read-only zero as well). Slots no BAR uses read 0
// and ignore writes.
//
// Validation (std::invalid_argument naming the field and the BAR index): index 0..5; size a
// power of two, at least 16 bytes (4 KiB for VF BARs: the smallest system page size), at most
// 2 GiB for a 32-bit BAR; a 64-bit BAR may not sit at index 5; two BARs may not claim the same
// slot.
//
// Decoding. BarSet::decode() maps an address to {bar, offset} from the programmed bases. It
// does not look at Memory Space Enable (PcieFunction::decode does); a BAR whose base is still
// 0 counts as unassigned and decodes nothing.
//
// Simplifications: memory BARs only (no I/O BARs, no expansion ROM, no Resizable BAR).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sohusim/pcie/config_space.hpp"

namespace sohusim::pcie {

struct BarSpec {
  unsigned index = 0;      // 0..5; a 64-bit BAR also uses index + 1
  std::uint64_t size = 0;  // bytes, power of two
  bool is_64bit = false;
  bool prefetchable = false;
};

/// Where an address lands: which BAR (its index) and the offset inside it.
struct BarHit {
  unsigned bar = 0;
  std::uint64_t offset = 0;
};

inline constexpr unsigned kNumBarSlots = 6;

class BarSet {
 public:
  /// No BARs.
  BarSet() = default;
  /// Validates `bars` (see above). `field` names them in error messages ("bars",
  /// "sriov.vf_bars"); `base_offset` is the config-space offset of slot 0; `min_size` the
  /// smallest allowed size.
  BarSet(std::vector<BarSpec> bars, std::uint16_t base_offset, const std::string& field = "bars",
         std::uint64_t min_size = 16);

  /// Defines the six BAR slots in `cs` (reset value: the type bits, address 0).
  void install(ConfigSpace& cs) const;

  /// The base address software programmed into BAR `index` (type bits stripped); 0 if the
  /// index holds no BAR.
  std::uint64_t address(const ConfigSpace& cs, unsigned index) const;
  /// The spec of the BAR at `index`, or nullptr.
  const BarSpec* spec(unsigned index) const;
  const std::vector<BarSpec>& specs() const { return bars_; }
  std::uint16_t base_offset() const { return base_offset_; }

  /// The BAR and offset `addr` hits, ignoring Memory Space Enable; unassigned (base 0) BARs
  /// never hit.
  std::optional<BarHit> decode(const ConfigSpace& cs, std::uint64_t addr) const;

  /// The read-only type bits of a BAR's low dword.
  static std::uint32_t type_bits(const BarSpec& b);

 private:
  std::vector<BarSpec> bars_;
  std::uint16_t base_offset_ = cfg::kBar0;
};

}  // namespace sohusim::pcie
