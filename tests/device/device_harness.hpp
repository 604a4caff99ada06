// A host with one Sohu device, configured from the `sohu` preset shrunk to test size
// (one HBM stack, 8 engines, small SRAM), and a host agent to drive it through BAR0, host
// memory and MSI-X only — the view a driver has.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/device/device_schema.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/pcie/pcie_schema.hpp"
#include "sohusim/platform/host_agent.hpp"
#include "sohusim/platform/host_system.hpp"
#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/sim/core_schema.hpp"

namespace sohusim::device::test {

// A device on a host: platform/'s per-host assembly and its bare bring-up agent.
using platform::HostAgent;
using platform::HostSystem;
using platform::make_admin;
using platform::make_attention;
using platform::make_dma_copy;
using platform::make_gemm;
using platform::make_nop;
using platform::make_timestamp;
using platform::make_vector;

inline config::Schema test_schema() {
  config::Schema s = sim::core_schema();
  s.merge(memory::memory_schema());
  s.merge(pcie::pcie_schema());
  s.merge(device_schema());
  return s;
}

inline config::Config device_config(const std::vector<std::string>& sets = {}, const std::string& arch = "sohu") {
  config::ConfigLoader loader(test_schema(), {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
  loader.load_preset("arch/" + arch);
  if (arch == "sohu") {
    for (const char* s : {"hbm.stacks=1", "device.matrix.engines=8", "device.vector.engines=4", "sram.capacity=16MiB",
                          "device.enable_latency=2us"}) {
      loader.set(s);
    }
  }
  for (const std::string& s : sets) loader.set(s);
  return loader.resolve();
}

struct DeviceBench {
  counters::Registry registry;
  sim::Instrumentation inst;
  std::unique_ptr<HostSystem> sys;
  std::unique_ptr<HostAgent> agent;

  explicit DeviceBench(const std::vector<std::string>& sets = {}, const std::string& arch = "sohu") {
    inst.registry = &registry;
    sys = std::make_unique<HostSystem>(device_config(sets, arch), inst);
    agent = std::make_unique<HostAgent>(*sys);
  }
  /// probe + enable + I/O queue 1 (64 entries, vector 1).
  void bring_up(unsigned entries = 64) {
    agent->probe();
    agent->enable();
    agent->create_io_queue(1, entries, 1);
  }
  SohuDevice& dev() { return sys->device(); }
  double count(const std::string& n) const { return registry.value(n); }
  double sum(const std::string& glob) const {
    double v = 0;
    for (const counters::Stat* s : registry.glob(glob)) v += s->value();
    return v;
  }
  /// Host buffer with `bytes` copied in by the CPU.
  std::uint64_t host_buffer(const void* data, std::uint64_t bytes) {
    const std::uint64_t a = sys->alloc_dma(bytes);
    if (data != nullptr) sys->cpu().mem_write(a, data, bytes);
    return a;
  }
  /// Copies host bytes into HBM at `dev_addr` through a DMA_COPY command on queue 1.
  Cqe upload(std::uint64_t dev_addr, const void* data, std::uint64_t bytes) {
    const std::uint64_t h = host_buffer(data, bytes);
    return agent->run(1, make_dma_copy(Space::Host, h, Space::Hbm, dev_addr, bytes));
  }
  std::vector<std::uint8_t> download(std::uint64_t dev_addr, std::uint64_t bytes) {
    const std::uint64_t h = host_buffer(nullptr, bytes);
    agent->run(1, make_dma_copy(Space::Hbm, dev_addr, Space::Host, h, bytes));
    std::vector<std::uint8_t> out(bytes);
    sys->cpu().mem_read(h, out.data(), bytes);
    return out;
  }
};

}  // namespace sohusim::device::test
