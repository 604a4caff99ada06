#include "sohusim/memory/address_mapping.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace sohusim::memory {

namespace {

constexpr std::array<DramLevel, kDramLevelCount> kAllLevels = {
    DramLevel::Stack,     DramLevel::Channel, DramLevel::PseudoChannel, DramLevel::Sid,
    DramLevel::BankGroup, DramLevel::Bank,    DramLevel::Row,           DramLevel::Column};

bool is_pow2(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

std::uint32_t log2u(std::uint64_t v) {
  std::uint32_t n = 0;
  while ((std::uint64_t{1} << n) < v) ++n;
  return n;
}

std::string allowed_names() {
  std::string out;
  for (DramLevel l : kAllLevels) {
    if (!out.empty()) out += ", ";
    out += level_name(l);
  }
  return out;
}

std::optional<DramLevel> parse_level(std::string_view name) {
  for (DramLevel l : kAllLevels) {
    if (level_name(l) == name) return l;
  }
  return std::nullopt;
}

DramLevel require_level(std::string_view name, std::string_view where) {
  if (auto l = parse_level(name)) return *l;
  throw std::invalid_argument(std::string(where) + " `" + std::string(name) +
                              "` is not a level; allowed: " + allowed_names());
}

struct FieldText {
  DramLevel level;
  std::optional<std::uint32_t> bits;  // absent: the rest of the level
};

FieldText parse_field(const std::string& text) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  FieldText f{require_level(name, "mapping field"), std::nullopt};
  if (colon != std::string::npos) {
    const std::string num = text.substr(colon + 1);
    std::uint32_t bits = 0;
    bool ok = !num.empty() && num.size() < 3;
    for (char c : num) ok = ok && c >= '0' && c <= '9';
    if (ok) bits = static_cast<std::uint32_t>(std::stoul(num));
    if (!ok || bits == 0) {
      throw std::invalid_argument("mapping field `" + text + "`: the bit count after ':' must be 1 .. 63");
    }
    f.bits = bits;
  }
  return f;
}

std::pair<DramLevel, DramLevel> parse_xor(const std::string& text) {
  const auto caret = text.find('^');
  if (caret == std::string::npos) {
    throw std::invalid_argument("xor pair `" + text + "` must read target^source, e.g. bank_group^row");
  }
  const DramLevel target = require_level(text.substr(0, caret), "xor target");
  const DramLevel source = require_level(text.substr(caret + 1), "xor source");
  if (target == source) throw std::invalid_argument("xor pair `" + text + "` XORs a level with itself");
  return {target, source};
}

}  // namespace

std::uint32_t DecodedAddress::get(DramLevel level) const {
  switch (level) {
    case DramLevel::Stack:
      return stack;
    case DramLevel::Channel:
      return channel;
    case DramLevel::PseudoChannel:
      return pseudo_channel;
    case DramLevel::Sid:
      return sid;
    case DramLevel::BankGroup:
      return bank_group;
    case DramLevel::Bank:
      return bank;
    case DramLevel::Row:
      return row;
    case DramLevel::Column:
      return column;
  }
  return 0;
}

void DecodedAddress::set(DramLevel level, std::uint32_t value) {
  switch (level) {
    case DramLevel::Stack:
      stack = value;
      break;
    case DramLevel::Channel:
      channel = value;
      break;
    case DramLevel::PseudoChannel:
      pseudo_channel = value;
      break;
    case DramLevel::Sid:
      sid = value;
      break;
    case DramLevel::BankGroup:
      bank_group = value;
      break;
    case DramLevel::Bank:
      bank = value;
      break;
    case DramLevel::Row:
      row = value;
      break;
    case DramLevel::Column:
      column = value;
      break;
  }
}

bool DecodedAddress::operator==(const DecodedAddress& o) const {
  return stack == o.stack && channel == o.channel && pseudo_channel == o.pseudo_channel && sid == o.sid &&
         bank_group == o.bank_group && bank == o.bank && row == o.row && column == o.column;
}

