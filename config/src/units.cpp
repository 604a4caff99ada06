// Parsing and formatting of physical quantities; see units.hpp for the accepted units.
#include "sohusim/config/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <system_error>

namespace sohusim::config {
namespace {

// A unit scales its number by 10^exp10 (decimal prefixes, applied to the text) and then by
// 2^exp2 (binary prefixes, exact in binary floating point). `canonical` units are the ones
// format_quantity() may choose; the others are accepted aliases.
struct UnitDef {
  std::string_view symbol;
  Dimension dimension;
  int exp10;
  int exp2;
  bool canonical;
};

constexpr std::array kUnits{
    // Time
    UnitDef{"fs", Dimension::Time, -15, 0, true},
    UnitDef{"ps", Dimension::Time, -12, 0, true},
    UnitDef{"ns", Dimension::Time, -9, 0, true},
    UnitDef{"us", Dimension::Time, -6, 0, true},
    UnitDef{"\u00b5s", Dimension::Time, -6, 0, false},  // micro sign
    UnitDef{"\u03bcs", Dimension::Time, -6, 0, false},  // Greek mu
    UnitDef{"ms", Dimension::Time, -3, 0, true},
    UnitDef{"s", Dimension::Time, 0, 0, true},
    // Frequency
    UnitDef{"Hz", Dimension::Frequency, 0, 0, true},
    UnitDef{"kHz", Dimension::Frequency, 3, 0, true},
    UnitDef{"KHz", Dimension::Frequency, 3, 0, false},
    UnitDef{"MHz", Dimension::Frequency, 6, 0, true},
    UnitDef{"GHz", Dimension::Frequency, 9, 0, true},
    UnitDef{"THz", Dimension::Frequency, 12, 0, true},
    // Bytes
    UnitDef{"B", Dimension::Bytes, 0, 0, true},
    UnitDef{"kB", Dimension::Bytes, 3, 0, true},
    UnitDef{"KB", Dimension::Bytes, 3, 0, false},
    UnitDef{"MB", Dimension::Bytes, 6, 0, true},
    UnitDef{"GB", Dimension::Bytes, 9, 0, true},
    UnitDef{"TB", Dimension::Bytes, 12, 0, true},
    UnitDef{"PB", Dimension::Bytes, 15, 0, true},
    UnitDef{"KiB", Dimension::Bytes, 0, 10, true},
    UnitDef{"MiB", Dimension::Bytes, 0, 20, true},
    UnitDef{"GiB", Dimension::Bytes, 0, 30, true},
    UnitDef{"TiB", Dimension::Bytes, 0, 40, true},
    // Bandwidth
    UnitDef{"B/s", Dimension::Bandwidth, 0, 0, true},
    UnitDef{"kB/s", Dimension::Bandwidth, 3, 0, true},
    UnitDef{"KB/s", Dimension::Bandwidth, 3, 0, false},
    UnitDef{"MB/s", Dimension::Bandwidth, 6, 0, true},
    UnitDef{"GB/s", Dimension::Bandwidth, 9, 0, true},
    UnitDef{"TB/s", Dimension::Bandwidth, 12, 0, true},
    UnitDef{"KiB/s", Dimension::Bandwidth, 0, 10, false},
    UnitDef{"MiB/s", Dimension::Bandwidth, 0, 20, false},
    UnitDef{"GiB/s", Dimension::Bandwidth, 0, 30, false},
    UnitDef{"TiB/s", Dimension::Bandwidth, 0, 40, false},
    // BitRate
    UnitDef{"bps", Dimension::BitRate, 0, 0, true},
    UnitDef{"kbps", Dimension::BitRate, 3, 0, true},
    UnitDef{"Mbps", Dimension::BitRate, 6, 0, true},
    UnitDef{"Gbps", Dimension::BitRate, 9, 0, true},
    UnitDef{"Tbps", Dimension::BitRate, 12, 0, true},
    UnitDef{"bit/s", Dimension::BitRate, 0, 0, false},
    UnitDef{"b/s", Dimension::BitRate, 0, 0, false},
    UnitDef{"kb/s", Dimension::BitRate, 3, 0, false},
    UnitDef{"Kb/s", Dimension::BitRate, 3, 0, false},
    UnitDef{"Mb/s", Dimension::BitRate, 6, 0, false},
    UnitDef{"Gb/s", Dimension::BitRate, 9, 0, false},
    UnitDef{"Tb/s", Dimension::BitRate, 12, 0, false},
    UnitDef{"kbit/s", Dimension::BitRate, 3, 0, false},
    UnitDef{"Mbit/s", Dimension::BitRate, 6, 0, false},
    UnitDef{"Gbit/s", Dimension::BitRate, 9, 0, false},
    UnitDef{"Tbit/s", Dimension::BitRate, 12, 0, false},
    // TransferRate
    UnitDef{"T/s", Dimension::TransferRate, 0, 0, true},
    UnitDef{"kT/s", Dimension::TransferRate, 3, 0, true},
    UnitDef{"MT/s", Dimension::TransferRate, 6, 0, true},
    UnitDef{"GT/s", Dimension::TransferRate, 9, 0, true},
    // Power
    UnitDef{"nW", Dimension::Power, -9, 0, true},
    UnitDef{"uW", Dimension::Power, -6, 0, true},
    UnitDef{"\u00b5W", Dimension::Power, -6, 0, false},
    UnitDef{"\u03bcW", Dimension::Power, -6, 0, false},
    UnitDef{"mW", Dimension::Power, -3, 0, true},
    UnitDef{"W", Dimension::Power, 0, 0, true},
    UnitDef{"kW", Dimension::Power, 3, 0, true},
    // Energy
    UnitDef{"fJ", Dimension::Energy, -15, 0, true},
    UnitDef{"pJ", Dimension::Energy, -12, 0, true},
    UnitDef{"nJ", Dimension::Energy, -9, 0, true},
    UnitDef{"uJ", Dimension::Energy, -6, 0, true},
    UnitDef{"\u00b5J", Dimension::Energy, -6, 0, false},
    UnitDef{"\u03bcJ", Dimension::Energy, -6, 0, false},
    UnitDef{"mJ", Dimension::Energy, -3, 0, true},
    UnitDef{"J", Dimension::Energy, 0, 0, true},
    UnitDef{"kJ", Dimension::Energy, 3, 0, true},
    // Ratio
    UnitDef{"%", Dimension::Ratio, -2, 0, true},
};

const UnitDef* find_unit(std::string_view symbol) {
  for (const UnitDef& unit : kUnits) {
    if (unit.symbol == symbol) return &unit;
  }
  return nullptr;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// A number split as written: `mantissa` keeps sign, digits and point; `exponent` is the
// value after e/E. `rest` is whatever follows (the unit, possibly after spaces).
struct NumberText {
  std::string mantissa;
  long exponent = 0;
  std::string_view rest;
};

std::optional<NumberText> split_number(std::string_view text) {
  NumberText number;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    if (text[i] == '-') number.mantissa += '-';
    ++i;
  }
  std::size_t digits = 0;
  while (i < text.size() && is_digit(text[i])) {
    number.mantissa += text[i++];
    ++digits;
  }
  if (i < text.size() && text[i] == '.') {
    number.mantissa += text[i++];
    while (i < text.size() && is_digit(text[i])) {
      number.mantissa += text[i++];
      ++digits;
    }
  }
  if (digits == 0) return std::nullopt;
  // An 'e' starts an exponent only when digits follow; no unit begins with e or E.
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    bool negative = false;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) negative = text[j++] == '-';
    const std::size_t first = j;
    while (j < text.size() && is_digit(text[j])) ++j;
    if (j == first) return std::nullopt;
    // Far beyond any double; the clamp keeps the arithmetic below from overflowing.
    if (j - first > 6) {
      number.exponent = negative ? -999999 : 999999;
    } else {
      long value = 0;
      for (std::size_t k = first; k < j; ++k) value = value * 10 + (text[k] - '0');
      number.exponent = negative ? -value : value;
    }
    i = j;
  }
  number.rest = text.substr(i);
  return number;
}

