// sohusim/config/units.hpp — physical quantities as people write them in configs.
//
// A quantity is text such as "1.5 GHz", "625 ps", "64 KiB", "819.2 GB/s", "6.4 Gbps",
// "32 GT/s", "350 W", "0.5 pJ" or "80 %". Parsing turns it into a double in the SI base
// unit of its dimension; formatting turns a double back into the text a person would
// write, with the best prefix.
//
//   dimension     base unit   accepted units
//   Time          s           ps, ns, us (also µs), ms, s, fs
//   Frequency     Hz          Hz, kHz (also KHz), MHz, GHz, THz
//   Bytes         B           B; decimal kB (also KB), MB, GB, TB, PB; binary KiB, MiB, GiB, TiB
//   Bandwidth     B/s         B/s, kB/s, MB/s, GB/s, TB/s; binary KiB/s .. TiB/s
//   BitRate       bit/s       bps, kbps, Mbps, Gbps, Tbps; also b/s, kb/s, Mb/s, Gb/s, Tb/s
//   TransferRate  T/s         T/s, kT/s, MT/s, GT/s
//   Power         W           nW, uW, mW, W, kW
//   Energy        J           fJ, pJ, nJ, uJ, mJ, J, kJ
//   Ratio         (1)         %  ("80 %" is 0.8)
//   None          (1)         a bare number
//
// Units are case-sensitive because the case carries meaning ("Mb" is a megabit, "MB" a
// megabyte, "mW" a milliwatt). Rates use decimal prefixes only, as the industry quotes
// them (GB/s, GT/s); sizes accept both, because memory capacities are binary (KiB) and
// device capacities decimal (GB).
//
// Exactness: decimal prefixes are applied to the decimal text, not by multiplying a double,
// so "1.5 GHz" is the double nearest to 1.5e9, exactly what the literal 1.5e9 gives, and
// format_quantity() prints the shortest text that parses back to the very same double.
// Binary prefixes are powers of two, so multiplying and dividing by them is exact.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sohusim::config {

enum class Dimension {
  None,          // a plain number
  Time,          // seconds
  Frequency,     // hertz
  Bytes,         // bytes
  Bandwidth,     // bytes per second
  BitRate,       // bits per second, e.g. per pin of a link
  TransferRate,  // transfers per second (GT/s)
  Power,         // watts
  Energy,        // joules
  Ratio,         // a fraction; written as a percentage
};

/// The dimension as a noun: "time", "frequency", "size in bytes", "bandwidth", ...
std::string_view dimension_name(Dimension dimension);

/// The dimension with its article and an example: `a frequency such as "1.5 GHz"`.
std::string dimension_example(Dimension dimension);

/// The units users are shown for a dimension, smallest first: "Hz, kHz, MHz, GHz".
std::string dimension_units(Dimension dimension);

/// What a parse error says was expected:
/// `a frequency such as "1.5 GHz" (units: Hz, kHz, MHz, GHz)`.
std::string describe_expected(Dimension dimension);

/// The SI base unit of a dimension ("s", "Hz", "B", "B/s", "bit/s", "T/s", "W", "J");
/// empty for None and Ratio.
std::string_view base_unit(Dimension dimension);

/// Whether `unit` is an accepted unit of `dimension` (aliases included).
bool is_unit_of(std::string_view unit, Dimension dimension);

/// Thrown for text that is not a quantity of the expected kind; what() is the full
/// message, e.g. `expected a frequency such as "1.5 GHz" (units: Hz, kHz, MHz, GHz),
/// got a time "5 ns"`.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A parsed quantity: its value in the SI base unit and the dimension its unit implies.
struct Quantity {
  double value = 0.0;
  Dimension dimension = Dimension::None;
};

/// Parses "<number>[ ]<unit>" or a bare number (dimension None). The number may have a
/// sign, a fraction and an exponent ("1.5e3 MHz"). Throws UnitError for malformed numbers,
/// unknown units, and values that do not fit in a double.
Quantity parse_quantity(std::string_view text);

/// Parses text that must be a quantity of `expected`, in its SI base unit. A bare number
/// is taken as SI base units only when `allow_bare_number` is set (a byte count written
/// as 4096, say); for Dimension::None a bare number is the only form. Throws UnitError
/// naming what was expected and what was given.
double parse_quantity(std::string_view text, Dimension expected, bool allow_bare_number = false);

/// Formats an SI value with the prefix that reads best: 1.5e9 Hz -> "1.5 GHz",
/// 65536 B -> "64 KiB", 144e9 B -> "144 GB", 6.25e-10 s -> "625 ps", 0.8 -> "80 %".
/// Sizes use a binary prefix when it needs fewer digits than a decimal one. The number is
/// the shortest text that parses back to exactly `si`.
std::string format_quantity(double si, Dimension dimension);

/// Formats an SI value in a given unit of its dimension ("0.625 ns" for unit "ns"), with
/// the same exact round trip. Throws std::invalid_argument if `unit` is not a unit of
/// `dimension`.
std::string format_quantity(double si, Dimension dimension, std::string_view unit);

}  // namespace sohusim::config
