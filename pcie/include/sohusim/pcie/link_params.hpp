#pragma once
// The parameters of one PCIe link and the arithmetic that follows from them: raw rate,
// bytes each TLP puts on the wire, and the data-link overhead.
//
// Wire accounting (documented in docs/pcie.md, "Link accounting"):
//   - Raw rate per direction = GT/s x lanes x encoding / 8: 8b/10b for Gen1-2, 128b/130b for
//     Gen3-5. Gen6 runs in flit mode: 64 GT/s PAM4 with 1b/1b encoding; each 256-byte flit
//     carries 236 bytes of TLPs, 6 of DLP, 8 of CRC and 6 of FEC, so TLP bytes travel at
//     raw x 236/256 and DLLPs ride in the DLP bytes (no separate charge).
//   - Bytes of one TLP (non-flit): 8 of framing, sequence number and LCRC, the header (12
//     bytes for a 3DW header, 16 for 4DW), the payload, and 4 more with ECRC. So a 3DW memory
//     write costs 20 bytes over its payload, a 4DW one 24, as in the pcie-bench model
//     (Neugebauer et al., SIGCOMM 2018). Flit mode: header + payload (+ ECRC) only.
//   - Data-link overhead (non-flit) as pcie-bench accounts it: one 8-byte ACK DLLP per
//     `ack_interval` bytes and one 8-byte UpdateFC DLLP per `fc_interval` bytes of link time,
//     the intervals taken from the PCIe Base Spec 5.0 tables 3-7..3-9 (Ack limits) and
//     2-46..2-48 (UpdateFC guide) by generation, width and MPS; SKP ordered sets 4 bytes per
//     1538. The DLLPs' placement is a model choice (`dllp_placement`): `data` charges them to
//     the direction that carries the data (pcie-bench); `reverse` sends them where they
//     physically go, on the opposite direction; `none` leaves them out.
#include <array>
#include <cstdint>
#include <string>

#include "sohusim/config/config.hpp"

namespace sohusim::pcie {

enum class DllpPlacement { Data, Reverse, None };

/// Which TLPs a link's flow-control credits are counted for (VC0).
struct CreditLimits {
  // 0 = infinite, as the spec lets a receiver advertise (endpoints must for completions).
  std::uint32_t posted_header = 128;
  std::uint32_t posted_data = 1024;  // 16-byte units
  std::uint32_t nonposted_header = 128;
  std::uint32_t nonposted_data = 64;
  std::uint32_t completion_header = 0;
  std::uint32_t completion_data = 0;
};

struct LinkParams {
  unsigned generation = 5;        // 1..6
  unsigned lanes = 16;            // 1, 2, 4, 8, 16
  std::uint32_t mps = 256;        // Max Payload Size, bytes: 128..4096, powers of two
  std::uint32_t mrrs = 512;       // Max Read Request Size, bytes: 128..4096, powers of two
  std::uint32_t rcb = 64;         // Read Completion Boundary: 64 or 128
  bool merge_completions = true;  // completer merges RCB pieces up to MPS (false: one per RCB)
  bool header_4dw = false;        // 64-bit addressing for every request (else 4DW only above 4 GiB)
  bool ecrc = false;
  unsigned tag_bits = 8;  // 5, 8 or 10
  CreditLimits credits{};
  DllpPlacement dllp_placement = DllpPlacement::Data;

  // Latencies, picoseconds.
  std::uint64_t propagation_ps = 5'000;                  // PHY + wire + receiver pipeline, per hop direction
  std::uint64_t update_fc_ps = 100'000;                  // credit release seen by the transmitter (UpdateFC)
  std::uint64_t ack_latency_ps = 400'000;                // NAK reaches the transmitter after a bad TLP
  std::uint64_t completer_latency_ps = 100'000;          // completer turn-around beyond the memory access
  std::uint64_t completion_timeout_ps = 50'000'000'000;  // 50 ms (the spec's default range)
  double ber = 0.0;                                      // bit error rate for injected LCRC errors
  std::uint64_t seed = 1;                                // for the error injection

  // Power management.
  bool aspm_l0s = false;
  bool aspm_l1 = false;
  std::uint64_t l0s_idle_ps = 7'000'000;    // 7 us idle before L0s (the spec's 7 us)
  std::uint64_t l0s_exit_ps = 1'000'000;    // L0s exit latency
  std::uint64_t l1_idle_ps = 64'000'000;    // ASPM L1 entry timer
  std::uint64_t l1_exit_ps = 16'000'000;    // L1 exit latency
  std::uint64_t training_ps = 100'000'000;  // link training (Detect -> L0) at reset
  std::uint64_t init_fc_ps = 1'000'000;     // InitFC exchange after training, before the first TLP

  /// Reads `pcie.link.*`. Throws config::ConfigError-style std::invalid_argument naming the key.
  static LinkParams from_config(const config::Config& config, const std::string& prefix = "pcie.link");
  /// Throws std::invalid_argument naming the field and the allowed values.
  void validate() const;

  bool flit_mode() const { return generation >= 6; }
  double transfers_per_s() const;      // GT/s x 1e9
  double encoding_efficiency() const;  // 0.8, 128/130 or 1
  /// Raw bytes per second per direction, after encoding (before flit overhead).
  double raw_bytes_per_s() const;
  /// Bytes per second available to TLP bytes: raw x 236/256 in flit mode, else raw.
  double tlp_lane_bytes_per_s() const;
  /// The Ack and UpdateFC intervals of the spec tables for this generation, width and MPS.
  std::uint32_t ack_interval() const;
  std::uint32_t fc_interval() const;
  /// Share of link time the DLLPs and SKP sets take where they are charged (0 in flit mode).
  double dllp_overhead_fraction() const;
  /// Bytes a TLP occupies on the wire. `with_data` TLPs carry `payload` bytes.
  std::uint32_t header_bytes(bool four_dw) const { return four_dw ? 16u : 12u; }
  std::uint32_t tlp_wire_bytes(bool four_dw, std::uint32_t payload) const;
  std::uint32_t max_tags() const;  // 32, 256 or 768

  /// Throughput of an endless stream of MPS-sized posted writes in the data direction
  /// (bytes/s) by the accounting above: the closed form the TLP-level model must reproduce.
  double posted_write_throughput() const;
  /// Same for reads of MRRS whose completions split as configured (completion direction).
  double read_completion_throughput() const;
};

std::string to_string(DllpPlacement p);

}  // namespace sohusim::pcie
