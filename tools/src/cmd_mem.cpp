// `sohusim mem`: the memory front end, the way Ramulator's and DRAMSys' users drive a
// memory model. AT initiators (memory::LoadInitiator, each with many requests in flight)
// play a pattern or a request-trace file against an HbmMemory at either fidelity, and the
// command prints bandwidth, % of peak, read latency (mean, p99), row-hit rate and wall
// time, or one JSON object. docs/memory-frontend.md has the usage and the trace format.
#include <algorithm>
#include <cmath>
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
#include "sohusim/config/units.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/counters/trace_writer.hpp"
#include "sohusim/memory/dram_system.hpp"
#include "sohusim/memory/hbm_memory.hpp"
#include "sohusim/memory/load_initiator.hpp"
#include "sohusim/sim/instrumentation.hpp"
#include "sohusim/sim/memory_manager.hpp"

namespace sohusim::tools {

namespace {

struct MemOptions {
  std::string preset = "hbm3-6400";
  std::uint32_t stacks = 0;  // 0: the preset's
  std::string fidelity, refresh, mapping;
  std::string pattern = "stream";
  std::string reads;  // --reads PCT; empty: the pattern's (100 %, or mix:READ_PCT)
  std::string size = "64";
  std::uint64_t requests = 100000;
  std::uint32_t initiators = 4;
  std::uint32_t outstanding = 128;
  std::string trace_file;
  OutputOptions out;
};

// ---- the request-trace format --------------------------------------------------------
//
//   # comment; blank lines are ignored
//   <time> <address> <R|W> <size>
//   0      0x1000    R     64
//   12.5ns 0x2000    W     4096
//   1 us   4096      r     32
// time: a number of nanoseconds, or a number with a time unit (ps, ns, us, ms, s), with or
// without a space; address: decimal or 0x-hex; R/W in either case; size: bytes (decimal or
// 0x-hex), at least 1. Requests are issued at their time, or as soon as the initiator has
// room; with several initiators, lines are dealt out round robin.

std::uint64_t parse_uint(const std::string& text, const std::string& what, const std::string& where) {
  std::size_t pos = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &pos, 0);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != text.size() || text.empty() || text[0] == '-') {
    throw UsageError(where + ": " + what + " `" + text + "` is not a non-negative integer (decimal or 0x-hex)");
  }
  return v;
}

std::vector<memory::TraceRequest> read_trace_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--trace-file: cannot open `" + path + "`");
  std::vector<memory::TraceRequest> out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    const std::string where = path + ":" + std::to_string(n);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    std::vector<std::string> tok;
    for (std::string t; fields >> t;) tok.push_back(t);
    if (tok.empty()) continue;
    // "12.5 ns" may come as two tokens: join a unit that stands alone.
    if (tok.size() == 5 && config::is_unit_of(tok[1], config::Dimension::Time)) {
      tok[0] += tok[1];
      tok.erase(tok.begin() + 1);
    }
    if (tok.size() != 4) {
      throw UsageError(where + ": expected `<time> <address> <R|W> <size>`, got " + std::to_string(tok.size()) +
                       " fields");
    }
    memory::TraceRequest r;
    double seconds = 0;
    try {
      const config::Quantity q = config::parse_quantity(tok[0]);
      if (q.dimension == config::Dimension::None) {
        seconds = q.value * 1e-9;  // a bare number is nanoseconds
      } else if (q.dimension == config::Dimension::Time) {
        seconds = q.value;
      } else {
        throw config::UnitError("not a time");
      }
    } catch (const config::UnitError&) {
      throw UsageError(where + ": time `" + tok[0] + "` is not a time (a number of ns, or e.g. `12.5ns`, `1 us`)");
    }
    if (!(seconds >= 0) || seconds > 3600) throw UsageError(where + ": time `" + tok[0] + "` is out of range");
    r.time_ps = static_cast<std::uint64_t>(std::llround(seconds * 1e12));
    r.address = parse_uint(tok[1], "address", where);
    if (tok[2] == "R" || tok[2] == "r") {
      r.write = false;
    } else if (tok[2] == "W" || tok[2] == "w") {
      r.write = true;
    } else {
      throw UsageError(where + ": direction `" + tok[2] + "` is not R or W");
    }
    const std::uint64_t size = parse_uint(tok[3], "size", where);
    if (size == 0 || size > (1u << 30)) throw UsageError(where + ": size " + tok[3] + " is not in 1 B .. 1 GiB");
    r.size = static_cast<std::uint32_t>(size);
    out.push_back(r);
  }
  if (out.empty()) throw UsageError(path + ": the trace holds no request");
  std::stable_sort(out.begin(), out.end(),
                   [](const memory::TraceRequest& a, const memory::TraceRequest& b) { return a.time_ps < b.time_ps; });
  return out;
}

