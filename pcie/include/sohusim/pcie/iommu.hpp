#pragma once
// IOMMU: the host's DMA remapping unit (Intel VT-d, AMD-Vi, Arm SMMU), which translates
// every DMA address a PCIe function emits (an IOVA) into a host-physical address, and
// blocks what the function was not given.
//
// What it models
//   - Translation domains. A requester ID (bus/device/function) is attached to at most one
//     domain; each domain owns one I/O page table. Each SR-IOV VF has its own requester ID,
//     so giving each VF its own domain keeps one VF out of another's memory. A requester
//     with no domain is blocked (a fault) by default, as in DMA-translation mode when the
//     context entry is not present; a config flag makes it pass through untranslated instead
//     (identity, as an IOMMU in pass-through mode).
//   - Page tables as a real radix tree: 4 levels of 512 8-byte entries, 48-bit IOVAs
//     (9+9+9+9+12 bits; the VT-d second-level / x86-64 4-level layout). The table pages
//     themselves sit at simulated host-physical addresses allocated from a configurable
//     region, so a walk is a sequence of 8-byte host memory reads at known addresses: one
//     per level visited, highest first. The entry format is this model's own, simplified:
//     bit 0 present, bit 1 read, bit 2 write, bit 7 page size (a leaf above level 1),
//     bits 51:12 the next table (or, in a leaf, the page frame). Non-leaf entries carry no
//     permissions; the leaf decides.
//   - Superpages: besides 4 KiB leaves, a level-2 entry may be a 2 MiB leaf and a level-3
//     entry a 1 GiB leaf (VT-d second-level large pages, reported in CAP_REG.SLLPS; Intel
//     datasheets since Ivy Bridge-EP list "Large Intel VT-d Pages: 2MB and 1GB"). map()
//     uses the largest page size that fits: where the IOVA and the physical address are
//     both aligned to it and the rest of the range covers it, as Linux's iommu_map() picks
//     the largest size in the domain's pgsize_bitmap. `max_page_bytes` caps it (4 KiB
//     turns superpages off). unmap() of part of a large leaf first splits it into leaves of
//     the next size down (so pages outside the range stay mapped).
//   - IOTLB: set-associative (ways == entries is fully associative), LRU, tagged by
//     (domain, page size, IOVA page), caching a leaf translation with its permissions: one
//     entry covers a whole 2 MiB or 1 GiB page. Only successful walks are cached (no
//     negative caching).
//   - Paging-structure caches (VT-d "non-leaf caching", the counterpart of the CPU's
//     PML4/PDPTE/PDE caches in the Intel SDM vol. 3A 4.10.3): three fully associative LRU
//     caches of `psc_entries` each, holding present non-leaf entries of levels 4, 3 and 2
//     tagged by (domain, IOVA bits 47:39 / 47:30 / 47:21). An IOTLB miss starts the walk at
//     the lowest cached level, so a miss under a cached PDE costs one read (the leaf).
//   - As in hardware, unmap() does NOT invalidate the IOTLB or the paging-structure caches:
//     software must call invalidate()/invalidate_domain()/invalidate_all() afterwards, and
//     until it does a stale entry keeps translating (the bug class this lets a test show);
//     a stale paging-structure entry may point at a freed table page, which then reads as
//     empty, or at a page reused for another table, which the walk then follows. Every
//     invalidation drops the paging-structure entries of what it names as well (VT-d:
//     domain-selective and global invalidations always do; page-selective ones do unless
//     software sets the invalidation hint IH, which this model does not offer).
//   - Faults are values, never exceptions: a fault (no domain, page not mapped, permission,
//     IOVA beyond 48 bits) blocks the whole access (no segment is returned) and is
//     recorded in a bounded fault log {IOVA, requester, read/write, reason, domain}. As
//     with VT-d's fault recording registers, a full log drops new records and counts the
//     overflow; software drains it with clear_fault_log().
//
// What it does not do. It keeps no time: translate() reports how many IOTLB lookups hit
// and missed and the host-physical addresses of the page-table reads the walks made, in
// order, and the caller (the root complex) charges the IOTLB lookup latency and each walk
// read as a host memory access: the reads of one walk one after the other, up to
// `page_walkers` walks at once. No ATS/PRI, no PASID, no interrupt remapping, no
// queued-invalidation latency (invalidation is instantaneous).
//
// Defaults (assumptions, from public descriptions rather than measurements): IOTLB
// 256 entries, 8-way (VT-d and AMD-Vi IOTLB sizes are not published per part; published
// reverse-engineering and simulator studies put them at ~64-512 entries); a hit costs
// 2 ns (a few cycles of the root-complex clock); 16 page walkers (gem5's SMMUv3 default
// of walk slots; Arm's MMU-600 makes the number a build option); superpages up to 1 GiB (what current
// VT-d and AMD-Vi parts report); 32 entries per paging-structure cache (sizes are not
// published; CPU MMUs of the same era keep tens of PDE-cache entries and a few upper-level
// ones, so 32 per level is an assumption on the generous side for PML4/PDPT); page tables
// from a 64 MiB region at 0x7f00'0000'0000 (an arbitrary address above typical DRAM;
// configure it inside the host DRAM model's range if the walks must hit simulated DRAM).
//
// Stats (under the scope given, e.g. `host0.iommu`): translations, iotlb_hits,
// iotlb_misses, walks, walk_reads, psc_hits, faults, fault_log_overflows, invalidations
// (calls of the invalidate_* functions).
//
// Plain C++17; no SystemC.

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/requester_id.hpp"

