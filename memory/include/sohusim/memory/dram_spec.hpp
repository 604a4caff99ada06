#pragma once
// DramSpec: a DRAM standard as data, in the manner of Ramulator 2.
//
// A standard is three things, none of them code:
//  * an organization: the levels an address walks down (stack, channel,
//    pseudo-channel, stack id (SID), bank group, bank, row, column) with a count
//    at each level, the DQ width and burst length that make one access;
//  * a command set (ACT, PRE, PREA, RD, WR, RDA, WRA, REFab, REFpb);
//  * a table of timing constraints. Each row says: within this scope (same bank,
//    same bank group, another bank group of the same pseudo-channel, the same
//    pseudo-channel, the same channel), after any of these commands, any of those
//    commands must wait this many cycles — or, with a window count n > 1, must
//    wait that long after the n-th most recent one (tFAW is the window-4 row).
//
// The table is written once per standard (build_hbm_constraints) from named
// timings, then evaluated once into flat integer arrays (ConstraintTable) that
// the timing state indexes by [scope][preceding][following]; nothing on the hot
// path looks at names or vectors of commands.
//
// Time is in memory-clock cycles (tCK). The row and column command buses are
// modelled as channel-scope rows: an ACT holds the row bus for tACT_bus cycles
// (a two-cycle command in HBM2/HBM3), any other row command for one; a column
// command holds the column bus for one. So a channel issues at most one row and
// one column command per cycle, and its two pseudo-channels share both buses.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sohusim::config {
class Config;
template <class T>
class ParamTable;
}  // namespace sohusim::config

namespace sohusim::memory {

/// The levels of the organization, outermost first.
enum class DramLevel : std::uint8_t { Stack, Channel, PseudoChannel, Sid, BankGroup, Bank, Row, Column };
inline constexpr std::size_t kDramLevelCount = 8;
std::string_view level_name(DramLevel level);  // "stack", "channel", "pseudo_channel", "sid", ...

enum class DramCommand : std::uint8_t { ACT, PRE, PREA, RD, WR, RDA, WRA, REFab, REFpb };
inline constexpr std::size_t kDramCommandCount = 9;
std::string_view command_name(DramCommand command);  // "ACT", "RDA", "REFpb", ...

/// Row commands travel on the row bus, column commands (RD/WR/RDA/WRA) on the column bus.
constexpr bool is_column_command(DramCommand c) {
  return c == DramCommand::RD || c == DramCommand::WR || c == DramCommand::RDA || c == DramCommand::WRA;
}

/// Where a constraint holds, relative to the bank of the preceding command. The scopes
/// are disjoint-by-construction only where the name says so: SameBankGroup includes the
/// same bank, SamePseudoChannel includes every bank of the pseudo-channel, SameChannel
/// includes both pseudo-channels of the channel. OtherBankGroup is the complement of
/// SameBankGroup within the pseudo-channel (another bank group, or another SID).
enum class ConstraintScope : std::uint8_t { SameBank, SameBankGroup, OtherBankGroup, SamePseudoChannel, SameChannel };
inline constexpr std::size_t kConstraintScopeCount = 5;
std::string_view scope_name(ConstraintScope scope);  // "same bank", ...

/// The geometry of the memory. Defaults: HBM3-6400, from params().
struct DramOrganization {
  std::uint32_t stacks;
  std::uint32_t channels;         // per stack
  std::uint32_t pseudo_channels;  // per channel
  std::uint32_t sids;             // stack ids per pseudo-channel
  std::uint32_t bank_groups;      // per SID
  std::uint32_t banks_per_group;
  std::uint64_t rows;          // per bank
  std::uint32_t columns;       // per row, counted in accesses (bursts), not in DQ beats
  std::uint32_t dq_bits;       // per pseudo-channel
  std::uint32_t burst_length;  // beats per access
  double data_rate_bps;        // per pin

  DramOrganization();
  /// hbm.stacks and hbm.org.*: every field's key, default, range and description
  /// (memory/src/dram_organization_params.cpp). hbm.org.die_density and hbm.org.dies have
  /// no field: organization_from_config derives rows from them unless hbm.org.rows is set.
  static const config::ParamTable<DramOrganization>& params();

  /// Bytes of one access: dq_bits * burst_length / 8 (32 B for HBM3).
  std::uint32_t access_bytes() const { return dq_bits * burst_length / 8; }
  std::uint32_t banks_per_pc() const { return sids * bank_groups * banks_per_group; }
  std::uint32_t pcs_per_stack() const { return channels * pseudo_channels; }
  std::uint32_t total_pcs() const { return stacks * pcs_per_stack(); }
  std::uint64_t row_bytes() const { return std::uint64_t{columns} * access_bytes(); }
  std::uint64_t pc_bytes() const { return std::uint64_t{banks_per_pc()} * rows * row_bytes(); }
  std::uint64_t stack_bytes() const { return pc_bytes() * pcs_per_stack(); }
  std::uint64_t capacity_bytes() const { return stack_bytes() * stacks; }
  /// The count of a level (Row counts rows per bank, Column accesses per row).
  std::uint64_t count(DramLevel level) const;
};

/// Named timings, in cycles of tCK. Defaults: HBM3-6400, from params(). burst_cycles (nBL)
/// is derived, not a key: the data bus time of one access, BL / (transfers per clock); 2 for
/// HBM3 (BL8 at 4 transfers per tCK) and for HBM2 (BL4, DDR).
struct DramTimings {
  double tCK_ps;
  std::uint32_t burst_cycles = 2;  // nBL
  std::uint32_t CL, CWL;
  std::uint32_t RCDRD, RCDWR, RP, RAS, RC;
  std::uint32_t CCD_S, CCD_L, RRD_S, RRD_L, FAW;
  std::uint32_t WR, RTP, WTR_S, WTR_L, RTW;
  std::uint32_t RFCab, RFCpb, REFI, RREFD;
  std::uint32_t ACT_bus;  // cycles an ACT holds the row command bus

