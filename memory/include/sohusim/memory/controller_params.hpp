#pragma once
// ControllerParams: how the memory controller of each pseudo-channel works — queue depths,
// write-drain watermarks, scheduler, page policy, refresh, latencies. The detailed model
// (DramController) and the fast one (FastDram) both read it.
//
// Every field is a key of hbm.controller.*; params() holds the keys, defaults, ranges and
// descriptions (memory/src/controller_params.cpp), declares them in hbm_schema(), gives
// the struct its defaults and loads it (from_config).
#include <cstdint>

namespace sohusim::config {
class Config;
template <class T>
class ParamTable;
}  // namespace sohusim::config

namespace sohusim::memory {

enum class SchedulerKind : std::uint8_t { FrFcfs, Fcfs };
enum class PagePolicy : std::uint8_t { Open, Closed, Adaptive };
enum class RefreshMode : std::uint8_t { AllBank, PerBank, Off };
enum class BusArbiter : std::uint8_t { Fixed, Oldest };  // see DramSystem, "Arbitration"

struct ControllerParams {
  std::uint32_t read_queue;
  std::uint32_t write_queue;
  std::uint32_t write_high;
  std::uint32_t write_low;
  std::uint32_t read_starvation;  // cycles
  SchedulerKind scheduler;
  BusArbiter bus_arbiter;
  PagePolicy page_policy;
  RefreshMode refresh;
  std::uint32_t refresh_postpone;
  std::uint32_t latency;                // controller + PHY, cycles
  std::uint32_t write_forward_latency;  // cycles, before `latency`

  ControllerParams();
  static const config::ParamTable<ControllerParams>& params();
  static ControllerParams from_config(const config::Config& config);
};

}  // namespace sohusim::memory
