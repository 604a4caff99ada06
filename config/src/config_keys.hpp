#pragma once
// Internal to the config system: dotted key paths split into their segments.

#include <string_view>
#include <vector>

namespace sohusim::config::detail {

// "a.b.c" -> {"a", "b", "c"}; "" -> {""}; views into `key`.
inline std::vector<std::string_view> split_key(std::string_view key) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    segments.push_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return segments;
}

}  // namespace sohusim::config::detail
