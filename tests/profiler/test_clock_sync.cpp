// ClockSync on synthetic clocks with known offset and drift: the local clock is true time,
// the remote one runs at 1 + drift from its own offset. Samples carry read jitter and
// delays on one leg of the round trip (asymmetric outliers), drawn from a seeded generator
// (mt19937_64's raw output is specified by the standard: the same numbers everywhere).
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/profiler/clock_sync.hpp"

using namespace sohusim::profiler;

namespace {

// A remote clock: remote(t) = offset + t x (1 + drift_ppm 1e-6).
struct RemoteClock {
  double offset_ns = 0;
  double drift_ppm = 0;
  std::int64_t at(double t_ns) const {
    return static_cast<std::int64_t>(std::floor(offset_ns + t_ns * (1.0 + drift_ppm * 1e-6)));
  }
  double true_local_of(std::int64_t remote_ns) const {
    return (static_cast<double>(remote_ns) - offset_ns) / (1.0 + drift_ppm * 1e-6);
  }
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(g_() >> 11) * (1.0 / 9007199254740992.0); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }

 private:
  std::mt19937_64 g_;
};

// MMIO-style samples every `step_ns` over [0, span_ns): legs of `leg_ns` each, read jitter of
// +-jitter on every stamp, and with probability `p_outlier` a delay of up to `outlier_ns`
// on one leg: the completion with probability `p_down`, else the request.
void feed_mmio(ClockSync& s, const RemoteClock& rc, Rng& rng, double span_ns, double step_ns, double leg_ns,
               double jitter_ns, double p_outlier, double outlier_ns, double p_down = 0.5) {
  for (double t = 1000; t < span_ns; t += step_ns) {
    double up = leg_ns, down = leg_ns;
    if (rng.unit() < p_outlier) (rng.unit() < p_down ? down : up) += rng.uniform(0, outlier_ns);
    const auto before = static_cast<std::int64_t>(t + rng.uniform(-jitter_ns, jitter_ns));
    const std::int64_t remote = rc.at(t + up) + static_cast<std::int64_t>(rng.uniform(-jitter_ns, jitter_ns));
    const auto after = static_cast<std::int64_t>(t + up + down + rng.uniform(-jitter_ns, jitter_ns));
    s.add_mmio(before, remote, after);
  }
}

