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
//   - Page tables as a real radix tree: 4 KiB pages, 4 levels of 512 8-byte entries,
//     48-bit IOVAs (9+9+9+9+12 bits; the VT-d second-level / x86-64 4-level layout).
//     The table pages themselves sit at simulated host-physical addresses allocated from
//     a configurable region, so a walk is a sequence of 8-byte host memory reads at known
//     addresses: one per level, root first. The entry format is this model's own,
//     simplified: bit 0 present, bit 1 read, bit 2 write, bits 51:12 the next table (or,
//     in a leaf, the page frame). Non-leaf entries carry no permissions; the leaf decides.
//     Large pages (2 MiB / 1 GiB leaves) are not modelled.
//   - IOTLB: set-associative (ways == entries is fully associative), LRU, tagged by
//     (domain, IOVA page), caching a leaf translation with its permissions. Only
//     successful walks are cached (no negative caching). No page-walk / paging-structure
//     cache: every miss walks all 4 levels.
//   - As in hardware, unmap() does NOT invalidate the IOTLB: software must call
//     invalidate()/invalidate_domain()/invalidate_all() afterwards, and until it does a
//     stale entry keeps translating (the bug class this lets a test show).
//   - Faults are values, never exceptions: a fault (no domain, page not mapped, permission,
//     IOVA beyond 48 bits) blocks the whole access (no segment is returned) and is
//     recorded in a bounded fault log {IOVA, requester, read/write, reason, domain}. As
//     with VT-d's fault recording registers, a full log drops new records and counts the
//     overflow; software drains it with clear_fault_log().
//
// What it does not do. It keeps no time: translate() reports how many IOTLB lookups hit
// and missed and the host-physical addresses of the page-table reads the walks made, in
// order, and the caller (the root complex) charges the IOTLB lookup latency and each walk
// read as a host memory access. No ATS/PRI, no PASID, no interrupt remapping, no
// queued-invalidation latency (invalidation is instantaneous).
//
// Defaults (assumptions, from public descriptions rather than measurements): IOTLB
// 256 entries, 8-way (VT-d and AMD-Vi IOTLB sizes are not published per part; published
// reverse-engineering and simulator studies put them at ~64-512 entries); a hit costs
// 2 ns (a few cycles of the root-complex clock); page tables from a 64 MiB region at
// 0x7f00'0000'0000 (an arbitrary address above typical DRAM; configure it inside the
// host DRAM model's range if the walks must hit simulated DRAM).
//
// Stats (under the scope given, e.g. `host0.iommu`): translations, iotlb_hits,
// iotlb_misses, walks, walk_reads, faults, fault_log_overflows, invalidations (calls of
// the invalidate_* functions).
//
// Plain C++17; no SystemC.

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
  NoDomain,         // the requester is attached to no domain and default_blocked is set
  NotMapped,        // a level of the walk found no present entry
  ReadDenied,       // read of a page mapped without read permission
  WriteDenied,      // write to a page mapped without write permission
  AddressOutOfRange // the access reaches beyond the 48-bit IOVA space
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
  IommuFault fault;                  // meaningful when !ok
  std::vector<PhysSegment> segments; // empty when !ok; split at 4 KiB, contiguous pages merged
  std::uint32_t iotlb_hits = 0;
  std::uint32_t iotlb_misses = 0;
  /// Host-physical addresses of the 8-byte page-table reads, in issue order (4 per walk,
  /// fewer when a walk stops at a non-present entry). The caller charges each one.
  std::vector<std::uint64_t> walk_reads;

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
  /// Maps [iova, iova+bytes) to [phys, phys+bytes). All three page-aligned, bytes > 0,
  /// within 48 bits; perms not None; no page already mapped. All-or-nothing: on any error
  /// nothing changes. Throws std::invalid_argument naming the IOVA (and field), or
  /// std::runtime_error when the page-table region is exhausted.
  void map(DomainId d, std::uint64_t iova, std::uint64_t phys, std::uint64_t bytes,
           IommuPerm perms);
  /// Unmaps the pages of [iova, iova+bytes) (page-aligned); pages not mapped are skipped.
  /// Frees table pages left empty. Does not touch the IOTLB. Returns the bytes unmapped.
  std::uint64_t unmap(DomainId d, std::uint64_t iova, std::uint64_t bytes);
  /// Number of 4 KiB pages mapped in the domain.
  std::uint64_t mapped_pages(DomainId d) const;
  /// Page-table pages (4 KiB each) in use, all domains.
  std::uint64_t table_pages() const { return tables_in_use_; }

  // --- IOTLB -----------------------------------------------------------------------
  // Set index: (IOVA page number XOR domain) mod sets. Each call counts one invalidation;
  // invalidation is instantaneous (no queued-invalidation latency).
  /// Drops every entry of the domain (VT-d domain-selective invalidation).
  void invalidate_domain(DomainId d);
  /// Drops the domain's entries for the pages [iova, iova+bytes) touches (page-selective).
  void invalidate(DomainId d, std::uint64_t iova, std::uint64_t bytes);
  /// Drops everything (global invalidation).
  void invalidate_all();
  /// Valid IOTLB entries (for tests and reports).
  std::uint32_t iotlb_occupancy() const;

  // --- Translation -------------------------------------------------------------------
  /// Translates one DMA access, page by page in address order; the first fault stops it.
  /// Never throws for a bad access: a fault is a value. A zero-byte access is ok with no
  /// segment and no lookup. Disabled, or a requester with no domain and default_blocked
  /// off: identity, one segment, no lookup.
  IommuTranslation translate(RequesterId rid, std::uint64_t iova, std::uint64_t bytes,
                             bool is_write);
  /// The same, reusing `out`'s storage (no allocation once warm).
  void translate(RequesterId rid, std::uint64_t iova, std::uint64_t bytes, bool is_write,
                 IommuTranslation& out);

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
    std::uint64_t vpn = 0;  // IOVA page number
    std::uint64_t pfn = 0;  // physical page number
    IommuPerm perms = IommuPerm::None;
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
  Domain& domain_ref(DomainId d, const char* what);
  const Domain& domain_ref(DomainId d, const char* what) const;
  /// The leaf entry of a page, or 0 when not present (no side effects, no counting).
  std::uint64_t lookup_pte(const Domain& dom, std::uint64_t vpn) const;
  /// Sets the leaf of `vpn`, allocating missing tables; false (and nothing allocated)
  /// when the region has too few free table pages.
  bool set_pte(Domain& dom, std::uint64_t vpn, std::uint64_t pte);
  /// Clears the leaves of pages [lo, hi) below `table` (at `level`), skipping absent
  /// subtrees and freeing tables left empty; returns the pages cleared.
  std::uint64_t clear_range(std::uint64_t table, unsigned level, std::uint64_t lo,
                            std::uint64_t hi);
  void free_tree(std::uint64_t table, unsigned level);

  IotlbEntry* iotlb_find(DomainId d, std::uint64_t vpn);
  void iotlb_insert(DomainId d, std::uint64_t vpn, std::uint64_t pfn, IommuPerm perms);
  std::uint32_t set_of(DomainId d, std::uint64_t vpn) const;

  void record_fault(IommuTranslation& out, std::uint64_t iova, RequesterId rid, bool is_write,
                    IommuFaultReason reason, DomainId d);

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

  std::deque<IommuFault> fault_log_;

  counters::Counter& translations_;
  counters::Counter& hits_;
  counters::Counter& misses_;
  counters::Counter& walks_;
  counters::Counter& walk_reads_;
  counters::Counter& faults_;
  counters::Counter& overflows_;
  counters::Counter& invalidations_;
};

}  // namespace sohusim::pcie
