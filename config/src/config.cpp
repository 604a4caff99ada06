// Configuration loading: YAML layers merged into one tree, validated against a Schema into
// an immutable Config, and printed back as YAML or JSON.
#include "sohusim/config/config.hpp"

#include "config_keys.hpp"

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

namespace sohusim::config {
namespace fs = std::filesystem;

namespace {

// Where a value was written.
struct Source {
  enum class Kind { Default, Set, File };
  Kind kind = Kind::Default;
  std::string file;
  int line = 0;  // 1-based
  int column = 0;

  std::string to_string() const {
    switch (kind) {
      case Kind::Default:
        return "default";
      case Kind::Set:
        return "--set";
      case Kind::File:
        return file + ":" + std::to_string(line) + ":" + std::to_string(column);
    }
    return "";
  }
};

Source file_source(const std::string& file, const YAML::Mark& mark) {
  Source source;
  source.kind = Source::Kind::File;
  source.file = file;
  source.line = mark.line + 1;
  source.column = mark.column + 1;
  return source;
}

Source set_source() {
  Source source;
  source.kind = Source::Kind::Set;
  return source;
}

ConfigDiagnostic diagnostic_at(const Source& source, std::string key, std::string message, std::string allowed = {}) {
  ConfigDiagnostic diagnostic;
  if (source.kind == Source::Kind::File) {
    diagnostic.file = source.file;
    diagnostic.line = source.line;
    diagnostic.column = source.column;
  } else if (source.kind == Source::Kind::Set) {
    diagnostic.file = "--set";
  }
  diagnostic.key = std::move(key);
  diagnostic.message = std::move(message);
  diagnostic.allowed = std::move(allowed);
  return diagnostic;
}

[[noreturn]] void fail(ConfigDiagnostic diagnostic) {
  throw ConfigError({std::move(diagnostic)});
}

// One layer's content, or all layers merged: YAML reduced to what configs use, with the
// place each key and value was written.
struct Node {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  std::string scalar;
  std::vector<Node> items;
  std::map<std::string, Node> children;
  Source key_source;    // the key naming this node (map entries)
  Source value_source;  // the value itself
};

std::string_view kind_name(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::Null:
      return "nothing";
    case Node::Kind::Scalar:
      return "a value";
    case Node::Kind::Sequence:
      return "a list";
    case Node::Kind::Map:
      return "a map";
  }
  return "";
}

std::vector<std::string> split_dots(std::string_view key) {
  const std::vector<std::string_view> views = detail::split_key(key);
  return {views.begin(), views.end()};
}

std::string join_key(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : std::string(path) + "." + std::string(name);
}

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// Layers a later node over an earlier one: maps merge key by key, anything else replaces.
// An empty section (`sim:` with nothing under it) adds nothing rather than erasing.
void overlay(Node& base, Node top) {
  if (base.kind == Node::Kind::Map && top.kind == Node::Kind::Map) {
    for (auto& [name, child] : top.children) {
      const auto it = base.children.find(name);
      if (it == base.children.end()) {
        base.children.emplace(name, std::move(child));
      } else {
        it->second.key_source = child.key_source;
        overlay(it->second, std::move(child));
      }
    }
    return;
  }
  if (base.kind == Node::Kind::Map && top.kind == Node::Kind::Null) return;
  const Source key_source = base.key_source;
  base = std::move(top);
  if (base.key_source.kind == Source::Kind::Default) base.key_source = key_source;
}

// Converts one YAML document. Dotted keys become nested maps; a key given twice in the
// same document is an error (YAML parsers keep one silently).
class DocumentReader {
 public:
  // An empty `file` reads a --set value: its places are "--set", not lines of a file.
  DocumentReader(std::string file, std::vector<ConfigDiagnostic>& diagnostics)
      : file_(std::move(file)), diagnostics_(diagnostics) {}

  Node read(const YAML::Node& yaml, const Source& fallback, const std::string& path) {
    Node node;
    node.value_source = yaml.Mark().line >= 0 ? at(yaml.Mark()) : fallback;
    switch (yaml.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        node.kind = Node::Kind::Null;
        break;
      case YAML::NodeType::Scalar:
        node.kind = Node::Kind::Scalar;
        node.scalar = yaml.Scalar();
        break;
      case YAML::NodeType::Sequence: {
        node.kind = Node::Kind::Sequence;
        std::size_t index = 0;
        for (const YAML::Node& item : yaml) {
          node.items.push_back(read(item, node.value_source, path + "[" + std::to_string(index++) + "]"));
        }
        break;
      }
      case YAML::NodeType::Map:
        node.kind = Node::Kind::Map;
        for (const auto& entry : yaml) read_entry(node, entry.first, entry.second, path);
        break;
    }
    return node;
  }

