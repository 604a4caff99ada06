#include "sohusim/workloads/serving_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>

#include <nlohmann/json.hpp>

namespace sohusim::workloads {

namespace {

double rank(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

bool has_tpot(const RequestRecord& r) {
  return r.token_times_s.size() >= 2;
}

double tpot_of(const RequestRecord& r) {
  return (r.token_times_s.back() - r.token_times_s.front()) / static_cast<double>(r.token_times_s.size() - 1);
}

nlohmann::json json_of(const Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}, {"count", p.count}};
}

}  // namespace

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  p.count = values.size();
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  p.p50 = rank(values, 0.50);
  p.p90 = rank(values, 0.90);
  p.p99 = rank(values, 0.99);
  p.max = values.back();
  return p;
}

ServingMetrics serving_metrics(const std::vector<RequestRecord>& records, const SloTargets& slo) {
  ServingMetrics m;
  m.slo = slo;
  m.requests = records.size();
  std::vector<double> ttft, tpot, itl, e2e, queueing;
  double first_arrival = std::numeric_limits<double>::infinity(), last_token = 0;
  double in_tokens = 0, out_tokens = 0;
  for (const RequestRecord& r : records) {
    m.preemptions += r.preemptions;
    if (r.rejected) {
      ++m.rejected;
      continue;
    }
    first_arrival = std::min(first_arrival, r.request.arrival_s);
    if (!r.finished()) {
      ++m.unfinished;
      continue;
    }
    ++m.completed;
    in_tokens += r.request.input;
    out_tokens += r.request.output;
    last_token = std::max(last_token, r.token_times_s.back());
    const double t = r.token_times_s.front() - r.request.arrival_s;
    ttft.push_back(t);
    e2e.push_back(r.token_times_s.back() - r.request.arrival_s);
    queueing.push_back(r.first_scheduled_s - r.request.arrival_s);
    for (std::size_t i = 1; i < r.token_times_s.size(); ++i) itl.push_back(r.token_times_s[i] - r.token_times_s[i - 1]);
    if (has_tpot(r)) tpot.push_back(tpot_of(r));
    const bool ttft_ok = slo.ttft_s <= 0 || t <= slo.ttft_s;
    const bool tpot_ok = slo.tpot_s <= 0 || !has_tpot(r) || tpot_of(r) <= slo.tpot_s;
    if (ttft_ok && tpot_ok) ++m.met_slo;
  }
  m.makespan_s = m.completed > 0 ? last_token - first_arrival : 0;
  if (m.makespan_s > 0) {
    m.input_tokens_per_s = in_tokens / m.makespan_s;
    m.output_tokens_per_s = out_tokens / m.makespan_s;
    m.requests_per_s = static_cast<double>(m.completed) / m.makespan_s;
    m.goodput_per_s = static_cast<double>(m.met_slo) / m.makespan_s;
  }
  m.slo_attainment = m.completed > 0 ? static_cast<double>(m.met_slo) / static_cast<double>(m.completed) : 0;
  m.ttft_s = percentiles(std::move(ttft));
  m.tpot_s = percentiles(std::move(tpot));
  m.itl_s = percentiles(std::move(itl));
  m.e2e_s = percentiles(std::move(e2e));
  m.queueing_s = percentiles(std::move(queueing));
  return m;
}

void to_json(nlohmann::json& j, const ServingMetrics& m) {
  j = {{"requests", m.requests},
       {"completed", m.completed},
       {"rejected", m.rejected},
       {"unfinished", m.unfinished},
       {"preemptions", m.preemptions},
       {"makespan_s", m.makespan_s},
       {"input_tokens_per_s", m.input_tokens_per_s},
       {"output_tokens_per_s", m.output_tokens_per_s},
       {"requests_per_s", m.requests_per_s},
       {"ttft_s", json_of(m.ttft_s)},
       {"tpot_s", json_of(m.tpot_s)},
       {"itl_s", json_of(m.itl_s)},
       {"e2e_s", json_of(m.e2e_s)},
       {"queueing_s", json_of(m.queueing_s)},
       {"slo", {{"ttft_s", m.slo.ttft_s}, {"tpot_s", m.slo.tpot_s}}},
       {"met_slo", m.met_slo},
       {"goodput_per_s", m.goodput_per_s},
       {"slo_attainment", m.slo_attainment}};
}

void write_request_csv(std::ostream& os, const std::vector<RequestRecord>& records) {
  os << "id,arrival_s,input_tokens,output_tokens,status,ttft_s,tpot_s,e2e_s,queueing_s,preemptions\n";
  const auto flags = os.flags();
  os << std::setprecision(9);
  for (const RequestRecord& r : records) {
    os << r.request.id << ',' << r.request.arrival_s << ',' << r.request.input << ',' << r.request.output << ',';
    if (r.rejected) {
      os << "rejected,,,,," << r.preemptions << '\n';
      continue;
    }
    if (!r.finished()) {
      os << "unfinished,,,,," << r.preemptions << '\n';
      continue;
    }
    os << "completed," << r.token_times_s.front() - r.request.arrival_s << ',';
    if (has_tpot(r)) os << tpot_of(r);
    os << ',' << r.token_times_s.back() - r.request.arrival_s << ',' << r.first_scheduled_s - r.request.arrival_s << ','
       << r.preemptions << '\n';
  }
  os.flags(flags);
}

}  // namespace sohusim::workloads
