#include "sohusim/pcie/iommu.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace sohusim::pcie {

namespace {

// Entry format (this model's own, see the header): bit 0 present, bit 1 read, bit 2 write,
// bit 7 page size (a leaf above level 1), bits 51:12 the next table's or the page frame's
// address.
constexpr std::uint64_t kPresent = 1ULL << 0;
constexpr std::uint64_t kRead = 1ULL << 1;
constexpr std::uint64_t kWrite = 1ULL << 2;
constexpr std::uint64_t kLarge = 1ULL << 7;
constexpr std::uint64_t kNone = ~0ULL;
constexpr std::uint64_t kAddrMask = ((1ULL << 52) - 1) & ~(Iommu::kPageBytes - 1);
constexpr std::uint64_t kPhysLimit = 1ULL << 52;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

unsigned level_index(std::uint64_t vpn, unsigned level) {
  return static_cast<unsigned>((vpn >> (9 * (level - 1))) & (Iommu::kEntriesPerTable - 1));
}

/// 4 KiB pages one entry of `level` covers: 1, 512, 512^2, 512^3.
std::uint64_t pages_at(unsigned level) {
  return 1ULL << (9 * (level - 1));
}

/// A leaf: a present entry at level 1, or one with the page-size bit above it.
bool is_leaf(std::uint64_t pte, unsigned level) {
  return level == 1 || (pte & kLarge) != 0;
}

IommuPerm perms_of(std::uint64_t pte) {
  IommuPerm p = IommuPerm::None;
  if (pte & kRead) p = p | IommuPerm::Read;
  if (pte & kWrite) p = p | IommuPerm::Write;
  return p;
}

bool is_pow2(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

}  // namespace

struct Iommu::Table {
  std::array<std::uint64_t, kEntriesPerTable> e{};
  unsigned present = 0;
};

// ---------------------------------------------------------------------------------------
// Params, faults

void IommuParams::validate() const {
  auto fail = [](const std::string& field, const std::string& why) {
    throw std::invalid_argument("IommuParams." + field + ": " + why);
  };
  if (iotlb_entries == 0) fail("iotlb_entries", "must be at least 1");
  if (iotlb_ways == 0) fail("iotlb_ways", "must be at least 1");
  if (iotlb_ways > iotlb_entries)
    fail("iotlb_ways", "must not exceed iotlb_entries (" + std::to_string(iotlb_entries) + ")");
  if (iotlb_entries % iotlb_ways != 0)
    fail("iotlb_entries", "must be a multiple of iotlb_ways (" + std::to_string(iotlb_ways) + ")");
  if (!is_pow2(iotlb_entries / iotlb_ways))
    fail("iotlb_entries", "iotlb_entries / iotlb_ways (the number of sets) must be a power of two");
  if (!std::isfinite(iotlb_hit_latency_s) || iotlb_hit_latency_s < 0.0)
    fail("iotlb_hit_latency_s", "must be finite and >= 0");
  if (walk_levels != Iommu::kLevels)
    fail("walk_levels", "must be 4 (4 KiB pages, 48-bit IOVA); got " + std::to_string(walk_levels));
  if (max_page_bytes != Iommu::kPageBytes && max_page_bytes != Iommu::k2MiB && max_page_bytes != Iommu::k1GiB)
    fail("max_page_bytes", "must be 4 KiB, 2 MiB or 1 GiB; got " + std::to_string(max_page_bytes));
  if (page_walkers == 0 || page_walkers > 1024)
    fail("page_walkers", "must be 1 to 1024; got " + std::to_string(page_walkers));
  if (psc_entries > (1u << 16)) fail("psc_entries", "must be at most 65536; got " + std::to_string(psc_entries));
  if (page_table_base % Iommu::kPageBytes != 0) fail("page_table_base", hex(page_table_base) + " is not 4 KiB aligned");
  if (page_table_bytes < Iommu::kPageBytes || page_table_bytes % Iommu::kPageBytes != 0)
    fail("page_table_bytes", "must be a non-zero multiple of 4 KiB; got " + std::to_string(page_table_bytes));
  if (page_table_base >= kPhysLimit || page_table_bytes > kPhysLimit - page_table_base)
    fail("page_table_bytes", "region " + hex(page_table_base) + " + " + hex(page_table_bytes) +
                                 " reaches beyond the 52-bit physical address space");
  if (fault_log_capacity == 0) fail("fault_log_capacity", "must be at least 1");
}

const char* to_string(IommuFaultReason reason) {
  switch (reason) {
    case IommuFaultReason::NoDomain:
      return "requester not attached to a domain";
    case IommuFaultReason::NotMapped:
      return "page not mapped";
    case IommuFaultReason::ReadDenied:
      return "read not permitted";
    case IommuFaultReason::WriteDenied:
      return "write not permitted";
    case IommuFaultReason::AddressOutOfRange:
      return "IOVA beyond 48 bits";
  }
  return "unknown";
}

std::string describe(const IommuFault& fault) {
  std::string s = "IOMMU fault: requester " + format_rid(fault.requester) + (fault.is_write ? " write" : " read") +
                  " IOVA " + hex(fault.iova);
  s += fault.domain == kNoDomain ? std::string(" (no domain)") : " (domain " + std::to_string(fault.domain) + ")";
  s += ": ";
  s += to_string(fault.reason);
  return s;
}

void IommuTranslation::clear() {
  ok = false;
  fault = IommuFault{};
  segments.clear();
  iotlb_hits = 0;
  iotlb_misses = 0;
  walk_reads.clear();
  walk_starts.clear();
}

// ---------------------------------------------------------------------------------------
// Construction

namespace {
const IommuParams& validated(const IommuParams& p) {
  p.validate();
  return p;
}
}  // namespace

Iommu::Iommu(const IommuParams& params, counters::Scope scope)
    : params_(validated(params)),
      table_slots_(params.page_table_bytes / kPageBytes),
      translations_(scope.counter("translations", "1", "DMA accesses translated (ok or fault)")),
      hits_(scope.counter("iotlb_hits", "1", "IOTLB lookups that hit (one per page touched, 4 KiB or large)")),
      misses_(scope.counter("iotlb_misses", "1", "IOTLB lookups that missed and walked")),
      walks_(scope.counter("walks", "1", "page-table walks")),
      walk_reads_(scope.counter("walk_reads", "1", "8-byte page-table reads from host memory")),
      psc_hits_(scope.counter("psc_hits", "1", "walks started below the root from a paging-structure cache entry")),
      faults_(scope.counter("faults", "1", "translation faults (DMA blocked)")),
      overflows_(scope.counter("fault_log_overflows", "1", "fault records dropped, log full")),
      invalidations_(scope.counter("invalidations", "1", "IOTLB invalidation requests")) {
  sets_ = params_.iotlb_entries / params_.iotlb_ways;
  iotlb_.resize(params_.iotlb_entries);
  max_leaf_level_ = params_.max_page_bytes == k1GiB ? 3 : params_.max_page_bytes == k2MiB ? 2 : 1;
  for (auto& c : psc_) c.resize(params_.psc_entries);
}

Iommu::~Iommu() = default;

// ---------------------------------------------------------------------------------------
// Table storage

std::uint64_t Iommu::tables_available() const {
  return free_slots_.size() + (table_slots_ - tables_.size());
}

std::uint64_t Iommu::alloc_table() {
  std::uint64_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    tables_[slot] = std::make_unique<Table>();
  } else {
    slot = tables_.size();
    tables_.push_back(std::make_unique<Table>());
  }
  ++tables_in_use_;
  return params_.page_table_base + slot * kPageBytes;
}

