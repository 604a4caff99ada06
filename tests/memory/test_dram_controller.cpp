// The controller and the DramSystem event loop: latencies, refresh, write draining,
// forwarding, scheduling and page policies, counters, and the MemoryBackend contract.
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"

namespace sohusim::memory {
namespace {

using hbmtest::hbm_config;
using hbmtest::run_pattern;
using hbmtest::stream_from;

struct Rig {
  explicit Rig(const std::string& preset = "hbm/hbm3-6400", const std::vector<std::string>& sets = {})
      : mem(DramSystem::from_config(hbm_config(preset, sets), counters::Scope(registry, "dev0.hbm"))) {}

  double stat(const std::string& name) const { return registry.value("dev0.hbm." + name); }
  double pc0(const std::string& name) const { return stat("s0.ch0.pc0." + name); }

  // Runs until every held request completed; returns the completion cycle of each id.
  std::vector<Cycle> drain(std::size_t ids) {
    std::vector<Cycle> done(ids, kNever);
    mem->set_completion([&](const MemRequest& r, Cycle t) { done.at(r.id) = t; });
    while (mem->next_event() != kNever) mem->advance_to(mem->next_event());
    return done;
  }
  std::uint64_t addr(std::uint32_t bank_group, std::uint32_t bank, std::uint32_t row, std::uint32_t column,
                     std::uint32_t channel = 0, std::uint32_t pc = 0) const {
    DecodedAddress d;
    d.channel = channel;
    d.pseudo_channel = pc;
    d.bank_group = bank_group;
    d.bank = bank;
    d.row = row;
    d.column = column;
    return mem->mapping().encode(d);
  }