 private:
  Source at(const YAML::Mark& mark) const { return file_.empty() ? set_source() : file_source(file_, mark); }

  void read_entry(Node& map, const YAML::Node& key, const YAML::Node& value, const std::string& path) {
    const Source key_source = at(key.Mark());
    if (!key.IsScalar()) {
      diagnostics_.push_back(diagnostic_at(
          key_source, path, "a key must be a plain name, not " + std::string(key.IsMap() ? "a map" : "a list")));
      return;
    }
    Node* parent = &map;
    std::string full = path;
    const std::vector<std::string> segments = split_dots(key.Scalar());
    for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
      full = join_key(full, segments[i]);
      Node& child = parent->children[segments[i]];
      if (child.kind == Node::Kind::Null) {
        child.kind = Node::Kind::Map;
        child.key_source = key_source;
        child.value_source = key_source;
      } else if (child.kind != Node::Kind::Map) {
        duplicate(full, key_source, child.key_source);
        return;
      }
      parent = &child;
    }
    full = join_key(full, segments.back());
    Node node = read(value, key_source, full);
    node.key_source = key_source;
    const auto it = parent->children.find(segments.back());
    if (it == parent->children.end()) {
      parent->children.emplace(segments.back(), std::move(node));
    } else if (it->second.kind == Node::Kind::Map && node.kind == Node::Kind::Map) {
      merge_same_document(it->second, std::move(node), full);
    } else {
      duplicate(full, key_source, it->second.key_source);
    }
  }

  // `a: {b: 1}` and `a.c: 2` in one file describe one section.
  void merge_same_document(Node& into, Node&& from, const std::string& path) {
    for (auto& [name, child] : from.children) {
      const std::string full = join_key(path, name);
      const auto it = into.children.find(name);
      if (it == into.children.end()) {
        into.children.emplace(name, std::move(child));
      } else if (it->second.kind == Node::Kind::Map && child.kind == Node::Kind::Map) {
        merge_same_document(it->second, std::move(child), full);
      } else {
        duplicate(full, child.key_source, it->second.key_source);
      }
    }
  }

  void duplicate(const std::string& key, const Source& here, const Source& first) {
    diagnostics_.push_back(
        diagnostic_at(here, key, "key given twice in this file (first at line " + std::to_string(first.line) + ")"));
  }

  std::string file_;
  std::vector<ConfigDiagnostic>& diagnostics_;
};