void Iommu::free_table(std::uint64_t addr) {
  const std::uint64_t slot = (addr - params_.page_table_base) / kPageBytes;
  tables_[slot].reset();
  free_slots_.push_back(slot);
  --tables_in_use_;
}

Iommu::Table& Iommu::table_at(std::uint64_t addr) {
  return *tables_[(addr - params_.page_table_base) / kPageBytes];
}
const Iommu::Table& Iommu::table_at(std::uint64_t addr) const {
  return *tables_[(addr - params_.page_table_base) / kPageBytes];
}

const Iommu::Table& Iommu::walk_table(std::uint64_t addr) const {
  static const Table kEmpty{};
  const std::uint64_t slot = (addr - params_.page_table_base) / kPageBytes;
  return slot < tables_.size() && tables_[slot] ? *tables_[slot] : kEmpty;
}

// ---------------------------------------------------------------------------------------
// Domains

Iommu::Domain& Iommu::domain_ref(DomainId d, const char* what) {
  auto it = domains_.find(d);
  if (it == domains_.end())
    throw std::invalid_argument(std::string("IOMMU ") + what + ": unknown domain " + std::to_string(d));
  return it->second;
}
const Iommu::Domain& Iommu::domain_ref(DomainId d, const char* what) const {
  auto it = domains_.find(d);
  if (it == domains_.end())
    throw std::invalid_argument(std::string("IOMMU ") + what + ": unknown domain " + std::to_string(d));
  return it->second;
}

