// Link and transaction-layer behaviour: reads and their completion splitting, the tag
// limit, credits, bit errors and replay, ASPM power states, completion timeouts, UR,
// poisoned data, and data integrity through the segmentation.
#include <numeric>

#include <gtest/gtest.h>

#include "link_harness.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/pcie/segmentation.hpp"

namespace sohusim::pcie {
namespace {

using test::LinkBench;

LinkParams gen3x16() {
  LinkParams p;
  p.generation = 3;
  p.lanes = 16;
  p.mps = 256;
  p.mrrs = 512;
  return p;
}

TEST(Segmentation, WritesStopAtMpsAndNeverCrossFourKiB) {
  Segmenter s(4096 - 100, 600, 256);
  std::vector<Segment> got;
  while (!s.done()) got.push_back(s.next());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].length, 100u);  // up to the 4 KiB (and MPS) boundary
  EXPECT_EQ(got[1].length, 256u);
  EXPECT_EQ(got[2].length, 244u);
  EXPECT_EQ(got[2].address + got[2].length, 4096u + 500u);
  for (const Segment& g : got) EXPECT_EQ(g.address / 4096, (g.address + g.length - 1) / 4096);
  EXPECT_EQ(segment_count(4096 - 100, 600, 256), 3u);
}

TEST(Segmentation, CompletionsEndOnReadCompletionBoundaries) {
  CompletionSegmenter unmerged(32, 512, 64, 256, false);
  std::vector<std::uint32_t> lens;
  while (!unmerged.done()) lens.push_back(unmerged.next().length);
  EXPECT_EQ(lens.front(), 32u);
  EXPECT_EQ(lens.size(), 9u);
  EXPECT_EQ(completion_count(32, 512, 64, 256, false), 9u);
  CompletionSegmenter merged(32, 512, 64, 256, true);
  lens.clear();
  while (!merged.done()) lens.push_back(merged.next().length);
  EXPECT_EQ(lens, (std::vector<std::uint32_t>{224, 256, 32}));
  EXPECT_EQ(completion_count(32, 512, 64, 256, true), 3u);
}

double read_gbps(LinkParams p, std::uint64_t bytes, std::uint64_t host_latency_ps, bool bulk) {
  LinkBench bench(p, {}, host_latency_ps);
  double gbps = 0;
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MRd;
    r.length = bytes;
    r.allow_bulk = bulk;
    const auto res = bench.ep->transact(r);
    EXPECT_EQ(res.status, CplStatus::SC);
    gbps = static_cast<double>(bytes) / test::now_ns();
  });
  sc_core::sc_start();
  return gbps;
}

SOHUSIM_SYSTEMC_TEST(LinkReads, Mrrs512CompletionsAtRcb64LandLower) {
  LinkParams p = gen3x16();
  p.merge_completions = false;  // one completion per 64-byte RCB
  const double got = read_gbps(p, 4u << 20, 500'000, false);
  std::printf("Gen3 x16 reads MRRS 512, RCB 64: %.3f GB/s (closed form %.3f)\n", got,
              p.read_completion_throughput() / 1e9);
  EXPECT_GE(got, 10.6 * 0.99);
  EXPECT_LE(got, 10.9 * 1.01);
  EXPECT_NEAR(got, p.read_completion_throughput() / 1e9, p.read_completion_throughput() / 1e9 * 0.01);
}

SOHUSIM_SYSTEMC_TEST(LinkReads, TooFewTagsMakeReadsLatencyBound) {
  LinkParams p = gen3x16();
  p.tag_bits = 5;                           // 32 tags
  const std::uint64_t host_ps = 2'000'000;  // 2 us host memory latency
  const double got = read_gbps(p, 4u << 20, host_ps, false);
  // Round trip of one request: MRd on the wire, propagation both ways, memory, completer
  // turn-around, and the completions of 512 bytes on the wire.
  const double rtt_ns = (2 * p.propagation_ps + p.completer_latency_ps + host_ps) / 1000.0 +
                        (20 + 512 + 2 * 20) / (p.tlp_lane_bytes_per_s() / 1e9);
  const double bound = 32 * 512 / rtt_ns;
  std::printf("32 tags x 512 B / %.1f ns = %.3f GB/s; simulated %.3f GB/s\n", rtt_ns, bound, got);
  EXPECT_NEAR(got, bound, bound * 0.03);
  EXPECT_LT(got, p.read_completion_throughput() / 1e9 * 0.8);
}

SOHUSIM_SYSTEMC_TEST(LinkReads, BulkReadsWithinOnePercentOfTlpLevel) {
  LinkParams p = gen3x16();
  p.generation = 5;
  // One link, one after the other: 16 MiB TLP by TLP, then 48 MiB through the bulk path.
  LinkBench bench(p, {}, 500'000);
  double tlp = 0, bulk = 0;
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MRd;
    r.length = 16u << 20;
    r.allow_bulk = false;
    double t0 = test::now_ns();
    EXPECT_EQ(bench.ep->transact(r).status, CplStatus::SC);
    tlp = static_cast<double>(r.length) / (test::now_ns() - t0);
    r.length = 48u << 20;
    r.allow_bulk = true;
    t0 = test::now_ns();
    EXPECT_EQ(bench.ep->transact(r).status, CplStatus::SC);
    bulk = static_cast<double>(r.length) / (test::now_ns() - t0);
  });
  sc_core::sc_start();
  std::printf("Gen5 x16 reads: bulk %.3f GB/s vs TLP level %.3f (closed form %.3f)\n", bulk, tlp,
              p.read_completion_throughput() / 1e9);
  EXPECT_NEAR(bulk, tlp, tlp * 0.01);
  EXPECT_GT(bench.count("pcie.down.tlps"), 65536);  // the TLP-level part really went TLP by TLP
}

