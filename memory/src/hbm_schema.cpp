// The hbm.* parameters: the tables of DramOrganization, DramTimings, ControllerParams and
// FastDramCalibration (each parameter's key, default, range and description, stated there),
// the standard's name, the address mapping, and the checks across parameters.
#include "sohusim/memory/hbm_schema.hpp"

#include <cmath>
#include <string>

#include "sohusim/config/config.hpp"
#include "sohusim/config/param_table.hpp"
#include "sohusim/memory/address_mapping.hpp"
#include "sohusim/memory/controller_params.hpp"
#include "sohusim/memory/fast_dram_calibration.hpp"

namespace sohusim::memory {

namespace {

using config::Config;
using config::ConfigDiagnostic;
using config::Dimension;

bool is_pow2(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

std::string level_key(const Config& c, DramLevel level) {
  switch (level) {
    case DramLevel::Stack:
      return "hbm.stacks";
    case DramLevel::Channel:
      return "hbm.org.channels";
    case DramLevel::PseudoChannel:
      return "hbm.org.pseudo_channels";
    case DramLevel::Sid:
      return "hbm.org.sids";
    case DramLevel::BankGroup:
      return "hbm.org.bank_groups";
    case DramLevel::Bank:
      return "hbm.org.banks_per_group";
    case DramLevel::Row:
      return c.has("hbm.org.rows") ? "hbm.org.rows" : "hbm.org.die_density";
    case DramLevel::Column:
      return "hbm.org.columns";
  }
  return "hbm.org";
}

// Transfers per pin per clock; 0 when data_rate x tCK is not (within 0.1 %) a whole number.
std::uint32_t transfers_per_clock(const Config& c) {
  const double tpc = c.get_quantity("hbm.org.data_rate") * c.get_quantity("hbm.timing.tCK");
  const double rounded = std::round(tpc);
  if (rounded < 1.0 || std::fabs(tpc - rounded) > 1e-3 * rounded) return 0;
  return static_cast<std::uint32_t>(rounded);
}

std::uint64_t derived_rows(const Config& c, std::uint64_t& stack_bytes, std::uint64_t& per_row_set) {
  stack_bytes = c.get_uint("hbm.org.die_density") * c.get_uint("hbm.org.dies") * (std::uint64_t{1} << 27);
  per_row_set = c.get_uint("hbm.org.channels") * c.get_uint("hbm.org.pseudo_channels") * c.get_uint("hbm.org.sids") *
                c.get_uint("hbm.org.bank_groups") * c.get_uint("hbm.org.banks_per_group") *
                c.get_uint("hbm.org.columns") *
                (c.get_uint("hbm.org.dq_bits") * c.get_uint("hbm.org.burst_length") / 8);
  return per_row_set == 0 ? 0 : stack_bytes / per_row_set;
}

void check_timings(const Config& c, std::vector<ConfigDiagnostic>& out) {
  const auto v = [&](const char* k) { return c.get_uint(std::string("hbm.timing.") + k); };
  if (v("tRC") < v("tRAS") + v("tRP")) {
    out.push_back(
        c.diagnose("hbm.timing.tRC",
                   "must be at least tRAS + tRP (" + std::to_string(v("tRAS")) + " + " + std::to_string(v("tRP")) + ")",
                   ">= " + std::to_string(v("tRAS") + v("tRP"))));
  }
  if (v("tRAS") < v("tRCDRD")) {
    out.push_back(c.diagnose("hbm.timing.tRAS", "must be at least tRCDRD (" + std::to_string(v("tRCDRD")) + ")",
                             ">= " + std::to_string(v("tRCDRD"))));
  }
  if (v("tCCD_L") < v("tCCD_S")) {
    out.push_back(c.diagnose("hbm.timing.tCCD_L", "must be at least tCCD_S", ">= " + std::to_string(v("tCCD_S"))));
  }
  if (v("tRRD_L") < v("tRRD_S")) {
    out.push_back(c.diagnose("hbm.timing.tRRD_L", "must be at least tRRD_S", ">= " + std::to_string(v("tRRD_S"))));
  }
  if (v("tWTR_L") < v("tWTR_S")) {
    out.push_back(c.diagnose("hbm.timing.tWTR_L", "must be at least tWTR_S", ">= " + std::to_string(v("tWTR_S"))));
  }
  const std::uint64_t banks =
      c.get_uint("hbm.org.sids") * c.get_uint("hbm.org.bank_groups") * c.get_uint("hbm.org.banks_per_group");
  // Refresh must leave the pseudo-channel time to work (min_refresh_interval), and a
  // REFpb, every tREFI / banks, takes tRRD_S + tRREFD of the row bus.
  const std::string refresh = c.get_string("hbm.controller.refresh");
  const std::uint64_t refi = v("tREFI");
  const std::uint64_t burst = burst_cycles_from_config(c);  // 0 if invalid: check_geometry says so
  const auto too_short = [&](const std::string& what, std::uint64_t have, const std::string& need_what,
                             std::uint64_t need, std::uint64_t refi_needed) {
    out.push_back(c.diagnose("hbm.timing.tREFI",
                             what + " (" + std::to_string(have) + " cycles) is below " + need_what + " (" +
                                 std::to_string(need) + " cycles): refreshing would leave no time to serve requests",
                             ">= " + std::to_string(refi_needed)));
  };
  const auto interval = [&](std::uint64_t rfc) {
    return min_refresh_interval(v("tRP"), rfc, v("tRC"), c.get_uint("hbm.timing.CL"), c.get_uint("hbm.timing.CWL"),
                                burst);
  };
  const bool rfcab_known =
      c.has("hbm.timing.tRFCab") || hbm3_trfcab_ns(static_cast<std::uint32_t>(c.get_uint("hbm.org.die_density"))) != 0;
  if (refresh == "allbank" && rfcab_known && burst != 0) {
    const std::uint64_t need = interval(trfcab_cycles_from_config(c));
    if (refi < need) too_short("with all-bank refresh, tREFI", refi, "tRP + tRFCab + tRC + CL|CWL + nBL", need, need);
  }
  if (refresh == "perbank" && banks != 0) {
    const std::uint64_t row_bus = v("tRRD_S") + v("tRREFD");
    const std::uint64_t need = interval(v("tRFCpb"));
    if (refi / banks <= row_bus) {
      too_short("with per-bank refresh, tREFI / banks", refi / banks, "tRRD_S + tRREFD + 1", row_bus + 1,
                (row_bus + 1) * banks);
    } else if (burst != 0 && refi / banks * banks < need) {
      // Each bank's refresh comes every banks x (tREFI / banks) cycles.
      too_short("with per-bank refresh, banks x (tREFI / banks)", refi / banks * banks,
                "tRP + tRFCpb + tRC + CL|CWL + nBL", need, (need + banks - 1) / banks * banks);
    }
  }
}

void check_geometry(const Config& c, std::vector<ConfigDiagnostic>& out) {
  const std::uint32_t tpc = transfers_per_clock(c);
  if (tpc == 0) {
    out.push_back(c.diagnose("hbm.org.data_rate",
                             "data_rate x tCK must be a whole number of transfers per clock (4 for HBM3, 2 for HBM2)"));
  } else if (c.get_uint("hbm.org.burst_length") % tpc != 0) {
    out.push_back(c.diagnose("hbm.org.burst_length",
                             "must be a multiple of the transfers per clock (" + std::to_string(tpc) + ")"));
  } else if (c.get_uint("hbm.timing.tCCD_S") < c.get_uint("hbm.org.burst_length") / tpc) {
    out.push_back(c.diagnose("hbm.timing.tCCD_S", "must cover the burst on the data bus",
                             ">= " + std::to_string(c.get_uint("hbm.org.burst_length") / tpc)));
  }
  const std::uint64_t access = c.get_uint("hbm.org.dq_bits") * c.get_uint("hbm.org.burst_length") / 8;
  if (!is_pow2(access) || c.get_uint("hbm.org.dq_bits") * c.get_uint("hbm.org.burst_length") % 8 != 0) {
    out.push_back(c.diagnose("hbm.org.dq_bits", "dq_bits x burst_length / 8 (the access size) must be a power of two",
                             "e.g. 32 x 8 / 8 = 32 B"));
  }
  if (!c.has("hbm.org.rows")) {
    std::uint64_t stack_bytes = 0;
    std::uint64_t per_row = 0;
    const std::uint64_t rows = derived_rows(c, stack_bytes, per_row);
    if (rows == 0 || stack_bytes % per_row != 0) {
      out.push_back(c.diagnose("hbm.org.die_density",
                               "die_density x dies (" + std::to_string(stack_bytes) +
                                   " B per stack) is not a whole number of rows of every bank (" +
                                   std::to_string(per_row) + " B per row across the stack)",
                               "or set hbm.org.rows"));
    }
  }
  if (!c.has("hbm.timing.tRFCab") &&
      hbm3_trfcab_ns(static_cast<std::uint32_t>(c.get_uint("hbm.org.die_density"))) == 0) {
    out.push_back(
        c.diagnose("hbm.org.die_density", "has no tRFCab entry; set hbm.timing.tRFCab", "8, 16, 24, 32 (Gb per die)"));
  }
}

void check_controller(const Config& c, std::vector<ConfigDiagnostic>& out) {
  const std::uint64_t wq = c.get_uint("hbm.controller.write_queue");
  const std::uint64_t hi = c.get_uint("hbm.controller.write_high");
  const std::uint64_t lo = c.get_uint("hbm.controller.write_low");
  if (hi > wq) {
    out.push_back(c.diagnose("hbm.controller.write_high", "must not exceed write_queue", "<= " + std::to_string(wq)));
  }
  if (lo >= hi) {
    out.push_back(c.diagnose("hbm.controller.write_low", "must be below write_high", "< " + std::to_string(hi)));
  }
}

void check_mapping(const Config& c, std::vector<ConfigDiagnostic>& out) {
  const bool explicit_fields = !c.get_strings("hbm.mapping.fields").empty();
  const std::string fields_key = explicit_fields ? "hbm.mapping.fields" : "hbm.mapping.preset";
  std::vector<std::string> fields = explicit_fields ? c.get_strings("hbm.mapping.fields")
                                                    : AddressMapping::preset_fields(c.get_string("hbm.mapping.preset"));
  const std::vector<std::string>& xors = c.get_strings("hbm.mapping.xor");
  // Geometry first, so a non-power-of-two count is reported at its own key.
  const DramOrganization org = organization_from_config(c);
  bool geometry_ok = true;
  for (DramLevel level : AddressMapping::levels_needing_power_of_two(fields, xors)) {
    const std::uint64_t count = org.count(level);
    if (!is_pow2(count)) {
      geometry_ok = false;
      out.push_back(c.diagnose(level_key(c, level),
                               "must be a power of two: the address mapping (" + fields_key +
                                   ") splits it into bit fields or XORs it, got " + std::to_string(count),
                               "1, 2, 4, 8, ..."));
    }
  }
  if (!geometry_ok) return;
  try {
    AddressMapping mapping(fields, xors, org);
    (void)mapping;
  } catch (const std::invalid_argument& e) {
    const bool xor_problem = std::string(e.what()).find("xor") != std::string::npos;
    out.push_back(c.diagnose(xor_problem ? "hbm.mapping.xor" : fields_key, e.what()));
  }
}

}  // namespace

config::Schema hbm_schema() {
  config::Schema schema;
  schema.section("hbm", "HBM stacks: detailed DRAM model (standard, geometry, timing, controller, mapping)")
      .string("name", "hbm3-6400", "name of the DRAM standard/speed bin these values describe");
  DramOrganization::params().declare(schema);     // hbm.stacks, hbm.org.*
  DramTimings::params().declare(schema);          // hbm.timing.*
  ControllerParams::params().declare(schema);     // hbm.controller.*
  FastDramCalibration::params().declare(schema);  // hbm.fast.*: the fast fidelity's terms

  schema.section("hbm.mapping", "address mapping: a preset, or an explicit field list (LSB first)")
      .enumeration("preset", "default", AddressMapping::preset_names(),
                   "default: stream spread over every pseudo-channel of every stack; RoBaBgCoPcCh: row "
                   "interleaved; single-pc: a stream stays in one pseudo-channel")
      .strings("fields", {},
               "fields from the least significant bit, e.g. [pseudo_channel, channel, column:2, ...]; "
               "overrides preset when not empty")
      .strings("xor", {}, "XOR pairs target^source, e.g. [bank_group^row]");

  schema.add_check([](const Config& c, std::vector<ConfigDiagnostic>& out) {
    check_timings(c, out);
    check_geometry(c, out);
    check_controller(c, out);
    if (out.empty()) check_mapping(c, out);
  });
  return schema;
}

DramOrganization organization_from_config(const config::Config& c) {
  DramOrganization org;
  DramOrganization::params().load(c, org);  // hbm.org.rows only when set
  if (!c.has("hbm.org.rows")) {
    std::uint64_t stack_bytes = 0;
    std::uint64_t per_row = 0;
    org.rows = derived_rows(c, stack_bytes, per_row);
  }
  return org;
}

std::uint32_t burst_cycles_from_config(const config::Config& c) {
  const std::uint32_t tpc = transfers_per_clock(c);
  return tpc == 0 ? 0 : static_cast<std::uint32_t>(c.get_uint("hbm.org.burst_length")) / tpc;
}

std::uint32_t trfcab_cycles_from_config(const config::Config& c) {
  if (c.has("hbm.timing.tRFCab")) return static_cast<std::uint32_t>(c.get_uint("hbm.timing.tRFCab"));
  const std::uint64_t ns = hbm3_trfcab_ns(static_cast<std::uint32_t>(c.get_uint("hbm.org.die_density")));
  const double tck_ns = c.get_quantity("hbm.timing.tCK") * 1e9;
  // Rounded up, as JEDEC rounds; the small slack absorbs tCK values like 416.667 ps.
  return static_cast<std::uint32_t>(std::ceil(static_cast<double>(ns) / tck_ns - 1e-6));
}

}  // namespace sohusim::memory
