// The parameters of the memory front ends: the HBM's TLM target, the SRAM scratchpad and
// host DRAM (the last two from their parameter tables). The HBM itself (hbm.*) is declared
// by hbm_schema().
#include "sohusim/memory/memory_schema.hpp"

#include <algorithm>
#include <cmath>

#include "sohusim/config/config.hpp"
#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/hbm_schema.hpp"
#include "sohusim/memory/host_dram_params.hpp"
#include "sohusim/memory/sram_params.hpp"

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

  SramParams::params().declare(s);  // sram.*: assumptions to sweep
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

  HostDramParams::params().declare(s);  // host_dram.*: a transfer-level DDR5 model
  return s;
}

config::Schema memory_schema() {
  config::Schema s = hbm_schema();
  s.merge(memory_frontend_schema());
  return s;
}

}  // namespace sohusim::memory
