// Clock domains and simulated-time helpers: edge arithmetic, rounding, the registry.
// Pure sc_time arithmetic, no kernel elaboration, so these run in the test process itself.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/sim/clock_domain.hpp"
#include "sohusim/sim/sim_time.hpp"
#include "systemc_test_support.hpp"

namespace {

using sohusim::sim::ClockDomain;
using sohusim::sim::ClockDomains;
using sohusim::sim::from_ns;
using sohusim::sim::from_ps;
using sohusim::sim::to_ns;
using sohusim::sim::to_ns_trace;
using sohusim::sim::to_ps;

// ---- simulated time ---------------------------------------------------------------------

TEST(ClockSimTime, ResolutionIsOnePicosecondAndEnsureIsIdempotent) {
  sohusim::sim::ensure_time_resolution();
  sohusim::sim::ensure_time_resolution();
  EXPECT_EQ(sc_core::sc_get_time_resolution(), sc_core::sc_time(1, sc_core::SC_PS));
  EXPECT_EQ(sc_core::sc_time(1, sc_core::SC_NS).value(), 1000u);
}

// Needs a kernel nobody has touched, so it runs as a "threadsafe" death test: the
// statement executes in a freshly started copy of this program.
TEST(ClockSimTime, DifferentResolutionAlreadySetIsAClearError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
        try {
          sohusim::sim::ensure_time_resolution();
        } catch (const std::logic_error& e) {
          std::cerr << "caught: " << e.what() << std::endl;
          sohusim::test::register_main_stack_as_leak_root();  // it exits from inside the test
          std::exit(3);
        }
        sohusim::test::register_main_stack_as_leak_root();
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "caught: .*1 ps.*already uses 1 ns");
}

TEST(ClockSimTime, ConversionsAreExactIntegers) {
  EXPECT_EQ(to_ps(from_ps(333)), 333u);
  EXPECT_EQ(to_ps(from_ns(7)), 7000u);
  EXPECT_EQ(to_ns(from_ps(1999)), 1u);  // rounded down
  EXPECT_EQ(to_ns(from_ps(2000)), 2u);
  EXPECT_EQ(to_ns_trace(from_ps(1999)), 1u);
  EXPECT_EQ(to_ns_trace(sc_core::sc_time(12.5, sc_core::SC_US)), 12500u);
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max() - 5;
  EXPECT_EQ(to_ps(from_ps(big)), big);
  EXPECT_THROW(from_ns(std::numeric_limits<std::uint64_t>::max() / 1000 + 1), std::overflow_error);
  EXPECT_NO_THROW(from_ns(std::numeric_limits<std::uint64_t>::max() / 1000));
}

// ---- periods and rounding ---------------------------------------------------------------

TEST(ClockDomain, ExactFrequenciesHaveNoRoundingError) {
  const ClockDomain engine("engine", 1.6e9);
  EXPECT_EQ(engine.period_ps(), 625u);
  EXPECT_EQ(engine.period(), sc_core::sc_time(625, sc_core::SC_PS));
  EXPECT_DOUBLE_EQ(engine.period_error(), 0.0);
  EXPECT_DOUBLE_EQ(engine.effective_frequency_hz(), 1.6e9);
  EXPECT_EQ(ClockDomain("a", 1e9).period_ps(), 1000u);
  EXPECT_EQ(ClockDomain("b", 2.5e9).period_ps(), 400u);
}

TEST(ClockDomain, ThreeGigahertzRoundsTo333PicosecondsAndReportsIt) {
  const ClockDomain hbm("hbm", 3e9);
  EXPECT_EQ(hbm.period_ps(), 333u);
  EXPECT_DOUBLE_EQ(hbm.nominal_frequency_hz(), 3e9);
  EXPECT_NEAR(hbm.period_error(), -0.001, 1e-9);  // 333 vs 333.33 ps
  EXPECT_NEAR(hbm.effective_frequency_hz(), 3.003003e9, 1e3);
  // 1e6 cycles: 333 us of simulated time, 333 ns shorter than an ideal 3 GHz clock.
  EXPECT_EQ(to_ps(hbm.cycles_to_time(1'000'000)), 333'000'000u);
  // Rounds to nearest, both ways: 2.1 GHz is 476.19 ps -> 476, 1.5 GHz 666.67 -> 667.
  EXPECT_EQ(ClockDomain("c", 2.1e9).period_ps(), 476u);
  EXPECT_EQ(ClockDomain("d", 1.5e9).period_ps(), 667u);
}

