#pragma once
// hbm_schema: every `hbm.*` parameter of the DRAM models, with ranges, defaults (those of
// HBM3-6400) and one-line descriptions, plus the cross-parameter checks that reject an
// inconsistent standard before a simulation starts. Each parameter is stated once, in the
// table of the struct it fills (config::ParamTable): DramOrganization::params(),
// DramTimings::params(), ControllerParams::params(), FastDramCalibration::params().
//
//   hbm.name, hbm.stacks
//   hbm.org.*         geometry: channels, pseudo_channels, sids, bank_groups,
//                     banks_per_group, columns, dq_bits, burst_length, data_rate,
//                     die_density (Gb per die), dies (per stack), rows (derived unless set)
//   hbm.timing.*      tCK (a time), every other timing in cycles of tCK; tRFCab derived
//                     from die_density unless set
//   hbm.controller.*  queues, watermarks, scheduler, page policy, refresh, latencies
//   hbm.fast.*        the fast fidelity's calibrated terms
//   hbm.mapping.*     preset name, or an explicit field list and XOR pairs
//
// Presets are YAML files under configs/hbm/ (hbm3-6400, hbm3e-8000, hbm3e-9600,
// hbm2-2000) loaded with ConfigLoader::load_preset("hbm/hbm3-6400") over these
// defaults. Checks report at the offending key's file and line (Config::diagnose):
//   configs/x.yaml:7:10: hbm.timing.tRC: must be at least tRAS + tRP (45 + 26); allowed: >= 71
#include <cstdint>

#include "sohusim/config/config_schema.hpp"
#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {

config::Schema hbm_schema();

/// The organization a resolved configuration describes; rows are derived from
/// die_density x dies unless hbm.org.rows is set. Assumes the schema checks passed.
DramOrganization organization_from_config(const config::Config& config);

/// nBL: burst_length / (data_rate x tCK), the cycles one access holds the data bus.
std::uint32_t burst_cycles_from_config(const config::Config& config);

/// hbm.timing.tRFCab if set, else the die density's tRFCab (ns) rounded up to cycles.
std::uint32_t trfcab_cycles_from_config(const config::Config& config);

}  // namespace sohusim::memory
