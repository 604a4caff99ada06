// SparseStore (plain C++, in the test process) and SparseMemory (a TLM target, each test in
// its own SystemC kernel, see systemc_test_support.hpp).
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/sim/sparse_memory.hpp"
#include "systemc_test_support.hpp"

namespace {

using sohusim::sim::from_ps;
using sohusim::sim::SparseMemory;
using sohusim::sim::SparseStore;
using sohusim::sim::to_ps;
using sohusim::test::TestInitiator;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

std::vector<unsigned char> pattern(std::size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<unsigned char>(seed + 7 * i + 1);
  }
  return v;
}

// ---- SparseStore ------------------------------------------------------------------------

TEST(SparseStore, NeverWrittenBytesReadAsTheFillValue) {
  const SparseStore zero(1 << 20);
  std::array<unsigned char, 16> buf{};
  buf.fill(0x77);
  zero.read(0x1000, buf.data(), buf.size());
  for (unsigned char b : buf) {
    EXPECT_EQ(b, 0);
  }
  const SparseStore poisoned(1 << 20, 4096, 0xA5);
  poisoned.read(12345, buf.data(), buf.size());
  for (unsigned char b : buf) {
    EXPECT_EQ(b, 0xA5);
  }
  EXPECT_EQ(poisoned.allocated_bytes(), 0u) << "reading must not allocate";
}

TEST(SparseStore, OnlyWrittenPagesAreAllocated) {
  SparseStore hbm(144 * kGiB);  // one Sohu-class device's HBM, almost all of it untouched
  const unsigned char one = 1;
  hbm.write(0, &one, 1);
  hbm.write(100 * kGiB + 5, &one, 1);
  hbm.write(144 * kGiB - 1, &one, 1);
  hbm.write(100 * kGiB + 4000, &one, 1);  // same page as the second write
  EXPECT_EQ(hbm.allocated_pages(), 3u);
  EXPECT_EQ(hbm.allocated_bytes(), 3u * 4096u);
  EXPECT_TRUE(hbm.is_allocated(100 * kGiB));
  EXPECT_FALSE(hbm.is_allocated(100 * kGiB + 4096));
  unsigned char back = 0;
  hbm.read(144 * kGiB - 1, &back, 1);
  EXPECT_EQ(back, 1);
}

TEST(SparseStore, AccessesCrossPageBoundaries) {
  SparseStore store(4096, 64);  // small pages: 300 bytes span six of them
  const auto data = pattern(300, 3);
  store.write(60, data.data(), data.size());  // bytes 60..359: pages 0..5
  EXPECT_EQ(store.allocated_pages(), 6u);

  std::vector<unsigned char> back(300);
  store.read(60, back.data(), back.size());
  EXPECT_EQ(back, data);

  // A read that covers written and unwritten bytes sees the fill around the data.
  std::vector<unsigned char> wide(420, 0xEE);
  store.read(0, wide.data(), wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) {
    const unsigned char expected = (i >= 60 && i < 360) ? data[i - 60] : 0;
    ASSERT_EQ(wide[i], expected) << "byte " << i;
  }
}

TEST(SparseStore, WritingTheFillValueAllocatesNothing) {
  SparseStore store(1 << 24);
  const std::vector<unsigned char> zeros(1 << 20, 0);
  store.write(0x10000, zeros.data(), zeros.size());
  EXPECT_EQ(store.allocated_pages(), 0u);

  // But into an existing page it must really be written.
  const auto data = pattern(64, 9);
  store.write(0x20000, data.data(), data.size());
  EXPECT_EQ(store.allocated_pages(), 1u);
  store.write(0x20000, zeros.data(), 64);
  std::vector<unsigned char> back(64, 0xEE);
  store.read(0x20000, back.data(), back.size());
  EXPECT_EQ(back, std::vector<unsigned char>(64, 0));
}

