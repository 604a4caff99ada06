// The host side of driving an SR-IOV virtual function on the simulated machine: enumeration
// places the PF's VF BAR0 inside the device's BAR0 window, DeviceAccess lists enabled VFs
// with the IDs Linux shows for them, DMA memory of a VF lives in an IOMMU domain of its own
// (a VF's DMA into its PF's memory faults), every function gets host interrupt vectors of
// its own, and driver::Device probes a VF from the function list and the platform's BAR.
// The last test runs a NOP on a VF end to end (its registers, queues and MSI-X are the
// device's side: test_vf_device.cpp checks that side further).
// Each SystemC test runs in a forked child (sim/systemc_test_support.hpp).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/driver/device.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/platform/host_system.hpp"
#include "sohusim/platform/sim_device_access.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::platform::test {
namespace {

using driver::AccessError;
using driver::CompletionMode;
using driver::Device;
using driver::DeviceAccess;
using driver::PciFunction;
using platform::HostSystem;

constexpr std::uint16_t kVendor = 0x1E5C;
constexpr std::uint16_t kPfDevice = 0x5001;
constexpr std::uint16_t kVfDevice = 0x5002;

/// Probes the host's first PF and enables `n` VFs through the driver; returns their rids.
std::vector<std::uint16_t> enable_vfs(Device& pf, unsigned n) {
  pf.probe();
  EXPECT_GE(pf.info().sriov_total_vfs, n) << "the PF offers too few VFs";
  return pf.sriov_enable(n);
}

/// The set-up every VF test below starts from: sohu-1, its PF probed through the driver and
/// two VFs enabled; `body` runs on the host's thread. Fails the test if it never ran.
void with_two_vfs(const std::function<void(HostSystem& hs, DeviceAccess& a, std::uint16_t pf, Device& d,
                                           const std::vector<std::uint16_t>& vfs)>& body) {
  Simulator sim(options("sohu-1"));
  HostSystem& hs = sim.system().host(0);
  bool ran = false;
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    const std::uint16_t pf = HostSystem::device_rid(0);
    Device d(a, pf);
    const std::vector<std::uint16_t> vfs = enable_vfs(d, 2);
    body(hs, a, pf, d, vfs);
    ran = true;
  });
  EXPECT_TRUE(ran) << "the host program did not run";
}

/// One 64-byte DMA access as device 0 issues it, with requester `rid` (what the device's
/// DMA engine does for a VF; a write stores `fill`): returns whether the endpoint took it. A
/// write is posted: an IOMMU fault at the root complex comes later and answers nothing.
bool device_dma(HostSystem& hs, std::uint16_t rid, std::uint64_t iova, bool write, std::uint8_t fill = 0) {
  std::uint8_t data[64];
  std::memset(data, fill, sizeof data);
  tlm::tlm_generic_payload gp;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(iova);
  gp.set_data_ptr(data);
  gp.set_data_length(sizeof data);
  gp.set_streaming_width(sizeof data);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sim::CorrelationExtension corr(0, rid);
  gp.set_extension(&corr);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  hs.device(0).host_dma->b_transport(gp, delay);
  gp.clear_extension(&corr);
  return gp.is_response_ok();
}

