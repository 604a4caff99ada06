// The SRAM keys: sram.*, one row each. Sohu's SRAM organisation is not public: these
// defaults are assumptions to sweep. The rows declare the schema (memory_frontend_schema),
// give SramParams its defaults and load it (from_config).
#include "sohusim/memory/sram_params.hpp"

#include "sohusim/config/param_table.hpp"

namespace sohusim::memory {

using config::Dimension;

SramParams::SramParams() {
  params().set_defaults(*this);
}

const config::ParamTable<SramParams>& SramParams::params() {
  using P = config::ParamTable<SramParams>;
  using S = SramParams;
  static const P table(
      "sram", "on-chip SRAM scratchpad (assumed organisation)",
      {
          P::quantity("capacity", &S::capacity, Dimension::Bytes, "64 MiB", "4 KiB", "16 GiB", "capacity")
              .bare_number(),
          P::uinteger("banks", &S::banks, 64, 1, 4096, "banks, interleaved every access_width bytes"),
          P::uinteger("ports", &S::ports, 1, 1, 8, "ports per bank, each one access per cycle"),
          P::quantity("access_width", &S::access_width, Dimension::Bytes, "64 B", "1 B", "4 KiB",
                      "bytes a port moves per cycle")
              .bare_number(),
          P::uinteger("latency", &S::latency_cycles, 4, 0, 1000, "cycles from the last bank access to the data")
              .unit("cycles"),
          P::string("clock", nullptr, "engine", "clock domain (a name under sim.clocks) the SRAM runs at"),
      });
  return table;
}

SramParams SramParams::from_config(const config::Config& config) {
  SramParams p;
  params().load(config, p);
  p.clock_hz = config.get_quantity("sim.clocks." + config.get_string("sram.clock"));
  p.functional = config.get_string("sim.data_mode") == "functional";
  return p;
}

}  // namespace sohusim::memory