  counters::Registry registry;
  std::unique_ptr<DramSystem> mem;
};

TEST(DramController, UnloadedReadLatencyIsRcdPlusClPlusBurstPlusControllerLatency) {
  Rig rig("hbm/hbm3-6400", {"hbm.controller.page_policy=open"});
  const DramTimings& t = rig.mem->spec().timing;
  const std::uint32_t overhead = rig.mem->params().latency;
  rig.mem->enqueue({rig.addr(0, 0, 5, 0), false, 0, 0});
  std::vector<Cycle> done = rig.drain(1);
  // ACT at 0, RD at tRCDRD, last data beat at + CL + nBL, then the controller/PHY path.
  EXPECT_EQ(done[0], Cycle{t.RCDRD + t.CL + t.burst_cycles + overhead});
  EXPECT_EQ(done[0], 69u);  // 31 + 20 + 2 + 16 for HBM3-6400

  // A row hit later: CL + nBL + latency.
  const Cycle t1 = rig.mem->now() + 100;
  rig.mem->advance_to(t1);
  rig.mem->enqueue({rig.addr(0, 0, 5, 1), false, 0, 0});
  done = rig.drain(1);
  EXPECT_EQ(done[0] - t1, Cycle{t.CL + t.burst_cycles + overhead});
  EXPECT_EQ(rig.pc0("row_hits"), 1);

  // A conflict: PRE, ACT, RD.
  const Cycle t2 = rig.mem->now() + 100;
  rig.mem->advance_to(t2);
  rig.mem->enqueue({rig.addr(0, 0, 6, 0), false, 0, 0});
  done = rig.drain(1);
  EXPECT_EQ(done[0] - t2, Cycle{t.RP + t.RCDRD + t.CL + t.burst_cycles + overhead});
  EXPECT_EQ(rig.pc0("row_conflicts"), 1);
  EXPECT_EQ(rig.pc0("row_misses"), 1);
}

TEST(DramController, UnloadedWriteAndHbm2Latencies) {
  Rig rig;
  const DramTimings& t = rig.mem->spec().timing;
  rig.mem->enqueue({rig.addr(1, 2, 3, 4), true, 0, 0});
  EXPECT_EQ(rig.drain(1)[0], Cycle{t.RCDWR + t.CWL + t.burst_cycles + 16});
  Rig hbm2("hbm/hbm2-2000");
  hbm2.mem->enqueue({0, false, 0, 0});
  EXPECT_EQ(hbm2.drain(1)[0], Cycle{12 + 17 + 2 + 16});
}

TEST(DramController, IdleMemorySleepsAndAccountsRefreshInBulk) {
  Rig rig;
  EXPECT_EQ(rig.mem->next_event(), kNever);
  EXPECT_EQ(rig.mem->pending(), 0u);
  rig.mem->advance_to(10'000'000);
  rig.mem->sync_stats();
  EXPECT_EQ(rig.pc0("refab"), 10'000'000 / 6240);
  EXPECT_EQ(rig.stat("s0.ch15.pc1.refab"), 10'000'000 / 6240);
  EXPECT_EQ(rig.stat("cycles"), 10'000'000);
  // The last refresh ended long before: an arriving read sees an idle bank.
  rig.mem->enqueue({rig.addr(0, 0, 0, 0), false, 0, 0});
  const Cycle arrival = rig.mem->now();
  EXPECT_EQ(rig.drain(1)[0] - arrival, 69u);

  Rig perbank("hbm/hbm3-6400", {"hbm.controller.refresh=perbank"});
  perbank.mem->advance_to(1'000'000);
  perbank.mem->sync_stats();
  EXPECT_EQ(perbank.pc0("refpb"), 1'000'000 / (6240 / 16));
  EXPECT_EQ(perbank.pc0("refab"), 0);
}

// Refresh timings that leave no time to work are refused when the model is built from a
// DramSpec directly (the hbm.* schema refuses them per key). With tREFI 587-653 at
// HBM3-6400 the controller opened rows every interval and never read them before the
// next forced refresh closed them: simulated time ran on, no request completed.
TEST(DramController, RefusesRefreshTimingsThatLeaveNoTimeToWork) {
  Rig base;
  const auto message = [&](std::uint32_t refi, RefreshMode refresh) {
    DramSpec spec = base.mem->spec();
    spec.timing.REFI = refi;
    ControllerParams params;
    params.refresh = refresh;
    counters::Registry registry;
    try {
      DramSystem mem(spec, base.mem->mapping(), params, counters::Scope(registry, "x"));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(653, RefreshMode::AllBank),
            "DramSystem: tREFI (653 cycles) is below tRP + tRFCab + tRC + CL|CWL + nBL (680): refreshing would leave "
            "no time to serve requests");
  EXPECT_EQ(message(680, RefreshMode::AllBank), "accepted");
  EXPECT_EQ(message(653, RefreshMode::Off), "accepted");
  EXPECT_NE(message(447, RefreshMode::PerBank).find("banks x (tREFI / banks) (432 cycles)"), std::string::npos);
  EXPECT_EQ(message(448, RefreshMode::PerBank), "accepted");
  // A controller built on its own checks too.
  struct Sink : CompletionSink {
    void on_complete(const MemRequest&, Cycle) override {}
  } sink;
  DramSpec spec = base.mem->spec();
  spec.timing.REFI = 653;
  ChannelTiming timing(spec);
  counters::Registry registry;
  try {
    DramController controller(spec, ControllerParams{}, timing, 0, PcStats(counters::Scope(registry, "y"), 0.625),
                              sink);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("DramController: tREFI (653 cycles)", 0), 0u) << e.what();
  }
}

// A pseudo-channel that held nothing when its all-bank refresh fell due accounts it when
// the next request arrives, at the due time: the other pseudo-channel of its channel,
// which shares the command buses and was busy meanwhile, does not move it later. (It did
// when the late REFab asked the buses' latest use: it went after the other's last row
// command, and this read, arriving after the window, waited a whole tRFCab.)
TEST(DramController, IdlePseudoChannelRefreshesAtItsDueTimeWhileItsSiblingWorks) {
  Rig rig;
  const DramTimings& t = rig.mem->spec().timing;
  Cycle done = kNever;
  rig.mem->set_completion([&](const MemRequest& r, Cycle at) {
    if (r.id == 999) done = at;
  });
  std::uint64_t id = 0;
  for (Cycle c = t.REFI - 500; c < t.REFI + t.RP + t.RFCab + 300; c += 100, ++id) {
    rig.mem->advance_to(c);
    rig.mem->enqueue({rig.addr(0, id % 4, 1 + static_cast<std::uint32_t>(id), 0, 0, 1), false, id, 0});
  }
  const Cycle arrival = rig.mem->now();
  rig.mem->enqueue({rig.addr(0, 0, 0, 0), false, 999, 0});
  while (rig.mem->next_event() != kNever) rig.mem->advance_to(rig.mem->next_event());
  EXPECT_EQ(done - arrival, 69u);
  rig.mem->sync_stats();
  EXPECT_EQ(rig.pc0("refab"), 1);
}

TEST(DramController, RefreshDuringAStream) {
  for (const char* mode : {"allbank", "perbank"}) {
    Rig rig("hbm/hbm3-6400", {std::string("hbm.controller.refresh=") + mode});
    run_pattern(*rig.mem, 200'000, stream_from(0, 32));
    rig.mem->sync_stats();
    const double cycles = rig.stat("cycles");
    const bool all = std::string(mode) == "allbank";
    const double interval = all ? 6240.0 : 390.0;
    const double count = rig.pc0(all ? "refab" : "refpb");
    EXPECT_NEAR(count, cycles / interval, 2.0) << mode;
    EXPECT_EQ(rig.pc0(all ? "refpb" : "refab"), 0) << mode;
  }
}

TEST(DramController, WriteDrainFollowsWatermarks) {
  const std::vector<std::string> sets = {"hbm.mapping.preset=single-pc", "hbm.controller.refresh=off",
                                         "hbm.controller.read_queue=32", "hbm.controller.write_queue=32",
                                         "hbm.controller.write_high=24", "hbm.controller.write_low=8"};
  Rig rig("hbm/hbm3-6400", sets);
  // 32 reads and 23 writes (below write_high = 24): reads go first.
  std::uint64_t id = 0;
  for (std::uint32_t i = 0; i < 32; ++i) rig.mem->enqueue({rig.addr(i % 4, 0, 1, i / 4), false, id++, 0});
  for (std::uint32_t i = 0; i < 23; ++i) rig.mem->enqueue({rig.addr(i % 4, 1, 2, i / 4), true, id++, 0});
  rig.mem->advance_to(rig.mem->next_event());
  EXPECT_FALSE(rig.mem->controller(0, 0, 0).writing());
  while (rig.pc0("rd") < 32) rig.mem->advance_to(rig.mem->next_event());
  EXPECT_EQ(rig.pc0("wr"), 0);  // no write while reads waited below the high watermark
  rig.drain(id);
  EXPECT_EQ(rig.pc0("wr"), 23);

  // 32 reads and 24 writes: the high watermark drains writes down to write_low = 8 first.
  Rig rig2("hbm/hbm3-6400", sets);
  id = 0;
  for (std::uint32_t i = 0; i < 32; ++i) rig2.mem->enqueue({rig2.addr(i % 4, 0, 1, i / 4), false, id++, 0});
  for (std::uint32_t i = 0; i < 24; ++i) rig2.mem->enqueue({rig2.addr(i % 4, 1, 2, i / 4), true, id++, 0});
  rig2.mem->advance_to(rig2.mem->next_event());
  EXPECT_TRUE(rig2.mem->controller(0, 0, 0).writing());
  while (rig2.pc0("rd") < 1) rig2.mem->advance_to(rig2.mem->next_event());
  EXPECT_EQ(rig2.pc0("wr"), 24 - 8);
  rig2.drain(id);
  EXPECT_EQ(rig2.pc0("wr"), 24);
  EXPECT_EQ(rig2.pc0("rd"), 32);
}

TEST(DramController, ReadStarvationInterruptsWriteDrain) {
  Rig rig("hbm/hbm3-6400",
          {"hbm.mapping.preset=single-pc", "hbm.controller.refresh=off", "hbm.controller.read_starvation=50",
           "hbm.controller.write_low=0", "hbm.controller.write_high=1"});
  std::uint64_t id = 0;
  // Writes that all conflict in one bank (slow), then a read: it must not wait for all.
  for (std::uint32_t i = 0; i < 16; ++i) rig.mem->enqueue({rig.addr(0, 0, i, 0), true, id++, 0});
  rig.mem->enqueue({rig.addr(1, 0, 0, 0), false, id++, 0});
  const std::vector<Cycle> done = rig.drain(id);
  Cycle last_write = 0;
  for (std::size_t i = 0; i < 16; ++i) last_write = std::max(last_write, done[i]);
  EXPECT_LT(done[16], last_write);
  EXPECT_LT(done[16], 50u + 200u);
}

TEST(DramController, ReadsServedFromPendingWrites) {
  Rig rig("hbm/hbm3-6400", {"hbm.controller.refresh=off"});
  const std::uint64_t a = rig.addr(2, 1, 7, 3);
  rig.mem->enqueue({a, true, 0, 0});
  rig.mem->enqueue({a, false, 1, 0});
  const std::vector<Cycle> done = rig.drain(2);
  EXPECT_EQ(done[1], 4u + 16u);  // write_forward_latency + latency, no DRAM access
  EXPECT_EQ(rig.pc0("reads_from_write_queue"), 1);
  EXPECT_EQ(rig.pc0("rd"), 0);
  EXPECT_EQ(rig.pc0("wr"), 1);
}

double row_hits_on_alternating_rows(const std::string& scheduler) {
  Rig rig("hbm/hbm3-6400",
          {"hbm.controller.scheduler=" + scheduler, "hbm.controller.refresh=off", "hbm.controller.page_policy=open"});
  std::uint64_t id = 0;
  for (std::uint32_t c = 0; c < 16; ++c) {
    rig.mem->enqueue({rig.addr(0, 0, 10, c), false, id++, 0});
    rig.mem->enqueue({rig.addr(0, 0, 11, c), false, id++, 0});
  }
  rig.drain(id);
  EXPECT_EQ(rig.pc0("rd"), 32);
  return rig.pc0("row_hits");
}

TEST(DramController, FrFcfsServesRowHitsFirst) {
  const double fr = row_hits_on_alternating_rows("frfcfs");
  const double fcfs = row_hits_on_alternating_rows("fcfs");
  EXPECT_EQ(fr, 30);   // each row opened once
  EXPECT_EQ(fcfs, 0);  // every access reopens the other row
  EXPECT_GT(fr, fcfs);
}

TEST(DramController, ClosedPagePolicyHasNoRowHits) {
  Rig closed("hbm/hbm3-6400", {"hbm.controller.page_policy=closed", "hbm.controller.refresh=off"});
  run_pattern(*closed.mem, 20'000, stream_from(0, 32));
  EXPECT_EQ(closed.stat("row_hit_rate"), 0.0);
  EXPECT_EQ(closed.pc0("act"), closed.pc0("rd"));
  EXPECT_EQ(closed.pc0("pre"), 0);  // auto-precharge only

  Rig open("hbm/hbm3-6400", {"hbm.controller.refresh=off", "hbm.controller.page_policy=open"});
  run_pattern(*open.mem, 20'000, stream_from(0, 32));
  EXPECT_GT(open.stat("row_hit_rate"), 0.9);
}

TEST(DramController, AdaptivePolicyClosesRowsNobodyWants) {
  Rig rig("hbm/hbm3-6400", {"hbm.controller.page_policy=adaptive", "hbm.controller.refresh=off"});
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::uint64_t> pick(0, rig.mem->capacity_bytes() / 32 - 1);
  run_pattern(*rig.mem, 20'000, [&] { return pick(rng) * 32; });
  EXPECT_EQ(rig.stat("s0.ch3.pc1.pre"), 0);  // every row closed by RDA, never by a conflict's PRE
  EXPECT_EQ(rig.stat("s0.ch3.pc1.row_conflicts"), 0);
  // On a stream it still keeps rows open while requests hit them.
  Rig stream("hbm/hbm3-6400", {"hbm.controller.page_policy=adaptive", "hbm.controller.refresh=off"});
  run_pattern(*stream.mem, 20'000, stream_from(0, 32));
  EXPECT_GT(stream.stat("row_hit_rate"), 0.5);
}

TEST(DramController, CountersAndFormulasAgree) {
  Rig rig("hbm/hbm3-6400", {"hbm.controller.refresh=off"});
  const hbmtest::RunResult r = run_pattern(*rig.mem, 50'000, stream_from(0, 32));
  double rd = 0;
  double bytes = 0;
  for (const counters::Stat* s : rig.registry.glob("dev0.hbm.s0.ch*.pc*.rd")) rd += s->value();
  for (const counters::Stat* s : rig.registry.glob("dev0.hbm.s0.ch*.pc*.bytes_read")) bytes += s->value();
  EXPECT_EQ(rd, 50'000);
  EXPECT_EQ(bytes, 50'000.0 * 32);
  EXPECT_EQ(rig.pc0("busy_cycles"), rig.pc0("rd") * 2);
  EXPECT_NEAR(rig.stat("bandwidth"), r.bandwidth_gbps, 1e-6 * r.bandwidth_gbps);
  EXPECT_NEAR(rig.stat("efficiency"), r.efficiency, 1e-9);
  EXPECT_NEAR(rig.stat("s0.efficiency"), r.efficiency, 1e-9);
  EXPECT_NEAR(rig.pc0("efficiency") * 32, r.efficiency * 32, 0.05);
  const auto& lat = dynamic_cast<const counters::Distribution&>(rig.registry.get("dev0.hbm.s0.ch0.pc0.read_latency"));
  EXPECT_EQ(static_cast<double>(lat.count()), rig.pc0("rd"));
  EXPECT_GE(lat.min(), 69 * 0.625 - 1e-9);
  const auto& rq = dynamic_cast<const counters::Distribution&>(rig.registry.get("dev0.hbm.s0.ch0.pc0.read_queue"));
  EXPECT_EQ(static_cast<double>(rq.count()), rig.pc0("rd"));
  EXPECT_LE(rq.max(), rig.mem->params().read_queue - 1);
  // Per pseudo-channel: ~16 counters + 3 formulas; a stack stays near 600 stats.
  EXPECT_LT(rig.registry.glob("dev0.hbm.s0.**").size(), 700u);
}

TEST(DramController, CompletionCallbackMayEnqueue) {
  Rig rig("hbm/hbm3-6400", {"hbm.controller.refresh=off"});
  std::uint64_t next_addr = 0;
  std::uint64_t completed = 0;
  Cycle last = 0;
  rig.mem->set_completion([&](const MemRequest&, Cycle t) {
    EXPECT_GE(t, last);  // completion order
    last = t;
    ++completed;
    if (next_addr < 1000 * 32 && rig.mem->can_accept(next_addr, false)) {
      rig.mem->enqueue({next_addr, false, 0, 0});
      next_addr += 32;
    }
  });
  for (int i = 0; i < 8; ++i) {
    rig.mem->enqueue({next_addr, false, 0, 0});
    next_addr += 32;
  }
  while (rig.mem->next_event() != kNever) rig.mem->advance_to(rig.mem->next_event());
  EXPECT_EQ(completed, 1000u);
  EXPECT_EQ(rig.mem->pending(), 0u);
}

TEST(DramController, SameInputsGiveIdenticalStatistics) {
  auto run = [] {
    Rig rig;
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<std::uint64_t> pick(0, rig.mem->capacity_bytes() / 32 - 1);
    const hbmtest::RunResult r = run_pattern(
        *rig.mem, 20'000, [&] { return pick(rng) * 32; }, [](std::uint64_t i) { return i % 3 == 0; });
    return std::vector<double>{static_cast<double>(r.cycles), rig.stat("s0.ch5.pc1.act"), rig.stat("row_hit_rate"),
                               rig.stat("s0.ch9.pc0.read_latency")};
  };
  EXPECT_EQ(run(), run());
}

TEST(DramController, RejectsBadRequests) {
  Rig rig;
  const std::uint64_t cap = rig.mem->capacity_bytes();
  EXPECT_TRUE(rig.mem->can_accept(cap, false));
  EXPECT_THROW(rig.mem->enqueue({cap, false, 0, 0}), std::out_of_range);
  EXPECT_THROW(rig.mem->enqueue({16, false, 0, 0}), std::invalid_argument);
  EXPECT_EQ(rig.mem->pending(), 0u);
  rig.mem->advance_to(100);
  EXPECT_THROW(rig.mem->advance_to(50), std::logic_error);
}

}  // namespace
}  // namespace sohusim::memory
