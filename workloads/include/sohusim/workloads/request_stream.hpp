#pragma once
// Request streams: the requests a serving system receives, with their arrival times and their
// input and output lengths, as serving benchmarks describe them (vLLM's benchmark_serving,
// Vidur's request generators).
//
//   offline  every request at t = 0
//   poisson  exponential inter-arrival times at `rate` requests per second
//   gamma    gamma inter-arrival times at `rate` with coefficient of variation `cv` (cv > 1 is
//            burstier than Poisson, cv = 1 is Poisson, cv < 1 more regular)
//   closed   `clients` clients, each sending its next request `think` seconds after its last
//            one completed (ClosedLoop: arrivals depend on the system's completions)
//   trace    arrivals and lengths from a CSV file (read_request_trace)
//
// Lengths are a LengthSpec: "fixed:N" (or just "N"), "uniform:LO:HI" (inclusive),
// "normal:MEAN:SD", "lognormal:MEAN:SD" (mean and standard deviation of the lengths
// themselves), "hist:FILE" (CSV lines `length,weight`). Sampled lengths are rounded and kept
// in [1, max].
//
// Everything draws from one std::mt19937_64 seeded by `seed`, in a fixed order (arrival, input
// length, output length per request): the same spec gives the same stream.
//
// Use:
//   StreamSpec s;  s.kind = StreamKind::Poisson;  s.rate = 4;  s.requests = 1000;
//   s.input = parse_length_spec("lognormal:1024:512");  s.output = parse_length_spec("256");
//   std::vector<Request> r = generate_requests(s);
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace sohusim::workloads {

struct Request {
  std::uint64_t id = 0;      // 0, 1, ... in arrival order
  double arrival_s = 0;      // seconds from the start of the run
  std::uint32_t input = 0;   // prompt tokens
  std::uint32_t output = 0;  // tokens to generate
};

/// A bad spec, trace or histogram file; the message names what and where (file:line, field).
class RequestStreamError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct LengthSpec {
  enum class Kind { Fixed, Uniform, Normal, LogNormal, Histogram };
  Kind kind = Kind::Fixed;
  double a = 128, b = 0;              // fixed: a; uniform: [a, b]; (log)normal: mean a, sd b
  std::vector<std::uint32_t> values;  // histogram: the lengths ...
  std::vector<double> weights;        // ... and their weights
  std::string text;                   // as written, for messages and output
};

/// Parses "fixed:N", "N", "uniform:LO:HI", "normal:MEAN:SD", "lognormal:MEAN:SD", "hist:FILE".
/// `what` names the option in errors ("--input-len").
LengthSpec parse_length_spec(const std::string& text, const std::string& what = "length");

enum class StreamKind { Offline, Poisson, Gamma, Closed, Trace };
StreamKind parse_stream_kind(const std::string& text);  // offline|poisson|gamma|closed|trace
const char* to_string(StreamKind k);

struct StreamSpec {
  StreamKind kind = StreamKind::Poisson;
  double rate = 1.0;           // requests per second (poisson, gamma)
  double cv = 1.0;             // gamma's coefficient of variation of inter-arrival times
  std::uint64_t requests = 0;  // how many (0: bounded by duration only)
  double duration_s = 0;       // arrivals after this are dropped (0: no bound)
  unsigned clients = 1;        // closed loop
  double think_s = 0;          // closed loop: between a completion and the client's next request
  LengthSpec input, output;
  std::uint32_t max_length = 1u << 20;  // sampled lengths are clamped to [1, max_length]
  std::string trace_file;               // trace
  std::uint64_t seed = 1;
  /// Throws RequestStreamError for values out of range (rate <= 0, cv <= 0, no bound on an
  /// open stream, a closed loop without clients...).
  void validate() const;
};

/// Draws lengths of one LengthSpec.
class LengthSampler {
 public:
  LengthSampler(LengthSpec spec, std::uint32_t max_length);
  std::uint32_t operator()(std::mt19937_64& rng);

 private:
  LengthSpec spec_;
  std::uint32_t max_;
  double mu_ = 0, sigma_ = 0;  // lognormal's parameters of the underlying normal
  std::discrete_distribution<std::size_t> pick_;
};

/// The requests of an open stream (offline, poisson, gamma, trace), in arrival order. For a
/// closed loop, use ClosedLoop.
std::vector<Request> generate_requests(const StreamSpec& spec);

/// A closed loop: `clients` clients, each with one request outstanding at a time. first()
/// gives each client's first request (all at t = 0); completed(id, t) gives the client's next
/// request, arriving at t + think, or nothing once `requests` have been issued (or the next
/// arrival would pass `duration_s`).
class ClosedLoop {
 public:
  explicit ClosedLoop(const StreamSpec& spec);
  std::vector<Request> first();
  bool completed(std::uint64_t id, double t_s, Request& next);
  std::uint64_t issued() const { return issued_; }

 private:
  Request make(double arrival_s);
  StreamSpec spec_;
  std::mt19937_64 rng_;
  LengthSampler in_, out_;
  std::uint64_t issued_ = 0;
};

/// Reads a request trace: CSV with a header line naming the columns `arrival_s`,
/// `input_tokens`, `output_tokens` (any order; other columns ignored), one request per line;
/// `#` starts a comment line. Arrivals must not decrease. Errors name file:line and the field.
std::vector<Request> read_request_trace(const std::string& path);
/// Writes requests in the format read_request_trace reads.
void write_request_trace(const std::string& path, const std::vector<Request>& requests);

}  // namespace sohusim::workloads
