// IOMMU: translation through 4-level page tables, superpages, the IOTLB, the
// paging-structure caches, faults and their log, VF isolation, bad input, counters.
// Plain C++ (no SystemC).
#include <array>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/iommu.hpp"

namespace sohusim::pcie {
namespace {

constexpr std::uint64_t kPage = Iommu::kPageBytes;

struct IommuFixture {
  explicit IommuFixture(IommuParams p = {}) : iommu(p, counters::Scope(reg, "host0.iommu")) {}
  double stat(const std::string& leaf) const { return reg.value("host0.iommu." + leaf); }
  counters::Registry reg;
  Iommu iommu;
};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Iommu, MappedDmaTranslatesAcrossPagesAndCoalesces) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  // Three pages: the first two physically contiguous, the third elsewhere.
  f.iommu.map(d, 0x10000, 0x200000, 2 * kPage, IommuPerm::ReadWrite);
  f.iommu.map(d, 0x12000, 0x900000, kPage, IommuPerm::ReadWrite);

  // From 0x100 into the first page to 0x80 into the third.
  const auto t = f.iommu.translate(rid, 0x10100, 2 * kPage - 0x100 + 0x80, true);
  ASSERT_TRUE(t.ok) << describe(t.fault);
  ASSERT_EQ(t.segments.size(), 2u);
  EXPECT_EQ(t.segments[0].iova, 0x10100u);
  EXPECT_EQ(t.segments[0].phys, 0x200100u);
  EXPECT_EQ(t.segments[0].bytes, 2 * kPage - 0x100);
  EXPECT_EQ(t.segments[1].iova, 0x12000u);
  EXPECT_EQ(t.segments[1].phys, 0x900000u);
  EXPECT_EQ(t.segments[1].bytes, 0x80u);
  EXPECT_EQ(t.iotlb_misses, 3u);
  EXPECT_EQ(t.iotlb_hits, 0u);
  EXPECT_EQ(f.iommu.mapped_pages(d), 3u);

  // Within one page: one segment.
  const auto small = f.iommu.translate(rid, 0x12010, 64, false);
  ASSERT_TRUE(small.ok);
  ASSERT_EQ(small.segments.size(), 1u);
  EXPECT_EQ(small.segments[0].phys, 0x900010u);
  EXPECT_EQ(small.segments[0].bytes, 64u);
}

TEST(Iommu, UnmappedFaultsWithRecordAndNoSegments) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 2);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0x7eff0000, 0x400000, 16 * kPage, IommuPerm::ReadWrite);

  // Starts mapped (last page of the mapping), runs into the unmapped page after it.
  const auto t = f.iommu.translate(rid, 0x7efff000 + 0x800, 0x1000, true);
  EXPECT_FALSE(t.ok);
  EXPECT_TRUE(t.segments.empty());
  EXPECT_EQ(t.fault.iova, 0x7f000000u);
  EXPECT_EQ(t.fault.requester, rid);
  EXPECT_TRUE(t.fault.is_write);
  EXPECT_EQ(t.fault.reason, IommuFaultReason::NotMapped);
  EXPECT_EQ(t.fault.domain, d);
  ASSERT_EQ(f.iommu.fault_log().size(), 1u);
  EXPECT_EQ(f.iommu.fault_log()[0].iova, 0x7f000000u);
  EXPECT_EQ(describe(t.fault),
            "IOMMU fault: requester 01:00.2 write IOVA 0x7f000000 (domain " + std::to_string(d) + "): page not mapped");

  // A read of a page whose whole upper tree is absent: the walk stops at the root.
  const auto far = f.iommu.translate(rid, 0x5000'0000'0000ULL, 8, false);
  EXPECT_FALSE(far.ok);
  EXPECT_FALSE(far.fault.is_write);
  EXPECT_EQ(far.fault.iova, 0x5000'0000'0000ULL);
  EXPECT_EQ(far.walk_reads.size(), 1u);
  EXPECT_EQ(f.stat("faults"), 2.0);

  // Beyond 48 bits.
  const auto big = f.iommu.translate(rid, 0xffff'ffff'f000ULL, 2 * kPage, false);
  EXPECT_FALSE(big.ok);
  EXPECT_EQ(big.fault.reason, IommuFaultReason::AddressOutOfRange);
}

