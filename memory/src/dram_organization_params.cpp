// The organization keys: hbm.stacks and hbm.org.*, one row each. Defaults are HBM3-6400
// (JESD238 as Ramulator 2.1 encodes it; docs/sources.md); configs/hbm/*.yaml override
// them per standard. The rows declare the schema (hbm_schema), give DramOrganization its
// defaults and load it (organization_from_config).
#include <cstdint>

#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {

using config::Dimension;

DramOrganization::DramOrganization() {
  params().set_defaults(*this);
}

const config::ParamTable<DramOrganization>& DramOrganization::params() {
  using P = config::ParamTable<DramOrganization>;
  using O = DramOrganization;
  static const P table(
      "hbm", "",
      {
          P::uinteger("stacks", &O::stacks, 1, 1, 16, "HBM stacks behind the memory (a Sohu-class chip has 6)"),
          P::section("org", "organization of one stack"),
          P::uinteger("channels", &O::channels, 16, 1, 64, "independent channels per stack"),
          P::uinteger("pseudo_channels", &O::pseudo_channels, 2, 1, 4,
                      "pseudo-channels per channel (share the command buses)"),
          P::uinteger("sids", &O::sids, 1, 1, 4,
                      "stack ids per pseudo-channel (each adds bank_groups x banks_per_group banks)"),
          P::uinteger("bank_groups", &O::bank_groups, 4, 1, 16, "bank groups per SID"),
          P::uinteger("banks_per_group", &O::banks_per_group, 4, 1, 16, "banks per bank group"),
          P::uinteger("columns", &O::columns, 32, 1, 4096,
                      "accesses (bursts) per row of one bank: row size / access size"),
          P::uinteger("dq_bits", &O::dq_bits, 32, 8, 256, "data pins per pseudo-channel"),
          P::uinteger("burst_length", &O::burst_length, 8, 1, 32, "beats per access (BL)"),
          P::quantity("data_rate", &O::data_rate_bps, Dimension::BitRate, "6.4 Gbps", "0.1 Gbps", "20 Gbps",
                      "data rate per pin"),
          P::uinteger("die_density", nullptr, 16, 1, 64, "DRAM die density in Gb (2^30 bits); sets rows and tRFCab"),
          P::uinteger("dies", nullptr, 8, 1, 16,
                      "DRAM dies per stack (stack height); with die_density sets the capacity"),
          // 16 Gb x 8 dies over the default geometry: what the two keys above derive.
          P::uinteger("rows", &O::rows, 32768, 1, std::uint64_t{1} << 24,
                      "rows per bank; derived from die_density x dies when unset")
              .optional(),
      });
  return table;
}

}  // namespace sohusim::memory
