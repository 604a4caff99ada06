// The host DRAM keys: host_dram.*, one row each; see host_dram.hpp for the assumptions of
// the model. The rows declare the schema (memory_frontend_schema), give HostDramParams its
// defaults and load it (from_config).
#include "sohusim/memory/host_dram_params.hpp"

#include "sohusim/config/param_table.hpp"

namespace sohusim::memory {

using config::Dimension;

HostDramParams::HostDramParams() {
  params().set_defaults(*this);
}

const config::ParamTable<HostDramParams>& HostDramParams::params() {
  using P = config::ParamTable<HostDramParams>;
  using H = HostDramParams;
  static const P table(
      "host_dram", "host DDR5 memory (transfer-level model)",
      {
          P::quantity("capacity", &H::capacity, Dimension::Bytes, "512 GiB", "1 MiB", "64 TiB", "capacity")
              .bare_number(),
          P::uinteger("channels", &H::channels, 8, 1, 64, "DDR5 channels the addresses interleave over"),
          P::quantity("channel_bandwidth", &H::channel_bandwidth, Dimension::Bandwidth, "38.4 GB/s", "1 GB/s", "1 TB/s",
                      "peak bandwidth of one channel (DDR5-4800 x 64 bit: 38.4 GB/s)"),
          P::quantity("efficiency", &H::efficiency, Dimension::Ratio, "85 %", "1 %", "100 %",
                      "sustained share of the channel bandwidth (refresh, turnarounds, conflicts)"),
          P::quantity("latency", &H::latency_s, Dimension::Time, "90 ns", "0 s", "10 us",
                      "fixed latency of every access (unloaded)"),
          P::quantity("interleave", &H::interleave, Dimension::Bytes, "256 B", "64 B", "1 GiB",
                      "bytes per channel before the next")
              .bare_number(),
      });
  return table;
}

HostDramParams HostDramParams::from_config(const config::Config& config) {
  HostDramParams p;
  params().load(config, p);
  p.functional = config.get_string("sim.data_mode") == "functional";
  return p;
}

}  // namespace sohusim::memory