namespace sohusim::pcie {

using DomainId = std::uint32_t;
/// Domain field of a fault by a requester that has no domain.
constexpr DomainId kNoDomain = 0;

/// Access permissions of a mapping (bit set).
enum class IommuPerm : std::uint8_t { None = 0, Read = 1, Write = 2, ReadWrite = 3 };
constexpr IommuPerm operator|(IommuPerm a, IommuPerm b) {
  return static_cast<IommuPerm>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool has_perm(IommuPerm set, IommuPerm p) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(p)) == static_cast<unsigned>(p);
}

struct IommuParams {
  /// Off: every DMA passes untranslated (identity), nothing is counted but translations.
  bool enabled = true;
  /// IOTLB size and associativity; entries must be a multiple of ways, entries/ways a
  /// power of two. Assumption: ~64-512 entries in VT-d/AMD-Vi IOTLBs.
  std::uint32_t iotlb_entries = 256;
  std::uint32_t iotlb_ways = 8;
  /// Latency of one IOTLB lookup (s), charged by the caller. Assumption.
  double iotlb_hit_latency_s = 2e-9;
  /// Page-table levels: fixed at 4 (48-bit IOVA); validate() rejects anything else.
  std::uint32_t walk_levels = 4;
  /// Largest page map() may use: 4 KiB (no superpages), 2 MiB or 1 GiB.
  std::uint64_t max_page_bytes = 1ULL << 30;
  /// Entries of each paging-structure cache (PML4E, PDPTE, PDE); 0: none, every IOTLB
  /// miss walks from the root. Assumption (sizes are not published).
  std::uint32_t psc_entries = 32;
  /// Page walks in flight at once (the caller times them; each walk's reads stay one after
  /// the other). Assumption: gem5's SMMUv3 model defaults to 16 walk slots; Arm's MMU-600
  /// makes them a build option; VT-d and AMD-Vi do not publish theirs.
  std::uint32_t page_walkers = 16;
  /// Host-physical region the page-table pages are allocated from (4 KiB aligned).
  std::uint64_t page_table_base = 0x7f00'0000'0000ULL;
  std::uint64_t page_table_bytes = 64ULL << 20;
  /// A requester with no domain: blocked (fault) when true, identity passthrough when false.
  bool default_blocked = true;
  /// Fault log capacity (records); further faults are dropped and counted.
  std::uint32_t fault_log_capacity = 256;

  /// Throws std::invalid_argument naming the field.
  void validate() const;
};

