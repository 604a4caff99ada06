#include "sohusim/pcie/pcie_schema.hpp"

namespace sohusim::pcie {

using sim::Dimension;

sim::Schema pcie_schema() {
  sim::Schema s;
  s.section("pcie.link", "the PCIe link between the host's root port and the device (per direction)")
      .uinteger("generation", 5, 1, 6, "PCIe generation: 1-2 8b/10b, 3-5 128b/130b, 6 flit mode")
      .uinteger("lanes", 16, 1, 16, "link width: 1, 2, 4, 8 or 16")
      .quantity("mps", Dimension::Bytes, "256 B", "128 B", "4 KiB", "Max Payload Size")
      .bare_number()
      .quantity("mrrs", Dimension::Bytes, "512 B", "128 B", "4 KiB", "Max Read Request Size")
      .bare_number()
      .quantity("rcb", Dimension::Bytes, "64 B", "64 B", "128 B", "Read Completion Boundary")
      .bare_number()
      .boolean("merge_completions", true,
               "the completer merges RCB-aligned pieces up to MPS (false: one completion per RCB)")
      .enumeration("header", "3dw", {"3dw", "4dw"}, "request header: 4dw forces 64-bit addressing on every TLP")
      .boolean("ecrc", false, "end-to-end CRC digest on every TLP (+4 B)")
      .uinteger("tag_bits", 8, 5, 10, "tag field: 5, 8 or 10 bits (32, 256, 768 outstanding reads)")
      .enumeration("dllp_placement", "data", {"data", "reverse", "none"},
                   "where ACK/UpdateFC DLLPs are charged: data direction (pcie-bench), reverse (where they "
                   "physically travel), none")
      .quantity("propagation", Dimension::Time, "5 ns", "0 s", "1 ms", "PHY, wire and receive pipeline per direction")
      .quantity("update_fc_latency", Dimension::Time, "100 ns", "0 s", "1 ms",
                "time from a receiver freeing a buffer to the transmitter seeing the credit")
      .quantity("ack_latency", Dimension::Time, "400 ns", "0 s", "1 ms",
                "time from a corrupted TLP to the NAK reaching its transmitter")
      .quantity("completer_latency", Dimension::Time, "100 ns", "0 s", "1 ms",
                "completer turn-around beyond the memory access")
      .quantity("completion_timeout", Dimension::Time, "50 ms", "1 us", "10 s",
                "a read whose completions have not all arrived by then fails (AER Completion Timeout)")
      .real("ber", 0.0, 0.0, 1e-3, "bit error rate: each TLP fails its LCRC with 1-(1-ber)^bits, NAK and replay")
      .uinteger("seed", 1, "seed of the error injection")
      .boolean("aspm_l0s", false, "ASPM L0s: a direction idle for l0s_idle enters L0s")
      .boolean("aspm_l1", false, "ASPM L1: a link idle both ways for l1_idle enters L1")
      .quantity("l0s_idle", Dimension::Time, "7 us", "0 s", "1 s", "idle time before L0s entry")
      .quantity("l0s_exit", Dimension::Time, "1 us", "0 s", "1 s", "L0s exit latency")
      .quantity("l1_idle", Dimension::Time, "64 us", "0 s", "1 s", "idle time before ASPM L1 entry")
      .quantity("l1_exit", Dimension::Time, "16 us", "0 s", "1 s", "L1 exit latency")
      .quantity("training", Dimension::Time, "100 us", "0 s", "1 s", "link training from reset to L0");
  s.section("pcie.link.credits", "VC0 flow-control credits advertised by each receiver (0 = infinite)")
      .uinteger("posted_header", 128, 0, 1u << 20, "posted request headers")
      .uinteger("posted_data", 1024, 0, 1u << 24, "posted data, 16-byte units")
      .uinteger("nonposted_header", 128, 0, 1u << 20, "non-posted request headers")
      .uinteger("nonposted_data", 64, 0, 1u << 24, "non-posted data, 16-byte units")
      .uinteger("completion_header", 0, 0, 1u << 20, "completion headers (endpoints advertise infinite)")
      .uinteger("completion_data", 0, 0, 1u << 24, "completion data, 16-byte units");
  s.section("pcie.root", "the host side of the link: the CPU's MMIO path and the root complex")
      .quantity("cpu_mmio_latency", Dimension::Time, "600 ns", "0 s", "1 ms",
                "one way between a CPU core and the root port (core, uncore, I/O hub) for an MMIO access")
      .quantity("device_register_latency", Dimension::Time, "200 ns", "0 s", "1 ms",
                "a device's register read, from request arrival to data ready");
  return s;
}

}  // namespace sohusim::pcie
