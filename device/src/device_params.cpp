#include "sohusim/device/device_params.hpp"

#include <cmath>
#include <stdexcept>

namespace sohusim::device {

namespace {
std::uint64_t ps(double seconds) {
  return static_cast<std::uint64_t>(std::llround(seconds * 1e12));
}
}  // namespace

DeviceParams DeviceParams::from_config(const config::Config& c) {
  DeviceParams p;
  const auto u32 = [&](const char* k) { return static_cast<unsigned>(c.get_uint(k)); };
  p.name = c.get_string("device.name");
  p.clock_hz = c.get_quantity("sim.clocks.engine");
  p.matrix.engines = u32("device.matrix.engines");
  p.matrix.array = ArrayShape{u32("device.matrix.rows"), u32("device.matrix.cols")};
  p.matrix.dataflow = parse_dataflow(c.get_string("device.matrix.dataflow"));
  p.matrix.fold_model = parse_fold_model(c.get_string("device.matrix.fold_model"));
  p.matrix.clock_hz = p.clock_hz;
  const double fp8 = c.get_double("device.matrix.rate_fp8");
  p.matrix.rate = {fp8, fp8, c.get_double("device.matrix.rate_bf16"), c.get_double("device.matrix.rate_fp16"),
                   c.get_double("device.matrix.rate_fp32")};
  p.vector.engines = u32("device.vector.engines");
  p.vector.lanes = u32("device.vector.lanes");
  p.vector.clock_hz = p.clock_hz;
  p.dma.channels = u32("device.dma.channels");
  p.dma.chunk = static_cast<std::uint64_t>(c.get_quantity("device.dma.chunk"));
  p.dma.setup_ps = ps(c.get_quantity("device.dma.setup"));
  p.mmu.contexts = u32("device.mmu.contexts");
  p.mmu.page_bytes = static_cast<std::uint64_t>(c.get_quantity("device.mmu.page_size"));
  p.mmu.tlb_entries = u32("device.mmu.tlb_entries");
  p.mmu.miss_ps = ps(c.get_quantity("device.mmu.miss_latency"));
  p.c2c_ports = u32("device.c2c.ports");
  p.c2c.bytes_per_s = c.get_quantity("device.c2c.bandwidth");
  p.c2c.latency_ps = ps(c.get_quantity("device.c2c.latency"));
  p.c2c.packet_bytes = static_cast<std::uint64_t>(c.get_quantity("device.c2c.packet"));
  p.c2c.overhead_bytes = static_cast<std::uint64_t>(c.get_quantity("device.c2c.overhead"));
  p.pmu_counter_bits = u32("device.pmu.counter_bits");
  p.timestamp.offset_ns = c.get_quantity("device.timestamp.offset") * 1e9;
  p.timestamp.drift_ppm = c.get_double("device.timestamp.drift_ppm");
  p.timestamp.jitter_ns = c.get_quantity("device.timestamp.jitter") * 1e9;
  p.timestamp.seed = c.get_uint("device.timestamp.seed");
  const double mac_defaults[kNumDataTypes] = {p.energy.pj_per_mac[0], p.energy.pj_per_mac[1], p.energy.pj_per_mac[2],
                                              p.energy.pj_per_mac[3], p.energy.pj_per_mac[4]};
  const auto mac = [&](const char* key, double def) {
    const double v = c.get_double(key);
    return v > 0 ? v : def;
  };
  p.energy.pj_per_mac[0] = mac("device.energy.pj_per_mac_fp8", mac_defaults[0]);
  p.energy.pj_per_mac[1] = mac("device.energy.pj_per_mac_fp8", mac_defaults[1]);
  p.energy.pj_per_mac[2] = mac("device.energy.pj_per_mac_bf16", mac_defaults[2]);
  p.energy.pj_per_mac[3] = mac("device.energy.pj_per_mac_fp16", mac_defaults[3]);
  p.energy.pj_per_mac[4] = mac("device.energy.pj_per_mac_fp32", mac_defaults[4]);
  const double s = c.get_double("device.energy.static_scale");
  for (double* w :
       {&p.energy.static_w_matrix, &p.energy.static_w_vector, &p.energy.static_w_sram, &p.energy.static_w_hbm,
        &p.energy.static_w_pcie, &p.energy.static_w_c2c, &p.energy.static_w_other}) {
    *w *= s;
  }
  p.msix_vectors = u32("device.msix_vectors");
  p.max_io_queues = u32("device.max_io_queues");
  p.max_queue_entries = u32("device.max_queue_entries");
  p.fetch_batch = u32("device.fetch_batch");
  p.error_log_entries = u32("device.error_log");
  p.command_latency_ps = ps(c.get_quantity("device.command_latency"));
  p.enable_latency_ps = ps(c.get_quantity("device.enable_latency"));
  p.functional = c.get_string("sim.data_mode") == "functional";
  {
    const std::string& own = c.get_string("hbm.target.fidelity");
    const std::string& fidelity = own == "inherit" ? c.get_string("sim.fidelity") : own;
    p.replay = c.get_bool("device.replay") && fidelity == "fast" && !p.functional;
  }
  p.sram_bytes = static_cast<std::uint64_t>(c.get_quantity("sram.capacity"));
  return p;
}

std::uint64_t DeviceParams::period_ps() const {
  return static_cast<std::uint64_t>(std::max(1.0, std::round(1e12 / clock_hz)));
}

void DeviceParams::validate() const {
  device::validate(matrix);
  device::validate(vector);
  device::validate(energy);
  dma.validate();
  mmu.validate();
  c2c.validate();
  timestamp.validate();
  if (!(clock_hz > 0)) throw std::invalid_argument("sim.clocks.engine must be > 0");
  if (msix_vectors < 2) throw std::invalid_argument("device.msix_vectors must be >= 2");
  if (max_queue_entries < 2 || max_queue_entries > 4096)
    throw std::invalid_argument("device.max_queue_entries must be in 2 .. 4096");
  if (max_io_queues < 1 || max_io_queues > 63) throw std::invalid_argument("device.max_io_queues must be in 1 .. 63");
  if (fetch_batch < 1) throw std::invalid_argument("device.fetch_batch must be >= 1");
}

}  // namespace sohusim::device
