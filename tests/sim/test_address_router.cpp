// AddressRouter with real traffic: a scriptable initiator -> router -> two SparseMemory
// targets plus a scripted approximately-timed target that exercises the phases a
// SparseMemory (served by simple_target_socket's nb->b conversion) never uses.
// Every test builds its own bench in its own SystemC kernel (systemc_test_support.hpp).
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/sim/address_router.hpp"
#include "sohusim/sim/correlation_extension.hpp"
#include "sohusim/sim/memory_manager.hpp"
#include "sohusim/sim/sparse_memory.hpp"
#include "systemc_test_support.hpp"

namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sohusim::sim::AddressRange;
using sohusim::sim::AddressRouter;
using sohusim::sim::correlation_of;
using sohusim::sim::MemoryManager;
using sohusim::sim::set_correlation;
using sohusim::sim::SparseMemory;
using sohusim::sim::to_ps;
using sohusim::test::TestInitiator;

constexpr std::uint64_t kMaxAddress = std::numeric_limits<std::uint64_t>::max();
using Interval = std::pair<std::uint64_t, std::uint64_t>;

// An AT target whose answers are chosen per test, recording what it sees.
class ScriptedAtTarget : public sc_core::sc_module {
 public:
  enum class Mode {
    kAcceptThenPhases,  // TLM_ACCEPTED; later END_REQ, then BEGIN_RESP on the backward path
    kCompleteAtOnce,    // TLM_COMPLETED on BEGIN_REQ (early completion)
    kRespondAtOnce,     // TLM_UPDATED with BEGIN_RESP on BEGIN_REQ
  };

  tlm_utils::simple_target_socket<ScriptedAtTarget> socket;
  Mode mode = Mode::kAcceptThenPhases;
  std::vector<std::uint64_t> addresses_seen;  // on BEGIN_REQ and after each backward call
  std::vector<std::uint64_t> correlations_seen;
  std::vector<tlm::tlm_phase> forward_phases;
  std::vector<tlm::tlm_sync_enum> backward_results;

  SC_HAS_PROCESS(ScriptedAtTarget);
  explicit ScriptedAtTarget(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {
    socket.register_nb_transport_fw(this, &ScriptedAtTarget::nb_transport_fw);
    SC_THREAD(respond);
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time& delay) {
    forward_phases.push_back(phase);
    if (phase != tlm::BEGIN_REQ) {
      return tlm::TLM_COMPLETED;  // END_RESP
    }
    addresses_seen.push_back(gp.get_address());
    correlations_seen.push_back(correlation_of(gp));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    switch (mode) {
      case Mode::kCompleteAtOnce:
        return tlm::TLM_COMPLETED;
      case Mode::kRespondAtOnce:
        phase = tlm::BEGIN_RESP;
        delay += sc_time(3, SC_NS);
        return tlm::TLM_UPDATED;
      case Mode::kAcceptThenPhases:
        pending_ = &gp;
        request_.notify(delay);
        return tlm::TLM_ACCEPTED;
    }
    return tlm::TLM_COMPLETED;
  }

  void respond() {
    for (;;) {
      sc_core::wait(request_);
      tlm::tlm_generic_payload& gp = *pending_;
      sc_core::wait(sc_time(5, SC_NS));
      send(gp, tlm::END_REQ);
      sc_core::wait(sc_time(10, SC_NS));
      send(gp, tlm::BEGIN_RESP);
    }
  }

  void send(tlm::tlm_generic_payload& gp, tlm::tlm_phase phase) {
    sc_time delay = sc_core::SC_ZERO_TIME;
    backward_results.push_back(socket->nb_transport_bw(gp, phase, delay));
    addresses_seen.push_back(gp.get_address());
  }

  tlm::tlm_generic_payload* pending_ = nullptr;
  sc_core::sc_event request_;
};

SparseMemory::Params memory(std::uint64_t size, sc_time latency) {
  SparseMemory::Params p;
  p.size = size;
  p.latency = latency;
  return p;
}

// cpu -> router -> { 0: mem0, 1: mem1, 2: at }
struct Bench {
  MemoryManager mm;  // first: outlives every module that may hold its payloads
  TestInitiator cpu{"cpu"};
  AddressRouter router{"router"};
  SparseMemory mem0{"mem0", memory(0x1000, sc_time(10, SC_NS))};
  SparseMemory mem1{"mem1", memory(0x10000, sc_time(20, SC_NS))};
  ScriptedAtTarget at{"at"};