DomainId Iommu::create_domain() {
  if (tables_available() == 0)
    throw std::runtime_error("IOMMU create_domain: page-table region " + hex(params_.page_table_base) + " + " +
                             hex(params_.page_table_bytes) + " is full");
  const DomainId d = next_domain_++;
  domains_[d] = Domain{alloc_table(), 0};
  return d;
}

void Iommu::destroy_domain(DomainId d) {
  Domain& dom = domain_ref(d, "destroy_domain");
  free_tree(dom.root, kLevels);
  domains_.erase(d);
  for (auto it = attached_.begin(); it != attached_.end();) {
    if (it->second == d)
      it = attached_.erase(it);
    else
      ++it;
  }
  for (auto& e : iotlb_)
    if (e.valid && e.domain == d) e.valid = false;
  for (auto& c : psc_)
    for (auto& e : c)
      if (e.valid && e.domain == d) e.valid = false;
}

bool Iommu::has_domain(DomainId d) const {
  return domains_.count(d) != 0;
}

std::uint64_t Iommu::root_table(DomainId d) const {
  return domain_ref(d, "root_table").root;
}

void Iommu::attach(RequesterId rid, DomainId d) {
  domain_ref(d, "attach");
  attached_[rid] = d;
}

void Iommu::detach(RequesterId rid) {
  attached_.erase(rid);
}

DomainId Iommu::domain_of(RequesterId rid) const {
  auto it = attached_.find(rid);
  return it == attached_.end() ? kNoDomain : it->second;
}

std::uint64_t Iommu::mapped_pages(DomainId d) const {
  return domain_ref(d, "mapped_pages").pages;
}

std::array<std::uint64_t, 3> Iommu::leaf_counts(DomainId d) const {
  std::array<std::uint64_t, 3> n{};
  count_leaves(domain_ref(d, "leaf_counts").root, kLevels, n);
  return n;
}

void Iommu::count_leaves(std::uint64_t table, unsigned level, std::array<std::uint64_t, 3>& n) const {
  for (std::uint64_t pte : table_at(table).e) {
    if (!(pte & kPresent)) continue;
    if (is_leaf(pte, level))
      ++n[level - 1];
    else
      count_leaves(pte & kAddrMask, level - 1, n);
  }
}

// ---------------------------------------------------------------------------------------
// Page tables

std::uint64_t Iommu::lookup_leaf(const Domain& dom, std::uint64_t vpn, unsigned& level) const {
  std::uint64_t table = dom.root;
  for (level = kLevels; level >= 1; --level) {
    const std::uint64_t pte = table_at(table).e[level_index(vpn, level)];
    if (!(pte & kPresent)) return 0;
    if (is_leaf(pte, level)) return pte;
    table = pte & kAddrMask;
  }
  return 0;
}

