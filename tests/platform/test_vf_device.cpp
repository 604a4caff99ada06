// Driving an SR-IOV virtual function end to end, the device's side of it: a VF's commands
// reach device memory only through the device-MMU context its PF assigned (VF_CONTEXT), its
// DMA goes out with its own requester ID (the host IOMMU keeps it out of its PF's buffers),
// the device-wide units stay the PF's, and resets stay within their function. Everything
// goes through the driver over the simulated platform (functional data mode, so device
// memory holds the bytes that the checks read back). Each test runs in a forked child.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <functional>
#include <string>
#include <vector>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/driver/device.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/platform/host_system.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::platform::test {
namespace {

using driver::CommandError;
using driver::CompletionMode;
using driver::Device;
using driver::DeviceAccess;
using driver::Space;

constexpr std::uint64_t kPage = 2ULL << 20;  // device MMU page (device.mmu.page_size default)

/// The PF probed and enabled, one VF enabled, probed and enabled with one I/O queue.
struct PfAndVf {
  Device pf;
  std::uint16_t pf_queue = 0;
  std::uint16_t vf_rid;
  Device vf;
  std::uint16_t vf_queue = 0;
  PfAndVf(DeviceAccess& a, std::uint16_t pf_rid) : pf(a, pf_rid), vf_rid(enable_one_vf(pf)), vf(a, vf_rid) {
    pf.enable();
    pf_queue = pf.create_queue(64, CompletionMode::Interrupt);
    vf.probe(8);
    vf.enable();
    vf_queue = vf.create_queue(64, CompletionMode::Interrupt);
  }
  static std::uint16_t enable_one_vf(Device& pf) {
    pf.probe();
    return pf.sriov_enable(1).at(0);
  }
};

/// A host buffer of `bytes` mapped for function `rid`, filled with `fill`.
std::uint64_t host_buffer(DeviceAccess& a, std::uint16_t rid, std::uint64_t bytes, std::uint8_t fill) {
  const driver::DmaBuffer b = a.alloc_dma(rid, bytes, 4096);
  std::vector<std::uint8_t> v(bytes, fill);
  a.host_write(b.iova, v.data(), v.size());
  return b.iova;
}

/// The status a command on (dev, queue) completes with (0: success).
std::uint16_t run_status(Device& dev, std::uint16_t queue, const driver::Command& c) {
  try {
    dev.wait(dev.submit(queue, c), 10'000'000'000ULL);
    return 0;
  } catch (const CommandError& e) {
    return e.status();
  }
}

/// The set-up every test below starts from: sohu-1 in functional mode, PfAndVf on its host
/// thread; `body` gets the host, the machine as the driver sees it and the two functions.
/// Fails the test if it never ran.
void with_pf_and_vf(const std::function<void(platform::HostSystem& hs, DeviceAccess& a, PfAndVf& f)>& body) {
  Simulator sim(options("sohu-1", "functional"));
  platform::HostSystem& hs = sim.system().host(0);
  bool ran = false;
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    PfAndVf f(a, platform::HostSystem::device_rid(0));
    body(hs, a, f);
    ran = true;
  });
  EXPECT_TRUE(ran) << "the host program did not run";
}

SOHUSIM_SYSTEMC_TEST(VfDevice, AVfReachesDeviceMemoryOnlyThroughTheContextItsPfAssigned) {
  with_pf_and_vf([&](platform::HostSystem& hs, DeviceAccess& a, PfAndVf& f) {
    const std::uint64_t src = host_buffer(a, f.vf.info().rid, 4096, 0xA5);

    // No context assigned yet: the VF's device-memory operand faults (never physical); the
    // simulator's own log says why.
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::dma_copy(Space::Host, src, Space::Hbm, 0x100, 4096)),
              SOHU_STATUS_MMU_FAULT);
    const device::FunctionController* ctl = hs.device(0).vf(0);
    ASSERT_NE(ctl, nullptr);
    ASSERT_NE(ctl->error_log().oldest(), nullptr);
    EXPECT_TRUE(contains(ctl->error_log().oldest()->message, "VF_CONTEXT")) << ctl->error_log().oldest()->message;

    // The PF maps the VF's virtual page 0 onto physical page 3 and assigns the context.
    f.pf.set_context(5, {3 * kPage | 0x3});
    f.pf.assign_vf_context(0, 5);
    // The VF's entry names context 0 (physical): it runs in context 5 all the same.
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::dma_copy(Space::Host, src, Space::Hbm, 0x100, 4096)), 0);
    // Its page 1 is not mapped.
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::dma_copy(Space::Host, src, Space::Hbm, kPage, 4096)),
              SOHU_STATUS_MMU_FAULT);

    // The bytes are at physical page 3 + 0x100, as the PF reads them (physical addressing).
    const driver::DmaBuffer back = a.alloc_dma(f.pf.info().rid, 4096, 4096);
    EXPECT_EQ(
        run_status(f.pf, f.pf_queue, driver::dma_copy(Space::Hbm, 3 * kPage + 0x100, Space::Host, back.iova, 4096)), 0);
    std::vector<std::uint8_t> got(4096);
    a.host_read(back.iova, got.data(), got.size());
    EXPECT_EQ(got, std::vector<std::uint8_t>(4096, 0xA5));

    // A VF cannot reach a peer's HBM (physical addresses there) nor read the PMU.
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::pmu_snapshot(src)), SOHU_STATUS_INVALID_OPCODE);
  });
}

