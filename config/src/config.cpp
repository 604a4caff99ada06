// Config: reading the values of a resolved configuration by key, with the type checks and
// messages that name the key. Loading is in loader.cpp, validation in validation.cpp,
// printing in writer.cpp.
#include "sohusim/config/config.hpp"

#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "config_impl.hpp"

namespace sohusim::config {

using detail::diagnostic_at;
using detail::Source;

std::vector<std::string> detail::names_under(const Config::Impl& impl, std::string_view prefix) {
  const std::string start = prefix.empty() ? std::string() : std::string(prefix) + ".";
  std::set<std::string> names;
  for (auto it = impl.entries.lower_bound(start); it != impl.entries.end(); ++it) {
    const std::string& key = it->first;
    if (!starts_with(key, start)) break;
    const std::string rest = key.substr(start.size());
    names.insert(rest.substr(0, rest.find('.')));
  }
  return {names.begin(), names.end()};
}

namespace {

std::string type_name(ParamType type) {
  switch (type) {
    case ParamType::Bool:
      return "a bool";
    case ParamType::Int:
      return "an integer";
    case ParamType::UInt:
      return "an unsigned integer";
    case ParamType::Real:
      return "a number";
    case ParamType::String:
      return "a string";
    case ParamType::Enum:
      return "an enumeration";
    case ParamType::Quantity:
      return "a quantity";
    case ParamType::StringList:
      return "a list of strings";
    case ParamType::IntList:
      return "a list of integers";
    case ParamType::SectionList:
      return "a list of sections";
  }
  return "a value";
}

[[noreturn]] void wrong_type(const Config::Impl& impl, std::string_view key, const Config::Impl::Entry& entry,
                             std::string_view wanted) {
  throw std::logic_error("config: `" + impl.display_key(key) + "` is " + type_name(entry.spec->type) + ", not " +
                         std::string(wanted));
}

}  // namespace

Config::Config() : impl_(std::make_shared<const Impl>()) {}
Config::Config(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

bool Config::has(std::string_view key) const {
  return impl_->entries.count(key) != 0;
}

bool Config::get_bool(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type != ParamType::Bool) wrong_type(*impl_, key, entry, "a bool");
  return std::get<bool>(entry.value);
}

std::int64_t Config::get_int(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type == ParamType::Int) return std::get<std::int64_t>(entry.value);
  if (entry.spec->type == ParamType::UInt) {
    const std::uint64_t value = std::get<std::uint64_t>(entry.value);
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw std::out_of_range("config: `" + impl_->display_key(key) + "` = " + std::to_string(value) +
                              " does not fit in int64; use get_uint()");
    }
    return static_cast<std::int64_t>(value);
  }
  wrong_type(*impl_, key, entry, "an integer");
}

std::uint64_t Config::get_uint(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type == ParamType::UInt) return std::get<std::uint64_t>(entry.value);
  if (entry.spec->type == ParamType::Int) {
    const std::int64_t value = std::get<std::int64_t>(entry.value);
    if (value < 0) {
      throw std::out_of_range("config: `" + impl_->display_key(key) + "` = " + std::to_string(value) +
                              " is negative; use get_int()");
    }
    return static_cast<std::uint64_t>(value);
  }
  wrong_type(*impl_, key, entry, "an unsigned integer");
}

double Config::get_double(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  switch (entry.spec->type) {
    case ParamType::Real:
    case ParamType::Quantity:
      return std::get<double>(entry.value);
    case ParamType::Int:
      return static_cast<double>(std::get<std::int64_t>(entry.value));
    case ParamType::UInt:
      return static_cast<double>(std::get<std::uint64_t>(entry.value));
    default:
      wrong_type(*impl_, key, entry, "a number");
  }
}

double Config::get_quantity(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type != ParamType::Quantity) wrong_type(*impl_, key, entry, "a quantity");
  return std::get<double>(entry.value);
}

const std::string& Config::get_string(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type != ParamType::String && entry.spec->type != ParamType::Enum) {
    wrong_type(*impl_, key, entry, "a string");
  }
  return std::get<std::string>(entry.value);
}

const std::vector<std::string>& Config::get_strings(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type != ParamType::StringList) wrong_type(*impl_, key, entry, "a list of strings");
  return std::get<std::vector<std::string>>(entry.value);
}

const std::vector<std::int64_t>& Config::get_ints(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type != ParamType::IntList) wrong_type(*impl_, key, entry, "a list of integers");
  return std::get<std::vector<std::int64_t>>(entry.value);
}

std::vector<std::string> Config::keys_under(std::string_view prefix) const {
  return detail::names_under(*impl_, prefix);
}

const std::vector<Config>& Config::section_list(std::string_view key) const {
  const Impl::Entry& entry = impl_->at(key);
  if (entry.spec->type != ParamType::SectionList) wrong_type(*impl_, key, entry, "a list of sections");
  return entry.sections;
}

std::string Config::source_of(std::string_view key) const {
  return impl_->at(key).source.to_string();
}

ConfigDiagnostic Config::diagnose(std::string_view key, std::string message, std::string allowed) const {
  const auto it = impl_->entries.find(key);
  const Source source = it == impl_->entries.end() ? Source{} : it->second.source;
  return diagnostic_at(source, impl_->display_key(key), std::move(message), std::move(allowed));
}

const std::string& Config::path() const {
  return impl_->path;
}

const Schema& Config::schema() const {
  return *impl_->schema;
}

}  // namespace sohusim::config
