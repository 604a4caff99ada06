// The HBM's TLM-2.0 target (HbmMemory) under a SystemC kernel: splitting, error
// responses, back-pressure, both protocols, data modes, event-driven sleeping, stats and
// the bandwidth track; first against a backend whose timing is known exactly, then with
// the real models.
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/counters/trace_writer.hpp"
#include "sohusim/memory/hbm_memory.hpp"
#include "sohusim/memory/load_initiator.hpp"
#include "sohusim/memory/memory_schema.hpp"
#include "sohusim/sim/core_schema.hpp"
#include "sohusim/sim/memory_manager.hpp"

namespace sohusim::memory {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

// Every access takes `latency` cycles of a 1 GHz clock; at most `queue` accesses held.
// Counts like a one-pseudo-channel memory so that roll-ups have something to sum.
class FixedBackend final : public MemoryBackend {
 public:
  FixedBackend(counters::Registry& reg, const std::string& prefix, Cycle latency, std::size_t queue)
      : latency_(latency),
        queue_(queue),
        bytes_read_(reg.counter(prefix + ".s0.ch0.pc0.bytes_read", "B", "bytes read")),
        bytes_written_(reg.counter(prefix + ".s0.ch0.pc0.bytes_written", "B", "bytes written")) {}

  std::uint64_t capacity_bytes() const override { return 1 << 20; }
  std::uint32_t access_bytes() const override { return 32; }
  double clock_hz() const override { return 1e9; }
  double peak_bytes_per_second() const override { return 32e9; }
  bool can_accept(std::uint64_t, bool) const override { return held_.size() < queue_; }
  void enqueue(MemRequest r) override {
    if (r.addr >= capacity_bytes()) throw std::out_of_range("FixedBackend");
    r.arrival = now_;
    seen.push_back(r);
    held_.push_back({r, now_ + latency_});
  }
  void advance_to(Cycle c) override {
    while (!held_.empty() && held_.front().second <= c) {
      const auto [r, done] = held_.front();
      held_.pop_front();
      (r.write ? bytes_written_ : bytes_read_) += 32;
      now_ = done;
      complete(r, done);
    }
    now_ = c;
  }
  Cycle now() const override { return now_; }
  Cycle next_event() const override { return held_.empty() ? kNever : held_.front().second; }
  std::size_t pending() const override { return held_.size(); }

  std::vector<MemRequest> seen;

 private:
  Cycle latency_;
  std::size_t queue_;
  Cycle now_ = 0;
  std::deque<std::pair<MemRequest, Cycle>> held_;
  counters::Counter& bytes_read_;
  counters::Counter& bytes_written_;
};

HbmMemoryParams params(std::uint32_t max_transactions = 64, bool functional = false) {
  HbmMemoryParams p;
  p.max_transactions = max_transactions;
  p.functional = functional;
  return p;
}

SOHUSIM_SYSTEMC_TEST(HbmMemory, SplitsAnySizeAndAlignmentIntoAccesses) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  auto backend = std::make_unique<FixedBackend>(reg, "hbm", 10, 64);
  FixedBackend& b = *backend;
  HbmMemory mem("hbm", std::move(backend), params(), inst, "hbm");
  test::TestInitiator init("init");
  init.socket.bind(mem.socket);
  init.script = [&](test::TestInitiator& self) {
    std::vector<unsigned char> buf(100);
    sc_time delay(3, SC_NS);
    ASSERT_EQ(self.read(0x1005, buf.data(), 100, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME) << "b_transport returns with the time advanced";
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(13, SC_NS)) << "arrives at 3 ns, 10 cycles of 1 ns";
    delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.write(0x2000, buf.data(), 1, delay), tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
  ASSERT_EQ(b.seen.size(), 5u);
  EXPECT_EQ(b.seen[0].addr, 0x1000u);
  EXPECT_EQ(b.seen[3].addr, 0x1060u);  // [0x1005, 0x1069) needs 0x1000..0x107f
  EXPECT_TRUE(b.seen[4].write);
  EXPECT_EQ(reg.value("hbm.port.accesses"), 5);
  EXPECT_EQ(reg.value("hbm.port.bytes_read"), 100);
  EXPECT_EQ(reg.value("hbm.s0.bytes_read"), 128) << "per-stack roll-up of the backend's counters";
  EXPECT_EQ(reg.value("hbm.bytes_written"), 32) << "per-device roll-up";
  // Event-driven: nothing keeps the kernel awake after the last response.
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(23, SC_NS));
}

