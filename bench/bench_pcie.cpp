// Speed of the PCIe link model (budgets: >= 2 M TLPs per wall-second at TLP
// level; the bulk path moves >= 1 TB of simulated data per wall-second; README, "Figures").
//
// One link (Gen5 x16, MPS 256, default credits) with its two ports is built once per
// process (SystemC elaborates once); each iteration spawns a device-side stream and runs
// the kernel until it is idle again.
//   BM_TlpLevelWrites/<bytes>: posted writes TLP by TLP (bulk path off): counter
//     tlps_per_second (TLPs per wall-second, both directions).
//   BM_TlpLevelReads/<bytes>: DMA reads, MRRS 512, completions merged to MPS.
//   BM_BulkWrites/<bytes>: one multi-megabyte write through the bulk path: counter
//     simulated_bytes_per_second.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <memory>

#include <benchmark/benchmark.h>
#include <systemc>

#include "bench_sc_main.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/pcie_link.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/sim_time.hpp"

namespace {

using namespace sohusim;

class NullCompleter : public pcie::Completer {
 public:
  std::uint64_t posted(const pcie::Tlp&, const std::uint8_t*) override { return 0; }
  Answer nonposted(const pcie::Tlp&, std::uint8_t*, const std::uint8_t*) override {
    return {pcie::CplStatus::SC, 300'000, false};
  }
};

struct Fixture {
  counters::Registry registry;
  sim::Instrumentation inst;
  pcie::LinkParams params;
  std::unique_ptr<pcie::PcieLink> link;
  std::unique_ptr<pcie::PciePort> rc, ep;
  NullCompleter host;

  Fixture() {
    sim::ensure_time_resolution();
    inst.registry = &registry;
    params.generation = 5;
    params.lanes = 16;
    params.mps = 256;
    link = std::make_unique<pcie::PcieLink>("link", params, inst, "pcie");
    rc = std::make_unique<pcie::PciePort>("rc", params, pcie::PortParams{}, link->down(), link->up(), inst, "pcie.rc");
    ep = std::make_unique<pcie::PciePort>("ep", params, pcie::PortParams{}, link->up(), link->down(), inst, "pcie.ep");
    rc->set_completer(&host);
  }
  double tlps() const { return registry.value("pcie.down.tlps") + registry.value("pcie.up.tlps"); }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void run(pcie::TlpType type, std::uint64_t bytes, bool bulk) {
  Fixture& f = fixture();
  sc_core::sc_spawn([&f, type, bytes, bulk] {
    pcie::PciePort::Request r;
    r.type = type;
    r.length = bytes;
    r.allow_bulk = bulk;
    f.ep->transact(r);
  });
  sc_core::sc_start();
}

void BM_TlpLevelWrites(benchmark::State& state) {
  Fixture& f = fixture();
  const double before = f.tlps();
  for (auto _ : state) run(pcie::TlpType::MWr, static_cast<std::uint64_t>(state.range(0)), false);
  state.counters["tlps_per_second"] = benchmark::Counter(f.tlps() - before, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TlpLevelWrites)->Arg(4 << 20)->Unit(benchmark::kMillisecond);

void BM_TlpLevelReads(benchmark::State& state) {
  Fixture& f = fixture();
  const double before = f.tlps();
  for (auto _ : state) run(pcie::TlpType::MRd, static_cast<std::uint64_t>(state.range(0)), false);
  state.counters["tlps_per_second"] = benchmark::Counter(f.tlps() - before, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TlpLevelReads)->Arg(4 << 20)->Unit(benchmark::kMillisecond);

void BM_BulkWrites(benchmark::State& state) {
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    run(pcie::TlpType::MWr, static_cast<std::uint64_t>(state.range(0)), true);
    bytes += static_cast<std::uint64_t>(state.range(0));
  }
  state.counters["simulated_bytes_per_second"] =
      benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BulkWrites)->Arg(1 << 30)->Unit(benchmark::kMillisecond);

}  // namespace
