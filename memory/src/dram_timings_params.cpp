// The timing keys: hbm.timing.*, one row each. Defaults are HBM3-6400 (JESD238 as
// Ramulator 2.1 encodes it; docs/sources.md); configs/hbm/*.yaml override them per
// standard. The rows declare the schema (hbm_schema), give DramTimings its defaults and
// load it (DramSpec::from_config); build_hbm_constraints turns them into constraint rows.
#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/dram_spec.hpp"

namespace sohusim::memory {

using config::Dimension;

DramTimings::DramTimings() {
  params().set_defaults(*this);
}

const config::ParamTable<DramTimings>& DramTimings::params() {
  using P = config::ParamTable<DramTimings>;
  using T = DramTimings;
  // Every timing but tCK counts cycles of tCK.
  const auto cycles = [](const char* name, std::uint32_t T::*member, std::uint64_t default_value, std::uint64_t min,
                         std::uint64_t max, const char* description) {
    return P::uinteger(name, member, default_value, min, max, description).unit("cycles");
  };
  static const P table(
      "hbm.timing", "timing; everything but tCK in cycles of tCK",
      {
          P::quantity("tCK", &T::tCK_ps, Dimension::Time, "625 ps", "100 ps", "5 ns",
                      "clock period of the command interface")
              .unit("ps")
              .scale(1e12),
          cycles("CL", &T::CL, 20, 1, 200, "read latency: RD to first data beat"),
          cycles("CWL", &T::CWL, 10, 0, 200, "write latency: WR to first data beat"),
          cycles("tRCDRD", &T::RCDRD, 31, 1, 200, "ACT to RD, same bank"),
          cycles("tRCDWR", &T::RCDWR, 15, 1, 200, "ACT to WR, same bank"),
          cycles("tRP", &T::RP, 26, 1, 200, "PRE to ACT, same bank"),
          cycles("tRAS", &T::RAS, 45, 1, 400, "ACT to PRE, same bank"),
          cycles("tRC", &T::RC, 72, 1, 600, "ACT to ACT, same bank"),
          cycles("tCCD_S", &T::CCD_S, 2, 1, 32, "column to column, other bank group"),
          cycles("tCCD_L", &T::CCD_L, 4, 1, 32, "column to column, same bank group"),
          cycles("tRRD_S", &T::RRD_S, 4, 1, 64, "ACT to ACT, other bank group"),
          cycles("tRRD_L", &T::RRD_L, 5, 1, 64, "ACT to ACT, same bank group"),
          cycles("tFAW", &T::FAW, 24, 1, 400, "four-activate window per pseudo-channel"),
          cycles("tWR", &T::WR, 33, 1, 200, "write recovery: last write beat to PRE"),
          cycles("tRTP", &T::RTP, 9, 1, 64, "RD to PRE, same bank"),
          cycles("tWTR_S", &T::WTR_S, 7, 1, 64, "last write beat to RD, other bank group"),
          cycles("tWTR_L", &T::WTR_L, 10, 1, 64, "last write beat to RD, same bank group"),
          cycles("tRTW", &T::RTW, 20, 1, 200, "RD to WR turnaround, same pseudo-channel"),
          // 350 ns at tCK 625 ps: what the default die density (16 Gb) derives.
          cycles("tRFCab", &T::RFCab, 560, 1, 100000, "all-bank refresh cycle; derived from die_density when unset")
              .optional(),
          cycles("tRFCpb", &T::RFCpb, 320, 1, 100000, "per-bank refresh cycle"),
          cycles("tREFI", &T::REFI, 6240, 1, 10000000,
                 "average refresh interval (REFab period; tREFI/banks for REFpb)"),
          cycles("tRREFD", &T::RREFD, 13, 1, 200, "REFpb to REFpb or ACT of another bank"),
          cycles("tACT_bus", &T::ACT_bus, 2, 1, 8, "cycles an ACT holds the channel's row command bus"),
      });
  return table;
}

}  // namespace sohusim::memory