SOHUSIM_SYSTEMC_TEST(HbmMemory, AddressErrorsAreAnsweredAndCounted) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  auto backend = std::make_unique<FixedBackend>(reg, "hbm", 10, 64);
  FixedBackend& b = *backend;
  HbmMemory mem("hbm", std::move(backend), params(), inst, "hbm");
  test::TestInitiator init("init");
  init.socket.bind(mem.socket);
  sim::MemoryManager mm;
  init.script = [&](test::TestInitiator& self) {
    unsigned char buf[64];
    sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.read((1 << 20) - 16, buf, 32, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.read(~0ULL - 8, buf, 32, delay), tlm::TLM_ADDRESS_ERROR_RESPONSE) << "no wrap-around";
    tlm::tlm_generic_payload& gp = mm.acquire();
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(1 << 20);
    gp.set_data_length(4);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    gp.release();
    EXPECT_EQ(self.read(0, buf, 0, delay), tlm::TLM_GENERIC_ERROR_RESPONSE) << "zero length";
  };
  sc_core::sc_start();
  EXPECT_EQ(mem.address_errors(), 3u);
  EXPECT_EQ(reg.value("hbm.port.other_errors"), 1);
  EXPECT_TRUE(b.seen.empty()) << "errors never reach the backend";
}

SOHUSIM_SYSTEMC_TEST(HbmMemory, FullTargetWithholdsEndReq) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  HbmMemory mem("hbm", std::make_unique<FixedBackend>(reg, "hbm", 10, 64), params(2), inst, "hbm");
  sim::MemoryManager mm;
  std::vector<std::unique_ptr<test::TestInitiator>> inits;
  std::vector<tlm::tlm_sync_enum> replies(3);
  for (int i = 0; i < 3; ++i) {
    inits.push_back(std::make_unique<test::TestInitiator>(("init" + std::to_string(i)).c_str()));
    inits.back()->socket.bind(mem.socket);
    inits.back()->reply_to_begin_resp = tlm::TLM_COMPLETED;
    inits.back()->script = [&, i](test::TestInitiator& self) {
      wait(sc_time(i, sc_core::SC_PS));  // a fixed order within the first nanosecond
      tlm::tlm_generic_payload& gp = mm.acquire();
      gp.set_command(tlm::TLM_READ_COMMAND);
      gp.set_address(64 * static_cast<std::uint64_t>(i));
      gp.set_data_length(32);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      replies[static_cast<std::size_t>(i)] = self.socket->nb_transport_fw(gp, phase, delay);
      gp.release();
    };
  }
  sc_core::sc_start();
  EXPECT_EQ(replies[0], tlm::TLM_UPDATED);
  EXPECT_EQ(replies[1], tlm::TLM_UPDATED);
  EXPECT_EQ(replies[2], tlm::TLM_ACCEPTED) << "the third request finds the target full";
  EXPECT_EQ(reg.value("hbm.port.backpressure"), 1);
  // The third initiator got END_REQ when the first response freed a slot (10 ns), and its
  // response 10 cycles later.
  const auto& calls = inits[2]->backward_calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].phase, tlm::END_REQ);
  EXPECT_EQ(calls[0].at, sc_time(10, SC_NS));
  EXPECT_EQ(calls[1].phase, tlm::BEGIN_RESP);
  EXPECT_EQ(calls[1].at, sc_time(20, SC_NS));
  ASSERT_EQ(inits[0]->backward_calls.size(), 1u);
  EXPECT_EQ(inits[0]->backward_calls[0].phase, tlm::BEGIN_RESP);
  EXPECT_EQ(inits[0]->backward_calls[0].at, sc_time(10, SC_NS));
}