std::string display_path(const fs::path& path) {
  return path.lexically_normal().generic_string();
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace

// ---- Config ------------------------------------------------------------------------------

struct Config::Impl {
  struct Entry {
    const ParamSpec* spec = nullptr;
    ParamValue value;
    std::vector<Config> sections;  // SectionList only
    Source source;
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

namespace {

// The names directly below `prefix` that hold values or sections of values, sorted.
std::vector<std::string> names_under(const Config::Impl& impl, std::string_view prefix) {
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
  return names_under(*impl_, prefix);
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

// ---- to_yaml / to_json -------------------------------------------------------------------

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
    const std::vector<std::string> present = names_under(impl, path);
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

// ---- validation --------------------------------------------------------------------------

namespace {

std::string describe(const Node& node) {
  if (node.kind == Node::Kind::Scalar) return "the value \"" + node.scalar + "\"";
  return std::string(kind_name(node.kind));
}

// Checks one map of keys (the whole configuration, or one element of a list of sections)
// against its schema and builds the Config holding its values.
class Validator {
 public:
  Validator(std::shared_ptr<const Schema> schema, std::string path, std::vector<ConfigDiagnostic>& diagnostics)
      : impl_(std::make_shared<Config::Impl>()), diagnostics_(diagnostics) {
    impl_->schema = std::move(schema);
    impl_->path = std::move(path);
  }

  // `missing_at` is where a missing required key is reported: the element of a list of
  // sections that lacks it, or nowhere for the top level.
  Config run(const Node& root, const Source& missing_at) {
    const std::size_t before = diagnostics_.size();
    if (root.kind == Node::Kind::Map) {
      walk(root, "");
    } else if (root.kind != Node::Kind::Null) {
      diagnostics_.push_back(
          diagnostic_at(root.value_source, impl_->path, "expected a section (a map of keys), got " + describe(root)));
    }
    fill_defaults(missing_at);
    Config config = ConfigAccess::make(impl_);
    // Checks read values freely, so they run only on a configuration whose keys are sound.
    if (diagnostics_.size() == before) {
      for (const ConfigCheck& check : impl_->schema->checks()) check(config, diagnostics_);
    }
    return config;
  }

 private:
  const Schema& schema() const { return *impl_->schema; }
  std::string shown(const std::string& key) const { return impl_->display_key(key); }

  void report(const Source& source, const std::string& key, std::string message, std::string allowed = {}) {
    diagnostics_.push_back(diagnostic_at(source, shown(key), std::move(message), std::move(allowed)));
  }

  void walk(const Node& map, const std::string& path) {
    sections_seen_.insert(path);
    for (const auto& [name, child] : map.children) {
      const std::string key = join_key(path, name);
      if (!valid_name(name)) {
        report(child.key_source, key, "invalid key name \"" + name + "\"; names are letters, digits, '_' and '-'");
        continue;
      }
      if (const ParamSpec* spec = schema().find(key)) {
        written_.insert(key);
        if (spec->type == ParamType::SectionList) {
          take_sections(child, *spec, key);
        } else {
          take_value(child, *spec, key);
        }
      } else if (schema().is_section(key)) {
        if (child.kind == Node::Kind::Map) {
          walk(child, key);
        } else if (child.kind == Node::Kind::Null) {
          sections_seen_.insert(key);
        } else {
          report(child.value_source, key, "this is a section, not a value; got " + describe(child), section_keys(key));
        }
      } else {
        unknown(key, child, path);
      }
    }
  }

  void take_value(const Node& node, const ParamSpec& spec, const std::string& key) {
    Config::Impl::Entry entry;
    entry.spec = &spec;
    entry.source = node.value_source;
    const bool is_list = spec.type == ParamType::StringList || spec.type == ParamType::IntList;
    switch (node.kind) {
      case Node::Kind::Scalar: {
        ParamSpec::Parsed parsed = spec.parse(node.scalar);
        if (!parsed.value) return report(node.value_source, key, parsed.error, parsed.allowed);
        entry.value = std::move(*parsed.value);
        break;
      }
      case Node::Kind::Sequence: {
        if (!is_list)
          return report(node.value_source, key, "expected " + spec.expected() + ", got a list", spec.allowed());
        std::vector<std::string> strings;
        std::vector<std::int64_t> ints;
        bool ok = true;
        for (std::size_t i = 0; i < node.items.size(); ++i) {
          const Node& item = node.items[i];
          const std::string item_key = key + "[" + std::to_string(i) + "]";
          if (item.kind != Node::Kind::Scalar) {
            report(item.value_source, item_key, "expected a list element, got " + describe(item));
            ok = false;
            continue;
          }
          ParamSpec::Parsed parsed = spec.parse(item.scalar);
          if (!parsed.value) {
            report(item.value_source, item_key, parsed.error, parsed.allowed);
            ok = false;
          } else if (spec.type == ParamType::StringList) {
            strings.push_back(std::get<std::vector<std::string>>(*parsed.value).front());
          } else {
            ints.push_back(std::get<std::vector<std::int64_t>>(*parsed.value).front());
          }
        }
        if (!ok) return;
        if (spec.type == ParamType::StringList) {
          entry.value = std::move(strings);
        } else {
          entry.value = std::move(ints);
        }
        break;
      }
      case Node::Kind::Map:
        return report(node.value_source, key, "expected " + spec.expected() + ", got a map", spec.allowed());
      case Node::Kind::Null:
        // `file:` with nothing after it reads as "empty", the way people write it.
        if (spec.type == ParamType::String) {
          entry.value = std::string();
        } else if (spec.type == ParamType::StringList) {
          entry.value = std::vector<std::string>();
        } else if (spec.type == ParamType::IntList) {
          entry.value = std::vector<std::int64_t>();
        } else {
          return report(node.value_source, key, "no value given; expected " + spec.expected(), spec.allowed());
        }
        break;
    }
    impl_->entries[key] = std::move(entry);
  }

  void take_sections(const Node& node, const ParamSpec& spec, const std::string& key) {
    Config::Impl::Entry entry;
    entry.spec = &spec;
    entry.source = node.value_source;
    if (node.kind == Node::Kind::Sequence) {
      for (std::size_t i = 0; i < node.items.size(); ++i) {
        const Node& item = node.items[i];
        const std::string element_path = shown(key) + "[" + std::to_string(i) + "]";
        if (item.kind != Node::Kind::Map && item.kind != Node::Kind::Null) {
          diagnostics_.push_back(diagnostic_at(item.value_source, element_path,
                                               "expected a section (a map of keys), got " + describe(item)));
          continue;
        }
        Validator element(spec.element_schema, element_path, diagnostics_);
        entry.sections.push_back(element.run(item, item.value_source));
      }
    } else if (node.kind != Node::Kind::Null) {
      return report(node.value_source, key, "expected " + spec.expected() + ", got " + describe(node));
    }
    impl_->entries[key] = std::move(entry);
  }

  std::string section_keys(const std::string& section) const {
    std::vector<std::string> names = schema().child_names(section);
    names.erase(std::remove(names.begin(), names.end(), std::string(Schema::kAnyName)), names.end());
    if (names.empty()) return "";
    const std::string where = section.empty() ? impl_->path : shown(section);
    return (where.empty() ? std::string("top-level keys: ") : "keys of `" + where + "`: ") + join(names, ", ");
  }

  void unknown(const std::string& key, const Node& node, const std::string& parent) {
    std::string message = "unknown key";
    if (const auto suggestion = closest_match(key, candidate_keys(key))) {
      message += "; did you mean `" + shown(*suggestion) + "`?";
    }
    report(node.key_source, key, std::move(message), section_keys(parent));
  }

  // Every declared key and section path, with "*" segments filled in from `key` so that
  // a typo inside an open map entry finds its sibling keys.
  std::vector<std::string> candidate_keys(const std::string& key) const {
    const std::vector<std::string> segments = split_dots(key);
    std::set<std::string> candidates;
    for (const ParamSpec& spec : schema().params()) {
      const std::vector<std::string> pattern = split_dots(spec.key);
      std::string path;
      for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == Schema::kAnyName) {
          if (i >= segments.size()) break;
          path = join_key(path, segments[i]);
        } else {
          path = join_key(path, pattern[i]);
        }
        if (path != key) candidates.insert(path);
      }
    }
    return {candidates.begin(), candidates.end()};
  }

  void fill_defaults(const Source& missing_at) {
    for (const ParamSpec& spec : schema().params()) {
      const std::vector<std::string> pattern = split_dots(spec.key);
      const auto last_any = std::find(pattern.rbegin(), pattern.rend(), std::string(Schema::kAnyName));
      if (last_any == pattern.rend()) {
        fill_default(spec, spec.key, missing_at);
        continue;
      }
      // "*" last: an open map entry exists only when written. "*" inside: the parameter
      // exists under every section of the map that a file wrote.
      const auto depth = static_cast<std::size_t>(pattern.rend() - last_any);
      if (depth == pattern.size()) continue;
      std::string rest;
      for (std::size_t i = depth; i < pattern.size(); ++i) rest = join_key(rest, pattern[i]);
      for (const std::string& section : sections_seen_) {
        const std::vector<std::string> segments = split_dots(section);
        if (section.empty() || segments.size() != depth) continue;
        bool match = true;
        for (std::size_t i = 0; i < depth; ++i)
          match = match && (pattern[i] == Schema::kAnyName || pattern[i] == segments[i]);
        if (match) fill_default(spec, join_key(section, rest), missing_at);
      }
    }
  }

  void fill_default(const ParamSpec& spec, const std::string& key, const Source& missing_at) {
    if (written_.count(key) != 0 || impl_->entries.count(key) != 0) return;
    if (spec.required) {
      std::string allowed = spec.expected();
      if (!spec.allowed().empty() && spec.type != ParamType::Enum) allowed += " in " + spec.allowed();
      diagnostics_.push_back(diagnostic_at(missing_at, shown(key), "required key is missing", allowed));
      return;
    }
    Config::Impl::Entry entry;
    entry.spec = &spec;
    if (spec.type == ParamType::SectionList) {
      impl_->entries[key] = std::move(entry);
    } else if (spec.default_value) {
      entry.value = *spec.default_value;
      impl_->entries[key] = std::move(entry);
    }
  }

  std::shared_ptr<Config::Impl> impl_;
  std::vector<ConfigDiagnostic>& diagnostics_;
  std::set<std::string> written_;        // keys some layer wrote, valid or not
  std::set<std::string> sections_seen_;  // section paths some layer wrote
};

// ---- sources -----------------------------------------------------------------------------

bool looks_like_path(std::string_view text) {
  return ends_with(text, ".yaml") || ends_with(text, ".yml") || starts_with(text, "./") || starts_with(text, "../") ||
         starts_with(text, "/");
}

std::vector<std::string> list_presets(const std::vector<fs::path>& dirs) {
  std::set<std::string> names;
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) continue;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, error), end;
         !error && it != end; it.increment(error)) {
      const fs::path& file = it->path();
      if (!it->is_regular_file(error) || (file.extension() != ".yaml" && file.extension() != ".yml")) continue;
      fs::path name = file.lexically_relative(dir);
      name.replace_extension();
      names.insert(name.generic_string());
    }
  }
  return {names.begin(), names.end()};
}

