#pragma once
// ServingProfile: what the profiler keeps of a serving run (`sohusim serve --profile`): each
// request's latencies and the system's occupancy after each step, and the SLO it was held
// to. RunProfile::serving holds it (empty for a single request); the report draws it in its
// serving section (latency CDFs, throughput and KV occupancy over time, SLO attainment).
// Plain C++17 like the rest of profiler/.
//
// JSON, under the profile's "serving" key:
//   {"slo_ttft_s", "slo_tpot_s", "kv_blocks",
//    "requests": [{"id", "arrival_s", "input", "output", "status", "ttft_s", "tpot_s",
//                  "e2e_s", "queueing_s", "preemptions", "tokens"}],
//    "samples":  [{"t_s", "kv_blocks", "running", "waiting", "output_tokens"}]}
// Times in seconds from the serving run's start; a latency a request does not have (a
// rejected one's, a TPOT of one token) is -1; output_tokens counts tokens produced so far.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sohusim::profiler {

struct ServingRequestRecord {
  std::uint64_t id = 0;
  double arrival_s = 0;
  std::uint32_t input = 0, output = 0;
  std::string status;  // "completed", "rejected", "unfinished"
  double ttft_s = -1, tpot_s = -1, e2e_s = -1, queueing_s = -1;
  unsigned preemptions = 0;
  std::uint32_t tokens = 0;  // output tokens produced
};

struct ServingSample {
  double t_s = 0;
  double kv_blocks = 0, running = 0, waiting = 0;
  double output_tokens = 0;  // produced up to t_s
};

struct ServingProfile {
  double slo_ttft_s = 0, slo_tpot_s = 0;  // 0: no target
  double kv_blocks = 0;                   // the cache's size
  std::vector<ServingRequestRecord> requests;
  std::vector<ServingSample> samples;  // ascending t_s
  bool empty() const { return requests.empty(); }
};

nlohmann::json serving_json(const ServingProfile& s);
/// Throws ProfileError naming the JSON path (under `at`) of what is wrong.
ServingProfile read_serving(const nlohmann::json& j, const std::string& at);

}  // namespace sohusim::profiler
