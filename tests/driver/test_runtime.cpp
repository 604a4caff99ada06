// driver::Runtime against the in-process FakeDevice (fake_device.hpp), no SystemC: devices,
// device-memory allocation, pinned host buffers, launches and copies as the commands the fake
// receives, correlation ids, errors of asynchronous work, events and the ordering of streams.
// The same runtime on the simulated machine: tests/platform/test_driver.cpp.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "driver/fake_device.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/driver/runtime.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {
namespace {

using test::FakeDevice;
using test::FakeDeviceOptions;

std::uint64_t field(const Command& c, unsigned dw, unsigned shift, std::uint64_t mask) {
  std::uint64_t v = c.dw[dw];
  if (mask > 0xFFFFFFFFull) v |= static_cast<std::uint64_t>(c.dw[dw + 1]) << 32;
  return (v & mask) >> shift;
}
#define GET(c, F) field((c), F##_DW, F##_SHIFT, static_cast<std::uint64_t>(F##_MASK))

template <typename E, typename F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing thrown";
  return {};
}

std::vector<FakeDevice::Executed> executed_on(const FakeDevice& f, std::uint16_t qid) {
  std::vector<FakeDevice::Executed> out;
  for (const FakeDevice::Executed& e : f.executed()) {
    if (e.qid == qid) out.push_back(e);
  }
  return out;
}

/// A fake and a runtime over it.
struct Bench {
  explicit Bench(FakeDeviceOptions o = {}, RuntimeOptions r = {}) : fake(o), rt(fake, std::move(r)) {}
  FakeDevice fake;
  Runtime rt;
};

Program nops(const char* name, std::size_t n) {
  return Program{name, std::vector<Command>(n, nop())};
}

Command a_gemm() {
  GemmDesc g;
  g.m = g.k = g.n = 64;
  return gemm(g);
}

// ---- devices and memory -------------------------------------------------------------------------

TEST(DriverRuntime, ProbesAndEnablesEverySohuPhysicalFunction) {
  Bench b;
  ASSERT_EQ(b.rt.device_count(), 1u);
  EXPECT_EQ(b.rt.device_info(0).rid, b.fake.rid());
  EXPECT_EQ(b.rt.device_info(0).name, "fake0");
  EXPECT_EQ(b.fake.reg(SOHU_CTRL), SOHU_CTRL_EN_MASK);
  EXPECT_EQ(b.fake.reg(SOHU_STATUS), SOHU_STATUS_RDY_MASK);
  EXPECT_EQ(what_of<std::invalid_argument>([&] { b.rt.device_info(1); }),
            "device_info: device 1 does not exist (1 devices)");

  FakeDeviceOptions other;
  other.id = 0x1234'1E5Cu;
  Bench none(other);
  EXPECT_EQ(none.rt.device_count(), 0u) << "a function with other IDs is not driven";
  EXPECT_EQ(none.fake.reg(SOHU_CTRL), 0u);
}

TEST(DriverRuntime, MallocIsFirstFitWithAlignmentAndFreeMergesNeighbours) {
  Bench b;
  EXPECT_EQ(b.rt.malloc(0, 1000), 0u);
  EXPECT_EQ(b.rt.malloc(0, 100, 4096), 4096u);
  EXPECT_EQ(b.rt.malloc(0, 10), 1024u) << "the lowest 256-aligned gap that fits";
  EXPECT_EQ(b.rt.hbm_used(0), 1110u);
  b.rt.free(0, 0);
  EXPECT_EQ(b.rt.malloc(0, 1024), 0u) << "the freed block merged with the alignment gap after it";
  EXPECT_EQ(b.rt.hbm_used(0), 1134u);
  EXPECT_EQ(b.rt.hbm_peak(0), 1134u);
  for (const std::uint64_t a : {0ull, 1024ull, 4096ull}) b.rt.free(0, a);
  EXPECT_EQ(b.rt.hbm_used(0), 0u);
  EXPECT_EQ(b.rt.hbm_peak(0), 1134u);
  EXPECT_EQ(b.rt.malloc(0, 1ull << 30), 0u) << "all of HBM is one free block again";
  EXPECT_TRUE(b.fake.executed().empty()) << "allocation is host-side bookkeeping: no device command";
}

