// Config::to_yaml() and Config::to_json(): a resolved configuration printed back, as
// commented YAML that loads again to the same values, or as nested JSON.
#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "config_impl.hpp"
#include "sohusim/config/config.hpp"

namespace sohusim::config {

using detail::join;
using detail::join_key;
using detail::split_dots;

namespace {

std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          std::array<char, 8> hex{};
          std::snprintf(hex.data(), hex.size(), "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += hex.data();
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Enum choices are written plain when YAML reads them back as the same string.
std::string yaml_word(std::string_view word) {
  static const std::set<std::string, std::less<>> kSpecial = {"true", "false", "yes",   "no",    "on",   "off",
                                                              "null", "True",  "False", "Yes",   "No",   "On",
                                                              "Off",  "Null",  "TRUE",  "FALSE", "NULL", "~"};
  const bool plain = !word.empty() && kSpecial.count(word) == 0 &&
                     std::all_of(word.begin(), word.end(),
                                 [](char c) {
                                   return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                          c == '_' || c == '-' || c == '.' || c == '/';
                                 }) &&
                     word.front() != '-' && word.front() != '.';
  return plain ? std::string(word) : yaml_quoted(word);
}

std::string yaml_value(const ParamSpec& spec, const ParamValue& value) {
  switch (spec.type) {
    case ParamType::String:
      return yaml_quoted(std::get<std::string>(value));
    case ParamType::Enum:
      return yaml_word(std::get<std::string>(value));
    case ParamType::StringList: {
      std::vector<std::string> items;
      for (const std::string& item : std::get<std::vector<std::string>>(value)) items.push_back(yaml_quoted(item));
      return "[" + join(items, ", ") + "]";
    }
    default:
      return spec.format(value);
  }
}

class YamlWriter {
 public:
  explicit YamlWriter(std::vector<std::string>& lines) : lines_(lines) {}

  void section(const Config::Impl& impl, const std::string& path, std::size_t indent) {
    for (const std::string& name : ordered_children(impl, path)) {
      const std::string key = join_key(path, name);
      const std::string pad(indent, ' ');
      const auto it = impl.entries.find(key);
      if (it == impl.entries.end()) {
        line(pad + name + ":", impl.schema->section_description(key));
        section(impl, key, indent + 2);
        continue;
      }
      const Config::Impl::Entry& entry = it->second;
      const std::string comment = entry.spec->description + " [" + entry.source.to_string() + "]";
      if (entry.spec->type != ParamType::SectionList) {
        line(pad + name + ": " + yaml_value(*entry.spec, entry.value), comment);
      } else if (entry.sections.empty()) {
        line(pad + name + ": []", comment);
      } else {
        line(pad + name + ":", comment);
        for (const Config& element : entry.sections) this->element(element, indent + 2);
      }
    }
  }

 private:
  // A sequence entry: the element's keys indented under "- ", the first on the dash line.
  void element(const Config& element, std::size_t indent) {
    const std::size_t first = lines_.size();
    section(ConfigAccess::impl(element), "", indent + 2);
    if (lines_.size() == first) {
      lines_.push_back(std::string(indent, ' ') + "- {}");
      return;
    }
    lines_[first].replace(indent, 2, "- ");
  }

  // Declared children first, in declaration order, then open-map entries by name.
  static std::vector<std::string> ordered_children(const Config::Impl& impl, const std::string& path) {
    const std::vector<std::string> present = detail::names_under(impl, path);
    std::vector<std::string> names;
    for (const std::string& name : impl.schema->child_names(path)) {
      if (std::find(present.begin(), present.end(), name) != present.end()) names.push_back(name);
    }
    for (const std::string& name : present) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
  }

  void line(std::string text, const std::string& comment) {
    if (!comment.empty()) {
      constexpr std::size_t kCommentColumn = 40;
      text.resize(std::max(text.size() + 2, kCommentColumn), ' ');
      text += "# " + comment;
    }
    lines_.push_back(std::move(text));
  }

  std::vector<std::string>& lines_;
};

nlohmann::json json_value(const ParamValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

}  // namespace

std::string Config::to_yaml() const {
  std::vector<std::string> lines = {
      "# sohusim configuration, resolved: every parameter with its value.",
      "# Comments give each parameter's description and [where its value came from].",
  };
  YamlWriter(lines).section(*impl_, "", 0);
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

nlohmann::json Config::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [key, entry] : impl_->entries) {
    nlohmann::json* node = &root;
    const std::vector<std::string> segments = split_dots(key);
    for (std::size_t i = 0; i + 1 < segments.size(); ++i) node = &(*node)[segments[i]];
    nlohmann::json& leaf = (*node)[segments.back()];
    if (entry.spec->type == ParamType::SectionList) {
      leaf = nlohmann::json::array();
      for (const Config& element : entry.sections) leaf.push_back(element.to_json());
    } else {
      leaf = json_value(entry.value);
    }
  }
  return root;
}

}  // namespace sohusim::config