SOHUSIM_SYSTEMC_TEST(VfDevice, AVfsDmaCarriesItsOwnRequesterId) {  // and so stays in its IOMMU domain
  with_pf_and_vf([&](platform::HostSystem& hs, DeviceAccess& a, PfAndVf& f) {
    f.pf.set_context(1, {0 | 0x3});
    f.pf.assign_vf_context(0, 1);
    // A buffer mapped for the VF: its copy works. One mapped only for the PF: the host IOMMU
    // refuses the VF's read (HOST_DMA_ERROR); the VF's writes are posted, so the command
    // completes, but the IOMMU drops them and logs the VF as the requester: the PF's
    // memory stays as it was.
    const std::uint64_t mine = host_buffer(a, f.vf.info().rid, 4096, 0x11);
    const std::uint64_t pfs = host_buffer(a, f.pf.info().rid, 4096, 0x22);
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::dma_copy(Space::Host, mine, Space::Hbm, 0, 4096)), 0);
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::dma_copy(Space::Host, pfs, Space::Hbm, 0, 4096)),
              SOHU_STATUS_HOST_DMA_ERROR);
    pcie::Iommu& iommu = *hs.iommu();
    iommu.clear_fault_log();
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::dma_copy(Space::Hbm, 0, Space::Host, pfs, 4096)), 0);
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::timestamp(Space::Host, pfs)), 0);
    std::vector<std::uint8_t> got(4096);
    a.host_read(pfs, got.data(), got.size());
    EXPECT_EQ(got, std::vector<std::uint8_t>(4096, 0x22));
    ASSERT_FALSE(iommu.fault_log().empty());
    for (const pcie::IommuFault& fault : iommu.fault_log()) {
      EXPECT_EQ(fault.requester, f.vf.info().rid) << pcie::describe(fault);
      EXPECT_TRUE(fault.is_write) << pcie::describe(fault);
    }
  });
}

SOHUSIM_SYSTEMC_TEST(VfDevice, TheDeviceWideUnitsAreThePfs) {
  with_pf_and_vf([&](platform::HostSystem&, DeviceAccess&, PfAndVf& f) {
    // The device-wide admin commands are refused on a VF's admin queue.
    driver::Command pmu;
    pmu.dw[SOHU_SQE_OPCODE_DW] |= SOHU_ADMIN_OP_PMU_CONFIG << SOHU_SQE_OPCODE_SHIFT;
    try {
      f.vf.admin(pmu);
      ADD_FAILURE() << "PMU_CONFIG on a VF's admin queue succeeded";
    } catch (const CommandError& e) {
      EXPECT_EQ(e.status(), SOHU_STATUS_INVALID_OPCODE) << e.what();
    }
    // PMU registers on a VF: reads 0, a write is logged in the VF's own error log.
    const std::uint32_t errors = f.vf.read32(SOHU_ERR_COUNT);
    f.vf.write32(SOHU_PMU_CTRL, SOHU_PMU_CTRL_EN_MASK);
    EXPECT_EQ(f.vf.read32(SOHU_PMU_CTRL), 0u);
    EXPECT_EQ(f.vf.read32(SOHU_ERR_COUNT), errors + 1);
    EXPECT_EQ(f.pf.read32(SOHU_PMU_CTRL) & SOHU_PMU_CTRL_EN_MASK, 0u) << "a VF's write reached the PF's PMU";
    // A VF identifies itself as one, with its own queue limit.
    EXPECT_EQ(f.vf.read32(SOHU_ID) >> 16, 0x5002u);
    EXPECT_EQ(f.vf.info().max_queues, device::SohuDevice::kVfIoQueues);
    // VF_CONTEXT names a VF that does not exist: INVALID_FIELD with the numbers.
    try {
      f.pf.assign_vf_context(7, 1);
      ADD_FAILURE() << "VF_CONTEXT for VF 7 succeeded";
    } catch (const CommandError& e) {
      EXPECT_EQ(e.status(), SOHU_STATUS_INVALID_FIELD) << e.what();
    }
  });
}

SOHUSIM_SYSTEMC_TEST(VfDevice, AVfsResetStaysInTheVfAndThePfsResetsTheDevice) {
  with_pf_and_vf([&](platform::HostSystem& hs, DeviceAccess&, PfAndVf& f) {
    f.pf.set_context(2, {0 | 0x3});
    f.pf.assign_vf_context(0, 2);
    // The VF's reset: the VF comes back, the PF's queue never noticed.
    const unsigned pf_resets = static_cast<unsigned>(f.pf.reset_count());
    f.vf.reset();
    EXPECT_EQ(run_status(f.vf, f.vf_queue, driver::nop()), 0);
    EXPECT_EQ(run_status(f.pf, f.pf_queue, driver::nop()), 0);
    EXPECT_EQ(f.pf.reset_count(), pf_resets);
    EXPECT_EQ(hs.device(0).vf_context(0), 2u) << "the VF's own reset keeps its PF's assignment";
    // The PF's reset resets the whole device: the assignment is gone.
    f.pf.reset();
    EXPECT_EQ(hs.device(0).vf_context(0), 0u);
    EXPECT_EQ(run_status(f.pf, f.pf_queue, driver::nop()), 0);
  });
}

}  // namespace
}  // namespace sohusim::platform::test
