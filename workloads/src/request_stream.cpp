#include "sohusim/workloads/request_stream.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

namespace sohusim::workloads {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A finite number, the whole field; `what` names it in the error.
double number(const std::string& field, const std::string& what) {
  const std::string t = trim(field);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v))
    throw RequestStreamError(what + ": `" + field + "` is not a number");
  return v;
}

// A whole number of tokens >= 1.
std::uint32_t tokens(const std::string& field, const std::string& what) {
  const double v = number(field, what);
  if (v < 1 || v > 4294967295.0 || v != std::floor(v))
    throw RequestStreamError(what + ": `" + field + "` is not a whole number of tokens >= 1");
  return static_cast<std::uint32_t>(v);
}

}  // namespace

LengthSpec parse_length_spec(const std::string& text, const std::string& what) {
  LengthSpec s;
  s.text = text;
  const std::vector<std::string> f = split(text, ':');
  const std::string kind = f.empty() ? "" : f[0];
  const auto need = [&](std::size_t n, const char* form) {
    if (f.size() != n) throw RequestStreamError(what + ": `" + text + "` is not " + form);
  };
  if (f.size() == 1 && !kind.empty() && (std::isdigit(static_cast<unsigned char>(kind[0])) != 0)) {
    s.kind = LengthSpec::Kind::Fixed;
    s.a = tokens(kind, what);
  } else if (kind == "fixed") {
    need(2, "fixed:N");
    s.kind = LengthSpec::Kind::Fixed;
    s.a = tokens(f[1], what);
  } else if (kind == "uniform") {
    need(3, "uniform:LO:HI");
    s.kind = LengthSpec::Kind::Uniform;
    s.a = tokens(f[1], what);
    s.b = tokens(f[2], what);
    if (s.b < s.a) throw RequestStreamError(what + ": `" + text + "`: HI is below LO");
  } else if (kind == "normal" || kind == "lognormal") {
    need(3, kind == "normal" ? "normal:MEAN:SD" : "lognormal:MEAN:SD");
    s.kind = kind == "normal" ? LengthSpec::Kind::Normal : LengthSpec::Kind::LogNormal;
    s.a = number(f[1], what + " mean");
    s.b = number(f[2], what + " sd");
    if (s.a < 1) throw RequestStreamError(what + ": `" + text + "`: the mean must be >= 1");
    if (s.b < 0) throw RequestStreamError(what + ": `" + text + "`: the standard deviation must be >= 0");
  } else if (kind == "hist") {
    if (f.size() < 2) throw RequestStreamError(what + ": `" + text + "` is not hist:FILE");
    s.kind = LengthSpec::Kind::Histogram;
    const std::string path = text.substr(5);
    std::ifstream in(path);
    if (!in) throw RequestStreamError(what + ": cannot open histogram file `" + path + "`");
    std::string line;
    for (unsigned n = 1; std::getline(in, line); ++n) {
      const std::string t = trim(line);
      if (t.empty() || t[0] == '#') continue;
      const std::vector<std::string> c = split(t, ',');
      const std::string where = path + ":" + std::to_string(n);
      if (c.size() != 2) throw RequestStreamError(where + ": expected `length,weight`, got `" + t + "`");
      if (s.values.empty() && !std::isdigit(static_cast<unsigned char>(trim(c[0]).empty() ? 'x' : trim(c[0])[0])))
        continue;  // a header line
      s.values.push_back(tokens(c[0], where + ": length"));
      const double w = number(c[1], where + ": weight");
      if (w < 0) throw RequestStreamError(where + ": weight: `" + c[1] + "` is negative");
      s.weights.push_back(w);
    }
    double total = 0;
    for (double w : s.weights) total += w;
    if (s.values.empty() || total <= 0)
      throw RequestStreamError(what + ": histogram file `" + path + "` has no length with a positive weight");
  } else {
    throw RequestStreamError(what + ": `" + text +
                             "` is not a length: N, fixed:N, uniform:LO:HI, normal:MEAN:SD, lognormal:MEAN:SD or "
                             "hist:FILE");
  }
  return s;
}

StreamKind parse_stream_kind(const std::string& text) {
  if (text == "offline") return StreamKind::Offline;
  if (text == "poisson") return StreamKind::Poisson;
  if (text == "gamma") return StreamKind::Gamma;
  if (text == "closed") return StreamKind::Closed;
  if (text == "trace") return StreamKind::Trace;
  throw RequestStreamError("scenario: `" + text + "` is not offline, poisson, gamma, closed or trace");
}

