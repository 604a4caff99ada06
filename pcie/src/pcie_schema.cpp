#include "sohusim/pcie/pcie_schema.hpp"

#include <algorithm>

#include "sohusim/pcie/link_params.hpp"

namespace sohusim::pcie {

using config::Dimension;

IommuParams iommu_params_from_config(const config::Config& c) {
  IommuParams p;
  p.enabled = c.get_bool("pcie.iommu.enabled");
  p.iotlb_entries = static_cast<std::uint32_t>(c.get_uint("pcie.iommu.iotlb_entries"));
  p.iotlb_ways = static_cast<std::uint32_t>(c.get_uint("pcie.iommu.iotlb_ways"));
  p.iotlb_hit_latency_s = c.get_quantity("pcie.iommu.iotlb_latency");
  p.default_blocked = c.get_bool("pcie.iommu.default_blocked");
  const std::string& sp = c.get_string("pcie.iommu.superpages");
  p.max_page_bytes = sp == "1g" ? Iommu::k1GiB : sp == "2m" ? Iommu::k2MiB : Iommu::kPageBytes;
  p.psc_entries = static_cast<std::uint32_t>(c.get_uint("pcie.iommu.psc_entries"));
  p.page_walkers = static_cast<std::uint32_t>(c.get_uint("pcie.iommu.walkers"));
  p.fault_log_capacity = static_cast<std::uint32_t>(c.get_uint("pcie.iommu.fault_log"));
  const auto capacity = static_cast<std::uint64_t>(c.get_quantity("host_dram.capacity"));
  p.page_table_bytes = std::min<std::uint64_t>(64ULL << 20, capacity / 4) & ~0xFFFULL;
  p.page_table_base = (capacity - p.page_table_bytes) & ~0xFFFULL;
  return p;
}

config::Schema pcie_schema() {
  config::Schema s;
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
      .quantity("training", Dimension::Time, "100 us", "0 s", "1 s", "link training from reset to L0")
      .quantity("init_fc_latency", Dimension::Time, "1 us", "0 s", "1 ms",
                "flow-control initialisation (InitFC1/InitFC2 DLLPs) after training, before the first TLP");
  // Values the ranges above let through but the spec does not have (x12, MPS 384, 9-bit
  // tags, RCB 96): the link's own check, reported on the key.
  s.add_check([](const config::Config& c, std::vector<config::ConfigDiagnostic>& out) {
    try {
      LinkParams::from_config(c).validate();
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      const std::string key = msg.find("generation") != std::string::npos ? "pcie.link.generation"
                              : msg.find("width") != std::string::npos    ? "pcie.link.lanes"
                              : msg.find("MPS") != std::string::npos      ? "pcie.link.mps"
                              : msg.find("MRRS") != std::string::npos     ? "pcie.link.mrrs"
                              : msg.find("RCB") != std::string::npos      ? "pcie.link.rcb"
                              : msg.find("tag") != std::string::npos      ? "pcie.link.tag_bits"
                              : msg.find("credits") != std::string::npos  ? "pcie.link.credits"
                                                                          : "pcie.link";
      out.push_back(c.diagnose(key, msg));
    }
  });
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
      .quantity("cpu_posted_write", Dimension::Time, "100 ns", "0 s", "1 ms",
                "what an MMIO write costs the CPU itself (an uncached store leaving the core; assumption)")
      .quantity("device_register_latency", Dimension::Time, "200 ns", "0 s", "1 ms",
                "a device's register read, from request arrival to data ready")
      .uinteger("numa_nodes", 1, 1, 8, "NUMA nodes of host memory")
      .quantity("node_bytes", Dimension::Bytes, "256 GiB", "1 MiB", "64 TiB",
                "memory per node: node n owns [n x node_bytes, (n+1) x node_bytes)")
      .bare_number()
      .uinteger("device_node", 0, 0, 7, "the node whose socket's root complex the device hangs off")
      .quantity("remote_latency", Dimension::Time, "120 ns", "0 s", "10 us",
                "extra latency of DMA to another node's memory (inter-socket hop; assumption)")
      .quantity("remote_bandwidth", Dimension::Bandwidth, "20 GB/s", "1 GB/s", "1 TB/s",
                "DMA bandwidth across the inter-socket link (assumption: the share left for I/O)");
  s.section("pcie.iommu", "the host IOMMU (VT-d / AMD-Vi class)")
      .boolean("enabled", true, "translate device DMA through per-requester page tables")
      .uinteger("iotlb_entries", 256, 1, 1u << 16, "IOTLB entries (assumption: 64-512 in current IOMMUs)")
      .uinteger("iotlb_ways", 8, 1, 64, "IOTLB associativity")
      .quantity("iotlb_latency", Dimension::Time, "2 ns", "0 s", "1 us", "one IOTLB lookup")
      .enumeration("superpages", "1g", {"off", "2m", "1g"},
                   "largest I/O page: 1g (2 MiB and 1 GiB leaves, as VT-d parts report in SLLPS), 2m, off (4 KiB "
                   "only); the host maps buffers of 2 MiB or more 2 MiB-aligned unless off")
      .uinteger("psc_entries", 32, 0, 1u << 16,
                "entries of each paging-structure cache (PML4E, PDPTE, PDE); 0: every IOTLB miss walks from "
                "the root (assumption: sizes are not published)")
      .uinteger("walkers", 16, 1, 1024,
                "page walks in flight at once (assumption: gem5's SMMUv3 model has 16 walk slots by default)")
      .boolean("default_blocked", true, "a requester with no domain faults (false: passes untranslated)")
      .uinteger("fault_log", 256, 1, 1u << 20, "fault records kept");
  return s;
}

}  // namespace sohusim::pcie