  DramTimings();
  /// hbm.timing.*: every timing's key, default, range and description
  /// (memory/src/dram_timings_params.cpp). tRFCab is optional: unset, DramSpec::from_config
  /// derives it from the die density.
  static const config::ParamTable<DramTimings>& params();

  /// tREFI / banks: the interval between two per-bank refreshes of a pseudo-channel.
  std::uint32_t refi_per_bank(std::uint32_t banks_per_pc) const { return REFI / banks_per_pc; }
};

/// The shortest refresh interval a pseudo-channel (all-bank: tREFI, refresh window
/// tRFCab) or a bank (per-bank: tREFI, window tRFCpb) can work with: the refresh (tRP to
/// precharge, then the window), then one row cycle (tRC) and one access's data
/// (CL or CWL, + nBL). Below it the controller can be kept from serving anything: with
/// tREFI 587-653 cycles at HBM3-6400 (needs 680) DramController opened rows every
/// interval and never read them before the next refresh forced their precharge.
inline std::uint64_t min_refresh_interval(std::uint64_t rp, std::uint64_t rfc, std::uint64_t rc, std::uint64_t cl,
                                          std::uint64_t cwl, std::uint64_t burst) {
  return rp + rfc + rc + (cl > cwl ? cl : cwl) + burst;
}

/// One row of the constraint table, as a person writes it.
struct TimingConstraint {
  std::string name;  // the timing it expresses: "tRCDRD", "tFAW", "WR->RD (CWL+nBL+tWTR_S)"
  ConstraintScope scope;
  std::vector<DramCommand> preceding;
  std::vector<DramCommand> following;
  std::uint32_t latency = 0;  // cycles
  std::uint32_t window = 1;   // n > 1: counted from the n-th most recent preceding command
};

/// The table evaluated into integers: for each scope, preceding and following command,
/// the largest latency of any row (0: unconstrained). Windowed rows are kept apart.
class ConstraintTable {
 public:
  struct WindowRule {
    DramCommand preceding;
    DramCommand following;
    std::uint32_t latency;
    std::uint32_t window;
  };
  /// One (following, latency) pair of the rows a preceding command triggers in a scope:
  /// what issuing that command must push forward, without scanning every command.
  struct Effect {
    DramCommand following;
    std::uint32_t latency;
  };

  ConstraintTable() = default;
  /// Throws std::invalid_argument for a window row outside SamePseudoChannel scope or
  /// with more than one preceding/following command (the timing state keeps one history
  /// per pseudo-channel).
  explicit ConstraintTable(const std::vector<TimingConstraint>& rows);

  std::uint32_t latency(ConstraintScope s, DramCommand preceding, DramCommand following) const {
    return latency_[index(s, preceding, following)];
  }
  const std::vector<Effect>& effects(ConstraintScope s, DramCommand preceding) const {
    return effects_[static_cast<std::size_t>(s) * kDramCommandCount + static_cast<std::size_t>(preceding)];
  }
  const std::vector<WindowRule>& windows() const { return windows_; }

 private:
  static std::size_t index(ConstraintScope s, DramCommand p, DramCommand f) {
    return (static_cast<std::size_t>(s) * kDramCommandCount + static_cast<std::size_t>(p)) * kDramCommandCount +
           static_cast<std::size_t>(f);
  }
  std::array<std::uint32_t, kConstraintScopeCount * kDramCommandCount * kDramCommandCount> latency_{};
  std::vector<std::vector<Effect>> effects_ =
      std::vector<std::vector<Effect>>(kConstraintScopeCount * kDramCommandCount);
  std::vector<WindowRule> windows_;
};

/// The constraint rows of the HBM family (HBM2 pseudo-channel mode, HBM3, HBM3E), from
/// named timings. The row list is the documentation of the rules; docs/memory.md shows it.
std::vector<TimingConstraint> build_hbm_constraints(const DramTimings& t);

struct DramSpec {
  std::string name;  // "hbm3-6400", or "custom"
  DramOrganization org;
  DramTimings timing;
  std::vector<TimingConstraint> constraints;
  ConstraintTable table;

  /// Builds constraints and table from org and timing; the usual way to make one.
  static DramSpec make(std::string name, const DramOrganization& org, const DramTimings& timing);
  /// From a resolved configuration holding the hbm_schema() keys (hbm.org.*, hbm.timing.*).
  static DramSpec from_config(const config::Config& config);

  double tCK_seconds() const { return timing.tCK_ps * 1e-12; }
  double clock_hz() const { return 1.0 / tCK_seconds(); }
  /// Data-bus peak of the whole memory: pins x rate over every pseudo-channel.
  double peak_bytes_per_second() const {
    return org.data_rate_bps * org.dq_bits / 8.0 * static_cast<double>(org.total_pcs());
  }
  double peak_bytes_per_second_per_pc() const { return org.data_rate_bps * org.dq_bits / 8.0; }
};

/// tRFCab in ns for an HBM3 die density in Gb (8, 16, 24, 32 -> 260, 350, 450, 550;
/// docs/sources.md, see configs/hbm/hbm3-6400.yaml for the assumed pairing); 0 when
/// the density has no entry.
std::uint32_t hbm3_trfcab_ns(std::uint32_t die_density_gbit);

}  // namespace sohusim::memory