// The largest |fitted - true| local time of remote readings across [0, span_ns].
double max_residual(const ClockFit& f, const RemoteClock& rc, double span_ns) {
  double worst = 0;
  for (double t = 0; t <= span_ns; t += span_ns / 200) {
    const std::int64_t r = rc.at(t);
    worst = std::max(worst, std::fabs(static_cast<double>(f.to_local(r)) - rc.true_local_of(r)));
  }
  return worst;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST(ClockSync, ExactSamplesGiveTheExactOffsetAndDrift) {
  const RemoteClock rc{3.5e9, 50};
  ClockSync s(ClockSync::Options{1, 1});
  Rng rng(1);
  feed_mmio(s, rc, rng, 1e9, 1e7, 750, 0, 0, 0);
  const ClockFit f = s.fit();
  EXPECT_EQ(f.points, 100u);
  EXPECT_NEAR(f.drift_ppm(), 50.0, 0.01);
  EXPECT_NEAR(f.offset_ns(0), 3.5e9, 2.0);
  EXPECT_NEAR(f.offset_ns(1'000'000'000), 3.5e9 + 50e3, 2.0);
  EXPECT_LT(max_residual(f, rc, 1e9), 2.0);
  EXPECT_LT(f.rms_ns, 1.0);
  // The two directions are inverse.
  for (std::int64_t local : {std::int64_t{0}, std::int64_t{123'456'789}, std::int64_t{999'999'999}}) {
    EXPECT_LE(std::llabs(f.to_local(f.to_remote(local)) - local), 1);
  }
  EXPECT_EQ(s.to_remote(500'000'000), f.to_remote(500'000'000));
}

TEST(ClockSync, KeepingTheLowestRoundTripsRejectsAsymmetricOutliers) {
  // 40% of the samples are delayed by up to 20 us on one leg, mostly the completion's (an
  // asymmetry: their midpoints are late, by up to 10 us). The best of every 8 are clean;
  // fitting them all is not.
  const RemoteClock rc{1e6, -35};
  Rng a(7), b(7);
  ClockSync filtered(ClockSync::Options{8, 1});
  ClockSync raw(ClockSync::Options{1, 1});
  feed_mmio(filtered, rc, a, 1e9, 1e6, 750, 10, 0.4, 20000, 0.8);
  feed_mmio(raw, rc, b, 1e9, 1e6, 750, 10, 0.4, 20000, 0.8);
  const ClockFit ff = filtered.fit();
  const ClockFit fr = raw.fit();
  EXPECT_EQ(filtered.samples(), 1000u);
  EXPECT_EQ(ff.points, 125u);  // the best of each group of 8
  EXPECT_NEAR(ff.drift_ppm(), -35.0, 0.05);
  const double res_filtered = max_residual(ff, rc, 1e9);
  const double res_raw = max_residual(fr, rc, 1e9);
  EXPECT_LT(res_filtered, 30.0) << "filtered residual " << res_filtered << " ns";
  EXPECT_GT(res_raw, 500.0) << "raw residual " << res_raw << " ns";
  EXPECT_GT(res_raw, 10 * res_filtered) << "raw residual " << res_raw << " ns";
  EXPECT_GT(fr.rms_ns, 1000.0);  // the raw points scatter by microseconds
}

TEST(ClockSync, FourTimestampPingsFitAClockThatIsBehind) {
  // The remote host's clock is 2 ms behind and 30 ppm slow; one-way latency 5 us, the remote
  // turns a ping around in 1-3 us, 30% of the pings queue behind traffic on one leg (the
  // reply's, three times in four).
  const RemoteClock rc{-2e6, -30};
  Rng rng(3);
  ClockSync s(ClockSync::Options{8, 1});
  for (double t = 0; t < 1e9; t += 2e6) {
    double up = 5000, down = 5000;
    if (rng.unit() < 0.3) (rng.unit() < 0.75 ? down : up) += rng.uniform(0, 50000);
    const double turn = rng.uniform(1000, 3000);
    const auto t1 = static_cast<std::int64_t>(t + rng.uniform(-20, 20));
    const std::int64_t t2 = rc.at(t + up) + static_cast<std::int64_t>(rng.uniform(-20, 20));
    const std::int64_t t3 = rc.at(t + up + turn) + static_cast<std::int64_t>(rng.uniform(-20, 20));
    const auto t4 = static_cast<std::int64_t>(t + up + turn + down + rng.uniform(-20, 20));
    s.add_ping(t1, t2, t3, t4);
  }
  EXPECT_EQ(s.samples(), 500u);
  const ClockFit f = s.fit();
  EXPECT_NEAR(f.drift_ppm(), -30.0, 0.2);
  EXPECT_NEAR(f.offset_ns(0), -2e6, 100.0);
  EXPECT_LT(max_residual(f, rc, 1e9), 100.0);
  // The window's points are the pings with the least time on the wire.
  for (const SyncPoint& p : s.window()) EXPECT_LT(p.rtt_ns, 10100) << "at " << p.local_ns;
}

TEST(ClockSync, KeepTakesTheBestFewOfEveryGroup) {
  ClockSync s(ClockSync::Options{4, 2});
  // Round trips 4, 1, 3, 2 in each group: the second and the fourth are kept.
  const std::int64_t rtts[] = {4, 1, 3, 2};
  for (int i = 0; i < 12; ++i) s.add_mmio(i * 100, 1000 + i * 100, i * 100 + rtts[i % 4]);
  const auto w = s.window();
  ASSERT_EQ(w.size(), 6u);
  EXPECT_EQ(w[0].rtt_ns, 1);
  EXPECT_EQ(w[1].rtt_ns, 2);
  EXPECT_EQ(w[0].local_ns, 100);  // 100 + 1 / 2 in integer ns
  EXPECT_EQ(w[1].remote_ns, 1300);
}

TEST(ClockSync, TheSlidingWindowFollowsADriftThatChanges) {
  // 50 ppm for the first second, 10 ppm after it (a crystal warming up).
  ClockSync s(ClockSync::Options{1, 1, 200'000'000});
  const auto remote = [](double t) {
    return t < 1e9 ? 5e5 + t * (1 + 50e-6) : 5e5 + 1e9 * (1 + 50e-6) + (t - 1e9) * (1 + 10e-6);
  };
  for (double t = 0; t < 2e9; t += 1e6) {
    const auto l = static_cast<std::int64_t>(t);
    s.add_mmio(l - 500, static_cast<std::int64_t>(remote(t)), l + 500);
  }
  const ClockFit f = s.fit();
  EXPECT_NEAR(f.drift_ppm(), 10.0, 0.01);
  EXPECT_GE(f.first_local_ns, 1'799'000'000);
  EXPECT_LE(f.points, 202u);
  EXPECT_NEAR(static_cast<double>(f.to_remote(1'900'000'000)), remote(1.9e9), 2.0);
  // A window by count keeps the newest points.
  ClockSync c(ClockSync::Options{1, 1, 0, 50});
  for (int i = 0; i < 500; ++i) c.add_mmio(i * 1000, i * 1000, i * 1000 + 10);
  EXPECT_EQ(c.window().size(), 50u);
  EXPECT_EQ(c.window().front().local_ns, 450 * 1000 + 5);
}

TEST(ClockSync, BadInputIsRefusedWithTheReason) {
  ClockSync s;
  std::string e = error_of([&] { s.add_mmio(1000, 5, 999); });
  EXPECT_TRUE(has(e, "host_after (999 ns) is earlier than host_before (1000 ns)")) << e;
  s.add_mmio(1000, 5, 2000);
  e = error_of([&] { s.add_mmio(900, 6, 2500); });
  EXPECT_TRUE(has(e, "MMIO sample 1")) << e;
  EXPECT_TRUE(has(e, "must not go backwards")) << e;
  e = error_of([&] { s.add_ping(3000, 10, 20, 2999); });
  EXPECT_TRUE(has(e, "t4 (reply received, 2999 ns) is earlier than t1")) << e;
  e = error_of([&] { s.add_ping(3000, 20, 10, 4000); });
  EXPECT_TRUE(has(e, "t3 (reply sent, 10 ns) is earlier than t2")) << e;
  e = error_of([&] { s.fit(); });
  EXPECT_TRUE(has(e, "1 point(s) in the window")) << e;
  EXPECT_TRUE(has(e, "at least 2")) << e;
  // Points all at one local time fit no slope.
  e = error_of([] { ClockSync::fit_points({{5, 1, 0}, {5, 2, 0}}); });
  EXPECT_TRUE(has(e, "all 2 points are at local time 5 ns")) << e;
  e = error_of([] { ClockSync::fit_points({{5, 1, 0}}, "dev0 sync"); });
  EXPECT_TRUE(has(e, "dev0 sync: 1 point(s) to fit")) << e;
  // A clock that goes backwards is not a clock.
  e = error_of([] { ClockSync::fit_points({{0, 100, 0}, {1000, 50, 0}}); });
  EXPECT_TRUE(has(e, "runs backwards")) << e;
  // min_points above what is in the window.
  ClockSync m(ClockSync::Options{1, 1, 0, 0, 5});
  for (int i = 0; i < 4; ++i) m.add_mmio(i * 10, i * 10, i * 10 + 2);
  EXPECT_TRUE(has(error_of([&] { m.fit(); }), "needs at least 5")) << error_of([&] { m.fit(); });
  m.add_mmio(50, 50, 52);
  EXPECT_NO_THROW(m.fit());
  // Options.
  EXPECT_TRUE(has(error_of([] { ClockSync(ClockSync::Options{0, 1}); }), "group must be in 1 .. 1000000, not 0"));
  EXPECT_TRUE(has(error_of([] { ClockSync(ClockSync::Options{4, 5}); }), "keep must be in 1 .. group (4), not 5"));
  EXPECT_TRUE(has(error_of([] { ClockSync(ClockSync::Options{4, 1, -1}); }), "window_ns must be >= 0"));
  EXPECT_TRUE(has(error_of([] { ClockSync(ClockSync::Options{4, 1, 0, 1}); }), "window_points must be 0"));
  EXPECT_TRUE(has(error_of([] { ClockSync(ClockSync::Options{4, 1, 0, 0, 1}); }), "min_points must be >= 2"));
  EXPECT_TRUE(has(error_of([] { ClockSync(ClockSync::Options{4, 1, 0, 3, 4}); }), "larger than window_points (3)"));
  EXPECT_TRUE(has(error_of([] { ClockSync().add_point(SyncPoint{0, 0, -1}); }), "round trip -1 ns is negative"));
}