SOHUSIM_SYSTEMC_TEST(LinkReads, BulkReadsKeepTheTagLimit) {
  LinkParams p = gen3x16();
  p.tag_bits = 5;
  const std::uint64_t host_ps = 2'000'000;
  const double got = read_gbps(p, 32u << 20, host_ps, true);
  const double rtt_ns = (2 * p.propagation_ps + p.completer_latency_ps + host_ps) / 1000.0 +
                        (20 + 512 + 2 * 20) / (p.tlp_lane_bytes_per_s() / 1e9);
  const double bound = 32 * 512 / rtt_ns;
  std::printf("bulk, 32 tags: %.3f GB/s (bound %.3f)\n", got, bound);
  EXPECT_NEAR(got, bound, bound * 0.03);
}

SOHUSIM_SYSTEMC_TEST(LinkReads, DataSurvivesSegmentationBothWays) {
  LinkParams p = gen3x16();
  p.mps = 128;
  LinkBench bench(p);
  std::iota(bench.host.mem.begin(), bench.host.mem.begin() + 100000, 0);
  test::Driver d("driver", [&] {
    std::vector<std::uint8_t> buf(70001);
    PciePort::Request r;
    r.type = TlpType::MRd;
    r.address = 4000;
    r.length = buf.size();
    r.data = buf.data();
    EXPECT_EQ(bench.ep->transact(r).status, CplStatus::SC);
    for (std::size_t i = 0; i < buf.size(); i += 997) EXPECT_EQ(buf[i], static_cast<std::uint8_t>(4000 + i));
    for (auto& b : buf) b = static_cast<std::uint8_t>(b ^ 0x5a);
    r.type = TlpType::MWr;
    r.address = 1 << 20;
    bench.ep->transact(r);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));  // posted: let the last TLPs land
    for (std::size_t i = 0; i < buf.size(); i += 991) EXPECT_EQ(bench.host.mem[(1 << 20) + i], buf[i]);
  });
  sc_core::sc_start();
  EXPECT_GT(bench.count("pcie.up.tlps_mwr"), 500);
}

SOHUSIM_SYSTEMC_TEST(LinkErrors, BitErrorsCauseNakAndReplayButNoLoss) {
  LinkParams p = gen3x16();
  p.ber = 1e-6;  // about one TLP in 450 of 276 bytes
  LinkBench bench(p);
  double gbps = 0;
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MWr;
    r.length = 4u << 20;
    r.allow_bulk = false;
    bench.ep->transact(r);
    sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));
    gbps = static_cast<double>(r.length) / test::now_ns();
  });
  sc_core::sc_start();
  EXPECT_GT(bench.count("pcie.up.bad_tlps"), 10);
  EXPECT_GT(bench.count("pcie.up.replays"), bench.count("pcie.up.bad_tlps"));
  EXPECT_EQ(bench.host.posted_bytes, 4u << 20);  // every byte arrived exactly once
  EXPECT_EQ(bench.count("pcie.up.tlps"), bench.count("pcie.up.tlps_mwr"));
}

