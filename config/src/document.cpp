// The config system's YAML documents: sources (file:line:column, --set, default), the
// reduced node tree read from yaml-cpp, and the overlay of one layer on another.
#include "document.hpp"

#include <algorithm>
#include <utility>

#include "config_keys.hpp"

namespace sohusim::config::detail {

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

ConfigDiagnostic diagnostic_at(const Source& source, std::string key, std::string message, std::string allowed) {
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
  const std::vector<std::string_view> views = split_key(key);
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

// ---- DocumentReader ----------------------------------------------------------------------

Node DocumentReader::read(const YAML::Node& yaml, const Source& fallback, const std::string& path) {
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

void DocumentReader::read_entry(Node& map, const YAML::Node& key, const YAML::Node& value, const std::string& path) {
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

void DocumentReader::merge_same_document(Node& into, Node&& from, const std::string& path) {
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

void DocumentReader::duplicate(const std::string& key, const Source& here, const Source& first) {
  diagnostics_.push_back(
      diagnostic_at(here, key, "key given twice in this file (first at line " + std::to_string(first.line) + ")"));
}

// ---- text --------------------------------------------------------------------------------

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

}  // namespace sohusim::config::detail