const char* to_string(StreamKind k) {
  switch (k) {
    case StreamKind::Offline:
      return "offline";
    case StreamKind::Poisson:
      return "poisson";
    case StreamKind::Gamma:
      return "gamma";
    case StreamKind::Closed:
      return "closed";
    case StreamKind::Trace:
      return "trace";
  }
  return "?";
}

void StreamSpec::validate() const {
  const auto bad = [](const std::string& m) { throw RequestStreamError(m); };
  if ((kind == StreamKind::Poisson || kind == StreamKind::Gamma) && !(rate > 0 && std::isfinite(rate)))
    bad("rate: must be > 0 requests per second for a " + std::string(to_string(kind)) + " stream");
  if (kind == StreamKind::Gamma && !(cv > 0 && std::isfinite(cv))) bad("cv: must be > 0 for a gamma stream");
  if (duration_s < 0 || !std::isfinite(duration_s)) bad("duration: must be >= 0 seconds");
  if ((kind == StreamKind::Poisson || kind == StreamKind::Gamma || kind == StreamKind::Closed) && requests == 0 &&
      duration_s == 0)
    bad("a " + std::string(to_string(kind)) + " stream needs a number of requests or a duration");
  if (kind == StreamKind::Offline && requests == 0) bad("an offline stream needs a number of requests");
  if (kind == StreamKind::Closed && clients == 0) bad("clients: a closed loop needs at least one client");
  if (think_s < 0 || !std::isfinite(think_s)) bad("think: must be >= 0 seconds");
  if (kind == StreamKind::Trace && trace_file.empty()) bad("a trace stream needs a trace file");
  if (max_length == 0) bad("max length: must be >= 1");
}

LengthSampler::LengthSampler(LengthSpec spec, std::uint32_t max_length) : spec_(std::move(spec)), max_(max_length) {
  if (spec_.kind == LengthSpec::Kind::LogNormal) {
    // The normal under the lognormal whose own mean and sd are spec.a and spec.b.
    const double m = spec_.a, sd = spec_.b;
    sigma_ = std::sqrt(std::log1p(sd * sd / (m * m)));
    mu_ = std::log(m) - sigma_ * sigma_ / 2;
  }
  if (spec_.kind == LengthSpec::Kind::Histogram)
    pick_ = std::discrete_distribution<std::size_t>(spec_.weights.begin(), spec_.weights.end());
}

std::uint32_t LengthSampler::operator()(std::mt19937_64& rng) {
  double v = spec_.a;
  switch (spec_.kind) {
    case LengthSpec::Kind::Fixed:
      break;
    case LengthSpec::Kind::Uniform:
      v = static_cast<double>(std::uniform_int_distribution<std::uint64_t>(static_cast<std::uint64_t>(spec_.a),
                                                                           static_cast<std::uint64_t>(spec_.b))(rng));
      break;
    case LengthSpec::Kind::Normal:
      v = std::normal_distribution<double>(spec_.a, spec_.b)(rng);
      break;
    case LengthSpec::Kind::LogNormal:
      v = std::lognormal_distribution<double>(mu_, sigma_)(rng);
      break;
    case LengthSpec::Kind::Histogram:
      v = spec_.values[pick_(rng)];
      break;
  }
  return static_cast<std::uint32_t>(std::clamp(std::llround(v), 1LL, static_cast<long long>(max_)));
}

std::vector<Request> generate_requests(const StreamSpec& spec) {
  spec.validate();
  if (spec.kind == StreamKind::Closed)
    throw RequestStreamError("a closed loop's arrivals depend on completions: use ClosedLoop");
  std::vector<Request> out;
  const auto within = [&](double t) {
    return (spec.requests == 0 || out.size() < spec.requests) && (spec.duration_s == 0 || t <= spec.duration_s);
  };
  if (spec.kind == StreamKind::Trace) {
    for (const Request& r : read_request_trace(spec.trace_file)) {
      if (!within(r.arrival_s)) break;
      out.push_back(r);
      out.back().id = out.size() - 1;
    }
    return out;
  }
  std::mt19937_64 rng(spec.seed);
  LengthSampler in(spec.input, spec.max_length), outlen(spec.output, spec.max_length);
  std::exponential_distribution<double> exp(spec.kind == StreamKind::Poisson ? spec.rate : 1.0);
  // Gamma with shape k = 1/cv^2 and scale 1/(rate k): mean 1/rate, coefficient of variation cv.
  const double k = 1.0 / (spec.cv * spec.cv);
  std::gamma_distribution<double> gamma(k, 1.0 / (spec.rate * k));
  double t = 0;
  for (;;) {
    if (spec.kind == StreamKind::Poisson) t += exp(rng);
    if (spec.kind == StreamKind::Gamma) t += gamma(rng);
    if (!within(t)) break;
    Request r;
    r.id = out.size();
    r.arrival_s = t;
    r.input = in(rng);
    r.output = outlen(rng);
    out.push_back(r);
  }
  return out;
}

