// The driver and runtime on the simulated machine (platform::Simulator): config space over
// ECAM, MMIO over the PCIe link, DMA through the IOMMU and MSI-X into the interrupt
// controller, with simulated host time. The unit tests of the same Device and Runtime code,
// against an in-process fake of the device and without SystemC, are in tests/driver/
// (fake_device.hpp, test_device.cpp, test_runtime.cpp). Systems: "sohu-1" (one host, one
// device) and "test-2" (one host, two devices). Each test runs in a forked child with a
// fresh SystemC kernel (sim/systemc_test_support.hpp).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/driver/device.hpp"
#include "sohusim/driver/runtime.hpp"
#include "sohusim/platform/sim_device_access.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::platform::test {
namespace {

using driver::CommandError;
using driver::CompletionMode;
using driver::Device;
using driver::DeviceAccess;
using driver::DeviceInfo;
using driver::Event;
using driver::HostBuffer;
using driver::Program;
using driver::Runtime;
using driver::RuntimeOptions;
using driver::Stream;

/// The requester id of the host's first Sohu physical function.
std::uint16_t first_sohu_pf(DeviceAccess& a) {
  for (const driver::PciFunction& f : a.functions()) {
    if (!f.virtual_function && f.vendor_id == 0x1E5C && f.device_id == 0x5001) return f.rid;
  }
  ADD_FAILURE() << "the platform shows no Sohu physical function";
  return 0;
}

// ---- probe, enable, queues --------------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(PlatformDriver, ProbeReadsIdsCapabilitiesAndBarSizes) {
  Simulator sim(options("sohu-1"));
  bool ran = false;
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    Device d(a, first_sohu_pf(a));
    const DeviceInfo& i = d.probe();
    EXPECT_EQ(i.vendor_id, 0x1E5C);
    EXPECT_EQ(i.device_id, 0x5001);
    EXPECT_EQ(i.version_major, 1u);
    EXPECT_EQ(i.bar0.size, SOHU_BAR0_SIZE);
    EXPECT_EQ(i.bar0.size, a.bar(i.rid, 0).size);
    EXPECT_EQ(i.bar2.size, a.bar(i.rid, 2).size);
    EXPECT_TRUE(i.bar2.is_64bit);
    EXPECT_TRUE(i.bar2.prefetchable);
    // BAR2 is the HBM aperture: HBM_SIZE rounded up to a power of two (BARs are powers of
    // two; equal when the capacity is one).
    ASSERT_GT(i.hbm_bytes, 0u);
    EXPECT_GE(i.bar2.size, i.hbm_bytes);
    EXPECT_LT(i.bar2.size / 2, i.hbm_bytes);
    for (std::uint8_t cap : {0x01, 0x10, 0x11}) {
      EXPECT_NE(std::find(i.capabilities.begin(), i.capabilities.end(), cap), i.capabilities.end())
          << "capability " << unsigned{cap} << " missing";
    }
    EXPECT_NE(std::find(i.ext_capabilities.begin(), i.ext_capabilities.end(), 0x0001), i.ext_capabilities.end())
        << "AER missing";
    EXPECT_GE(i.msix_vectors, 2u);
    EXPECT_GE(i.max_queues, 1u);
    EXPECT_GE(i.max_queue_entries, 2u);
    EXPECT_EQ(i.doorbell_stride, 4096u);
    EXPECT_GT(i.matrix_engines, 0u);
    EXPECT_GT(i.clock_mhz, 0u);
    ran = true;
  });
  EXPECT_TRUE(ran);
}

SOHUSIM_SYSTEMC_TEST(PlatformDriver, NopCompletesWithInterruptsAndWithPolling) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    Device d(a, first_sohu_pf(a));
    d.probe();
    d.enable();
    const std::uint16_t qi = d.create_queue(64, CompletionMode::Interrupt);
    const std::uint16_t qp = d.create_queue(64, CompletionMode::Polling);
    EXPECT_NE(qi, qp);
    std::uint64_t t0 = a.now_ns();
    const driver::Completion ci = d.wait(d.submit(qi, driver::nop(), 11), 10'000'000);
    EXPECT_EQ(ci.status, 0);
    EXPECT_EQ(ci.sq_id, qi);
    // Well under the driver's 1 ms interrupt-wait slice: the MSI-X really woke the wait.
    EXPECT_LT(a.now_ns() - t0, 200'000u);
    t0 = a.now_ns();
    const driver::Completion cp = d.wait(d.submit(qp, driver::nop(), 12), 10'000'000);
    EXPECT_EQ(cp.status, 0);
    EXPECT_EQ(cp.sq_id, qp);
    EXPECT_LT(a.now_ns() - t0, 200'000u);
    // More commands than slots: the driver waits for room and the rings wrap.
    for (std::uint16_t q : {qi, qp}) {
      d.submit(q, std::vector<driver::Command>(150, driver::nop()), 13);
      d.drain(q, 100'000'000);
      EXPECT_EQ(d.outstanding(q), 0u);
    }
  });
}