std::optional<fs::path> find_preset(const std::vector<fs::path>& dirs, std::string_view name) {
  const fs::path relative{std::string(name)};
  if (name.empty() || relative.is_absolute()) return std::nullopt;
  for (const fs::path& part : relative) {
    if (part == "..") return std::nullopt;
  }
  for (const fs::path& dir : dirs) {
    for (const char* extension : {".yaml", ".yml"}) {
      const fs::path candidate = dir / (std::string(name) + extension);
      std::error_code error;
      if (fs::is_regular_file(candidate, error)) return candidate;
    }
  }
  return std::nullopt;
}

std::string presets_text(const std::vector<fs::path>& dirs) {
  const std::vector<std::string> presets = list_presets(dirs);
  if (!presets.empty()) return join(presets, ", ");
  if (dirs.empty()) return "(no preset folder is configured)";
  std::vector<std::string> shown;
  for (const fs::path& dir : dirs) shown.push_back(display_path(dir));
  return "(no presets found in " + join(shown, ", ") + ")";
}

// Reads one file (or text) with the bases it extends, in order, into one tree.
class LayerReader {
 public:
  explicit LayerReader(const std::vector<fs::path>& preset_dirs) : preset_dirs_(preset_dirs) {}

  // `requested_at` is the `extends` entry that named this file, if any.
  void read_file(const fs::path& path, const std::optional<Source>& requested_at, Node& into) {
    const std::string shown = display_path(path);
    std::error_code error;
    const fs::path canonical = fs::weakly_canonical(path, error);
    const fs::path identity = error ? path.lexically_normal() : canonical;
    for (std::size_t i = 0; i < chain_.size(); ++i) {
      if (chain_[i].first != identity) continue;
      std::vector<std::string> cycle;
      for (std::size_t j = i; j < chain_.size(); ++j) cycle.push_back(chain_[j].second);
      cycle.push_back(shown);
      fail(diagnostic_at(requested_at.value_or(Source{}), "extends", "cycle of extends: " + join(cycle, " -> ")));
    }
    std::string problem;
    if (!fs::exists(path, error)) {
      problem = "no such file";
    } else if (!fs::is_regular_file(path, error)) {
      problem = "not a regular file";
    }
    std::ifstream in;
    if (problem.empty()) {
      in.open(path, std::ios::binary);
      if (!in) problem = "cannot be read";
    }
    if (!problem.empty()) {
      if (requested_at) fail(diagnostic_at(*requested_at, "extends", "cannot open `" + shown + "`: " + problem));
      ConfigDiagnostic diagnostic;
      diagnostic.file = shown;
      diagnostic.message = "cannot open the config file: " + problem;
      fail(std::move(diagnostic));
    }
    std::ostringstream text;
    text << in.rdbuf();
    chain_.emplace_back(identity, shown);
    read_text(text.str(), shown, path.parent_path(), into);
    chain_.pop_back();
  }