TEST(ClockDomain, InvalidDefinitionsAreRejected) {
  EXPECT_THROW(ClockDomain("x", 0.0), std::invalid_argument);
  EXPECT_THROW(ClockDomain("x", -1e9), std::invalid_argument);
  EXPECT_THROW(ClockDomain("x", std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(ClockDomain("x", std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(ClockDomain("x", 3e12), std::invalid_argument);  // period 0.33 ps -> 0
  EXPECT_THROW(ClockDomain("", 1e9), std::invalid_argument);
  try {
    ClockDomain("pcie", -5.0);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'pcie'"), std::string::npos) << e.what();
  }
}

// ---- edges ------------------------------------------------------------------------------

TEST(ClockDomain, NextEdgeWithZeroPhase) {
  const ClockDomain clk("engine", 1.6e9);  // edges at 0, 625, 1250, ...
  EXPECT_EQ(to_ps(clk.next_edge(from_ps(0))), 0u);
  EXPECT_EQ(to_ps(clk.next_edge(from_ps(1))), 625u);
  EXPECT_EQ(to_ps(clk.next_edge(from_ps(624))), 625u);
  EXPECT_EQ(to_ps(clk.next_edge(from_ps(625))), 625u);
  EXPECT_EQ(to_ps(clk.next_edge(from_ps(626))), 1250u);
  EXPECT_EQ(to_ps(clk.edge_after(from_ps(625))), 1250u);
  EXPECT_EQ(to_ps(clk.edge_after(from_ps(0))), 625u);
}

TEST(ClockDomain, NextEdgeWithNonZeroPhase) {
  const ClockDomain link("link", 1.6e9, from_ps(100));  // edges at 100, 725, 1350, ...
  EXPECT_EQ(to_ps(link.phase()), 100u);
  EXPECT_EQ(to_ps(link.next_edge(from_ps(0))), 100u);  // before the clock starts
  EXPECT_EQ(to_ps(link.next_edge(from_ps(100))), 100u);
  EXPECT_EQ(to_ps(link.next_edge(from_ps(101))), 725u);
  EXPECT_EQ(to_ps(link.next_edge(from_ps(725))), 725u);
  EXPECT_EQ(to_ps(link.edge_after(from_ps(99))), 100u);
  EXPECT_EQ(to_ps(link.edge_after(from_ps(100))), 725u);
  // A phase longer than a period delays the start; there are no earlier edges.
  const ClockDomain late("late", 1e9, from_ps(5500));
  EXPECT_EQ(to_ps(late.next_edge(from_ps(0))), 5500u);
  EXPECT_EQ(to_ps(late.next_edge(from_ps(5501))), 6500u);
  EXPECT_EQ(late.cycles_between(from_ps(0), from_ps(5500)), 0u);
}

TEST(ClockDomain, CyclesToTimeAndBackRoundDown) {
  const ClockDomain hbm("hbm", 3e9);
  EXPECT_EQ(to_ps(hbm.cycles_to_time(0)), 0u);
  EXPECT_EQ(to_ps(hbm.cycles_to_time(3)), 999u);
  EXPECT_EQ(hbm.time_to_cycles(from_ps(999)), 3u);
  EXPECT_EQ(hbm.time_to_cycles(from_ps(998)), 2u);  // a partial cycle is not a cycle
  EXPECT_EQ(hbm.time_to_cycles(from_ps(332)), 0u);
  EXPECT_THROW(hbm.cycles_to_time(std::numeric_limits<std::uint64_t>::max() / 300), std::overflow_error);
}

TEST(ClockDomain, CyclesBetweenCountsEdgesInHalfOpenIntervals) {
  const ClockDomain clk("engine", 1.6e9, from_ps(100));            // edges at 100, 725, 1350, 1975
  EXPECT_EQ(clk.cycles_between(from_ps(0), from_ps(100)), 0u);     // [0,100) has no edge
  EXPECT_EQ(clk.cycles_between(from_ps(0), from_ps(101)), 1u);     // edge 100
  EXPECT_EQ(clk.cycles_between(from_ps(100), from_ps(725)), 1u);   // edge 100, not 725
  EXPECT_EQ(clk.cycles_between(from_ps(101), from_ps(1976)), 3u);  // 725, 1350, 1975
  EXPECT_EQ(clk.cycles_between(from_ps(500), from_ps(500)), 0u);
  EXPECT_THROW(clk.cycles_between(from_ps(2), from_ps(1)), std::invalid_argument);
}

// The arithmetic against a brute-force walk over the edges, on random clocks and times.
TEST(ClockDomain, EdgeArithmeticMatchesABruteForceWalk) {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint64_t period = 1 + rng() % 997;
    const std::uint64_t phase = rng() % (3 * period);
    const ClockDomain clk("rand", 1e12 / static_cast<double>(period), from_ps(phase));
    ASSERT_EQ(clk.period_ps(), period);
    const std::uint64_t a = rng() % 20000;
    const std::uint64_t b = a + rng() % 20000;
    std::uint64_t edges = 0;
    std::uint64_t first_at_or_after_a = 0;
    bool found = false;
    for (std::uint64_t e = phase; e < b + 2 * period; e += period) {
      edges += (e >= a && e < b) ? 1 : 0;
      if (!found && e >= a) {
        first_at_or_after_a = e;
        found = true;
      }
    }
    ASSERT_EQ(clk.cycles_between(from_ps(a), from_ps(b)), edges)
        << "period " << period << " phase " << phase << " [" << a << ", " << b << ")";
    ASSERT_EQ(to_ps(clk.next_edge(from_ps(a))), first_at_or_after_a)
        << "period " << period << " phase " << phase << " now " << a;
    const std::uint64_t c = b + rng() % 5000;
    ASSERT_EQ(clk.cycles_between(from_ps(a), from_ps(b)) + clk.cycles_between(from_ps(b), from_ps(c)),
              clk.cycles_between(from_ps(a), from_ps(c)));
  }
}

// ---- registry ---------------------------------------------------------------------------

TEST(ClockDomains, LookupByNameAndStableReferences) {
  ClockDomains domains;
  const ClockDomain& engine = domains.add("engine", 1.6e9);
  domains.add(ClockDomain("hbm", 3.2e9));
  domains.add("host", 3e9, from_ps(50));
  EXPECT_EQ(&domains.get("engine"), &engine);       // references survive later insertions
  EXPECT_EQ(domains.get("hbm").period_ps(), 313u);  // 312.5 ps rounds half away from zero
  EXPECT_EQ(to_ps(domains.get("host").phase()), 50u);
  EXPECT_TRUE(domains.contains("host"));
  EXPECT_EQ(domains.find("pcie"), nullptr);
  EXPECT_EQ(domains.size(), 3u);
  EXPECT_EQ(domains.names(), (std::vector<std::string>{"engine", "hbm", "host"}));
}

TEST(ClockDomains, UnknownDomainErrorNamesItAndTheKnownOnes) {
  ClockDomains domains;
  domains.add("engine", 1.6e9);
  domains.add("host", 3e9);
  try {
    (void)domains.get("pcie");
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "unknown clock domain 'pcie' (known: engine, host)");
  }
  EXPECT_THROW(domains.add("engine", 1e9), std::invalid_argument);
  EXPECT_EQ(domains.get("engine").period_ps(), 625u);  // the first definition stands
}

}  // namespace
