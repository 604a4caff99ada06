// Clock synchronisation against the simulator's ground truth (docs/clock-sync.md). The system
// is tests/platform/clock-sync-2h.yaml: device clocks 5 ms in and 50 ppm fast with read
// jitter, host clocks with offsets of seconds, drifts of -10 and +40 ppm and read jitter.
// The host programs only see what software on a real machine sees: their own clock
// (DeviceAccess::host_clock_ns), the device's TIMESTAMP register over MMIO, and pings over
// the host network. The checks then compare the fitted mappings with the true clocks
// (TimestampCounter::device_ns, HostClock::true_ns at simulated time) over a 1 s run.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"
#include "sohusim/driver/clock_sampler.hpp"
#include "sohusim/driver/device.hpp"
#include "sohusim/host/host_clock.hpp"
#include "sohusim/platform/profiling/clock_ping.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/platform/system_spec.hpp"
#include "sohusim/profiler/clock_sync.hpp"

namespace sohusim::platform::test {
namespace {

using driver::DeviceAccess;
using profiler::ClockFit;
using profiler::ClockSync;

std::string system_file() {
  return std::string(SOHUSIM_SOURCE_DIR) + "/tests/platform/clock-sync-2h.yaml";
}

std::uint16_t first_sohu_pf(DeviceAccess& a) {
  for (const driver::PciFunction& f : a.functions()) {
    if (!f.virtual_function && f.vendor_id == 0x1E5C && f.device_id == 0x5001) return f.rid;
  }
  ADD_FAILURE() << "the platform shows no Sohu physical function";
  return 0;
}

constexpr unsigned kBursts = 250;  // one every 4 ms: the run spans 1 s
constexpr std::uint64_t kBurstSpacingNs = 4'000'000;
constexpr double kGridNs = 1e6;  // the residual is checked every simulated millisecond

// What a host program leaves behind for the checks: its samples and the simulated time span.
struct Span {
  std::uint64_t first_ns = 0, last_ns = 0;  // simulated time of the first and last sample
};

// Errors of a mapping from remote to local clock readings at the simulated instants of the
// run: `estimate(remote)` is what the profiler says, `true_local` and `true_remote` the clocks.
struct Errors {
  double max_abs = 0;
  double at_start = 0, at_end = 0;  // signed
};

template <typename Estimate, typename TrueLocal, typename TrueRemote>
Errors errors_over(const Span& span, Estimate estimate, TrueLocal true_local, TrueRemote true_remote) {
  Errors e;
  bool first = true;
  for (double t = static_cast<double>(span.first_ns); t <= static_cast<double>(span.last_ns); t += kGridNs) {
    const auto ps = static_cast<std::uint64_t>(t * 1000.0);
    const double err = static_cast<double>(estimate(true_remote(ps))) - static_cast<double>(true_local(ps));
    e.max_abs = std::max(e.max_abs, std::fabs(err));
    if (first) e.at_start = err;
    first = false;
    e.at_end = err;
  }
  return e;
}

// ---- the clock models ------------------------------------------------------------------------

TEST(ClockModels, TimestampReadJitterIsBoundedAndRepeatable) {
  device::TimestampParams p;
  p.offset_ns = 5e6;
  p.drift_ppm = 50;
  p.jitter_ns = 20;
  const device::TimestampCounter a(p, 0), b(p, 0), other(p, 1);
  unsigned moved = 0, differs = 0;
  for (std::uint64_t ps = 1'000'000; ps < 1'000'000'000; ps += 7'654'321) {
    const std::uint64_t v = a.read_ns(ps);
    EXPECT_GE(v, a.device_ns(ps));
    EXPECT_LE(v, a.device_ns(ps + 20'000));  // at most 20 ns of latch delay
    EXPECT_EQ(v, b.read_ns(ps));             // the same seed and time: the same value
    moved += v != a.device_ns(ps) ? 1 : 0;
    differs += v != other.read_ns(ps) ? 1 : 0;
  }
  EXPECT_GT(moved, 50u);
  EXPECT_GT(differs, 50u);  // another device (stream) jitters differently
  p.jitter_ns = 0;
  const device::TimestampCounter exact(p);
  EXPECT_EQ(exact.read_ns(123'456'789), exact.device_ns(123'456'789));
}

TEST(ClockModels, HostClockHasOffsetDriftAndMonotonicJitteredReads) {
  host::HostClockParams p;
  p.offset_ns = 1.2e9;
  p.drift_ppm = -10;
  p.jitter_ns = 25;
  p.seed = 3;
  host::HostClock c(p), same(p);
  EXPECT_EQ(c.true_ns(0), 1'200'000'000u);
  EXPECT_NEAR(static_cast<double>(c.true_ns(1'000'000'000'000ULL)), 1.2e9 + 999'990'000.0, 1.0);  // 1 s at -10 ppm
  EXPECT_NEAR(static_cast<double>(c.sim_ps_at(1'200'000'000.0L + 999'990'000.0L)), 1e12, 1.0);
  std::uint64_t last = 0;
  for (std::uint64_t ps = 0; ps < 10'000'000; ps += 1000) {  // reads 1 ns apart: jitter 25 ns
    const std::uint64_t v = c.read_ns(ps);
    EXPECT_GE(v, last);  // never backwards
    EXPECT_LE(v, c.true_ns(ps + 25'000));
    EXPECT_EQ(v, same.read_ns(ps));
    last = v;
  }
  // The default clock is the simulator's time in ns.
  host::HostClock plain;
  EXPECT_EQ(plain.read_ns(1'234'567'890), 1'234'567u);
  EXPECT_EQ(plain.true_ns(999), 0u);
}

TEST(ClockModels, SystemFilesDeclareHostClocksAndNameBadKeys) {
  const SystemSpec s = SystemSpec::load(system_file(), config_dirs());
  ASSERT_EQ(s.hosts.size(), 2u);
  EXPECT_DOUBLE_EQ(s.hosts[0].clock.offset_ns, 1.2e9);
  EXPECT_DOUBLE_EQ(s.hosts[0].clock.drift_ppm, -10);
  EXPECT_DOUBLE_EQ(s.hosts[1].clock.jitter_ns, 25);
  EXPECT_EQ(s.hosts[1].clock.seed, 12u);
  // Without `clock:` a host's clock is the simulator's time (seed: the host index).
  const SystemSpec two = SystemSpec::load("sohu-2x8", config_dirs());
  for (unsigned h = 0; h < 2; ++h) {
    EXPECT_EQ(two.hosts[h].clock.offset_ns, 0);
    EXPECT_EQ(two.hosts[h].clock.drift_ppm, 0);
    EXPECT_EQ(two.hosts[h].clock.jitter_ns, 0);
    EXPECT_EQ(two.hosts[h].clock.seed, h);
  }
  const auto error_of = [](const std::string& yaml) {
    try {
      SystemSpec::parse(yaml, "sys.yaml");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = error_of("hosts:\n  - {devices: 1}\n  - {devices: 1, clock: {drift_ppm: 2000}}");
  EXPECT_TRUE(contains(e, "sys.yaml:3: hosts[1].clock.drift_ppm: 2000 is out of range (allowed -1000 .. 1000)")) << e;
  e = error_of("hosts: [{devices: 1, clock: {jitter: 2 ms}}]");
  EXPECT_TRUE(contains(e, "hosts[0].clock.jitter: out of range (allowed 0 s .. 1 ms)")) << e;
  e = error_of("hosts: [{devices: 1, clock: {offset: -1 s}}]");
  EXPECT_TRUE(contains(e, "hosts[0].clock.offset")) << e;
  e = error_of("hosts: [{devices: 1, clock: {offset: 5 GB}}]");
  EXPECT_TRUE(contains(e, "hosts[0].clock.offset")) << e;
  e = error_of("hosts: [{devices: 1, clock: {skew: 1}}]");
  EXPECT_TRUE(contains(e, "hosts[0].clock.skew: unknown key (allowed: drift_ppm, jitter, offset, seed)")) << e;
  e = error_of("hosts: [{devices: 1, clock: {drift_ppm: fast}}]");
  EXPECT_TRUE(contains(e, "hosts[0].clock.drift_ppm: `fast` is not a number")) << e;
  e = error_of("hosts: [{devices: 1, clock: 5}]");
  EXPECT_TRUE(contains(e, "hosts[0].clock: a mapping {offset, drift_ppm, jitter, seed}")) << e;
}

SOHUSIM_SYSTEMC_TEST(ClockSyncPlatform, WithoutAClockTheHostClockIsSimulatedTime) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    a.spend_ns(12'345);
    EXPECT_EQ(a.host_clock_ns(), a.now_ns());
    driver::Device d(a, first_sohu_pf(a));
    d.probe();
    // No drift, no offset, no jitter by default: TIMESTAMP reads inside its round trip.
    const std::uint64_t before = a.now_ns();
    const std::uint64_t dev = d.device_time_ns();
    EXPECT_GE(dev, before);
    EXPECT_LE(dev, a.now_ns());
  });
}

// ---- device to host --------------------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(ClockSyncPlatform, DeviceToHostResidualIsWithin100nsOverOneSecond) {
  Simulator sim(options(system_file()));
  std::vector<driver::DeviceClockSample> samples;
  Span span;
  ClockFit fit, windowed;
  std::int64_t window_start = 0;
  sim.run(
      [&](HostContext& host) {
        DeviceAccess& a = host.access();
        driver::Device d(a, first_sohu_pf(a));
        d.probe();
        // Bursts of 8 back-to-back reads every 4 ms; the best read of each burst is a point.
        driver::DeviceClockSampler sampler(d, ClockSync::Options{8, 1});
        span.first_ns = a.now_ns();
        for (unsigned b = 0; b < kBursts; ++b) {
          const std::uint64_t t0 = a.now_ns();
          sampler.sample();
          span.last_ns = a.now_ns();
          if (b + 1 < kBursts) a.spend_ns(kBurstSpacingNs - (a.now_ns() - t0));
        }
        samples = sampler.samples();
        fit = sampler.sync().fit();
        // The same samples through a sliding window of the last 200 ms.
        ClockSync w(ClockSync::Options{8, 1, 200'000'000});
        for (const auto& s : samples) {
          w.add_mmio(static_cast<std::int64_t>(s.host_before), static_cast<std::int64_t>(s.device),
                     static_cast<std::int64_t>(s.host_after));
        }
        windowed = w.fit();
        window_start = windowed.first_local_ns;
      },
      {0});
  ASSERT_EQ(samples.size(), kBursts * 8u);
  EXPECT_GE(span.last_ns - span.first_ns, 996'000'000u);  // the samples span the 1 s run

  const device::TimestampCounter& device = sim.system().device(0).timestamp();
  const host::HostClock& host = sim.system().access(0).clock();
  const auto true_host = [&](std::uint64_t ps) { return host.true_ns(ps); };
  const auto true_device = [&](std::uint64_t ps) { return device.device_ns(ps); };

  // Fitted: device time -> host clock through the least-squares fit.
  const Errors fitted = errors_over(
      span, [&](std::uint64_t dev) { return fit.to_local(static_cast<std::int64_t>(dev)); }, true_host, true_device);
  // Uncorrected 1: device time taken as host time.
  const Errors raw = errors_over(
      span, [](std::uint64_t dev) { return static_cast<std::int64_t>(dev); }, true_host, true_device);
  // Uncorrected 2: the offset of the first burst's best sample only (no drift).
  const auto s0 = *std::min_element(samples.begin(), samples.begin() + 8, [](const auto& x, const auto& y) {
    return x.host_after - x.host_before < y.host_after - y.host_before;
  });
  const double offset0 = static_cast<double>(s0.device) - 0.5 * static_cast<double>(s0.host_before + s0.host_after);
  const Errors offset_only = errors_over(
      span, [&](std::uint64_t dev) { return static_cast<double>(dev) - offset0; }, true_host, true_device);
  std::printf(
      "[clock-sync] device->host over %.3f s: fitted drift %.3f ppm (true %.3f), residual max %.1f ns; offset-only "
      "error %.1f ns at start, %.1f ns at end; raw error %.0f ns\n",
      static_cast<double>(span.last_ns - span.first_ns) * 1e-9, fit.drift_ppm(), (1.00005 / (1 - 10e-6) - 1) * 1e6,
      fitted.max_abs, offset_only.at_start, offset_only.at_end, raw.max_abs);

  EXPECT_LE(fitted.max_abs, 100.0);
  EXPECT_NEAR(fit.drift_ppm(), (1.00005 / (1 - 10e-6) - 1) * 1e6, 0.01);
  EXPECT_EQ(fit.points, kBursts);
  // Without the correction the error is far larger: the offset alone is good at the start
  // and 60 ppm x 1 s = 60 us off at the end; the raw device time is the clocks' offsets off.
  EXPECT_LT(std::fabs(offset_only.at_start), 1000.0);
  EXPECT_GT(std::fabs(offset_only.at_end), 10'000.0);
  EXPECT_GT(offset_only.max_abs, 100 * fitted.max_abs);
  EXPECT_GT(raw.max_abs, 1e9);

  // The sliding window's fit holds inside its window too.
  Span last = span;
  last.first_ns = static_cast<std::uint64_t>(host.sim_ps_at(static_cast<long double>(window_start)) / 1000.0L) + 1;
  EXPECT_GE(last.first_ns, span.last_ns - 201'000'000);
  const Errors in_window = errors_over(
      last, [&](std::uint64_t dev) { return windowed.to_local(static_cast<std::int64_t>(dev)); }, true_host,
      true_device);
  std::printf("[clock-sync] device->host, 200 ms sliding window: %zu points, residual max %.1f ns\n", windowed.points,
              in_window.max_abs);
  EXPECT_LE(in_window.max_abs, 100.0);
}

// ---- host to host ----------------------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(ClockSyncPlatform, HostToHostResidualIsWithin1usOverOneSecond) {
  Simulator sim(options(system_file()));
  std::vector<PingStamps> pings;
  Span span;
  ClockFit fit, unfiltered;
  std::size_t traffic = 0;
  constexpr unsigned kPingsPerBurst = 4;
  sim.run([&](HostContext& host) {
    if (host.host_index() == 1) {
      // Background traffic from host1 to host0 for the whole run: 256 KiB messages (5.2 us
      // on the wire each) at seeded random gaps of 0-100 us. A ping reply that leaves while
      // one is being sent waits behind it: delays on one leg only, which the midpoint
      // cannot tell from an offset, and which the lowest-round-trip filter removes.
      sc_core::sc_spawn([&host, &traffic] {
        std::mt19937_64 rng(5);
        while (host.now_ns() < 1'010'000'000) {
          host.access().spend_ns(rng() % 100'000);
          host.net_send(0, 256 * 1024, 0xBEEF);
          ++traffic;
        }
      });
      for (unsigned i = 0; i < kBursts * kPingsPerBurst; ++i) host.answer_ping(0);
      return;
    }
    DeviceAccess& a = host.access();
    ClockSync sync(ClockSync::Options{kPingsPerBurst, 1});
    ClockSync every(ClockSync::Options{1, 1});
    span.first_ns = a.now_ns();
    for (unsigned b = 0; b < kBursts; ++b) {
      const std::uint64_t t0 = a.now_ns();
      for (unsigned i = 0; i < kPingsPerBurst; ++i) {
        const PingStamps p = host.ping(1);
        for (ClockSync* s : {&sync, &every}) {
          s->add_ping(static_cast<std::int64_t>(p.t1), static_cast<std::int64_t>(p.t2), static_cast<std::int64_t>(p.t3),
                      static_cast<std::int64_t>(p.t4));
        }
        pings.push_back(p);
      }
      span.last_ns = a.now_ns();
      if (b + 1 < kBursts) a.spend_ns(kBurstSpacingNs - (a.now_ns() - t0));
    }
    fit = sync.fit();
    unfiltered = every.fit();
  });
  EXPECT_GT(traffic, 15'000u);
  ASSERT_EQ(pings.size(), kBursts * kPingsPerBurst);
  // The pings crossed the network: two 5 us latencies between t1 and t4 (on host0's clock,
  // 10 ppm slow, read with up to 25 ns of jitter), more for those behind the traffic.
  unsigned delayed = 0;
  for (const PingStamps& p : pings) {
    EXPECT_GE(p.t4 - p.t1, 9'950u);
    delayed += p.t4 - p.t1 > 10'100 ? 1 : 0;
  }
  EXPECT_GT(delayed, pings.size() / 50);  // the traffic delayed a few percent of them

  const host::HostClock& local = sim.system().access(0).clock();
  const host::HostClock& remote = sim.system().access(1).clock();
  const auto true_local = [&](std::uint64_t ps) { return local.true_ns(ps); };
  const auto true_remote = [&](std::uint64_t ps) { return remote.true_ns(ps); };
  const Errors fitted = errors_over(
      span, [&](std::uint64_t r) { return fit.to_local(static_cast<std::int64_t>(r)); }, true_local, true_remote);
  const Errors every_ping = errors_over(
      span, [&](std::uint64_t r) { return unfiltered.to_local(static_cast<std::int64_t>(r)); }, true_local,
      true_remote);
  // The offset of the first burst's best ping only (no drift).
  const PingStamps p0 =
      *std::min_element(pings.begin(), pings.begin() + kPingsPerBurst, [](const PingStamps& x, const PingStamps& y) {
        return (x.t4 - x.t1) - (x.t3 - x.t2) < (y.t4 - y.t1) - (y.t3 - y.t2);
      });
  const double offset0 = 0.5 * ((static_cast<double>(p0.t2) - static_cast<double>(p0.t1)) +
                                (static_cast<double>(p0.t3) - static_cast<double>(p0.t4)));
  const Errors offset_only = errors_over(
      span, [&](std::uint64_t r) { return static_cast<double>(r) - offset0; }, true_local, true_remote);
  const Errors raw = errors_over(
      span, [](std::uint64_t r) { return static_cast<std::int64_t>(r); }, true_local, true_remote);
  std::printf(
      "[clock-sync] host1->host0 over %.3f s: fitted drift %.3f ppm (true %.3f), residual max %.1f ns (every ping "
      "fitted, no filter: %.1f ns; %u of %zu pings delayed by %zu background messages); offset-only error %.1f ns at "
      "start, %.1f ns "
      "at end; raw error %.0f ns\n",
      static_cast<double>(span.last_ns - span.first_ns) * 1e-9, fit.drift_ppm(), (1.00004 / (1 - 10e-6) - 1) * 1e6,
      fitted.max_abs, every_ping.max_abs, delayed, pings.size(), traffic, offset_only.at_start, offset_only.at_end,
      raw.max_abs);

  EXPECT_LE(fitted.max_abs, 1000.0);
  // Fitting every ping, the replies delayed behind the traffic pull the estimate off.
  EXPECT_GT(every_ping.max_abs, 50.0);
  EXPECT_GT(every_ping.max_abs, 5 * fitted.max_abs);
  EXPECT_NEAR(fit.drift_ppm(), (1.00004 / (1 - 10e-6) - 1) * 1e6, 0.05);
  EXPECT_LT(std::fabs(offset_only.at_start), 1000.0);
  EXPECT_GT(std::fabs(offset_only.at_end), 10'000.0);  // 50 ppm x 1 s = 50 us
  EXPECT_GT(offset_only.max_abs, 10 * fitted.max_abs);
  EXPECT_GT(raw.max_abs, 1e9);  // the clocks are 2.5 s apart
}

}  // namespace
}  // namespace sohusim::platform::test
