// Host DDR5 memory: channel timing and its TLM target.
#include <vector>

#include <gtest/gtest.h>

#include "sim/systemc_test_support.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/host_dram.hpp"

namespace sohusim::memory {
namespace {

HostDramParams ddr5(std::uint32_t channels = 4) {
  HostDramParams p;
  p.capacity = 1ULL << 30;
  p.channels = channels;
  p.channel_bandwidth = 32e9;  // 32 B per ns: easy numbers
  p.efficiency = 1.0;
  p.latency_s = 80e-9;
  p.interleave = 256;
  return p;
}

TEST(HostDramChannels, UnloadedLatencyIsLatencyPlusTransfer) {
  HostDramChannels c(ddr5());
  EXPECT_EQ(c.access(0, 0, 64), 80'000u + 2'000u);  // 64 B at 32 B/ns
}

TEST(HostDramChannels, LargeTransfersSpreadOverChannels) {
  HostDramChannels c(ddr5());
  // 4 KiB over 4 channels: 1 KiB each = 32 ns, in parallel.
  EXPECT_EQ(c.access(0, 0, 4096), 80'000u + 32'000u);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(c.busy_ps(i), 32'000u);
}

TEST(HostDramChannels, UnalignedRangesCountEveryByteOnce) {
  HostDramChannels c(ddr5());
  c.access(0, 100, 1000);  // 100..1100: ch0 156 + 76 B, ch1..3 256 B each
  EXPECT_EQ(c.busy_ps(0), 232u * 1000 / 32);
  for (std::uint32_t i = 1; i < 4; ++i) EXPECT_EQ(c.busy_ps(i), 8000u);
}

TEST(HostDramChannels, BandwidthIsSharedLatencyPipelined) {
  HostDramChannels c(ddr5(1));
  const std::uint64_t first = c.access(0, 0, 3200);   // 100 ns transfer
  const std::uint64_t second = c.access(0, 0, 3200);  // queues behind it
  EXPECT_EQ(first, 180'000u);
  EXPECT_EQ(second, 280'000u);
}

TEST(HostDramParams, Validation) {
  HostDramParams p = ddr5();
  p.efficiency = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p = ddr5();
  p.channels = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  EXPECT_DOUBLE_EQ(ddr5().sustained_bandwidth(), 128e9);
}

SOHUSIM_SYSTEMC_TEST(HostDramTlm, ServesCountsAndRejectsOutOfRange) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  HostDramParams p = ddr5();
  p.functional = true;
  HostDram dram("host_dram", p, inst, "host0.dram");
  test::TestInitiator init("init");
  init.socket.bind(dram.socket);
  init.script = [&](test::TestInitiator& self) {
    std::vector<unsigned char> out(64, 0x5A), in(64, 0);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.write(4096, out.data(), 64, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay, sc_core::sc_time(82, sc_core::SC_NS));
    wait(delay);
    delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.read(4096, in.data(), 64, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in, out);
    EXPECT_EQ(self.read(p.capacity, in.data(), 1, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    unsigned char dbg[4] = {};
    EXPECT_EQ(self.debug(tlm::TLM_READ_COMMAND, 4096, dbg, 4), 4u);
    EXPECT_EQ(dbg[0], 0x5A);
  };
  sc_core::sc_start();
  EXPECT_EQ(reg.value("host0.dram.address_errors"), 1);
  EXPECT_EQ(reg.value("host0.dram.bytes_read"), 64);
  EXPECT_EQ(reg.value("host0.dram.ch0.busy_time"), 4000);  // 4096 sits on channel 0: two 64 B transfers
}

}  // namespace
}  // namespace sohusim::memory
