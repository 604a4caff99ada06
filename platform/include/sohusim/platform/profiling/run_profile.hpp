#pragma once
// The RunProfile (counters/profile.hpp) of a transformer request run on a Simulator: what
// `sohusim run --profile/--report` writes and analyses.
//
//   units    per device: compute (the matrix engines' peak at the run's data type), vector
//            (engines x lanes x clock, one element operation per lane and cycle), HBM (the
//            stacks' peak), SRAM (banks x ports x access width x clock), PCIe per direction
//            (the link's raw rate), link (per-port bandwidth x connected ports, when any);
//            per host: host (CPU, 1 ns per ns), network (when there are several hosts).
//   ops      the per-op breakdown of the profiled steps (workloads/scenario.hpp: the first
//            prefill and the last decode step of each host's rank-0 device, device stamps
//            between ops), placed on the device that ran them. Device stamps are converted
//            to the reference time with the device clock's known offset and drift (the
//            simulator's ground truth). Work is the op's compulsory traffic from the graph:
//            FLOP (GEMM, LM head and attention on the matrix engines, the rest vector);
//            HBM bytes = weights + activations + KV cache read and written; link bytes =
//            the all-reduce payload once per peer port (a one-shot all-reduce). SoL against
//            that work is therefore the op's efficiency against the least it must do. A
//            weight upload, when simulated, is one op per device (PCIe host-to-device and
//            HBM bytes = the weights).
//            Deps: the earlier ops that wrote an op's inputs; `launch` = the step.
//   windows  from the Simulator's ProfileSampler (SimulatorOptions::profile_interval_ns).
//   commands dev<d>.cp.submit_to_start and start_to_complete distributions.
//   hosts    CPU busy ns (SimDeviceAccess::cpu_busy_ns: work, not polling), runtime API
//            calls, commands submitted; wait = the rest of the run.
//   facts    pcie_mps_bytes, pcie_{h2d,d2h}_avg_payload_bytes (payload / (MWr + CplD TLPs)),
//            hbm_row_hit_rate, sram_bank_conflicts, sram_accesses (line accesses).
#include <vector>

#include "sohusim/driver/command.hpp"
#include "sohusim/profiler/profile.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::platform {

class Simulator;

/// `results`: one per host, as run_scenario returned them; the request ran from simulated
/// time 0 (or the first run) to now.
profiler::RunProfile build_run_profile(Simulator& sim, const std::vector<workloads::ScenarioResult>& results,
                                       driver::DType dtype);

}  // namespace sohusim::platform