enum class IommuFaultReason : std::uint8_t {
  NoDomain,          // the requester is attached to no domain and default_blocked is set
  NotMapped,         // a level of the walk found no present entry
  ReadDenied,        // read of a page mapped without read permission
  WriteDenied,       // write to a page mapped without write permission
  AddressOutOfRange  // the access reaches beyond the 48-bit IOVA space
};
const char* to_string(IommuFaultReason reason);

struct IommuFault {
  std::uint64_t iova = 0;  // the first faulting byte (the page base for a later page)
  RequesterId requester = 0;
  bool is_write = false;
  IommuFaultReason reason = IommuFaultReason::NotMapped;
  DomainId domain = kNoDomain;
};

/// "IOMMU fault: requester 01:00.2 write IOVA 0x7f000000 (domain 3): page not mapped".
std::string describe(const IommuFault& fault);

/// A host-physically contiguous piece of a translated access.
struct PhysSegment {
  std::uint64_t iova = 0;
  std::uint64_t phys = 0;
  std::uint64_t bytes = 0;
};

struct IommuTranslation {
  bool ok = false;
  IommuFault fault;                   // meaningful when !ok
  std::vector<PhysSegment> segments;  // empty when !ok; split at pages, contiguous pages merged
  std::uint32_t iotlb_hits = 0;
  std::uint32_t iotlb_misses = 0;
  /// Host-physical addresses of the 8-byte page-table reads, in issue order (one per level
  /// a walk visits: 4 for a 4 KiB leaf from the root, fewer for a large leaf, a walk that
  /// starts at a cached paging-structure entry, or one that stops at a non-present entry).
  /// The caller charges each one.
  std::vector<std::uint64_t> walk_reads;
  /// Where each walk begins in walk_reads (one entry per IOTLB miss, ascending).
  std::vector<std::uint32_t> walk_starts;

  std::uint32_t iotlb_lookups() const { return iotlb_hits + iotlb_misses; }
  void clear();
};

class Iommu {
 public:
  static constexpr std::uint64_t kPageBytes = 4096;
  static constexpr unsigned kPageShift = 12;
  static constexpr unsigned kLevels = 4;
  static constexpr unsigned kEntriesPerTable = 512;
  static constexpr std::uint64_t kPteBytes = 8;
  static constexpr unsigned kIovaBits = 48;
  static constexpr std::uint64_t kIovaLimit = 1ULL << kIovaBits;
  static constexpr std::uint64_t k2MiB = 1ULL << 21;
  static constexpr std::uint64_t k1GiB = 1ULL << 30;

  /// Throws std::invalid_argument (from params.validate()).
  Iommu(const IommuParams& params, counters::Scope scope);
  ~Iommu();
  Iommu(const Iommu&) = delete;
  Iommu& operator=(const Iommu&) = delete;

  // --- Domains -------------------------------------------------------------------
  /// A new empty domain (ids from 1; kNoDomain is never returned). Allocates its root
  /// table; throws std::runtime_error when the page-table region is full.
  DomainId create_domain();
  /// Detaches its requesters, frees its tables and drops its IOTLB entries.
  /// Unknown domain: std::invalid_argument.
  void destroy_domain(DomainId d);
  bool has_domain(DomainId d) const;
  /// Host-physical address of the domain's root (level-4) table.
  std::uint64_t root_table(DomainId d) const;

  /// Binds a requester to a domain (replacing any earlier binding). Unknown domain:
  /// std::invalid_argument.
  void attach(RequesterId rid, DomainId d);
  void detach(RequesterId rid);
  /// The requester's domain, or kNoDomain.
  DomainId domain_of(RequesterId rid) const;