TEST(DriverRuntime, MallocAndFreeRefuseWhatTheyCannotServe) {
  FakeDeviceOptions o;
  o.hbm_bytes = 1ull << 20;
  Bench b(o);
  EXPECT_EQ(b.rt.malloc(0, 1ull << 19), 0u);
  EXPECT_EQ(what_of<std::invalid_argument>([&] { b.rt.malloc(0, (1ull << 19) + 1); }),
            "malloc(device 0, 524289 bytes, align 256): does not fit: 524288 bytes free, largest free block 524288 "
            "bytes (HBM 1048576 bytes)");
  EXPECT_NE(what_of<std::invalid_argument>([&] { b.rt.malloc(0, 0); }).find("zero bytes"), std::string::npos);
  EXPECT_NE(what_of<std::invalid_argument>([&] { b.rt.malloc(0, 16, 48); }).find("align is not a power of two"),
            std::string::npos);
  EXPECT_EQ(what_of<std::invalid_argument>([&] { b.rt.free(0, 0x3039); }),
            "free(device 0, 0x3039): not an address malloc returned, or already freed");
  EXPECT_EQ(what_of<std::invalid_argument>([&] { b.rt.malloc(1, 16); }), "malloc: device 1 does not exist (1 devices)");
  EXPECT_EQ(b.rt.hbm_used(0), 1ull << 19);
}

TEST(DriverRuntime, HostBuffersAreDmaMemoryWithCheckedRanges) {
  Bench b;
  const HostBuffer h = b.rt.alloc_host(0, 8192);
  EXPECT_EQ(h.device, 0u);
  EXPECT_EQ(h.dma.size, 8192u);
  EXPECT_EQ(h.dma.iova % 4096, 0u);
  b.rt.write_host(h, 100, "sohu", 4);
  char direct[4] = {};
  b.fake.host_read(h.dma.iova + 100, direct, 4);  // where the device's DMA would find it
  EXPECT_EQ(std::string(direct, 4), "sohu");
  char back[4] = {};
  b.rt.read_host(h, 100, back, 4);
  EXPECT_EQ(std::string(back, 4), "sohu");
  EXPECT_NE(what_of<std::invalid_argument>([&] {
              b.rt.write_host(h, 8190, "sohu", 4);
            }).find("write_host: offset 8190 + 4 bytes is outside the host buffer of 8192 bytes (IOVA 0x"),
            std::string::npos);
  EXPECT_THROW(b.rt.read_host(h, 8192, back, 1), std::invalid_argument);
  EXPECT_THROW(b.rt.alloc_host(0, 0), std::invalid_argument);
}

// ---- launches, copies, correlation ids ------------------------------------------------------------

TEST(DriverRuntime, LaunchSubmitsTheProgramAsOneBatchWithOneInterrupt) {
  Bench b;
  const Stream s = b.rt.create_stream(0);
  EXPECT_EQ(s.qid, 1);
  EXPECT_EQ(b.fake.sq(s.qid)->entries, 1024u) << "queue_entries 4096, clamped to CAP0.MQES + 1";
  b.rt.launch(s, nops("three", 3));
  const std::uint64_t id = b.rt.last_correlation();
  EXPECT_EQ(b.fake.doorbells(s.qid, true), (std::vector<std::uint32_t>{3}));
  b.rt.synchronize(s);
  EXPECT_EQ(b.rt.device(0).outstanding(s.qid), 0u);
  const std::vector<FakeDevice::Executed> ex = executed_on(b.fake, s.qid);
  ASSERT_EQ(ex.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ex[i].cmd.correlation(), id);
    EXPECT_EQ(GET(ex[i].cmd, SOHU_SQE_NO_COMPLETION_IRQ), i < 2 ? 1u : 0u) << "command " << i;
  }
  EXPECT_EQ(b.fake.interrupts_raised(1), 1u);
  b.rt.launch(s, Program{"empty", {}});
  EXPECT_EQ(b.fake.doorbells(s.qid, true).size(), 1u) << "an empty program submits nothing";
}