SOHUSIM_SYSTEMC_TEST(LinkCredits, FewCreditsThrottleAndCountStalls) {
  LinkParams p = gen3x16();
  p.credits.posted_header = 4;
  p.credits.posted_data = 64;  // 1 KiB of posted buffer
  LinkBench bench(p);
  double gbps = 0;
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MWr;
    r.length = 1u << 20;
    r.allow_bulk = false;
    bench.ep->transact(r);
    gbps = static_cast<double>(r.length) / test::now_ns();
  });
  sc_core::sc_start();
  // 4 TLPs of 256 B per credit loop (~17 ns on the wire + 5 ns + 100 ns UpdateFC).
  EXPECT_LT(gbps, 10.0);
  EXPECT_GT(bench.count("pcie.up.credit_stall_time"), 0);
}

SOHUSIM_SYSTEMC_TEST(LinkPower, AspmEntersL0sAndL1AndPaysTheExitLatency) {
  LinkParams p = gen3x16();
  p.aspm_l0s = true;
  p.aspm_l1 = true;
  LinkBench bench(p);
  double first_ns = 0, after_idle_ns = 0;
  test::Driver d("driver", [&] {
    std::uint32_t value = 0;
    PciePort::Request r;
    r.type = TlpType::MRd;
    r.length = 4;
    r.data = reinterpret_cast<std::uint8_t*>(&value);
    double t0 = test::now_ns();
    bench.rc->transact(r);  // an MMIO read of the device
    first_ns = test::now_ns() - t0;
    sc_core::wait(sc_core::sc_time(200, sc_core::SC_US));  // idle: L0s after 7 us, L1 after 64 us
    EXPECT_EQ(bench.link->state(), LinkPowerState::L1);
    t0 = test::now_ns();
    bench.rc->transact(r);
    after_idle_ns = test::now_ns() - t0;
  });
  sc_core::sc_start();
  bench.link->sync_stats();
  EXPECT_NEAR(after_idle_ns - first_ns, p.l1_exit_ps / 1000.0, 50.0);
  // Twice: after the first read, and again after the second once the kernel runs idle.
  EXPECT_EQ(bench.count("pcie.down.l1_entries"), 2);
  EXPECT_GE(bench.count("pcie.down.l0s_entries"), 1);
  EXPECT_GT(bench.count("pcie.down.l1_time"), 100e6);  // ps
}

SOHUSIM_SYSTEMC_TEST(LinkErrors, CompletionTimeoutThenUnexpectedCompletion) {
  LinkParams p = gen3x16();
  p.completion_timeout_ps = 10'000'000;  // 10 us
  LinkBench bench(p, {}, 50'000'000);    // the host answers after 50 us
  std::vector<PortError> errors;
  bench.ep->set_error_listener([&](PortError e, const Tlp&) { errors.push_back(e); });
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MRd;
    r.length = 64;
    const auto res = bench.ep->transact(r);
    EXPECT_TRUE(res.timed_out);
    EXPECT_NEAR(test::now_ns(), 10'000, 200);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
  });
  sc_core::sc_start();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], PortError::CompletionTimeout);
  EXPECT_EQ(errors[1], PortError::UnexpectedCompletion);
  EXPECT_EQ(bench.ep->tags().in_use(), 0u);
}

SOHUSIM_SYSTEMC_TEST(LinkErrors, UnsupportedRequestAndPoisonedCompletion) {
  LinkBench bench(gen3x16());
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MRd;
    r.address = 1ULL << 40;  // beyond the host array
    r.length = 64;
    EXPECT_EQ(bench.ep->transact(r).status, CplStatus::UR);
    bench.host.poison = true;
    r.address = 0;
    const auto res = bench.ep->transact(r);
    EXPECT_TRUE(res.poisoned);
  });
  sc_core::sc_start();
  EXPECT_EQ(bench.count("pcie.rc.unsupported_requests"), 1);
  EXPECT_EQ(bench.count("pcie.ep.poisoned_received"), 1);
}

}  // namespace
}  // namespace sohusim::pcie