SOHUSIM_SYSTEMC_TEST(HbmMemory, OneResponseAtATimePerInitiator) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  HbmMemory mem("hbm", std::make_unique<FixedBackend>(reg, "hbm", 10, 64), params(), inst, "hbm");
  sim::MemoryManager mm;
  test::TestInitiator init("init");
  init.socket.bind(mem.socket);
  init.reply_to_begin_resp = tlm::TLM_ACCEPTED;  // END_RESP comes later, explicitly
  init.script = [&](test::TestInitiator& self) {
    tlm::tlm_generic_payload* gps[2];
    for (int i = 0; i < 2; ++i) {
      tlm::tlm_generic_payload& gp = mm.acquire();
      gps[i] = &gp;
      gp.set_command(tlm::TLM_READ_COMMAND);
      gp.set_address(32 * static_cast<std::uint64_t>(i));
      gp.set_data_length(32);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_UPDATED);
      EXPECT_EQ(phase, tlm::END_REQ);
    }
    wait(sc_time(15, SC_NS));
    EXPECT_EQ(self.backward_calls.size(), 1u) << "the second response waits for END_RESP";
    tlm::tlm_phase phase = tlm::END_RESP;
    sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(*gps[0], phase, delay), tlm::TLM_COMPLETED);
    wait(sc_time(1, SC_NS));
    ASSERT_EQ(self.backward_calls.size(), 2u);
    EXPECT_EQ(self.backward_calls[1].at, sc_time(15, SC_NS));
    phase = tlm::END_RESP;
    self.socket->nb_transport_fw(*gps[1], phase, delay);
    gps[0]->release();
    gps[1]->release();
  };
  sc_core::sc_start();
  EXPECT_EQ(mem.transactions_held(), 0u);
}

// ---- with the real models -------------------------------------------------------------