// ---- patterns ------------------------------------------------------------------------

memory::LoadPattern parse_pattern(const std::string& text) {
  memory::LoadPattern p;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "stream" && colon == std::string::npos) {
    p.kind = memory::LoadPattern::Kind::Stream;
  } else if (kind == "random" && colon == std::string::npos) {
    p.kind = memory::LoadPattern::Kind::Random;
  } else if (kind == "strided" && !arg.empty()) {
    p.kind = memory::LoadPattern::Kind::Strided;
    try {
      const double stride = config::parse_quantity(arg, config::Dimension::Bytes, true);
      // A negative stride would wrap to 2^64 - |s| in the cast below.
      if (!(stride >= 1) || stride > 1e15) throw config::UnitError("`" + arg + "` is not a stride of 1 B .. 1 PB");
      p.stride = static_cast<std::uint64_t>(stride);
    } catch (const config::UnitError& e) {
      throw UsageError("--pattern strided:STRIDE: " + std::string(e.what()));
    }
    if (p.stride == 0) throw UsageError("--pattern strided:STRIDE: the stride must be at least 1 byte");
  } else if (kind == "mix" && !arg.empty()) {
    // Random addresses with READ_PCT % reads: a mixed read/write workload.
    p.kind = memory::LoadPattern::Kind::Random;
    char* end = nullptr;
    const double pct = std::strtod(arg.c_str(), &end);
    if (end == arg.c_str() || *end != '\0' || !(pct >= 0 && pct <= 100)) {
      throw UsageError("--pattern mix:READ_PCT: `" + arg + "` is not a percentage in 0 .. 100");
    }
    p.read_fraction = pct / 100.0;
  } else {
    throw UsageError("--pattern: unknown pattern `" + text +
                     "`; allowed: stream, random, strided:STRIDE, mix:READ_PCT");
  }
  return p;
}

// Percentile over several distributions (their buckets merged), interpolated in the bucket.
double merged_percentile(const std::vector<const counters::Distribution*>& dists, double q) {
  std::vector<counters::Distribution::Bucket> all;
  std::uint64_t total = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto* d : dists) {
    if (d->count() == 0) continue;
    for (const auto& b : d->buckets()) all.push_back(b);
    total += d->count();
    lo = std::min(lo, d->min());
    hi = std::max(hi, d->max());
  }
  if (total == 0) return std::numeric_limits<double>::quiet_NaN();
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
  const double target = q * static_cast<double>(total);
  double seen = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    double count = 0;
    while (j < all.size() && all[j].lo == all[i].lo) count += static_cast<double>(all[j++].count);
    if (seen + count >= target) {
      const double b_lo = std::isfinite(all[i].lo) ? std::max(all[i].lo, lo) : lo;
      const double b_hi = std::isfinite(all[i].hi) ? std::min(all[i].hi, hi) : hi;
      const double frac = count > 0 ? (target - seen) / count : 0;
      return std::clamp(b_lo + frac * (b_hi - b_lo), lo, hi);
    }
    seen += count;
    i = j;
  }
  return hi;
}

