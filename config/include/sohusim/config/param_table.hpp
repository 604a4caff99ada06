// sohusim/config/param_table.hpp — a parameter set stated once.
//
// A ParamTable<T> lists the configuration keys a struct T is loaded from, one row per key:
// its name below the table's section, the member it fills (or none, for a key the loader's
// own code reads), its default, range, unit and description. Everything else follows from
// that one list:
//
//   * the schema:     T::params().declare(schema) declares every row as a parameter;
//   * the defaults:   T() { params().set_defaults(*this); } gives each member its row's
//                     default, so the struct and `sohusim config schema` cannot disagree;
//   * the loading:    T::params().load(config, object) reads every row into its member.
//
//   const ParamTable<SramParams>& SramParams::params() {
//     using P = config::ParamTable<SramParams>;
//     static const P table("sram", "on-chip SRAM scratchpad", {
//         P::uinteger("banks", &SramParams::banks, 64, 1, 4096, "banks"),
//         P::uinteger("latency", &SramParams::latency_cycles, 4, 0, 1000, "cycles to the data").unit("cycles"),
//         P::section("port", "one port of a bank"),  // the rows after it are sram.port.*
//         P::quantity("width", &SramParams::access_width, Dimension::Bytes, "64 B", "1 B", "4 KiB", "bytes")
//             .bare_number(),
//     });
//     return table;
//   }
//
// The modifiers after a row (unit, bare_number, optional, scale) are those of
// Schema::Section, plus scale() for a member held in another unit than the SI one. An
// optional row is declared without a default (unset unless a file sets it) and loaded only
// when set; its default is still the member's default, and the loader derives the value
// when the key is unset (hbm.timing.tRFCab from the die density).
//
// Loading converts as a hand-written loader would: integers with static_cast to the
// member's type, quantities as SI value x scale, enumerations through the row's list of
// (choice, value) pairs. Tables are built once (a function-local static) and are not
// changed afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sohusim/config/config.hpp"
#include "sohusim/config/config_schema.hpp"
#include "sohusim/config/units.hpp"

namespace sohusim::config {

template <class T>
class ParamTable {
 public:
  class Row {
   public:
    /// The unit users see (see ParamSpec::unit).
    Row&& unit(std::string_view unit) && {
      spec_.unit = std::string(unit);
      return std::move(*this);
    }
    /// Quantities: a bare number means the SI base unit.
    Row&& bare_number() && {
      spec_.bare_number = true;
      return std::move(*this);
    }
    /// Declared without a default and loaded only when set; the member keeps the row's default.
    Row&& optional() && {
      optional_ = true;
      return std::move(*this);
    }
    /// Quantities: the member holds the SI value times `factor` (tCK in ps: 1e12).
    Row&& scale(double factor) && {
      scale_ = factor;
      return std::move(*this);
    }

    /// The full key ("hbm.timing.tRC"), type, default, range, unit and description.
    const ParamSpec& spec() const { return spec_; }
    bool is_section() const { return section_; }
    bool is_optional() const { return optional_; }
    /// Whether the row fills a member (else only the loader's own code reads the key).
    bool has_member() const { return static_cast<bool>(get_); }
    /// The member's value in `object`, in the row's type (the choice name for an enumeration,
    /// the SI value for a quantity). Precondition: has_member().
    ParamValue value(const T& object) const {
      ParamValue v = get_(object);
      if (scale_ != 1.0) v = std::get<double>(v) / scale_;
      return v;
    }

   private:
    friend class ParamTable;
    void set(T& object, const ParamValue& v) const {
      set_(object, scale_ != 1.0 ? ParamValue(std::get<double>(v) * scale_) : v);
    }

    ParamSpec spec_;
    std::function<void(T&, const ParamValue&)> set_;  // empty: no member
    std::function<ParamValue(const T&)> get_;
    double scale_ = 1.0;
    bool section_ = false;
    bool optional_ = false;
  };

  /// Rows named below `prefix` ("hbm.timing"); a section() row moves the rows after it
  /// one level down, to prefix.name.
  ParamTable(std::string_view prefix, std::string_view description, std::vector<Row> rows)
      : prefix_(prefix), description_(description), rows_(std::move(rows)) {
    std::string path = prefix_;
    for (Row& row : rows_) {
      if (row.section_) {
        path = prefix_ + "." + row.spec_.key;
        row.spec_.key = path;
      } else {
        row.spec_.key = path + "." + row.spec_.key;
      }
    }
  }

  // ---- rows ----------------------------------------------------------------------------
  // `member` is a pointer to a member of T, or nullptr for a key without one.

  /// A sub-section: the rows after it are named below prefix.name.
  static Row section(std::string_view name, std::string_view description) {
    Row row = make(name, ParamType::String, description);
    row.section_ = true;
    return row;
  }

  template <class Member>
  static Row boolean(std::string_view name, Member member, bool default_value, std::string_view description) {
    Row row = make(name, ParamType::Bool, description);
    row.spec_.default_value = default_value;
    bind<bool>(row, member);
    return row;
  }

  template <class Member>
  static Row uinteger(std::string_view name, Member member, std::uint64_t default_value, std::uint64_t min,
                      std::uint64_t max, std::string_view description) {
    Row row = make(name, ParamType::UInt, description);
    row.spec_.default_value = default_value;
    row.spec_.min = min;
    row.spec_.max = max;
    bind<std::uint64_t>(row, member);
    return row;
  }