TEST(Iommu, WriteToReadOnlyMappingFaults) {
  IommuFixture f;
  const RequesterId rid = make_rid(2, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0x1000, 0x5000, kPage, IommuPerm::Read);
  f.iommu.map(d, 0x2000, 0x6000, kPage, IommuPerm::Write);

  EXPECT_TRUE(f.iommu.translate(rid, 0x1000, 4, false).ok);
  const auto w = f.iommu.translate(rid, 0x1010, 4, true);  // an IOTLB hit, still denied
  EXPECT_FALSE(w.ok);
  EXPECT_TRUE(w.segments.empty());
  EXPECT_EQ(w.iotlb_hits, 1u);
  EXPECT_EQ(w.fault.reason, IommuFaultReason::WriteDenied);
  EXPECT_EQ(w.fault.iova, 0x1010u);

  EXPECT_TRUE(f.iommu.translate(rid, 0x2000, 4, true).ok);
  const auto r = f.iommu.translate(rid, 0x2000, 4, false);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.fault.reason, IommuFaultReason::ReadDenied);
  // A write spanning both pages: the read-only first page blocks all of it.
  const auto span = f.iommu.translate(rid, 0x1800, kPage, true);
  EXPECT_FALSE(span.ok);
  EXPECT_TRUE(span.segments.empty());
}

TEST(Iommu, FirstAccessWalksFourLevelsSecondHits) {
  IommuParams p;
  p.page_table_base = 0x4000'0000;
  IommuFixture f(p);
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  const std::uint64_t iova = (5ULL << 39) | (6ULL << 30) | (7ULL << 21) | (8ULL << 12);
  f.iommu.map(d, iova, 0x1234000, kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.table_pages(), 4u);  // root + 3 levels

  const auto first = f.iommu.translate(rid, iova + 0x10, 32, false);
  ASSERT_TRUE(first.ok);
  EXPECT_EQ(first.iotlb_misses, 1u);
  EXPECT_EQ(first.iotlb_hits, 0u);
  ASSERT_EQ(first.walk_reads.size(), 4u);
  const std::uint64_t root = f.iommu.root_table(d);
  EXPECT_EQ(root, p.page_table_base);
  EXPECT_EQ(first.walk_reads[0], root + 5 * 8);
  const std::uint64_t idx[] = {5, 6, 7, 8};
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t a = first.walk_reads[static_cast<std::size_t>(i)];
    EXPECT_GE(a, p.page_table_base);
    EXPECT_LT(a, p.page_table_base + p.page_table_bytes);
    EXPECT_EQ(a % kPage, idx[i] * 8) << "level " << 4 - i;
  }
  EXPECT_EQ(first.segments[0].phys, 0x1234010u);

  const auto second = f.iommu.translate(rid, iova + 0x100, 32, true);
  ASSERT_TRUE(second.ok);
  EXPECT_EQ(second.iotlb_hits, 1u);
  EXPECT_EQ(second.iotlb_misses, 0u);
  EXPECT_TRUE(second.walk_reads.empty());
}

TEST(Iommu, InvalidationMakesTheNextAccessMissAndStaleEntriesUntilThen) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0x100000, 0x300000, 4 * kPage, IommuPerm::ReadWrite);
  ASSERT_TRUE(f.iommu.translate(rid, 0x100000, 4 * kPage, false).ok);
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 4u);

  // Range invalidation of two pages: those miss, the others hit. The invalidation also
  // dropped the paging-structure entries above those pages, so the first miss walks all 4
  // levels again and refills them; the second starts at the cached PDE (1 read).
  f.iommu.invalidate(d, 0x101000, 2 * kPage);
  auto t = f.iommu.translate(rid, 0x100000, 4 * kPage, false);
  EXPECT_EQ(t.iotlb_hits, 2u);
  EXPECT_EQ(t.iotlb_misses, 2u);
  EXPECT_EQ(t.walk_reads.size(), 4u + 1u);

  f.iommu.invalidate_domain(d);
  t = f.iommu.translate(rid, 0x100000, kPage, false);
  EXPECT_EQ(t.iotlb_misses, 1u);

  f.iommu.invalidate_all();
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 0u);

  // Unmap without invalidation: the cached translation still serves (as hardware would);
  // after the invalidation the access faults.
  ASSERT_TRUE(f.iommu.translate(rid, 0x102000, 8, true).ok);
  EXPECT_EQ(f.iommu.unmap(d, 0x102000, kPage), kPage);
  EXPECT_TRUE(f.iommu.translate(rid, 0x102000, 8, true).ok);
  f.iommu.invalidate(d, 0x102000, kPage);
  const auto gone = f.iommu.translate(rid, 0x102000, 8, true);
  EXPECT_FALSE(gone.ok);
  EXPECT_EQ(gone.fault.reason, IommuFaultReason::NotMapped);
  EXPECT_EQ(f.stat("invalidations"), 4.0);
}