ClosedLoop::ClosedLoop(const StreamSpec& spec)
    : spec_(spec), rng_(spec.seed), in_(spec.input, spec.max_length), out_(spec.output, spec.max_length) {
  if (spec_.kind != StreamKind::Closed) throw RequestStreamError("ClosedLoop: the stream is not a closed loop");
  spec_.validate();
}

Request ClosedLoop::make(double arrival_s) {
  Request r;
  r.id = issued_++;
  r.arrival_s = arrival_s;
  r.input = in_(rng_);
  r.output = out_(rng_);
  return r;
}

std::vector<Request> ClosedLoop::first() {
  std::vector<Request> out;
  for (unsigned c = 0; c < spec_.clients && (spec_.requests == 0 || issued_ < spec_.requests); ++c)
    out.push_back(make(0.0));
  return out;
}

bool ClosedLoop::completed(std::uint64_t /*id*/, double t_s, Request& next) {
  const double at = t_s + spec_.think_s;
  if (spec_.requests != 0 && issued_ >= spec_.requests) return false;
  if (spec_.duration_s != 0 && at > spec_.duration_s) return false;
  next = make(at);
  return true;
}

std::vector<Request> read_request_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw RequestStreamError("cannot open request trace `" + path + "`");
  std::vector<Request> out;
  std::string line;
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t col_arrival = kNone, col_in = kNone, col_out = kNone;
  std::size_t columns = 0;
  for (unsigned n = 1; std::getline(in, line); ++n) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> c = split(t, ',');
    const std::string where = path + ":" + std::to_string(n);
    if (columns == 0) {  // the header
      for (std::size_t i = 0; i < c.size(); ++i) {
        const std::string name = trim(c[i]);
        if (name == "arrival_s") col_arrival = i;
        if (name == "input_tokens") col_in = i;
        if (name == "output_tokens") col_out = i;
      }
      if (col_arrival == kNone || col_in == kNone || col_out == kNone)
        throw RequestStreamError(where +
                                 ": the header must name the columns arrival_s, input_tokens and "
                                 "output_tokens; got `" +
                                 t + "`");
      columns = c.size();
      continue;
    }
    if (c.size() != columns)
      throw RequestStreamError(where + ": " + std::to_string(c.size()) + " fields, the header has " +
                               std::to_string(columns));
    Request r;
    r.id = out.size();
    r.arrival_s = number(c[col_arrival], where + ": arrival_s");
    if (r.arrival_s < 0) throw RequestStreamError(where + ": arrival_s: `" + c[col_arrival] + "` is negative");
    if (!out.empty() && r.arrival_s < out.back().arrival_s)
      throw RequestStreamError(where + ": arrival_s: " + trim(c[col_arrival]) + " is before the line above's");
    r.input = tokens(c[col_in], where + ": input_tokens");
    r.output = tokens(c[col_out], where + ": output_tokens");
    out.push_back(r);
  }
  if (columns == 0) throw RequestStreamError(path + ": no header line (arrival_s,input_tokens,output_tokens)");
  return out;
}

void write_request_trace(const std::string& path, const std::vector<Request>& requests) {
  std::ofstream out(path);
  if (!out) throw RequestStreamError("cannot write request trace `" + path + "`");
  out << "arrival_s,input_tokens,output_tokens\n";
  out << std::setprecision(std::numeric_limits<double>::max_digits10);
  for (const Request& r : requests) out << r.arrival_s << ',' << r.input << ',' << r.output << '\n';
  if (!out) throw RequestStreamError("writing request trace `" + path + "` failed");
}

}  // namespace sohusim::workloads