std::uint64_t Iommu::first_mapped(std::uint64_t table, unsigned level, std::uint64_t lo, std::uint64_t hi) const {
  const unsigned shift = 9 * (level - 1);
  for (std::uint64_t v = lo; v < hi;) {
    const std::uint64_t child_end = ((v >> shift) + 1) << shift;
    const std::uint64_t pte = table_at(table).e[level_index(v, level)];
    if (pte & kPresent) {
      if (is_leaf(pte, level)) return v;
      const std::uint64_t found = first_mapped(pte & kAddrMask, level - 1, v, std::min(hi, child_end));
      if (found != kNone) return found;
    }
    v = child_end;
  }
  return kNone;
}

bool Iommu::set_leaf(Domain& dom, std::uint64_t vpn, unsigned leaf_level, std::uint64_t pte) {
  // Count the tables this leaf needs first, so a failure allocates nothing.
  unsigned missing = 0;
  std::uint64_t table = dom.root;
  for (unsigned level = kLevels; level > leaf_level; --level) {
    const std::uint64_t e = table_at(table).e[level_index(vpn, level)];
    if (!(e & kPresent)) {
      missing = level - leaf_level;
      break;
    }
    table = e & kAddrMask;
  }
  if (missing > tables_available()) return false;

  table = dom.root;
  for (unsigned level = kLevels; level > leaf_level; --level) {
    const unsigned idx = level_index(vpn, level);
    std::uint64_t e = table_at(table).e[idx];
    if (!(e & kPresent)) {
      const std::uint64_t child = alloc_table();
      Table& t = table_at(table);
      t.e[idx] = child | kPresent;
      ++t.present;
      e = t.e[idx];
    }
    table = e & kAddrMask;
  }
  Table& leaf = table_at(table);
  std::uint64_t& slot = leaf.e[level_index(vpn, leaf_level)];
  if (!(slot & kPresent)) ++leaf.present;
  slot = pte;
  return true;
}

unsigned Iommu::split_need(const Domain& dom, std::uint64_t vpn) const {
  unsigned level = 0;
  if (lookup_leaf(dom, vpn, level) == 0) return 0;
  unsigned need = 0;
  // A leaf of `level` not starting at vpn becomes a table of level-1 leaves, and so on
  // down to the size at which vpn starts a leaf.
  while (level > 1 && vpn % pages_at(level) != 0) {
    ++need;
    --level;
  }
  return need;
}

void Iommu::split_at(Domain& dom, std::uint64_t vpn) {
  for (;;) {
    std::uint64_t table = dom.root;
    unsigned level = kLevels;
    std::uint64_t pte = 0;
    for (; level >= 1; --level) {
      pte = table_at(table).e[level_index(vpn, level)];
      if (!(pte & kPresent) || is_leaf(pte, level)) break;
      table = pte & kAddrMask;
    }
    if (!(pte & kPresent) || level == 1 || vpn % pages_at(level) == 0) return;
    // Replace the large leaf by a table of 512 leaves of the next size down, same frames
    // and permissions.
    const std::uint64_t child = alloc_table();
    Table& c = table_at(child);
    const std::uint64_t step = pages_at(level - 1) << kPageShift;
    const std::uint64_t base = pte & kAddrMask;
    const std::uint64_t bits = (pte & (kPresent | kRead | kWrite)) | (level - 1 > 1 ? kLarge : 0);
    for (unsigned i = 0; i < kEntriesPerTable; ++i) c.e[i] = (base + i * step) | bits;
    c.present = kEntriesPerTable;
    table_at(table).e[level_index(vpn, level)] = child | kPresent;
  }
}

