// `sohusim pcie`: moves data across one PCIe link and prints throughput, efficiency and
// latency, the way pcie-bench's users measure a link. The whole chain is real: host DRAM
// behind the root complex and its IOMMU, the link, the endpoint and a device behind BAR0.
// DMA patterns run on the device (write: device-to-host posted writes; read: device reads
// of host memory); mmio-read is a CPU thread reading a device register, stalling for the
// round trip. `--outstanding` streams run at once; each issues requests of `--size` until
// `--bytes` have moved. docs/pcie.md has the model.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "cli.hpp"
#include "run_outputs.hpp"
#include "schema_all.hpp"
#include "sohusim/config/config.hpp"
#include "sohusim/config/units.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/host/cpu_agent.hpp"
#include "sohusim/memory/host_dram.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/pcie/pcie_endpoint.hpp"
#include "sohusim/pcie/pcie_link.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/pcie/pcie_schema.hpp"
#include "sohusim/pcie/root_complex.hpp"
#include "sohusim/pcie/tlp_capture.hpp"
#include "sohusim/sim/correlation_extension.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::tools {

namespace {

struct PcieOptions {
  unsigned gen = 0, lanes = 0, tags = 0;
  std::string mps, mrrs, rcb, header;
  bool ecrc = false, no_merge = false, no_bulk = false;
  std::string pattern = "write";
  std::string size = "4KiB";
  std::string bytes = "64MiB";
  unsigned outstanding = 4;
  double ber = -1;
  std::string capture, capture_types, capture_range;
  OutputOptions out;
};

// The device behind the endpoint, as far as moving data needs one: a register file behind
// BAR0 that answers after a fixed latency, and a DMA initiator the streams use.
class BenchDevice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<BenchDevice> regs{"regs"};
  tlm_utils::simple_initiator_socket<BenchDevice> dma{"dma"};
  BenchDevice(sc_core::sc_module_name n, std::uint64_t latency_ps) : sc_core::sc_module(n), latency_ps_(latency_ps) {
    regs.register_b_transport(this, &BenchDevice::access);
  }
  tlm::tlm_response_status transfer(bool write, std::uint64_t addr, std::uint64_t len, pcie::RequesterId rid) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(nullptr);  // timing data mode: no bytes move
    gp.set_data_length(static_cast<unsigned>(len));
    gp.set_streaming_width(static_cast<unsigned>(len));
    sim::CorrelationExtension corr(0, rid);
    gp.set_extension(&corr);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    dma->b_transport(gp, delay);
    gp.clear_extension(&corr);
    return gp.get_response_status();
  }

 private:
  void access(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (gp.is_read() && gp.get_data_ptr() != nullptr) std::memset(gp.get_data_ptr(), 0x5a, gp.get_data_length());
    delay += sc_core::sc_time::from_value(latency_ps_);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  std::uint64_t latency_ps_;
};

std::uint64_t parse_bytes(const std::string& text, const char* option, double lo, double hi) {
  try {
    const double v = config::parse_quantity(text, config::Dimension::Bytes, true);
    if (v >= lo && v <= hi && v == std::floor(v)) return static_cast<std::uint64_t>(v);
  } catch (const config::UnitError&) {
  }
  throw UsageError(std::string(option) + ": `" + text + "` is not a size in " +
                   config::format_quantity(lo, config::Dimension::Bytes) + " .. " +
                   config::format_quantity(hi, config::Dimension::Bytes));
}