TEST(Iommu, LruEvictionWithSmallIotlb) {
  IommuParams p;
  p.iotlb_entries = 4;
  p.iotlb_ways = 4;  // fully associative
  IommuFixture f(p);
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0, 0x1000000, 8 * kPage, IommuPerm::ReadWrite);
  auto touch = [&](std::uint64_t page) { return f.iommu.translate(rid, page * kPage, 8, false); };

  for (std::uint64_t pg = 0; pg < 4; ++pg) EXPECT_EQ(touch(pg).iotlb_misses, 1u);
  EXPECT_EQ(touch(0).iotlb_hits, 1u);    // 0 becomes most recent; LRU order 1,2,3,0
  EXPECT_EQ(touch(4).iotlb_misses, 1u);  // evicts 1
  EXPECT_EQ(touch(0).iotlb_hits, 1u);
  EXPECT_EQ(touch(2).iotlb_hits, 1u);
  EXPECT_EQ(touch(3).iotlb_hits, 1u);
  EXPECT_EQ(touch(1).iotlb_misses, 1u);  // was evicted; now evicts 4
  EXPECT_EQ(touch(4).iotlb_misses, 1u);
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 4u);

  // Direct-mapped (4 sets x 1 way): pages 0 and 4 share a set and evict each other.
  IommuParams dm;
  dm.iotlb_entries = 4;
  dm.iotlb_ways = 1;
  IommuFixture g(dm);
  const DomainId e = g.iommu.create_domain();
  g.iommu.attach(rid, e);
  g.iommu.map(e, 0, 0x1000000, 8 * kPage, IommuPerm::ReadWrite);
  auto touch_g = [&](std::uint64_t page) { return g.iommu.translate(rid, page * kPage, 8, false); };
  EXPECT_EQ(touch_g(0).iotlb_misses, 1u);
  EXPECT_EQ(touch_g(1).iotlb_misses, 1u);
  EXPECT_EQ(touch_g(4).iotlb_misses, 1u);
  EXPECT_EQ(touch_g(1).iotlb_hits, 1u);
  EXPECT_EQ(touch_g(0).iotlb_misses, 1u);
}

TEST(Iommu, VfIsolationAndDetachBlocks) {
  IommuFixture f;
  const RequesterId vf1 = make_rid(1, 0, 1);
  const RequesterId vf2 = make_rid(1, 0, 2);
  const DomainId d1 = f.iommu.create_domain();
  const DomainId d2 = f.iommu.create_domain();
  EXPECT_NE(d1, d2);
  f.iommu.attach(vf1, d1);
  f.iommu.attach(vf2, d2);
  f.iommu.map(d1, 0x100000, 0x10000000, 4 * kPage, IommuPerm::ReadWrite);
  f.iommu.map(d2, 0x200000, 0x20000000, 4 * kPage, IommuPerm::ReadWrite);

  const auto own1 = f.iommu.translate(vf1, 0x100000, kPage, true);
  ASSERT_TRUE(own1.ok);
  EXPECT_EQ(own1.segments[0].phys, 0x10000000u);
  ASSERT_TRUE(f.iommu.translate(vf2, 0x200000, kPage, true).ok);

  // VF1 using VF2's IOVA (and the other way round) faults, IOTLB warm or not.
  const auto cross = f.iommu.translate(vf1, 0x200000, kPage, false);
  EXPECT_FALSE(cross.ok);
  EXPECT_TRUE(cross.segments.empty());
  EXPECT_EQ(cross.fault.requester, vf1);
  EXPECT_EQ(cross.fault.domain, d1);
  EXPECT_EQ(cross.fault.reason, IommuFaultReason::NotMapped);
  EXPECT_FALSE(f.iommu.translate(vf2, 0x100000, 8, true).ok);

  // Same IOVA in both domains maps to each one's own memory.
  f.iommu.map(d1, 0x300000, 0x11000000, kPage, IommuPerm::ReadWrite);
  f.iommu.map(d2, 0x300000, 0x21000000, kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.translate(vf1, 0x300000, 8, false).segments.at(0).phys, 0x11000000u);
  EXPECT_EQ(f.iommu.translate(vf2, 0x300000, 8, false).segments.at(0).phys, 0x21000000u);

  // Detach: blocked (default), even though the IOTLB still holds d1's entries.
  f.iommu.detach(vf1);
  EXPECT_EQ(f.iommu.domain_of(vf1), kNoDomain);
  const auto blocked = f.iommu.translate(vf1, 0x100000, 8, false);
  EXPECT_FALSE(blocked.ok);
  EXPECT_EQ(blocked.fault.reason, IommuFaultReason::NoDomain);
  EXPECT_EQ(blocked.fault.domain, kNoDomain);
  EXPECT_NE(describe(blocked.fault).find("(no domain)"), std::string::npos);
  // Unknown requester likewise.
  EXPECT_FALSE(f.iommu.translate(make_rid(9, 9, 1), 0x100000, 8, false).ok);

  // Destroying a domain detaches its requesters and frees its tables.
  const auto before = f.iommu.table_pages();
  f.iommu.destroy_domain(d2);
  EXPECT_EQ(f.iommu.domain_of(vf2), kNoDomain);
  EXPECT_LT(f.iommu.table_pages(), before);
  EXPECT_FALSE(f.iommu.translate(vf2, 0x200000, 8, false).ok);
}

