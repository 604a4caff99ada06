// Request streams: arrival processes, length distributions, closed loops and trace files.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/workloads/request_stream.hpp"

namespace sohusim::workloads {
namespace {

namespace fs = std::filesystem;

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("sohusim_request_stream_" + name);
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const RequestStreamError& e) {
    return e.what();
  }
  return "(no error)";
}

// Mean and coefficient of variation of the inter-arrival times.
std::pair<double, double> gaps(const std::vector<Request>& r) {
  std::vector<double> g;
  for (std::size_t i = 1; i < r.size(); ++i) g.push_back(r[i].arrival_s - r[i - 1].arrival_s);
  const double mean = std::accumulate(g.begin(), g.end(), 0.0) / static_cast<double>(g.size());
  double var = 0;
  for (double x : g) var += (x - mean) * (x - mean);
  var /= static_cast<double>(g.size() - 1);
  return {mean, std::sqrt(var) / mean};
}

StreamSpec spec(StreamKind kind, std::uint64_t n) {
  StreamSpec s;
  s.kind = kind;
  s.requests = n;
  s.rate = 5;
  s.input = parse_length_spec("1024");
  s.output = parse_length_spec("256");
  return s;
}

TEST(RequestStream, OfflineRequestsAllArriveAtZeroWithTheirLengths) {
  const std::vector<Request> r = generate_requests(spec(StreamKind::Offline, 7));
  ASSERT_EQ(r.size(), 7U);
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].id, i);
    EXPECT_EQ(r[i].arrival_s, 0.0);
    EXPECT_EQ(r[i].input, 1024U);
    EXPECT_EQ(r[i].output, 256U);
  }
}

TEST(RequestStream, PoissonGapsHaveTheRateAndACoefficientOfVariationOfOne) {
  const std::vector<Request> r = generate_requests(spec(StreamKind::Poisson, 20000));
  ASSERT_EQ(r.size(), 20000U);
  const auto [mean, cv] = gaps(r);
  EXPECT_NEAR(mean, 0.2, 0.2 * 0.03);  // 1 / rate; 20,000 gaps: a standard error of 0.7 %
  EXPECT_NEAR(cv, 1.0, 0.03);
  for (std::size_t i = 1; i < r.size(); ++i) ASSERT_GE(r[i].arrival_s, r[i - 1].arrival_s);
}

TEST(RequestStream, GammaGapsHaveTheRateAndTheAskedBurstiness) {
  for (double want : {0.5, 2.0, 4.0}) {
    StreamSpec s = spec(StreamKind::Gamma, 20000);
    s.cv = want;
    const auto [mean, cv] = gaps(generate_requests(s));
    EXPECT_NEAR(mean, 0.2, 0.2 * 0.06) << want;
    EXPECT_NEAR(cv, want, want * 0.06) << want;
  }
}

TEST(RequestStream, TheSameSeedGivesTheSameStreamAndAnotherSeedAnother) {
  StreamSpec s = spec(StreamKind::Poisson, 50);
  s.input = parse_length_spec("lognormal:1024:512");
  const std::vector<Request> a = generate_requests(s), b = generate_requests(s);
  s.seed = 2;
  const std::vector<Request> c = generate_requests(s);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_EQ(a[i].input, b[i].input);
  }
  EXPECT_NE(a[10].arrival_s, c[10].arrival_s);
}

TEST(RequestStream, ADurationBoundsTheArrivals) {
  StreamSpec s = spec(StreamKind::Poisson, 0);
  s.duration_s = 100;
  const std::vector<Request> r = generate_requests(s);
  EXPECT_NEAR(static_cast<double>(r.size()), 500.0, 3 * std::sqrt(500.0));
  EXPECT_LE(r.back().arrival_s, 100.0);
}

