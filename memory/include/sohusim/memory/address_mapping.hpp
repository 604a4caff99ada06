#pragma once
// AddressMapping: which stack, channel, pseudo-channel, SID, bank group, bank, row and
// column a byte address lands in.
//
// A mapping is an ordered list of fields from the least significant end of the access
// index (the address divided by the access size; the offset bits below it never select
// anything), plus XOR pairs. Each field takes the next digit of the index:
//   "bank_group"     the whole level (log2(count) bits, or a mixed-radix digit when the
//                    count is not a power of two);
//   "column:2"       the next 2 bits of the level (a level may be split into pieces, low
//                    piece first; a split level must be a power of two).
// Every level must be covered exactly once: a level missing, a level's bits covered
// twice, or an unknown name is an error naming the problem. Mixed-radix digits let the
// stack count (6 stacks of 24 GB) and row count (24 Gb dies) be other than powers of two.
//
// An XOR pair "bank_group^row" replaces the target level's value by value ^ (source's
// low bits), spreading rows that would collide in one bank (a permutation: decode stays
// one-to-one and encode() inverts it). Targets must be powers of two.
//
// Presets by name (LSB first):
//   default       column:1, pseudo_channel, channel, stack, bank_group, column, bank, sid, row
//                 A sequential stream puts 64 B (two accesses of one row) in a pseudo-
//                 channel, then visits every pseudo-channel of every stack before reusing
//                 one, then walks the bank groups (so column commands alternate bank groups
//                 at tCCD_S) and a whole row of each bank before the next bank, so a bank's
//                 row change overlaps the other bank groups' transfers. The 64-B pair gives
//                 a 2 KiB block one ACT per two accesses in each pseudo-channel.
//   RoBaBgCoPcCh  channel, pseudo_channel, column, bank_group, bank, sid, row, stack
//                 DRAMSys-style row-interleaved naming read MSB first (stack above all).
//   single-pc     bank_group, column, bank, sid, row, pseudo_channel, channel, stack
//                 A stream stays in one pseudo-channel for its whole capacity: used to
//                 show the bandwidth collapse to 1/32 of a stack's peak.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {

struct DecodedAddress {
  std::uint32_t stack = 0;
  std::uint32_t channel = 0;
  std::uint32_t pseudo_channel = 0;
  std::uint32_t sid = 0;
  std::uint32_t bank_group = 0;
  std::uint32_t bank = 0;  // within its bank group
  std::uint32_t row = 0;
  std::uint32_t column = 0;  // in accesses

  std::uint32_t get(DramLevel level) const;
  void set(DramLevel level, std::uint32_t value);
  bool operator==(const DecodedAddress& o) const;
};

class AddressMapping {
 public:
  struct Piece {
    DramLevel level;
    std::uint32_t bits;        // bits taken from the index; 0 for a mixed-radix digit
    std::uint64_t count;       // the digit's radix (2^bits, or the level's count)
    std::uint32_t dest_shift;  // where the piece lands within the level's value
  };
  struct XorPair {
    DramLevel target;
    DramLevel source;
    std::uint32_t mask;  // target count - 1
  };

  /// Builds and validates; throws std::invalid_argument naming the problem
  /// ("mapping field `bnak` is unknown; allowed: ...", "level `row` is not covered", ...).
  AddressMapping(std::vector<std::string> fields, std::vector<std::string> xors, const DramOrganization& org);

  /// A named preset (see above); throws std::invalid_argument listing the names.
  static AddressMapping preset(std::string_view name, const DramOrganization& org);
  static const std::vector<std::string>& preset_names();
  static std::vector<std::string> preset_fields(std::string_view name);

  /// The levels whose count must be a power of two for these fields and XOR pairs
  /// (split levels and XOR targets/sources), without validating anything else.
  static std::vector<DramLevel> levels_needing_power_of_two(const std::vector<std::string>& fields,
                                                            const std::vector<std::string>& xors);

  /// Precondition: addr < capacity (the caller checks; DramSystem does).
  DecodedAddress decode(std::uint64_t addr) const {
    std::uint64_t x = addr >> offset_bits_;
    DecodedAddress d;
    std::uint32_t* slot[kDramLevelCount] = {&d.stack, &d.channel, &d.pseudo_channel, &d.sid, &d.bank_group,
                                            &d.bank,  &d.row,     &d.column};
    for (const Piece& p : pieces_) {
      std::uint64_t digit;
      if (p.bits > 0 || p.count == 1) {
        digit = x & (p.count - 1);
        x >>= p.bits;
      } else {
        digit = x % p.count;
        x /= p.count;
      }
      *slot[static_cast<std::size_t>(p.level)] |= static_cast<std::uint32_t>(digit << p.dest_shift);
    }
    for (const XorPair& xp : xors_) {
      *slot[static_cast<std::size_t>(xp.target)] ^= *slot[static_cast<std::size_t>(xp.source)] & xp.mask;
    }
    return d;
  }
  /// The inverse of decode(): the lowest byte address of that access.
  std::uint64_t encode(const DecodedAddress& d) const;

  const std::vector<Piece>& pieces() const { return pieces_; }
  const std::vector<XorPair>& xors() const { return xors_; }
  std::uint32_t offset_bits() const { return offset_bits_; }
  /// "pseudo_channel, channel, stack, bank_group, column, bank, sid, row; xor bank_group^row"
  std::string describe() const;

 private:
  DramOrganization org_;
  std::vector<Piece> pieces_;
  std::vector<XorPair> xors_;
  std::uint32_t offset_bits_ = 0;
};

}  // namespace sohusim::memory