TEST(Iommu, PassthroughAndDisabled) {
  IommuParams p;
  p.default_blocked = false;
  IommuFixture f(p);
  const auto t = f.iommu.translate(make_rid(3, 0, 0), 0xabc123, 3 * kPage, true);
  ASSERT_TRUE(t.ok);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0].phys, 0xabc123u);
  EXPECT_EQ(t.segments[0].bytes, 3 * kPage);

  IommuParams off;
  off.enabled = false;
  IommuFixture g(off);
  const auto u = g.iommu.translate(make_rid(3, 0, 0), 0x5000, 16, false);
  ASSERT_TRUE(u.ok);
  EXPECT_EQ(u.segments.at(0).phys, 0x5000u);
  EXPECT_EQ(g.stat("iotlb_misses"), 0.0);
}

TEST(Iommu, FaultLogIsBoundedAndCountsOverflow) {
  IommuParams p;
  p.fault_log_capacity = 3;
  IommuFixture f(p);
  const RequesterId rid = make_rid(4, 0, 0);
  for (std::uint64_t i = 0; i < 5; ++i) {
    const auto t = f.iommu.translate(rid, i * kPage, 8, (i % 2) != 0);
    EXPECT_FALSE(t.ok);
  }
  ASSERT_EQ(f.iommu.fault_log().size(), 3u);
  EXPECT_EQ(f.iommu.fault_log()[0].iova, 0u);
  EXPECT_EQ(f.iommu.fault_log()[1].iova, kPage);
  EXPECT_TRUE(f.iommu.fault_log()[1].is_write);
  EXPECT_EQ(f.iommu.fault_log()[2].iova, 2 * kPage);
  EXPECT_EQ(f.iommu.fault_log_overflows(), 2u);
  EXPECT_EQ(f.stat("fault_log_overflows"), 2.0);
  EXPECT_EQ(f.stat("faults"), 5.0);
  f.iommu.clear_fault_log();
  EXPECT_TRUE(f.iommu.fault_log().empty());
  EXPECT_FALSE(f.iommu.translate(rid, 0, 8, false).ok);
  EXPECT_EQ(f.iommu.fault_log().size(), 1u);
}

TEST(Iommu, BadParamsNameTheField) {
  counters::Registry reg;
  auto bad = [&](auto tweak) {
    IommuParams p;
    tweak(p);
    return error_of([&] { p.validate(); });
  };
  EXPECT_NE(bad([](IommuParams& p) { p.iotlb_entries = 0; }).find("iotlb_entries"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.iotlb_ways = 0; }).find("iotlb_ways"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.iotlb_entries = 24; }).find("iotlb_entries"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.iotlb_ways = 512; }).find("iotlb_ways"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.walk_levels = 5; }).find("walk_levels"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.max_page_bytes = 8192; }).find("max_page_bytes"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.page_walkers = 0; }).find("page_walkers"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.iotlb_hit_latency_s = -1; }).find("iotlb_hit_latency_s"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.page_table_base = 0x1001; }).find("page_table_base"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.page_table_bytes = 0; }).find("page_table_bytes"), std::string::npos);
  EXPECT_NE(bad([](IommuParams& p) { p.fault_log_capacity = 0; }).find("fault_log_capacity"), std::string::npos);
  EXPECT_EQ(bad([](IommuParams&) {}), "(no exception)");
  IommuParams p;
  p.walk_levels = 3;
  EXPECT_THROW(Iommu(p, counters::Scope(reg, "x")), std::invalid_argument);
}

