// The fast fidelity against the detailed one on the shared patterns: the same request
// streams, from the same driver, into FastDram and DramSystem built from the same
// configuration; their bandwidths must differ by at most 10 %. Both figures are printed, so
// the table in docs/memory-frontend.md can be refreshed from a test log. The patterns the
// fast model is known to miss by more are listed there ("Known gaps"), not here.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"
#include "pattern_harness.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/dram_system.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

using test::DrivenPattern;

struct Case {
  std::string name;
  std::vector<std::string> sets;
  DrivenPattern pattern;
};

// What the ctest name shows after the case's name: the load it offers.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.pattern.initiators << "x" << c.pattern.outstanding << " in flight";
}

// The case's name as a test name: "strided 1056 B 80% read, FCFS" -> "strided_1056B_80pct_read_FCFS".
std::string test_name(std::string text) {
  const std::pair<std::string, std::string> kShorter[] = {
      {" KiB", "KiB"}, {" B ", "B "}, {"%", "pct"}, {"per-bank", "perbank"}};
  for (const auto& [from, to] : kShorter) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  }
  std::string name;
  for (const char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      name += ch;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  if (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

struct Pair {
  test::DrivenResult fast, detailed;
};

Pair run_both(const Case& c) {
  const config::Config config = hbmtest::hbm_config("hbm/hbm3-6400", c.sets);
  Pair p;
  {
    counters::Registry reg;
    auto detailed = DramSystem::from_config(config, counters::Scope(reg, "d"));
    p.detailed = test::drive(*detailed, c.pattern);
  }
  {
    counters::Registry reg;
    sim::Instrumentation inst{&reg, nullptr, 0};
    auto fast = FastDram::from_config(config, inst, "f");
    p.fast = test::drive(*fast, c.pattern);
  }
  const double diff = (p.fast.bytes_per_second - p.detailed.bytes_per_second) / p.detailed.bytes_per_second;
  std::printf(
      "%-34s detailed %6.1f GB/s (%5.1f%%)  fast %6.1f GB/s (%5.1f%%)  diff %+5.1f%%  "
      "read latency %5.0f / %5.0f cycles\n",
      c.name.c_str(), p.detailed.bytes_per_second / 1e9, 100 * p.detailed.efficiency, p.fast.bytes_per_second / 1e9,
      100 * p.fast.efficiency, 100 * diff, p.detailed.avg_read_latency_cycles, p.fast.avg_read_latency_cycles);
  return p;
}

DrivenPattern pattern(DrivenPattern::Kind kind, double reads, std::uint32_t initiators, std::uint32_t outstanding,
                      std::uint64_t requests, std::uint64_t stride = 4096) {
  DrivenPattern p;
  p.kind = kind;
  p.read_fraction = reads;
  p.initiators = initiators;
  p.outstanding = outstanding;
  p.requests = requests;
  p.stride = stride;
  return p;
}

// Several initiators with 512 requests in flight each: enough to fill every controller
// queue, the regime in which bandwidth (not latency) is what a workload sees.
std::vector<Case> shared_patterns() {
  using K = DrivenPattern::Kind;
  const std::uint64_t n = 100000;
  return {
      {"stream read", {}, pattern(K::Stream, 1.0, 4, 512, n)},
      {"stream read, refresh off", {"hbm.controller.refresh=off"}, pattern(K::Stream, 1.0, 4, 512, n)},
      {"random read, per-bank refresh", {"hbm.controller.refresh=perbank"}, pattern(K::Random, 1.0, 4, 512, n)},
      {"stream write", {}, pattern(K::Stream, 0.0, 4, 512, n)},
      {"stream 70% read", {}, pattern(K::Stream, 0.7, 4, 512, n)},
      {"stream 50% read", {}, pattern(K::Stream, 0.5, 4, 512, n)},
      {"strided 4 KiB read", {}, pattern(K::Strided, 1.0, 4, 512, n / 4, 4096)},
      // Long enough to cross several all-bank refreshes.
      {"strided 1056 B read", {}, pattern(K::Strided, 1.0, 8, 256, 2 * n, 1056)},
      {"strided 1056 B read, refresh off",
       {"hbm.controller.refresh=off"},
       pattern(K::Strided, 1.0, 8, 256, n / 2, 1056)},
      {"strided 1056 B 80% read", {}, pattern(K::Strided, 0.8, 8, 256, n / 2, 1056)},
      {"strided 2080 B 80% read", {}, pattern(K::Strided, 0.8, 4, 512, n / 2, 2080)},
      {"random read", {}, pattern(K::Random, 1.0, 4, 512, n)},
      {"random read, refresh off", {"hbm.controller.refresh=off"}, pattern(K::Random, 1.0, 4, 512, n)},
      {"random 67% read", {}, pattern(K::Random, 0.67, 8, 256, n / 2)},
      {"random 50% read, 16 initiators", {}, pattern(K::Random, 0.5, 16, 128, n / 2)},
      {"random read, closed page", {"hbm.controller.page_policy=closed"}, pattern(K::Random, 1.0, 4, 512, n / 2)},
      {"random read, adaptive page", {"hbm.controller.page_policy=adaptive"}, pattern(K::Random, 1.0, 4, 512, n / 2)},
      // FCFS: the controller serves the oldest request of its queue only.
      {"strided 1056 B read, FCFS", {"hbm.controller.scheduler=fcfs"}, pattern(K::Strided, 1.0, 8, 256, n / 2, 1056)},
      {"random 67% read, FCFS", {"hbm.controller.scheduler=fcfs"}, pattern(K::Random, 0.67, 8, 256, n / 2)},
      {"random read, per-bank refresh, FCFS",
       {"hbm.controller.refresh=perbank", "hbm.controller.scheduler=fcfs"},
       pattern(K::Random, 1.0, 4, 512, n)},
      {"random write, per-bank refresh, FCFS",
       {"hbm.controller.refresh=perbank", "hbm.controller.scheduler=fcfs"},
       pattern(K::Random, 0.0, 4, 512, n)},
  };
}

class FastVsDetailed : public ::testing::TestWithParam<Case> {};

TEST_P(FastVsDetailed, BandwidthWithinTenPercent) {
  const Pair p = run_both(GetParam());
  ASSERT_GT(p.detailed.bytes_per_second, 0);
  EXPECT_NEAR(p.fast.bytes_per_second / p.detailed.bytes_per_second, 1.0, 0.10)
      << GetParam().name << ": fast " << p.fast.bytes_per_second / 1e9 << " GB/s, detailed "
      << p.detailed.bytes_per_second / 1e9 << " GB/s";
}

INSTANTIATE_TEST_SUITE_P(SharedPatterns, FastVsDetailed, ::testing::ValuesIn(shared_patterns()),
                         [](const ::testing::TestParamInfo<Case>& i) { return test_name(i.param.name); });

}  // namespace
}  // namespace sohusim::memory
