#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sohusim/device/compute/engine_pipeline.hpp"

#include <deque>
#include <memory>

#include <systemc>

#include "sohusim/sim/sim_time.hpp"

namespace sohusim::device {

EngineCounters::EngineCounters(const counters::Scope& s)
    : tiles(s.counter("tiles", "count", "tiles computed")),
      active_cycles(s.counter("active_cycles", "cycles", "cycles computing (useful and padded work)")),
      stall_hbm_cycles(s.counter("stall_hbm_cycles", "cycles", "cycles waiting for operands from HBM")),
      stall_sram_cycles(s.counter("stall_sram_cycles", "cycles", "cycles the SRAM operand read outlasted the compute")),
      stall_store_cycles(s.counter("stall_store_cycles", "cycles", "cycles waiting for result stores to drain")),
      stall_dependency_cycles(s.counter("stall_dependency_cycles", "cycles",
                                        "cycles a command waited for the unit or a semaphore before its tiles")),
      macs_useful(s.counter("macs_useful", "MAC", "multiply-accumulates the commands needed")),
      macs_issued(s.counter("macs_issued", "MAC", "multiply-accumulates issued, padding of edge folds included")),
      mac_cycles(s.counter("mac_cycles", "cycles",
                           "active cycles' worth of issued MACs at the array's peak (issued / (rows x cols x rate)); "
                           "the other active cycles fill and drain the pipeline, load weights or run lane work")),
      hbm_bytes_read(s.counter("hbm_bytes_read", "B", "operand bytes streamed from HBM")),
      hbm_bytes_written(s.counter("hbm_bytes_written", "B", "result bytes written to HBM")),
      sram_bytes_read(s.counter("sram_bytes_read", "B", "operand bytes read from SRAM")),
      flops{} {
  for (unsigned t = 0; t < kNumDataTypes; ++t) {
    const char* n = to_string(static_cast<DataType>(t));
    flops[t] = &s.counter(std::string("flops.") + n, "FLOP", std::string("floating-point operations in ") + n);
  }
}

namespace {
std::uint64_t cycles_of(const sc_core::sc_time& t, std::uint64_t period_ps) {
  const std::uint64_t ps = t.value();
  return (ps + period_ps / 2) / period_ps;
}
}  // namespace

bool run_engine_tiles(const std::vector<EngineTile>& tiles, MemoryPort& hbm, MemoryPort* sram, std::uint64_t period_ps,
                      DataType dtype, EngineCounters& c, const EngineTrace& trace, std::uint64_t correlation) {
  if (tiles.empty()) return true;
  struct State {
    std::size_t loaded = 0;     // tiles whose operands are in SRAM
    unsigned free_buffers = 2;  // operand buffers not holding a tile waiting or computing
    bool failed = false;
    bool loader_done = false;
    std::deque<const EngineTile*> stores;
    bool computing_done = false;
    bool writer_done = false;
    sc_core::sc_event loaded_ev, buffer_ev, store_ev, writer_ev;
  };
  auto st = std::make_shared<State>();
  // Loader: streams operands in, two tiles ahead at most.
  sc_core::sc_spawn([&tiles, &hbm, &c, st, correlation] {
    for (std::size_t i = 0; i < tiles.size() && !st->failed; ++i) {
      while (st->free_buffers == 0) sc_core::wait(st->buffer_ev);
      --st->free_buffers;
      const EngineTile& t = tiles[i];
      if (t.load_bytes > 0) {
        if (hbm.access(false, t.load_address, nullptr, t.load_bytes, correlation) != PortStatus::Ok) st->failed = true;
        c.hbm_bytes_read.inc(t.load_bytes);
      }
      ++st->loaded;
      st->loaded_ev.notify(sc_core::SC_ZERO_TIME);
    }
    st->loader_done = true;
    st->loaded_ev.notify(sc_core::SC_ZERO_TIME);
  });
  // Writer: drains result stores behind the compute.
  sc_core::sc_spawn([&hbm, sram, &c, st, correlation] {
    for (;;) {
      while (st->stores.empty() && !st->computing_done) sc_core::wait(st->store_ev);
      if (st->stores.empty()) break;
      const EngineTile* t = st->stores.front();
      if (t->store_to_sram) {
        if (sram != nullptr &&
            sram->access(true, t->store_address, nullptr, t->store_bytes, correlation) != PortStatus::Ok)
          st->failed = true;
      } else {
        if (hbm.access(true, t->store_address, nullptr, t->store_bytes, correlation) != PortStatus::Ok)
          st->failed = true;
        c.hbm_bytes_written.inc(t->store_bytes);
      }
      st->stores.pop_front();
    }
    st->writer_done = true;
    st->writer_ev.notify(sc_core::SC_ZERO_TIME);
  });
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const sc_core::sc_time wait_from = sc_core::sc_time_stamp();
    while (st->loaded <= i && !(st->loader_done && st->loaded <= i)) sc_core::wait(st->loaded_ev);
    if (st->loaded <= i || st->failed) break;
    c.stall_hbm_cycles.inc(cycles_of(sc_core::sc_time_stamp() - wait_from, period_ps));
    const EngineTile& t = tiles[i];
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const sc_core::sc_time compute = sc_core::sc_time::from_value(t.compute_cycles * period_ps);
    if (sram != nullptr && t.sram_read_bytes > 0) {
      sram->access(false, t.sram_address, nullptr, t.sram_read_bytes, correlation);
      c.sram_bytes_read.inc(t.sram_read_bytes);
    }
    const sc_core::sc_time sram_time = sc_core::sc_time_stamp() - start;
    if (sram_time < compute) {
      sc_core::wait(compute - sram_time);
    } else {
      c.stall_sram_cycles.inc(cycles_of(sram_time - compute, period_ps));
    }
    c.active_cycles.inc(t.compute_cycles);
    c.tiles.inc();
    c.macs_useful.inc(t.useful_macs);
    c.macs_issued.inc(t.issued_macs);
    c.mac_cycles.inc(t.mac_cycles);
    c.flops[static_cast<unsigned>(dtype)]->inc(t.flops != 0 ? t.flops : 2 * t.useful_macs);
    if (trace.recorder != nullptr) {
      const sc_core::sc_time end = sc_core::sc_time_stamp();
      // The first tile carries the command's flow (docs/trace.md): one step per engine.
      if (i == 0 && correlation != 0) {
        trace.recorder->complete(trace.track, sim::to_ns(start), sim::to_ns(end) - sim::to_ns(start), trace.tile_name,
                                 {}, {counters::Flow{correlation}}, correlation);
      } else {
        trace.recorder->complete(trace.track, sim::to_ns(start), sim::to_ns(end) - sim::to_ns(start), trace.tile_name,
                                 {}, {}, correlation);
      }
    }
    ++st->free_buffers;
    st->buffer_ev.notify(sc_core::SC_ZERO_TIME);
    if (t.store_bytes > 0) {
      st->stores.push_back(&t);
      st->store_ev.notify(sc_core::SC_ZERO_TIME);
    }
  }
  st->computing_done = true;
  st->store_ev.notify(sc_core::SC_ZERO_TIME);
  const sc_core::sc_time drain_from = sc_core::sc_time_stamp();
  while (!st->writer_done) sc_core::wait(st->writer_ev);
  // The loader may still be blocked waiting for a buffer if the compute loop broke early.
  st->failed = st->failed || st->loaded < tiles.size();
  if (st->failed) {
    st->free_buffers = 2;
    st->buffer_ev.notify(sc_core::SC_ZERO_TIME);
    while (!st->loader_done) sc_core::wait(st->loaded_ev);
  }
  c.stall_store_cycles.inc(cycles_of(sc_core::sc_time_stamp() - drain_from, period_ps));
  return !st->failed;
}

}  // namespace sohusim::device
