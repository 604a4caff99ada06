#pragma once
// Internal to the config system: one YAML document reduced to what configs use (a tree of
// maps, lists and scalars, each with the place it was written), the layering of one tree
// over another, and the small key and text helpers the other config sources share.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sohusim/config/config_error.hpp"

namespace sohusim::config::detail {

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

Source file_source(const std::string& file, const YAML::Mark& mark);
Source set_source();

ConfigDiagnostic diagnostic_at(const Source& source, std::string key, std::string message, std::string allowed = {});

[[noreturn]] void fail(ConfigDiagnostic diagnostic);

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

std::string_view kind_name(Node::Kind kind);

std::vector<std::string> split_dots(std::string_view key);
std::string join_key(std::string_view path, std::string_view name);
bool valid_name(std::string_view name);

// Layers a later node over an earlier one: maps merge key by key, anything else replaces.
// An empty section (`sim:` with nothing under it) adds nothing rather than erasing.
void overlay(Node& base, Node top);

// Converts one YAML document. Dotted keys become nested maps; a key given twice in the
// same document is an error (YAML parsers keep one silently).
class DocumentReader {
 public:
  // An empty `file` reads a --set value: its places are "--set", not lines of a file.
  DocumentReader(std::string file, std::vector<ConfigDiagnostic>& diagnostics)
      : file_(std::move(file)), diagnostics_(diagnostics) {}

  Node read(const YAML::Node& yaml, const Source& fallback, const std::string& path);

 private:
  Source at(const YAML::Mark& mark) const { return file_.empty() ? set_source() : file_source(file_, mark); }

  void read_entry(Node& map, const YAML::Node& key, const YAML::Node& value, const std::string& path);

  // `a: {b: 1}` and `a.c: 2` in one file describe one section.
  void merge_same_document(Node& into, Node&& from, const std::string& path);

  void duplicate(const std::string& key, const Source& here, const Source& first);

  std::string file_;
  std::vector<ConfigDiagnostic>& diagnostics_;
};

bool starts_with(std::string_view text, std::string_view prefix);
std::string join(const std::vector<std::string>& items, std::string_view separator);

}  // namespace sohusim::config::detail