  // --- Page tables ---------------------------------------------------------------
  /// Maps [iova, iova+bytes) to [phys, phys+bytes). All three 4 KiB-aligned, bytes > 0,
  /// within 48 bits; perms not None; no page already mapped. Each piece gets the largest
  /// page (up to max_page_bytes) to which its IOVA and physical address are both aligned
  /// and which the rest of the range covers; the others 4 KiB pages. All-or-nothing: on
  /// any error nothing changes. Throws std::invalid_argument naming the IOVA (and field),
  /// or std::runtime_error when the page-table region is exhausted.
  void map(DomainId d, std::uint64_t iova, std::uint64_t phys, std::uint64_t bytes, IommuPerm perms);
  /// Unmaps the pages of [iova, iova+bytes) (4 KiB-aligned); pages not mapped are skipped.
  /// A large page the range covers only in part is split first (the rest stays mapped;
  /// std::runtime_error, nothing changed, when the region has no table page for it).
  /// Frees table pages left empty. Does not touch the IOTLB or the paging-structure
  /// caches. Returns the bytes unmapped.
  std::uint64_t unmap(DomainId d, std::uint64_t iova, std::uint64_t bytes);
  /// Mapped bytes of the domain in 4 KiB pages (a 2 MiB leaf counts 512).
  std::uint64_t mapped_pages(DomainId d) const;
  /// Leaves of the domain's table by size: [0] 4 KiB, [1] 2 MiB, [2] 1 GiB.
  std::array<std::uint64_t, 3> leaf_counts(DomainId d) const;
  /// Page-table pages (4 KiB each) in use, all domains.
  std::uint64_t table_pages() const { return tables_in_use_; }

  // --- IOTLB and paging-structure caches ---------------------------------------------
  // IOTLB set index: (page number at the entry's size XOR domain) mod sets. Each call counts
  // one invalidation; invalidation is instantaneous (no queued-invalidation latency) and
  // covers the paging-structure caches too.
  /// Drops every IOTLB and paging-structure entry of the domain (domain-selective).
  void invalidate_domain(DomainId d);
  /// Drops the domain's IOTLB entries whose page overlaps [iova, iova+bytes) (a large
  /// page's entry included) and its paging-structure entries covering any of it
  /// (page-selective-within-domain, invalidation hint clear).
  void invalidate(DomainId d, std::uint64_t iova, std::uint64_t bytes);
  /// Drops everything (global invalidation).
  void invalidate_all();
  /// Valid IOTLB entries (for tests and reports).
  std::uint32_t iotlb_occupancy() const;
  /// Valid paging-structure cache entries, all three caches (for tests and reports).
  std::uint32_t psc_occupancy() const;

  // --- Translation -------------------------------------------------------------------
  /// Translates one DMA access, page by page in address order; the first fault stops it.
  /// Never throws for a bad access: a fault is a value. A zero-byte access is ok with no
  /// segment and no lookup. Disabled, or a requester with no domain and default_blocked
  /// off: identity, one segment, no lookup.
  IommuTranslation translate(RequesterId rid, std::uint64_t iova, std::uint64_t bytes, bool is_write);
  /// The same, reusing `out`'s storage (no allocation once warm).
  void translate(RequesterId rid, std::uint64_t iova, std::uint64_t bytes, bool is_write, IommuTranslation& out);

  // --- Fault log -----------------------------------------------------------------------
  const std::deque<IommuFault>& fault_log() const { return fault_log_; }
  /// Records dropped because the log was full (since construction).
  std::uint64_t fault_log_overflows() const { return overflows_.count(); }
  void clear_fault_log() { fault_log_.clear(); }

  const IommuParams& params() const noexcept { return params_; }

 private:
  struct Table;
  struct IotlbEntry {
    bool valid = false;
    DomainId domain = kNoDomain;
    unsigned level = 1;     // the leaf's level: 1 4 KiB, 2 2 MiB, 3 1 GiB
    std::uint64_t tag = 0;  // IOVA page number >> 9 x (level - 1)
    std::uint64_t pfn = 0;  // physical 4 KiB page number of the leaf's first page
    IommuPerm perms = IommuPerm::None;
    std::uint64_t last_use = 0;
  };
  struct PscEntry {
    bool valid = false;
    DomainId domain = kNoDomain;
    std::uint64_t tag = 0;    // IOVA page number >> 9 x (level - 1)
    std::uint64_t table = 0;  // host-physical address of the next-level table
    std::uint64_t last_use = 0;
  };
  struct Domain {
    std::uint64_t root = 0;  // host-physical address of the root table
    std::uint64_t pages = 0;
  };

