#pragma once
// Internal to the config system: what a Config holds (Config::Impl, one entry per key with
// its spec, value and source), ConfigAccess, the validator's and writer's way in, and the
// key listing Config and the writer share.

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "document.hpp"
#include "sohusim/config/config.hpp"

namespace sohusim::config {

struct Config::Impl {
  struct Entry {
    const ParamSpec* spec = nullptr;
    ParamValue value;
    std::vector<Config> sections;  // SectionList only
    detail::Source source;
  };

  std::shared_ptr<const Schema> schema = std::make_shared<const Schema>();
  std::string path;  // "" or "hosts[1]"
  std::map<std::string, Entry, std::less<>> entries;

  std::string display_key(std::string_view key) const {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  const Entry& at(std::string_view key) const {
    const auto it = entries.find(key);
    if (it == entries.end()) {
      const bool declared = schema->find(key) != nullptr;
      throw std::out_of_range(
          "config: `" + display_key(key) + "` has no value" +
          (declared ? " (optional and not set; check has() first)" : " (not a declared parameter)"));
    }
    return it->second;
  }
};

struct ConfigAccess {
  static Config make(std::shared_ptr<const Config::Impl> impl) { return Config(std::move(impl)); }
  static const Config::Impl& impl(const Config& config) { return *config.impl_; }
};

namespace detail {

// The names directly below `prefix` that hold values or sections of values, sorted.
std::vector<std::string> names_under(const Config::Impl& impl, std::string_view prefix);

}  // namespace detail
}  // namespace sohusim::config
