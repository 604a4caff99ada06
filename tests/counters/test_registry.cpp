#include <cmath>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sohusim/counters/registry.hpp"

using namespace sohusim::counters;

TEST(Registry, CountersAreStableReferencesWithUnitAndDescription) {
  Registry reg;
  Counter& c = reg.counter("dev0.me3.active_cycles", "cycles", "cycles with a tile in flight");
  for (int i = 0; i < 10; ++i) reg.counter("dev0.filler" + std::to_string(i), "1", "x");
  c += 5;
  ++c;
  c.inc(4);
  EXPECT_EQ(c.count(), 10U);
  const Stat& s = reg.get("dev0.me3.active_cycles");
  EXPECT_EQ(&s, &c);
  EXPECT_EQ(s.unit(), "cycles");
  EXPECT_EQ(s.description(), "cycles with a tile in flight");
  EXPECT_EQ(s.kind(), StatKind::Counter);
  EXPECT_DOUBLE_EQ(reg.value("dev0.me3.active_cycles"), 10.0);
}

TEST(Registry, DuplicateAndMalformedNamesAreRejected) {
  Registry reg;
  reg.counter("a.b", "1", "x");
  try {
    reg.gauge("a.b", "1", "y");
    FAIL() << "duplicate accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'a.b' is registered twice (first as a counter)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(reg.counter("", "1", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("a..b", "1", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter(".a", "1", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("a b", "1", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("a*", "1", "x"), std::invalid_argument);
}

TEST(Registry, GetSuggestsTheClosestName) {
  Registry reg;
  reg.counter("dev0.hbm.row_hits", "1", "x");
  try {
    (void)reg.get("dev0.hbm.row_hit");
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'dev0.hbm.row_hits'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(reg.find("nope"), nullptr);
}

TEST(Registry, GlobIsOrderedAndSegmentAware) {
  Registry reg;
  reg.counter("dev1.me0.busy", "cycles", "x");
  reg.counter("dev0.me1.busy", "cycles", "x");
  reg.counter("dev0.me0.busy", "cycles", "x");
  reg.counter("dev0.me0.sub.busy", "cycles", "x");
  reg.counter("dev0.dma.busy", "cycles", "x");
  auto m = reg.glob("dev0.me*.busy");
  ASSERT_EQ(m.size(), 2U);
  EXPECT_EQ(m[0]->name(), "dev0.me0.busy");
  EXPECT_EQ(m[1]->name(), "dev0.me1.busy");
  EXPECT_EQ(reg.glob("dev*.**.busy").size(), 5U);
  EXPECT_EQ(reg.glob("dev0.dma.busy").size(), 1U);
  EXPECT_TRUE(reg.glob("dev9.*").empty());
}

TEST(Registry, ResetZeroesCountersAndKeepsGaugeLevels) {
  Registry reg;
  auto& c = reg.counter("x.count", "1", "x");
  auto& g = reg.gauge("x.queue", "entries", "occupancy");
  auto& d = reg.distribution("x.lat", "ns", "latency");
  c += 7;
  g.set(10);
  g.set(3);
  d.sample(5);
  EXPECT_DOUBLE_EQ(g.max(), 10.0);
  reg.reset();
  EXPECT_EQ(c.count(), 0U);
  EXPECT_DOUBLE_EQ(g.current(), 3.0);
  EXPECT_DOUBLE_EQ(g.max(), 3.0);
  EXPECT_EQ(d.count(), 0U);
}

TEST(Registry, ResetByGlobTouchesOnlyMatches) {
  Registry reg;
  auto& a = reg.counter("dev0.a", "1", "x");
  auto& b = reg.counter("dev1.a", "1", "x");
  a += 1;
  b += 1;
  reg.reset("dev0.*");
  EXPECT_EQ(a.count(), 0U);
  EXPECT_EQ(b.count(), 1U);
}

TEST(Registry, SnapshotDeltas) {
  Registry reg;
  auto& c = reg.counter("bytes", "B", "x");
  c += 100;
  Snapshot s0 = reg.snapshot();
  c += 50;
  reg.counter("later", "1", "x") += 3;
  Snapshot d = reg.snapshot().delta_since(s0);
  EXPECT_DOUBLE_EQ(d.at("bytes"), 50.0);
  EXPECT_DOUBLE_EQ(d.at("later"), 3.0);
  EXPECT_THROW((void)d.at("nope"), std::out_of_range);
}

TEST(Registry, JsonDumpCarriesKindUnitDescriptionAndDetail) {
  Registry reg;
  reg.counter("a.count", "1", "things") += 3;
  reg.gauge("a.level", "B", "level").set(4);
  auto& d = reg.distribution("a.lat", "ns", "latency", DistributionSpec::linear(0, 100, 10));
  d.sample(10);
  d.sample(30);
  reg.formula("a.ratio", "1", "ratio", "a.count / 0");
  nlohmann::json j = nlohmann::json::parse([&] {
    std::ostringstream os;
    reg.write_json(os);
    return os.str();
  }());
  EXPECT_EQ(j["a.count"]["kind"], "counter");
  EXPECT_EQ(j["a.count"]["unit"], "1");
  EXPECT_EQ(j["a.count"]["description"], "things");
  EXPECT_EQ(j["a.count"]["value"], 3);
  EXPECT_EQ(j["a.level"]["max"], 4.0);
  EXPECT_EQ(j["a.lat"]["count"], 2);
  EXPECT_DOUBLE_EQ(j["a.lat"]["mean"].get<double>(), 20.0);
  EXPECT_TRUE(j["a.ratio"]["value"].is_null()) << "x/0 must dump as null, not 0";
  EXPECT_EQ(j["a.ratio"]["expression"], "a.count / 0");
}

TEST(Registry, CsvDumpExpandsDistributionsAndQuotes) {
  Registry reg;
  reg.counter("a", "1", "has, comma") += 2;
  auto& d = reg.distribution("lat", "ns", "l", DistributionSpec::linear(0, 10, 10));
  d.sample(1.5);
  std::ostringstream os;
  reg.write_csv(os);
  const std::string csv = os.str();
  EXPECT_NE(csv.find("name,kind,unit,value,description\n"), std::string::npos);
  EXPECT_NE(csv.find("a,counter,1,2,\"has, comma\"\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("lat.count,distribution,1,1,l\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("lat.p99,distribution,ns,1.5,l\n"), std::string::npos) << csv;
}

TEST(Registry, ScopePrefixesNamesAndFormulaPlaceholders) {
  Registry reg;
  Scope dev(reg, "dev0");
  Scope me = dev.sub("me3");
  me.counter("active_cycles", "cycles", "x") += 30;
  me.counter("cycles", "cycles", "x") += 40;
  me.formula("utilization", "1", "active share", "{}.active_cycles / {}.cycles");
  EXPECT_NE(reg.find("dev0.me3.active_cycles"), nullptr);
  EXPECT_DOUBLE_EQ(reg.value("dev0.me3.utilization"), 0.75);
}

// Increments owed to the registry (deferred_adds.hpp) are settled before any read: count(),
// value(), a formula over the counter, a snapshot, a reset. A batch outlives its owner.
TEST(Registry, OwedIncrementsAreSettledBeforeAnyRead) {
  Registry reg;
  Counter& a = reg.counter("dev0.a", "1", "x");
  Counter& b = reg.counter("dev0.b", "1", "x");
  Formula& sum = reg.formula("dev0.sum", "1", "a + b", "dev0.a + dev0.b");
  auto batch = std::make_shared<AddBatch>();
  batch->adds = {{a.slot(), 3}, {b.slot(), 5}};
  reg.deferred().owe(batch);
  reg.deferred().owe(batch);
  EXPECT_TRUE(reg.deferred().dirty());
  EXPECT_EQ(a.count(), 6U);  // settled here: both owed adds, x2
  EXPECT_FALSE(reg.deferred().dirty());
  EXPECT_EQ(b.count(), 10U);
  reg.deferred().owe(batch);
  a.inc(1);                                                         // direct adds and owed ones commute
  EXPECT_DOUBLE_EQ(sum.value(), (6.0 + 3.0 + 1.0) + (10.0 + 5.0));  // a 10, b 15
  reg.deferred().owe(batch);
  EXPECT_DOUBLE_EQ(reg.snapshot().values.at("dev0.b"), 20.0);
  reg.deferred().owe(batch);
  batch.reset();  // the owner is gone; the registry still holds what it is owed
  b.reset();      // settles first, then zeroes: nothing owed comes back later
  EXPECT_EQ(b.count(), 0U);
  EXPECT_EQ(a.count(), 6U + 1U + 3U + 3U + 3U);
}

// A watched sum reads as its parts' counts plus what the owed batches bring it, without
// settling: what was owed stays owed, and reading the parts afterwards gives the same total.
// Registry::owe fills a batch's share of the sums watched since it was last owed.
TEST(Registry, AWatchedSumIsReadWithoutSettling) {
  Registry reg;
  Counter& a = reg.counter("dev0.a", "1", "x");
  Counter& b = reg.counter("dev0.b", "1", "x");
  Counter& c = reg.counter("dev0.c", "1", "x");
  auto batch = std::make_shared<AddBatch>();
  batch->adds = {{a.slot(), 3}, {b.slot(), 5}, {c.slot(), 7}};
  reg.owe(batch);
  EXPECT_TRUE(batch->sums.empty());  // nothing watched yet
  const std::uint32_t ab = reg.watch_sum({&a, &b});
  const std::uint32_t bc = reg.watch_sum({&b, &c});
  EXPECT_FALSE(reg.deferred().dirty());  // watching settles first
  EXPECT_EQ(reg.watched_sum(ab), 8U);
  reg.owe(batch, 2);  // fills the batch's share of both sums first
  ASSERT_EQ(batch->sums.size(), 2U);
  a.inc(1);  // a direct add is in the counts at once
  EXPECT_EQ(reg.watched_sum(ab), 8U + 2 * 8U + 1U);
  EXPECT_EQ(reg.watched_sum(bc), 12U + 2 * 12U);
  EXPECT_TRUE(reg.deferred().dirty());                 // nothing was settled by those reads
  EXPECT_EQ(a.count() + b.count(), 8U + 2 * 8U + 1U);  // settles
  EXPECT_FALSE(reg.deferred().dirty());
  EXPECT_EQ(reg.watched_sum(ab), 8U + 2 * 8U + 1U);  // the same after settling: nothing twice
  EXPECT_EQ(reg.watched_sum(bc), 12U + 2 * 12U);
  b.reset();
  EXPECT_EQ(reg.watched_sum(ab), 3U + 2 * 3U + 1U);
}