config::Config full_config(const std::vector<std::string>& sets) {
  config::Schema schema = sim::core_schema();
  schema.merge(memory_schema());
  config::ConfigLoader loader(std::move(schema), {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
  loader.load_preset("hbm/hbm3-6400");
  for (const std::string& s : sets) loader.set(s);
  return loader.resolve();
}

void functional_round_trip(const char* fidelity) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  const config::Config cfg = full_config({"sim.data_mode=functional", std::string("sim.fidelity=") + fidelity});
  HbmMemory mem("hbm", cfg, inst, "dev0.hbm");
  ASSERT_NE(mem.store(), nullptr);
  test::TestInitiator init("init");
  init.socket.bind(mem.socket);
  init.script = [&](test::TestInitiator& self) {
    std::vector<unsigned char> out(777), in(777, 0);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 13 + 1);
    sc_time delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.write(0x12345, out.data(), 777, delay), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(self.read(0x12345, in.data(), 777, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in, out);
    unsigned char dbg[3] = {};
    EXPECT_EQ(self.debug(tlm::TLM_READ_COMMAND, 0x12345 + 10, dbg, 3), 3u);
    EXPECT_EQ(dbg[0], out[10]);
  };
  sc_core::sc_start();
  EXPECT_EQ(reg.value("dev0.hbm.port.requests"), 2);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FunctionalDataRoundTripDetailed) {
  functional_round_trip("detailed");
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FunctionalDataRoundTripFast) {
  functional_round_trip("fast");
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, TimingModeHoldsNoData) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  HbmMemory mem("hbm", full_config({}), inst, "hbm");
  EXPECT_EQ(mem.store(), nullptr);
  test::TestInitiator init("init");
  init.socket.bind(mem.socket);
  init.script = [&](test::TestInitiator& self) {
    std::vector<unsigned char> buf(4096, 0xEE);
    sc_time delay = sc_core::SC_ZERO_TIME;
    for (int i = 0; i < 64; ++i) {
      ASSERT_EQ(self.write(static_cast<std::uint64_t>(i) << 24, buf.data(), 4096, delay), tlm::TLM_OK_RESPONSE);
    }
    std::vector<unsigned char> back(4096, 0x11);
    ASSERT_EQ(self.read(0, back.data(), 4096, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, std::vector<unsigned char>(4096, 0x11)) << "timing mode moves no data";
    unsigned char d[4];
    EXPECT_EQ(self.debug(tlm::TLM_READ_COMMAND, 0, d, 4), 0u);
  };
  sc_core::sc_start();
}

// One 32 B read into an idle memory: tRCD + CL + nBL + controller latency (31 + 20 + 2 +
// 16 cycles of 625 ps), through the TLM target, at either fidelity.
void unloaded_read(const char* fidelity) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  const config::Config cfg = full_config({std::string("hbm.target.fidelity=") + fidelity});
  HbmMemory mem("hbm", cfg, inst, "hbm");
  EXPECT_EQ(mem.period(), sc_time(625, sc_core::SC_PS));
  test::TestInitiator init("init");
  init.socket.bind(mem.socket);
  init.script = [&](test::TestInitiator& self) {
    unsigned char b[32];
    sc_time delay = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(self.read(0x4000, b, 32, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(69 * 625, sc_core::SC_PS)) << fidelity;
  };
  sc_core::sc_start();
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, UnloadedReadLatencyDetailed) {
  unloaded_read("detailed");
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, UnloadedReadLatencyFast) {
  unloaded_read("fast");
}

// The front end, on the detailed model with 2-entry read queues: reads sent by `bindings`
// initiators, request i by initiator i % bindings at (i + 1) ps. Returns the accesses the
// backend holds 5 ns later, long before the first RD frees an entry (tRCD is 19 ns);
// every request must complete, after `accesses` accesses in all.
struct Sent {
  std::uint64_t address;
  std::uint32_t length;
};
std::size_t held_at_5ns(const std::string& staging, const std::vector<Sent>& sent, int bindings,
                        std::uint64_t accesses) {
  counters::Registry reg;
  sim::Instrumentation inst{&reg, nullptr, 0};
  const config::Config cfg =
      full_config({"hbm.target.fidelity=detailed", "hbm.controller.read_queue=2", "hbm.target.staging=" + staging});
  HbmMemory mem("hbm", cfg, inst, "hbm");
  sim::MemoryManager mm;
  std::vector<std::unique_ptr<test::TestInitiator>> inits;
  for (int b = 0; b < bindings; ++b) {
    inits.push_back(std::make_unique<test::TestInitiator>(("init" + std::to_string(b)).c_str()));
    inits.back()->socket.bind(mem.socket);
    inits.back()->reply_to_begin_resp = tlm::TLM_COMPLETED;
    inits.back()->script = [&, b](test::TestInitiator& self) {
      for (std::size_t i = static_cast<std::size_t>(b); i < sent.size(); i += static_cast<std::size_t>(bindings)) {
        wait(sc_time(static_cast<double>(i + 1), sc_core::SC_PS) - sc_core::sc_time_stamp());
        tlm::tlm_generic_payload& gp = mm.acquire();
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(sent[i].address);
        gp.set_data_length(sent[i].length);
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_time delay = sc_core::SC_ZERO_TIME;
        EXPECT_EQ(self.socket->nb_transport_fw(gp, phase, delay), tlm::TLM_UPDATED);
        gp.release();
      }
    };
  }
  std::size_t held = 0;
  test::TestInitiator probe("probe");  // sends nothing
  probe.socket.bind(mem.socket);
  probe.script = [&](test::TestInitiator&) {
    wait(sc_time(5, SC_NS));
    held = mem.backend().pending();
  };
  sc_core::sc_start();
  std::size_t calls = 0, responses = 0;  // each request: one BEGIN_RESP and nothing else
  for (const auto& init : inits) {
    calls += init->backward_calls.size();
    for (const auto& call : init->backward_calls) responses += call.phase == tlm::BEGIN_RESP ? 1 : 0;
  }
  EXPECT_EQ(calls, sent.size());
  EXPECT_EQ(responses, sent.size());
  EXPECT_EQ(reg.value("hbm.port.accesses"), static_cast<double>(accesses));
  EXPECT_EQ(mem.transactions_held(), 0u);
  return held;
}

// A (64 B at 0) fills the read queue of ch0/pc0; B (2 KiB at 2 KiB) starts on that same
// queue and covers every other pseudo-channel of the stack twice.
std::size_t held_behind_a_full_queue(const std::string& staging) {
  return held_at_5ns(staging, {{0, 64}, {2048, 2048}}, 2, 2 + 64);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, RequestWaitingOnOneQueueStillFeedsTheOthers) {
  // A's 2 accesses, and B's 62 on the 31 other pseudo-channels; B's 2 on ch0/pc0 wait in
  // its staging.
  EXPECT_EQ(held_behind_a_full_queue("1024"), 2u + 62u);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FullStagingStopsTheRequestThere) {
  // With one staging entry, B's second access to ch0/pc0 finds it full: B stops there,
  // and the other pseudo-channels get nothing from it until that queue drains.
  EXPECT_EQ(held_behind_a_full_queue("1"), 2u);
}

// Requests are split in the order they arrived. With one staging entry, A (64 B at 0)
// fills the read queue of ch0/pc0; B (128 B at 2 KiB, ch0/pc0 again) stages one access
// there and stops at its second; C (64 B at 64, ch0/pc1, an empty queue) arrives after B.
std::size_t held_behind_a_stopped_request(int bindings, bool send_b = true) {
  if (!send_b) return held_at_5ns("1", {{0, 64}, {64, 64}}, bindings, 2 + 2);
  return held_at_5ns("1", {{0, 64}, {2048, 128}, {64, 64}}, bindings, 2 + 4 + 2);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, ARequestWaitsBehindAStoppedOneOfItsBinding) {
  // A's 2 accesses only: C waits until B has staged its last access.
  EXPECT_EQ(held_behind_a_stopped_request(1), 2u);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, ARequestWaitsBehindAStoppedOneOfAnotherBinding) {
  // The target's port splits what it accepted in order, whoever sent it.
  EXPECT_EQ(held_behind_a_stopped_request(3), 2u);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, ARequestSplitToTheEndDoesNotHoldTheNext) {
  // Without B, C goes in at once beside A: A's 2 accesses and C's 2.
  EXPECT_EQ(held_behind_a_stopped_request(2, /*send_b=*/false), 4u);
}

// Through the TLM path, with requests of 256 B (the fast model takes them whole) and AT
// initiators keeping many in flight: the two fidelities agree on bandwidth.
double tlm_stream_bandwidth(const char* fidelity, LoadPattern::Kind kind, std::uint32_t bytes, double reads,
                            counters::Registry& reg, const std::string& trace_path = {}, std::uint32_t requests = 1500,
                            std::uint32_t outstanding = 32, const std::string& refresh = "allbank",
                            std::uint64_t stride = 4096, std::uint32_t max_transactions = 0,
                            std::uint32_t initiators = 8, const std::vector<std::string>& sets = {}) {
  std::unique_ptr<counters::TraceRecorder> trace =
      std::make_unique<counters::TraceRecorder>(trace_path.empty() ? nullptr : counters::make_trace_writer(trace_path));
  const counters::TrackId proc = trace->enabled() ? trace->process_track("dev0") : 0;
  sim::Instrumentation inst{&reg, trace.get(), proc};
  // The target holds every request the initiators keep in flight, as in `sohusim mem`,
  // unless told otherwise (max_transactions).
  const std::uint32_t held = max_transactions != 0 ? max_transactions : std::max(1024u, initiators * outstanding);
  std::vector<std::string> all = {std::string("hbm.target.fidelity=") + fidelity, "hbm.target.bandwidth_sample=1 us",
                                  "hbm.controller.refresh=" + refresh,
                                  "hbm.target.max_transactions=" + std::to_string(held)};
  all.insert(all.end(), sets.begin(), sets.end());
  const config::Config cfg = full_config(all);
  HbmMemory mem("hbm", cfg, inst, "hbm");
  sim::MemoryManager mm;
  std::vector<std::unique_ptr<LoadInitiator>> inits;
  LoadPattern p;
  p.kind = kind;
  p.request_bytes = bytes;
  p.read_fraction = reads;
  p.requests = requests;
  p.outstanding = outstanding;
  p.window = 1ULL << 28;
  p.stride = stride;
  for (std::uint32_t i = 0; i < initiators; ++i) {
    p.seed = i + 1;
    inits.push_back(std::make_unique<LoadInitiator>(("gen" + std::to_string(i)).c_str(), p, i, initiators, mm,
                                                    counters::Scope(reg, "gen" + std::to_string(i))));
    inits.back()->socket.bind(mem.socket);
  }
  sc_core::sc_start();
  sc_time end = sc_core::SC_ZERO_TIME;
  for (auto& g : inits) {
    EXPECT_TRUE(g->done());
    end = std::max(end, g->finish_time());
  }
  trace->close();
  return static_cast<double>(initiators) * requests * bytes / end.to_seconds();
}

// Runs `f` in a forked child (a SystemC kernel of its own) and puts what it returns, a
// plain value, into `out`; false if the child did not hand one back.
template <typename T, typename F>
bool in_child(T& out, F f) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    const T r = f();
    if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) std::_Exit(2);
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const bool ok = read(fds[0], &out, sizeof out) == static_cast<ssize_t>(sizeof out);
  close(fds[0]);
  close(fds[1]);
  return ok;
}

