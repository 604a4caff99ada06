#pragma once
// Helpers the report renderers share (report_html.cpp, profile_export.cpp): number
// formatting that does not depend on the locale or the platform's printf quirks, name
// patterns, the verdict palette. Internal to counters/src.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::profiler::report_detail {

/// printf into a std::string.
inline std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string strf(const char* fmt, ...) {
  char buf[64];
  std::va_list args;
  va_start(args, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  va_start(args, fmt);
  std::vsnprintf(s.data(), s.size(), fmt, args);
  va_end(args);
  s.resize(static_cast<std::size_t>(n));
  return s;
}

/// Three significant digits, no exponent for [1, 1000): "1.23", "12.3", "123".
inline std::string three_digits(double v) {
  double a = std::fabs(v);
  if (a >= 99.95) return strf("%.0f", v);
  if (a >= 9.995) return strf("%.1f", v);
  return strf("%.2f", v);
}

/// A value with an SI prefix and a unit: "1.23 TFLOP/s", "512 B", "0 B/s".
inline std::string si(double v, const char* unit) {
  if (!std::isfinite(v)) return strf("%s %s", v > 0 ? "inf" : (v < 0 ? "-inf" : "nan"), unit);
  static const char* const kPrefix[] = {"p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E"};
  double a = std::fabs(v);
  if (a == 0) return strf("0 %s", unit);
  int e = static_cast<int>(std::floor(std::log10(a) / 3.0));
  if (e < -4) e = -4;
  if (e > 6) e = 6;
  double m = v / std::pow(1000.0, e);
  if (std::fabs(m) >= 999.5 && e < 6) {
    ++e;
    m = v / std::pow(1000.0, e);
  }
  return three_digits(m) + " " + kPrefix[e + 4] + unit;
}

/// A duration given in ns: "0 ns", "850 ns", "1.23 µs", "45.6 ms", "2.00 s".
inline std::string dur(double ns) {
  if (ns == 0) return "0 ns";
  double a = std::fabs(ns);
  if (a < 999.5) return three_digits(ns) + " ns";
  if (a < 999.5e3) return three_digits(ns / 1e3) + " µs";
  if (a < 999.5e6) return three_digits(ns / 1e6) + " ms";
  return three_digits(ns / 1e9) + " s";
}

/// A plain number: integers as such up to 1e15, else four significant digits.
inline std::string num(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : (v < 0 ? "-inf" : "nan");
  if (v == std::floor(v) && std::fabs(v) < 1e15) return strf("%.0f", v);
  return strf("%.4g", v);
}

inline std::string pct(double frac) {
  return strf("%.1f%%", frac * 100.0);
}

/// The name with every run of digits replaced by "*": ops of different layers (and of
/// different instances) fall into one pattern.
inline std::string name_pattern(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  bool in_digits = false;
  for (char c : name) {
    bool d = c >= '0' && c <= '9';
    if (d && !in_digits) out += '*';
    if (!d) out += c;
    in_digits = d;
  }
  return out;
}

/// Fill colour of each verdict, in Verdict order; the palette the report and the DOT share.
inline const char* verdict_color(Verdict v) {
  static const char* const kColors[kVerdicts] = {"#4e79a7", "#f28e2b", "#b07aa1", "#76b7b2", "#bab0ac", "#edc948"};
  unsigned i = static_cast<unsigned>(v);
  return i < kVerdicts ? kColors[i] : "#999999";
}

/// A CSS class name for a verdict: "v-compute", "v-hbm", ...
inline const char* verdict_class(Verdict v) {
  static const char* const kClasses[kVerdicts] = {"v-compute",      "v-hbm",     "v-pcie",
                                                  "v-interconnect", "v-latency", "v-host"};
  unsigned i = static_cast<unsigned>(v);
  return i < kVerdicts ? kClasses[i] : "v-unknown";
}

inline constexpr const char* kCriticalColor = "#d62728";

}  // namespace sohusim::profiler::report_detail
