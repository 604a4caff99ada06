// sohusim/config/config_schema.hpp — the parameters a configuration may hold.
//
// A schema is a list of declared parameters addressed by dotted key paths
// ("hbm.timing.tCK"). Each parameter has a type, a default, an allowed range, a one-line
// description and the unit users see. Like gem5's Params, parameters are declared next to
// the object that uses them: each layer (sim, memory, pcie, models, ...) has a function
// returning its Schema, and the tool merges them into one before loading any file.
//
// Declaring parameters reads as a table:
//
//   Schema schema;
//   schema.section("hbm.timing", "HBM3E timing (JESD238A speed bin 6400)")
//       .quantity("tCK", Dimension::Time, "312.5 ps", "200 ps", "2 ns", "clock period").unit("ps")
//       .quantity("tRC", Dimension::Time, "48 ns", "30 ns", "100 ns", "row cycle time")
//       .integer("banks", 16, 1, 64, "banks per pseudo channel");
//   schema.section("hbm")
//       .enumeration("page_policy", "open", {"open", "closed"}, "row buffer policy")
//       .quantity("capacity", Dimension::Bytes, "24 GiB", "stack capacity").bare_number();
//
// Each declarator adds one parameter to the section; the modifiers that follow it (unit,
// bare_number, required, optional) apply to the parameter declared just before.
//
// Two kinds of keys hold more than one fixed parameter:
//
// * Open maps. A parameter named "*" stands for any child name: after
//     schema.section("sim.clocks").quantity("*", Dimension::Frequency, "", "1 MHz", "10 GHz",
//                                           "frequency of a clock domain")
//   a file may set `sim.clocks.dma: 800 MHz`. Config::keys_under("sim.clocks") lists the
//   names present. entry() declares the children present by default. A "*" parameter
//   itself has no default (there is nothing to apply it to). A "*" may also stand for a
//   section name: "devices.*.stacks" declares a map of sections.
// * Lists of sections. section_list("hosts", host_schema, ...) accepts a YAML sequence of
//   maps, each validated against `host_schema`; Config::section_list("hosts") returns one
//   Config per element. An absent list is empty.
//
// Checks across parameters (tRC >= tRAS + tRP) are added with add_check(); they run after
// every key has been validated, and only when that found no error, so a check may read any
// parameter it declared without guarding against missing or mistyped values.
//
// Declaration mistakes (a duplicate key, a default outside its range, an unknown unit) are
// programming errors and throw std::logic_error at declaration time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sohusim/config/config_error.hpp"
#include "sohusim/config/units.hpp"

namespace sohusim::config {

class Config;
class Schema;

enum class ParamType {
  Bool,
  Int,   // int64
  UInt,  // uint64
  Real,  // double
  String,
  Enum,      // a string from a fixed list of choices
  Quantity,  // a double in the SI base unit of its Dimension
  StringList,
  IntList,      // int64 elements
  SectionList,  // a sequence of maps, each validated against an element schema
};

/// A parameter's value. The alternative follows the type: bool; int64_t for Int;
/// uint64_t for UInt; double for Real and Quantity (SI); std::string for String and Enum;
/// the vectors for the lists. Section lists have no ParamValue (see Config::section_list).
using ParamValue = std::variant<bool, std::int64_t, std::uint64_t, double, std::string, std::vector<std::string>,
                                std::vector<std::int64_t>>;

/// Checks a resolved configuration as a whole and appends what it finds wrong; see
/// Config::diagnose() for pointing a diagnostic at the file and line of a key.
using ConfigCheck = std::function<void(const Config&, std::vector<ConfigDiagnostic>&)>;

struct ParamSpec {
  std::string key;  // dotted path; a "*" segment matches any name
  ParamType type = ParamType::String;
  Dimension dimension = Dimension::None;  // Quantity only
  /// Absent: the parameter is required (if `required`) or simply unset until a file sets it.
  std::optional<ParamValue> default_value;
  /// Inclusive bounds, same alternative as the value (for IntList: of each element; for
  /// Quantity: in SI). Absent means unbounded on that side.
  std::optional<ParamValue> min;
  std::optional<ParamValue> max;
  std::vector<std::string> choices;  // Enum only
  std::string description;           // one line
  /// The unit users see. For a quantity, values and ranges are printed in it (it must be a
  /// unit of the dimension; empty picks the best prefix per value). For other numbers it
  /// is a label ("cycles").
  std::string unit;
  bool required = false;
  /// A quantity may be written as a bare number, meaning its SI base unit (4096 -> 4096 B).
  bool bare_number = false;
  std::shared_ptr<const Schema> element_schema;  // SectionList only

  struct Parsed {
    std::optional<ParamValue> value;  // absent on error
    std::string error;                // e.g. `expected an integer, got "abc"`
    std::string allowed;              // e.g. "1 .. 64"
  };

  /// Parses one scalar as written in a file or on the command line and checks its range.
  /// For a list type it parses one element and returns a one-element list.
  Parsed parse(std::string_view text) const;

  /// Checks a value against choices and range; returns the error (empty when fine).
  std::string check(const ParamValue& value) const;