  Bench() {
    cpu.socket.bind(router.target_socket);
    router.initiator_socket.bind(mem0.socket);
    router.initiator_socket.bind(mem1.socket);
    router.initiator_socket.bind(at.socket);
    router.map(0x1000, 0x1000, 0, "mem0");
    router.map(0x10000, 0x4000, 1, "mem1");
    AddressRange alias;  // a second, shifted window onto mem1: local 0x2400..0x2BFF
    alias.base = 0x40000;
    alias.size = 0x800;
    alias.target = 1;
    alias.target_offset = 0x2400;
    alias.label = "mem1_alias";
    router.map(alias);
    router.map(0x80000, 0x1000, 2, "at");
  }
};

std::vector<unsigned char> pattern(std::size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<unsigned char>(seed + 13 * i);
  }
  return v;
}

// ---- the map ----------------------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(AddressRouter, OverlappingRangesAreRejectedNamingBoth) {
  AddressRouter router("router");
  router.map(0x1000, 0x1000, 0, "sram");
  router.map(0x2000, 0x1000, 1, "hbm0");  // adjacent is fine
  try {
    router.map(0x2800, 0x1000, 2, "bar2");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'bar2' [0x2800, 0x3800)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'hbm0' [0x2000, 0x3000)"), std::string::npos) << msg;
  }
  // A range that swallows an existing one, and one that starts inside one.
  EXPECT_THROW(router.map(0x0, 0x10000, 3, "all"), std::invalid_argument);
  EXPECT_THROW(router.map(0x1FFF, 1, 3, "last_byte"), std::invalid_argument);
  EXPECT_THROW(router.map(0x9000, 0, 3, "empty"), std::invalid_argument);
  EXPECT_THROW(router.map(kMaxAddress - 1, 3, 3, "wraps"), std::invalid_argument);
  EXPECT_NO_THROW(router.map(kMaxAddress, 1, 3, "top_byte"));
  ASSERT_EQ(router.ranges().size(), 3u);
  EXPECT_EQ(router.ranges()[1].label, "hbm0");
  ASSERT_NE(router.decode(0x2FFF), nullptr);
  EXPECT_EQ(router.decode(0x2FFF)->label, "hbm0");
  EXPECT_EQ(router.decode(0x3000), nullptr);
  EXPECT_EQ(router.decode(0xFFF), nullptr);
}

SOHUSIM_SYSTEMC_TEST(AddressRouter, UnboundTargetIndexIsAnElaborationError) {
  TestInitiator cpu("cpu");
  AddressRouter router("router");
  SparseMemory mem("mem", memory(0x1000, sc_core::SC_ZERO_TIME));
  cpu.socket.bind(router.target_socket);
  router.initiator_socket.bind(mem.socket);
  router.map(0x0, 0x1000, 0, "mem");
  router.map(0x1000, 0x1000, 7, "nothing");
  try {
    sc_core::sc_start();
    FAIL() << "expected an SC_REPORT_ERROR";
  } catch (const sc_core::sc_report& report) {
    EXPECT_NE(std::string(report.what()).find("'nothing' [0x1000, 0x2000) -> target 7"), std::string::npos)
        << report.what();
  }
}

