// `sohusim gemm`: one GEMM command through the whole device, the way a performance engineer
// sizes a matrix unit: a minimal host agent brings the device up through its registers,
// creates an I/O queue, submits one GEMM (operands already in HBM) and waits for its
// completion interrupt; the command runs tiled over the matrix engines, SRAM and HBM.
// Prints cycles, time, TFLOPS, utilization and HBM traffic (docs/device.md).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <systemc>

#include "cli.hpp"
#include "run_outputs.hpp"
#include "schema_all.hpp"
#include "sohusim/config/config.hpp"
#include "sohusim/device/compute/systolic.hpp"
#include "sohusim/platform/host_agent.hpp"
#include "sohusim/platform/host_system.hpp"
#include "sohusim/platform/run_configuration.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::tools {

namespace {

struct GemmOptions {
  std::string arch = "sohu";
  std::string hbm;
  std::uint64_t m = 0, k = 0, n = 0;
  std::string dtype = "bf16";
  std::string dataflow, fold_model, array;
  unsigned engines = 0;
  OutputOptions out;
};

int run_gemm(const GlobalOptions& global, const GemmOptions& o) {
  config::ConfigLoader loader(full_schema(), preset_dirs(global));
  if (std::filesystem::is_regular_file(o.arch)) {
    loader.load_file(o.arch);
  } else {
    const std::string preset = "arch/" + o.arch;
    const std::vector<std::string> all = loader.available_presets();
    if (std::find(all.begin(), all.end(), preset) == all.end()) {
      std::string names;
      for (const auto& p : all) {
        if (p.rfind("arch/", 0) == 0) names += (names.empty() ? "" : ", ") + p.substr(5);
      }
      throw UsageError("--arch: `" + o.arch + "` is neither a file nor a preset; presets: " + names);
    }
    loader.load_preset(preset);
  }
  if (!o.hbm.empty()) {
    const std::vector<std::string> all = loader.available_presets();
    if (std::find(all.begin(), all.end(), "hbm/" + o.hbm) == all.end())
      throw UsageError("--hbm: `" + o.hbm + "` is not an HBM preset (configs/hbm)");
    loader.load_preset("hbm/" + o.hbm);
  }
  apply_output_options(loader, o.out);
  if (!o.dataflow.empty()) loader.set("device.matrix.dataflow=" + o.dataflow);
  if (!o.fold_model.empty()) loader.set("device.matrix.fold_model=" + o.fold_model);
  if (o.engines != 0) loader.set("device.matrix.engines=" + std::to_string(o.engines));
  if (!o.array.empty()) {
    const std::size_t x = o.array.find('x');
    std::size_t p1 = 0, p2 = 0;
    unsigned long r = 0, c = 0;
    try {
      if (x == std::string::npos || o.array.find('-') != std::string::npos) throw std::invalid_argument("x");
      r = std::stoul(o.array.substr(0, x), &p1);
      c = std::stoul(o.array.substr(x + 1), &p2);
    } catch (const std::exception&) {
      p1 = 0;
    }
    if (p1 == 0 || p1 != x || p2 != o.array.size() - x - 1)
      throw UsageError("--array: `" + o.array + "` is not RxC (e.g. 128x128)");
    loader.set("device.matrix.rows=" + std::to_string(r));
    loader.set("device.matrix.cols=" + std::to_string(c));
  }
  device::DataType dt{};
  try {
    dt = device::parse_data_type(o.dtype);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--dtype: ") + e.what());
  }
  for (auto [v, name] : {std::pair<std::uint64_t, const char*>{o.m, "--m"}, {o.k, "--k"}, {o.n, "--n"}}) {
    if (v == 0 || v > 0xFFFFFFFFULL) throw UsageError(std::string(name) + " must be in 1 .. 4294967295");
  }
  const config::Config cfg = loader.resolve();
  const std::string stats_path = cfg.get_string("stats.file");
  check_stats_path(stats_path);

  sim::ensure_time_resolution();
  counters::Registry registry;
  std::unique_ptr<counters::TraceRecorder> trace =
      open_trace(cfg.get_string("trace.file"), cfg.get_string("trace.format"));
  const counters::TrackId proc = trace->enabled() ? trace->process_track("host0") : 0;
  sim::Instrumentation inst{&registry, trace.get(), proc};
  std::unique_ptr<platform::HostSystem> sys;
  try {
    sys = std::make_unique<platform::HostSystem>(cfg, inst);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const device::DeviceParams& p = sys->device().params();
  const unsigned ib = device::bytes_of(dt);
  // The fit check in floating point first: M x K x bytes can exceed 64 bits.
  const double need =
      (static_cast<double>(o.m) * static_cast<double>(o.k) + static_cast<double>(o.k) * static_cast<double>(o.n) +
       static_cast<double>(o.m) * static_cast<double>(o.n)) *
      ib;
  if (need > static_cast<double>(p.hbm_bytes)) {
    std::ostringstream msg;
    msg << "the operands (" << need << " bytes) do not fit in the device's HBM (" << p.hbm_bytes << " bytes)";
    throw UsageError(msg.str());
  }
  const std::uint64_t a_bytes = o.m * o.k * ib, b_bytes = o.k * o.n * ib, c_bytes = o.m * o.n * ib;
  const auto align = [](std::uint64_t v) { return (v + 4095) & ~4095ULL; };
  const std::uint64_t a = 0, b = align(a_bytes), c = b + align(b_bytes);
  if (c + c_bytes > p.hbm_bytes) {
    throw UsageError("the operands (" + std::to_string(c + c_bytes) + " bytes) do not fit in the device's HBM (" +
                     std::to_string(p.hbm_bytes) + " bytes)");
  }

  platform::HostAgent agent(*sys);
  device::Cqe done{};
  std::string failure;
  bool finished = false;
  sc_core::sc_time t0, t1;
  sc_core::sc_spawn(
      [&] {
        try {
          agent.probe();
          agent.enable();
          agent.create_io_queue(1, 64, 1);
          t0 = sc_core::sc_time_stamp();
          done = agent.run(
              1, platform::make_gemm(a, b, c, static_cast<std::uint32_t>(o.m), static_cast<std::uint32_t>(o.k),
                                     static_cast<std::uint32_t>(o.n), dt, dt));
          t1 = sc_core::sc_time_stamp();
          finished = true;
          if (done.status != 0)
            failure = std::string("the GEMM completed with status ") +
                      device::to_string(static_cast<device::Status>(done.status));
        } catch (const std::exception& e) {
          failure = e.what();
        }
      },
      "host_agent");
  const SimulationRun run = run_simulation(cfg);
  sys->sync_stats();
  const bool stats_ok = stats_path.empty() || write_stats(registry, stats_path, cfg.get_string("stats.format"));
  trace->close();
  print_written("gemm", {{"--trace", cfg.get_string("trace.file")}, {"--stats", stats_path}});
  int code = run.exit_code;
  // The GEMM never completed: cut by sim.stop_time (or lost), not a result of 0 s.
  if (code == kOk && failure.empty() && !finished) failure = "the GEMM did not complete: " + run.unfinished();
  if (code == kOk && !failure.empty()) code = kSimulationError;
  if (code == kOk && !stats_ok) code = kSimulationError;
  if (code != kOk) {
    const std::string& why = failure.empty() ? run.failure : failure;
    if (!why.empty()) std::cerr << "sohusim gemm: " << why << "\n";
    if (!finished) {
      // The host agent's thread is suspended mid-command and SystemC cannot unwind it: what it
      // holds stays allocated. Every output is written; end here, as run does, without
      // destructors (a leak checker cannot see into the suspended stack).
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(code);
    }
    return code;
  }

  const double seconds = (t1 - t0).to_seconds();
  const double flops = 2.0 * static_cast<double>(o.m) * static_cast<double>(o.k) * static_cast<double>(o.n);
  const double peak = device::peak_flops(p.matrix, dt);
  const std::uint64_t compute =
      device::compute_cycles(p.matrix.fold_model, p.matrix.dataflow, p.matrix.array, device::GemmShape{o.m, o.k, o.n},
                             p.matrix.rate[static_cast<unsigned>(dt)]);
  double busiest = 0, active = 0, useful = 0, issued = 0;
  for (const counters::Stat* s : registry.glob("dev0.me*.active_cycles")) {
    busiest = std::max(busiest, s->value());
    active += s->value();
  }
  for (const counters::Stat* s : registry.glob("dev0.me*.macs_useful")) useful += s->value();
  for (const counters::Stat* s : registry.glob("dev0.me*.macs_issued")) issued += s->value();
  const double hbm_bytes = registry.value("dev0.hbm.port.bytes_read") + registry.value("dev0.hbm.port.bytes_written");
  const double total_cycles = seconds * p.clock_hz;
  const device::EnergyReport energy = sys->device().energy(seconds);
  const double tflops = seconds > 0 ? flops / seconds / 1e12 : 0;
  const double utilization = seconds > 0 ? flops / seconds / peak : 0;
  if (o.out.json) {
    nlohmann::json j;
    j["arch"] = p.name;
    j["m"] = o.m;
    j["k"] = o.k;
    j["n"] = o.n;
    j["dtype"] = device::to_string(dt);
    j["engines"] = p.matrix.engines;
    j["array"] = std::to_string(p.matrix.array.rows) + "x" + std::to_string(p.matrix.array.cols);
    j["dataflow"] = device::to_string(p.matrix.dataflow);
    j["fold_model"] = device::to_string(p.matrix.fold_model);
    j["compute_cycles"] = compute;
    j["engine_active_cycles_max"] = static_cast<std::uint64_t>(busiest);
    j["engine_active_cycles_sum"] = static_cast<std::uint64_t>(active);
    j["total_cycles"] = static_cast<std::uint64_t>(std::llround(total_cycles));
    j["seconds"] = seconds;
    j["tflops"] = tflops;
    j["peak_tflops"] = peak / 1e12;
    j["utilization"] = utilization;
    j["macs_useful"] = useful;
    j["macs_issued"] = issued;
    j["hbm_bytes"] = hbm_bytes;
    j["hbm_gbps"] = seconds > 0 ? hbm_bytes / seconds / 1e9 : 0;
    double tiles = 0;
    for (const counters::Stat* s : registry.glob("dev0.me*.tiles")) tiles += s->value();
    j["tiles"] = tiles;
    j["energy_joules"] = energy.total_j;
    j["average_watts"] = energy.average_w;
    j["wall_seconds"] = run.wall_seconds;
    j["configuration"] = {{"arch", o.arch},
                          {"hbm", cfg.get_string("hbm.name")},
                          {"hbm_stacks", cfg.get_uint("hbm.stacks")},
                          {"configs", o.out.files},
                          {"sets", o.out.sets},
                          {"fidelity", cfg.get_string("sim.fidelity")},
                          {"mode", cfg.get_string("sim.data_mode")},
                          {"devices", 1},
                          {"version", platform::build_version()},
                          {"commit", platform::build_commit()},
                          {"hash", platform::fnv1a_hex(platform::simulated_values(cfg).dump())}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << std::setprecision(4) << "sohusim gemm: " << p.name << ", " << o.m << " x " << o.k << " x " << o.n
              << " " << device::to_string(dt) << " on " << p.matrix.engines << " engine(s) of " << p.matrix.array.rows
              << "x" << p.matrix.array.cols << " (" << device::to_string(p.matrix.dataflow) << ", "
              << device::to_string(p.matrix.fold_model) << ")\n"
              << "  time           " << seconds * 1e6 << " us (" << std::llround(total_cycles) << " cycles at "
              << p.clock_hz / 1e9 << " GHz), doorbell to completion\n"
              << "  compute cycles " << compute << " (whole GEMM on one array, "
              << device::to_string(p.matrix.fold_model) << " convention); busiest engine active "
              << static_cast<std::uint64_t>(busiest) << "\n"
              << "  throughput     " << tflops << " TFLOPS of " << peak / 1e12 << " peak (" << utilization * 100
              << " %)\n"
              << "  HBM            " << hbm_bytes / 1e6 << " MB, " << (seconds > 0 ? hbm_bytes / seconds / 1e9 : 0)
              << " GB/s\n"
              << "  energy         " << energy.total_j * 1e3 << " mJ, " << energy.average_w
              << " W average (docs/device.md: model)\n"
              << "  wall time      " << run.wall_seconds << " s\n";
  }
  return kOk;
}

}  // namespace

void add_gemm_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<GemmOptions>();
  auto* cmd =
      root.add_subcommand("gemm", "run one GEMM command through the device; print cycles, time, TFLOPS, utilization");
  cmd->add_option("--arch", o->arch, "architecture preset (configs/arch: sohu, a100-like, h100-like) or a YAML file")
      ->capture_default_str();
  cmd->add_option("--hbm", o->hbm, "HBM preset (configs/hbm): replaces the arch's HBM generation, keeps its stacks");
  cmd->add_option("--m", o->m, "rows of A and C")->required();
  cmd->add_option("--k", o->k, "reduction dimension")->required();
  cmd->add_option("--n", o->n, "columns of B and C")->required();
  cmd->add_option("--dtype", o->dtype, "fp8 | fp8_e5m2 | bf16 | fp16")->capture_default_str();
  cmd->add_option("--dataflow", o->dataflow, "ws | os | is (default: the preset's)")
      ->check(CLI::IsMember({"ws", "os", "is"}));
  cmd->add_option("--fold-model", o->fold_model, "overlap | scalesim (default: the preset's)")
      ->check(CLI::IsMember({"overlap", "scalesim"}));
  cmd->add_option("--engines", o->engines, "matrix engines (default: the preset's)")->check(CLI::PositiveNumber);
  cmd->add_option("--array", o->array, "systolic array RxC, e.g. 128x128 (default: the preset's)");
  add_output_options(cmd, o->out, "YAML config file(s), applied after the preset");
  cmd->callback([o, &global, &action] { action = [o, &global] { return run_gemm(global, *o); }; });
}

}  // namespace sohusim::tools