TEST(SparseStore, OutOfRangeAccessesThrowNamingAddressAndSize) {
  SparseStore store(0x1000);
  unsigned char buf[8] = {};
  try {
    store.write(0xFFF, buf, 2);
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("0xfff"), std::string::npos) << msg;
    EXPECT_NE(msg.find("0x1000"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2 bytes"), std::string::npos) << msg;
  }
  EXPECT_THROW(store.read(0x2000, buf, 1), std::out_of_range);
  EXPECT_THROW(store.read(8, buf, std::numeric_limits<std::size_t>::max()), std::out_of_range);
  EXPECT_THROW(store.page_data(0x1000), std::out_of_range);
  EXPECT_NO_THROW(store.write(0xFFF, buf, 1));  // the last byte
  EXPECT_NO_THROW(store.read(0x1000, buf, 0));  // empty access at the end
  EXPECT_EQ(store.allocated_pages(), 0u) << "a failed access must not allocate";
}

TEST(SparseStore, ClearFreesEverything) {
  SparseStore store(1 << 20);
  const auto data = pattern(10000, 1);
  store.write(100, data.data(), data.size());
  EXPECT_GT(store.allocated_pages(), 0u);
  store.clear();
  EXPECT_EQ(store.allocated_pages(), 0u);
  std::vector<unsigned char> back(10000, 0xEE);
  store.read(100, back.data(), back.size());
  EXPECT_EQ(back, std::vector<unsigned char>(10000, 0));
}

TEST(SparseStore, PageSizeMustBeAPowerOfTwo) {
  EXPECT_THROW(SparseStore(1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(SparseStore(1 << 20, 3000), std::invalid_argument);
  EXPECT_THROW(SparseStore(1 << 20, std::size_t{1} << 31), std::invalid_argument);
  EXPECT_NO_THROW(SparseStore(1 << 20, 1));
  EXPECT_NO_THROW(SparseStore(1 << 20, 1 << 16));
}

TEST(SparseStore, PageDataPointsIntoTheAllocatedPage) {
  SparseStore store(1 << 20);
  unsigned char* p = store.page_data(0x3004);
  EXPECT_EQ(store.page_base(0x3004), 0x3000u);
  EXPECT_TRUE(store.is_allocated(0x3000));
  p[0] = 0x42;
  unsigned char back = 0;
  store.read(0x3004, &back, 1);
  EXPECT_EQ(back, 0x42);
}

// ---- SparseMemory -----------------------------------------------------------------------

SparseMemory::Params memory_params(std::uint64_t size) {
  SparseMemory::Params p;
  p.size = size;
  return p;
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, ReadsBackWhatWasWrittenAndCounts) {
  TestInitiator cpu("cpu");
  SparseMemory mem("mem", memory_params(1 << 20));
  cpu.socket.bind(mem.socket);
  const auto data = pattern(256, 5);
  std::vector<unsigned char> back(256);
  cpu.script = [&](TestInitiator& self) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.write(0x100, data.data(), 256, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read(0x100, back.data(), 256, delay), tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
  EXPECT_EQ(back, data);
  EXPECT_EQ(mem.writes(), 1u);
  EXPECT_EQ(mem.reads(), 1u);
  EXPECT_EQ(mem.bytes_written(), 256u);
  EXPECT_EQ(mem.bytes_read(), 256u);
  EXPECT_EQ(mem.store().allocated_pages(), 1u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, LatencyAndBandwidthSetTheDelay) {
  TestInitiator cpu("cpu");
  SparseMemory::Params p = memory_params(1 << 20);
  p.latency = sc_core::sc_time(50, sc_core::SC_NS);
  p.bytes_per_second = 1e9;  // 1 byte per ns
  SparseMemory mem("mem", p);
  SparseMemory::Params q = memory_params(1 << 20);
  q.latency = sc_core::sc_time(7, sc_core::SC_NS);
  SparseMemory unlimited("unlimited", q);
  cpu.socket.bind(mem.socket);
  TestInitiator other("other");
  other.socket.bind(unlimited.socket);

  std::vector<std::uint64_t> delays_ps;
  std::array<unsigned char, 64> buf{};
  cpu.script = [&](TestInitiator& self) {
    sc_core::sc_time d1 = sc_core::SC_ZERO_TIME;
    self.write(0, buf.data(), 64, d1);  // transfer 0..64 ns, +50 ns latency
    sc_core::sc_time d2 = sc_core::SC_ZERO_TIME;
    self.read(0, buf.data(), 64, d2);  // same instant: queues behind the first transfer
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    sc_core::sc_time d3 = sc_core::sc_time(10, sc_core::SC_NS);  // port idle again
    self.read(0, buf.data(), 64, d3);
    delays_ps = {to_ps(d1), to_ps(d2), to_ps(d3)};
  };
  std::uint64_t unlimited_ps = 0;
  other.script = [&](TestInitiator& self) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    self.write(0, buf.data(), 64, d);
    sc_core::sc_time e = sc_core::SC_ZERO_TIME;
    self.write(0, buf.data(), 64, e);  // no bandwidth limit: no queueing either
    unlimited_ps = to_ps(d) + to_ps(e);
  };
  sc_core::sc_start();
  EXPECT_EQ(delays_ps, (std::vector<std::uint64_t>{114'000, 178'000, 124'000}));
  EXPECT_EQ(unlimited_ps, 14'000u);
  EXPECT_EQ(mem.transfer_time(0), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(to_ps(mem.transfer_time(1)), 1000u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, TransferTimeRoundsUp) {
  SparseMemory::Params p = memory_params(1 << 20);
  p.bytes_per_second = 3e9;  // 333.3 ps per byte
  SparseMemory mem("mem", p);
  EXPECT_EQ(to_ps(mem.transfer_time(1)), 334u);
  EXPECT_EQ(to_ps(mem.transfer_time(3)), 1000u);
  EXPECT_EQ(to_ps(mem.transfer_time(4096)), 1'365'334u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, ByteEnablesAreHonouredForWritesAndReads) {
  TestInitiator cpu("cpu");
  SparseMemory mem("mem", memory_params(4096));
  cpu.socket.bind(mem.socket);
  const std::vector<unsigned char> old(8, 0x11);
  mem.store().write(0x40, old.data(), old.size());
  std::vector<unsigned char> read_buf(8, 0xEE);
  cpu.script = [&](TestInitiator& self) {
    std::vector<unsigned char> data(8, 0xAA);
    const unsigned char write_enables[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.transport(tlm::TLM_WRITE_COMMAND, 0x40, data.data(), 8, d, write_enables, 2), tlm::TLM_OK_RESPONSE);
    const unsigned char read_enables[4] = {0, 0, 0xff, 0xff};
    EXPECT_EQ(self.transport(tlm::TLM_READ_COMMAND, 0x40, read_buf.data(), 8, d, read_enables, 4),
              tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
  std::vector<unsigned char> stored(8);
  mem.store().read(0x40, stored.data(), 8);
  EXPECT_EQ(stored, (std::vector<unsigned char>{0xAA, 0x11, 0xAA, 0x11, 0xAA, 0x11, 0xAA, 0x11}));
  EXPECT_EQ(read_buf, (std::vector<unsigned char>{0xEE, 0xEE, 0xAA, 0x11, 0xEE, 0xEE, 0xAA, 0x11}));
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, StreamingBurstWrapsAtTheStreamingWidth) {
  TestInitiator cpu("cpu");
  SparseMemory mem("mem", memory_params(4096));
  cpu.socket.bind(mem.socket);
  cpu.script = [&](TestInitiator& self) {
    std::vector<unsigned char> data{1, 2, 3, 4, 5, 6, 7, 8};
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(0x10);
    gp.set_data_ptr(data.data());
    gp.set_data_length(8);
    gp.set_streaming_width(4);  // a FIFO-like register 4 bytes wide
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    self.socket->b_transport(gp, d);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    // 4 bytes at 0xFFC fit even though the burst carries 8.
    gp.set_address(0xFFC);
    self.socket->b_transport(gp, d);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
  std::vector<unsigned char> stored(8);
  mem.store().read(0x10, stored.data(), 8);
  EXPECT_EQ(stored, (std::vector<unsigned char>{5, 6, 7, 8, 0, 0, 0, 0}));
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, OutOfRangeIsAnAddressErrorNotACrash) {
  TestInitiator cpu("cpu");
  SparseMemory mem("mem", memory_params(0x1000));
  cpu.socket.bind(mem.socket);
  std::vector<tlm::tlm_response_status> status;
  cpu.script = [&](TestInitiator& self) {
    std::array<unsigned char, 8> buf{};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    status.push_back(self.read(0x1000, buf.data(), 4, d));
    status.push_back(self.write(0xFFC, buf.data(), 8, d));
    status.push_back(self.write(std::numeric_limits<std::uint64_t>::max() - 2, buf.data(), 8, d));
    status.push_back(self.read(0xFFC, buf.data(), 4, d));
  };
  sc_core::sc_start();
  EXPECT_EQ(status,
            (std::vector<tlm::tlm_response_status>{tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_ADDRESS_ERROR_RESPONSE,
                                                   tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_OK_RESPONSE}));
  EXPECT_EQ(mem.address_errors(), 3u);
  EXPECT_EQ(mem.writes(), 0u);
  EXPECT_EQ(mem.reads(), 1u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, MalformedRequestsGetErrorResponses) {
  TestInitiator cpu("cpu");
  SparseMemory mem("mem", memory_params(0x1000));
  cpu.socket.bind(mem.socket);
  std::vector<tlm::tlm_response_status> status;
  cpu.script = [&](TestInitiator& self) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    status.push_back(self.transport(tlm::TLM_WRITE_COMMAND, 0, nullptr, 4, d));
    std::array<unsigned char, 4> buf{};
    const unsigned char enables[1] = {0xff};
    status.push_back(self.transport(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 4, d, enables, 0));
    status.push_back(self.transport(tlm::TLM_IGNORE_COMMAND, 0, buf.data(), 4, d));
  };
  sc_core::sc_start();
  EXPECT_EQ(status, (std::vector<tlm::tlm_response_status>{tlm::TLM_GENERIC_ERROR_RESPONSE,
                                                           tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, tlm::TLM_OK_RESPONSE}));
  EXPECT_EQ(mem.other_errors(), 2u);
  EXPECT_EQ(mem.writes(), 0u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, TimingModeMovesNoDataAndAllocatesNothing) {
  TestInitiator cpu("cpu");
  SparseMemory::Params p = memory_params(1 << 20);
  p.functional = false;
  p.latency = sc_core::sc_time(20, sc_core::SC_NS);
  p.bytes_per_second = 2e9;
  SparseMemory mem("mem", p);
  cpu.socket.bind(mem.socket);
  std::vector<unsigned char> read_buf(4096, 0x5A);
  std::uint64_t write_delay_ps = 0;
  bool dmi_granted = true;
  unsigned int debug_bytes = 1;
  cpu.script = [&](TestInitiator& self) {
    const auto data = pattern(4096, 1);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.write(0x8000, data.data(), 4096, d), tlm::TLM_OK_RESPONSE);
    write_delay_ps = to_ps(d);
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.read(0x8000, read_buf.data(), 4096, d), tlm::TLM_OK_RESPONSE);
    // Timing mode needs no data pointer at all.
    EXPECT_EQ(self.transport(tlm::TLM_READ_COMMAND, 0x8000, nullptr, 4096, d), tlm::TLM_OK_RESPONSE);
    tlm::tlm_generic_payload gp;
    gp.set_address(0x8000);
    tlm::tlm_dmi dmi;
    dmi_granted = self.socket->get_direct_mem_ptr(gp, dmi);
    debug_bytes = self.debug(tlm::TLM_READ_COMMAND, 0x8000, read_buf.data(), 16);
  };
  sc_core::sc_start();
  EXPECT_EQ(write_delay_ps, 20'000u + 2'048'000u) << "timed exactly as in functional mode";
  EXPECT_EQ(read_buf, std::vector<unsigned char>(4096, 0x5A));
  EXPECT_EQ(mem.store().allocated_bytes(), 0u);
  EXPECT_EQ(mem.bytes_written(), 4096u);
  EXPECT_EQ(mem.reads(), 2u);
  EXPECT_FALSE(dmi_granted);
  EXPECT_EQ(debug_bytes, 0u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, DebugTransportMovesDataWithoutTimeOrCounters) {
  TestInitiator cpu("cpu");
  SparseMemory::Params p = memory_params(0x1000);
  p.latency = sc_core::sc_time(1, sc_core::SC_US);
  SparseMemory mem("mem", p);
  cpu.socket.bind(mem.socket);
  const auto data = pattern(16, 2);
  std::vector<unsigned char> back(16, 0);
  std::array<unsigned int, 4> n{};
  cpu.script = [&](TestInitiator& self) {
    n[0] = self.debug(tlm::TLM_WRITE_COMMAND, 0x200, const_cast<unsigned char*>(data.data()), 16);
    n[1] = self.debug(tlm::TLM_READ_COMMAND, 0x200, back.data(), 16);
    std::vector<unsigned char> tail(16);
    n[2] = self.debug(tlm::TLM_READ_COMMAND, 0xFFC, tail.data(), 16);  // clipped at the end
    n[3] = self.debug(tlm::TLM_READ_COMMAND, 0x1000, tail.data(), 16);
  };
  sc_core::sc_start();
  EXPECT_EQ(n, (std::array<unsigned int, 4>{16, 16, 4, 0}));
  EXPECT_EQ(back, data);
  EXPECT_EQ(mem.reads() + mem.writes(), 0u);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, DmiGrantsOnePageAndClearInvalidatesIt) {
  TestInitiator cpu("cpu");
  SparseMemory::Params p = memory_params(0x10000);
  p.latency = sc_core::sc_time(5, sc_core::SC_NS);
  SparseMemory mem("mem", p);
  cpu.socket.bind(mem.socket);
  tlm::tlm_dmi dmi;
  bool granted = false;
  std::array<unsigned char, 4> via_transport{};
  cpu.script = [&](TestInitiator& self) {
    tlm::tlm_generic_payload gp;
    gp.set_address(0x1234);
    granted = self.socket->get_direct_mem_ptr(gp, dmi);
    ASSERT_TRUE(granted);
    std::memcpy(dmi.get_dmi_ptr() + (0x1234 - dmi.get_start_address()), "\x01\x02\x03\x04", 4);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    self.read(0x1234, via_transport.data(), 4, d);
    tlm::tlm_generic_payload beyond;
    beyond.set_address(0x10000);
    tlm::tlm_dmi refused;
    EXPECT_FALSE(self.socket->get_direct_mem_ptr(beyond, refused));
  };
  sc_core::sc_start();
  ASSERT_TRUE(granted);
  EXPECT_EQ(dmi.get_start_address(), 0x1000u);
  EXPECT_EQ(dmi.get_end_address(), 0x1FFFu);
  EXPECT_TRUE(dmi.is_read_write_allowed());
  EXPECT_EQ(dmi.get_read_latency(), sc_core::sc_time(5, sc_core::SC_NS));
  EXPECT_EQ(via_transport, (std::array<unsigned char, 4>{1, 2, 3, 4}));

  EXPECT_TRUE(cpu.invalidations.empty());
  mem.clear();
  ASSERT_EQ(cpu.invalidations.size(), 1u);
  EXPECT_EQ(cpu.invalidations[0].first, 0u);
  EXPECT_EQ(cpu.invalidations[0].second, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(mem.store().allocated_pages(), 0u);
}

SOHUSIM_SYSTEMC_TEST(SparseMemory, InvalidParametersAreRejected) {
  EXPECT_THROW(SparseMemory("empty", memory_params(0)), std::invalid_argument);
  SparseMemory::Params p = memory_params(4096);
  p.bytes_per_second = -1.0;
  EXPECT_THROW(SparseMemory("negative", p), std::invalid_argument);
  p.bytes_per_second = 1e9;
  p.page_size = 1000;
  EXPECT_THROW(SparseMemory("odd_page", p), std::invalid_argument);
}

}  // namespace
