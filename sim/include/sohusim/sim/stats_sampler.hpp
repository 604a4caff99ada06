#pragma once
// StatsSampler: samples a counters::Sampler every `interval` of simulated time.
//
// A periodic process would keep the kernel alive forever, so the sampler also
// waits on a stop event: whoever knows the run is over (the platform, a test)
// calls stop(), which takes a final sample at that instant and ends the process.
// With interval 0 it only takes the final sample.

#include <systemc>

#include "sohusim/counters/sampler.hpp"

namespace sohusim::sim {

class StatsSampler : public sc_core::sc_module {
 public:
  StatsSampler(sc_core::sc_module_name name, counters::Sampler& sampler, sc_core::sc_time interval);

  // Take the last sample now and stop sampling (idempotent).
  void stop();

 private:
  void run();

  counters::Sampler& sampler_;
  sc_core::sc_time interval_;
  sc_core::sc_event stop_event_;
  bool stopped_ = false;
};

}  // namespace sohusim::sim