int run_mem(const GlobalOptions& global, const MemOptions& o) {
  config::ConfigLoader loader(full_schema(), preset_dirs(global));
  const std::string preset = "hbm/" + o.preset;
  {
    const std::vector<std::string> all = loader.available_presets();
    if (std::find(all.begin(), all.end(), preset) == all.end()) {
      std::string names;
      for (const std::string& p : all) {
        if (p.rfind("hbm/", 0) == 0) names += (names.empty() ? "" : ", ") + p.substr(4);
      }
      throw UsageError("--preset: unknown preset `" + o.preset + "`; available: " + names);
    }
  }
  loader.load_preset(preset);
  apply_output_options(loader, o.out);
  if (o.stacks != 0) loader.set("hbm.stacks=" + std::to_string(o.stacks));
  if (!o.fidelity.empty()) loader.set("hbm.target.fidelity=" + o.fidelity);
  if (!o.refresh.empty()) loader.set("hbm.controller.refresh=" + o.refresh);
  if (!o.mapping.empty()) loader.set("hbm.mapping.preset=" + o.mapping);
  const config::Config cfg = loader.resolve();

  memory::LoadPattern pattern;
  std::vector<memory::TraceRequest> trace_requests;
  if (!o.trace_file.empty()) {
    trace_requests = read_trace_file(o.trace_file);
    pattern.kind = memory::LoadPattern::Kind::Trace;
  } else {
    pattern = parse_pattern(o.pattern);
    if (!o.reads.empty()) {
      if (o.pattern.rfind("mix:", 0) == 0) {
        throw UsageError("--reads: `--pattern " + o.pattern + "` already sets the share of reads; give one of them");
      }
      char* end = nullptr;
      const double pct = std::strtod(o.reads.c_str(), &end);
      if (end == o.reads.c_str() || *end != '\0' || !(pct >= 0 && pct <= 100)) {
        throw UsageError("--reads: `" + o.reads + "` is not a percentage in 0 .. 100");
      }
      pattern.read_fraction = pct / 100.0;
    }
    try {
      const double size = config::parse_quantity(o.size, config::Dimension::Bytes, true);
      if (!(size >= 1 && size <= (1u << 30)) || size != std::floor(size)) throw config::UnitError("out of range");
      pattern.request_bytes = static_cast<std::uint32_t>(size);
    } catch (const config::UnitError&) {
      throw UsageError("--size: `" + o.size + "` is not a size in 1 B .. 1 GiB");
    }
  }
  const std::string stats_path = cfg.get_string("stats.file");
  check_stats_path(stats_path);

  sim::ensure_time_resolution();
  counters::Registry registry;
  const std::string trace_path = cfg.get_string("trace.file");
  std::unique_ptr<counters::TraceRecorder> trace = open_trace(trace_path, cfg.get_string("trace.format"));
  const counters::TrackId proc = trace->enabled() ? trace->process_track("mem") : 0;
  sim::Instrumentation inst{&registry, trace.get(), proc};

  const std::string fidelity = memory::hbm_fidelity(cfg);
  memory::HbmMemoryParams params = memory::HbmMemoryParams::from_config(cfg);
  params.max_transactions = std::max(params.max_transactions, o.initiators * o.outstanding);
  memory::HbmMemory mem("hbm", memory::make_hbm_backend(cfg, fidelity, inst, "hbm"), params, inst, "hbm");
  const std::uint64_t capacity = mem.backend().capacity_bytes();

  sim::MemoryManager mm;
  std::vector<std::unique_ptr<memory::LoadInitiator>> initiators;
  const bool functional = cfg.get_string("sim.data_mode") == "functional";
  std::uint64_t total_requests = 0;
  for (std::uint32_t i = 0; i < o.initiators; ++i) {
    memory::LoadPattern p = pattern;
    p.outstanding = o.outstanding;
    p.seed = cfg.get_uint("sim.seed") * 1000003 + i;
    p.window = capacity / p.request_bytes * p.request_bytes;
    p.with_data = functional;
    if (p.kind == memory::LoadPattern::Kind::Trace) {
      for (std::size_t k = i; k < trace_requests.size(); k += o.initiators) p.trace.push_back(trace_requests[k]);
      total_requests += p.trace.size();
    } else {
      p.requests = o.requests / o.initiators + (i < o.requests % o.initiators ? 1 : 0);
      total_requests += p.requests;
    }
    const std::string name = "gen" + std::to_string(i);
    initiators.push_back(std::make_unique<memory::LoadInitiator>(name.c_str(), p, i, o.initiators, mm,
                                                                 counters::Scope(registry, "mem." + name)));
    initiators.back()->socket.bind(mem.socket);
  }

  const SimulationRun run = run_simulation(cfg);
  int rc = run.exit_code;
  std::string failure = run.failure;
  const double wall = run.wall_seconds;
  if (auto* detailed = dynamic_cast<memory::DramSystem*>(&mem.backend())) detailed->sync_stats();

  sc_core::sc_time end = sc_core::SC_ZERO_TIME;
  std::uint64_t completed = 0;
  double bytes = 0;
  std::vector<const counters::Distribution*> read_lat;
  for (std::uint32_t i = 0; i < o.initiators; ++i) {
    const auto& g = *initiators[i];
    end = std::max(end, g.finish_time());
    completed += g.completed();
    const std::string s = "mem.gen" + std::to_string(i);
    bytes += registry.value(s + ".bytes_read") + registry.value(s + ".bytes_written");
    read_lat.push_back(static_cast<const counters::Distribution*>(&registry.get(s + ".read_latency")));
  }
  if (rc == kOk && completed < total_requests) {
    failure = run.unfinished() + " after " + std::to_string(completed) + " of " + std::to_string(total_requests) +
              " requests";
    rc = kSimulationError;
  }
  std::uint64_t errors = 0;
  for (std::uint32_t i = 0; i < o.initiators; ++i) {
    errors += static_cast<std::uint64_t>(registry.value("mem.gen" + std::to_string(i) + ".errors"));
  }
  // Stats and trace are written whatever happened: what ran stays visible.
  if (!stats_path.empty() && !write_stats(registry, stats_path, cfg.get_string("stats.format"))) rc = kSimulationError;
  trace->close();
  print_written("mem", {{"--trace", cfg.get_string("trace.file")}, {"--stats", stats_path}});

  const double sim_s = end.to_seconds();
  const double bw = sim_s > 0 ? bytes / sim_s : 0.0;
  const double peak = mem.backend().peak_bytes_per_second();
  double read_sum = 0;
  std::uint64_t read_n = 0;
  for (const auto* d : read_lat) {
    read_sum += d->sum();
    read_n += d->count();
  }
  const double avg_read = read_n ? read_sum / static_cast<double>(read_n) : std::nan("");
  const double p99_read = merged_percentile(read_lat, 0.99);
  const counters::Stat* hit_stat = registry.find("hbm.row_hit_rate");
  const double hit_rate = hit_stat ? hit_stat->value() : std::nan("");
  const std::string what = o.trace_file.empty() ? o.pattern : "trace " + o.trace_file;
  // Little's law: requests in flight = throughput x latency. When the initiators keep almost
  // all they may in flight, the bandwidth is what that many requests carry at this latency,
  // not what the memory can do: say so, with the number in flight that would reach 90 % of
  // peak at this latency (more, if the latency grows with the load).
  const double in_flight = static_cast<double>(o.initiators) * o.outstanding;
  const double mean_in_flight = read_n && sim_s > 0 ? static_cast<double>(completed) / sim_s * avg_read * 1e-9 : 0.0;
  const bool in_flight_bound =
      o.trace_file.empty() && bw < 0.85 * peak && mean_in_flight >= 0.85 * in_flight && avg_read > 0;
  const double needed = in_flight_bound ? std::ceil(0.9 * peak * avg_read * 1e-9 / pattern.request_bytes) : 0.0;

  if (o.out.json) {
    nlohmann::json j;
    const auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    j["preset"] = o.preset;
    j["fidelity"] = fidelity;
    j["stacks"] = cfg.get_uint("hbm.stacks");
    j["pattern"] = what;
    j["request_bytes"] = o.trace_file.empty() ? nlohmann::json(pattern.request_bytes) : nlohmann::json(nullptr);
    j["read_fraction"] = o.trace_file.empty() ? nlohmann::json(pattern.read_fraction) : nlohmann::json(nullptr);
    j["initiators"] = o.initiators;
    j["outstanding"] = o.outstanding;
    j["requests"] = completed;
    j["errors"] = errors;
    j["bytes"] = bytes;
    j["simulated_seconds"] = sim_s;
    j["bandwidth_gbps"] = bw / 1e9;
    j["peak_gbps"] = peak / 1e9;
    j["efficiency"] = peak > 0 ? bw / peak : 0.0;
    j["avg_read_latency_ns"] = num(avg_read);
    j["p99_read_latency_ns"] = num(p99_read);
    j["row_hit_rate"] = num(hit_rate);
    j["wall_seconds"] = wall;
    j["requests_per_second"] = wall > 0 ? static_cast<double>(completed) / wall : 0.0;
    j["bound"] = in_flight_bound ? "in_flight" : "memory";
    j["in_flight_needed"] = in_flight_bound ? nlohmann::json(needed) : nlohmann::json(nullptr);
    j["ok"] = rc == kOk;
    if (!failure.empty()) j["error"] = failure;
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << "sohusim mem: " << o.preset << " x " << cfg.get_uint("hbm.stacks") << " stack(s), " << fidelity
              << " fidelity, " << what;
    if (o.trace_file.empty()) {
      std::cout << ", " << pattern.request_bytes << " B requests";
      if (pattern.read_fraction < 1.0) std::cout << ", " << pattern.read_fraction * 100 << " % reads";
    }
    std::cout << ", " << o.initiators << " initiators x " << o.outstanding << " outstanding\n";
    std::cout << std::fixed << std::setprecision(2);
    std::cout << "  requests          " << completed << (errors ? " (" + std::to_string(errors) + " errors)" : "")
              << "\n"
              << "  simulated time    " << config::format_quantity(sim_s, config::Dimension::Time) << "\n"
              << "  bandwidth         " << bw / 1e9 << " GB/s of " << peak / 1e9 << " GB/s peak (" << 100 * bw / peak
              << "%)\n"
              << "  read latency      mean " << avg_read << " ns, p99 " << p99_read << " ns\n"
              << "  row-hit rate      " << 100 * hit_rate << "%\n"
              << "  wall time         " << wall << " s (" << static_cast<double>(completed) / wall / 1e6
              << " M requests/s)\n";
    if (in_flight_bound) {
      std::cout << std::setprecision(0) << "  bound by          requests in flight: " << in_flight << " x "
                << pattern.request_bytes << " B over a mean read latency of " << std::setprecision(1) << avg_read
                << " ns carry at most " << in_flight * pattern.request_bytes / (avg_read * 1e-9) / 1e9
                << " GB/s (Little's law); about " << std::setprecision(0) << needed
                << " in flight would reach 90% of peak at this latency (--initiators x --outstanding)\n"
                << std::setprecision(2);
    }
    if (!stats_path.empty()) std::cout << "  stats             " << stats_path << "\n";
    if (!trace_path.empty()) std::cout << "  trace             " << trace_path << " (open in ui.perfetto.dev)\n";
  }
  if (!failure.empty()) std::cerr << "sohusim mem: error: " << failure << '\n';
  return rc;
}

}  // namespace