TEST(Iommu, BadMapsNameTheIova) {
  IommuFixture f;
  const DomainId d = f.iommu.create_domain();
  f.iommu.map(d, 0x40000, 0x80000, 4 * kPage, IommuPerm::ReadWrite);

  const std::string mis = error_of([&] { f.iommu.map(d, 0x40800, 0x90000, kPage, IommuPerm::Read); });
  EXPECT_NE(mis.find("0x40800"), std::string::npos) << mis;
  EXPECT_NE(mis.find("aligned"), std::string::npos) << mis;
  const std::string misp = error_of([&] { f.iommu.map(d, 0x50000, 0x90010, kPage, IommuPerm::Read); });
  EXPECT_NE(misp.find("0x50000"), std::string::npos) << misp;
  EXPECT_NE(misp.find("phys"), std::string::npos) << misp;
  const std::string len = error_of([&] { f.iommu.map(d, 0x50000, 0x90000, 100, IommuPerm::Read); });
  EXPECT_NE(len.find("bytes"), std::string::npos) << len;

  // Overlap (the new range starts before and runs into the existing one): names the
  // IOVA asked for and the first page already mapped; nothing of it is mapped.
  const std::string over = error_of([&] { f.iommu.map(d, 0x3e000, 0xa0000, 4 * kPage, IommuPerm::Read); });
  EXPECT_NE(over.find("0x3e000"), std::string::npos) << over;
  EXPECT_NE(over.find("0x40000"), std::string::npos) << over;
  EXPECT_NE(over.find("overlap"), std::string::npos) << over;
  EXPECT_EQ(f.iommu.mapped_pages(d), 4u);

  EXPECT_THROW(f.iommu.map(d, 0x60000, 0x90000, kPage, IommuPerm::None), std::invalid_argument);
  EXPECT_THROW(f.iommu.map(d, 0xffff'ffff'f000ULL, 0, 2 * kPage, IommuPerm::Read), std::invalid_argument);
  EXPECT_THROW(f.iommu.map(99, 0x60000, 0x90000, kPage, IommuPerm::Read), std::invalid_argument);
  EXPECT_THROW(f.iommu.attach(1, 99), std::invalid_argument);
  EXPECT_THROW(f.iommu.unmap(d, 0x40100, kPage), std::invalid_argument);
}

TEST(Iommu, UnmapFreesTablesAndExhaustedRegionIsAnError) {
  IommuParams p;
  p.page_table_bytes = 5 * kPage;  // one root + 3 levels for one leaf table, + 1 spare
  IommuFixture f(p);
  const DomainId d = f.iommu.create_domain();
  f.iommu.map(d, 0, 0x100000, 16 * kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.table_pages(), 4u);
  // A second leaf table under a new level-2 entry would need 1 more: fits.
  f.iommu.map(d, 1ULL << 21, 0x200000, kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.table_pages(), 5u);
  // A new top-level subtree needs 3: the region is full; the map changes nothing.
  const std::string full = error_of([&] { f.iommu.map(d, 1ULL << 39, 0x300000, kPage, IommuPerm::ReadWrite); });
  EXPECT_NE(full.find("full"), std::string::npos) << full;
  EXPECT_NE(full.find("0x8000000000"), std::string::npos) << full;
  EXPECT_EQ(f.iommu.table_pages(), 5u);
  EXPECT_EQ(f.iommu.mapped_pages(d), 17u);

  // Unmapping a huge sparse range is quick and frees the emptied tables.
  EXPECT_EQ(f.iommu.unmap(d, 0, Iommu::kIovaLimit), 17 * kPage);
  EXPECT_EQ(f.iommu.table_pages(), 1u);  // the root stays
  EXPECT_EQ(f.iommu.mapped_pages(d), 0u);
  f.iommu.map(d, 1ULL << 39, 0x300000, kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.table_pages(), 4u);
}

TEST(Iommu, CountersInRegistryMatch) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0x10000, 0x20000, 2 * kPage, IommuPerm::ReadWrite);
  std::uint64_t hits = 0, misses = 0, reads = 0;
  auto run = [&](std::uint64_t iova, std::uint64_t bytes, bool w) {
    const auto t = f.iommu.translate(rid, iova, bytes, w);
    hits += t.iotlb_hits;
    misses += t.iotlb_misses;
    reads += t.walk_reads.size();
    return t.ok;
  };
  EXPECT_TRUE(run(0x10000, 2 * kPage, false));  // 2 misses, 4 + 1 reads (the PDE cached)
  EXPECT_TRUE(run(0x10000, 2 * kPage, true));   // 2 hits
  EXPECT_FALSE(run(0x30000, 8, false));         // miss, fault
  f.iommu.invalidate_all();
  EXPECT_TRUE(run(0x10ff0, 32, true));  // 2 misses across the boundary
  EXPECT_EQ(f.stat("translations"), 4.0);
  EXPECT_EQ(f.stat("iotlb_hits"), static_cast<double>(hits));
  EXPECT_EQ(f.stat("iotlb_misses"), static_cast<double>(misses));
  EXPECT_EQ(f.stat("walks"), static_cast<double>(misses));
  EXPECT_EQ(f.stat("walk_reads"), static_cast<double>(reads));
  EXPECT_EQ(hits, 2u);
  EXPECT_EQ(misses, 5u);
  EXPECT_EQ(f.stat("faults"), 1.0);
  EXPECT_EQ(f.stat("fault_log_overflows"), 0.0);
  EXPECT_EQ(f.stat("invalidations"), 1.0);
  // The second page, the fault's walk (same PDE), the second page after invalidate_all.
  EXPECT_EQ(f.stat("psc_hits"), 3.0);
  EXPECT_EQ(f.reg.glob("host0.iommu.*").size(), 9u);
}

