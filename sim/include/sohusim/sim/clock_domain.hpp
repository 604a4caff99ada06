// sohusim/sim/clock_domain.hpp — clock domains as arithmetic, not as processes.
//
// A ClockDomain is a frequency and a phase. It answers "when is the next edge", "how long
// are N cycles" and "how many cycles fit in this interval" with integer arithmetic on the
// 1 ps grid. There is deliberately no sc_clock and no process that wakes on every edge:
// sohusim's models are event-driven. A model that becomes ready at time t
// computes the edge it can act on, next_edge(t), waits until then, and counts its busy
// time in its own domain's cycles with cycles_between(). Thousands of idle cycles thus
// cost nothing, and the results do not depend on how often something polled.
//
// Edges. The clock starts at `phase` (default 0): its edges are at phase + k * period for
// k = 0, 1, 2, ...; there are no edges before `phase`. A non-zero phase models a domain
// that is offset from the others (e.g. a link clock that is not aligned to the core
// clock), or one that starts later.
//
// Rounding. The period is 1e12 / frequency picoseconds rounded to the nearest integer,
// because sc_time counts whole picoseconds (sim_time.hpp). Frequencies whose period is a
// whole number of picoseconds are exact; the others run slightly fast or slow:
//
//     1.0 GHz -> 1000 ps  exact          1.6 GHz -> 625 ps  exact
//     2.0 GHz ->  500 ps  exact          2.5 GHz -> 400 ps  exact
//     3.0 GHz ->  333 ps  (333.33 ps; period -0.1 %, clock runs 0.1 % fast: 3.003 GHz)
//     2.1 GHz ->  476 ps  (476.19 ps; period -0.04 %)
//
// The error is at most 0.5 ps per cycle (relative: 0.5 ps / period, at most 0.15 % at
// 3 GHz). It is systematic, the same in every run, and grows linearly with simulated
// time: after 10^6 cycles a 3 GHz domain is 333 ns ahead of an ideal 3 GHz clock. Rates
// derived from cycle counts therefore carry the same relative error, which period_error()
// reports so that a configuration can be checked or a report can state it. Models must use period() (the rounded value)
// consistently; mixing it with the nominal frequency would make cycle counts and times disagree.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "sohusim/sim/sim_time.hpp"

namespace sohusim::sim {

class ClockDomain {
 public:
  /// Throws std::invalid_argument if the name is empty, the frequency is not a finite
  /// positive number, or its period rounds to 0 ps (above 2 THz) or does not fit in 64 bits.
  ClockDomain(std::string name, double frequency_hz, sc_core::sc_time phase = sc_core::SC_ZERO_TIME);

  const std::string& name() const noexcept { return name_; }
  /// The frequency that was asked for.
  double nominal_frequency_hz() const noexcept { return nominal_hz_; }
  /// The frequency the simulation really uses: 1 / period().
  double effective_frequency_hz() const noexcept;
  /// (period() - nominal period) / nominal period; 0 for exact frequencies, -0.001 at 3 GHz.
  double period_error() const noexcept;

  sc_core::sc_time period() const { return from_ps(period_ps_); }
  std::uint64_t period_ps() const noexcept { return period_ps_; }
  sc_core::sc_time phase() const { return from_ps(phase_ps_); }

  /// Duration of `cycles` periods. Throws std::overflow_error past 2^64 ps.
  sc_core::sc_time cycles_to_time(std::uint64_t cycles) const;
  /// Whole periods in `duration`, rounded down (a partial cycle is not a cycle).
  std::uint64_t time_to_cycles(const sc_core::sc_time& duration) const;

  /// The first edge at or after `now`: `now` itself if it is an edge, `phase()` if `now`
  /// is before the clock starts. Throws std::overflow_error if that edge is past 2^64 ps.
  sc_core::sc_time next_edge(const sc_core::sc_time& now) const;
  /// The first edge strictly after `now`: where a model that acted on an edge acts next.
  sc_core::sc_time edge_after(const sc_core::sc_time& now) const;

  /// Number of edges in the half-open interval [from, to). Half-open so that intervals
  /// add up: cycles_between(a, b) + cycles_between(b, c) == cycles_between(a, c), and a
  /// model that is busy from a to b counts exactly the edges at which it was busy.
  /// Throws std::invalid_argument if to < from.
  std::uint64_t cycles_between(const sc_core::sc_time& from, const sc_core::sc_time& to) const;

 private:
  // Edges strictly before t (ps): the number of k >= 0 with phase + k*period < t.
  std::uint64_t edges_before(std::uint64_t t_ps) const noexcept;

  std::string name_;
  double nominal_hz_;
  std::uint64_t period_ps_;
  std::uint64_t phase_ps_;
};

/// The clock domains of one simulated system, by name ("engine", "hbm", "pcie", "host").
/// Components look their domain up once, at construction, and keep the reference: entries
/// are never removed or moved, so references stay valid for the registry's lifetime.
class ClockDomains {
 public:
  /// Throws std::invalid_argument if a domain of that name exists (or the domain is invalid).
  const ClockDomain& add(ClockDomain domain);
  const ClockDomain& add(std::string name, double frequency_hz, sc_core::sc_time phase = sc_core::SC_ZERO_TIME);

  /// Throws std::out_of_range naming the unknown domain and listing the known ones.
  const ClockDomain& get(std::string_view name) const;
  /// nullptr if unknown.
  const ClockDomain* find(std::string_view name) const noexcept;
  bool contains(std::string_view name) const noexcept { return find(name) != nullptr; }

  std::size_t size() const noexcept { return domains_.size(); }
  /// Names in lexicographic order (deterministic, for reports and error messages).
  std::vector<std::string> names() const;

 private:
  std::map<std::string, ClockDomain, std::less<>> domains_;
};

}  // namespace sohusim::sim
