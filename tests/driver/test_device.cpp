// driver::Device against the in-process FakeDevice (fake_device.hpp), no SystemC: bring-up,
// queue creation and deletion, submission and reaping (doorbell values, CQ head, phase across
// wraps), error completions, interrupt-driven and polled waits, timeouts of a device that never
// completes, and bad input. Exact values come from the fake's record of what the driver did.
// The same driver on the simulated machine: tests/platform/test_driver.cpp.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "driver/fake_device.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/driver/device.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver {
namespace {

using test::FakeDevice;
using test::FakeDeviceOptions;

// A field of a command, by the register map's macros (64-bit fields span two dwords).
std::uint64_t field(const Command& c, unsigned dw, unsigned shift, std::uint64_t mask) {
  std::uint64_t v = c.dw[dw];
  if (mask > 0xFFFFFFFFull) v |= static_cast<std::uint64_t>(c.dw[dw + 1]) << 32;
  return (v & mask) >> shift;
}
#define GET(c, F) field((c), F##_DW, F##_SHIFT, static_cast<std::uint64_t>(F##_MASK))

/// The what() of the E that f throws ("" and a failure if it throws nothing).
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

/// Commands the fake completed on queue `qid`, in completion order.
std::vector<FakeDevice::Executed> executed_on(const FakeDevice& f, std::uint16_t qid) {
  std::vector<FakeDevice::Executed> out;
  for (const FakeDevice::Executed& e : f.executed()) {
    if (e.qid == qid) out.push_back(e);
  }
  return out;
}

std::vector<std::uint8_t> opcodes(const std::vector<FakeDevice::Executed>& ex) {
  std::vector<std::uint8_t> out;
  for (const FakeDevice::Executed& e : ex) out.push_back(e.cmd.opcode());
  return out;
}

/// Commands complete at their doorbell: what the driver sees does not depend on its costs.
FakeDeviceOptions immediate(FakeDeviceOptions o = {}) {
  o.command_ns = 0;
  return o;
}

/// A fake and a driver on it, probed and enabled.
struct Enabled {
  explicit Enabled(FakeDeviceOptions o = {}) : fake(o), dev(fake, fake.rid()) {
    dev.probe();
    dev.enable();
  }
  FakeDevice fake;
  Device dev;
};

FakeDevice::Outcome fail_gemms(std::uint16_t, const Command& c) {
  if (c.opcode() == SOHU_IO_OP_GEMM) return FakeDevice::Outcome{SOHU_STATUS_OUT_OF_RANGE, 0x24'0000'1000ull};
  return {};
}

// ---- bring-up -----------------------------------------------------------------------------------

TEST(DriverDevice, ProbeReadsIdentityCapabilitiesAndBars) {
  FakeDeviceOptions o;
  o.max_queues = 5;
  o.max_queue_entries = 256;
  o.msix_vectors = 6;
  o.hbm_bytes = 3ull << 30;
  FakeDevice fake(o);
  Device d(fake, fake.rid());
  const DeviceInfo& i = d.probe();
  EXPECT_EQ(i.name, "fake0");
  EXPECT_EQ(i.vendor_id, 0x1E5C);
  EXPECT_EQ(i.device_id, 0x5001);
  EXPECT_EQ(i.version_major, 1u);
  EXPECT_EQ(i.version_minor, 0u);
  EXPECT_FALSE(i.virtual_function);
  EXPECT_EQ(i.bar0.address, fake.bar(fake.rid(), 0).address);
  EXPECT_EQ(i.bar0.size, SOHU_BAR0_SIZE);
  EXPECT_TRUE(i.bar0.is_64bit);
  EXPECT_FALSE(i.bar0.prefetchable);
  EXPECT_EQ(i.bar2.address, fake.bar(fake.rid(), 2).address);
  EXPECT_EQ(i.bar2.size, 4ull << 30);  // sized through config space: the power of two above 3 GiB
  EXPECT_TRUE(i.bar2.prefetchable);
  EXPECT_EQ(i.max_queues, 5u);
  EXPECT_EQ(i.max_queue_entries, 256u);
  EXPECT_EQ(i.doorbell_stride, 4096u);
  EXPECT_EQ(i.hbm_bytes, 3ull << 30);
  EXPECT_EQ(i.sram_bytes, 64ull << 20);
  EXPECT_EQ(i.matrix_engines, 4u);
  EXPECT_EQ(i.vector_engines, 2u);
  EXPECT_EQ(i.dma_channels, 4u);
  EXPECT_EQ(i.clock_mhz, 1500u);
  EXPECT_EQ(i.capabilities, (std::vector<std::uint8_t>{0x01, 0x10, 0x11}));
  EXPECT_EQ(i.ext_capabilities, (std::vector<std::uint16_t>{0x0001}));
  EXPECT_EQ(i.msix_vectors, 6u);  // min(64 asked, the table's 6)
  EXPECT_EQ(i.sriov_total_vfs, 0u);
  // Sizing put the BARs back where enumeration placed them, and turned on memory decoding,
  // bus mastering and MSI-X.
  EXPECT_EQ(fake.config_read32(fake.rid(), 0x10) & ~0xFu, static_cast<std::uint32_t>(i.bar0.address));
  EXPECT_EQ(fake.config_read32(fake.rid(), 0x18) & ~0xFu, 0u);
  EXPECT_EQ(fake.config_read32(fake.rid(), 0x1C), static_cast<std::uint32_t>(i.bar2.address >> 32));
  EXPECT_EQ(fake.config_read32(fake.rid(), 0x04) & 0x6u, 0x6u);
  EXPECT_EQ(fake.config_read32(fake.rid(), 0x70) >> 31, 1u);
  EXPECT_TRUE(fake.writes().empty()) << "probe only reads BAR0";
}

TEST(DriverDevice, ProbeRefusesAnotherDeviceAndAnotherInterfaceVersion) {
  FakeDeviceOptions other;
  other.id = 0x1234'1E5Cu;
  FakeDevice a(other);
  Device da(a, a.rid());
  EXPECT_NE(what_of<ProbeError>([&] {
              da.probe();
            }).find("fake0: vendor 0x1E5C device 0x1234 is not a Sohu device (expected vendor 0x1E5C device 0x5001)"),
            std::string::npos);

  FakeDeviceOptions v2;
  v2.version = 0x0002'0003u;
  FakeDevice b(v2);
  Device db(b, b.rid());
  EXPECT_NE(what_of<ProbeError>([&] {
              db.probe();
            }).find("register interface version 2.0.3; this driver supports major version 1"),
            std::string::npos);
  EXPECT_THROW(db.enable(), DriverError);  // not probed
}

TEST(DriverDevice, AnUnknownFunctionIsAnAccessErrorNamingIt) {
  FakeDevice fake;
  Device d(fake, 0x0208);
  EXPECT_NE(what_of<AccessError>([&] { d.probe(); }).find("config_read32: no function 0x208"), std::string::npos);
  EXPECT_THROW(fake.alloc_dma(0x0208, 4096), AccessError);
  EXPECT_THROW(fake.wait_interrupt(0x0208, 0, 1000), AccessError);
}

TEST(DriverDevice, EnableProgramsTheAdminQueueAndWaitsForReady) {
  FakeDeviceOptions o;
  o.ready_ns = 50'000;
  FakeDevice fake(o);
  Device d(fake, fake.rid());
  d.probe();
  const std::uint64_t t0 = fake.now_ns();
  d.enable(32);
  EXPECT_GE(fake.now_ns() - t0, 50'000u) << "enable returned before STATUS.RDY";
  EXPECT_LT(fake.now_ns() - t0, 52'000u);
  const FakeDevice::Sq* asq = fake.sq(0);
  const FakeDevice::Cq* acq = fake.cq(0);
  ASSERT_NE(asq, nullptr);
  ASSERT_NE(acq, nullptr);
  EXPECT_EQ(asq->entries, 32u);
  EXPECT_EQ(acq->entries, 32u);
  EXPECT_EQ(asq->base % 4096, 0u);
  EXPECT_EQ(acq->base % 4096, 0u);
  // AQA, ASQ, ACQ, then CTRL.EN (nothing to stop first: the controller was off).
  ASSERT_EQ(fake.writes().size(), 4u);
  EXPECT_EQ(fake.writes()[0].offset, SOHU_AQA);
  EXPECT_EQ(fake.writes()[0].value, 31u | (31u << 16));
  EXPECT_EQ(fake.writes()[1].offset, SOHU_ASQ);
  EXPECT_EQ(fake.writes()[1].value, asq->base);
  EXPECT_EQ(fake.writes()[2].offset, SOHU_ACQ);
  EXPECT_EQ(fake.writes()[2].value, acq->base);
  EXPECT_EQ(fake.writes()[3].offset, SOHU_CTRL);
  EXPECT_EQ(fake.writes()[3].value, SOHU_CTRL_EN_MASK);
  EXPECT_EQ(fake.reg(SOHU_STATUS), SOHU_STATUS_RDY_MASK);
}

TEST(DriverDevice, EnableStopsAControllerAnEarlierDriverLeftRunning) {
  FakeDevice fake(immediate());
  {
    Device first(fake, fake.rid());
    first.probe();
    first.enable();
    EXPECT_EQ(first.create_queue(8), 1);
  }
  Device d(fake, fake.rid());
  d.probe();
  const std::size_t before = fake.writes().size();
  d.enable();
  ASSERT_EQ(fake.writes().size(), before + 5);
  EXPECT_EQ(fake.writes()[before].offset, SOHU_CTRL);
  EXPECT_EQ(fake.writes()[before].value, 0u);
  EXPECT_EQ(fake.writes()[before + 4].offset, SOHU_CTRL);
  EXPECT_EQ(fake.writes()[before + 4].value, SOHU_CTRL_EN_MASK);
  EXPECT_EQ(fake.sq(1), nullptr) << "disabling the controller dropped the earlier driver's queue";
  EXPECT_EQ(d.create_queue(8), 1);
}

TEST(DriverDevice, EnableTimesOutWhenTheControllerNeverBecomesReady) {
  FakeDevice fake;
  fake.hung = true;
  Device d(fake, fake.rid());
  d.probe();
  const std::uint64_t t0 = fake.now_ns();
  const std::string w = what_of<TimeoutError>([&] { d.enable(64, 2'000'000); });
  EXPECT_NE(w.find("fake0: enable: STATUS is 0x0 after "), std::string::npos) << w;
  EXPECT_NE(w.find("(waiting for STATUS & 0x1 == 0x1)"), std::string::npos) << w;
  EXPECT_GE(fake.now_ns() - t0, 2'000'000u);
  EXPECT_LT(fake.now_ns() - t0, 2'010'000u);
}

TEST(DriverDevice, BadAdminSizesAndCallsOutOfOrderAreRefused) {
  FakeDevice fake;
  Device d(fake, fake.rid());
  // Before probe the driver has no name for the function but its RID.
  EXPECT_EQ(what_of<DriverError>([&] { d.enable(); }), "function 01:00.0: enable() before probe()");
  EXPECT_EQ(what_of<DriverError>([&] { d.read32(SOHU_ID); }), "function 01:00.0: read32(0x0) before probe()");
  d.probe();
  EXPECT_NE(what_of<DriverError>([&] {
              d.submit(0, nop());
            }).find("fake0: submit while the controller is not enabled (call enable())"),
            std::string::npos);
  EXPECT_NE(what_of<std::invalid_argument>([&] {
              d.enable(1);
            }).find("fake0: enable: 1 admin queue entries (allowed 2 .. 1024)"),
            std::string::npos);
  EXPECT_THROW(d.enable(1025), std::invalid_argument);
  EXPECT_TRUE(fake.writes().empty()) << "nothing reached the device";
}

TEST(DriverDevice, ShutdownSetsShnAndWaitsForShutdownComplete) {
  Enabled b;
  b.dev.shutdown();
  EXPECT_EQ(b.fake.writes().back().offset, SOHU_CTRL);
  EXPECT_EQ(b.fake.writes().back().value, SOHU_CTRL_EN_MASK | (SOHU_CTRL_SHN_NORMAL << SOHU_CTRL_SHN_SHIFT));
  EXPECT_EQ(b.fake.reg(SOHU_STATUS) & SOHU_STATUS_SHST_MASK, SOHU_STATUS_SHST_COMPLETE << SOHU_STATUS_SHST_SHIFT);
  EXPECT_THROW(b.dev.submit(0, nop()), DriverError);
}

// ---- queues ---------------------------------------------------------------------------------------

TEST(DriverDevice, CreateQueueSendsCreateCqThenCreateSqWithTheQueueGeometry) {
  FakeDeviceOptions o;
  o.msix_vectors = 3;  // vector 0 for the admin queue, 1 and 2 shared round-robin by I/O queues
  Enabled b(o);
  EXPECT_EQ(b.dev.create_queue(16, CompletionMode::Interrupt), 1);
  EXPECT_EQ(b.dev.create_queue(32, CompletionMode::Polling), 2);
  EXPECT_EQ(b.dev.create_queue(8, CompletionMode::Interrupt), 3);
  const std::vector<FakeDevice::Executed> admin = executed_on(b.fake, 0);
  ASSERT_EQ(admin.size(), 6u);
  EXPECT_EQ(opcodes(admin),
            (std::vector<std::uint8_t>{SOHU_ADMIN_OP_CREATE_CQ, SOHU_ADMIN_OP_CREATE_SQ, SOHU_ADMIN_OP_CREATE_CQ,
                                       SOHU_ADMIN_OP_CREATE_SQ, SOHU_ADMIN_OP_CREATE_CQ, SOHU_ADMIN_OP_CREATE_SQ}));
  const Command& cq1 = admin[0].cmd;
  EXPECT_EQ(GET(cq1, SOHU_ADMIN_CREATE_CQ_QID), 1u);
  EXPECT_EQ(GET(cq1, SOHU_ADMIN_CREATE_CQ_QSIZE), 15u);
  EXPECT_EQ(GET(cq1, SOHU_ADMIN_CREATE_CQ_VECTOR), 1u);
  EXPECT_EQ(GET(cq1, SOHU_ADMIN_CREATE_CQ_IEN), 1u);
  EXPECT_EQ(GET(cq1, SOHU_ADMIN_CREATE_CQ_BASE), b.fake.cq(1)->base);
  const Command& sq1 = admin[1].cmd;
  EXPECT_EQ(GET(sq1, SOHU_ADMIN_CREATE_SQ_QID), 1u);
  EXPECT_EQ(GET(sq1, SOHU_ADMIN_CREATE_SQ_QSIZE), 15u);
  EXPECT_EQ(GET(sq1, SOHU_ADMIN_CREATE_SQ_CQID), 1u);
  EXPECT_EQ(GET(sq1, SOHU_ADMIN_CREATE_SQ_BASE), b.fake.sq(1)->base);
  EXPECT_EQ(GET(admin[2].cmd, SOHU_ADMIN_CREATE_CQ_IEN), 0u);  // polling: no interrupts
  EXPECT_EQ(GET(admin[2].cmd, SOHU_ADMIN_CREATE_CQ_QSIZE), 31u);
  EXPECT_EQ(b.fake.cq(1)->vector, 1u);
  EXPECT_FALSE(b.fake.cq(2)->ien);
  EXPECT_EQ(b.fake.cq(3)->vector, 1u) << "1 + (3 - 1) mod (3 - 1): queue 3 shares queue 1's vector";
  EXPECT_EQ(b.fake.sq(3)->entries, 8u);
  // One SQ tail doorbell per admin command; one CQ head doorbell per reap.
  EXPECT_EQ(b.fake.doorbells(0, true), (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(b.fake.doorbells(0, false), (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(DriverDevice, CreateQueueRefusesBadSizesAndRunsOutOfQueueIds) {
  FakeDeviceOptions o;
  o.max_queues = 2;
  o.max_queue_entries = 64;
  Enabled b(o);
  EXPECT_NE(what_of<std::invalid_argument>([&] {
              b.dev.create_queue(65);
            }).find("fake0: create_queue: 65 entries (allowed 2 .. 64, CAP0.MQES + 1)"),
            std::string::npos);
  EXPECT_THROW(b.dev.create_queue(1), std::invalid_argument);
  EXPECT_TRUE(b.fake.executed().empty());
  EXPECT_EQ(b.dev.create_queue(64), 1);
  EXPECT_EQ(b.dev.create_queue(2), 2);
  EXPECT_NE(what_of<DriverError>([&] {
              b.dev.create_queue(8);
            }).find("fake0: create_queue: all 2 I/O queue pairs (CAP0.MQP) are in use"),
            std::string::npos);
  EXPECT_EQ(b.fake.executed().size(), 4u);
}

TEST(DriverDevice, AFailedCreateSqDeletesTheCqAgainAndNamesTheStatus) {
  Enabled b;
  b.fake.on_command = [](std::uint16_t qid, const Command& c) {
    if (qid == 0 && c.opcode() == SOHU_ADMIN_OP_CREATE_SQ) return FakeDevice::Outcome{SOHU_STATUS_INVALID_QUEUE_SIZE};
    return FakeDevice::Outcome{};
  };
  try {
    b.dev.create_queue(8);
    FAIL() << "create_queue succeeded";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.status(), SOHU_STATUS_INVALID_QUEUE_SIZE);
    EXPECT_EQ(e.opcode(), SOHU_ADMIN_OP_CREATE_SQ);
    EXPECT_EQ(e.qid(), 0);
    EXPECT_EQ(e.cid(), 2);
    EXPECT_EQ(std::string(e.what()),
              "CREATE_SQ (qid 0, cid 2, correlation 0) failed: INVALID_QUEUE_SIZE \xE2\x80\x94 error log: "
              "INVALID_QUEUE_SIZE at address 0x0 [fake0]");
  }
  EXPECT_EQ(opcodes(executed_on(b.fake, 0)),
            (std::vector<std::uint8_t>{SOHU_ADMIN_OP_CREATE_CQ, SOHU_ADMIN_OP_CREATE_SQ, SOHU_ADMIN_OP_DELETE_CQ}));
  EXPECT_EQ(b.fake.cq(1), nullptr);
  EXPECT_EQ(b.fake.error_log_size(), 0u) << "the driver acknowledged the entry it read";
  b.fake.on_command = nullptr;
  EXPECT_EQ(b.dev.create_queue(8), 1);
}

TEST(DriverDevice, DeleteQueueFreesItsIdAndUnknownQueuesAreInvalidArguments) {
  Enabled b(immediate());
  EXPECT_EQ(b.dev.create_queue(8), 1);
  EXPECT_EQ(b.dev.create_queue(8), 2);
  b.dev.delete_queue(1);
  const std::vector<FakeDevice::Executed> admin = executed_on(b.fake, 0);
  ASSERT_EQ(admin.size(), 6u);
  EXPECT_EQ(admin[4].cmd.opcode(), SOHU_ADMIN_OP_DELETE_SQ);
  EXPECT_EQ(GET(admin[4].cmd, SOHU_ADMIN_DELETE_SQ_QID), 1u);
  EXPECT_EQ(admin[5].cmd.opcode(), SOHU_ADMIN_OP_DELETE_CQ);
  EXPECT_EQ(GET(admin[5].cmd, SOHU_ADMIN_DELETE_CQ_QID), 1u);
  EXPECT_EQ(b.fake.sq(1), nullptr);
  EXPECT_EQ(b.fake.cq(1), nullptr);
  EXPECT_NE(b.fake.sq(2), nullptr);
  EXPECT_NE(what_of<std::invalid_argument>([&] {
              b.dev.submit(1, nop());
            }).find("fake0: submit: queue 1 does not exist (I/O queues: 2)"),
            std::string::npos);
  EXPECT_NE(what_of<std::invalid_argument>([&] {
              b.dev.wait(Ticket{7, 1});
            }).find("wait: queue 7 does not exist"),
            std::string::npos);
  EXPECT_NE(what_of<std::invalid_argument>([&] { b.dev.delete_queue(0); }).find("queue 0 is the admin queue"),
            std::string::npos);
  EXPECT_EQ(b.dev.create_queue(8), 1) << "the lowest free id is reused";
}

// ---- submission and completion ---------------------------------------------------------------------

TEST(DriverDevice, SubmitStoresTheEntriesAndRingsTheTailDoorbellOncePerBatch) {
  Enabled b;
  const std::uint16_t q = b.dev.create_queue(8);
  const std::size_t writes_before = b.fake.writes().size();
  GemmDesc g;
  g.m = g.k = g.n = 64;
  const std::vector<Ticket> t = b.dev.submit(q, {nop(), gemm(g), nop()}, 77);
  ASSERT_EQ(t.size(), 3u);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(t[i].qid, q);
    EXPECT_EQ(t[i].cid, i + 1);
  }
  EXPECT_EQ(b.fake.writes().size(), writes_before + 1) << "one MMIO write for the whole batch";
  EXPECT_EQ(b.fake.doorbells(q, true), (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(b.dev.outstanding(q), 3u);
  // The entries as they are in host memory: the driver's CIDs and the batch's correlation id.
  const std::uint8_t expect_op[3] = {SOHU_IO_OP_NOP, SOHU_IO_OP_GEMM, SOHU_IO_OP_NOP};
  for (unsigned i = 0; i < 3; ++i) {
    Command c;
    b.fake.host_read(b.fake.sq(q)->base + 64ull * i, c.dw.data(), 64);
    EXPECT_EQ(c.opcode(), expect_op[i]);
    EXPECT_EQ(c.cid(), i + 1);
    EXPECT_EQ(c.correlation(), 77u);
  }
  b.dev.drain(q, 10'000'000);
  EXPECT_EQ(b.dev.outstanding(q), 0u);
  EXPECT_EQ(executed_on(b.fake, q).size(), 3u);
}

TEST(DriverDevice, ReapsCompletionsAcrossThePhaseWrap) {
  Enabled b(immediate());
  const std::uint16_t q = b.dev.create_queue(4);
  for (unsigned round = 0; round < 4; ++round) {
    const std::vector<Ticket> t = b.dev.submit(q, std::vector<Command>(3, nop()), round);
    const Completion c = b.dev.wait(t.back());
    EXPECT_EQ(c.cid, t.back().cid);
    EXPECT_EQ(c.sq_id, q);
    EXPECT_EQ(c.status, 0);
    EXPECT_EQ(c.sq_head, (3 * (round + 1)) % 4) << "the device's SQ head after fetching it";
    EXPECT_EQ(b.dev.wait(t[0]).cid, t[0].cid);  // reaped with the last one
    EXPECT_EQ(b.dev.wait(t[1]).cid, t[1].cid);
    EXPECT_EQ(b.dev.outstanding(q), 0u);
    if (round == 1) {
      // Six completions in a ring of four: slots 0 and 1 hold the second pass (phase 0), slot
      // 2 still the first pass's entry (phase 1), where the driver's CQ head stopped.
      EXPECT_EQ(b.fake.cq(q)->head, 2u);
      EXPECT_FALSE(b.fake.cqe(q, 0).phase);
      EXPECT_EQ(b.fake.cqe(q, 0).cid, 5);
      EXPECT_FALSE(b.fake.cqe(q, 1).phase);
      EXPECT_TRUE(b.fake.cqe(q, 2).phase);
      EXPECT_EQ(b.fake.cqe(q, 2).cid, 3);
      EXPECT_TRUE(b.fake.cqe(q, 3).phase);
    }
  }
  // Twelve commands through four slots: tails and heads go round three times.
  EXPECT_EQ(b.fake.doorbells(q, true), (std::vector<std::uint32_t>{3, 2, 1, 0}));
  EXPECT_EQ(b.fake.doorbells(q, false), (std::vector<std::uint32_t>{3, 2, 1, 0}));
  EXPECT_EQ(executed_on(b.fake, q).size(), 12u);
  EXPECT_EQ(executed_on(b.fake, q).back().cmd.cid(), 12);
}

TEST(DriverDevice, ASubmitLargerThanTheRingRingsWhatFitsAndWaitsForRoom) {
  Enabled b(immediate());
  const std::uint16_t q = b.dev.create_queue(4);  // three slots usable: one stays empty
  const std::vector<Ticket> t = b.dev.submit(q, std::vector<Command>(10, nop()), 5);
  ASSERT_EQ(t.size(), 10u);
  b.dev.drain(q, 10'000'000);
  EXPECT_EQ(b.fake.doorbells(q, true), (std::vector<std::uint32_t>{3, 2, 1, 2}));
  EXPECT_EQ(b.fake.doorbells(q, false), (std::vector<std::uint32_t>{3, 2, 1, 2}));
  const std::vector<FakeDevice::Executed> ex = executed_on(b.fake, q);
  ASSERT_EQ(ex.size(), 10u);
  for (unsigned i = 0; i < 10; ++i) EXPECT_EQ(ex[i].cmd.cid(), t[i].cid);
  EXPECT_EQ(b.fake.error_log_size(), 0u) << "no doorbell was refused";
}

TEST(DriverDevice, AnErrorCompletionBecomesACommandErrorNamingTheStatus) {
  Enabled b;
  const std::uint16_t q = b.dev.create_queue(8);
  b.fake.on_command = fail_gemms;
  GemmDesc g;
  g.m = g.k = g.n = 64;
  const std::vector<Ticket> t = b.dev.submit(q, {nop(), gemm(g), nop()}, 42);
  EXPECT_EQ(b.dev.wait(t[0]).status, 0);
  try {
    b.dev.wait(t[1]);
    FAIL() << "the GEMM's error completion was not reported";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.status(), SOHU_STATUS_OUT_OF_RANGE);
    EXPECT_EQ(e.opcode(), SOHU_IO_OP_GEMM);
    EXPECT_EQ(e.qid(), q);
    EXPECT_EQ(e.cid(), t[1].cid);
    EXPECT_EQ(e.correlation(), 42u);
    EXPECT_EQ(std::string(e.what()),
              "GEMM (qid 1, cid 2, correlation 42) failed: OUT_OF_RANGE \xE2\x80\x94 error log: OUT_OF_RANGE at "
              "address 0x2400001000 [fake0]");
  }
  EXPECT_EQ(b.dev.wait(t[2]).status, 0) << "the queue goes on after an error";
  EXPECT_EQ(b.fake.cqe(q, 1).status, SOHU_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(b.fake.error_log_size(), 0u) << "the driver acknowledged the error-log entry";
}

TEST(DriverDevice, DrainThrowsTheFirstErrorAndCountsTheOthers) {
  Enabled b;
  const std::uint16_t q = b.dev.create_queue(8);
  b.fake.on_command = fail_gemms;
  GemmDesc g;
  g.m = g.k = g.n = 64;
  b.dev.submit(q, {nop(), gemm(g), nop(), gemm(g)}, 6);
  try {
    b.dev.drain(q, 10'000'000);
    FAIL() << "drain reported no error";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.cid(), 2);
    EXPECT_EQ(std::string(e.what()),
              "GEMM (qid 1, cid 2, correlation 6) failed: OUT_OF_RANGE \xE2\x80\x94 error log: OUT_OF_RANGE at "
              "address 0x2400001000 [fake0] (and 1 more failed commands on this queue)");
  }
  EXPECT_EQ(b.dev.outstanding(q), 0u);
  EXPECT_NO_THROW(b.dev.drain(q)) << "drain retired the errors it reported";
  EXPECT_EQ(b.fake.error_log_size(), 0u);
}

// ---- waiting ------------------------------------------------------------------------------------

TEST(DriverDevice, InterruptModeSleepsUntilTheQueuesVectorFires) {
  FakeDeviceOptions o;
  o.command_ns = 20'000;
  Enabled b(o);
  const std::uint16_t q = b.dev.create_queue(8, CompletionMode::Interrupt);
  ASSERT_EQ(b.fake.cq(q)->vector, 1u);
  const std::uint64_t polled = b.fake.polled_ns();
  const unsigned waits = b.fake.interrupt_waits();
  const std::uint64_t t0 = b.fake.now_ns();
  EXPECT_EQ(b.dev.wait(b.dev.submit(q, nop()), 10'000'000).status, 0);
  EXPECT_EQ(b.fake.polled_ns(), polled) << "no polling pass";
  EXPECT_EQ(b.fake.interrupt_waits(), waits + 1) << "one sleep, ended by the MSI-X";
  EXPECT_EQ(b.fake.interrupts_raised(1), 1u);
  EXPECT_GE(b.fake.now_ns() - t0, 20'000u);
  EXPECT_LT(b.fake.now_ns() - t0, 30'000u) << "woken by the interrupt, not the 1 ms slice";
}

TEST(DriverDevice, PollingModeReadsTheCqWithoutInterrupts) {
  FakeDeviceOptions o;
  o.command_ns = 20'000;
  Enabled b(o);
  const std::uint16_t q = b.dev.create_queue(8, CompletionMode::Polling);
  ASSERT_FALSE(b.fake.cq(q)->ien);
  const std::uint64_t polled = b.fake.polled_ns();
  const unsigned waits = b.fake.interrupt_waits();
  EXPECT_EQ(b.dev.wait(b.dev.submit(q, nop()), 10'000'000).status, 0);
  EXPECT_EQ(b.fake.interrupt_waits(), waits);
  EXPECT_GE(b.fake.polled_ns() - polled, 20'000u) << "polled until the completion was posted";
  EXPECT_LT(b.fake.polled_ns() - polled, 20'400u) << "and not much longer (200 ns passes)";
  for (unsigned v = 1; v < 8; ++v) EXPECT_EQ(b.fake.interrupts_raised(v), 0u) << "vector " << v;
}

TEST(DriverDevice, ABatchWithOneInterruptIsWaitedForWithoutPolling) {
  Enabled b;
  const std::uint16_t q = b.dev.create_queue(64);
  std::vector<Command> batch(10, nop());
  for (std::size_t i = 0; i + 1 < batch.size(); ++i) batch[i].no_irq();
  const std::uint64_t polled = b.fake.polled_ns();
  b.dev.submit(q, batch, 1);
  b.dev.drain(q, 10'000'000);
  EXPECT_EQ(b.fake.polled_ns(), polled) << "the host polled while an interrupt was coming";
  EXPECT_EQ(b.fake.interrupts_raised(1), 1u);
  Command lone = nop();
  lone.no_irq();
  EXPECT_EQ(b.dev.wait(b.dev.submit(q, lone, 2), 10'000'000).status, 0);
  EXPECT_GT(b.fake.polled_ns(), polled) << "nothing raises an interrupt: the wait polls";
  EXPECT_EQ(b.fake.interrupts_raised(1), 1u);
}

TEST(DriverDevice, AWaitOnADeviceThatNeverCompletesTimesOut) {
  Enabled b;
  const std::uint16_t q = b.dev.create_queue(8);
  b.fake.hung = true;
  const Ticket t = b.dev.submit(q, nop(), 9);
  const std::uint64_t t0 = b.fake.now_ns();
  const std::string w = what_of<TimeoutError>([&] { b.dev.wait(t, 5'000'000); });
  EXPECT_EQ(w,
            "fake0: wait for NOP (qid 1, cid 1, correlation 9): no completion in time (SQ tail 1, device SQ head 0, "
            "CQ head 0, phase 1, 1 in flight, STATUS 0x1)");
  EXPECT_GE(b.fake.now_ns() - t0, 5'000'000u);
  EXPECT_LT(b.fake.now_ns() - t0, 5'100'000u);
  EXPECT_EQ(b.dev.outstanding(q), 1u);
  EXPECT_NE(what_of<TimeoutError>([&] {
              b.dev.drain(q, 2'000'000);
            }).find("drain of queue 1 (1 commands outstanding, oldest cid 1): no completion in time"),
            std::string::npos);
  b.fake.hung = false;  // the device runs again: the same command completes
  EXPECT_EQ(b.dev.wait(t, 5'000'000).cid, t.cid);
}

// ---- reset, registers ------------------------------------------------------------------------------

TEST(DriverDevice, ResetAbortsCommandsInFlightAndRecreatesTheQueues) {
  Enabled b(immediate());
  const std::uint16_t q = b.dev.create_queue(8);
  const Ticket stuck = b.dev.submit(q, sem_wait(7, 1), 3);  // nothing signals semaphore 7
  EXPECT_EQ(b.dev.outstanding(q), 1u);
  const std::size_t admin_before = executed_on(b.fake, 0).size();
  b.dev.reset();
  EXPECT_EQ(b.dev.reset_count(), 1u);
  try {
    b.dev.wait(stuck);
    FAIL() << "the aborted command completed normally";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.status(), SOHU_STATUS_ABORTED_RESET);
    EXPECT_EQ(e.opcode(), SOHU_IO_OP_SEM_WAIT);
    EXPECT_EQ(e.cid(), stuck.cid);
    EXPECT_NE(std::string(e.what()).find("SEM_WAIT (qid 1, cid 1, correlation 3) failed: ABORTED_RESET"),
              std::string::npos);
  }
  // The reset dropped the device's queues; the driver created queue 1 again, same geometry.
  const std::vector<FakeDevice::Executed> admin = executed_on(b.fake, 0);
  ASSERT_EQ(admin.size(), admin_before + 2);
  EXPECT_EQ(admin[admin_before].cmd.opcode(), SOHU_ADMIN_OP_CREATE_CQ);
  EXPECT_EQ(admin[admin_before + 1].cmd.opcode(), SOHU_ADMIN_OP_CREATE_SQ);
  ASSERT_NE(b.fake.sq(q), nullptr);
  EXPECT_EQ(b.fake.sq(q)->entries, 8u);
  // Rings restart at 0: the next command rings tail 1 again.
  EXPECT_EQ(b.dev.wait(b.dev.submit(q, nop())).status, 0);
  EXPECT_EQ(b.fake.doorbells(q, true), (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(b.fake.doorbells(0, true).back(), 2u) << "the admin ring restarted too";
}

TEST(DriverDevice, RegisterAccessesOutsideBar0AreAccessErrors) {
  Enabled b;
  EXPECT_EQ(b.dev.read32(SOHU_ID), SOHU_ID_RESET);
  EXPECT_EQ(b.dev.device_time_ns(), b.fake.now_ns());
  EXPECT_NE(what_of<AccessError>([&] {
              b.dev.read32(SOHU_BAR0_SIZE);
            }).find("mmio_read32: 0xFE080000 is outside every BAR of fake0"),
            std::string::npos);
  EXPECT_NE(what_of<AccessError>([&] {
              b.dev.write64(SOHU_BAR0_SIZE + 8, 1);
            }).find("mmio_write64: 0xFE080008 is outside every BAR"),
            std::string::npos);
}

}  // namespace
}  // namespace sohusim::driver