std::uint64_t Iommu::clear_range(std::uint64_t table, unsigned level, std::uint64_t lo, std::uint64_t hi) {
  const unsigned shift = 9 * (level - 1);
  std::uint64_t cleared = 0;
  for (std::uint64_t v = lo; v < hi;) {
    const std::uint64_t child_end = ((v >> shift) + 1) << shift;
    const std::uint64_t sub_hi = std::min(hi, child_end);
    Table& t = table_at(table);
    std::uint64_t& pte = t.e[level_index(v, level)];
    if (pte & kPresent) {
      if (is_leaf(pte, level)) {
        pte = 0;  // a large leaf lies wholly inside [lo, hi) (unmap split the ends)
        --t.present;
        cleared += pages_at(level);
      } else {
        const std::uint64_t child = pte & kAddrMask;
        cleared += clear_range(child, level - 1, v, sub_hi);
        if (table_at(child).present == 0) {
          free_table(child);  // frees another node; `t` and `pte` stay valid
          pte = 0;
          --t.present;
        }
      }
    }
    v = sub_hi;
  }
  return cleared;
}

void Iommu::free_tree(std::uint64_t table, unsigned level) {
  if (level > 1) {
    for (std::uint64_t pte : table_at(table).e)
      if ((pte & kPresent) && !is_leaf(pte, level)) free_tree(pte & kAddrMask, level - 1);
  }
  free_table(table);
}

void Iommu::map(DomainId d, std::uint64_t iova, std::uint64_t phys, std::uint64_t bytes, IommuPerm perms) {
  Domain& dom = domain_ref(d, "map");
  const std::string where = "IOMMU map (domain " + std::to_string(d) + "): IOVA " + hex(iova);
  if (iova % kPageBytes != 0) throw std::invalid_argument(where + " is not 4 KiB aligned");
  if (phys % kPageBytes != 0) throw std::invalid_argument(where + ": phys " + hex(phys) + " is not 4 KiB aligned");
  if (bytes == 0 || bytes % kPageBytes != 0)
    throw std::invalid_argument(where + ": bytes " + std::to_string(bytes) + " is not a non-zero multiple of 4 KiB");
  if (iova >= kIovaLimit || bytes > kIovaLimit - iova)
    throw std::invalid_argument(where + " + " + hex(bytes) + " reaches beyond the 48-bit IOVA space");
  if (phys >= kPhysLimit || bytes > kPhysLimit - phys)
    throw std::invalid_argument(where + ": phys " + hex(phys) + " + " + hex(bytes) +
                                " reaches beyond the 52-bit physical address space");
  if (perms == IommuPerm::None) throw std::invalid_argument(where + ": perms is None");

  const std::uint64_t first = iova >> kPageShift;
  const std::uint64_t pages = bytes >> kPageShift;
  const std::uint64_t taken = first_mapped(dom.root, kLevels, first, first + pages);
  if (taken != kNone)
    throw std::invalid_argument(where + " + " + hex(bytes) + " overlaps an existing mapping at IOVA " +
                                hex(taken << kPageShift));
  std::uint64_t leaf_bits = kPresent;
  if (has_perm(perms, IommuPerm::Read)) leaf_bits |= kRead;
  if (has_perm(perms, IommuPerm::Write)) leaf_bits |= kWrite;
  const std::uint64_t pfn0 = phys >> kPageShift;
  const std::uint64_t end = first + pages;
  for (std::uint64_t v = first; v < end;) {
    // The largest page that the IOVA and the frame are both aligned to and that the rest
    // of the range covers (Linux iommu_map()'s choice from the pgsize bitmap).
    const std::uint64_t pfn = pfn0 + (v - first);
    unsigned level = max_leaf_level_;
    while (level > 1 && (v % pages_at(level) != 0 || pfn % pages_at(level) != 0 || end - v < pages_at(level))) --level;
    const std::uint64_t pte = (pfn << kPageShift) | leaf_bits | (level > 1 ? kLarge : 0);
    if (!set_leaf(dom, v, level, pte)) {
      clear_range(dom.root, kLevels, first, v);  // roll back: all or nothing
      throw std::runtime_error(where + " + " + hex(bytes) + ": page-table region " + hex(params_.page_table_base) +
                               " + " + hex(params_.page_table_bytes) + " is full (at IOVA " + hex(v << kPageShift) +
                               ")");
    }
    v += pages_at(level);
  }
  dom.pages += pages;
}

