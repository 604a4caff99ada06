#include "sohusim/sim/stats_sampler.hpp"

#include "sohusim/sim/sim_time.hpp"

namespace sohusim::sim {

StatsSampler::StatsSampler(sc_core::sc_module_name name, counters::Sampler& sampler, sc_core::sc_time interval)
    : sc_core::sc_module(name), sampler_(sampler), interval_(interval) {
  SC_HAS_PROCESS(StatsSampler);
  SC_THREAD(run);
}

void StatsSampler::stop() {
  if (stopped_) return;
  stopped_ = true;
  stop_event_.notify(sc_core::SC_ZERO_TIME);
}

void StatsSampler::run() {
  std::uint64_t last = to_ns(sc_core::sc_time_stamp());
  sampler_.sample(last);
  while (!stopped_) {
    if (interval_ == sc_core::SC_ZERO_TIME) {
      wait(stop_event_);
    } else {
      wait(interval_, stop_event_);
    }
    // stop() at the instant of a periodic sample must not add a zero-width row.
    const std::uint64_t now = to_ns(sc_core::sc_time_stamp());
    if (now != last) sampler_.sample(now);
    last = now;
  }
}

}  // namespace sohusim::sim