  std::uint64_t tables_available() const;
  std::uint64_t alloc_table();  // precondition: tables_available() > 0
  void free_table(std::uint64_t addr);
  Table& table_at(std::uint64_t addr);
  const Table& table_at(std::uint64_t addr) const;
  /// What a walk reads at `addr`: the table, or an all-zero one when the page was freed
  /// (a stale paging-structure cache entry may still point there).
  const Table& walk_table(std::uint64_t addr) const;
  Domain& domain_ref(DomainId d, const char* what);
  const Domain& domain_ref(DomainId d, const char* what) const;
  /// The leaf entry covering a page and its level, or 0 when not present (no side
  /// effects, no counting).
  std::uint64_t lookup_leaf(const Domain& dom, std::uint64_t vpn, unsigned& level) const;
  /// The first mapped page in [lo, hi) below `table` (at `level`), or ~0 when none.
  std::uint64_t first_mapped(std::uint64_t table, unsigned level, std::uint64_t lo, std::uint64_t hi) const;
  /// Sets the leaf of `vpn` at `leaf_level`, allocating missing tables; false (and
  /// nothing allocated) when the region has too few free table pages.
  bool set_leaf(Domain& dom, std::uint64_t vpn, unsigned leaf_level, std::uint64_t pte);
  /// Table pages splitting would need so that page `vpn` starts a leaf (0: it does).
  unsigned split_need(const Domain& dom, std::uint64_t vpn) const;
  /// Splits large leaves until page `vpn` starts a leaf; precondition: split_need() free.
  void split_at(Domain& dom, std::uint64_t vpn);
  /// Clears the leaves of pages [lo, hi) below `table` (at `level`), skipping absent
  /// subtrees and freeing tables left empty; large leaves in the range must lie wholly
  /// inside it. Returns the 4 KiB pages cleared.
  std::uint64_t clear_range(std::uint64_t table, unsigned level, std::uint64_t lo, std::uint64_t hi);
  void free_tree(std::uint64_t table, unsigned level);
  void count_leaves(std::uint64_t table, unsigned level, std::array<std::uint64_t, 3>& n) const;

  IotlbEntry* iotlb_find(DomainId d, std::uint64_t vpn);
  void iotlb_insert(DomainId d, unsigned level, std::uint64_t tag, std::uint64_t pfn, IommuPerm perms);
  std::uint32_t set_of(DomainId d, std::uint64_t tag) const;
  /// Paging-structure cache of the entries of `level` (4, 3 or 2).
  std::vector<PscEntry>& psc(unsigned level) { return psc_[4 - level]; }
  PscEntry* psc_find(unsigned level, DomainId d, std::uint64_t tag);
  void psc_insert(unsigned level, DomainId d, std::uint64_t tag, std::uint64_t table);
  /// Drops the domain's paging-structure entries covering any of pages [lo, hi].
  void psc_drop(DomainId d, std::uint64_t lo, std::uint64_t hi);

  void record_fault(IommuTranslation& out, std::uint64_t iova, RequesterId rid, bool is_write, IommuFaultReason reason,
                    DomainId d);

  IommuParams params_;
  // Page-table pages by slot, (address - page_table_base) / 4 KiB; freed slots are reused.
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::uint64_t> free_slots_;
  std::uint64_t table_slots_ = 0;  // slots the region holds
  std::uint64_t tables_in_use_ = 0;
  std::map<DomainId, Domain> domains_;
  DomainId next_domain_ = 1;
  std::unordered_map<RequesterId, DomainId> attached_;

  std::vector<IotlbEntry> iotlb_;  // sets x ways, set-major
  std::uint32_t sets_ = 1;
  std::uint64_t lru_clock_ = 0;
  unsigned max_leaf_level_ = 3;
  std::array<std::vector<PscEntry>, 3> psc_;  // levels 4, 3, 2

  std::deque<IommuFault> fault_log_;

  counters::Counter& translations_;
  counters::Counter& hits_;
  counters::Counter& misses_;
  counters::Counter& walks_;
  counters::Counter& walk_reads_;
  counters::Counter& psc_hits_;
  counters::Counter& faults_;
  counters::Counter& overflows_;
  counters::Counter& invalidations_;
};

}  // namespace sohusim::pcie