std::uint64_t Iommu::unmap(DomainId d, std::uint64_t iova, std::uint64_t bytes) {
  Domain& dom = domain_ref(d, "unmap");
  const std::string where = "IOMMU unmap (domain " + std::to_string(d) + "): IOVA " + hex(iova);
  if (iova % kPageBytes != 0) throw std::invalid_argument(where + " is not 4 KiB aligned");
  if (bytes % kPageBytes != 0)
    throw std::invalid_argument(where + ": bytes " + std::to_string(bytes) + " is not a multiple of 4 KiB");
  if (iova >= kIovaLimit || bytes > kIovaLimit - iova)
    throw std::invalid_argument(where + " + " + hex(bytes) + " reaches beyond the 48-bit IOVA space");
  const std::uint64_t lo = iova >> kPageShift;
  const std::uint64_t hi = lo + (bytes >> kPageShift);
  // Large leaves the range covers only in part are split first, so that what lies outside
  // stays mapped. Count the tables before changing anything.
  const unsigned need_lo = split_need(dom, lo);
  unsigned need = need_lo;
  if (hi < (kIovaLimit >> kPageShift)) {
    unsigned lo_level = 0, hi_level = 0;
    const bool lo_mapped = lookup_leaf(dom, lo, lo_level) != 0;
    const bool hi_mapped = lookup_leaf(dom, hi, hi_level) != 0;
    const bool same_leaf = lo_mapped && hi_mapped && lo_level == hi_level && lo_level > 1 &&
                           lo / pages_at(lo_level) == hi / pages_at(hi_level);
    if (!same_leaf || need_lo == 0) {
      need += split_need(dom, hi);
    } else if (lo_level == 3 && hi % pages_at(2) != 0 && lo / pages_at(2) != hi / pages_at(2)) {
      need += 1;  // the 1 GiB leaf is split for lo already; hi's 2 MiB piece needs its own table
    }
  }
  if (need > tables_available())
    throw std::runtime_error(where + " + " + hex(bytes) + ": splitting a large page needs " + std::to_string(need) +
                             " table pages; the page-table region " + hex(params_.page_table_base) + " + " +
                             hex(params_.page_table_bytes) + " is full");
  split_at(dom, lo);
  if (hi < (kIovaLimit >> kPageShift)) split_at(dom, hi);
  const std::uint64_t cleared = clear_range(dom.root, kLevels, lo, hi);
  dom.pages -= cleared;
  return cleared << kPageShift;
}

// ---------------------------------------------------------------------------------------
// IOTLB

std::uint32_t Iommu::set_of(DomainId d, std::uint64_t tag) const {
  return static_cast<std::uint32_t>((tag ^ d) & (sets_ - 1));
}

Iommu::IotlbEntry* Iommu::iotlb_find(DomainId d, std::uint64_t vpn) {
  // One lookup probes each page size in use (as an IOTLB with per-size arrays does).
  for (unsigned level = 1; level <= max_leaf_level_; ++level) {
    const std::uint64_t tag = vpn >> (9 * (level - 1));
    IotlbEntry* set = &iotlb_[static_cast<std::size_t>(set_of(d, tag)) * params_.iotlb_ways];
    for (std::uint32_t w = 0; w < params_.iotlb_ways; ++w)
      if (set[w].valid && set[w].tag == tag && set[w].level == level && set[w].domain == d) return &set[w];
  }
  return nullptr;
}

void Iommu::iotlb_insert(DomainId d, unsigned level, std::uint64_t tag, std::uint64_t pfn, IommuPerm perms) {
  IotlbEntry* set = &iotlb_[static_cast<std::size_t>(set_of(d, tag)) * params_.iotlb_ways];
  IotlbEntry* victim = &set[0];
  for (std::uint32_t w = 0; w < params_.iotlb_ways; ++w) {
    if (!set[w].valid) {
      victim = &set[w];
      break;
    }
    if (set[w].last_use < victim->last_use) victim = &set[w];
  }
  *victim = IotlbEntry{true, d, level, tag, pfn, perms, ++lru_clock_};
}