// ---- blocking transport -----------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(AddressRouter, RoutesToTheRightTargetWithLocalOffsets) {
  Bench b;
  const auto a = pattern(32, 1);
  const auto c = pattern(32, 2);
  const auto d = pattern(16, 3);
  std::vector<unsigned char> back_a(32);
  std::vector<unsigned char> back_c(32);
  std::vector<unsigned char> back_d(16);
  std::vector<std::uint64_t> delays;
  b.cpu.script = [&](TestInitiator& self) {
    sc_time t = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.write(0x1010, a.data(), 32, t), tlm::TLM_OK_RESPONSE);  // mem0 @ 0x10
    delays.push_back(to_ps(t));
    t = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.write(0x10020, c.data(), 32, t), tlm::TLM_OK_RESPONSE);  // mem1 @ 0x20
    delays.push_back(to_ps(t));
    t = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.write(0x40010, d.data(), 16, t), tlm::TLM_OK_RESPONSE);  // mem1 @ 0x2410
    EXPECT_EQ(self.read(0x1010, back_a.data(), 32, t), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read(0x10020, back_c.data(), 32, t), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read(0x12410, back_d.data(), 16, t), tlm::TLM_OK_RESPONSE);  // same bytes
  };
  sc_core::sc_start();

  std::vector<unsigned char> stored(32);
  b.mem0.store().read(0x10, stored.data(), 32);
  EXPECT_EQ(stored, a) << "mem0 must hold the first write at its local offset";
  b.mem1.store().read(0x20, stored.data(), 32);
  EXPECT_EQ(stored, c);
  std::vector<unsigned char> alias(16);
  b.mem1.store().read(0x2410, alias.data(), 16);
  EXPECT_EQ(alias, d);
  EXPECT_EQ(back_a, a);
  EXPECT_EQ(back_c, c);
  EXPECT_EQ(back_d, d);
  // The latency tells which memory answered: 10 ns for mem0, 20 ns for mem1.
  EXPECT_EQ(delays, (std::vector<std::uint64_t>{10'000, 20'000}));
  EXPECT_EQ(b.mem0.writes(), 1u);
  EXPECT_EQ(b.mem1.writes(), 2u);
  EXPECT_EQ(b.mem1.reads(), 2u);
  EXPECT_EQ(b.router.routed(0), 2u);
  EXPECT_EQ(b.router.routed(1), 4u);
  EXPECT_EQ(b.router.routed(2), 0u);
  EXPECT_EQ(b.router.unmapped_accesses(), 0u);
  EXPECT_FALSE(b.router.last_fault_address().has_value());
}

SOHUSIM_SYSTEMC_TEST(AddressRouter, UnmappedAccessIsAnAddressErrorAndCounted) {
  Bench b;
  std::vector<tlm::tlm_response_status> status;
  b.cpu.script = [&](TestInitiator& self) {
    std::array<unsigned char, 8> buf{};
    sc_time t = sc_core::SC_ZERO_TIME;
    status.push_back(self.read(0x0, buf.data(), 8, t));
    status.push_back(self.write(0x2000, buf.data(), 8, t));  // just past mem0
    status.push_back(self.read(0x5000, buf.data(), 8, t));
  };
  sc_core::sc_start();
  EXPECT_EQ(status, std::vector<tlm::tlm_response_status>(3, tlm::TLM_ADDRESS_ERROR_RESPONSE));
  EXPECT_EQ(b.router.unmapped_accesses(), 3u);
  EXPECT_EQ(b.router.boundary_errors(), 0u);
  EXPECT_EQ(b.router.last_fault_address(), 0x5000u);
  EXPECT_EQ(b.mem0.reads() + b.mem0.writes() + b.mem1.reads() + b.mem1.writes(), 0u)
      << "no target may see an unmapped access";
}

SOHUSIM_SYSTEMC_TEST(AddressRouter, AccessCrossingTheEndOfItsRangeIsAnAddressError) {
  Bench b;
  std::vector<tlm::tlm_response_status> status;
  b.cpu.script = [&](TestInitiator& self) {
    std::array<unsigned char, 8> buf{};
    sc_time t = sc_core::SC_ZERO_TIME;
    status.push_back(self.write(0x1FF8, buf.data(), 8, t));  // ends exactly at the end: fine
    status.push_back(self.write(0x1FFC, buf.data(), 8, t));  // 4 bytes past mem0
    status.push_back(self.read(0x407FC, buf.data(), 8, t));  // past the alias window,
                                                             // although mem1 itself goes on
  };
  sc_core::sc_start();
  EXPECT_EQ(status, (std::vector<tlm::tlm_response_status>{tlm::TLM_OK_RESPONSE, tlm::TLM_ADDRESS_ERROR_RESPONSE,
                                                           tlm::TLM_ADDRESS_ERROR_RESPONSE}));
  EXPECT_EQ(b.router.boundary_errors(), 2u);
  EXPECT_EQ(b.router.unmapped_accesses(), 0u);
  EXPECT_EQ(b.router.last_fault_address(), 0x407FCu);
  EXPECT_EQ(b.mem0.writes(), 1u);
  EXPECT_EQ(b.mem1.reads(), 0u);
}