int run_pcie(const GlobalOptions& global, const PcieOptions& o) {
  config::ConfigLoader loader(full_schema(), preset_dirs(global));
  apply_output_options(loader, o.out);
  if (o.gen != 0) loader.set("pcie.link.generation=" + std::to_string(o.gen));
  if (o.lanes != 0) loader.set("pcie.link.lanes=" + std::to_string(o.lanes));
  if (!o.mps.empty()) loader.set("pcie.link.mps=" + o.mps);
  if (!o.mrrs.empty()) loader.set("pcie.link.mrrs=" + o.mrrs);
  if (!o.rcb.empty()) loader.set("pcie.link.rcb=" + o.rcb);
  if (!o.header.empty()) loader.set("pcie.link.header=" + o.header);
  if (o.ecrc) loader.set("pcie.link.ecrc=true");
  if (o.no_merge) loader.set("pcie.link.merge_completions=false");
  if (o.tags != 0) loader.set("pcie.link.tag_bits=" + std::to_string(o.tags));
  if (o.ber >= 0) {
    std::ostringstream ber;
    ber << std::setprecision(17) << o.ber;
    loader.set("pcie.link.ber=" + ber.str());
  }
  const config::Config cfg = loader.resolve();

  const pcie::LinkParams link_params = pcie::LinkParams::from_config(cfg);  // validated by the schema
  const std::uint64_t size = parse_bytes(o.size, "--size", 1, 1ULL << 30);
  const std::uint64_t total = parse_bytes(o.bytes, "--bytes", 1, 1ULL << 50);
  if (o.pattern != "write" && o.pattern != "read" && o.pattern != "mmio-read" && o.pattern != "mixed") {
    throw UsageError("--pattern: `" + o.pattern + "` is not one of write, read, mmio-read, mixed");
  }
  const std::string stats_path = cfg.get_string("stats.file");
  check_stats_path(stats_path);
  std::unique_ptr<std::ofstream> capture_file;
  std::unique_ptr<pcie::TlpCapture> capture;
  if (!o.capture.empty()) {
    pcie::CaptureFilter filter;
    try {
      filter.types = pcie::CaptureFilter::parse_types(o.capture_types);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--capture-types: ") + e.what());
    }
    if (!o.capture_range.empty()) {
      const std::size_t colon = o.capture_range.find(':');
      try {
        if (colon == std::string::npos) throw std::invalid_argument("no colon");
        std::size_t p1 = 0, p2 = 0;
        const std::string lo = o.capture_range.substr(0, colon), hi = o.capture_range.substr(colon + 1);
        filter.address_lo = std::stoull(lo, &p1, 0);
        filter.address_hi = std::stoull(hi, &p2, 0);
        if (p1 != lo.size() || p2 != hi.size() || filter.address_hi < filter.address_lo) {
          throw std::invalid_argument("bad");
        }
      } catch (const std::exception&) {
        throw UsageError("--capture-range: `" + o.capture_range +
                         "` is not LO:HI (addresses, decimal or 0x-hex, LO <= HI)");
      }
    }
    capture_file = std::make_unique<std::ofstream>(o.capture);
    if (!*capture_file) throw UsageError("--capture: cannot write `" + o.capture + "`");
    capture = std::make_unique<pcie::TlpCapture>(*capture_file, filter);
  }

  sim::ensure_time_resolution();
  counters::Registry registry;
  const std::string trace_path = cfg.get_string("trace.file");
  std::unique_ptr<counters::TraceRecorder> trace = open_trace(trace_path, cfg.get_string("trace.format"));
  const counters::TrackId proc = trace->enabled() ? trace->process_track("pcie") : 0;
  sim::Instrumentation inst{&registry, trace.get(), proc};

  // The chain a driver and a device meet: host DRAM behind the root complex (with its
  // IOMMU), the link, the endpoint with one function, a device behind its BAR0.
  memory::HostDramParams host_params = memory::HostDramParams::from_config(cfg);
  host_params.functional = false;
  try {
    host_params.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  pcie::RootComplexParams root_params = pcie::RootComplexParams::from_config(cfg);
  pcie::IommuParams iommu_params = pcie::iommu_params_from_config(cfg);
  try {
    root_params.validate();
    iommu_params.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  memory::HostDram dram("host_dram", host_params, inst, "host0.dram");
  pcie::Iommu iommu(iommu_params, counters::Scope(registry, "host0.iommu"));
  pcie::InterruptController irq(inst, "host0.irq");
  pcie::PcieLink link("link", link_params, inst, "pcie");
  pcie::PortParams port_params;
  if (o.no_bulk) port_params.bulk_threshold = 0;
  pcie::PciePort rc_port("rc_port", link_params, port_params, link.down(), link.up(), inst, "pcie.rc");
  pcie::PciePort ep_port("ep_port", link_params, port_params, link.up(), link.down(), inst, "pcie.ep");
  pcie::RootComplex rc("rc", root_params, rc_port, &iommu, irq, inst, "host0.rc");
  rc.memory_socket.bind(dram.socket);
  const pcie::RequesterId device_rid = pcie::make_rid(1, 0, 0);
  pcie::PcieFunctionSpec spec;
  spec.ids.vendor_id = 0x1e5c;
  spec.ids.device_id = 0x5001;
  spec.bars = {pcie::BarSpec{0, 64 << 10, true, false}};
  spec.max_payload_size = 4096;
  spec.link_speed_gen = link_params.generation;
  spec.link_width = link_params.lanes;
  pcie::PcieEndpoint ep("ep", device_rid, spec, ep_port, link, inst, "dev0.ep");
  const auto ps = [](double s) { return static_cast<std::uint64_t>(std::llround(s * 1e12)); };
  BenchDevice device("device", ps(cfg.get_quantity("pcie.root.device_register_latency")));
  ep.bar_socket.bind(device.regs);
  device.dma.bind(ep.dma_socket);
  host::CpuAgent cpu("cpu", root_params.ecam_base, 0);
  cpu.mmio.bind(rc.cpu_socket);
  cpu.memory.bind(dram.socket);
  if (capture) {
    link.down().set_capture(capture.get(), "down");
    link.up().set_capture(capture.get(), "up");
  }
  // The DMA buffer: IOVA = physical address, mapped for the device in its own domain;
  // 2 MiB-aligned, as a hugepage-backed pinned buffer is, so that the IOMMU maps it with
  // superpages (unless pcie.iommu.superpages=off).
  const std::uint64_t buffer = 0x200000;
  const std::uint64_t span = std::min<std::uint64_t>(total, host_params.capacity / 4);
  if (iommu_params.enabled) {
    const pcie::DomainId dom = iommu.create_domain();
    iommu.attach(device_rid, dom);
    iommu.map(dom, buffer, buffer, (span + 4095) & ~4095ULL, pcie::IommuPerm::ReadWrite);
  }

  // Set-up as a driver's probe does it (BAR0 at 0xF0000000, memory space and bus
  // mastering on); the measurement starts after it.
  const bool mmio = o.pattern == "mmio-read";
  const unsigned streams = mmio ? 1 : o.outstanding;
  const std::uint64_t request_bytes = mmio ? std::min<std::uint64_t>(size, 8) : size;
  std::uint64_t requests_done = 0, bytes_done = 0, errors = 0;
  double latency_sum_ns = 0;
  sc_core::sc_time begin = sc_core::SC_ZERO_TIME, end = sc_core::SC_ZERO_TIME;
  std::uint64_t next_offset = 0;
  sc_core::sc_event ready;
  sc_core::sc_spawn(
      [&] {
        cpu.cfg_write(device_rid, 0x10, 0xF000'0000);
        cpu.cfg_write(device_rid, 0x14, 0);
        cpu.cfg_write(device_rid, 0x04, 0x6);
        begin = sc_core::sc_time_stamp();
        ready.notify(sc_core::SC_ZERO_TIME);
      },
      "probe");
  for (unsigned s = 0; s < streams; ++s) {
    sc_core::sc_spawn(
        [&, s] {
          sc_core::wait(ready);
          const bool read = o.pattern == "read" || (o.pattern == "mixed" && s % 2 == 1);
          while (next_offset < total) {
            const std::uint64_t offset = next_offset;
            const std::uint64_t len = std::min(request_bytes, total - offset);
            next_offset += len;
            const sc_core::sc_time t0 = sc_core::sc_time_stamp();
            tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;
            if (mmio) {
              std::uint8_t value[8];
              st = cpu.mmio_access(false, 0xF000'0000 + (offset % 4096), value, static_cast<unsigned>(len));
            } else {
              const std::uint64_t within = offset % span;
              const std::uint64_t l = std::min(len, span - within);
              st = device.transfer(!read, buffer + within, l, device_rid);
            }
            if (st != tlm::TLM_OK_RESPONSE) ++errors;
            latency_sum_ns += (sc_core::sc_time_stamp() - t0).to_seconds() * 1e9;
            ++requests_done;
            bytes_done += len;
            end = std::max(end, sc_core::sc_time_stamp());
          }
        },
        ("stream" + std::to_string(s)).c_str());
  }

  const SimulationRun run = run_simulation(cfg);
  int rc_code = run.exit_code;
  std::string failure = run.failure;
  const double wall = run.wall_seconds;
  link.sync_stats();
  if (rc_code == kOk && bytes_done < total) {
    failure = run.unfinished() + " after " + std::to_string(bytes_done) + " of " + std::to_string(total) + " bytes";
    rc_code = kSimulationError;
  }
  if (!stats_path.empty() && !write_stats(registry, stats_path, cfg.get_string("stats.format")))
    rc_code = kSimulationError;
  trace->close();
  print_written("pcie", {{"--trace", cfg.get_string("trace.file")}, {"--stats", stats_path}, {"--capture", o.capture}});
  if (capture_file) {
    capture_file->flush();
    if (!*capture_file) {
      std::cerr << "sohusim: --capture: writing '" << o.capture << "' failed (device full or I/O error)\n";
      rc_code = kSimulationError;
    }
  }

  const double sim_s = end > begin ? (end - begin).to_seconds() : 0.0;
  const double throughput = sim_s > 0 ? static_cast<double>(bytes_done) / sim_s : 0.0;
  const double raw = link_params.raw_bytes_per_s();
  const auto v = [&](const std::string& n) { return registry.value(n); };
  const double tlps = v("pcie.down.tlps") + v("pcie.up.tlps");
  const double dllps =
      v("pcie.down.dllps_ack") + v("pcie.down.dllps_fc") + v("pcie.up.dllps_ack") + v("pcie.up.dllps_fc");
  const double avg_latency = requests_done ? latency_sum_ns / static_cast<double>(requests_done) : 0.0;
  const double model =
      o.pattern == "read" ? link_params.read_completion_throughput() : link_params.posted_write_throughput();
  if (o.out.json) {
    nlohmann::json j;
    j["generation"] = link_params.generation;
    j["lanes"] = link_params.lanes;
    j["mps"] = link_params.mps;
    j["mrrs"] = link_params.mrrs;
    j["rcb"] = link_params.rcb;
    j["header"] = link_params.header_4dw ? "4dw" : "3dw";
    j["ecrc"] = link_params.ecrc;
    j["tags"] = link_params.max_tags();
    j["pattern"] = o.pattern;
    j["request_bytes"] = request_bytes;
    j["outstanding"] = streams;
    j["bytes"] = bytes_done;
    j["requests"] = requests_done;
    j["errors"] = errors;
    j["simulated_seconds"] = sim_s;
    j["throughput_gbps"] = throughput / 1e9;
    j["raw_gbps"] = raw / 1e9;
    j["efficiency"] = raw > 0 ? throughput / raw : 0.0;
    j["model_gbps"] = model / 1e9;
    j["tlps"] = tlps;
    j["dllps"] = dllps;
    j["bad_tlps"] = v("pcie.down.bad_tlps") + v("pcie.up.bad_tlps");
    j["replays"] = v("pcie.down.replays") + v("pcie.up.replays");
    j["avg_latency_ns"] = avg_latency;
    j["wall_seconds"] = wall;
    j["ok"] = rc_code == kOk;
    if (!failure.empty()) j["error"] = failure;
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << "sohusim pcie: Gen" << link_params.generation << " x" << link_params.lanes << ", MPS "
              << link_params.mps << ", MRRS " << link_params.mrrs << ", RCB " << link_params.rcb << ", "
              << (link_params.header_4dw ? "4DW" : "3DW") << (link_params.ecrc ? " + ECRC" : "") << ", "
              << link_params.max_tags() << " tags; " << o.pattern << ", " << request_bytes << " B requests x "
              << streams << " outstanding\n";
    std::cout << std::fixed << std::setprecision(2);
    std::cout << "  moved             "
              << config::format_quantity(static_cast<double>(bytes_done), config::Dimension::Bytes) << " in "
              << requests_done << " requests" << (errors ? " (" + std::to_string(errors) + " errors)" : "") << "\n"
              << "  simulated time    " << config::format_quantity(sim_s, config::Dimension::Time) << "\n"
              << "  throughput        " << throughput / 1e9 << " GB/s of " << raw / 1e9 << " GB/s raw ("
              << 100 * throughput / raw << "%); accounting model " << model / 1e9 << " GB/s\n"
              << "  TLPs / DLLPs      " << std::setprecision(0) << tlps << " / " << dllps << std::setprecision(2)
              << "\n"
              << "  avg latency       " << avg_latency << " ns per request\n"
              << "  wall time         " << wall << " s\n";
    if (!stats_path.empty()) std::cout << "  stats             " << stats_path << "\n";
    if (!trace_path.empty()) std::cout << "  trace             " << trace_path << "\n";
    if (capture) std::cout << "  capture           " << o.capture << " (" << capture->lines() << " TLPs)\n";
  }
  if (!failure.empty()) std::cerr << "sohusim pcie: error: " << failure << '\n';
  return rc_code;
}

}  // namespace

void add_pcie_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<PcieOptions>();
  auto* cmd = root.add_subcommand("pcie", "move data across one PCIe link; print throughput, efficiency, latency");
  cmd->add_option("--gen", o->gen, "PCIe generation 1..6 (default: pcie.link.generation)")->check(CLI::PositiveNumber);
  cmd->add_option("--lanes", o->lanes, "link width 1, 2, 4, 8, 16")->check(CLI::PositiveNumber);
  cmd->add_option("--mps", o->mps, "Max Payload Size, bytes (128 .. 4096)");
  cmd->add_option("--mrrs", o->mrrs, "Max Read Request Size, bytes (128 .. 4096)");
  cmd->add_option("--rcb", o->rcb, "Read Completion Boundary, 64 or 128");
  cmd->add_flag("--no-merge", o->no_merge, "one completion per RCB (default: merged up to MPS)");
  cmd->add_option("--header", o->header, "3dw | 4dw")->check(CLI::IsMember({"3dw", "4dw"}));
  cmd->add_flag("--ecrc", o->ecrc, "ECRC digest on every TLP");
  cmd->add_option("--tags", o->tags, "tag bits: 5, 8 or 10");
  cmd->add_option("--pattern", o->pattern, "write | read | mmio-read | mixed")->capture_default_str();
  cmd->add_option("--size", o->size, "bytes per request (e.g. 256, 4KiB, 1MiB)")->capture_default_str();
  cmd->add_option("--bytes", o->bytes, "bytes to move in all (e.g. 64MiB, 1GiB)")->capture_default_str();
  cmd->add_option("--outstanding", o->outstanding, "requests in flight (streams)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--ber", o->ber, "bit error rate for injected LCRC errors (e.g. 1e-9)")->check(finite_range(0, 1));
  cmd->add_flag("--no-bulk", o->no_bulk, "move even multi-megabyte requests TLP by TLP");
  auto* capture = cmd->add_option("--capture", o->capture, "write a protocol-analyzer listing of the TLPs to FILE");
  cmd->add_option("--capture-types", o->capture_types, "only these TLP types, e.g. MRd,CplD")->needs(capture);
  cmd->add_option("--capture-range", o->capture_range, "only TLPs whose address is in LO:HI (inclusive)")
      ->needs(capture);
  add_output_options(cmd, o->out, "YAML config file(s)");
  cmd->callback([&action, &global, o] { action = [&global, o] { return run_pcie(global, *o); }; });
}

}  // namespace sohusim::tools