  /// The value as a user would write it: "1.5 GHz", "16", "fast", "[all, hbm]".
  std::string format(const ParamValue& value) const;

  /// What a value must look like: "an integer", `a frequency such as "1.5 GHz" (units: ...)`.
  std::string expected() const;

  /// The allowed range or choices, in the parameter's unit: "30 ns .. 100 ns", ">= 0",
  /// "detailed, fast"; empty when anything of the right type goes.
  std::string allowed() const;
};

class Schema {
 public:
  class Section;

  /// The key segment that declares an open map (or a map of sections).
  static constexpr std::string_view kAnyName = "*";

  /// A builder declaring parameters under `path` ("" for the top level).
  Section section(std::string_view path, std::string_view description = {});

  /// Adds a fully formed parameter; what the Section declarators call.
  Schema& add(ParamSpec spec);

  /// Adds a check run on every resolved Config of this schema (for an element schema of
  /// a section list: on every element).
  Schema& add_check(ConfigCheck check);

  /// Adds the parameters, section descriptions and checks of another layer's schema.
  /// A key declared by both is a std::logic_error.
  Schema& merge(const Schema& other);

  /// The parameter a concrete key path refers to: an exact declaration, else a "*" one.
  const ParamSpec* find(std::string_view key) const;

  /// Whether `path` names a section, i.e. some parameter lies below it.
  bool is_section(std::string_view path) const;

  /// The declared child names of a section, in declaration order ("*" included).
  std::vector<std::string> child_names(std::string_view section) const;

  /// The description given to section(); empty if none.
  std::string section_description(std::string_view path) const;

  const std::vector<ParamSpec>& params() const noexcept { return params_; }
  const std::vector<ConfigCheck>& checks() const noexcept { return checks_; }

 private:
  std::vector<ParamSpec> params_;
  std::map<std::string, std::size_t, std::less<>> index_;  // exact keys
  std::vector<std::size_t> wildcards_;                     // params with a "*" segment
  std::map<std::string, std::string, std::less<>> section_descriptions_;
  std::vector<ConfigCheck> checks_;
};

/// The candidate closest to `word` by edit distance (a transposition counts as one edit),
/// if it is close enough to be a plausible typo; what "did you mean" suggestions use.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Declares parameters under one section path. Holds a pointer to its Schema: use it
/// within the statement that created it, not after the Schema moved.
class Schema::Section {
 public:
  Section(Schema& schema, const std::string& prefix);

  Section& boolean(std::string_view name, bool default_value, std::string_view description);

  Section& integer(std::string_view name, std::int64_t default_value, std::string_view description);
  Section& integer(std::string_view name, std::int64_t default_value, std::int64_t min, std::int64_t max,
                   std::string_view description);

  Section& uinteger(std::string_view name, std::uint64_t default_value, std::string_view description);
  Section& uinteger(std::string_view name, std::uint64_t default_value, std::uint64_t min, std::uint64_t max,
                    std::string_view description);

  Section& real(std::string_view name, double default_value, std::string_view description);
  Section& real(std::string_view name, double default_value, double min, double max, std::string_view description);

  Section& string(std::string_view name, std::string_view default_value, std::string_view description);

  Section& enumeration(std::string_view name, std::string_view default_value, std::vector<std::string> choices,
                       std::string_view description);

  /// `default_value`, `min` and `max` are quantity text ("3 GHz"); an empty default leaves
  /// the parameter unset, an empty bound leaves that side open.
  Section& quantity(std::string_view name, Dimension dimension, std::string_view default_value,
                    std::string_view description);
  Section& quantity(std::string_view name, Dimension dimension, std::string_view default_value, std::string_view min,
                    std::string_view max, std::string_view description);

  Section& strings(std::string_view name, std::vector<std::string> default_value, std::string_view description);

  Section& integers(std::string_view name, std::vector<std::int64_t> default_value, std::string_view description);
  /// `min` and `max` bound every element.
  Section& integers(std::string_view name, std::vector<std::int64_t> default_value, std::int64_t min, std::int64_t max,
                    std::string_view description);

  /// A YAML sequence of maps, each validated against `element`.
  Section& section_list(std::string_view name, Schema element, std::string_view description);

  /// A child present by default in this section's open map: a copy of the "*" parameter
  /// with `value` (text, as in a file) as its default.
  Section& entry(std::string_view name, std::string_view value, std::string_view description);

  // Modifiers of the parameter declared last.
  Section& unit(std::string_view unit);  // see ParamSpec::unit
  Section& bare_number();                // quantities: accept a number without unit
  Section& required();                   // no default; a missing value is an error
  Section& optional();                   // no default; unset unless a file sets it

  /// A nested section: section("timing") under "hbm" declares "hbm.timing.*" keys.
  Section section(std::string_view name, std::string_view description = {});

 private:
  Section& declare(ParamSpec spec);
  ParamSpec& last();

  Schema* schema_;
  std::string prefix_;  // "" or "a.b." (with the trailing dot)
  std::optional<std::size_t> last_;
};

}  // namespace sohusim::config
