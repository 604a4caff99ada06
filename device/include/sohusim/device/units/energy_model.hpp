#pragma once
// Energy of a run from activity counts: dynamic energy = count x energy per event, static
// energy = static power x elapsed time, per component; total joules and average watts.
//
// Components: matrix engines (MACs per data type), vector engines (vector ops = the FLOPs of
// vector_cost.hpp), SRAM (bytes read + written), HBM (row activates, bytes read, bytes
// written), PCIe (bytes moved either way), chip-to-chip links (bytes sent), and "other"
// (static only: clocks, control, command processor, PLLs).
//
// Defaults (EnergyParams member initialisers) and where they come from. Every number is
// marked [source] (a public figure, possibly converted) or [assumption] (ours, with the
// reasoning).
//
// Node scaling [assumption]: M. Horowitz, "Computing's energy problem (and what we can do
// about it)", ISSCC 2014, tabulates energies at 45 nm, 0.9 V. We scale them by 0.2 to a 4-5
// nm node: dynamic energy ~ C V^2; supply ~0.75 V instead of 0.9 V gives (0.75/0.9)^2 = 0.69,
// and switched capacitance per operation roughly a third to a quarter of 45 nm's over the
// five node steps (wires scale worse than gates) - 0.69 x ~0.3 = ~0.2.
//
//  - pj_per_mac: [source] Horowitz 45 nm: FP16 multiply 1.1 pJ, FP32 add 0.9 pJ, FP32
//    multiply 3.7 pJ. A BF16/FP16 MAC with FP32 accumulation = 1.1 + 0.9 = 2.0 pJ at 45 nm
//    -> 0.4 pJ [assumption: x0.2]. FP32 MAC = 3.7 + 0.9 = 4.6 -> 0.92 pJ. FP8 MAC 0.2 pJ
//    [assumption: half of BF16, consistent with H100 doubling FP8 throughput over BF16 in the
//    same 700 W envelope, "NVIDIA H100 Tensor Core GPU" datasheet].
//    Sanity check [source]: H100 SXM, 989 TFLOPS dense BF16 at 700 W TDP, is at most
//    700 / 494.5e12 MAC/s = 1.4 pJ per MAC for everything together; 0.4 pJ for the MAC alone
//    leaves the rest for data movement and static power.
//  - pj_per_sram_byte = 1.0: [source] Horowitz 45 nm: a 64-bit read costs 10 pJ from an 8 KB
//    SRAM, 20 pJ from 32 KB, 100 pJ from 1 MB (1.25 / 2.5 / 12.5 pJ per byte). A scratchpad
//    built of ~256 KB banks plus a short on-chip network sits between the 32 KB and 1 MB
//    points, ~5 pJ/byte at 45 nm -> 1.0 pJ/byte [assumption: x0.2].
//  - HBM: [source] O'Connor et al., "Fine-Grained DRAM: Energy-Efficient DRAM for Extreme
//    Bandwidth Systems", MICRO 2017: HBM2 costs about 4 pJ per bit moved, split between row
//    activation, on-die data movement and I/O. For HBM3/HBM3E [assumption]: 2.5 pJ/bit for
//    the column access and I/O (lower I/O voltage than HBM2) = 20 pJ/byte read or written,
//    plus pj_per_hbm_activate = 150 pJ per row activation [assumption: a DDR4 8 KB-row
//    activate-precharge costs about 1 nJ per device (IDD0-based estimate from datasheet
//    currents); HBM rows are 1 KB, and the cells and sense amplifiers per bit are alike].
//  - pj_per_pcie_byte = 40 (5 pJ/bit): [source] Bae et al., "A 1.93-pJ/Bit PCI Express Gen4
//    PHY Transmitter with On-Chip Supply Regulators in 28 nm CMOS", Electronics 2021: 1.93
//    pJ/bit for the transmitter alone; [assumption] transmitter + receiver + PCS/controller at
//    Gen5 ~5 pJ/bit.
//  - pj_per_c2c_byte = 16 (2 pJ/bit): [source] Turner et al., "Ground-Referenced Signaling for
//    Intra-Chip and Short-Reach Chip-to-Chip Interconnects", CICC 2018 (NVIDIA): 1.17 pJ/bit at
//    25 Gb/s over a printed-circuit board, 0.58 pJ/bit across an organic package;
//    [assumption] a board-level 100+ Gb/s PAM4 link with FEC costs more, ~2 pJ/bit.
//  - pj_per_vector_op = 1.0: [source] Horowitz 45 nm FP32 add 0.9 pJ and multiply 3.7 pJ (an
//    FP32 fma ~4.6 pJ for two FLOPs); [assumption] ~2.3 pJ per FLOP at 45 nm with register
//    operand delivery doubling it to ~5 pJ, x0.2 -> 1.0 pJ per vector FLOP.
//  - Static power [assumption], for a ~700 W-class accelerator whose leakage and always-on
//    circuits are ~15 % of its power: matrix 30 W, vector 10 W, SRAM 15 W, HBM 24 W (six
//    stacks, ~4 W each for refresh, standby and PHY bias), PCIe 5 W, chip-to-chip 10 W,
//    other 25 W.
//
// Not modelled: voltage/frequency scaling, temperature dependence of leakage, clock gating of
// idle units (static power is paid for the whole `seconds`), data-dependent switching (the
// per-event energies are averages).
#include <array>
#include <cstdint>

#include "sohusim/device/compute/dtype.hpp"

namespace sohusim::device {

struct EnergyParams {
  /// pJ per MAC, indexed by DataType encoding (FP8_E4M3, FP8_E5M2, BF16, FP16, FP32).
  std::array<double, kNumDataTypes> pj_per_mac{0.2, 0.2, 0.4, 0.4, 0.92};
  double pj_per_sram_byte = 1.0;
  double pj_per_hbm_activate = 150.0;
  double pj_per_hbm_byte_read = 20.0;
  double pj_per_hbm_byte_written = 20.0;
  double pj_per_pcie_byte = 40.0;
  double pj_per_c2c_byte = 16.0;
  double pj_per_vector_op = 1.0;
  // Static power, watts.
  double static_w_matrix = 30.0;
  double static_w_vector = 10.0;
  double static_w_sram = 15.0;
  double static_w_hbm = 24.0;
  double static_w_pcie = 5.0;
  double static_w_c2c = 10.0;
  double static_w_other = 25.0;
};

/// Throws std::invalid_argument naming the field: every value finite and >= 0 (energies at
/// most 1e6 pJ per event, static powers at most 1e5 W).
void validate(const EnergyParams& p);

/// Event counts of a run.
struct EnergyActivity {
  std::array<std::uint64_t, kNumDataTypes> macs{};  // per DataType encoding
  std::uint64_t sram_bytes = 0;                     // read + written
  std::uint64_t hbm_activates = 0;
  std::uint64_t hbm_bytes_read = 0;
  std::uint64_t hbm_bytes_written = 0;
  std::uint64_t pcie_bytes = 0;
  std::uint64_t c2c_bytes = 0;
  std::uint64_t vector_ops = 0;
};

struct EnergyComponent {
  double dynamic_j = 0.0;
  double static_j = 0.0;
  double total_j() const { return dynamic_j + static_j; }
};

struct EnergyReport {
  EnergyComponent matrix, vector, sram, hbm, pcie, c2c, other;
  double total_j = 0.0;
  double average_w = 0.0;  // total_j / seconds (0 when seconds == 0)
};

/// `seconds` is the elapsed time over which static power is paid (finite, >= 0).
EnergyReport energy(const EnergyParams& p, const EnergyActivity& a, double seconds);

}  // namespace sohusim::device