  void read_text(const std::string& text, const std::string& shown, const fs::path& folder, Node& into) {
    std::vector<YAML::Node> documents;
    try {
      documents = YAML::LoadAll(text);
    } catch (const YAML::Exception& error) {
      ConfigDiagnostic diagnostic;
      diagnostic.file = shown;
      diagnostic.line = error.mark.line >= 0 ? error.mark.line + 1 : 0;
      diagnostic.column = error.mark.column >= 0 ? error.mark.column + 1 : 0;
      diagnostic.message = "malformed YAML: " + error.msg;
      fail(std::move(diagnostic));
    }
    if (documents.size() > 1) {
      ConfigDiagnostic diagnostic;
      diagnostic.file = shown;
      diagnostic.message = "holds " + std::to_string(documents.size()) + " YAML documents; a config file holds one";
      fail(std::move(diagnostic));
    }
    if (documents.empty() || documents.front().IsNull()) return;
    const YAML::Node& root = documents.front();
    if (!root.IsMap()) {
      fail(diagnostic_at(file_source(shown, root.Mark()), "",
                         "the top level of a config file must be a map of keys, not a list or a value"));
    }
    for (const auto& entry : root) {
      if (entry.first.IsScalar() && entry.first.Scalar() == "extends") read_bases(entry.second, shown, folder, into);
    }
    std::vector<ConfigDiagnostic> diagnostics;
    Node document = DocumentReader(shown, diagnostics).read(root, Source{}, "");
    if (!diagnostics.empty()) throw ConfigError(std::move(diagnostics));
    document.children.erase("extends");
    overlay(into, std::move(document));
  }

