#pragma once
// Serving metrics as serving people read them, from the scheduler's request records:
//
//   TTFT       first output token - arrival
//   TPOT       (last token - first token) / (output - 1), per request (0 tokens after the first: none)
//   ITL        each gap between consecutive output tokens (the time-between-tokens distribution)
//   E2E        last token - arrival
//   queueing   first scheduled step's start - arrival
//   throughput input and output tokens of completed requests per second of the run (first
//              arrival to last token)
//   goodput    completed requests per second that met the SLO (TTFT <= slo_ttft and
//              TPOT <= slo_tpot; an unset target always holds)
//
// Percentiles interpolate linearly between the two nearest ranks (numpy's default).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sohusim/workloads/serving_scheduler.hpp"

namespace sohusim::workloads {

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::size_t count = 0;
};
Percentiles percentiles(std::vector<double> values);

struct SloTargets {
  double ttft_s = 0;  // 0: no target
  double tpot_s = 0;
};

struct ServingMetrics {
  std::size_t requests = 0, completed = 0, rejected = 0, unfinished = 0;
  unsigned preemptions = 0;
  double makespan_s = 0;
  double input_tokens_per_s = 0, output_tokens_per_s = 0, requests_per_s = 0;
  Percentiles ttft_s, tpot_s, itl_s, e2e_s, queueing_s;
  SloTargets slo;
  std::size_t met_slo = 0;
  double goodput_per_s = 0;   // requests per second that met the SLO
  double slo_attainment = 0;  // met_slo / completed
};

ServingMetrics serving_metrics(const std::vector<RequestRecord>& records, const SloTargets& slo = {});
void to_json(nlohmann::json& j, const ServingMetrics& m);
/// One line per request: id, arrival, input, output, status, ttft, tpot, e2e, queueing,
/// preemptions (seconds; empty cells where a value does not exist).
void write_request_csv(std::ostream& os, const std::vector<RequestRecord>& records);

}  // namespace sohusim::workloads