TEST(DriverRuntime, EveryCallTakesTheNextCorrelationIdAndGettersNone) {
  RuntimeOptions r;
  r.correlation_base = 1000;
  Bench b({}, r);
  EXPECT_EQ(b.rt.last_correlation(), 1000u);
  b.rt.malloc(0, 64);
  EXPECT_EQ(b.rt.last_correlation(), 1001u);
  b.rt.hbm_used(0);
  b.rt.device_info(0);
  EXPECT_EQ(b.rt.last_correlation(), 1001u);
  const Stream s = b.rt.create_stream(0);
  b.rt.launch(s, nops("one", 1));
  EXPECT_EQ(b.rt.last_correlation(), 1003u);
  b.rt.synchronize(s);
  EXPECT_EQ(b.rt.last_correlation(), 1004u);
  ASSERT_EQ(executed_on(b.fake, s.qid).size(), 1u);
  EXPECT_EQ(executed_on(b.fake, s.qid)[0].cmd.correlation(), 1003u);
}

TEST(DriverRuntime, CopiesAreDmaCopiesBetweenTheHostBufferAndHbm) {
  Bench b;
  const Stream s = b.rt.create_stream(0);
  const HostBuffer h = b.rt.alloc_host(0, 4096);
  const std::uint64_t d = b.rt.malloc(0, 4096);
  b.rt.memcpy_h2d_async(s, d, h, 512, 1024);
  b.rt.memcpy_d2h_async(s, h, 0, d + 16, 64);
  b.rt.memcpy_d2d_async(s, d + 2048, d, 100);
  b.rt.memcpy_h2d_async(s, d, h, 0, 0);  // nothing to copy: nothing submitted
  b.rt.synchronize(s);
  const std::vector<FakeDevice::Executed> ex = executed_on(b.fake, s.qid);
  ASSERT_EQ(ex.size(), 3u);
  struct Want {
    std::uint64_t src, dst, length;
    unsigned src_space, dst_space;
  };
  const Want want[3] = {{h.dma.iova + 512, d, 1024, SOHU_SPACE_HOST, SOHU_SPACE_HBM},
                        {d + 16, h.dma.iova, 64, SOHU_SPACE_HBM, SOHU_SPACE_HOST},
                        {d, d + 2048, 100, SOHU_SPACE_HBM, SOHU_SPACE_HBM}};
  for (std::size_t i = 0; i < 3; ++i) {
    const Command& c = ex[i].cmd;
    EXPECT_EQ(c.opcode(), SOHU_IO_OP_DMA_COPY) << i;
    EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_SRC), want[i].src) << i;
    EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_DST), want[i].dst) << i;
    EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_LENGTH), want[i].length) << i;
    EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_SRC_SPACE), want[i].src_space) << i;
    EXPECT_EQ(GET(c, SOHU_IO_DMA_COPY_DST_SPACE), want[i].dst_space) << i;
  }
  EXPECT_NE(what_of<std::invalid_argument>([&] {
              b.rt.memcpy_h2d_async(s, d, h, 4000, 100);
            }).find("memcpy_h2d_async: offset 4000 + 100 bytes is outside the host buffer of 4096 bytes"),
            std::string::npos);
  EXPECT_EQ(what_of<std::invalid_argument>([&] { b.rt.memcpy_d2d_async(s, (1ull << 30) - 10, 0, 100); }),
            "memcpy_d2d_async destination: device range 0x3FFFFFF6 + 100 bytes is outside device 0's HBM (1073741824 "
            "bytes)");
  EXPECT_EQ(b.fake.doorbells(s.qid, true).size(), 3u) << "refused copies submit nothing";
}

