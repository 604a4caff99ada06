#include "sohusim/profiler/serving_profile.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "sohusim/profiler/profile.hpp"

namespace sohusim::profiler {

using json = nlohmann::json;

json serving_json(const ServingProfile& s) {
  json requests = json::array();
  for (const ServingRequestRecord& r : s.requests) {
    requests.push_back({{"id", r.id},
                        {"arrival_s", r.arrival_s},
                        {"input", r.input},
                        {"output", r.output},
                        {"status", r.status},
                        {"ttft_s", r.ttft_s},
                        {"tpot_s", r.tpot_s},
                        {"e2e_s", r.e2e_s},
                        {"queueing_s", r.queueing_s},
                        {"preemptions", r.preemptions},
                        {"tokens", r.tokens}});
  }
  json samples = json::array();
  for (const ServingSample& x : s.samples) {
    samples.push_back({{"t_s", x.t_s},
                       {"kv_blocks", x.kv_blocks},
                       {"running", x.running},
                       {"waiting", x.waiting},
                       {"output_tokens", x.output_tokens}});
  }
  return {{"slo_ttft_s", s.slo_ttft_s},
          {"slo_tpot_s", s.slo_tpot_s},
          {"kv_blocks", s.kv_blocks},
          {"requests", requests},
          {"samples", samples}};
}

namespace {

[[noreturn]] void fail(const std::string& at, const std::string& what) {
  throw ProfileError(at + ": " + what);
}

double number(const json& o, const std::string& at, const char* key, bool required = true, double fallback = 0) {
  const auto it = o.find(key);
  if (it == o.end()) {
    if (required) fail(at, std::string("missing \"") + key + "\"");
    return fallback;
  }
  if (!it->is_number() || !std::isfinite(it->get<double>())) fail(at + "." + key, "expected a finite number");
  return it->get<double>();
}

const json& array(const json& o, const std::string& at, const char* key) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_array()) fail(at + "." + key, "expected an array");
  return *it;
}

}  // namespace

ServingProfile read_serving(const json& j, const std::string& at) {
  if (!j.is_object()) fail(at, "expected an object");
  ServingProfile s;
  s.slo_ttft_s = number(j, at, "slo_ttft_s", false);
  s.slo_tpot_s = number(j, at, "slo_tpot_s", false);
  s.kv_blocks = number(j, at, "kv_blocks", false);
  const json& requests = array(j, at, "requests");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string here = at + ".requests[" + std::to_string(i) + "]";
    const json& o = requests[i];
    if (!o.is_object()) fail(here, "expected an object");
    ServingRequestRecord r;
    r.id = static_cast<std::uint64_t>(number(o, here, "id"));
    r.arrival_s = number(o, here, "arrival_s");
    r.input = static_cast<std::uint32_t>(number(o, here, "input"));
    r.output = static_cast<std::uint32_t>(number(o, here, "output"));
    const auto st = o.find("status");
    if (st == o.end() || !st->is_string()) fail(here + ".status", "expected a string");
    r.status = st->get<std::string>();
    if (r.status != "completed" && r.status != "rejected" && r.status != "unfinished")
      fail(here + ".status", "\"" + r.status + "\" (allowed: completed, rejected, unfinished)");
    r.ttft_s = number(o, here, "ttft_s", false, -1);
    r.tpot_s = number(o, here, "tpot_s", false, -1);
    r.e2e_s = number(o, here, "e2e_s", false, -1);
    r.queueing_s = number(o, here, "queueing_s", false, -1);
    r.preemptions = static_cast<unsigned>(number(o, here, "preemptions", false));
    r.tokens = static_cast<std::uint32_t>(number(o, here, "tokens", false));
    if (r.arrival_s < 0) fail(here + ".arrival_s", "negative");
    s.requests.push_back(std::move(r));
  }
  const json& samples = array(j, at, "samples");
  double last = -1;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string here = at + ".samples[" + std::to_string(i) + "]";
    const json& o = samples[i];
    if (!o.is_object()) fail(here, "expected an object");
    ServingSample x;
    x.t_s = number(o, here, "t_s");
    if (x.t_s < last) fail(here + ".t_s", "samples must not go back in time");
    last = x.t_s;
    x.kv_blocks = number(o, here, "kv_blocks", false);
    x.running = number(o, here, "running", false);
    x.waiting = number(o, here, "waiting", false);
    x.output_tokens = number(o, here, "output_tokens", false);
    s.samples.push_back(x);
  }
  return s;
}

}  // namespace sohusim::profiler