TEST(RequestStream, LengthDistributionsHaveTheirMeanAndSpreadAndStayInRange) {
  std::mt19937_64 rng(7);
  const auto stats = [&](const std::string& text, std::uint32_t max) {
    LengthSampler sample(parse_length_spec(text), max);
    double sum = 0, sq = 0;
    std::uint32_t lo = ~0u, hi = 0;
    const int n = 40000;
    for (int i = 0; i < n; ++i) {
      const double v = sample(rng);
      sum += v;
      sq += v * v;
      lo = std::min(lo, static_cast<std::uint32_t>(v));
      hi = std::max(hi, static_cast<std::uint32_t>(v));
    }
    const double mean = sum / n;
    return std::make_tuple(mean, std::sqrt(sq / n - mean * mean), lo, hi);
  };
  auto [m1, s1, lo1, hi1] = stats("uniform:100:300", 1u << 20);
  EXPECT_NEAR(m1, 200, 2);
  EXPECT_EQ(lo1, 100U);
  EXPECT_EQ(hi1, 300U);
  auto [m2, s2, lo2, hi2] = stats("lognormal:1024:512", 1u << 20);
  EXPECT_NEAR(m2, 1024, 1024 * 0.02);
  EXPECT_NEAR(s2, 512, 512 * 0.05);
  EXPECT_GE(lo2, 1U);
  auto [m3, s3, lo3, hi3] = stats("normal:50:40", 100);  // clamped to [1, 100]
  EXPECT_EQ(lo3, 1U);
  EXPECT_EQ(hi3, 100U);
  (void)m3, (void)s3, (void)s1, (void)hi2;
}

TEST(RequestStream, AHistogramFileGivesItsLengthsInProportionToTheirWeights) {
  const std::string path = write_file("hist.csv", "length,weight\n128,3\n2048,1\n# unused\n4096,0\n");
  LengthSampler sample(parse_length_spec("hist:" + path), 1u << 20);
  std::mt19937_64 rng(3);
  int small = 0, large = 0;
  for (int i = 0; i < 40000; ++i) {
    const std::uint32_t v = sample(rng);
    ASSERT_TRUE(v == 128 || v == 2048) << v;
    (v == 128 ? small : large)++;
  }
  EXPECT_NEAR(static_cast<double>(small) / 40000, 0.75, 0.01);
}

TEST(RequestStream, BadLengthSpecsNameTheOptionAndWhatIsWrong) {
  EXPECT_EQ(error_of([] { parse_length_spec("uniform:10", "--input-len"); }),
            "--input-len: `uniform:10` is not uniform:LO:HI");
  EXPECT_EQ(error_of([] { parse_length_spec("uniform:300:100", "--input-len"); }),
            "--input-len: `uniform:300:100`: HI is below LO");
  EXPECT_EQ(error_of([] { parse_length_spec("zipf:3", "--output-len"); }),
            "--output-len: `zipf:3` is not a length: N, fixed:N, uniform:LO:HI, normal:MEAN:SD, lognormal:MEAN:SD or "
            "hist:FILE");
  EXPECT_EQ(error_of([] { parse_length_spec("fixed:0", "--output-len"); }),
            "--output-len: `0` is not a whole number of tokens >= 1");
  EXPECT_EQ(error_of([] { parse_length_spec("lognormal:1024:-1", "--input-len"); }),
            "--input-len: `lognormal:1024:-1`: the standard deviation must be >= 0");
  const std::string bad = write_file("badhist.csv", "128,1\n256,x\n");
  EXPECT_EQ(error_of([&] { parse_length_spec("hist:" + bad, "--input-len"); }),
            bad + ":2: weight: `x` is not a number");
}

TEST(RequestStream, BadSpecsAreRefusedBeforeAnythingIsGenerated) {
  StreamSpec s = spec(StreamKind::Poisson, 10);
  s.rate = 0;
  EXPECT_EQ(error_of([&] { generate_requests(s); }), "rate: must be > 0 requests per second for a poisson stream");
  s = spec(StreamKind::Gamma, 0);
  EXPECT_EQ(error_of([&] { generate_requests(s); }), "a gamma stream needs a number of requests or a duration");
  s = spec(StreamKind::Closed, 10);
  s.clients = 0;
  EXPECT_EQ(error_of([&] { ClosedLoop loop(s); }), "clients: a closed loop needs at least one client");
  EXPECT_EQ(error_of([] { parse_stream_kind("bursty"); }),
            "scenario: `bursty` is not offline, poisson, gamma, closed or trace");
}

