// The parameters of the memory front ends: the HBM's TLM target, the SRAM scratchpad and
// host DRAM. The HBM itself (hbm.*) is declared by hbm_schema() next to the detailed model.
#include "sohusim/memory/memory_schema.hpp"

#include <algorithm>
#include <cmath>

#include "sohusim/memory/hbm_schema.hpp"
#include "sohusim/config/config.hpp"

namespace sohusim::memory {

using config::Dimension;

config::Schema memory_frontend_schema() {
  config::Schema s;
  s.section("hbm.target", "the TLM-2.0 target in front of the HBM stacks")
      .enumeration("fidelity", "inherit", {"inherit", "detailed", "fast"},
                   "timing model of this memory; inherit: sim.fidelity")
      .uinteger("max_transactions", 1024, 1, 1u << 20,
                "transactions held between acceptance and response; beyond it END_REQ is withheld (back-pressure)")
      .uinteger("staging", 1024, 1, 1u << 20,
                "accesses per controller queue split off requests and waiting for room in it; a request whose "
                "next access finds them full waits (head-of-line) until that queue drains")
      .boolean("bulk", true, "with the fast fidelity, hand a multi-access request to the model whole")
      .quantity("bandwidth_sample", Dimension::Time, "1 us", "0 s", "1 s",
                "interval of the per-stack bandwidth counter tracks in the trace; 0 s: none");

  // Sohu's SRAM organisation is not public: these are assumptions to sweep.
  s.section("sram", "on-chip SRAM scratchpad (assumed organisation)")
      .quantity("capacity", Dimension::Bytes, "64 MiB", "4 KiB", "16 GiB", "capacity")
      .bare_number()
      .uinteger("banks", 64, 1, 4096, "banks, interleaved every access_width bytes")
      .uinteger("ports", 1, 1, 8, "ports per bank, each one access per cycle")
      .quantity("access_width", Dimension::Bytes, "64 B", "1 B", "4 KiB", "bytes a port moves per cycle")
      .bare_number()
      .uinteger("latency", 4, 0, 1000, "cycles from the last bank access to the data")
      .unit("cycles")
      .string("clock", "engine", "clock domain (a name under sim.clocks) the SRAM runs at");
  s.add_check([](const config::Config& c, std::vector<config::ConfigDiagnostic>& out) {
    const std::string& clock = c.get_string("sram.clock");
    const std::vector<std::string> clocks = c.keys_under("sim.clocks");
    if (std::find(clocks.begin(), clocks.end(), clock) == clocks.end()) {
      std::string allowed;
      for (const std::string& k : clocks) allowed += (allowed.empty() ? "" : ", ") + k;
      out.push_back(c.diagnose("sram.clock", "unknown clock domain `" + clock + "`", allowed));
    }
    const double width = c.get_quantity("sram.access_width");
    const double capacity = c.get_quantity("sram.capacity");
    if (std::fmod(capacity, width) != 0.0) {
      out.push_back(c.diagnose("sram.capacity", "must be a whole number of access_width lines",
                               "a multiple of " + config::format_quantity(width, Dimension::Bytes)));
    }
  });

  // A transfer-level DDR5 model; see host_dram.hpp for the assumptions.
  s.section("host_dram", "host DDR5 memory (transfer-level model)")
      .quantity("capacity", Dimension::Bytes, "512 GiB", "1 MiB", "64 TiB", "capacity")
      .bare_number()
      .uinteger("channels", 8, 1, 64, "DDR5 channels the addresses interleave over")
      .quantity("channel_bandwidth", Dimension::Bandwidth, "38.4 GB/s", "1 GB/s", "1 TB/s",
                "peak bandwidth of one channel (DDR5-4800 x 64 bit: 38.4 GB/s)")
      .quantity("efficiency", Dimension::Ratio, "85 %", "1 %", "100 %",
                "sustained share of the channel bandwidth (refresh, turnarounds, conflicts)")
      .quantity("latency", Dimension::Time, "90 ns", "0 s", "10 us", "fixed latency of every access (unloaded)")
      .quantity("interleave", Dimension::Bytes, "256 B", "64 B", "1 GiB", "bytes per channel before the next")
      .bare_number();
  return s;
}

config::Schema memory_schema() {
  config::Schema s = hbm_schema();
  s.merge(memory_frontend_schema());
  return s;
}

}  // namespace sohusim::memory