 private:
  void read_bases(const YAML::Node& value, const std::string& shown, const fs::path& folder, Node& into) {
    std::vector<YAML::Node> bases;
    if (value.IsScalar()) {
      bases.push_back(value);
    } else if (value.IsSequence()) {
      for (const YAML::Node& item : value) bases.push_back(item);
    }
    if (bases.empty() || !std::all_of(bases.begin(), bases.end(), [](const YAML::Node& b) { return b.IsScalar(); })) {
      fail(diagnostic_at(file_source(shown, value.Mark()), "extends",
                         "expected a preset name, a path, or a list of them"));
    }
    for (const YAML::Node& base : bases) {
      const std::string name = base.Scalar();
      const Source at = file_source(shown, base.Mark());
      if (looks_like_path(name)) {
        const fs::path relative{name};
        read_file(relative.is_absolute() ? relative : folder / relative, at, into);
      } else if (const std::optional<fs::path> preset = find_preset(preset_dirs_, name)) {
        read_file(*preset, at, into);
      } else {
        fail(diagnostic_at(at, "extends", "unknown preset `" + name + "`", presets_text(preset_dirs_)));
      }
    }
  }

  const std::vector<fs::path>& preset_dirs_;
  std::vector<std::pair<fs::path, std::string>> chain_;  // files being read, outermost first
};

// Applies one --set override to the merged tree, descending into lists by index.
void apply_set(Node& root, const std::string& key, const Node& value, std::vector<ConfigDiagnostic>& diagnostics) {
  const std::vector<std::string> segments = split_dots(key);
  Node* node = &root;
  std::string walked;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& segment = segments[i];
    const bool last = i + 1 == segments.size();
    if (node->kind == Node::Kind::Sequence) {
      std::size_t index = 0;
      const auto [end, error] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
      if (error != std::errc() || end != segment.data() + segment.size()) {
        diagnostics.push_back(diagnostic_at(
            set_source(), key, "`" + walked + "` is a list; name an element by its index, as in `" + walked + ".0`"));
        return;
      }
      if (index >= node->items.size()) {
        diagnostics.push_back(diagnostic_at(set_source(), key,
                                            "index " + segment + " is out of range: `" + walked + "` has " +
                                                std::to_string(node->items.size()) + " element(s)"));
        return;
      }
      node = &node->items[index];
      walked = join_key(walked, segment);
      if (last) overlay(*node, value);
      continue;
    }
    if (node->kind != Node::Kind::Map) {
      // Setting a key below a value replaces the value by a section; validation judges it.
      node->kind = Node::Kind::Map;
      node->scalar.clear();
      node->items.clear();
      node->value_source = set_source();
    }
    const auto [it, inserted] = node->children.try_emplace(segment);
    Node& child = it->second;
    if (inserted) {
      child.value_source = set_source();
      child.key_source = set_source();
    }
    if (last) {
      if (inserted) {
        child = value;
        child.key_source = set_source();
      } else {
        overlay(child, value);
      }
    }
    node = &child;
    walked = join_key(walked, segment);
  }
}