// ---- approximately-timed transport --------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(AddressRouter, AtRequestToSparseMemoryRoundTrips) {
  Bench b;
  const auto contents = pattern(64, 7);
  b.mem1.store().write(0x40, contents.data(), contents.size());
  std::vector<unsigned char> got;
  b.cpu.script = [&](TestInitiator& self) {
    tlm::tlm_generic_payload& gp = b.mm.acquire(64);
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(0x10040);
    set_correlation(gp, 99, 1u);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_ACCEPTED);
    EXPECT_EQ(b.router.in_flight(), 1u);

    sc_core::wait(self.response_arrived);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(20, SC_NS));  // mem1's latency
    EXPECT_EQ(gp.get_address(), 0x10040u) << "restored once the response is under way";
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    got.assign(gp.get_data_ptr(), gp.get_data_ptr() + 64);

    phase = tlm::END_RESP;
    delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(b.router.in_flight(), 0u);
    EXPECT_EQ(gp.get_address(), 0x10040u);
    gp.release();
  };
  sc_core::sc_start();
  EXPECT_EQ(got, contents);
  ASSERT_EQ(b.cpu.backward_calls.size(), 1u);
  EXPECT_EQ(b.cpu.backward_calls[0].phase, tlm::BEGIN_RESP);
  EXPECT_EQ(b.cpu.backward_calls[0].address, 0x10040u);
  EXPECT_EQ(b.cpu.backward_calls[0].correlation, 99u);
  EXPECT_EQ(b.router.routed(1), 1u);
  EXPECT_EQ(b.mm.in_use(), 0u);
}

