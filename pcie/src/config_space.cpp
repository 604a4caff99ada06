#include "sohusim/pcie/config_space.hpp"

#include <stdexcept>
#include <string>

namespace sohusim::pcie {

namespace {

std::string hex(std::uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xFu]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

std::uint32_t load(const std::array<std::uint8_t, ConfigSpace::kSize>& a, std::uint32_t offset, unsigned size) {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < size; ++i) v |= static_cast<std::uint32_t>(a[offset + i]) << (8 * i);
  return v;
}

void store(std::array<std::uint8_t, ConfigSpace::kSize>& a, std::uint32_t offset, unsigned size, std::uint32_t v) {
  for (unsigned i = 0; i < size; ++i) a[offset + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

ConfigSpace::ConfigSpace() = default;

void ConfigSpace::check_access(std::uint32_t offset, unsigned size) {
  if (size != 1 && size != 2 && size != 4) {
    throw std::invalid_argument("config space access: size " + std::to_string(size) + " at offset " + hex(offset) +
                                " (sizes 1, 2 and 4 only)");
  }
  if (offset % size != 0) {
    throw std::invalid_argument("config space access: offset " + hex(offset) + " is not aligned to size " +
                                std::to_string(size));
  }
  if (offset >= kSize || offset + size > kSize) {
    throw std::invalid_argument("config space access: offset " + hex(offset) + " size " + std::to_string(size) +
                                " is outside the 4 KiB space");
  }
}

std::uint32_t ConfigSpace::read(std::uint32_t offset, unsigned size) const {
  check_access(offset, size);
  return load(value_, offset, size);
}

void ConfigSpace::write(std::uint32_t offset, unsigned size, std::uint32_t value) {
  check_access(offset, size);
  for (unsigned i = 0; i < size; ++i) {
    const std::uint32_t o = offset + i;
    const auto b = static_cast<std::uint8_t>(value >> (8 * i));
    std::uint8_t v = value_[o];
    v = static_cast<std::uint8_t>((v & ~rw_[o]) | (b & rw_[o]));  // RW bits take the value
    v = static_cast<std::uint8_t>(v & ~(b & rw1c_[o]));           // RW1C bits written 1 clear
    value_[o] = v;
  }
}

void ConfigSpace::define(std::uint32_t offset, unsigned size, std::uint32_t reset_value, std::uint32_t rw,
                         std::uint32_t rw1c, std::uint32_t preserve) {
  check_access(offset, size);
  if ((rw & rw1c) != 0) {
    throw std::invalid_argument("config space register at " + hex(offset) + ": RW and RW1C masks overlap (" +
                                hex(rw & rw1c) + ")");
  }
  store(value_, offset, size, reset_value);
  store(reset_, offset, size, reset_value);
  store(rw_, offset, size, rw);
  store(rw1c_, offset, size, rw1c);
  store(preserve_, offset, size, preserve);
}

void ConfigSpace::hw_write(std::uint32_t offset, unsigned size, std::uint32_t value) {
  check_access(offset, size);
  store(value_, offset, size, value);
}

void ConfigSpace::hw_set_bits(std::uint32_t offset, unsigned size, std::uint32_t bits) {
  check_access(offset, size);
  store(value_, offset, size, load(value_, offset, size) | bits);
}

void ConfigSpace::hw_clear_bits(std::uint32_t offset, unsigned size, std::uint32_t bits) {
  check_access(offset, size);
  store(value_, offset, size, load(value_, offset, size) & ~bits);
}

void ConfigSpace::set_rw_mask(std::uint32_t offset, unsigned size, std::uint32_t rw) {
  check_access(offset, size);
  if ((rw & load(rw1c_, offset, size)) != 0) {
    throw std::invalid_argument("config space register at " + hex(offset) + ": RW mask overlaps RW1C bits");
  }
  store(rw_, offset, size, rw);
}

std::uint32_t ConfigSpace::rw_mask(std::uint32_t offset, unsigned size) const {
  check_access(offset, size);
  return load(rw_, offset, size);
}

void ConfigSpace::reset() {
  for (std::uint32_t o = 0; o < kSize; ++o) {
    value_[o] = static_cast<std::uint8_t>((value_[o] & preserve_[o]) | (reset_[o] & ~preserve_[o]));
  }
}

std::optional<std::uint16_t> ConfigSpace::find_capability(std::uint8_t id) const {
  if ((load(value_, cfg::kStatus, 2) & cfg::kStatCapabilitiesList) == 0) return std::nullopt;
  std::uint32_t ptr = value_[cfg::kCapabilitiesPointer] & 0xFCu;  // bottom two bits reserved
  // At most 48 capabilities fit in 0x40..0xFF (4 bytes each): a longer walk is a loop.
  for (int guard = 0; guard < 48 && ptr >= cfg::kFirstCapability && ptr < cfg::kFirstExtCapability; ++guard) {
    if (value_[ptr] == id) return static_cast<std::uint16_t>(ptr);
    ptr = value_[ptr + 1] & 0xFCu;
  }
  return std::nullopt;
}

std::optional<std::uint16_t> ConfigSpace::find_ext_capability(std::uint16_t id) const {
  std::uint32_t ptr = cfg::kFirstExtCapability;
  // At most (4096 - 256) / 4 = 960 headers fit: a longer walk is a loop.
  for (int guard = 0; guard < 960 && ptr >= cfg::kFirstExtCapability && ptr + 4 <= kSize; ++guard) {
    const std::uint32_t header = load(value_, ptr, 4);
    if (header == 0 || header == 0xFFFFFFFFu) return std::nullopt;  // no extended capabilities
    if ((header & 0xFFFFu) == id) return static_cast<std::uint16_t>(ptr);
    ptr = (header >> 20) & 0xFFCu;
  }
  return std::nullopt;
}

void build_type0_header(ConfigSpace& cs, const Type0HeaderSpec& spec, bool memory_space_writable) {
  cs.define(cfg::kVendorId, 2, spec.vendor_id);
  cs.define(cfg::kDeviceId, 2, spec.device_id);
  const std::uint32_t cmd_rw = (memory_space_writable ? cfg::kCmdMemorySpace : 0u) | cfg::kCmdBusMaster |
                               cfg::kCmdParityErrorResponse | cfg::kCmdSerrEnable | cfg::kCmdInterruptDisable;
  cs.define(cfg::kCommand, 2, 0, cmd_rw);
  const std::uint32_t stat_rw1c = cfg::kStatMasterDataParityError | cfg::kStatSignaledTargetAbort |
                                  cfg::kStatReceivedTargetAbort | cfg::kStatReceivedMasterAbort |
                                  cfg::kStatSignaledSystemError | cfg::kStatDetectedParityError;
  cs.define(cfg::kStatus, 2, 0, 0, stat_rw1c);
  cs.define(cfg::kRevisionId, 1, spec.revision_id);
  cs.define(cfg::kClassCode, 1, spec.class_code & 0xFFu);
  cs.define(cfg::kClassCode + 1, 1, (spec.class_code >> 8) & 0xFFu);
  cs.define(cfg::kClassCode + 2, 1, (spec.class_code >> 16) & 0xFFu);
  cs.define(cfg::kCacheLineSize, 1, 0, 0xFF);
  cs.define(cfg::kHeaderType, 1, 0x00);  // type 0, single function
  cs.define(cfg::kSubsystemVendorId, 2, spec.subsystem_vendor_id);
  cs.define(cfg::kSubsystemId, 2, spec.subsystem_id);
  cs.define(cfg::kCapabilitiesPointer, 1, 0);
  cs.define(cfg::kInterruptLine, 1, 0xFF, 0xFF);  // RW scratch for software
  cs.define(cfg::kInterruptPin, 1, 0);            // no INTx
}

std::uint16_t CapabilityListBuilder::add(std::uint8_t id, unsigned length) {
  const unsigned len = (length + 3u) & ~3u;
  if (length < 2 || next_std_ + len > cfg::kFirstExtCapability) {
    throw std::invalid_argument("capability " + hex(id) + " of length " + std::to_string(length) +
                                " does not fit below 0x100 (next free offset " + hex(next_std_) + ")");
  }
  const std::uint16_t at = next_std_;
  cs_->define(at, 1, id);
  cs_->define(at + 1u, 1, 0);  // next: end of list until another is added
  if (last_std_ == 0) {
    cs_->define(cfg::kCapabilitiesPointer, 1, at);
    cs_->define(cfg::kStatus, 2, cs_->read(cfg::kStatus, 2) | cfg::kStatCapabilitiesList, 0,
                cfg::kStatMasterDataParityError | cfg::kStatSignaledTargetAbort | cfg::kStatReceivedTargetAbort |
                    cfg::kStatReceivedMasterAbort | cfg::kStatSignaledSystemError | cfg::kStatDetectedParityError);
  } else {
    cs_->define(last_std_ + 1u, 1, at);
  }
  last_std_ = at;
  next_std_ = static_cast<std::uint16_t>(at + len);
  return at;
}

std::uint16_t CapabilityListBuilder::add_extended(std::uint16_t id, std::uint8_t version, unsigned length) {
  const unsigned len = (length + 3u) & ~3u;
  if (length < 4 || next_ext_ + len > ConfigSpace::kSize) {
    throw std::invalid_argument("extended capability " + hex(id) + " of length " + std::to_string(length) +
                                " does not fit below 0x1000 (next free offset " + hex(next_ext_) + ")");
  }
  const std::uint16_t at = next_ext_;
  cs_->define(at, 4, static_cast<std::uint32_t>(id) | (static_cast<std::uint32_t>(version & 0xFu) << 16));
  if (last_ext_ != 0) {
    const std::uint32_t prev = cs_->read(last_ext_, 4) & 0x000FFFFFu;
    cs_->define(last_ext_, 4, prev | (static_cast<std::uint32_t>(at) << 20));
  }
  last_ext_ = at;
  next_ext_ = static_cast<std::uint16_t>(at + len);
  return at;
}

}  // namespace sohusim::pcie