AddressMapping::AddressMapping(std::vector<std::string> fields, std::vector<std::string> xors,
                               const DramOrganization& org)
    : org_(org) {
  const std::uint32_t access = org.access_bytes();
  if (!is_pow2(access)) {
    throw std::invalid_argument("the access size (dq_bits x burst_length / 8 = " + std::to_string(access) +
                                " B) must be a power of two");
  }
  offset_bits_ = log2u(access);

  std::vector<FieldText> parsed;
  for (const std::string& f : fields) parsed.push_back(parse_field(f));

  // Per level: explicit bits taken, whether a whole (rest-of-level) piece appears.
  std::array<std::uint32_t, kDramLevelCount> explicit_bits{};
  std::array<int, kDramLevelCount> whole_pieces{};
  std::array<bool, kDramLevelCount> mentioned{};
  for (const FieldText& f : parsed) {
    const auto i = static_cast<std::size_t>(f.level);
    mentioned[i] = true;
    if (f.bits) {
      explicit_bits[i] += *f.bits;
    } else {
      ++whole_pieces[i];
    }
  }
  for (DramLevel l : kAllLevels) {
    const auto i = static_cast<std::size_t>(l);
    const std::uint64_t count = org.count(l);
    const std::string name(level_name(l));
    if (count == 0) throw std::invalid_argument("level `" + name + "` has a count of 0");
    if (!mentioned[i]) {
      if (count == 1) continue;  // nothing to select
      throw std::invalid_argument("level `" + name + "` (" + std::to_string(count) +
                                  ") is not covered by the mapping fields");
    }
    if (whole_pieces[i] > 1) {
      throw std::invalid_argument("level `" + name + "` appears more than once without a bit count; write `" + name +
                                  ":N` for all but one piece");
    }
    if (explicit_bits[i] > 0 && !is_pow2(count)) {
      throw std::invalid_argument("level `" + name + "` is split into pieces, so its count (" + std::to_string(count) +
                                  ") must be a power of two");
    }
    if (explicit_bits[i] > 0) {
      const std::uint32_t have = log2u(count);
      if (explicit_bits[i] > have || (whole_pieces[i] == 0 && explicit_bits[i] != have)) {
        throw std::invalid_argument("level `" + name + "` has " + std::to_string(have) +
                                    " bits but the mapping fields cover " + std::to_string(explicit_bits[i]) +
                                    (whole_pieces[i] ? " plus the rest" : "") + "; each bit must be covered once");
      }
    }
  }

  std::array<std::uint32_t, kDramLevelCount> shift{};
  for (const FieldText& f : parsed) {
    const auto i = static_cast<std::size_t>(f.level);
    const std::uint64_t count = org.count(f.level);
    Piece p{f.level, 0, 1, shift[i]};
    if (f.bits) {
      p.bits = *f.bits;
      p.count = std::uint64_t{1} << p.bits;
    } else if (is_pow2(count)) {
      p.bits = log2u(count) - explicit_bits[i];
      p.count = std::uint64_t{1} << p.bits;
    } else {
      p.bits = 0;  // a mixed-radix digit
      p.count = count;
    }
    shift[i] += p.bits;
    if (p.count > 1) pieces_.push_back(p);
  }

  for (const std::string& x : xors) {
    const auto [target, source] = parse_xor(x);
    const std::uint64_t count = org.count(target);
    if (!is_pow2(count)) {
      throw std::invalid_argument("xor pair `" + x + "`: the target level's count (" + std::to_string(count) +
                                  ") must be a power of two");
    }
    xors_.push_back({target, source, static_cast<std::uint32_t>(count - 1)});
  }
}

const std::vector<std::string>& AddressMapping::preset_names() {
  static const std::vector<std::string> names = {"default", "RoBaBgCoPcCh", "single-pc"};
  return names;
}

std::vector<std::string> AddressMapping::preset_fields(std::string_view name) {
  if (name == "default") {
    return {"column:1", "pseudo_channel", "channel", "stack", "bank_group", "column", "bank", "sid", "row"};
  }
  if (name == "RoBaBgCoPcCh") {
    return {"channel", "pseudo_channel", "column", "bank_group", "bank", "sid", "row", "stack"};
  }
  if (name == "single-pc") {
    return {"bank_group", "column", "bank", "sid", "row", "pseudo_channel", "channel", "stack"};
  }
  std::string list;
  for (const std::string& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown address mapping preset `" + std::string(name) + "`; allowed: " + list);
}

AddressMapping AddressMapping::preset(std::string_view name, const DramOrganization& org) {
  return AddressMapping(preset_fields(name), {}, org);
}

std::vector<DramLevel> AddressMapping::levels_needing_power_of_two(const std::vector<std::string>& fields,
                                                                   const std::vector<std::string>& xors) {
  std::vector<DramLevel> out;
  const auto add = [&](DramLevel l) {
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  };
  for (const std::string& f : fields) {
    const auto colon = f.find(':');
    if (colon == std::string::npos) continue;
    if (auto l = parse_level(f.substr(0, colon))) add(*l);
  }
  for (const std::string& x : xors) {
    const auto caret = x.find('^');
    if (caret == std::string::npos) continue;
    if (auto l = parse_level(x.substr(0, caret))) add(*l);
  }
  return out;
}

std::uint64_t AddressMapping::encode(const DecodedAddress& in) const {
  DecodedAddress d = in;
  for (auto it = xors_.rbegin(); it != xors_.rend(); ++it) {
    d.set(it->target, d.get(it->target) ^ (d.get(it->source) & it->mask));
  }
  std::uint64_t x = 0;
  for (auto it = pieces_.rbegin(); it != pieces_.rend(); ++it) {
    const std::uint64_t value = d.get(it->level);
    const std::uint64_t digit = it->bits > 0 ? (value >> it->dest_shift) & (it->count - 1) : value;
    x = x * it->count + digit;
  }
  return x << offset_bits_;
}

std::string AddressMapping::describe() const {
  std::string out;
  for (const Piece& p : pieces_) {
    if (!out.empty()) out += ", ";
    out += level_name(p.level);
    if (p.bits > 0 && (std::uint64_t{1} << p.bits) != org_.count(p.level)) out += ":" + std::to_string(p.bits);
  }
  for (const XorPair& x : xors_) {
    out += "; xor ";
    out += level_name(x.target);
    out += "^";
    out += level_name(x.source);
  }
  return out;
}

}  // namespace sohusim::memory
