#include "sohusim/sim/clock_domain.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace sohusim::sim {
namespace {

constexpr std::uint64_t kMaxPs = std::numeric_limits<std::uint64_t>::max();

std::uint64_t rounded_period_ps(const std::string& name, double frequency_hz) {
  if (!std::isfinite(frequency_hz) || frequency_hz <= 0.0) {
    std::ostringstream os;
    os << "clock domain '" << name << "': frequency must be a finite positive number of Hz, got " << frequency_hz;
    throw std::invalid_argument(os.str());
  }
  const double exact_ps = 1e12 / frequency_hz;
  // 2^63 keeps the conversion below well defined and leaves headroom for edge arithmetic.
  if (!(exact_ps < 9.2e18)) {
    std::ostringstream os;
    os << "clock domain '" << name << "': frequency " << frequency_hz
       << " Hz is too low, its period does not fit in 64-bit picoseconds";
    throw std::invalid_argument(os.str());
  }
  const auto period = static_cast<std::uint64_t>(std::llround(exact_ps));
  if (period == 0) {
    std::ostringstream os;
    os << "clock domain '" << name << "': frequency " << frequency_hz
       << " Hz has a period below 0.5 ps, which the 1 ps time resolution cannot represent";
    throw std::invalid_argument(os.str());
  }
  return period;
}

}  // namespace

ClockDomain::ClockDomain(std::string name, double frequency_hz, sc_core::sc_time phase)
    : name_(std::move(name)), nominal_hz_(frequency_hz), period_ps_(0), phase_ps_(0) {
  if (name_.empty()) {
    throw std::invalid_argument("clock domain: the name must not be empty");
  }
  period_ps_ = rounded_period_ps(name_, frequency_hz);
  phase_ps_ = to_ps(phase);
}

double ClockDomain::effective_frequency_hz() const noexcept {
  return 1e12 / static_cast<double>(period_ps_);
}

double ClockDomain::period_error() const noexcept {
  const double nominal_ps = 1e12 / nominal_hz_;
  return (static_cast<double>(period_ps_) - nominal_ps) / nominal_ps;
}

sc_core::sc_time ClockDomain::cycles_to_time(std::uint64_t cycles) const {
  if (cycles > kMaxPs / period_ps_) {
    throw std::overflow_error("clock domain '" + name_ + "': " + std::to_string(cycles) +
                              " cycles exceed the 64-bit picosecond time range");
  }
  return from_ps(cycles * period_ps_);
}

std::uint64_t ClockDomain::time_to_cycles(const sc_core::sc_time& duration) const {
  return to_ps(duration) / period_ps_;
}

std::uint64_t ClockDomain::edges_before(std::uint64_t t_ps) const noexcept {
  if (t_ps <= phase_ps_) {
    return 0;
  }
  // ceil((t - phase) / period), written so that it cannot overflow.
  return (t_ps - phase_ps_ - 1) / period_ps_ + 1;
}

sc_core::sc_time ClockDomain::next_edge(const sc_core::sc_time& now) const {
  const std::uint64_t now_ps = to_ps(now);
  const std::uint64_t k = edges_before(now_ps);  // index of the first edge >= now
  if (k > (kMaxPs - phase_ps_) / period_ps_) {
    throw std::overflow_error("clock domain '" + name_ + "': no edge after " + now.to_string() +
                              " within the 64-bit picosecond time range");
  }
  return from_ps(phase_ps_ + k * period_ps_);
}

sc_core::sc_time ClockDomain::edge_after(const sc_core::sc_time& now) const {
  const std::uint64_t now_ps = to_ps(now);
  if (now_ps == kMaxPs) {
    throw std::overflow_error("clock domain '" + name_ + "': no edge after the end of time");
  }
  return next_edge(from_ps(now_ps + 1));
}

std::uint64_t ClockDomain::cycles_between(const sc_core::sc_time& from, const sc_core::sc_time& to) const {
  if (to < from) {
    throw std::invalid_argument("clock domain '" + name_ + "': cycles_between(" + from.to_string() + ", " +
                                to.to_string() + ") has its end before its start");
  }
  return edges_before(to_ps(to)) - edges_before(to_ps(from));
}

// ---- ClockDomains ---------------------------------------------------------------------

const ClockDomain& ClockDomains::add(ClockDomain domain) {
  std::string key = domain.name();
  auto [it, inserted] = domains_.emplace(std::move(key), std::move(domain));
  if (!inserted) {
    throw std::invalid_argument("clock domain '" + it->first + "' is defined twice");
  }
  return it->second;
}

const ClockDomain& ClockDomains::add(std::string name, double frequency_hz, sc_core::sc_time phase) {
  return add(ClockDomain(std::move(name), frequency_hz, phase));
}

const ClockDomain* ClockDomains::find(std::string_view name) const noexcept {
  const auto it = domains_.find(name);
  return it == domains_.end() ? nullptr : &it->second;
}

const ClockDomain& ClockDomains::get(std::string_view name) const {
  if (const ClockDomain* d = find(name)) {
    return *d;
  }
  std::string known;
  for (const auto& entry : domains_) {
    known += known.empty() ? "" : ", ";
    known += entry.first;
  }
  throw std::out_of_range("unknown clock domain '" + std::string(name) +
                          "' (known: " + (known.empty() ? std::string("none") : known) + ")");
}

std::vector<std::string> ClockDomains::names() const {
  std::vector<std::string> out;
  out.reserve(domains_.size());
  for (const auto& entry : domains_) {
    out.push_back(entry.first);
  }
  return out;
}

}  // namespace sohusim::sim
