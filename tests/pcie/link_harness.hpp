// A link between two ports with a memory behind the root-port side, for the link and
// transaction-layer tests: the endpoint side is the requester (DMA), the root side
// answers from a byte array after a fixed latency.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/pcie_link.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie::test {

class ArrayCompleter : public Completer {
 public:
  explicit ArrayCompleter(std::size_t bytes, std::uint64_t latency) : mem(bytes, 0), latency_ps(latency) {}
  std::uint64_t posted(const Tlp& tlp, const std::uint8_t* data) override {
    ++posted_tlps;
    posted_bytes += tlp.length;
    if (data != nullptr && tlp.address + tlp.length <= mem.size()) std::memcpy(&mem[tlp.address], data, tlp.length);
    return 0;
  }
  Answer nonposted(const Tlp& tlp, std::uint8_t* out, const std::uint8_t*) override {
    ++nonposted_tlps;
    if (tlp.address + tlp.length > mem.size()) return {CplStatus::UR, 0, false};
    if (out != nullptr) std::memcpy(out, &mem[tlp.address], tlp.length);
    return {status, latency_ps, poison};
  }
  std::vector<std::uint8_t> mem;
  std::uint64_t latency_ps;
  CplStatus status = CplStatus::SC;
  bool poison = false;
  std::uint64_t posted_tlps = 0, posted_bytes = 0, nonposted_tlps = 0;
};

/// Runs `body` in an SC_THREAD at time 0.
struct Driver : sc_core::sc_module {
  std::function<void()> body;
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name n, std::function<void()> b) : sc_core::sc_module(n), body(std::move(b)) {
    SC_THREAD(run);
  }
  void run() { body(); }
};

struct LinkBench {
  counters::Registry registry;
  sim::Instrumentation inst;
  std::unique_ptr<PcieLink> link;
  std::unique_ptr<PciePort> rc;  // root port: transmits down, receives up
  std::unique_ptr<PciePort> ep;  // endpoint: transmits up, receives down
  ArrayCompleter host;
  ArrayCompleter device;

  LinkBench(const LinkParams& params, PortParams port = {}, std::uint64_t host_latency_ps = 500'000)
      : host(64u << 20, host_latency_ps), device(1u << 20, 50'000) {
    inst.registry = &registry;
    link = std::make_unique<PcieLink>("link", params, inst, "pcie");
    rc = std::make_unique<PciePort>("rc", params, port, link->down(), link->up(), inst, "pcie.rc");
    ep = std::make_unique<PciePort>("ep", params, port, link->up(), link->down(), inst, "pcie.ep");
    rc->set_completer(&host);
    ep->set_completer(&device);
  }
  double count(const std::string& name) const { return registry.find(name)->value(); }
};

inline double now_ns() {
  return sc_core::sc_time_stamp().to_seconds() * 1e9;
}

}  // namespace sohusim::pcie::test
