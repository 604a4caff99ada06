#pragma once
// Glob matching over hierarchical stat names, segment-aware:
//   *   any run of characters within one dot-separated segment
//   **  any run of characters, dots included (whole subtrees)
//   ?   one character other than '.'
//   [abc] [a-z] [!x]  one character from / not from a set
// so "dev0.me*.active_cycles" matches every matrix engine of dev0 and
// "dev*.**.row_hits" every row-hit counter of every device.

#include <string_view>

namespace sohusim::counters {

bool glob_match(std::string_view pattern, std::string_view name);
bool is_glob(std::string_view pattern);

}  // namespace sohusim::counters