// A launched program posts every command but the last without an interrupt. Waiting for it,
// the host sleeps until the last one's interrupt (the queue runs in order) instead of polling
// the CQ every poll interval through the whole program; a command without an interrupt and
// none after it is still waited for by polling.
SOHUSIM_SYSTEMC_TEST(PlatformDriver, ABatchWithOneInterruptIsWaitedForWithoutPolling) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    auto* sim_access = dynamic_cast<SimDeviceAccess*>(&a);
    ASSERT_NE(sim_access, nullptr);
    Device d(a, first_sohu_pf(a));
    d.probe();
    d.enable();
    const std::uint16_t q = d.create_queue(64, CompletionMode::Interrupt);
    std::vector<driver::Command> batch(40, driver::nop());
    for (std::size_t i = 0; i + 1 < batch.size(); ++i) batch[i].no_irq();
    const std::uint64_t polled = sim_access->cpu_poll_ns();
    d.submit(q, batch, 21);
    d.drain(q, 100'000'000);
    EXPECT_EQ(d.outstanding(q), 0u);
    EXPECT_EQ(sim_access->cpu_poll_ns(), polled) << "the host polled while an interrupt was coming";
    driver::Command lone = driver::nop();
    lone.no_irq();
    d.wait(d.submit(q, lone, 22), 10'000'000);
    EXPECT_GT(sim_access->cpu_poll_ns(), polled) << "a command without an interrupt is waited for by polling";
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformDriver, ABadCommandFailsWithOutOfRangeAndTheQueueGoesOn) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    Device d(a, first_sohu_pf(a));
    d.probe();
    d.enable();
    const std::uint16_t q = d.create_queue(64);
    driver::GemmDesc g;
    g.a = d.info().hbm_bytes + 4096;  // beyond HBM
    g.b = 0;
    g.c = 1 << 20;
    g.m = g.k = g.n = 64;
    const driver::Ticket t = d.submit(q, driver::gemm(g), 42);
    try {
      d.wait(t, 10'000'000);
      ADD_FAILURE() << "the GEMM did not fail";
    } catch (const CommandError& e) {
      EXPECT_EQ(e.status(), SOHU_STATUS_OUT_OF_RANGE);
      EXPECT_EQ(e.qid(), q);
      EXPECT_EQ(e.cid(), t.cid);
      EXPECT_EQ(e.correlation(), 42u);
      EXPECT_TRUE(contains(e.what(), "GEMM (qid")) << e.what();
      EXPECT_TRUE(contains(e.what(), "OUT_OF_RANGE")) << e.what();
      EXPECT_TRUE(contains(e.what(), "error log")) << e.what();
    }
    EXPECT_EQ(d.wait(d.submit(q, driver::nop()), 10'000'000).status, 0);
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformDriver, ResetRecoversAndACommandWorksAfter) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    Device d(a, first_sohu_pf(a));
    d.probe();
    d.enable();
    const std::uint16_t q = d.create_queue(64);
    const driver::Ticket stuck = d.submit(q, driver::sem_wait(17, 1));  // nothing signals it
    a.spend_ns(20'000);
    d.reset();
    EXPECT_EQ(d.reset_count(), 1u);
    try {
      d.wait(stuck, 1'000'000);
      ADD_FAILURE() << "the command in flight at the reset did not abort";
    } catch (const CommandError& e) {
      EXPECT_EQ(e.status(), SOHU_STATUS_ABORTED_RESET);
    }
    EXPECT_EQ(d.wait(d.submit(q, driver::nop()), 10'000'000).status, 0);
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformDriver, SriovEnableReturnsVfRids) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    const std::uint16_t pf = first_sohu_pf(a);
    Device d(a, pf);
    d.probe();
    ASSERT_GT(d.info().sriov_total_vfs, 0u) << "the platform gives the Sohu PF no SR-IOV capability";
    const unsigned n = std::min(2u, d.info().sriov_total_vfs);
    const std::vector<std::uint16_t> vfs = d.sriov_enable(n);
    ASSERT_EQ(vfs.size(), n);
    for (std::uint16_t vf : vfs) EXPECT_GT(vf, pf);
    if (n > 1) {
      EXPECT_GT(vfs[1], vfs[0]);
    }
    EXPECT_TRUE(d.sriov_enable(0).empty());
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformDriver, EnabledVfsAreListedAsFunctions) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    const std::uint16_t pf = first_sohu_pf(a);
    Device d(a, pf);
    d.probe();
    ASSERT_GT(d.info().sriov_total_vfs, 0u) << "the platform gives the Sohu PF no SR-IOV capability";
    const unsigned n = std::min(2u, d.info().sriov_total_vfs);
    const std::vector<std::uint16_t> vfs = d.sriov_enable(n);
    // DeviceAccess::functions() lists enabled VFs, with the RIDs offset and stride give.
    unsigned found = 0;
    for (const driver::PciFunction& f : a.functions()) {
      if (f.virtual_function && f.physical_rid == pf) {
        EXPECT_NE(std::find(vfs.begin(), vfs.end(), f.rid), vfs.end()) << "unexpected VF rid " << f.rid;
        ++found;
      }
    }
    EXPECT_EQ(found, n);
    EXPECT_TRUE(d.sriov_enable(0).empty());
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformDriver, AnMmioReadTakesAtLeastAMicrosecond) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    Device d(a, first_sohu_pf(a));
    d.probe();
    const std::uint64_t t0 = a.now_ns();
    EXPECT_EQ(d.read32(SOHU_ID), 0x50011E5Cu);
    EXPECT_GE(a.now_ns() - t0, 1000u);
    const std::uint64_t t1 = d.device_time_ns();
    a.spend_ns(50'000);
    EXPECT_GT(d.device_time_ns(), t1);
  });
}

