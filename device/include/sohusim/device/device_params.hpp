#pragma once
// DeviceParams: everything that sizes and times one device, read from `device.*` (see
// device_schema.hpp) plus the engine clock (`sim.clocks.engine`), the SRAM (`sram.*`), the
// HBM (`hbm.*`) and the data mode. An architecture preset fills them all.
#include <cstdint>
#include <string>

#include "sohusim/config/config.hpp"
#include "sohusim/device/compute/matrix_engine_params.hpp"
#include "sohusim/device/compute/vector_cost.hpp"
#include "sohusim/device/units/c2c_link.hpp"
#include "sohusim/device/units/device_mmu.hpp"
#include "sohusim/device/units/dma_engine.hpp"
#include "sohusim/device/units/energy_model.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"

namespace sohusim::device {

struct DeviceParams {
  std::string name = "sohu";
  double clock_hz = 1.5e9;  // engines and command processor
  MatrixEngineParams matrix;
  VectorEngineParams vector;
  DmaParams dma;
  MmuParams mmu;
  C2cParams c2c;
  unsigned c2c_ports = 7;
  TimestampParams timestamp;
  EnergyParams energy;
  unsigned msix_vectors = 64;
  unsigned max_io_queues = 63;
  unsigned max_queue_entries = 4096;
  unsigned fetch_batch = 8;
  unsigned error_log_entries = 64;
  unsigned pmu_counter_bits = 64;
  std::uint64_t command_latency_ps = 200'000;
  std::uint64_t enable_latency_ps = 10'000'000;
  bool functional = false;              // sim.data_mode
  bool replay = false;                  // device.replay, and only with fast HBM timing and no data
  std::uint64_t sram_bytes = 0;         // sram.capacity
  std::uint64_t hbm_bytes = 0;          // from hbm.*
  double hbm_peak_bytes_per_s = 0;      // from hbm.*
  double hbm_sustained_fraction = 0.9;  // what the tiler assumes of the peak (the HBM model decides the real rate)

  /// Reads the config (which must come from a schema that merged device_schema(),
  /// memory_schema() and the core schema). HBM size and peak come from `hbm.*`.
  static DeviceParams from_config(const config::Config& config);
  /// Throws std::invalid_argument naming the field.
  void validate() const;
  std::uint64_t period_ps() const;
};

}  // namespace sohusim::device