// --- Superpages -----------------------------------------------------------------------

constexpr std::uint64_t k2M = Iommu::k2MiB;

TEST(Iommu, SuperpageTranslatesTwoMiBWithOneIotlbEntry) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  // IOVA and physical address 2 MiB-aligned, 4 MiB: two 2 MiB leaves in one PD table.
  f.iommu.map(d, 0x4000'0000, 0x8020'0000, 2 * k2M, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.leaf_counts(d), (std::array<std::uint64_t, 3>{0, 2, 0}));
  EXPECT_EQ(f.iommu.mapped_pages(d), 2 * k2M / kPage);
  EXPECT_EQ(f.iommu.table_pages(), 3u);  // root, PDPT, PD: no level-1 table

  // The whole first 2 MiB in one access: one lookup, one walk of 3 reads (the PDE is the
  // leaf), one segment, one IOTLB entry.
  const auto t = f.iommu.translate(rid, 0x4000'0000, k2M, false);
  ASSERT_TRUE(t.ok) << describe(t.fault);
  EXPECT_EQ(t.iotlb_misses, 1u);
  EXPECT_EQ(t.iotlb_hits, 0u);
  EXPECT_EQ(t.walk_reads.size(), 3u);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0].phys, 0x8020'0000u);
  EXPECT_EQ(t.segments[0].bytes, k2M);
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 1u);

  // Anywhere else in it: a hit on that entry.
  const auto in = f.iommu.translate(rid, 0x4000'0000 + 0x1f'f010, 16, true);
  ASSERT_TRUE(in.ok);
  EXPECT_EQ(in.iotlb_hits, 1u);
  EXPECT_EQ(in.segments.at(0).phys, 0x8020'0000u + 0x1f'f010);
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 1u);

  // Across into the second leaf: a hit, then a miss whose walk starts at the cached PDPTE
  // (1 read); physically contiguous, so one segment.
  const auto across = f.iommu.translate(rid, 0x4000'0000 + k2M - 0x100, 0x200, false);
  ASSERT_TRUE(across.ok);
  EXPECT_EQ(across.iotlb_hits, 1u);
  EXPECT_EQ(across.iotlb_misses, 1u);
  EXPECT_EQ(across.walk_reads.size(), 1u);
  ASSERT_EQ(across.segments.size(), 1u);
  EXPECT_EQ(across.segments[0].phys, 0x8020'0000u + k2M - 0x100);
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 2u);

  // Permissions hold for the whole large page.
  f.iommu.map(d, 0x8000'0000, 0x9000'0000, k2M, IommuPerm::Read);
  EXPECT_EQ(f.iommu.translate(rid, 0x8000'0000 + 0x12'3000, 8, true).fault.reason, IommuFaultReason::WriteDenied);
}