TEST(DriverRuntime, UnknownStreamsAndDevicesAreInvalidArguments) {
  Bench b;
  EXPECT_EQ(what_of<std::invalid_argument>([&] {
              b.rt.launch(Stream{0, 5}, nops("p", 1));
            }),
            "launch: stream (device 0, queue 5) was not created by create_stream");
  EXPECT_EQ(what_of<std::invalid_argument>([&] { b.rt.create_stream(3); }),
            "create_stream: device 3 does not exist (1 devices)");
  EXPECT_TRUE(executed_on(b.fake, 0).empty()) << "no admin command for a refused call";
}

// ---- errors, events, streams ----------------------------------------------------------------------

TEST(DriverRuntime, SynchronizeThrowsTheErrorOfAsyncWorkWithItsCallsCorrelationId) {
  Bench b;
  const Stream s = b.rt.create_stream(0);
  b.fake.on_command = [](std::uint16_t, const Command& c) {
    return c.opcode() == SOHU_IO_OP_GEMM ? FakeDevice::Outcome{SOHU_STATUS_INVALID_DIMENSIONS, 0}
                                         : FakeDevice::Outcome{};
  };
  b.rt.launch(s, Program{"bad", {nop(), a_gemm(), nop()}});
  const std::uint64_t id = b.rt.last_correlation();
  b.rt.launch(s, nops("after", 2));
  try {
    b.rt.synchronize(s);
    FAIL() << "the GEMM's failure was not reported";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.status(), SOHU_STATUS_INVALID_DIMENSIONS);
    EXPECT_EQ(e.opcode(), SOHU_IO_OP_GEMM);
    EXPECT_EQ(e.cid(), 2);
    EXPECT_EQ(e.correlation(), id) << "the launch that submitted it, not the synchronize";
  }
  EXPECT_EQ(b.rt.device(0).outstanding(s.qid), 0u);
  EXPECT_EQ(executed_on(b.fake, s.qid).size(), 5u) << "the commands after the error ran";
  b.fake.on_command = nullptr;
  b.rt.launch(s, nops("good", 1));
  EXPECT_NO_THROW(b.rt.synchronize(s));
  EXPECT_NO_THROW(b.rt.synchronize());
}

TEST(DriverRuntime, AnEventIsASignalOfItsStreamsSemaphore) {
  FakeDeviceOptions o;
  o.command_ns = 1'000'000;  // nothing completes while the host records
  Bench b(o);
  const Stream s = b.rt.create_stream(0);
  const Event idle = b.rt.record_event(s);
  EXPECT_TRUE(idle.empty) << "nothing in flight: already complete";
  b.rt.synchronize(idle);
  b.rt.launch(s, nops("first", 1));
  const Event e1 = b.rt.record_event(s);
  b.rt.launch(s, nops("second", 1));
  const Event e2 = b.rt.record_event(s);
  EXPECT_FALSE(e1.empty);
  EXPECT_EQ(e1.sem, 255) << "semaphore 256 - qid";
  EXPECT_EQ(e1.sem_value, 1u);
  EXPECT_EQ(e1.seq, 2u);
  EXPECT_EQ(e2.sem, 255);
  EXPECT_EQ(e2.sem_value, 2u);
  EXPECT_EQ(e2.seq, 4u);
  b.rt.synchronize(e1);
  EXPECT_EQ(b.fake.semaphore(255), 1u) << "e1's signal ran";
  EXPECT_EQ(b.rt.device(0).outstanding(s.qid), 2u) << "the work after e1 is still running";
  const std::vector<FakeDevice::Executed> ex = executed_on(b.fake, s.qid);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1].cmd.opcode(), SOHU_IO_OP_SEM_SIGNAL);
  EXPECT_EQ(GET(ex[1].cmd, SOHU_IO_SEM_SIGNAL_SEM), 255u);
  EXPECT_EQ(GET(ex[1].cmd, SOHU_IO_SEM_SIGNAL_DEVICE), SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL);
  EXPECT_EQ(GET(ex[1].cmd, SOHU_IO_SEM_SIGNAL_VALUE), 1u);
  b.rt.synchronize(e2);
  EXPECT_EQ(b.fake.semaphore(255), 2u);
  EXPECT_EQ(b.rt.device(0).outstanding(s.qid), 0u);
}

