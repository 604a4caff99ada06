#pragma once
// Config and system files are plain data, so YAML aliases (`*name`, a reference to an earlier
// `&name` node) are refused before the text becomes a tree. A reader walks an aliased node
// once per reference: ten levels of ten references each are 10^10 nodes from a few hundred
// bytes of text (the "billion laughs" of XML), which no schema check would stop in time.
//
//   if (auto at = first_yaml_alias(text)) fail(file, at->line, at->column, "...");
//
// Anchors alone are harmless and allowed. Malformed YAML throws the parser's YAML::Exception,
// as YAML::Load would.
#include <optional>
#include <string>

namespace sohusim::config {

struct TextPosition {
  int line = 0, column = 0;  // 1-based
};

/// Where the first alias of `text` is, or nothing.
std::optional<TextPosition> first_yaml_alias(const std::string& text);

}  // namespace sohusim::config