TEST(Iommu, OneGiBLeafAndLargestPageThatFits) {
  IommuFixture f;
  const DomainId d = f.iommu.create_domain();
  const RequesterId rid = make_rid(1, 0, 0);
  f.iommu.attach(rid, d);
  f.iommu.map(d, Iommu::k1GiB, 2 * Iommu::k1GiB, Iommu::k1GiB, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.leaf_counts(d), (std::array<std::uint64_t, 3>{0, 0, 1}));
  EXPECT_EQ(f.iommu.table_pages(), 2u);  // root and PDPT
  const auto t = f.iommu.translate(rid, Iommu::k1GiB + 0x1234'5678, 8, false);
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(t.walk_reads.size(), 2u);
  EXPECT_EQ(t.segments.at(0).phys, 2 * Iommu::k1GiB + 0x1234'5678);

  // A range from 4 KiB below a 2 MiB boundary to 4 KiB past the next one: 4 KiB, 2 MiB, 4 KiB.
  const DomainId e = f.iommu.create_domain();
  f.iommu.map(e, 0x3f'f000, 0x5f'f000, k2M + 2 * kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.leaf_counts(e), (std::array<std::uint64_t, 3>{2, 1, 0}));
  EXPECT_EQ(f.iommu.mapped_pages(e), k2M / kPage + 2);

  // Capped at 2 MiB: a 1 GiB-aligned GiB becomes 512 leaves of 2 MiB.
  IommuParams p;
  p.max_page_bytes = k2M;
  IommuFixture g(p);
  const DomainId h = g.iommu.create_domain();
  g.iommu.map(h, Iommu::k1GiB, 2 * Iommu::k1GiB, Iommu::k1GiB, IommuPerm::ReadWrite);
  EXPECT_EQ(g.iommu.leaf_counts(h), (std::array<std::uint64_t, 3>{0, 512, 0}));
}

TEST(Iommu, UnalignedBuffersFallBackToFourKiB) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  // IOVA aligned, physical address not: no 2 MiB leaf can map it.
  f.iommu.map(d, 0x20'0000, 0x40'1000, 2 * k2M, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.leaf_counts(d), (std::array<std::uint64_t, 3>{2 * k2M / kPage, 0, 0}));
  // Both aligned but shorter than 2 MiB: 4 KiB pages.
  f.iommu.map(d, 0x100'0000, 0x100'0000, k2M - kPage, IommuPerm::ReadWrite);
  EXPECT_EQ(f.iommu.leaf_counts(d)[1], 0u);
  // A 2 MiB access then takes 512 lookups (one per 4 KiB page); the first misses walk from
  // the root, the other 511 start at the cached PDE: one read each.
  const auto t = f.iommu.translate(rid, 0x20'0000, k2M, false);
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(t.iotlb_misses, 512u);
  EXPECT_EQ(t.walk_reads.size(), 4u + 511u);
  ASSERT_EQ(t.walk_starts.size(), 512u);  // where each walk's reads begin
  EXPECT_EQ(t.walk_starts[0], 0u);
  EXPECT_EQ(t.walk_starts[1], 4u);
  EXPECT_EQ(t.walk_starts[511], 514u);
  ASSERT_EQ(t.segments.size(), 1u);  // physically contiguous all the same
  EXPECT_EQ(t.segments[0].phys, 0x40'1000u);

  // Superpages off: an aligned buffer gets 4 KiB pages.
  IommuParams p;
  p.max_page_bytes = kPage;
  IommuFixture g(p);
  const DomainId e = g.iommu.create_domain();
  g.iommu.map(e, 0x20'0000, 0x20'0000, 2 * k2M, IommuPerm::ReadWrite);
  EXPECT_EQ(g.iommu.leaf_counts(e), (std::array<std::uint64_t, 3>{2 * k2M / kPage, 0, 0}));
}

TEST(Iommu, UnmapPartOfASuperpageSplitsItAndTheStaleEntryServesUntilInvalidated) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0x60'0000, 0x80'0000, k2M, IommuPerm::ReadWrite);
  ASSERT_TRUE(f.iommu.translate(rid, 0x60'0000, 8, false).ok);  // caches the 2 MiB entry
  const auto tables = f.iommu.table_pages();

  // One 4 KiB page out of the middle: the leaf becomes a table of 512 leaves, 511 left.
  EXPECT_EQ(f.iommu.unmap(d, 0x60'0000 + 5 * kPage, kPage), kPage);
  EXPECT_EQ(f.iommu.leaf_counts(d), (std::array<std::uint64_t, 3>{511, 0, 0}));
  EXPECT_EQ(f.iommu.mapped_pages(d), k2M / kPage - 1);
  EXPECT_EQ(f.iommu.table_pages(), tables + 1);

  // Not invalidated yet: the 2 MiB IOTLB entry still translates the unmapped page.
  EXPECT_TRUE(f.iommu.translate(rid, 0x60'0000 + 5 * kPage, 8, true).ok);
  f.iommu.invalidate(d, 0x60'0000 + 5 * kPage, kPage);  // drops the 2 MiB entry covering it
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 0u);
  const auto gone = f.iommu.translate(rid, 0x60'0000 + 5 * kPage, 8, true);
  EXPECT_FALSE(gone.ok);
  EXPECT_EQ(gone.fault.reason, IommuFaultReason::NotMapped);
  // The rest of the old large page still maps to the same frames, now 4 KiB at a time.
  const auto next = f.iommu.translate(rid, 0x60'0000 + 6 * kPage, 8, false);
  ASSERT_TRUE(next.ok);
  EXPECT_EQ(next.segments.at(0).phys, 0x80'0000u + 6 * kPage);

  // Unmapping all of it frees the split table again.
  EXPECT_EQ(f.iommu.unmap(d, 0x60'0000, k2M), k2M - kPage);
  EXPECT_EQ(f.iommu.mapped_pages(d), 0u);
  EXPECT_EQ(f.iommu.table_pages(), 1u);
}

// --- Paging-structure caches ---------------------------------------------------------

TEST(Iommu, PagingStructureCacheTurnsAFourReadWalkIntoOne) {
  const std::uint64_t iova = (5ULL << 39) | (6ULL << 30) | (7ULL << 21);
  for (std::uint32_t entries : {32u, 0u}) {
    IommuParams p;
    p.psc_entries = entries;
    IommuFixture f(p);
    const RequesterId rid = make_rid(1, 0, 0);
    const DomainId d = f.iommu.create_domain();
    f.iommu.attach(rid, d);
    f.iommu.map(d, iova, 0x123'4000, 2 * kPage, IommuPerm::ReadWrite);
    const auto first = f.iommu.translate(rid, iova, 8, false);
    EXPECT_EQ(first.walk_reads.size(), 4u);
    const auto second = f.iommu.translate(rid, iova + kPage, 8, false);
    ASSERT_TRUE(second.ok);
    EXPECT_EQ(second.iotlb_misses, 1u);
    if (entries != 0) {
      // The PDE was cached by the first walk: only the leaf is read, at its real address.
      ASSERT_EQ(second.walk_reads.size(), 1u);
      EXPECT_EQ(second.walk_reads[0], first.walk_reads[3] + 8);
      EXPECT_EQ(f.stat("psc_hits"), 1.0);
      EXPECT_EQ(f.iommu.psc_occupancy(), 3u);  // one PML4E, one PDPTE, one PDE
    } else {
      EXPECT_EQ(second.walk_reads.size(), 4u);
      EXPECT_EQ(f.stat("psc_hits"), 0.0);
    }
    EXPECT_EQ(f.stat("walk_reads"), static_cast<double>(first.walk_reads.size() + second.walk_reads.size()));
  }
}

TEST(Iommu, InvalidationClearsThePagingStructureCachesOfTheDomainOnly) {
  IommuFixture f;
  const RequesterId r1 = make_rid(1, 0, 1);
  const RequesterId r2 = make_rid(1, 0, 2);
  const DomainId d1 = f.iommu.create_domain();
  const DomainId d2 = f.iommu.create_domain();
  f.iommu.attach(r1, d1);
  f.iommu.attach(r2, d2);
  for (DomainId d : {d1, d2}) f.iommu.map(d, 0x10'0000, 0x100'0000 * d, 4 * kPage, IommuPerm::ReadWrite);
  ASSERT_TRUE(f.iommu.translate(r1, 0x10'0000, kPage, false).ok);
  ASSERT_TRUE(f.iommu.translate(r2, 0x10'0000, kPage, false).ok);
  EXPECT_EQ(f.iommu.psc_occupancy(), 6u);

  // Domain-selective: d1's IOTLB and paging-structure entries go, d2's stay.
  f.iommu.invalidate_domain(d1);
  EXPECT_EQ(f.iommu.psc_occupancy(), 3u);
  EXPECT_EQ(f.iommu.translate(r1, 0x10'1000, 8, false).walk_reads.size(), 4u);  // from the root
  EXPECT_EQ(f.iommu.translate(r2, 0x10'1000, 8, false).walk_reads.size(), 1u);  // d2's PDE cached

  // Page-selective: drops the entries covering the range (all three levels above it).
  f.iommu.invalidate(d2, 0x10'2000, kPage);
  EXPECT_EQ(f.iommu.psc_occupancy(), 3u);  // d1's three remain
  EXPECT_EQ(f.iommu.translate(r2, 0x10'2000, 8, false).walk_reads.size(), 4u);
  // ... and not those of other ranges: d1's PDE of 0x0-0x1fffff survives one far away.
  f.iommu.invalidate(d1, 0x4000'0000, kPage);
  EXPECT_EQ(f.iommu.translate(r1, 0x10'2000, 8, false).walk_reads.size(), 1u);

  f.iommu.invalidate_all();
  EXPECT_EQ(f.iommu.psc_occupancy(), 0u);
  EXPECT_EQ(f.iommu.iotlb_occupancy(), 0u);
}

TEST(Iommu, StalePagingStructureEntryReadsAFreedTableAsEmpty) {
  IommuFixture f;
  const RequesterId rid = make_rid(1, 0, 0);
  const DomainId d = f.iommu.create_domain();
  f.iommu.attach(rid, d);
  f.iommu.map(d, 0x10'0000, 0x20'0000, 2 * kPage, IommuPerm::ReadWrite);
  ASSERT_TRUE(f.iommu.translate(rid, 0x10'0000, 8, false).ok);  // caches PML4E, PDPTE, PDE
  // Unmap both pages without invalidating: the tables below the root are freed, but the
  // cached PDE still points at the freed leaf table. The second page was never in the
  // IOTLB: its walk starts there (1 read), finds nothing and faults.
  f.iommu.unmap(d, 0x10'0000, 2 * kPage);
  EXPECT_EQ(f.iommu.table_pages(), 1u);
  const auto t = f.iommu.translate(rid, 0x10'1000, 8, false);
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.fault.reason, IommuFaultReason::NotMapped);
  EXPECT_EQ(t.walk_reads.size(), 1u);
}

}  // namespace
}  // namespace sohusim::pcie