// The fast fidelity against the detailed one through the TLM target, as `sohusim mem` and
// the device's DMA reach them: bandwidth within 10 %. The cases the fast model is known to
// miss by more are in docs/memory-frontend.md ("Known gaps") with their commands.
void compare_tlm(LoadPattern::Kind kind, std::uint32_t bytes, double reads, std::uint32_t requests = 1500,
                 std::uint32_t outstanding = 32, const std::string& refresh = "allbank", double tolerance = 0.10,
                 std::uint64_t stride = 4096, std::uint32_t max_transactions = 0) {
  // Each run needs a kernel of its own: the detailed one in a nested child.
  double detailed = 0;
  ASSERT_TRUE(in_child(detailed, [&] {
    counters::Registry reg;
    return tlm_stream_bandwidth("detailed", kind, bytes, reads, reg, {}, requests, outstanding, refresh, stride,
                                max_transactions);
  }));
  counters::Registry reg;
  const double fast = tlm_stream_bandwidth("fast", kind, bytes, reads, reg, {}, requests, outstanding, refresh, stride,
                                           max_transactions);
  const char* name = kind == LoadPattern::Kind::Stream    ? "stream"
                     : kind == LoadPattern::Kind::Strided ? "strided"
                                                          : "random";
  std::printf("TLM %u B %s %.0f%% read, refresh %s: detailed %.1f GB/s, fast %.1f GB/s (%+.1f%%)\n", bytes, name,
              reads * 100, refresh.c_str(), detailed / 1e9, fast / 1e9, 100 * (fast / detailed - 1));
  EXPECT_NEAR(fast / detailed, 1.0, tolerance);
}