TEST(DriverRuntime, StreamWaitEventOrdersOneStreamAfterAnother) {
  FakeDeviceOptions o;
  o.command_ns = 10'000;
  Bench b(o);
  const Stream s1 = b.rt.create_stream(0);
  const Stream s2 = b.rt.create_stream(0);
  const auto time_of = [&](std::uint16_t qid, std::uint8_t opcode) {
    std::uint64_t t = 0;
    for (const FakeDevice::Executed& e : executed_on(b.fake, qid)) {
      if (e.cmd.opcode() == opcode) t = e.time_ns;  // the last one
    }
    return t;
  };
  // Streams run side by side: s2's single GEMM ends long before s1's ten NOPs.
  b.rt.launch(s1, nops("long", 10));
  b.rt.launch(s2, Program{"short", {a_gemm()}});
  b.rt.synchronize();
  EXPECT_LT(time_of(s2.qid, SOHU_IO_OP_GEMM), time_of(s1.qid, SOHU_IO_OP_NOP));

  // Made to wait for an event recorded after s1's work, s2's GEMM runs after it.
  b.rt.launch(s1, nops("long", 10));
  const Event e = b.rt.record_event(s1);
  b.rt.stream_wait_event(s2, e);
  b.rt.launch(s2, Program{"short", {a_gemm()}});
  b.rt.synchronize();
  const std::vector<FakeDevice::Executed> second = executed_on(b.fake, s2.qid);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[1].cmd.opcode(), SOHU_IO_OP_SEM_WAIT);
  EXPECT_EQ(GET(second[1].cmd, SOHU_IO_SEM_WAIT_SEM), 255u);
  EXPECT_EQ(GET(second[1].cmd, SOHU_IO_SEM_WAIT_VALUE), 1u);
  const std::uint64_t signal = time_of(s1.qid, SOHU_IO_OP_SEM_SIGNAL);
  EXPECT_GT(signal, time_of(s1.qid, SOHU_IO_OP_NOP)) << "the signal follows s1's program";
  EXPECT_GT(second[1].time_ns, signal);
  EXPECT_GT(second[2].time_ns, signal);
  EXPECT_EQ(b.rt.device(0).outstanding(s1.qid) + b.rt.device(0).outstanding(s2.qid), 0u);
  // The same stream, or an empty event: nothing to wait for, nothing submitted.
  const std::size_t doorbells = b.fake.doorbells(s2.qid, true).size();
  b.rt.stream_wait_event(s2, b.rt.record_event(s2));
  EXPECT_EQ(b.fake.doorbells(s2.qid, true).size(), doorbells);
}

TEST(DriverRuntime, PollingStreamsCompleteWithoutInterrupts) {
  RuntimeOptions r;
  r.completion = CompletionMode::Polling;
  Bench b({}, r);
  const Stream s = b.rt.create_stream(0);
  EXPECT_FALSE(b.fake.cq(s.qid)->ien);
  const std::uint64_t polled = b.fake.polled_ns();
  b.rt.launch(s, nops("p", 3));
  b.rt.synchronize(s);
  EXPECT_EQ(executed_on(b.fake, s.qid).size(), 3u);
  EXPECT_GT(b.fake.polled_ns(), polled);
  for (unsigned v = 1; v < 8; ++v) EXPECT_EQ(b.fake.interrupts_raised(v), 0u) << "vector " << v;
}

}  // namespace
}  // namespace sohusim::driver