std::string trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

// ---- ConfigLoader ------------------------------------------------------------------------

struct ConfigLoader::State {
  std::shared_ptr<const Schema> schema;
  std::vector<fs::path> preset_dirs;
  Node files;  // every loaded file and preset, merged in load order

  struct Assignment {
    std::string key;
    Node value;
  };
  std::vector<Assignment> sets;
};

ConfigLoader::ConfigLoader(Schema schema, std::vector<fs::path> preset_dirs) : state_(std::make_unique<State>()) {
  state_->schema = std::make_shared<const Schema>(std::move(schema));
  state_->preset_dirs = std::move(preset_dirs);
  state_->files.kind = Node::Kind::Map;
}

ConfigLoader::~ConfigLoader() = default;
ConfigLoader::ConfigLoader(ConfigLoader&&) noexcept = default;
ConfigLoader& ConfigLoader::operator=(ConfigLoader&&) noexcept = default;

ConfigLoader& ConfigLoader::add_preset_dir(fs::path dir) {
  state_->preset_dirs.push_back(std::move(dir));
  return *this;
}

ConfigLoader& ConfigLoader::load_preset(std::string_view name) {
  const std::optional<fs::path> path = find_preset(state_->preset_dirs, name);
  if (!path) {
    ConfigDiagnostic diagnostic;
    diagnostic.message = "unknown preset `" + std::string(name) + "`";
    diagnostic.allowed = presets_text(state_->preset_dirs);
    fail(std::move(diagnostic));
  }
  return load_file(*path);
}

ConfigLoader& ConfigLoader::load_file(const fs::path& path) {
  // Read into a copy so that a file that fails halfway leaves the loader as it was.
  Node files = state_->files;
  LayerReader(state_->preset_dirs).read_file(path, std::nullopt, files);
  state_->files = std::move(files);
  return *this;
}

ConfigLoader& ConfigLoader::load_string(std::string_view yaml, std::string_view name) {
  Node files = state_->files;
  LayerReader(state_->preset_dirs).read_text(std::string(yaml), std::string(name), fs::path(), files);
  state_->files = std::move(files);
  return *this;
}

ConfigLoader& ConfigLoader::set(std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  const std::string key = trim(assignment.substr(0, equals));
  if (equals == std::string_view::npos || key.empty()) {
    ConfigDiagnostic diagnostic;
    diagnostic.file = "--set";
    diagnostic.message = "expected key=value, got \"" + std::string(assignment) + "\"";
    diagnostic.allowed = "key.path=value, e.g. sim.clocks.engine=2 GHz";
    fail(std::move(diagnostic));
  }
  const std::string text(assignment.substr(equals + 1));
  YAML::Node yaml;
  try {
    yaml = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    fail(diagnostic_at(set_source(), key, "malformed value \"" + text + "\": " + error.msg));
  }
  std::vector<ConfigDiagnostic> diagnostics;
  Node value = DocumentReader("", diagnostics).read(yaml, set_source(), key);
  if (!diagnostics.empty()) throw ConfigError(std::move(diagnostics));
  state_->sets.push_back({key, std::move(value)});
  return *this;
}

std::vector<std::string> ConfigLoader::available_presets() const {
  return list_presets(state_->preset_dirs);
}

Config ConfigLoader::resolve() const {
  Node tree = state_->files;
  std::vector<ConfigDiagnostic> diagnostics;
  for (const State::Assignment& assignment : state_->sets)
    apply_set(tree, assignment.key, assignment.value, diagnostics);
  Config config = Validator(state_->schema, "", diagnostics).run(tree, Source{});
  if (!diagnostics.empty()) {
    // Compiler order: by file, then position; problems with no place in a file last.
    std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const ConfigDiagnostic& a, const ConfigDiagnostic& b) {
      return std::make_tuple(a.file.empty(), a.file, a.line, a.column) <
             std::make_tuple(b.file.empty(), b.file, b.line, b.column);
    });
    throw ConfigError(std::move(diagnostics));
  }
  return config;
}

const Schema& ConfigLoader::schema() const noexcept {
  return *state_->schema;
}

}  // namespace sohusim::config
