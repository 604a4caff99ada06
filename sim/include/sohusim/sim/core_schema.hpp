// sohusim/sim/core_schema.hpp — the parameters of the simulation infrastructure itself.
//
//   sim.seed               seed of every random stream
//   sim.fidelity           detailed | fast
//   sim.data_mode          timing | functional
//   sim.stop_time          simulated-time limit that ends a run that would otherwise hang
//   sim.clocks.<name>      frequency of each clock domain (host, engine, hbm, link by default)
//   trace.file/format/categories
//   stats.file/format/sample_interval
//
// Every other layer declares its own schema next to its models; a tool merges them:
//   Schema schema = core_schema();
//   schema.merge(memory::hbm_schema());
// configs/default.yaml writes these parameters out with their defaults.
#pragma once

#include "sohusim/config/config_schema.hpp"

namespace sohusim::sim {

config::Schema core_schema();

}  // namespace sohusim::sim