void add_mem_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<MemOptions>();
  auto* cmd = root.add_subcommand(
      "mem", "drive the HBM model with a traffic pattern or a request trace; print bandwidth, latency, row hits");
  cmd->add_option("--preset", o->preset, "HBM preset from configs/hbm/ (hbm3-6400, hbm3e-8000, ...)")
      ->capture_default_str();
  cmd->add_option("--stacks", o->stacks, "HBM stacks (default: the preset's)")->check(CLI::PositiveNumber);
  cmd->add_option("--fidelity", o->fidelity, "detailed | fast (default: sim.fidelity)")
      ->check(CLI::IsMember({"detailed", "fast"}));
  cmd->add_option("--refresh", o->refresh, "allbank | perbank | off")
      ->check(CLI::IsMember({"allbank", "perbank", "off"}));
  cmd->add_option("--mapping", o->mapping, "address mapping preset (default, RoBaBgCoPcCh, single-pc, ...)");
  auto* pattern = cmd->add_option("--pattern", o->pattern, "stream | random | strided:STRIDE | mix:READ_PCT")
                      ->capture_default_str();
  auto* reads = cmd->add_option(
      "--reads", o->reads, "percent of requests that are reads, for stream, random and strided patterns (default 100)");
  auto* size = cmd->add_option("--size", o->size, "bytes per request (any size and alignment; e.g. 64, 4KiB)")
                   ->capture_default_str();
  cmd->add_option("--requests", o->requests, "requests in total")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--initiators", o->initiators, "AT initiators")->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--outstanding", o->outstanding, "requests in flight per initiator")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  // A trace says each request's address, kind and size: the pattern options would be ignored.
  cmd->add_option("--trace-file", o->trace_file, "play this request trace (`<time> <address> <R|W> <size>` lines)")
      ->excludes(pattern)
      ->excludes(reads)
      ->excludes(size);
  add_output_options(cmd, o->out, "YAML config file(s), applied after the preset");
  cmd->callback([&action, &global, o] { action = [&global, o] { return run_mem(global, *o); }; });
}

}  // namespace sohusim::tools
