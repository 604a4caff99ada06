// The SRAM scratchpad: bank/port timing, conflicts, and its TLM target.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "sim/systemc_test_support.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/sram.hpp"

namespace sohusim::memory {
namespace {

SramParams small_sram(std::uint32_t ports = 1) {
  SramParams p;
  p.capacity = 1 << 20;
  p.banks = 8;
  p.ports = ports;
  p.access_width = 64;
  p.latency_cycles = 3;
  p.clock_hz = 1e9;  // 1 ns cycles
  return p;
}

TEST(SramBanks, AnIdleLineTakesOneCyclePlusLatency) {
  SramBanks b(small_sram());
  const auto t = b.access(10, 0, 64);
  EXPECT_EQ(t.done_cycle, 10u + 1 + 3);
  EXPECT_EQ(t.lines, 1u);
  EXPECT_EQ(t.conflicts, 0u);
}

TEST(SramBanks, ARequestSpreadsOverBanksAndSerialisesPerBank) {
  SramBanks b(small_sram());
  // 8 lines, one per bank: all in the first cycle.
  EXPECT_EQ(b.access(0, 0, 8 * 64).done_cycle, 1u + 3);
  // 17 lines from bank 0: bank 0 gets three, the rest two: three cycles.
  SramBanks c(small_sram());
  const auto t = c.access(0, 0, 17 * 64);
  EXPECT_EQ(t.lines, 17u);
  EXPECT_EQ(t.done_cycle, 3u + 3);
  EXPECT_EQ(t.conflicts, 0u) << "a request's own lines in one bank are its transfer time, not a conflict";
}

TEST(SramBanks, UnalignedRequestsTouchEveryLineTheyCover) {
  SramBanks b(small_sram());
  EXPECT_EQ(b.access(0, 60, 8).lines, 2u);  // straddles a line boundary
  EXPECT_EQ(b.access(0, 1000, 1).lines, 1u);
}

TEST(SramBanks, ConflictsDelayAndAreCounted) {
  SramBanks b(small_sram());
  b.access(0, 0, 64);                      // bank 0 busy in cycle 0
  const auto t = b.access(0, 8 * 64, 64);  // bank 0 again, same cycle
  EXPECT_EQ(t.conflicts, 1u);
  EXPECT_EQ(t.conflict_cycles, 1u);
  EXPECT_EQ(t.done_cycle, 2u + 3);
  const auto other = b.access(0, 64, 64);  // bank 1: free
  EXPECT_EQ(other.conflicts, 0u);
}

TEST(SramBanks, SecondPortAbsorbsAConflict) {
  SramBanks b(small_sram(2));
  b.access(0, 0, 64);
  const auto t = b.access(0, 8 * 64, 64);
  EXPECT_EQ(t.conflicts, 0u);
  EXPECT_EQ(t.done_cycle, 1u + 3);
}

TEST(SramParams, RejectsBadGeometry) {
  SramParams p = small_sram();
  p.banks = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p = small_sram();
  p.capacity = 1000;  // not a whole number of 64 B lines
  EXPECT_THROW(p.validate(), std::invalid_argument);
}

SOHUSIM_SYSTEMC_TEST(SramTlm, TimesCountsAndMovesData) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  SramParams p = small_sram();
  p.functional = true;
  Sram sram("sram", p, inst, "dev0.sram");
  test::TestInitiator init("init");
  init.socket.bind(sram.socket);
  init.script = [&](test::TestInitiator& self) {
    std::vector<unsigned char> out(100), in(100);
    for (int i = 0; i < 100; ++i) out[i] = static_cast<unsigned char>(i * 7);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.write(0x1003, out.data(), 100, delay), tlm::TLM_OK_RESPONSE);
    // 100 bytes from 0x1003 cover lines 64 and 65: two banks, one cycle, + 3 latency.
    EXPECT_EQ(delay, sc_core::sc_time(4, sc_core::SC_NS));
    wait(delay);
    delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.read(0x1003, in.data(), 100, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in, out);
    delay = sc_core::SC_ZERO_TIME;
    unsigned char b[8];
    EXPECT_EQ(self.read(p.capacity - 4, b, 8, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // AT: BEGIN_REQ completes at once with the response time annotated.
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(0);
    gp.set_data_ptr(in.data());
    gp.set_data_length(64);
    gp.set_streaming_width(64);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_GT(delay, sc_core::SC_ZERO_TIME);
  };
  sc_core::sc_start();
  EXPECT_EQ(reg.value("dev0.sram.reads"), 2);
  EXPECT_EQ(reg.value("dev0.sram.writes"), 1);
  EXPECT_EQ(reg.value("dev0.sram.bytes_written"), 100);
  EXPECT_EQ(reg.value("dev0.sram.address_errors"), 1);
  EXPECT_NE(sram.store(), nullptr);
}

SOHUSIM_SYSTEMC_TEST(SramTlm, TimingModeHoldsNoData) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  Sram sram("sram", small_sram(), inst, "s");
  EXPECT_EQ(sram.store(), nullptr);
  test::TestInitiator init("init");
  init.socket.bind(sram.socket);
  init.script = [&](test::TestInitiator& self) {
    std::vector<unsigned char> buf(256, 0xAB);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.write(0, buf.data(), 256, delay), tlm::TLM_OK_RESPONSE);
    std::vector<unsigned char> back(256, 0x11);
    EXPECT_EQ(self.read(0, back.data(), 256, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, std::vector<unsigned char>(256, 0x11)) << "timing mode moves no data";
  };
  sc_core::sc_start();
  EXPECT_EQ(reg.value("s.line_accesses"), 8);
}

}  // namespace
}  // namespace sohusim::memory
