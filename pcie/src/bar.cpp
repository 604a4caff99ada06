#include "sohusim/pcie/bar.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace sohusim::pcie {

namespace {
bool is_pow2(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}
}  // namespace

BarSet::BarSet(std::vector<BarSpec> bars, std::uint16_t base_offset, const std::string& field, std::uint64_t min_size)
    : bars_(std::move(bars)), base_offset_(base_offset) {
  std::array<int, kNumBarSlots> owner{};
  owner.fill(-1);
  for (const BarSpec& b : bars_) {
    const std::string name = field + ": BAR " + std::to_string(b.index);
    if (b.index >= kNumBarSlots) throw std::invalid_argument(name + ": index must be 0..5");
    if (!is_pow2(b.size)) {
      throw std::invalid_argument(name + ": size " + std::to_string(b.size) + " is not a power of two");
    }
    if (b.size < min_size) {
      throw std::invalid_argument(name + ": size " + std::to_string(b.size) + " is below the minimum of " +
                                  std::to_string(min_size) + " bytes");
    }
    if (!b.is_64bit && b.size > (std::uint64_t{1} << 31)) {
      throw std::invalid_argument(name + ": size " + std::to_string(b.size) +
                                  " needs a 64-bit BAR (a 32-bit BAR holds at most 2 GiB)");
    }
    if (b.is_64bit && b.size > (std::uint64_t{1} << 63)) {
      throw std::invalid_argument(name + ": size exceeds 2^63");
    }
    if (b.is_64bit && b.index == kNumBarSlots - 1) {
      throw std::invalid_argument(name + ": a 64-bit BAR takes two slots and cannot start at index 5");
    }
    const unsigned last = b.is_64bit ? b.index + 1 : b.index;
    for (unsigned s = b.index; s <= last; ++s) {
      if (owner[s] >= 0) {
        throw std::invalid_argument(name + ": slot " + std::to_string(s) + " is already used by BAR " +
                                    std::to_string(owner[s]));
      }
      owner[s] = static_cast<int>(b.index);
    }
  }
}

std::uint32_t BarSet::type_bits(const BarSpec& b) {
  return (b.is_64bit ? 0x4u : 0x0u) | (b.prefetchable ? 0x8u : 0x0u);
}

void BarSet::install(ConfigSpace& cs) const {
  for (unsigned s = 0; s < kNumBarSlots; ++s) cs.define(base_offset_ + 4u * s, 4, 0);  // unused: RO 0
  for (const BarSpec& b : bars_) {
    const std::uint64_t addr_mask = ~(b.size - 1);
    const std::uint32_t lo_rw = static_cast<std::uint32_t>(addr_mask) & 0xFFFFFFF0u;
    cs.define(base_offset_ + 4u * b.index, 4, type_bits(b), lo_rw);
    if (b.is_64bit) {
      cs.define(base_offset_ + 4u * (b.index + 1), 4, 0, static_cast<std::uint32_t>(addr_mask >> 32));
    }
  }
}

const BarSpec* BarSet::spec(unsigned index) const {
  for (const BarSpec& b : bars_) {
    if (b.index == index) return &b;
  }
  return nullptr;
}

std::uint64_t BarSet::address(const ConfigSpace& cs, unsigned index) const {
  const BarSpec* b = spec(index);
  if (b == nullptr) return 0;
  std::uint64_t a = cs.read(base_offset_ + 4u * index, 4) & 0xFFFFFFF0u;
  if (b->is_64bit) a |= static_cast<std::uint64_t>(cs.read(base_offset_ + 4u * (index + 1), 4)) << 32;
  return a;
}

std::optional<BarHit> BarSet::decode(const ConfigSpace& cs, std::uint64_t addr) const {
  for (const BarSpec& b : bars_) {
    const std::uint64_t base = address(cs, b.index);
    if (base == 0) continue;
    if (addr >= base && addr - base < b.size) return BarHit{b.index, addr - base};
  }
  return std::nullopt;
}

}  // namespace sohusim::pcie