SOHUSIM_SYSTEMC_TEST(AddressRouter, AtPhasesOnBothPathsTranslateAndRestore) {
  Bench b;
  std::vector<std::uint64_t> initiator_view;  // gp address as the initiator sees it
  std::vector<tlm::tlm_sync_enum> forward_results;
  std::vector<std::size_t> in_flight;
  b.cpu.script = [&](TestInitiator& self) {
    auto begin = [&](std::uint64_t addr, std::uint64_t id) -> tlm::tlm_generic_payload& {
      tlm::tlm_generic_payload& gp = b.mm.acquire(4);
      gp.set_command(tlm::TLM_WRITE_COMMAND);
      gp.set_address(addr);
      set_correlation(gp, id);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      forward_results.push_back(self.socket->nb_transport_fw(gp, phase, delay));
      in_flight.push_back(b.router.in_flight());
      return gp;
    };
    auto end_response = [&](tlm::tlm_generic_payload& gp) {
      tlm::tlm_phase phase = tlm::END_RESP;
      sc_time delay = sc_core::SC_ZERO_TIME;
      forward_results.push_back(self.socket->nb_transport_fw(gp, phase, delay));
      in_flight.push_back(b.router.in_flight());
      initiator_view.push_back(gp.get_address());
      gp.release();
    };

    // 1. Accepted; END_REQ and BEGIN_RESP come back on the backward path.
    b.at.mode = ScriptedAtTarget::Mode::kAcceptThenPhases;
    tlm::tlm_generic_payload& one = begin(0x80010, 1);
    sc_core::wait(self.response_arrived);
    initiator_view.push_back(one.get_address());
    end_response(one);

    // 2. Early completion on the forward path.
    b.at.mode = ScriptedAtTarget::Mode::kCompleteAtOnce;
    tlm::tlm_generic_payload& two = begin(0x80020, 2);
    initiator_view.push_back(two.get_address());
    two.release();

    // 3. The response returned directly on the forward path.
    b.at.mode = ScriptedAtTarget::Mode::kRespondAtOnce;
    tlm::tlm_generic_payload& three = begin(0x80030, 3);
    initiator_view.push_back(three.get_address());
    end_response(three);

    // 4. The initiator completes the transaction from its BEGIN_RESP callback.
    b.at.mode = ScriptedAtTarget::Mode::kAcceptThenPhases;
    self.reply_to_begin_resp = tlm::TLM_COMPLETED;
    tlm::tlm_generic_payload& four = begin(0x80040, 4);
    sc_core::wait(self.response_arrived);
    in_flight.push_back(b.router.in_flight());
    initiator_view.push_back(four.get_address());
    four.release();

    // 5. Unmapped: completed at once with an address error, the target never sees it.
    tlm::tlm_generic_payload& five = begin(0x90000, 5);
    EXPECT_EQ(five.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    five.release();
  };
  sc_core::sc_start();

  using tlm::TLM_ACCEPTED;
  using tlm::TLM_COMPLETED;
  using tlm::TLM_UPDATED;
  EXPECT_EQ(forward_results, (std::vector<tlm::tlm_sync_enum>{TLM_ACCEPTED, TLM_COMPLETED,  // 1: BEGIN_REQ, END_RESP
                                                              TLM_COMPLETED,                // 2
                                                              TLM_UPDATED, TLM_COMPLETED,   // 3
                                                              TLM_ACCEPTED,                 // 4
                                                              TLM_COMPLETED}));             // 5
  EXPECT_EQ(in_flight, (std::vector<std::size_t>{1, 0, 0, 1, 0, 1, 0, 0}));
  EXPECT_EQ(initiator_view, (std::vector<std::uint64_t>{0x80010, 0x80010, 0x80020, 0x80030, 0x80030, 0x80040}));

  // The target saw local addresses while it owned each request (BEGIN_REQ, and again
  // after END_REQ), and the initiator's address once the response had been sent.
  EXPECT_EQ(b.at.addresses_seen, (std::vector<std::uint64_t>{0x10, 0x10, 0x80010,     // 1
                                                             0x20,                    // 2
                                                             0x30,                    // 3
                                                             0x40, 0x40, 0x80040}));  // 4
  EXPECT_EQ(b.at.correlations_seen, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(b.at.backward_results, (std::vector<tlm::tlm_sync_enum>{TLM_ACCEPTED, TLM_ACCEPTED,      // 1
                                                                    TLM_ACCEPTED, TLM_COMPLETED}));  // 4
  // On the backward path the initiator always saw its own address.
  std::vector<std::pair<tlm::tlm_phase, std::uint64_t>> seen;
  for (const auto& call : b.cpu.backward_calls) {
    seen.emplace_back(call.phase, call.address);
  }
  EXPECT_EQ(
      seen,
      (std::vector<std::pair<tlm::tlm_phase, std::uint64_t>>{
          {tlm::END_REQ, 0x80010}, {tlm::BEGIN_RESP, 0x80010}, {tlm::END_REQ, 0x80040}, {tlm::BEGIN_RESP, 0x80040}}));
  EXPECT_EQ(b.router.unmapped_accesses(), 1u);
  EXPECT_EQ(b.router.last_fault_address(), 0x90000u);
  EXPECT_EQ(b.mm.in_use(), 0u);
}

// ---- debug transport and DMI ----------------------------------------------------------------

SOHUSIM_SYSTEMC_TEST(AddressRouter, DebugTransportIsTranslatedAndCountsNothing) {
  Bench b;
  const auto data = pattern(16, 4);
  std::vector<unsigned char> back(16);
  std::array<unsigned int, 4> n{};
  b.cpu.script = [&](TestInitiator& self) {
    n[0] = self.debug(tlm::TLM_WRITE_COMMAND, 0x40000, const_cast<unsigned char*>(data.data()), 16);
    n[1] = self.debug(tlm::TLM_READ_COMMAND, 0x12400, back.data(), 16);
    std::array<unsigned char, 16> buf{};
    n[2] = self.debug(tlm::TLM_READ_COMMAND, 0x3000, buf.data(), 16);  // unmapped
    n[3] = self.debug(tlm::TLM_READ_COMMAND, 0x1FF8, buf.data(), 16);  // crosses the end
  };
  sc_core::sc_start();
  EXPECT_EQ(n, (std::array<unsigned int, 4>{16, 16, 0, 0}));
  EXPECT_EQ(back, data);
  std::vector<unsigned char> stored(16);
  b.mem1.store().read(0x2400, stored.data(), 16);
  EXPECT_EQ(stored, data);
  EXPECT_EQ(b.router.unmapped_accesses() + b.router.boundary_errors(), 0u);
  EXPECT_EQ(b.router.routed(1), 0u);
}

SOHUSIM_SYSTEMC_TEST(AddressRouter, DmiRangesAndInvalidationsAreTranslated) {
  Bench b;
  struct Answer {
    bool granted;
    std::uint64_t start;
    std::uint64_t end;
  };
  std::vector<Answer> answers;
  unsigned char via_transport = 0;
  b.cpu.script = [&](TestInitiator& self) {
    auto ask = [&](std::uint64_t addr) -> tlm::tlm_dmi {
      tlm::tlm_generic_payload gp;
      gp.set_command(tlm::TLM_READ_COMMAND);
      gp.set_address(addr);
      tlm::tlm_dmi dmi;
      const bool granted = self.socket->get_direct_mem_ptr(gp, dmi);
      EXPECT_EQ(gp.get_address(), addr);
      answers.push_back({granted, dmi.get_start_address(), dmi.get_end_address()});
      return dmi;
    };
    // mem1 grants its page 0x1000..0x1FFF, which the first window shows at 0x11000.
    const tlm::tlm_dmi plain = ask(0x11234);
    plain.get_dmi_ptr()[0x234] = 0x11;
    // Through the shifted alias: local 0x2400 lies in page 0x2000..0x2FFF, of which only
    // 0x2400..0x2BFF is visible, at 0x40000..0x407FF; the pointer must move along.
    const tlm::tlm_dmi alias = ask(0x40010);
    alias.get_dmi_ptr()[0x10] = 0x5A;
    sc_time t = sc_core::SC_ZERO_TIME;
    self.read(0x12410, &via_transport, 1, t);  // the same byte through the other window
    // Unmapped: refused over the whole gap around the address.
    ask(0x3000);
    ask(0x0);
    ask(0x90000);
  };
  sc_core::sc_start();

  ASSERT_EQ(answers.size(), 5u);
  EXPECT_TRUE(answers[0].granted);
  EXPECT_EQ(answers[0].start, 0x11000u);
  EXPECT_EQ(answers[0].end, 0x11FFFu);
  EXPECT_TRUE(answers[1].granted);
  EXPECT_EQ(answers[1].start, 0x40000u);
  EXPECT_EQ(answers[1].end, 0x407FFu);
  EXPECT_EQ(via_transport, 0x5A);
  unsigned char byte = 0;
  b.mem1.store().read(0x1234, &byte, 1);
  EXPECT_EQ(byte, 0x11);
  EXPECT_FALSE(answers[2].granted);
  EXPECT_EQ(answers[2].start, 0x2000u);
  EXPECT_EQ(answers[2].end, 0xFFFFu);
  EXPECT_EQ(answers[3].start, 0x0u);
  EXPECT_EQ(answers[3].end, 0xFFFu);
  EXPECT_EQ(answers[4].start, 0x81000u);
  EXPECT_EQ(answers[4].end, kMaxAddress);

  // mem1 invalidates everything it has: the initiator hears it for both of its windows.
  b.mem1.clear();
  EXPECT_EQ(b.cpu.invalidations, (std::vector<Interval>{{0x10000, 0x13FFF}, {0x40000, 0x407FF}}));
  b.cpu.invalidations.clear();
  b.mem0.clear();
  EXPECT_EQ(b.cpu.invalidations, (std::vector<Interval>{{0x1000, 0x1FFF}}));
}

}  // namespace
