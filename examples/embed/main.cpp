// Embedding sohusim in another C++ tool: validate a configuration against a
// schema, build a small simulation in code, run it, read statistics back and
// write a trace. Built against the installed package by the test suite
// (tests/install/check_embed.cmake).
#include <cstdlib>
#include <iostream>

#include <systemc>  // declares sc_main (extern "C")

#include <sohusim/counters/registry.hpp>
#include <sohusim/counters/trace_recorder.hpp>
#include <sohusim/counters/trace_writer.hpp>
#include <sohusim/sim/address_router.hpp>
#include <sohusim/sim/config.hpp>
#include <sohusim/sim/core_schema.hpp>
#include <sohusim/sim/memory_manager.hpp>
#include <sohusim/sim/sparse_memory.hpp>
#include <sohusim/sim/traffic_generator.hpp>

// SystemC's library provides a main() that prints a banner and calls sc_main();
// defining main() here keeps stdout clean and enters the kernel the same way.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int, char*[]) {
  using namespace sohusim;

  // 1. Configuration: the core schema plus one parameter of our own, layered with an override.
  sim::Schema schema = sim::core_schema();
  schema.section("embed").uinteger("requests", 100, 1, 1000000, "requests to issue");
  sim::ConfigLoader loader(schema);
  loader.set("embed.requests=250");
  const sim::Config cfg = loader.resolve();

  // 2. A simulation: one traffic generator -> router -> one memory of 8 GB/s, 50 ns.
  sim::ensure_time_resolution();
  counters::Registry registry;
  counters::TraceRecorder trace(counters::make_trace_writer("embed_trace.pftrace"));
  const counters::TrackId proc = trace.process_track("embed");
  sim::Instrumentation inst{&registry, &trace, proc};
  sim::MemoryManager mm;
  sim::SparseMemory::Params mp;
  mp.size = 1 << 20;
  mp.latency = sc_core::sc_time(50, sc_core::SC_NS);
  mp.bytes_per_second = 8e9;
  sim::SparseMemory mem("mem", mp);
  sim::AddressRouter router("router");
  router.initiator_socket.bind(mem.socket);
  router.map(0x1000'0000, mp.size, 0, "mem");
  sim::TrafficPattern pattern;
  pattern.base = 0x1000'0000;
  pattern.window = mp.size;
  pattern.request_bytes = 64;
  pattern.requests = cfg.get_uint("embed.requests");
  std::uint64_t correlation = 0;
  sim::TrafficGenerator gen("gen", pattern, inst, "embed.gen", mm, correlation);
  gen.socket.bind(router.target_socket);

  sc_core::sc_start();

  // 3. Read the results back.
  const double requests = registry.value("embed.gen.requests");
  const double bytes = registry.value("embed.gen.bytes_read");
  std::cout << "requests " << requests << ", bytes " << bytes << ", simulated "
            << sc_core::sc_time_stamp().to_string() << '\n';
  trace.close();
  const bool ok = requests == 250 && bytes == 250 * 64 && gen.done();
  std::cout << (ok ? "embed: ok" : "embed: FAILED") << '\n';
  return ok ? 0 : 1;
}