TEST(RequestStream, AClosedLoopSendsAClientsNextRequestAThinkTimeAfterItsLastCompleted) {
  StreamSpec s = spec(StreamKind::Closed, 5);
  s.clients = 2;
  s.think_s = 0.5;
  ClosedLoop loop(s);
  const std::vector<Request> first = loop.first();
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(first[0].arrival_s, 0.0);
  EXPECT_EQ(first[1].id, 1U);
  Request next;
  ASSERT_TRUE(loop.completed(0, 2.0, next));
  EXPECT_EQ(next.id, 2U);
  EXPECT_DOUBLE_EQ(next.arrival_s, 2.5);
  ASSERT_TRUE(loop.completed(1, 3.0, next));
  ASSERT_TRUE(loop.completed(2, 4.0, next));
  EXPECT_EQ(next.id, 4U);
  EXPECT_FALSE(loop.completed(3, 5.0, next));  // five issued
  EXPECT_EQ(loop.issued(), 5U);
}

TEST(RequestStream, ATraceFileRoundTripsAndBoundsApply) {
  StreamSpec s = spec(StreamKind::Gamma, 40);
  s.cv = 3;
  s.output = parse_length_spec("uniform:1:500");
  const std::vector<Request> made = generate_requests(s);
  const std::string path = write_file("trace.csv", "");
  write_request_trace(path, made);
  StreamSpec t;
  t.kind = StreamKind::Trace;
  t.trace_file = path;
  const std::vector<Request> read = generate_requests(t);
  ASSERT_EQ(read.size(), made.size());
  for (std::size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(read[i].arrival_s, made[i].arrival_s);  // exact: written with max_digits10
    EXPECT_EQ(read[i].output, made[i].output);
  }
  t.requests = 10;
  EXPECT_EQ(generate_requests(t).size(), 10U);
}

TEST(RequestStream, ATraceWithABadLineStopsAtFileLineAndField) {
  const std::string cols = write_file("cols.csv", "output_tokens,arrival_s,input_tokens,model\n16,0.5,100,x\n");
  const std::vector<Request> r = read_request_trace(cols);
  ASSERT_EQ(r.size(), 1U);
  EXPECT_EQ(r[0].input, 100U);
  EXPECT_EQ(r[0].output, 16U);
  EXPECT_EQ(r[0].arrival_s, 0.5);
  const std::string a = write_file("a.csv", "arrival_s,input_tokens,output_tokens\n0.1,10,10\n# c\n0.2,1.5,10\n");
  EXPECT_EQ(error_of([&] { read_request_trace(a); }),
            a + ":4: input_tokens: `1.5` is not a whole number of tokens >= 1");
  const std::string b = write_file("b.csv", "arrival_s,input_tokens,output_tokens\n0.3,10,10\n0.2,10,10\n");
  EXPECT_EQ(error_of([&] { read_request_trace(b); }), b + ":3: arrival_s: 0.2 is before the line above's");
  const std::string c = write_file("c.csv", "arrival_s,input_tokens\n0.3,10\n");
  EXPECT_EQ(error_of([&] { read_request_trace(c); }),
            c + ":1: the header must name the columns arrival_s, input_tokens and output_tokens; got "
                "`arrival_s,input_tokens`");
  const std::string d = write_file("d.csv", "arrival_s,input_tokens,output_tokens\n0.3,10\n");
  EXPECT_EQ(error_of([&] { read_request_trace(d); }), d + ":2: 2 fields, the header has 3");
  EXPECT_EQ(error_of([] { read_request_trace("/nonexistent/t.csv"); }),
            "cannot open request trace `/nonexistent/t.csv`");
}

}  // namespace
}  // namespace sohusim::workloads