// Correctly rounded value of mantissa * 10^(exponent + shift10) * 2^shift2.
std::optional<double> number_value(const NumberText& number, int shift10, int shift2) {
  const std::string text = number.mantissa + "e" + std::to_string(number.exponent + shift10);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  value = std::ldexp(value, shift2);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string_view article(Dimension dimension) {
  return dimension == Dimension::Energy ? "an" : "a";
}

// The shortest decimal digits that identify `value` among doubles, and the decimal exponent
// of the first digit: 6.25e-10 -> {"625", -10}.
struct Digits {
  bool negative = false;
  std::string digits;
  int exponent = 0;
};

Digits shortest_digits(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::scientific);
  const std::string_view text(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data()));
  Digits out;
  std::size_t i = 0;
  if (text[i] == '-') {
    out.negative = true;
    ++i;
  }
  for (; i < text.size() && text[i] != 'e'; ++i) {
    if (text[i] != '.') out.digits += text[i];
  }
  out.exponent = std::atoi(std::string(text.substr(i + 1)).c_str());
  return out;
}

// Writes digits * 10^(exponent - shift) as plain decimal text, e.g. {"625", -10} with
// shift -12 -> "625". Falls back to an exponent when plain text would be unreadable.
std::string render_digits(const Digits& d, int shift) {
  const int n = static_cast<int>(d.digits.size());
  const int int_len = d.exponent - shift + 1;  // digits before the decimal point
  std::string out = d.negative ? "-" : "";
  if (d.digits == "0") return out + "0";
  if (int_len > 21 || int_len < -6) {
    out += d.digits.substr(0, 1);
    if (n > 1) out += "." + d.digits.substr(1);
    return out + "e" + std::to_string(d.exponent - shift);
  }
  if (int_len <= 0) {
    return out + "0." + std::string(static_cast<std::size_t>(-int_len), '0') + d.digits;
  }
  if (int_len >= n) {
    return out + d.digits + std::string(static_cast<std::size_t>(int_len - n), '0');
  }
  const auto split = static_cast<std::size_t>(int_len);
  return out + d.digits.substr(0, split) + "." + d.digits.substr(split);
}