Iommu::PscEntry* Iommu::psc_find(unsigned level, DomainId d, std::uint64_t tag) {
  for (auto& e : psc(level))
    if (e.valid && e.tag == tag && e.domain == d) return &e;
  return nullptr;
}

void Iommu::psc_insert(unsigned level, DomainId d, std::uint64_t tag, std::uint64_t table) {
  auto& cache = psc(level);
  if (cache.empty()) return;
  if (PscEntry* e = psc_find(level, d, tag)) {
    e->table = table;
    e->last_use = ++lru_clock_;
    return;
  }
  PscEntry* victim = &cache[0];
  for (auto& e : cache) {
    if (!e.valid) {
      victim = &e;
      break;
    }
    if (e.last_use < victim->last_use) victim = &e;
  }
  *victim = PscEntry{true, d, tag, table, ++lru_clock_};
}

void Iommu::psc_drop(DomainId d, std::uint64_t lo, std::uint64_t hi) {
  for (unsigned level = kLevels; level >= 2; --level) {
    const unsigned shift = 9 * (level - 1);
    for (auto& e : psc(level))
      if (e.valid && e.domain == d && e.tag >= (lo >> shift) && e.tag <= (hi >> shift)) e.valid = false;
  }
}

void Iommu::invalidate_domain(DomainId d) {
  ++invalidations_;
  for (auto& e : iotlb_)
    if (e.valid && e.domain == d) e.valid = false;
  for (auto& c : psc_)
    for (auto& e : c)
      if (e.valid && e.domain == d) e.valid = false;
}

void Iommu::invalidate(DomainId d, std::uint64_t iova, std::uint64_t bytes) {
  ++invalidations_;
  if (bytes == 0) return;
  const std::uint64_t lo = iova >> kPageShift;
  const std::uint64_t last = iova + (bytes - 1) < iova ? ~0ULL : iova + (bytes - 1);
  const std::uint64_t hi = last >> kPageShift;  // inclusive
  for (auto& e : iotlb_) {
    if (!e.valid || e.domain != d) continue;
    const unsigned shift = 9 * (e.level - 1);
    if (e.tag >= (lo >> shift) && e.tag <= (hi >> shift)) e.valid = false;
  }
  psc_drop(d, lo, hi);
}

void Iommu::invalidate_all() {
  ++invalidations_;
  for (auto& e : iotlb_) e.valid = false;
  for (auto& c : psc_)
    for (auto& e : c) e.valid = false;
}

std::uint32_t Iommu::psc_occupancy() const {
  std::uint32_t n = 0;
  for (const auto& c : psc_)
    for (const auto& e : c) n += e.valid ? 1 : 0;
  return n;
}

std::uint32_t Iommu::iotlb_occupancy() const {
  std::uint32_t n = 0;
  for (const auto& e : iotlb_) n += e.valid ? 1 : 0;
  return n;
}

// ---------------------------------------------------------------------------------------
// Translation

void Iommu::record_fault(IommuTranslation& out, std::uint64_t iova, RequesterId rid, bool is_write,
                         IommuFaultReason reason, DomainId d) {
  out.ok = false;
  out.fault = IommuFault{iova, rid, is_write, reason, d};
  out.segments.clear();
  ++faults_;
  if (fault_log_.size() < params_.fault_log_capacity)
    fault_log_.push_back(out.fault);
  else
    ++overflows_;
}

IommuTranslation Iommu::translate(RequesterId rid, std::uint64_t iova, std::uint64_t bytes, bool is_write) {
  IommuTranslation out;
  translate(rid, iova, bytes, is_write, out);
  return out;
}