// ---- enumeration and the function list ---------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(VfHost, EnabledVfsGetBar0WindowsInsideTheDeviceWindow) {
  with_two_vfs([&](HostSystem&, DeviceAccess& a, std::uint16_t pf, Device&, const std::vector<std::uint16_t>& vfs) {
    ASSERT_EQ(vfs.size(), 2u);
    const std::uint64_t window = HostSystem::bar0_address(0);
    const driver::BarInfo pf_bar0 = a.bar(pf, 0);
    EXPECT_EQ(pf_bar0.address, window);
    std::vector<driver::BarInfo> bars;
    for (std::uint16_t vf : vfs) {
      const driver::BarInfo b = a.bar(vf, 0);
      SCOPED_TRACE("VF " + std::to_string(vf));
      ASSERT_GT(b.size, 0u);
      EXPECT_TRUE(b.is_64bit);
      EXPECT_FALSE(b.prefetchable);
      EXPECT_GE(b.address, window);
      EXPECT_LE(b.address + b.size, window + HostSystem::kBar0Stride) << "outside the device's BAR0 window";
      EXPECT_GE(b.address, pf_bar0.address + pf_bar0.size) << "overlaps the PF's BAR0";
      EXPECT_EQ(b.address % b.size, 0u) << "not aligned to its size";
      EXPECT_EQ(a.bar(vf, 2).size, 0u) << "a VF has no device-memory aperture";
      bars.push_back(b);
    }
    // VF n's window is the VF BAR0 base + n x the per-VF size (SR-IOV 9.3.3.14).
    EXPECT_EQ(bars[0].address, HostSystem::vf_bar0_address(0));
    EXPECT_EQ(bars[1].address, bars[0].address + bars[0].size);
    // The windows decode to the device: an MMIO read in VF 1's window completes (what it
    // reads is the device's business), one past the last enabled VF is unsupported.
    EXPECT_NO_THROW(a.mmio_read32(bars[1].address + SOHU_ID));
    EXPECT_THROW(a.mmio_read32(bars[1].address + bars[1].size + SOHU_ID), AccessError);
    // A function that is not an enabled VF has no BARs to report.
    try {
      a.bar(static_cast<std::uint16_t>(vfs[1] + 1), 0);
      ADD_FAILURE() << "bar() of a VF that is not enabled succeeded";
    } catch (const AccessError& e) {
      EXPECT_TRUE(contains(e.what(), "is not an enabled VF")) << e.what();
      EXPECT_TRUE(contains(e.what(), "NumVFs 2")) << e.what();
    }
  });
}