std::string format_in(double si, const UnitDef& unit) {
  std::string number;
  if (unit.exp2 != 0) {
    // Dividing by a power of two is exact, so the shortest text of the quotient round-trips.
    number = render_digits(shortest_digits(std::ldexp(si, -unit.exp2)), 0);
  } else {
    number = render_digits(shortest_digits(si), unit.exp10);
  }
  return number + " " + std::string(unit.symbol);
}

// Among the canonical decimal units of a dimension, the largest not above the value.
const UnitDef* best_decimal_unit(int exponent, Dimension dimension) {
  const UnitDef* best = nullptr;
  const UnitDef* smallest = nullptr;
  for (const UnitDef& unit : kUnits) {
    if (unit.dimension != dimension || !unit.canonical || unit.exp2 != 0) continue;
    if (smallest == nullptr || unit.exp10 < smallest->exp10) smallest = &unit;
    if (unit.exp10 <= exponent && (best == nullptr || unit.exp10 > best->exp10)) best = &unit;
  }
  return best != nullptr ? best : smallest;
}

const UnitDef* best_binary_unit(double si) {
  const UnitDef* best = nullptr;
  for (const UnitDef& unit : kUnits) {
    if (unit.dimension != Dimension::Bytes || unit.exp2 == 0) continue;
    if (std::fabs(si) >= std::ldexp(1.0, unit.exp2) && (best == nullptr || unit.exp2 > best->exp2)) {
      best = &unit;
    }
  }
  return best;
}

}  // namespace

std::string_view dimension_name(Dimension dimension) {
  switch (dimension) {
    case Dimension::None:
      return "number";
    case Dimension::Time:
      return "time";
    case Dimension::Frequency:
      return "frequency";
    case Dimension::Bytes:
      return "size";
    case Dimension::Bandwidth:
      return "bandwidth";
    case Dimension::BitRate:
      return "bit rate";
    case Dimension::TransferRate:
      return "transfer rate";
    case Dimension::Power:
      return "power";
    case Dimension::Energy:
      return "energy";
    case Dimension::Ratio:
      return "ratio";
  }
  return "quantity";
}

std::string dimension_example(Dimension dimension) {
  std::string_view example;
  switch (dimension) {
    case Dimension::None:
      example = "1.5";
      break;
    case Dimension::Time:
      example = "120 ns";
      break;
    case Dimension::Frequency:
      example = "1.5 GHz";
      break;
    case Dimension::Bytes:
      example = "64 KiB";
      break;
    case Dimension::Bandwidth:
      example = "819.2 GB/s";
      break;
    case Dimension::BitRate:
      example = "6.4 Gbps";
      break;
    case Dimension::TransferRate:
      example = "32 GT/s";
      break;
    case Dimension::Power:
      example = "350 W";
      break;
    case Dimension::Energy:
      example = "0.5 pJ";
      break;
    case Dimension::Ratio:
      example = "80 %";
      break;
  }
  return std::string(article(dimension)) + " " + std::string(dimension_name(dimension)) + " such as \"" +
         std::string(example) + "\"";
}

std::string dimension_units(Dimension dimension) {
  switch (dimension) {
    case Dimension::None:
      return "";
    case Dimension::Time:
      return "ps, ns, us, ms, s";
    case Dimension::Frequency:
      return "Hz, kHz, MHz, GHz";
    case Dimension::Bytes:
      return "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB";
    case Dimension::Bandwidth:
      return "B/s, kB/s, MB/s, GB/s, TB/s";
    case Dimension::BitRate:
      return "bps, kbps, Mbps, Gbps, Tbps (or b/s .. Tb/s)";
    case Dimension::TransferRate:
      return "T/s, kT/s, MT/s, GT/s";
    case Dimension::Power:
      return "uW, mW, W, kW";
    case Dimension::Energy:
      return "fJ, pJ, nJ, uJ, mJ, J";
    case Dimension::Ratio:
      return "%";
  }
  return "";
}

