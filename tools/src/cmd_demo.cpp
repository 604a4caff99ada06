// `sohusim demo`: the richest real thing the tree can simulate until the device
// model lands (README "Quick start" runs it). Traffic generators issue a
// read/write pattern through an address router to bandwidth- and latency-limited
// memories; every request is a TLM-2.0 transaction from the pooled memory
// manager with a correlation id; the registry counts it, the sampler turns the
// counters into bandwidth over simulated time, and the trace shows each request
// as a slice with the bandwidth as counter tracks. It exercises the config
// system, clock domains, TLM helpers, stats and both trace writers end to end.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>
#include <systemc>

#include "cli.hpp"
#include "run_outputs.hpp"
#include "schema_all.hpp"
#include "sohusim/config/config.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/sampler.hpp"
#include "sohusim/counters/sampler_trace_sink.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/counters/trace_writer.hpp"
#include "sohusim/sim/address_router.hpp"
#include "sohusim/sim/clock_domain.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/memory_manager.hpp"
#include "sohusim/sim/sparse_memory.hpp"
#include "sohusim/sim/stats_sampler.hpp"
#include "sohusim/sim/traffic_generator.hpp"

namespace sohusim::tools {

using config::Dimension;

config::Schema demo_schema() {
  config::Schema s;
  s.section("demo", "the substrate demonstration run by `sohusim demo`")
      .uinteger("initiators", 4, 1, 64, "traffic generators, each with one blocking request in flight")
      .uinteger("requests", 5000, 1, 100000000, "requests per generator")
      .quantity("request_size", Dimension::Bytes, "256 B", "1 B", "1 MiB", "bytes per request")
      .bare_number()
      .enumeration("pattern", "stream", {"stream", "strided", "random"}, "address pattern of every generator")
      .quantity("stride", Dimension::Bytes, "4 KiB", "1 B", "1 GiB", "step of the strided pattern")
      .bare_number()
      .real("read_fraction", 0.75, 0.0, 1.0, "share of requests that are reads (seeded per generator)")
      .quantity("think_time", Dimension::Time, "0 s", "0 s", "1 ms",
                "idle time between a response and the next request");
  s.section("demo.memory", "the memories behind the router (one address window each)")
      .uinteger("count", 2, 1, 16, "number of memories")
      .quantity("size", Dimension::Bytes, "1 GiB", "4 KiB", "1 TiB", "capacity of each memory")
      .bare_number()
      .quantity("latency", Dimension::Time, "80 ns", "0 s", "1 ms", "fixed access latency of each memory")
      .quantity("bandwidth", Dimension::Bandwidth, "25.6 GB/s", "1 MB/s", "100 TB/s",
                "data-port bandwidth of each memory (transfers serialize on it)");
  return s;
}

namespace {

struct DemoOptions {
  std::vector<std::string> presets;
  OutputOptions out;
};

sim::TrafficPattern::Kind pattern_kind(const std::string& s) {
  if (s == "random") return sim::TrafficPattern::Kind::Random;
  if (s == "strided") return sim::TrafficPattern::Kind::Strided;
  return sim::TrafficPattern::Kind::Stream;
}

// Everything the run builds; SystemC modules must outlive sc_start.
struct DemoSystem {
  counters::Registry registry;
  std::unique_ptr<counters::TraceRecorder> trace;
  sim::ClockDomains clocks;
  sim::MemoryManager mm;
  std::unique_ptr<sim::AddressRouter> router;
  std::vector<std::unique_ptr<sim::SparseMemory>> memories;
  std::vector<std::unique_ptr<sim::TrafficGenerator>> generators;
  std::unique_ptr<counters::Sampler> sampler;
  std::unique_ptr<sim::StatsSampler> stats_sampler;
  std::uint64_t next_correlation = 0;
};

// Ends sampling once every generator is done, so the kernel runs out of events.
struct Watcher : sc_core::sc_module {
  Watcher(sc_core::sc_module_name n, DemoSystem& sys) : sc_core::sc_module(n), sys_(sys) {
    SC_HAS_PROCESS(Watcher);
    SC_THREAD(run);
  }
  void run() {
    for (auto& g : sys_.generators) {
      if (!g->done()) wait(g->done_event());
    }
    if (sys_.stats_sampler) sys_.stats_sampler->stop();
  }
  DemoSystem& sys_;
};

// Seconds for people: four significant digits in the best unit.
std::string human_time(double s) {
  static const std::pair<double, const char*> units[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  for (const auto& [scale, name] : units) {
    if (s >= scale || scale == 1e-9) {
      std::ostringstream os;
      os << std::setprecision(4) << s / scale << ' ' << name;
      return os.str();
    }
  }
  return "0 s";
}

int run_demo(const GlobalOptions& global, const DemoOptions& o) {
  config::ConfigLoader loader(full_schema(), preset_dirs(global));
  for (const auto& p : o.presets) loader.load_preset(p);
  apply_output_options(loader, o.out);
  const config::Config cfg = loader.resolve();

  const std::string stats_path = cfg.get_string("stats.file");
  check_stats_path(stats_path);

  sim::ensure_time_resolution();
  DemoSystem sys;
  const std::string trace_path = cfg.get_string("trace.file");
  sys.trace = open_trace(trace_path, cfg.get_string("trace.format"));
  for (const std::string& name : cfg.keys_under("sim.clocks")) {
    sys.clocks.add(name, cfg.get_quantity("sim.clocks." + name));
  }

  const counters::TrackId proc = sys.trace->enabled() ? sys.trace->process_track("demo") : 0;
  sim::Instrumentation inst{&sys.registry, sys.trace.get(), proc, cfg.get_strings("trace.categories")};

  const auto n_mem = cfg.get_uint("demo.memory.count");
  const auto mem_size = static_cast<std::uint64_t>(cfg.get_quantity("demo.memory.size"));
  sys.router = std::make_unique<sim::AddressRouter>("router");
  for (std::uint64_t m = 0; m < n_mem; ++m) {
    sim::SparseMemory::Params p;
    p.size = mem_size;
    p.latency = sc_core::sc_time(cfg.get_quantity("demo.memory.latency"), sc_core::SC_SEC);
    p.bytes_per_second = cfg.get_quantity("demo.memory.bandwidth");
    p.functional = cfg.get_string("sim.data_mode") == "functional";
    const std::string name = "mem" + std::to_string(m);
    sys.memories.push_back(std::make_unique<sim::SparseMemory>(name.c_str(), p));
    sys.router->initiator_socket.bind(sys.memories.back()->socket);
    sys.router->map(m * mem_size, mem_size, static_cast<unsigned>(m), name);
    const sim::SparseMemory* mem = sys.memories.back().get();
    const std::string prefix = "demo." + name;
    sys.registry.formula(prefix + ".bytes_read", "B", "bytes read from this memory",
                         [mem] { return static_cast<double>(mem->bytes_read()); });
    sys.registry.formula(prefix + ".bytes_written", "B", "bytes written to this memory",
                         [mem] { return static_cast<double>(mem->bytes_written()); });
  }

  sim::TrafficPattern pat;
  pat.kind = pattern_kind(cfg.get_string("demo.pattern"));
  pat.window = n_mem * mem_size;
  pat.request_bytes = static_cast<std::uint64_t>(cfg.get_quantity("demo.request_size"));
  pat.stride = static_cast<std::uint64_t>(cfg.get_quantity("demo.stride"));
  pat.read_fraction = cfg.get_double("demo.read_fraction");
  pat.requests = cfg.get_uint("demo.requests");
  pat.gap = sc_core::sc_time(cfg.get_quantity("demo.think_time"), sc_core::SC_SEC);
  const auto n_gen = cfg.get_uint("demo.initiators");
  for (std::uint64_t g = 0; g < n_gen; ++g) {
    sim::TrafficPattern p = pat;
    p.seed = cfg.get_uint("sim.seed") + g;
    // Each generator owns an equal slice of the address space, so together they
    // cover every memory instead of all streaming through the first one.
    const std::uint64_t slice = (pat.window / n_gen) / pat.request_bytes * pat.request_bytes;
    if (slice < pat.request_bytes) throw UsageError("demo: memories too small for this many generators");
    p.window = slice;
    p.base = g * slice;
    const std::string name = "gen" + std::to_string(g);
    sys.generators.push_back(std::make_unique<sim::TrafficGenerator>(
        name.c_str(), p, inst, "demo." + name, sys.mm, sys.next_correlation, static_cast<std::uint32_t>(g)));
    sys.generators.back()->socket.bind(sys.router->target_socket);
  }
  sys.registry.formula("demo.bytes", "B", "bytes moved by all generators",
                       "sum(demo.gen*.bytes_read) + sum(demo.gen*.bytes_written)");
  sys.registry.formula("demo.requests", "1", "requests completed by all generators", "sum(demo.gen*.requests)");
  sys.registry.formula("demo.simulated_time", "s", "simulated time so far",
                       [] { return sc_core::sc_time_stamp().to_seconds(); });
  sys.registry.formula("demo.bandwidth", "B/s", "achieved bandwidth over the whole run",
                       "demo.bytes / demo.simulated_time");

  sys.sampler = std::make_unique<counters::Sampler>(
      sys.registry, std::vector<std::string>{"demo.gen*.bytes_read", "demo.gen*.bytes_written"},
      /*counters_as_rates=*/true, /*keep_in_memory=*/false);
  const double interval_s = cfg.get_quantity("stats.sample_interval");
  if (inst.tracing("stats")) counters::attach_trace_counters(*sys.sampler, *sys.trace, proc);
  sys.stats_sampler =
      std::make_unique<sim::StatsSampler>("stats_sampler", *sys.sampler, sc_core::sc_time(interval_s, sc_core::SC_SEC));
  Watcher watcher("watcher", sys);

  const SimulationRun run = run_simulation(cfg);
  int rc = run.exit_code;
  std::string failure = run.failure;
  const double wall = run.wall_seconds;
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  bool all_done = true;
  for (auto& g : sys.generators) all_done = all_done && g->done();
  if (rc == kOk && !all_done) {
    failure = run.unfinished() + " before every generator finished";
    rc = kSimulationError;
  }

  const double sim_s = end.to_seconds();
  const double bytes = sys.registry.value("demo.bytes");
  const double reqs = sys.registry.value("demo.requests");
  // Stats and trace are written whatever happened: what ran stays visible.
  if (!stats_path.empty() && !write_stats(sys.registry, stats_path, cfg.get_string("stats.format")))
    rc = kSimulationError;
  sys.trace->close();
  print_written("demo", {{"--trace", cfg.get_string("trace.file")}, {"--stats", stats_path}});

  if (o.out.json) {
    nlohmann::json j;
    j["simulated_seconds"] = sim_s;
    j["wall_seconds"] = wall;
    j["requests"] = reqs;
    j["bytes"] = bytes;
    j["bandwidth_gbps"] = sim_s > 0 ? bytes / sim_s / 1e9 : 0.0;
    j["peak_gbps"] = static_cast<double>(n_mem) * cfg.get_quantity("demo.memory.bandwidth") / 1e9;
    j["ok"] = rc == kOk;
    if (!failure.empty()) j["error"] = failure;
    std::cout << j.dump(2) << '\n';
  } else {
    const double peak = static_cast<double>(n_mem) * cfg.get_quantity("demo.memory.bandwidth");
    std::cout << "sohusim demo: " << n_gen << " generators (" << cfg.get_string("demo.pattern") << ", "
              << pat.request_bytes << " B, " << pat.read_fraction * 100 << "% reads) -> router -> " << n_mem
              << " memories ("
              << config::format_quantity(cfg.get_quantity("demo.memory.bandwidth"), Dimension::Bandwidth) << ", "
              << config::format_quantity(cfg.get_quantity("demo.memory.latency"), Dimension::Time) << ")\n";
    std::cout << std::fixed << std::setprecision(2);
    std::cout << "  requests          " << static_cast<std::uint64_t>(reqs) << "\n"
              << "  simulated time    " << human_time(sim_s) << "\n"
              << "  bandwidth         " << bytes / sim_s / 1e9 << " GB/s of " << peak / 1e9 << " GB/s peak ("
              << 100.0 * bytes / sim_s / peak << "%)\n";
    for (const auto* d : sys.registry.glob("demo.gen0.read_latency")) {
      const auto& dist = static_cast<const counters::Distribution&>(*d);
      std::cout << "  gen0 read latency mean " << dist.mean() << " ns, p99 " << dist.percentile(0.99) << " ns\n";
    }
    for (const std::string& name : sys.clocks.names()) {
      const auto& c = sys.clocks.get(name);
      std::cout << "  " << std::left << std::setw(6) << name << std::right << " clock "
                << config::format_quantity(c.nominal_frequency_hz(), Dimension::Frequency) << ": "
                << c.time_to_cycles(end) << " cycles\n";
    }
    std::cout << "  wall time         " << wall << " s (" << reqs / wall / 1e6 << " M requests/s)\n";
    if (!stats_path.empty()) std::cout << "  stats             " << stats_path << "\n";
    if (!trace_path.empty()) std::cout << "  trace             " << trace_path << " (open in ui.perfetto.dev)\n";
  }
  if (!failure.empty()) std::cerr << "sohusim demo: error: " << failure << '\n';
  return rc;
}

}  // namespace

void add_demo_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd =
      root.add_subcommand("demo",
                          "simulate traffic generators -> address router -> memories; print bandwidth and latency, "
                          "optionally write stats and a trace (the main job until `sohusim run` exists)");
  cmd->add_option("--preset", o->presets, "preset from configs/ applied first (repeatable)");
  add_output_options(cmd, o->out, "YAML config file(s), applied after presets");
  cmd->callback([&action, &global, o] { action = [&global, o] { return run_demo(global, *o); }; });
}

}  // namespace sohusim::tools