SOHUSIM_SYSTEMC_TEST(VfHost, FunctionsListVfsWithThePfVendorAndTheVfDeviceId) {
  with_two_vfs([&](HostSystem&, DeviceAccess& a, std::uint16_t pf, Device& d, const std::vector<std::uint16_t>& vfs) {
    // The VF's own header reads all ones (SR-IOV spec): the list must not show that.
    EXPECT_EQ(a.config_read32(vfs[0], 0x00), 0xFFFF'FFFFu);
    std::vector<PciFunction> listed;
    for (const PciFunction& f : a.functions()) {
      if (f.virtual_function) listed.push_back(f);
    }
    ASSERT_EQ(listed.size(), 2u);
    for (unsigned i = 0; i < 2; ++i) {
      EXPECT_EQ(listed[i].rid, vfs[i]);
      EXPECT_EQ(listed[i].vendor_id, kVendor);
      EXPECT_EQ(listed[i].device_id, kVfDevice);
      EXPECT_EQ(listed[i].physical_rid, pf);
      EXPECT_EQ(listed[i].name, "host0/dev0/vf" + std::to_string(i));
    }
    d.sriov_enable(0);
    for (const PciFunction& f : a.functions()) EXPECT_FALSE(f.virtual_function) << "VF " << f.rid << " still listed";
    EXPECT_THROW(a.bar(vfs[0], 0), AccessError);
  });
}

// ---- DMA memory: a domain per function ---------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(VfHost, VfDmaMemoryIsMappedInTheVfsOwnDomain) {
  with_two_vfs([&](HostSystem& hs, DeviceAccess& a, std::uint16_t pf, Device&, const std::vector<std::uint16_t>& vfs) {
    const driver::DmaBuffer pf_buf = a.alloc_dma(pf, 4096);
    const driver::DmaBuffer vf0_buf = a.alloc_dma(vfs[0], 4096);
    const driver::DmaBuffer vf1_buf = a.alloc_dma(vfs[1], 8192);
    pcie::Iommu* mmu = hs.iommu();
    ASSERT_NE(mmu, nullptr) << "sohu-1 has an IOMMU";
    const pcie::DomainId dp = mmu->domain_of(pf), d0 = mmu->domain_of(vfs[0]), d1 = mmu->domain_of(vfs[1]);
    EXPECT_NE(d0, pcie::kNoDomain);
    EXPECT_NE(d1, pcie::kNoDomain);
    EXPECT_NE(d0, dp);
    EXPECT_NE(d1, dp);
    EXPECT_NE(d0, d1);
    EXPECT_EQ(hs.attach_function(vfs[0]), d0) << "the domain is made once";
    EXPECT_EQ(hs.attach_function(pf), dp);
    // Each buffer translates for its own function only.
    const auto translates = [&](std::uint16_t rid, const driver::DmaBuffer& b) {
      return mmu->translate(rid, b.iova, b.size, true).ok;
    };
    EXPECT_TRUE(translates(pf, pf_buf));
    EXPECT_TRUE(translates(vfs[0], vf0_buf));
    EXPECT_TRUE(translates(vfs[1], vf1_buf));
    EXPECT_FALSE(translates(vfs[0], pf_buf)) << "a VF reaches its PF's memory";
    EXPECT_FALSE(translates(vfs[1], vf0_buf)) << "a VF reaches another VF's memory";
    EXPECT_FALSE(translates(pf, vf0_buf)) << "the PF reaches a VF's memory";
    mmu->clear_fault_log();

    // The same through the machine: DMA issued by the device with the VF's requester id
    // goes through the root complex's IOMMU in the VF's domain.
    const std::vector<std::uint8_t> pattern(64, 0x11);
    a.host_write(pf_buf.iova, pattern.data(), pattern.size());
    a.config_write32(vfs[0], 0x04, 0x4);  // the VF's Bus Master Enable
    EXPECT_TRUE(device_dma(hs, vfs[0], vf0_buf.iova, true, 0xA5));
    EXPECT_TRUE(device_dma(hs, vfs[0], vf0_buf.iova, false));
    EXPECT_FALSE(device_dma(hs, vfs[0], pf_buf.iova, false)) << "a VF read its PF's buffer";
    EXPECT_TRUE(device_dma(hs, vfs[0], pf_buf.iova, true, 0xA5)) << "a posted write is taken at the device";
    a.spend_ns(10'000);  // the posted writes reach the root complex
    std::vector<std::uint8_t> got(64);
    a.host_read(vf0_buf.iova, got.data(), got.size());
    EXPECT_EQ(got, std::vector<std::uint8_t>(64, 0xA5)) << "the VF's write to its own buffer";
    a.host_read(pf_buf.iova, got.data(), got.size());
    EXPECT_EQ(got, pattern) << "a VF's DMA write landed in its PF's buffer";
    ASSERT_EQ(mmu->fault_log().size(), 2u);
    for (const pcie::IommuFault& f : mmu->fault_log()) {
      EXPECT_EQ(f.requester, vfs[0]);
      EXPECT_EQ(f.domain, d0);
      EXPECT_EQ(f.reason, pcie::IommuFaultReason::NotMapped);
      EXPECT_EQ(f.iova, pf_buf.iova);
    }
    EXPECT_FALSE(mmu->fault_log().front().is_write);
    EXPECT_TRUE(mmu->fault_log().back().is_write);

    // A rid that is no function of the host is refused, naming what the bus holds.
    try {
      a.alloc_dma(static_cast<std::uint16_t>(pf + 8), 4096);  // 01:01.0: no VF there
      ADD_FAILURE() << "alloc_dma for a function that does not exist succeeded";
    } catch (const AccessError& e) {
      EXPECT_TRUE(contains(e.what(), "01:01.0")) << e.what();
      EXPECT_TRUE(contains(e.what(), "VFs 01:00.1 .. 01:00.7")) << e.what();
    }
  });
}

// ---- interrupts: vectors of one's own -----------------------------------------------------------

TEST(VfHost, EveryFunctionHasHostVectorsOfItsOwn) {
  // Every PF and every VF function (1..7) of every device a host may have, every vector.
  std::set<std::uint32_t> seen;
  for (unsigned dev = 0; dev < HostSystem::kMaxDevices; ++dev) {
    for (unsigned fn = 0; fn < 8; ++fn) {
      const auto rid = static_cast<std::uint16_t>(HostSystem::device_rid(dev) + fn);
      for (unsigned v = 0; v < SimDeviceAccess::kVectorsPerFunction; ++v) {
        ASSERT_TRUE(seen.insert(SimDeviceAccess::host_vector(rid, v)).second)
            << "device " << dev << " function " << fn << " vector " << v << " shares a host vector";
      }
    }
  }
  EXPECT_EQ(SimDeviceAccess::host_vector(HostSystem::device_rid(0), 5), 5u) << "device 0's PF starts at 0";
}

SOHUSIM_SYSTEMC_TEST(VfHost, APfInterruptDoesNotWakeAVfWait) {
  with_two_vfs([&](HostSystem& hs, DeviceAccess& a, std::uint16_t pf, Device&,
                   const std::vector<std::uint16_t>& vfs) {  // probe routed the PF's vectors
    const std::uint64_t before = hs.irq().delivered(SimDeviceAccess::host_vector(pf, 1));
    EXPECT_EQ(hs.endpoint(0).raise_msix(pf, 1), pcie::MsixRaise::Delivered);
    EXPECT_FALSE(a.wait_interrupt(vfs[0], 1, 20'000)) << "VF 0's vector 1 woke for the PF's";
    EXPECT_FALSE(a.wait_interrupt(vfs[1], 1, 20'000)) << "VF 1's vector 1 woke for the PF's";
    EXPECT_TRUE(a.wait_interrupt(pf, 1, 20'000));
    EXPECT_EQ(hs.irq().delivered(SimDeviceAccess::host_vector(pf, 1)), before + 1);
    EXPECT_THROW(a.wait_interrupt(pf, SimDeviceAccess::kVectorsPerFunction, 1), AccessError);
  });
}

SOHUSIM_SYSTEMC_TEST(VfHost, EnableMsixOnAVfProgramsVectorsDistinctFromThePfs) {
  with_two_vfs([&](HostSystem& hs, DeviceAccess& a, std::uint16_t pf, Device&, const std::vector<std::uint16_t>& vfs) {
    bool vf_has_msix = false;
    {
      // The VF's own MSI-X capability (0x11), in its standard list.
      unsigned p = a.config_read32(vfs[0], 0x34) & 0xFCu;
      for (unsigned n = 0; p != 0 && n < 48; ++n) {
        const std::uint32_t h = a.config_read32(vfs[0], static_cast<std::uint16_t>(p));
        if ((h & 0xFFu) == 0x11u) vf_has_msix = true;
        p = (h >> 8) & 0xFCu;
      }
    }
    ASSERT_TRUE(vf_has_msix) << "a VF has no MSI-X capability";
    a.enable_msix(vfs[0], 4);
    const std::uint64_t table = a.bar(vfs[0], 0).address + SOHU_PAGE_MSIX_TABLE;
    const std::uint64_t pf_table = a.bar(pf, 0).address + SOHU_PAGE_MSIX_TABLE;
    for (unsigned v = 0; v < 4; ++v) {
      const std::uint32_t data = a.mmio_read32(table + 16 * v + 8);
      EXPECT_EQ(data, SimDeviceAccess::host_vector(vfs[0], v));
      EXPECT_NE(data, a.mmio_read32(pf_table + 16 * v + 8)) << "VF 0 and its PF share vector " << v;
    }
    // A VF interrupt wakes the VF's wait, not the PF's (a function sends messages only with
    // its Bus Master Enable, which its driver sets).
    a.config_write32(vfs[0], 0x04, 0x4);
    EXPECT_EQ(hs.endpoint(0).raise_msix(vfs[0], 2), pcie::MsixRaise::Delivered);
    EXPECT_FALSE(a.wait_interrupt(pf, 2, 20'000));
    EXPECT_TRUE(a.wait_interrupt(vfs[0], 2, 20'000));
    EXPECT_EQ(hs.irq().last_source(SimDeviceAccess::host_vector(vfs[0], 2)), vfs[0]);
  });
}

// ---- driver::Device on a VF --------------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(VfHost, ProbingAVfTakesItsIdsFromTheFunctionList) {
  with_two_vfs([&](HostSystem&, DeviceAccess& a, std::uint16_t pf, Device&, const std::vector<std::uint16_t>& vfs) {
    Device v(a, vfs[0]);
    const driver::DeviceInfo& i = v.probe(8);
    EXPECT_TRUE(i.virtual_function);
    EXPECT_EQ(i.physical_rid, pf);
    EXPECT_EQ(i.vendor_id, kVendor);
    EXPECT_EQ(i.device_id, kVfDevice);
    EXPECT_EQ(i.bar0.address, a.bar(vfs[0], 0).address);
    EXPECT_EQ(i.bar2.size, 0u);
    EXPECT_EQ(i.max_queues, device::SohuDevice::kVfIoQueues);
    // A VF is enabled through its PF, not through itself.
    EXPECT_EQ(v.info().physical_rid, pf);
    try {
      v.sriov_enable(1);
      ADD_FAILURE() << "sriov_enable on a VF succeeded";
    } catch (const driver::DriverError& e) {
      EXPECT_TRUE(contains(e.what(), "host0/dev0/vf0")) << e.what();
    }
    // A VF function that is not enabled answers nothing, and the probe says so.
    Device absent(a, static_cast<std::uint16_t>(vfs[1] + 1));
    try {
      absent.probe();
      ADD_FAILURE() << "probe of a VF that is not enabled succeeded";
    } catch (const driver::ProbeError& e) {
      EXPECT_TRUE(contains(e.what(), "VF Enable")) << e.what();
    }
  });
}

// The end-to-end check of a VF: probe, enable, an I/O queue, a NOP reaped by the VF's own
// interrupt, its DMA through its own IOMMU domain.
void vf_runs_a_nop_body() {
  with_two_vfs([&](HostSystem& hs, DeviceAccess& a, std::uint16_t pf, Device&, const std::vector<std::uint16_t>& vfs) {
    const driver::BarInfo b = a.bar(vfs[0], 0);
    const std::uint32_t ident = a.mmio_read32(b.address + SOHU_ID);
    ASSERT_EQ(ident, (std::uint32_t{kVfDevice} << 16) | kVendor);
    Device v(a, vfs[0]);
    const driver::DeviceInfo& i = v.probe(8);
    EXPECT_TRUE(i.virtual_function);
    EXPECT_EQ(i.device_id, kVfDevice);
    EXPECT_EQ(i.bar2.size, 0u);
    EXPECT_THROW(v.pmu_cycles(), driver::DriverError) << "the PMU is the PF's";
    v.enable();
    const std::uint16_t q = v.create_queue(64, CompletionMode::Interrupt);
    const std::uint64_t pf_irqs = hs.irq().delivered(SimDeviceAccess::host_vector(pf, 1));
    const std::uint64_t t0 = a.now_ns();
    const driver::Completion c = v.wait(v.submit(q, driver::nop(), 7), 10'000'000);
    EXPECT_EQ(c.status, 0);
    EXPECT_EQ(c.sq_id, q);
    EXPECT_LT(a.now_ns() - t0, 200'000u) << "the completion was not woken by the VF's interrupt";
    EXPECT_GE(hs.irq().delivered(SimDeviceAccess::host_vector(vfs[0], 1)), 1u);
    EXPECT_EQ(hs.irq().delivered(SimDeviceAccess::host_vector(pf, 1)), pf_irqs) << "the VF's interrupt hit the PF";
    ASSERT_NE(hs.iommu(), nullptr);
    EXPECT_TRUE(hs.iommu()->fault_log().empty()) << pcie::describe(hs.iommu()->fault_log().front());
  });
}

TEST(VfHost, AVfRunsANopOnAnIoQueueWithAnInterrupt) {
  ::sohusim::test::run_in_child(&vf_runs_a_nop_body);
}

}  // namespace
}  // namespace sohusim::platform::test