std::string describe_expected(Dimension dimension) {
  std::string text = dimension_example(dimension);
  const std::string units = dimension_units(dimension);
  if (!units.empty()) text += " (units: " + units + ")";
  return text;
}

std::string_view base_unit(Dimension dimension) {
  switch (dimension) {
    case Dimension::None:
      return "";
    case Dimension::Time:
      return "s";
    case Dimension::Frequency:
      return "Hz";
    case Dimension::Bytes:
      return "B";
    case Dimension::Bandwidth:
      return "B/s";
    case Dimension::BitRate:
      return "bit/s";
    case Dimension::TransferRate:
      return "T/s";
    case Dimension::Power:
      return "W";
    case Dimension::Energy:
      return "J";
    case Dimension::Ratio:
      return "";
  }
  return "";
}

bool is_unit_of(std::string_view unit, Dimension dimension) {
  const UnitDef* def = find_unit(unit);
  return def != nullptr && def->dimension == dimension;
}

namespace {

// Parses a quantity, or says in `reason` why the text is not one.
std::optional<Quantity> try_parse(std::string_view text, std::string& reason) {
  const std::optional<NumberText> number = split_number(text);
  if (!number) {
    reason = "not a number";
    return std::nullopt;
  }
  const std::string_view symbol = trim(number->rest);
  const UnitDef* unit = nullptr;
  if (!symbol.empty()) {
    unit = find_unit(symbol);
    if (unit == nullptr) {
      reason = "unknown unit \"" + std::string(symbol) + "\"";
      return std::nullopt;
    }
  }
  const std::optional<double> value =
      unit == nullptr ? number_value(*number, 0, 0) : number_value(*number, unit->exp10, unit->exp2);
  if (!value) {
    reason = "too large or too small for a double";
    return std::nullopt;
  }
  return Quantity{*value, unit == nullptr ? Dimension::None : unit->dimension};
}

}  // namespace

Quantity parse_quantity(std::string_view text) {
  const std::string_view trimmed = trim(text);
  std::string reason;
  const std::optional<Quantity> quantity = try_parse(trimmed, reason);
  if (!quantity) throw UnitError("\"" + std::string(trimmed) + "\": " + reason);
  return *quantity;
}

double parse_quantity(std::string_view text, Dimension expected, bool allow_bare_number) {
  const std::string_view trimmed = trim(text);
  const std::string shown = "\"" + std::string(trimmed) + "\"";
  const std::string wanted = "expected " + describe_expected(expected);
  std::string reason;
  const std::optional<Quantity> quantity = try_parse(trimmed, reason);
  if (!quantity) throw UnitError(wanted + ", got " + shown + " (" + reason + ")");
  if (quantity->dimension == expected) return quantity->value;
  if (quantity->dimension == Dimension::None) {
    if (allow_bare_number) return quantity->value;
    throw UnitError(wanted + ", got the bare number " + shown + "; write it with a unit");
  }
  throw UnitError(wanted + ", got " + std::string(article(quantity->dimension)) + " " +
                  std::string(dimension_name(quantity->dimension)) + " " + shown);
}

std::string format_quantity(double si, Dimension dimension) {
  if (dimension == Dimension::None) return render_digits(shortest_digits(si), 0);
  const Digits digits = shortest_digits(si);
  const UnitDef* decimal = best_decimal_unit(si == 0.0 ? 0 : digits.exponent, dimension);
  if (dimension == Dimension::Bytes) {
    // A binary prefix wins only when it is the shorter way to say it: 64 KiB, not 65.536 kB;
    // 144 GB, not 134.1104507446289 GiB.
    if (const UnitDef* binary = best_binary_unit(si)) {
      if (shortest_digits(std::ldexp(si, -binary->exp2)).digits.size() < digits.digits.size()) {
        return format_in(si, *binary);
      }
    }
  }
  return format_in(si, *decimal);
}

std::string format_quantity(double si, Dimension dimension, std::string_view unit) {
  const UnitDef* def = find_unit(unit);
  if (def == nullptr || def->dimension != dimension) {
    throw std::invalid_argument("\"" + std::string(unit) + "\" is not a unit of " +
                                std::string(dimension_name(dimension)));
  }
  return format_in(si, *def);
}

}  // namespace sohusim::config