  template <class Member>
  static Row real(std::string_view name, Member member, double default_value, double min, double max,
                  std::string_view description) {
    Row row = make(name, ParamType::Real, description);
    row.spec_.default_value = default_value;
    row.spec_.min = min;
    row.spec_.max = max;
    bind<double>(row, member);
    return row;
  }

  /// `default_value`, `min` and `max` are quantity text ("625 ps"), as Schema::Section::quantity.
  template <class Member>
  static Row quantity(std::string_view name, Member member, Dimension dimension, std::string_view default_value,
                      std::string_view min, std::string_view max, std::string_view description) {
    Row row = make(name, ParamType::Quantity, description);
    row.spec_.dimension = dimension;
    const auto read = [&](std::string_view text) -> std::optional<ParamValue> {
      if (text.empty()) return std::nullopt;
      try {
        return parse_quantity(text, dimension, true);
      } catch (const UnitError& error) {
        throw std::logic_error("config schema: " + std::string(name) + ": " + error.what());
      }
    };
    row.spec_.default_value = read(default_value);
    row.spec_.min = read(min);
    row.spec_.max = read(max);
    bind<double>(row, member);
    return row;
  }

  template <class Member>
  static Row string(std::string_view name, Member member, std::string_view default_value,
                    std::string_view description) {
    Row row = make(name, ParamType::String, description);
    row.spec_.default_value = std::string(default_value);
    bind<std::string>(row, member);
    return row;
  }

  /// `choices`: each choice as written in a file and the member's value for it, in the
  /// order users see them.
  template <class E>
  static Row enumeration(std::string_view name, E T::*member, std::string_view default_value,
                         std::vector<std::pair<std::string, E>> choices, std::string_view description) {
    Row row = make(name, ParamType::Enum, description);
    row.spec_.default_value = std::string(default_value);
    for (const auto& choice : choices) row.spec_.choices.push_back(choice.first);
    const std::string key(name);
    row.set_ = [member, choices, key](T& object, const ParamValue& v) {
      const std::string& text = std::get<std::string>(v);
      for (const auto& choice : choices) {
        if (choice.first == text) {
          object.*member = choice.second;
          return;
        }
      }
      throw std::logic_error("config parameter " + key + ": no value for the choice \"" + text + "\"");
    };
    row.get_ = [member, choices, key](const T& object) -> ParamValue {
      for (const auto& choice : choices) {
        if (choice.second == object.*member) return choice.first;
      }
      throw std::logic_error("config parameter " + key + ": a value no choice names");
    };
    return row;
  }

  // ---- use -----------------------------------------------------------------------------

  /// Declares the section(s) and every row in `schema`, in row order.
  void declare(Schema& schema) const {
    schema.section(prefix_, description_);
    for (const Row& row : rows_) {
      if (row.section_) {
        schema.section(row.spec_.key, row.spec_.description);
        continue;
      }
      ParamSpec spec = row.spec_;
      if (row.optional_) {
        if (spec.default_value) {
          const std::string problem = spec.check(*spec.default_value);
          if (!problem.empty()) throw std::logic_error("config schema: " + spec.key + ": default: " + problem);
        }
        spec.default_value.reset();
      }
      schema.add(std::move(spec));
    }
  }

  /// Sets every member a row fills to the row's default.
  void set_defaults(T& object) const {
    for (const Row& row : rows_) {
      if (row.has_member() && row.spec_.default_value) row.set(object, *row.spec_.default_value);
    }
  }

  /// Sets every member a row fills from `config` (an optional row only when its key is
  /// set). Throws what Config's getters throw for a key without a value.
  void load(const Config& config, T& object) const {
    for (const Row& row : rows_) {
      if (!row.has_member() || (row.optional_ && !config.has(row.spec_.key))) continue;
      row.set(object, read(config, row.spec_));
    }
  }

  const std::string& prefix() const { return prefix_; }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  static Row make(std::string_view name, ParamType type, std::string_view description) {
    Row row;
    row.spec_.key = std::string(name);
    row.spec_.type = type;
    row.spec_.description = std::string(description);
    return row;
  }

  // Connects a row to its member: `V` is the ParamValue alternative of the row's type.
  template <class V, class Member>
  static void bind(Row& row, Member member) {
    if constexpr (!std::is_null_pointer_v<Member>) {
      row.set_ = [member](T& object, const ParamValue& v) {
        using M = std::remove_reference_t<decltype(object.*member)>;
        object.*member = static_cast<M>(std::get<V>(v));
      };
      row.get_ = [member](const T& object) -> ParamValue { return static_cast<V>(object.*member); };
    }
  }

  static ParamValue read(const Config& config, const ParamSpec& spec) {
    switch (spec.type) {
      case ParamType::Bool:
        return config.get_bool(spec.key);
      case ParamType::UInt:
        return config.get_uint(spec.key);
      case ParamType::Real:
        return config.get_double(spec.key);
      case ParamType::Quantity:
        return config.get_quantity(spec.key);
      case ParamType::String:
      case ParamType::Enum:
        return config.get_string(spec.key);
      default:
        throw std::logic_error("config parameter " + spec.key + ": a table row of this type cannot be loaded");
    }
  }

  std::string prefix_;
  std::string description_;
  std::vector<Row> rows_;
};

}  // namespace sohusim::config
