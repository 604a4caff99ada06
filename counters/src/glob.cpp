#include "sohusim/counters/glob.hpp"

namespace sohusim::counters {

bool is_glob(std::string_view p) {
  return p.find_first_of("*?[") != std::string_view::npos;
}

namespace {

// Matches a bracket set at p[pi] (p[pi] == '['); returns the index after ']' or
// npos when the set is malformed (then '[' is taken literally).
std::size_t match_set(std::string_view p, std::size_t pi, char c, bool& matched) {
  std::size_t i = pi + 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool any = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    char lo = p[i];
    char hi = lo;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hi = p[i + 2];
      i += 2;
    }
    if (lo <= c && c <= hi) any = true;
    ++i;
  }
  if (i >= p.size()) return std::string_view::npos;
  matched = (any != negate) && c != '.';
  return i + 1;
}

bool match(std::string_view p, std::size_t pi, std::string_view s, std::size_t si) {
  while (pi < p.size()) {
    const char pc = p[pi];
    if (pc == '*') {
      const bool deep = pi + 1 < p.size() && p[pi + 1] == '*';
      const std::size_t rest = pi + (deep ? 2 : 1);
      // Try every split point; '*' may not cross a '.', '**' may.
      for (std::size_t k = si;; ++k) {
        if (match(p, rest, s, k)) return true;
        if (k >= s.size()) return false;
        if (!deep && s[k] == '.') return false;
      }
    }
    if (si >= s.size()) return false;
    if (pc == '?') {
      if (s[si] == '.') return false;
      ++pi;
      ++si;
      continue;
    }
    if (pc == '[') {
      bool matched = false;
      const std::size_t next = match_set(p, pi, s[si], matched);
      if (next != std::string_view::npos) {
        if (!matched) return false;
        pi = next;
        ++si;
        continue;
      }
    }
    if (pc != s[si]) return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
  return match(pattern, 0, name, 0);
}

}  // namespace sohusim::counters