// ---- runtime ----------------------------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(PlatformRuntime, MallocFreeAndAnOutOfMemoryMessage) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    Runtime& rt = host.runtime();
    ASSERT_EQ(rt.device_count(), 1u);
    const std::uint64_t hbm = rt.device_info(0).hbm_bytes;
    const std::uint64_t a = rt.malloc(0, 1 << 20);
    const std::uint64_t b = rt.malloc(0, 1 << 20, 1 << 16);
    EXPECT_EQ(b % (1 << 16), 0u);
    EXPECT_NE(a, b);
    EXPECT_EQ(rt.hbm_used(0), 2u << 20);
    rt.free(0, a);
    rt.free(0, b);
    EXPECT_EQ(rt.hbm_used(0), 0u);
    try {
      rt.malloc(0, hbm + 1);
      ADD_FAILURE() << "malloc beyond HBM succeeded";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), std::to_string(hbm + 1) + " bytes")) << e.what();
      EXPECT_TRUE(contains(e.what(), std::to_string(hbm) + " bytes free")) << e.what();
      EXPECT_TRUE(contains(e.what(), "largest free block " + std::to_string(hbm))) << e.what();
    }
    EXPECT_EQ(rt.malloc(0, hbm), 0u) << "freed blocks merged back into one";
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformRuntime, CopiesRoundTripInFunctionalMode) {
  Simulator sim(options("sohu-1", "functional"));
  sim.run([&](HostContext& host) {
    Runtime& rt = host.runtime();
    const Stream s = rt.create_stream(0);
    const std::uint64_t n = 64 * 1024;
    std::vector<std::uint8_t> in(n), out(n, 0);
    std::iota(in.begin(), in.end(), std::uint8_t{7});
    const HostBuffer h = rt.alloc_host(0, 2 * n);
    rt.write_host(h, 0, in.data(), n);
    const std::uint64_t d = rt.malloc(0, 2 * n);
    rt.memcpy_h2d_async(s, d, h, 0, n);
    rt.memcpy_d2d_async(s, d + n, d, n);
    rt.memcpy_d2h_async(s, h, n, d + n, n);
    rt.synchronize(s);
    rt.read_host(h, n, out.data(), n);
    EXPECT_EQ(in, out);
    EXPECT_THROW(rt.memcpy_h2d_async(s, d, h, n + 1, n), std::invalid_argument);  // past the buffer
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformRuntime, StreamWaitEventOrdersTwoStreams) {
  Simulator sim(options("sohu-1", "functional"));
  sim.run([&](HostContext& host) {
    Runtime& rt = host.runtime();
    const Stream s1 = rt.create_stream(0), s2 = rt.create_stream(0), s3 = rt.create_stream(0);
    const HostBuffer h = rt.alloc_host(0, 4096);
    // Stream 1 is held at a semaphore gate, then records its time and an event.
    rt.launch(s1, Program{"gated", {driver::sem_wait(3, 1), driver::timestamp(driver::Space::Host, h.dma.iova)}});
    const Event e = rt.record_event(s1);
    ASSERT_FALSE(e.empty);
    // Stream 2 waits for the event on the device, then records its time.
    rt.stream_wait_event(s2, e);
    rt.launch(s2, Program{"after", {driver::timestamp(driver::Space::Host, h.dma.iova + 8)}});
    host.access().spend_ns(200'000);
    rt.device(0).poll(s2.qid);
    EXPECT_EQ(rt.device(0).outstanding(s2.qid), 2u) << "stream 2 ran before stream 1's event";
    rt.launch(s3, Program{"open", {driver::sem_signal(3, driver::kLocalDevice, 1)}});
    rt.synchronize(e);
    rt.synchronize();
    std::uint64_t t[2] = {};
    rt.read_host(h, 0, t, sizeof t);
    EXPECT_GT(t[0], 0u);
    EXPECT_GE(t[1], t[0]) << "stream 2's timestamp precedes stream 1's";
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformRuntime, CallsCostAtLeastTheTableAndCarryIncreasingCorrelationIds) {
  Simulator sim(options("sohu-1"));
  sim.run([&](HostContext& host) {
    DeviceAccess& a = host.access();
    RuntimeOptions o;
    o.correlation_base = 1'000'000;
    o.costs.api_call_ns = 400;
    o.costs.launch_ns = 2000;
    o.costs.per_command_ns = 50;
    o.costs.malloc_ns = 700;
    o.costs.memcpy_setup_ns = 900;
    Runtime rt(a, o);  // the test's own runtime, with a cost table it knows
    std::uint64_t t0 = a.now_ns();
    const std::uint64_t d = rt.malloc(0, 4096);
    EXPECT_GE(a.now_ns() - t0, o.costs.api_call_ns + o.costs.malloc_ns);
    EXPECT_EQ(rt.last_correlation(), 1'000'001u);
    const Stream s = rt.create_stream(0);
    EXPECT_EQ(rt.last_correlation(), 1'000'002u);
    t0 = a.now_ns();
    rt.launch(s, Program{"four", std::vector<driver::Command>(4, driver::nop())});
    EXPECT_GE(a.now_ns() - t0, o.costs.api_call_ns + o.costs.launch_ns + 4 * o.costs.per_command_ns);
    EXPECT_EQ(rt.last_correlation(), 1'000'003u);
    const HostBuffer h = rt.alloc_host(0, 4096);
    t0 = a.now_ns();
    rt.memcpy_h2d_async(s, d, h, 0, 4096);
    EXPECT_GE(a.now_ns() - t0, o.costs.api_call_ns + o.costs.memcpy_setup_ns + o.costs.per_command_ns);
    const std::uint64_t before = rt.last_correlation();
    rt.synchronize();
    EXPECT_EQ(rt.last_correlation(), before + 1);
  });
}

SOHUSIM_SYSTEMC_TEST(PlatformRuntime, TwoDevicesOneHost) {
  Simulator sim(options("test-2", "functional"));
  sim.run([&](HostContext& host) {
    Runtime& rt = host.runtime();
    ASSERT_EQ(rt.device_count(), 2u);
    EXPECT_NE(rt.device_info(0).rid, rt.device_info(1).rid);
    const Stream s0 = rt.create_stream(0), s1 = rt.create_stream(1);
    const std::uint64_t n = 4096;
    std::vector<std::uint8_t> in(n), out(n, 0);
    std::iota(in.begin(), in.end(), std::uint8_t{1});
    const HostBuffer h0 = rt.alloc_host(0, n), h1 = rt.alloc_host(1, n);
    EXPECT_THROW(rt.memcpy_h2d_async(s1, 0, h0, 0, n), std::invalid_argument) << "h0 is mapped for device 0 only";
    rt.write_host(h0, 0, in.data(), n);
    const std::uint64_t d0 = rt.malloc(0, n), d1 = rt.malloc(1, n);
    rt.memcpy_h2d_async(s0, d0, h0, 0, n);
    const Event e = rt.record_event(s0);
    // Device 1's stream waits on the host for device 0's event, then works on its own data.
    rt.stream_wait_event(s1, e);
    rt.write_host(h1, 0, in.data(), n);
    rt.memcpy_h2d_async(s1, d1, h1, 0, n);
    rt.memcpy_d2h_async(s1, h1, 0, d1, n);
    rt.synchronize();
    rt.read_host(h1, 0, out.data(), n);
    EXPECT_EQ(in, out);
  });
}

}  // namespace
}  // namespace sohusim::platform::test