// A 1056 B stride with 256 requests in flight per initiator: three of every eight 32 B
// requests meet a row another one opened 31 strides earlier, and the controller's queue
// holds both; FR-FCFS serves them as hits before the bank's next row (the fast model's
// past rows of a bank). The target holds all 2048 requests.
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmStrided1056Deep32) {
  compare_tlm(LoadPattern::Kind::Strided, 32, 1.0, 25000, 256, "allbank", 0.10, 1056);
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmStrided1056Deep64) {
  compare_tlm(LoadPattern::Kind::Strided, 64, 1.0, 12500, 256, "allbank", 0.10, 1056);
}
// The shared command buses under each `hbm.controller.bus_arbiter`, on the 1056 B stride of
// 32 B writes as `sohusim mem --pattern strided:1056 --reads 0 --size 32 --refresh off`
// plays it (4 initiators x 128 in flight). Initiators 0 and 1 write only to pc0 of each
// channel, 2 and 3 only to pc1: the same traffic, shifted. Three of every eight writes meet
// a row opened for a write 31 strides earlier, if they are queued before its column
// command. With `fixed` (the lower index first at every tie) pc1 of every channel issues
// about 9 % more ACTs than pc0, and the run is some 12 % slower than the fast model's,
// which books the two alike; with `oldest` the two agree with each other and with it.
struct WriteStrideRun {
  double bandwidth = 0, act[2] = {0, 0};
};
WriteStrideRun write_stride_run(const char* fidelity, const std::string& arbiter) {
  counters::Registry reg;
  WriteStrideRun r;
  r.bandwidth = tlm_stream_bandwidth(fidelity, LoadPattern::Kind::Strided, 32, 0.0, reg, {}, 25000, 128, "off", 1056, 0,
                                     4, {"hbm.controller.bus_arbiter=" + arbiter});
  for (int c = 0; c < 16; ++c) {
    for (int pc = 0; pc < 2; ++pc)
      r.act[pc] += reg.value("hbm.s0.ch" + std::to_string(c) + ".pc" + std::to_string(pc) + ".act");
  }
  return r;
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, OldestFirstBusArbiterServesBothPseudoChannelsAlike) {
  WriteStrideRun fixed, oldest;
  ASSERT_TRUE(in_child(fixed, [] { return write_stride_run("detailed", "fixed"); }));
  ASSERT_TRUE(in_child(oldest, [] { return write_stride_run("detailed", "oldest"); }));
  const WriteStrideRun fast = write_stride_run("fast", "fixed");
  std::printf(
      "1056 B write stride: detailed fixed %.1f GB/s (ACT pc0 %.0f, pc1 %.0f), oldest %.1f GB/s (%.0f, %.0f); "
      "fast %.1f GB/s (%.0f, %.0f)\n",
      fixed.bandwidth / 1e9, fixed.act[0], fixed.act[1], oldest.bandwidth / 1e9, oldest.act[0], oldest.act[1],
      fast.bandwidth / 1e9, fast.act[0], fast.act[1]);
  EXPECT_GT(fixed.act[1] / fixed.act[0], 1.05);
  EXPECT_NEAR(oldest.act[1] / oldest.act[0], 1.0, 0.01);
  EXPECT_NEAR(fast.act[1] / fast.act[0], 1.0, 0.01);
  EXPECT_GT(fast.bandwidth / fixed.bandwidth, 1.08);
  EXPECT_NEAR(fast.bandwidth / oldest.bandwidth, 1.0, 0.05);
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmStream256) {
  compare_tlm(LoadPattern::Kind::Stream, 256, 1.0);
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmStream4KiB) {
  compare_tlm(LoadPattern::Kind::Stream, 4096, 1.0);
}
// Read/write mixes of bulk requests: the write batches' turnarounds, an average per write
// access (write_switch_cost).
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmMix4KiB) {
  compare_tlm(LoadPattern::Kind::Stream, 4096, 0.67, 1500, 32);
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmMix16KiB) {
  compare_tlm(LoadPattern::Kind::Stream, 16384, 0.67, 375);
}
// 32 KiB requests, 1 KiB per pseudo-channel: far more than a controller queue holds.
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmStream32KiB) {
  compare_tlm(LoadPattern::Kind::Stream, 32768, 1.0, 300);
}
// The device's own regime: DMA requests of hundreds of KiB, a few in flight per channel.
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmWrites256KiB) {
  compare_tlm(LoadPattern::Kind::Stream, 262144, 0.0, 24, 2);
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmWrites16KiB) {
  compare_tlm(LoadPattern::Kind::Stream, 16384, 0.0, 375);
}
// Random 4 KiB blocks are paced by their activations (act_gap); the refreshes stop them too.
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmRandom4KiB) {
  compare_tlm(LoadPattern::Kind::Random, 4096, 1.0);
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmRandom4KiBRefreshOff) {
  compare_tlm(LoadPattern::Kind::Random, 4096, 1.0, 1500, 32, "off");
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmRandom4KiBPerBankRefresh) {
  compare_tlm(LoadPattern::Kind::Random, 4096, 1.0, 1500, 32, "perbank");
}
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmRandom64) {
  compare_tlm(LoadPattern::Kind::Random, 64, 1.0);
}
// A stream of 64 B requests, 67 % reads, 64 in flight per initiator: each request is two
// accesses of one pseudo-channel, whose writes wait in the write buffer while reads are
// queued there.
SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, FastMatchesDetailedThroughTlmStreamMix64) {
  compare_tlm(LoadPattern::Kind::Stream, 64, 0.67, 4000, 64);
}

SOHUSIM_SYSTEMC_TEST(HbmMemoryReal, PerStackBandwidthTrackInTheTrace) {
  counters::Registry reg;
  const std::string path = ::testing::TempDir() + "hbm_bw_trace.json";
  tlm_stream_bandwidth("fast", LoadPattern::Kind::Stream, 1024, 1.0, reg, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("hbm s0 bandwidth (GB/s)"), std::string::npos);
  EXPECT_GT(reg.value("hbm.s0.rd"), 0) << "per-stack roll-up of the fast model's counters";
  EXPECT_EQ(reg.value("hbm.rd"), reg.value("hbm.s0.rd"));
  EXPECT_GT(reg.value("hbm.s0.bandwidth"), 0);
}

}  // namespace
}  // namespace sohusim::memory
