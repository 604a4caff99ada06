// The host and the device across a link, as a driver meets them: enumeration through
// ECAM, BAR sizing and MMIO routed to the device with its function and BAR, MSI-X to the
// interrupt controller, DMA through the IOMMU (mapped, faulting, VF isolation), the
// reentrancy guard, UR with AER, FLR, D3hot, NUMA placement, and the read rate of a large
// pinned buffer through the IOMMU.
#include <cstdio>
#include <numeric>

#include <gtest/gtest.h>

#include "sim/systemc_test_support.hpp"
#include "system_harness.hpp"

namespace sohusim::pcie {
namespace {

using test::Cpu;
using test::kDeviceRid;
using test::SystemBench;

unsigned find_cap(Cpu& cpu, RequesterId rid, unsigned id) {
  unsigned p = cpu.cfg_read(rid, 0x34) & 0xFC;
  for (int guard = 0; p != 0 && guard < 48; ++guard) {
    const std::uint32_t h = cpu.cfg_read(rid, p);
    if ((h & 0xFF) == id) return p;
    p = (h >> 8) & 0xFC;
  }
  return 0;
}

unsigned find_ext_cap(Cpu& cpu, RequesterId rid, unsigned id) {
  unsigned p = 0x100;
  for (int guard = 0; p != 0 && guard < 64; ++guard) {
    const std::uint32_t h = cpu.cfg_read(rid, p);
    if ((h & 0xFFFF) == id) return p;
    p = (h >> 20) & 0xFFC;
  }
  return 0;
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, EnumerationMmioRoutingAndUnsupportedRequest) {
  SystemBench b;
  test::Driver d("cpu_thread", [&] {
    EXPECT_EQ(b.cpu->cfg_read(kDeviceRid, 0x00), 0x5001'1e5cu);
    EXPECT_EQ(b.cpu->cfg_read(make_rid(1, 1, 0), 0x00), 0xFFFFFFFFu);  // no such function: UR, all ones
    b.enumerate();
    EXPECT_EQ(b.bar0_size, 64u << 10);
    const double t0 = test::now_ns();
    EXPECT_EQ(b.cpu->read32(0xF000'0100), 0xC0DE0100u);
    const double rtt = test::now_ns() - t0;
    EXPECT_GT(rtt, 1300.0);  // about 1.5 us by default
    EXPECT_LT(rtt, 1700.0);
    const double w0 = test::now_ns();
    b.cpu->write32(0xF800'0040, 0x1234);  // posted: the CPU goes on after its store
    EXPECT_NEAR(test::now_ns() - w0, 100.0, 1.0);
    EXPECT_EQ(b.cpu->read32(0xF800'0040), 0x1234u);  // the read does not pass the write
    tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;
    EXPECT_EQ(b.cpu->read32(0xF010'0000, &st), 0xFFFFFFFFu);  // beyond BAR0: hits nothing
    EXPECT_EQ(st, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    const unsigned aer = find_ext_cap(*b.cpu, kDeviceRid, 0x0001);
    ASSERT_NE(aer, 0u);
    EXPECT_NE(b.cpu->cfg_read(kDeviceRid, aer + 4) & (1u << 20), 0u);  // UR status
  });
  sc_core::sc_start();
  ASSERT_GE(b.device->seen.size(), 3u);
  EXPECT_EQ(b.device->seen[0].function, kDeviceRid);
  EXPECT_EQ(b.device->seen[0].bar, 0u);
  EXPECT_EQ(b.device->seen[0].offset, 0x100u);
  EXPECT_EQ(b.device->seen[1].bar, 2u);
  EXPECT_EQ(b.count("dev0.ep.unsupported_requests"), 2);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, MsixReachesTheInterruptControllerAndMaskingPends) {
  SystemBench b;
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    const std::uint64_t entry = 0xF000'2000 + 3 * 16;
    b.cpu->write32(entry + 0, 0xFEE0'0000);
    b.cpu->write32(entry + 4, 0);
    b.cpu->write32(entry + 8, 42);
    b.cpu->write32(entry + 12, 1);  // still masked
    const unsigned msix = find_cap(*b.cpu, kDeviceRid, 0x11);
    ASSERT_NE(msix, 0u);
    b.cpu->cfg_write(kDeviceRid, msix, b.cpu->cfg_read(kDeviceRid, msix) | (1u << 31));  // MSI-X Enable
    EXPECT_EQ(b.ep->raise_msix(kDeviceRid, 3), MsixRaise::Pending);
    EXPECT_NE(b.cpu->read32(0xF000'3000) & (1u << 3), 0u);  // PBA bit 3
    b.cpu->write32(entry + 12, 0);                          // unmask: the pending message goes out
    b.irq->wait_for(42);
    EXPECT_EQ(b.irq->last_source(42), kDeviceRid);
    EXPECT_EQ(b.cpu->read32(0xF000'3000) & (1u << 3), 0u);
    const double t0 = test::now_ns();
    EXPECT_EQ(b.ep->raise_msix(kDeviceRid, 3), MsixRaise::Delivered);
    b.irq->wait_for(42);
    EXPECT_LT(test::now_ns() - t0, 300.0);  // a posted write up the link
    EXPECT_EQ(b.ep->raise_msix(kDeviceRid, 99), MsixRaise::BadVector);
  });
  sc_core::sc_start();
  EXPECT_EQ(b.irq->delivered(42), 2u);
  EXPECT_EQ(b.count("host0.rc.msi"), 2);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, DmaThroughTheIommuAndFaults) {
  SystemBench b;
  const DomainId dom = b.iommu->create_domain();
  b.iommu->attach(kDeviceRid, dom);
  b.iommu->map(dom, 0x1000'0000, 0x20'0000, 8192, IommuPerm::ReadWrite);
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    std::vector<std::uint8_t> out(4096), in(4096);
    std::iota(out.begin(), out.end(), 7);
    EXPECT_EQ(b.device->transfer(true, 0x1000'0800, out.data(), 4096, kDeviceRid), tlm::TLM_OK_RESPONSE);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    std::vector<std::uint8_t> host(4096);
    b.dram->store()->read(0x20'0800, host.data(), host.size());
    EXPECT_EQ(host, out);
    EXPECT_EQ(b.device->transfer(false, 0x1000'0800, in.data(), 4096, kDeviceRid), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in, out);
    // Unmapped: the read is blocked and answered UR; the fault names requester and IOVA.
    EXPECT_EQ(b.device->transfer(false, 0x2000'0000, in.data(), 64, kDeviceRid), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  sc_core::sc_start();
  ASSERT_EQ(b.iommu->fault_log().size(), 1u);
  EXPECT_EQ(b.iommu->fault_log()[0].iova, 0x2000'0000u);
  EXPECT_EQ(b.iommu->fault_log()[0].requester, kDeviceRid);
  EXPECT_FALSE(b.iommu->fault_log()[0].is_write);
  EXPECT_GT(b.count("host0.iommu.walks"), 0);
  EXPECT_EQ(b.count("host0.rc.dma_blocked"), 1);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, SriovVfsAreFunctionsOfTheirOwnAndIsolated) {
  SystemBench b;
  const RequesterId vf0 = kDeviceRid + 4;
  const DomainId pf_dom = b.iommu->create_domain();
  const DomainId vf_dom = b.iommu->create_domain();
  b.iommu->attach(kDeviceRid, pf_dom);
  b.iommu->attach(vf0, vf_dom);
  b.iommu->map(pf_dom, 0x3000'0000, 0x20'0000, 4096, IommuPerm::ReadWrite);
  b.iommu->map(vf_dom, 0x1000'0000, 0x40'0000, 4096, IommuPerm::ReadWrite);
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    const unsigned sriov = find_ext_cap(*b.cpu, kDeviceRid, 0x0010);
    ASSERT_NE(sriov, 0u);
    b.cpu->cfg_write(kDeviceRid, sriov + 0x10, 2);  // NumVFs
    b.cpu->cfg_write(kDeviceRid, sriov + 0x24, 0xF810'0000);
    b.cpu->cfg_write(kDeviceRid, sriov + 0x28, 0);
    b.cpu->cfg_write(kDeviceRid, sriov + 0x08, 0x9);  // VF Enable + VF MSE
    EXPECT_EQ(b.ep->functions().num_vfs(), 2u);
    EXPECT_EQ(b.cpu->cfg_read(vf0, 0x00), 0xFFFFFFFFu);  // VF ID registers read all ones
    b.cpu->cfg_write(vf0, 0x04, 0x4);                    // VF bus mastering
    EXPECT_EQ(b.cpu->read32(0xF810'4010), 0xC0DE0010u);  // VF1's BAR0 window: base + 1 x 16 KiB
    std::vector<std::uint8_t> buf(256, 0xAB);
    EXPECT_EQ(b.device->transfer(true, 0x1000'0000, buf.data(), 256, vf0), tlm::TLM_OK_RESPONSE);
    // The PF's IOVA is not in the VF's domain: blocked.
    EXPECT_EQ(b.device->transfer(false, 0x3000'0000, buf.data(), 256, vf0), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    std::uint8_t landed = 0;
    b.dram->store()->read(0x40'0000, &landed, 1);
    EXPECT_EQ(landed, 0xAB);
  });
  sc_core::sc_start();
  ASSERT_FALSE(b.device->seen.empty());
  EXPECT_TRUE(b.device->seen.back().is_vf);
  EXPECT_EQ(b.device->seen.back().vf_index, 1u);
  EXPECT_EQ(b.device->seen.back().function, kDeviceRid + 6);
  ASSERT_EQ(b.iommu->fault_log().size(), 1u);
  EXPECT_EQ(b.iommu->fault_log()[0].requester, vf0);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, ReentrancyGuardAndBusMasterEnable) {
  SystemBench b(RootComplexParams{}, LinkParams{}, false);
  test::Driver d("cpu_thread", [&] {
    std::vector<std::uint8_t> buf(64);
    EXPECT_EQ(b.device->transfer(false, 0x10'0000, buf.data(), 64, kDeviceRid), tlm::TLM_GENERIC_ERROR_RESPONSE);
    b.enumerate();
    EXPECT_EQ(b.device->transfer(false, 0x10'0000, buf.data(), 64, kDeviceRid), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.device->transfer(true, 0xF000'0F00, buf.data(), 512, kDeviceRid), tlm::TLM_COMMAND_ERROR_RESPONSE);
  });
  sc_core::sc_start();
  ASSERT_EQ(b.ep->blocked_dma_log().size(), 2u);
  EXPECT_NE(b.ep->blocked_dma_log()[0].find("Bus Master Enable"), std::string::npos);
  EXPECT_NE(b.ep->blocked_dma_log()[1].find("own BAR0"), std::string::npos);
  EXPECT_EQ(b.count("dev0.ep.dma_blocked"), 2);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, FlrAndD3hot) {
  SystemBench b;
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    const unsigned pm = find_cap(*b.cpu, kDeviceRid, 0x01);
    const unsigned px = find_cap(*b.cpu, kDeviceRid, 0x10);
    ASSERT_NE(pm, 0u);
    ASSERT_NE(px, 0u);
    b.cpu->cfg_write(kDeviceRid, pm + 4, 3);  // PMCSR: D3hot
    // During the 10 ms transition the function asks for retries (the RC reads all ones).
    EXPECT_EQ(b.cpu->cfg_read(kDeviceRid, 0x00), 0xFFFFFFFFu);
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_MS));
    EXPECT_EQ(b.cpu->cfg_read(kDeviceRid, 0x00), 0x5001'1e5cu);
    tlm::tlm_response_status st{};
    EXPECT_EQ(b.cpu->read32(0xF000'0100, &st), 0xFFFFFFFFu);  // memory space is off in D3hot
    b.cpu->cfg_write(kDeviceRid, pm + 4, 0);                  // back to D0
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_MS));
    EXPECT_EQ(b.cpu->read32(0xF000'0100), 0xC0DE0100u);
    const std::uint32_t devctl = b.cpu->cfg_read(kDeviceRid, px + 8);
    b.cpu->cfg_write(kDeviceRid, px + 8, devctl | (1u << 15));  // Initiate FLR
    EXPECT_EQ(b.cpu->read32(0xF000'0100, &st), 0xFFFFFFFFu);    // not accessible during the FLR
    EXPECT_EQ(b.cpu->cfg_read(kDeviceRid, 0x04), 0xFFFFFFFFu);  // retry status
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_MS));       // the spec's 100 ms
    EXPECT_EQ(b.cpu->cfg_read(kDeviceRid, 0x04) & 0x6, 0u);     // command register cleared
    EXPECT_EQ(b.cpu->cfg_read(kDeviceRid, 0x10) & ~0xFu, 0u);   // BAR0 unassigned
  });
  sc_core::sc_start();
  EXPECT_EQ(b.count("dev0.ep.function_level_resets"), 1);
  EXPECT_EQ(b.count("dev0.ep.config_retries"), 2);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, SoftwareEnablesAspmL1ThroughLinkControl) {
  SystemBench b;
  double fresh_ns = 0, after_idle_ns = 0;
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    sc_core::wait(sc_core::sc_time(200, sc_core::SC_US));
    EXPECT_EQ(b.link->state(), LinkPowerState::L0);  // ASPM off: the link stays in L0
    const unsigned px = find_cap(*b.cpu, kDeviceRid, 0x10);
    ASSERT_NE(px, 0u);
    b.cpu->cfg_write(kDeviceRid, px + 0x10, 0x2);  // Link Control: ASPM L1
    EXPECT_TRUE(b.link->aspm_l1());
    EXPECT_FALSE(b.link->aspm_l0s());
    double t0 = test::now_ns();
    b.cpu->read32(0xF000'0100);
    fresh_ns = test::now_ns() - t0;
    sc_core::wait(sc_core::sc_time(200, sc_core::SC_US));
    EXPECT_EQ(b.link->state(), LinkPowerState::L1);
    t0 = test::now_ns();
    b.cpu->read32(0xF000'0100);
    after_idle_ns = test::now_ns() - t0;
  });
  sc_core::sc_start();
  EXPECT_NEAR(after_idle_ns - fresh_ns, LinkParams{}.l1_exit_ps / 1000.0, 50.0);
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, DmaToTheFarNumaNodeIsSeveralTimesSlower) {
  RootComplexParams root;
  root.numa_nodes = 2;
  root.node_bytes = 512ULL << 20;
  root.device_node = 0;
  SystemBench b(root, LinkParams{}, false);
  double near_gbps = 0, far_gbps = 0;
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    std::vector<std::uint8_t> buf(16 << 20);
    double t0 = test::now_ns();
    EXPECT_EQ(b.device->transfer(false, 0x100'0000, buf.data(), static_cast<unsigned>(buf.size()), kDeviceRid),
              tlm::TLM_OK_RESPONSE);
    near_gbps = static_cast<double>(buf.size()) / (test::now_ns() - t0);
    t0 = test::now_ns();
    EXPECT_EQ(b.device->transfer(false, (512ULL << 20) + 0x100'0000, buf.data(), static_cast<unsigned>(buf.size()),
                                 kDeviceRid),
              tlm::TLM_OK_RESPONSE);
    far_gbps = static_cast<double>(buf.size()) / (test::now_ns() - t0);
  });
  sc_core::sc_start();
  std::printf("DMA read, device on node 0: node 0 %.2f GB/s, node 1 %.2f GB/s\n", near_gbps, far_gbps);
  EXPECT_GT(near_gbps, 45.0);
  EXPECT_GT(near_gbps / far_gbps, 2.0);
  EXPECT_GT(b.count("host0.rc.remote_bytes"), 15e6);
}

// A device reading a large pinned buffer through the IOMMU: mapped with 2 MiB pages (the
// buffer 2 MiB-aligned, as hugepage-backed memory is), one IOTLB miss per 2 MiB and the
// walks short, so the read runs at the link's rate as without the IOMMU (> 45 GB/s on
// Gen5 x16, the figure of the NUMA test above).
double iommu_read_gbps(const IommuParams& ip, double& walk_reads, double& misses) {
  SystemBench b(RootComplexParams{}, LinkParams{}, true, ip);
  const DomainId dom = b.iommu->create_domain();
  b.iommu->attach(kDeviceRid, dom);
  const std::uint64_t bytes = 16 << 20;
  b.iommu->map(dom, 0x1000'0000, 0x400'0000, bytes, IommuPerm::ReadWrite);
  double gbps = 0;
  test::Driver d("cpu_thread", [&] {
    b.enumerate();
    std::vector<std::uint8_t> buf(bytes);
    const double t0 = test::now_ns();
    EXPECT_EQ(b.device->transfer(false, 0x1000'0000, buf.data(), static_cast<unsigned>(buf.size()), kDeviceRid),
              tlm::TLM_OK_RESPONSE);
    gbps = static_cast<double>(buf.size()) / (test::now_ns() - t0);
  });
  sc_core::sc_start();
  walk_reads = b.count("host0.iommu.walk_reads");
  misses = b.count("host0.iommu.iotlb_misses");
  return gbps;
}

SOHUSIM_SYSTEMC_TEST(PcieSystem, LargePinnedBufferReadsThroughTheIommuAtLinkRate) {
  double walk_reads = 0, misses = 0;
  const double gbps = iommu_read_gbps(IommuParams{}, walk_reads, misses);
  std::printf("DMA read of 16 MiB through the IOMMU, 2 MiB pages: %.2f GB/s, %.0f misses, %.0f walk reads\n", gbps,
              misses, walk_reads);
  EXPECT_GT(gbps, 45.0);
  EXPECT_EQ(misses, 8.0);          // one per 2 MiB page
  EXPECT_EQ(walk_reads, 3 + 7.0);  // PML4E, PDPTE, PDE (a leaf); then from the cached PDPTE
}

// The same with 4 KiB pages only, no paging-structure cache and one walker (the IOMMU as
// it was modelled before): 4 dependent host memory reads per 4 KiB page cost the link.
SOHUSIM_SYSTEMC_TEST(PcieSystem, FourKiBPagesWithoutWalkCachesSlowTheRead) {
  IommuParams ip;
  ip.max_page_bytes = Iommu::kPageBytes;
  ip.psc_entries = 0;
  ip.page_walkers = 1;
  double walk_reads = 0, misses = 0;
  const double gbps = iommu_read_gbps(ip, walk_reads, misses);
  std::printf("DMA read of 16 MiB through the IOMMU, 4 KiB pages, no caches: %.2f GB/s, %.0f walk reads\n", gbps,
              walk_reads);
  EXPECT_EQ(misses, 4096.0);
  EXPECT_EQ(walk_reads, 4 * 4096.0);
  EXPECT_LT(gbps, 30.0);
}

}  // namespace
}  // namespace sohusim::pcie
