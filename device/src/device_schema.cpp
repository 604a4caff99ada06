#include "sohusim/device/device_schema.hpp"

#include "sohusim/config/units.hpp"

namespace sohusim::device {

using config::Dimension;

config::Schema device_schema() {
  config::Schema s;
  s.section("device", "the accelerator (Sohu-class); the engine clock is sim.clocks.engine")
      .string("name", "sohu", "architecture preset name, reported in outputs")
      .uinteger("msix_vectors", 64, 2, 2048, "MSI-X vectors of the physical function")
      .quantity("command_latency", Dimension::Time, "200 ns", "0 s", "1 ms",
                "command processor: decode, checks and dispatch per command (assumption)")
      .quantity("enable_latency", Dimension::Time, "10 us", "0 s", "1 s",
                "from CTRL.EN=1 to STATUS.RDY=1 (firmware bring-up; assumption)")
      .uinteger("max_io_queues", 63, 1, 63, "I/O queue pairs (CAP0.MQP)")
      .uinteger("max_queue_entries", 4096, 2, 4096, "entries per queue (CAP0.MQES + 1)")
      .uinteger("fetch_batch", 8, 1, 64, "submission entries fetched per DMA read")
      .uinteger("error_log", 64, 1, 4096, "error-log entries kept until software acknowledges them")
      .boolean("replay", true,
               "fast fidelity, timing mode: a GEMM, ATTENTION or VECTOR command that differs only in its "
               "addresses from one simulated before on an otherwise idle device replays that run's time and "
               "counters instead of simulating its tiles (docs/device.md)");
  s.section("device.matrix", "matrix engines: systolic arrays")
      .uinteger("engines", 8, 1, 1024, "number of matrix engines")
      .uinteger("rows", 128, 1, 1024, "array rows R")
      .uinteger("cols", 128, 1, 1024, "array columns C")
      .enumeration("dataflow", "ws", {"ws", "os", "is"}, "stationary operand: weights, outputs or inputs")
      .enumeration("fold_model", "overlap", {"overlap", "scalesim"},
                   "fold timing: overlap (double-buffered stationary loads) or scalesim (SCALE-Sim v2)")
      .real("rate_fp8", 2.0, 0.01, 64, "MACs per PE per cycle in FP8 (E4M3 and E5M2)")
      .real("rate_bf16", 1.0, 0.01, 64, "MACs per PE per cycle in BF16")
      .real("rate_fp16", 1.0, 0.01, 64, "MACs per PE per cycle in FP16")
      .real("rate_fp32", 0.25, 0.01, 64, "MACs per PE per cycle in FP32");
  s.section("device.vector", "vector engines (norms, activations, softmax)")
      .uinteger("engines", 8, 1, 1024, "number of vector engines")
      .uinteger("lanes", 128, 1, 65536, "lanes per engine (one element operation per lane per cycle)");
  s.section("device.dma", "DMA engine")
      .uinteger("channels", 8, 1, 256, "channels (transfers in flight)")
      .quantity("chunk", Dimension::Bytes, "1 MiB", "64 B", "1 GiB", "bytes per channel transfer")
      .quantity("setup", Dimension::Time, "100 ns", "0 s", "1 ms", "descriptor set-up per copy");
  s.section("device.mmu", "device MMU (per-context translation)")
      .uinteger("contexts", 64, 1, 65536, "context ids (0 = physical)")
      .quantity("page_size", Dimension::Bytes, "2 MiB", "4 KiB", "1 GiB", "translation granule")
      .uinteger("tlb_entries", 64, 1, 65536, "TLB entries (fully associative, LRU)")
      .quantity("miss_latency", Dimension::Time, "100 ns", "0 s", "1 ms", "on-chip table lookup per TLB miss");
  s.section("device.c2c", "chip-to-chip links (per port, per direction; not public: assumptions)")
      .uinteger("ports", 7, 0, 64, "ports per device")
      .quantity("bandwidth", Dimension::Bandwidth, "100 GB/s", "1 MB/s", "10 TB/s", "bandwidth per direction")
      .quantity("latency", Dimension::Time, "500 ns", "0 s", "1 ms", "one-way latency")
      .quantity("packet", Dimension::Bytes, "256 B", "16 B", "64 KiB", "payload per packet")
      .quantity("overhead", Dimension::Bytes, "16 B", "0 B", "1 KiB", "header and CRC per packet");
  s.section("device.pmu", "performance-monitoring unit")
      .uinteger("counter_bits", 64, 16, 64,
                "width of the event counters and the cycle counter (narrower: overflow sooner)");
  s.section("device.timestamp", "device timestamp counter (its own clock: offset, drift and read jitter)")
      .quantity("offset", Dimension::Time, "0 s", "0 s", "1000000 s", "device time at simulated time 0")
      .real("drift_ppm", 0.0, -1000, 1000, "frequency error of the device clock, ppm")
      .quantity("jitter", Dimension::Time, "0 s", "0 s", "1 ms",
                "read jitter of the TIMESTAMP register: the value is the counter up to this long after the read "
                "arrives (uniform)")
      .uinteger("seed", 1, 0, 0xFFFF'FFFF'FFFF'FFFFULL, "seed of the read jitter (mixed with the device index)");
  s.section("device.energy", "energy per operation and static power (docs/device.md: sources and assumptions)")
      .real("pj_per_mac_fp8", 0.0, 0, 1e6, "pJ per FP8 MAC (0: the model's default)")
      .real("pj_per_mac_bf16", 0.0, 0, 1e6, "pJ per BF16 MAC (0: default)")
      .real("pj_per_mac_fp16", 0.0, 0, 1e6, "pJ per FP16 MAC (0: default)")
      .real("pj_per_mac_fp32", 0.0, 0, 1e6, "pJ per FP32 MAC (0: default)")
      .real("static_scale", 1.0, 0, 100, "multiplier on every unit's static power");
  return s;
}

}  // namespace sohusim::device
