// Parameter declarations: the builder, value parsing and range checks of one parameter.
#include "sohusim/config/config_schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "config_keys.hpp"

namespace sohusim::config {
namespace {

using detail::split_key;

bool valid_segment(std::string_view segment) {
  if (segment == Schema::kAnyName) return true;
  if (segment.empty()) return false;
  return std::all_of(segment.begin(), segment.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool segment_matches(std::string_view pattern, std::string_view name) {
  return pattern == Schema::kAnyName || pattern == name;
}

// Whether the first path.size() segments of `pattern` match `path`.
bool prefix_matches(const std::vector<std::string_view>& pattern, const std::vector<std::string_view>& path) {
  if (pattern.size() < path.size()) return false;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (!segment_matches(pattern[i], path[i])) return false;
  }
  return true;
}

std::vector<std::string_view> split_path(std::string_view path) {
  return path.empty() ? std::vector<std::string_view>{} : split_key(path);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

bool is_digit(char c, int base) {
  if (c >= '0' && c <= '9') return true;
  return base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

// Integer text: optional sign, decimal or 0x-hex digits, '_' allowed between digits
// (1_000_000). Returns the sign-and-digits form from_chars understands, and the base.
std::optional<std::pair<std::string, int>> integer_digits(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    if (text[i] == '-') out += '-';
    ++i;
  }
  int base = 10;
  if (text.size() - i > 2 && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  const std::size_t first = i;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (is_digit(c, base)) {
      out += c;
    } else if (c == '_' && i > first && i + 1 < text.size() && is_digit(text[i - 1], base) &&
               is_digit(text[i + 1], base)) {
      continue;
    } else {
      return std::nullopt;
    }
  }
  if (i == first) return std::nullopt;
  return std::make_pair(out, base);
}

template <typename T>
std::optional<T> parse_integer(std::string_view text, bool& overflow) {
  overflow = false;
  const auto digits = integer_digits(text);
  if (!digits) return std::nullopt;
  const std::string& s = digits->first;
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, digits->second);
  if (ec == std::errc::result_out_of_range) {
    overflow = true;
    return std::nullopt;
  }
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const std::size_t lead = (!text.empty() && text.front() == '-') ? 1 : 0;
  // from_chars also reads "inf" and "nan", which no configuration means.
  if (text.size() <= lead || !(is_digit(text[lead], 10) || text[lead] == '.')) return std::nullopt;
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string format_real(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

// -1, 0, +1 comparing two numbers held in the same alternative.
int compare(const ParamValue& a, const ParamValue& b) {
  return std::visit(
      [&b](const auto& x) -> int {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t> ||
                      std::is_same_v<T, double>) {
          const T& y = std::get<T>(b);
          return x < y ? -1 : (y < x ? 1 : 0);
        } else {
          return 0;
        }
      },
      a);
}

bool holds_type(const ParamValue& value, ParamType type) {
  switch (type) {
    case ParamType::Bool:
      return std::holds_alternative<bool>(value);
    case ParamType::Int:
      return std::holds_alternative<std::int64_t>(value);
    case ParamType::UInt:
      return std::holds_alternative<std::uint64_t>(value);
    case ParamType::Real:
    case ParamType::Quantity:
      return std::holds_alternative<double>(value);
    case ParamType::String:
    case ParamType::Enum:
      return std::holds_alternative<std::string>(value);
    case ParamType::StringList:
      return std::holds_alternative<std::vector<std::string>>(value);
    case ParamType::IntList:
      return std::holds_alternative<std::vector<std::int64_t>>(value);
    case ParamType::SectionList:
      return false;
  }
  return false;
}

// Bounds hold the element type for IntList and the value type otherwise.
bool holds_bound_type(const ParamValue& value, ParamType type) {
  return type == ParamType::IntList ? std::holds_alternative<std::int64_t>(value) : holds_type(value, type);
}

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
// transpositions ("fromat" is one edit from "format").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

[[noreturn]] void declaration_error(std::string_view key, const std::string& what) {
  throw std::logic_error("config schema: `" + std::string(key) + "`: " + what);
}

}  // namespace

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string needle = lower(word);
  // Short words tolerate fewer edits, or every short key would suggest every other.
  const std::size_t tolerance = needle.size() <= 3 ? 1 : needle.size() <= 8 ? 2 : 3;
  std::optional<std::string> best;
  std::size_t best_distance = tolerance + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(needle, lower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

// ---- ParamSpec -------------------------------------------------------------------------

std::string ParamSpec::expected() const {
  switch (type) {
    case ParamType::Bool:
      return "true or false";
    case ParamType::Int:
      return "an integer";
    case ParamType::UInt:
      return "a non-negative integer";
    case ParamType::Real:
      return "a number";
    case ParamType::String:
      return "a string";
    case ParamType::Enum:
      return "one of " + join(choices, ", ");
    case ParamType::Quantity: {
      std::string text = describe_expected(dimension);
      if (bare_number && dimension != Dimension::None) {
        const std::string_view base = base_unit(dimension);
        text += ", or a bare number";
        if (!base.empty()) text += " of " + std::string(base);
      }
      return text;
    }
    case ParamType::StringList:
      return "a list of strings";
    case ParamType::IntList:
      return "a list of integers";
    case ParamType::SectionList:
      return "a list of sections (a YAML sequence of maps)";
  }
  return "a value";
}

std::string ParamSpec::allowed() const {
  if (type == ParamType::Enum) return join(choices, ", ");
  if (!min && !max) return "";
  const auto show = [this](const ParamValue& bound) {
    if (type == ParamType::IntList) return std::to_string(std::get<std::int64_t>(bound));
    return format(bound);
  };
  std::string text;
  if (min && max) {
    text = show(*min) + " .. " + show(*max);
  } else if (min) {
    text = ">= " + show(*min);
  } else {
    text = "<= " + show(*max);
  }
  if (type != ParamType::Quantity && !unit.empty()) text += " " + unit;
  return text;
}

std::string ParamSpec::format(const ParamValue& value) const {
  return std::visit(
      [this](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (type != ParamType::Quantity) return format_real(v);
          return unit.empty() ? format_quantity(v, dimension) : format_quantity(v, dimension, unit);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return "[" + join(v, ", ") + "]";
        } else {
          std::vector<std::string> items;
          items.reserve(v.size());
          for (const std::int64_t item : v) items.push_back(std::to_string(item));
          return "[" + join(items, ", ") + "]";
        }
      },
      value);
}

namespace {

// The problem with a value of the right type, quoting it as `shown` (the text the user
// wrote, so that "20 ns" is not echoed back as "20000 ps"); empty when there is none.
std::string value_problem(const ParamSpec& spec, const ParamValue& value, const std::string& shown) {
  if (spec.type == ParamType::Enum) {
    const std::string& choice = std::get<std::string>(value);
    if (std::find(spec.choices.begin(), spec.choices.end(), choice) != spec.choices.end()) return "";
    std::string message = "unknown choice " + quoted(choice);
    if (const auto suggestion = closest_match(choice, spec.choices)) {
      message += "; did you mean `" + *suggestion + "`?";
    }
    return message;
  }
  const auto out_of_range = [&spec](const ParamValue& number, const std::string& text) -> std::string {
    if (spec.min && compare(number, *spec.min) < 0) return "value " + quoted(text) + " is below the minimum";
    if (spec.max && compare(number, *spec.max) > 0) return "value " + quoted(text) + " is above the maximum";
    return "";
  };
  if (spec.type == ParamType::IntList) {
    for (const std::int64_t item : std::get<std::vector<std::int64_t>>(value)) {
      std::string message = out_of_range(item, std::to_string(item));
      if (!message.empty()) return message;
    }
    return "";
  }
  return out_of_range(value, shown);
}

}  // namespace

std::string ParamSpec::check(const ParamValue& value) const {
  return value_problem(*this, value, format(value));
}

ParamSpec::Parsed ParamSpec::parse(std::string_view text) const {
  Parsed result;
  const std::string_view word = trim(text);
  const auto fail = [&](std::string message) {
    result.error = std::move(message);
    result.allowed = allowed();
    return result;
  };
  const auto wrong_type = [&]() { return fail("expected " + expected() + ", got " + quoted(word)); };
  const auto finish = [&](ParamValue value) {
    std::string problem = value_problem(*this, value, std::string(word));
    if (!problem.empty()) return fail(std::move(problem));
    result.value = std::move(value);
    return result;
  };

  bool overflow = false;
  switch (type) {
    case ParamType::Bool: {
      const std::string w = lower(word);
      if (w == "true" || w == "yes" || w == "on") return finish(true);
      if (w == "false" || w == "no" || w == "off") return finish(false);
      return wrong_type();
    }
    case ParamType::Int:
    case ParamType::IntList: {
      const auto value = parse_integer<std::int64_t>(word, overflow);
      if (overflow) return fail(quoted(word) + " does not fit in a 64-bit integer");
      if (!value) return fail("expected an integer, got " + quoted(word));
      if (type == ParamType::IntList) return finish(std::vector<std::int64_t>{*value});
      return finish(*value);
    }
    case ParamType::UInt: {
      if (!word.empty() && word.front() == '-') return wrong_type();
      const auto value = parse_integer<std::uint64_t>(word, overflow);
      if (overflow) return fail(quoted(word) + " does not fit in a 64-bit integer");
      if (!value) return wrong_type();
      return finish(*value);
    }
    case ParamType::Real: {
      const auto value = parse_real(word);
      if (!value) return wrong_type();
      return finish(*value);
    }
    case ParamType::String:
      return finish(std::string(text));
    case ParamType::Enum:
      return finish(std::string(word));
    case ParamType::Quantity: {
      try {
        return finish(parse_quantity(word, dimension, bare_number || dimension == Dimension::None));
      } catch (const UnitError& error) {
        return fail(error.what());
      }
    }
    case ParamType::StringList:
      return finish(std::vector<std::string>{std::string(text)});
    case ParamType::SectionList:
      return wrong_type();
  }
  return wrong_type();
}

// ---- Schema ----------------------------------------------------------------------------

Schema::Section Schema::section(std::string_view path, std::string_view description) {
  if (!path.empty()) {
    for (const std::string_view segment : split_key(path)) {
      if (!valid_segment(segment)) declaration_error(path, "invalid section path");
    }
    if (!description.empty()) section_descriptions_.emplace(std::string(path), std::string(description));
  }
  return Section(*this, std::string(path));
}

Schema& Schema::add(ParamSpec spec) {
  const std::string& key = spec.key;
  const std::vector<std::string_view> segments = split_key(key);
  for (const std::string_view segment : segments) {
    if (!valid_segment(segment)) {
      declaration_error(key, "a key segment must be letters, digits, '_' or '-', or \"*\"");
    }
  }
  if (index_.count(key) != 0) declaration_error(key, "declared twice");
  for (const ParamSpec& other : params_) {
    const std::vector<std::string_view> theirs = split_key(other.key);
    if (theirs.size() == segments.size()) continue;
    const bool mine_shorter = segments.size() < theirs.size();
    if (prefix_matches(mine_shorter ? theirs : segments, mine_shorter ? segments : theirs)) {
      declaration_error(key, "conflicts with `" + other.key + "`: a key cannot be both a parameter and a section");
    }
  }
  if (spec.type == ParamType::Enum && spec.choices.empty()) declaration_error(key, "an enumeration needs choices");
  if (spec.type == ParamType::SectionList && !spec.element_schema)
    declaration_error(key, "a section list needs an element schema");
  if (spec.type == ParamType::Quantity && !spec.unit.empty() && !is_unit_of(spec.unit, spec.dimension)) {
    declaration_error(key, "\"" + spec.unit + "\" is not a unit of " + std::string(dimension_name(spec.dimension)));
  }
  for (const auto* bound : {&spec.min, &spec.max}) {
    if (*bound && !holds_bound_type(**bound, spec.type)) declaration_error(key, "a bound has the wrong type");
  }
  if (spec.min && spec.max && compare(*spec.min, *spec.max) > 0) declaration_error(key, "minimum above maximum");
  if (spec.default_value) {
    if (!holds_type(*spec.default_value, spec.type)) declaration_error(key, "the default has the wrong type");
    const std::string problem = spec.check(*spec.default_value);
    if (!problem.empty()) declaration_error(key, "default: " + problem + " (allowed: " + spec.allowed() + ")");
  }
  const bool wildcard = std::find(segments.begin(), segments.end(), kAnyName) != segments.end();
  index_.emplace(key, params_.size());
  if (wildcard) wildcards_.push_back(params_.size());
  params_.push_back(std::move(spec));
  return *this;
}

Schema& Schema::add_check(ConfigCheck check) {
  checks_.push_back(std::move(check));
  return *this;
}

Schema& Schema::merge(const Schema& other) {
  for (const ParamSpec& spec : other.params_) add(spec);
  for (const auto& [path, description] : other.section_descriptions_) section_descriptions_.emplace(path, description);
  for (const ConfigCheck& check : other.checks_) checks_.push_back(check);
  return *this;
}

const ParamSpec* Schema::find(std::string_view key) const {
  if (const auto it = index_.find(key); it != index_.end()) return &params_[it->second];
  const std::vector<std::string_view> path = split_key(key);
  for (const std::size_t i : wildcards_) {
    const std::vector<std::string_view> pattern = split_key(params_[i].key);
    if (pattern.size() == path.size() && prefix_matches(pattern, path)) return &params_[i];
  }
  return nullptr;
}

bool Schema::is_section(std::string_view path) const {
  const std::vector<std::string_view> segments = split_path(path);
  for (const ParamSpec& spec : params_) {
    const std::vector<std::string_view> pattern = split_key(spec.key);
    if (pattern.size() > segments.size() && prefix_matches(pattern, segments)) return true;
  }
  return false;
}

std::vector<std::string> Schema::child_names(std::string_view section) const {
  const std::vector<std::string_view> segments = split_path(section);
  std::vector<std::string> names;
  for (const ParamSpec& spec : params_) {
    const std::vector<std::string_view> pattern = split_key(spec.key);
    if (pattern.size() <= segments.size() || !prefix_matches(pattern, segments)) continue;
    const std::string name(pattern[segments.size()]);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string Schema::section_description(std::string_view path) const {
  if (const auto it = section_descriptions_.find(path); it != section_descriptions_.end()) return it->second;
  const std::vector<std::string_view> segments = split_path(path);
  for (const auto& [pattern_path, description] : section_descriptions_) {
    const std::vector<std::string_view> pattern = split_key(pattern_path);
    if (pattern.size() == segments.size() && prefix_matches(pattern, segments)) return description;
  }
  return "";
}

// ---- Schema::Section -------------------------------------------------------------------

Schema::Section::Section(Schema& schema, const std::string& prefix)
    : schema_(&schema), prefix_(prefix.empty() ? std::string() : prefix + ".") {}

Schema::Section& Schema::Section::declare(ParamSpec spec) {
  if (spec.key.find('.') == std::string::npos && !valid_segment(spec.key)) {
    declaration_error(prefix_ + spec.key, "invalid parameter name");
  }
  spec.key = prefix_ + spec.key;
  if (split_key(spec.key).back() == kAnyName) {
    spec.default_value.reset();  // an open map's entries are whatever a file writes
    spec.required = false;
  }
  schema_->add(std::move(spec));
  last_ = schema_->params_.size() - 1;
  return *this;
}

ParamSpec& Schema::Section::last() {
  if (!last_) throw std::logic_error("config schema: a modifier needs a parameter declared before it");
  return schema_->params_[*last_];
}

namespace {

ParamSpec make_spec(std::string_view name, ParamType type, std::string_view description) {
  ParamSpec spec;
  spec.key = std::string(name);
  spec.type = type;
  spec.description = std::string(description);
  return spec;
}

}  // namespace

Schema::Section& Schema::Section::boolean(std::string_view name, bool default_value, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Bool, description);
  spec.default_value = default_value;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::integer(std::string_view name, std::int64_t default_value,
                                          std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Int, description);
  spec.default_value = default_value;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::integer(std::string_view name, std::int64_t default_value, std::int64_t min,
                                          std::int64_t max, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Int, description);
  spec.default_value = default_value;
  spec.min = min;
  spec.max = max;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::uinteger(std::string_view name, std::uint64_t default_value,
                                           std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::UInt, description);
  spec.default_value = default_value;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::uinteger(std::string_view name, std::uint64_t default_value, std::uint64_t min,
                                           std::uint64_t max, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::UInt, description);
  spec.default_value = default_value;
  spec.min = min;
  spec.max = max;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::real(std::string_view name, double default_value, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Real, description);
  spec.default_value = default_value;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::real(std::string_view name, double default_value, double min, double max,
                                       std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Real, description);
  spec.default_value = default_value;
  spec.min = min;
  spec.max = max;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::string(std::string_view name, std::string_view default_value,
                                         std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::String, description);
  spec.default_value = std::string(default_value);
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::enumeration(std::string_view name, std::string_view default_value,
                                              std::vector<std::string> choices, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Enum, description);
  spec.default_value = std::string(default_value);
  spec.choices = std::move(choices);
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::quantity(std::string_view name, Dimension dimension, std::string_view default_value,
                                           std::string_view description) {
  return quantity(name, dimension, default_value, "", "", description);
}

Schema::Section& Schema::Section::quantity(std::string_view name, Dimension dimension, std::string_view default_value,
                                           std::string_view min, std::string_view max, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::Quantity, description);
  spec.dimension = dimension;
  const auto read = [&](std::string_view text) -> std::optional<ParamValue> {
    if (text.empty()) return std::nullopt;
    try {
      return parse_quantity(text, dimension, true);
    } catch (const UnitError& error) {
      declaration_error(prefix_ + std::string(name), error.what());
    }
  };
  spec.default_value = read(default_value);
  spec.min = read(min);
  spec.max = read(max);
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::strings(std::string_view name, std::vector<std::string> default_value,
                                          std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::StringList, description);
  spec.default_value = std::move(default_value);
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::integers(std::string_view name, std::vector<std::int64_t> default_value,
                                           std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::IntList, description);
  spec.default_value = std::move(default_value);
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::integers(std::string_view name, std::vector<std::int64_t> default_value,
                                           std::int64_t min, std::int64_t max, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::IntList, description);
  spec.default_value = std::move(default_value);
  spec.min = min;
  spec.max = max;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::section_list(std::string_view name, Schema element, std::string_view description) {
  ParamSpec spec = make_spec(name, ParamType::SectionList, description);
  spec.element_schema = std::make_shared<const Schema>(std::move(element));
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::entry(std::string_view name, std::string_view value, std::string_view description) {
  const ParamSpec* any = schema_->find(prefix_ + std::string(kAnyName));
  if (any == nullptr || split_key(any->key).back() != kAnyName) {
    declaration_error(prefix_ + std::string(name), "entry() needs a \"*\" parameter declared in its section first");
  }
  ParamSpec spec = *any;
  spec.key = std::string(name);
  spec.description = std::string(description);
  const ParamSpec::Parsed parsed = spec.parse(value);
  const bool is_list = spec.type == ParamType::StringList || spec.type == ParamType::IntList;
  if (!parsed.value || is_list || spec.type == ParamType::SectionList) {
    declaration_error(prefix_ + std::string(name),
                      parsed.value ? "entry() takes scalar parameters only" : parsed.error);
  }
  spec.default_value = parsed.value;
  return declare(std::move(spec));
}

Schema::Section& Schema::Section::unit(std::string_view unit) {
  ParamSpec& spec = last();
  if (spec.type == ParamType::Quantity && !is_unit_of(unit, spec.dimension)) {
    declaration_error(spec.key,
                      "\"" + std::string(unit) + "\" is not a unit of " + std::string(dimension_name(spec.dimension)));
  }
  spec.unit = std::string(unit);
  return *this;
}

Schema::Section& Schema::Section::bare_number() {
  ParamSpec& spec = last();
  if (spec.type != ParamType::Quantity) declaration_error(spec.key, "bare_number() applies to quantities");
  spec.bare_number = true;
  return *this;
}

Schema::Section& Schema::Section::required() {
  ParamSpec& spec = last();
  spec.default_value.reset();
  spec.required = true;
  return *this;
}

Schema::Section& Schema::Section::optional() {
  ParamSpec& spec = last();
  spec.default_value.reset();
  spec.required = false;
  return *this;
}

Schema::Section Schema::Section::section(std::string_view name, std::string_view description) {
  return schema_->section(prefix_ + std::string(name), description);
}

}  // namespace sohusim::config