void Iommu::translate(RequesterId rid, std::uint64_t iova, std::uint64_t bytes, bool is_write, IommuTranslation& out) {
  out.clear();
  ++translations_;
  const DomainId d = params_.enabled ? domain_of(rid) : kNoDomain;
  if (!params_.enabled || (d == kNoDomain && !params_.default_blocked)) {
    out.ok = true;  // identity: untranslated, one contiguous segment
    if (bytes > 0) out.segments.push_back(PhysSegment{iova, iova, bytes});
    return;
  }
  if (d == kNoDomain) {
    record_fault(out, iova, rid, is_write, IommuFaultReason::NoDomain, kNoDomain);
    return;
  }
  if (iova >= kIovaLimit || bytes > kIovaLimit - iova) {
    record_fault(out, iova >= kIovaLimit ? iova : kIovaLimit, rid, is_write, IommuFaultReason::AddressOutOfRange, d);
    return;
  }
  out.ok = true;
  if (bytes == 0) return;

  const Domain& dom = domains_.find(d)->second;
  const IommuPerm need = is_write ? IommuPerm::Write : IommuPerm::Read;
  const std::uint64_t end = iova + bytes;
  for (std::uint64_t a = iova; a < end;) {
    const std::uint64_t vpn = a >> kPageShift;
    unsigned level = 1;
    std::uint64_t pfn = 0;  // frame of the leaf's first 4 KiB page
    IommuPerm perms = IommuPerm::None;
    if (IotlbEntry* e = iotlb_find(d, vpn)) {
      ++hits_;
      ++out.iotlb_hits;
      e->last_use = ++lru_clock_;
      level = e->level;
      pfn = e->pfn;
      perms = e->perms;
    } else {
      ++misses_;
      ++out.iotlb_misses;
      ++walks_;
      out.walk_starts.push_back(static_cast<std::uint32_t>(out.walk_reads.size()));
      // Start below the root at the lowest level whose entry the paging-structure caches
      // hold (PDE, then PDPTE, then PML4E).
      std::uint64_t table = dom.root;
      unsigned start = kLevels;
      for (unsigned cached = 2; cached <= kLevels; ++cached) {
        if (PscEntry* p = psc_find(cached, d, vpn >> (9 * (cached - 1)))) {
          p->last_use = ++lru_clock_;
          table = p->table;
          start = cached - 1;
          ++psc_hits_;
          break;
        }
      }
      std::uint64_t pte = 0;
      for (level = start; level >= 1; --level) {
        const unsigned idx = level_index(vpn, level);
        out.walk_reads.push_back(table + idx * kPteBytes);
        ++walk_reads_;
        pte = walk_table(table).e[idx];
        if (!(pte & kPresent) || is_leaf(pte, level)) break;
        table = pte & kAddrMask;
        psc_insert(level, d, vpn >> (9 * (level - 1)), table);
      }
      if (!(pte & kPresent)) {
        record_fault(out, a, rid, is_write, IommuFaultReason::NotMapped, d);
        return;
      }
      pfn = (pte & kAddrMask) >> kPageShift;
      perms = perms_of(pte);
      iotlb_insert(d, level, vpn >> (9 * (level - 1)), pfn, perms);
    }
    if (!has_perm(perms, need)) {
      record_fault(out, a, rid, is_write, is_write ? IommuFaultReason::WriteDenied : IommuFaultReason::ReadDenied, d);
      return;
    }
    const std::uint64_t leaf_first = vpn & ~(pages_at(level) - 1);
    const std::uint64_t page_end = (leaf_first + pages_at(level)) << kPageShift;
    const std::uint64_t chunk = std::min(end, page_end) - a;
    const std::uint64_t phys = ((pfn + (vpn - leaf_first)) << kPageShift) | (a & (kPageBytes - 1));
    if (!out.segments.empty() && out.segments.back().phys + out.segments.back().bytes == phys)
      out.segments.back().bytes += chunk;
    else
      out.segments.push_back(PhysSegment{a, phys, chunk});
    a += chunk;
  }
}

}  // namespace sohusim::pcie
