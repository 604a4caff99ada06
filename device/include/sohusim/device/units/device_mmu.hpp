#pragma once
// Device MMU: per-context address translation for the device's own memory accesses, so that
// one process's (or one VF's) commands cannot touch another's device memory.
//
// Contexts. A submission entry names a context (SQE DW1 CONTEXT); context 0 is physical
// (no translation: the driver's kernel part). Contexts 1..max_contexts-1 are created by the
// admin command SET_CONTEXT, which hands the device a table of 8-byte page-table entries in
// host memory; the device DMA-reads the table once into its on-chip table memory (so the
// translation also works in timing data mode, where device memory holds no bytes) and
// answers later translations from it.
//
// Format (docs/registers.md, "Device MMU"): entry i maps virtual page i, of page_bytes
// (2 MiB by default) each: bit 0 valid, bit 1 writable, bits 63..21 the physical page
// address (page-aligned; low bits ignored).
//
// TLB. tlb_entries fully associative, LRU, tagged with (context, virtual page). A hit costs
// nothing extra; a miss costs miss_ps (the on-chip table lookup). Changing or removing a
// context flushes its TLB entries (the admin command is the invalidation).
//
// Faults are values: an access to a context that does not exist, a page whose entry is not
// valid, beyond the table, or a write to a read-only page returns a Fault naming the
// context, address and reason; the command fails with MMU_FAULT, the simulator goes on.
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sohusim::device {

struct MmuParams {
  unsigned contexts = 64;  // context ids 0 .. contexts-1 (0 is physical)
  std::uint64_t page_bytes = 2ULL << 20;
  unsigned tlb_entries = 64;
  std::uint64_t miss_ps = 100'000;  // on-chip table lookup on a TLB miss (assumption)
  std::uint64_t max_table_entries = 1ULL << 20;
  void validate() const;
};

/// One physically contiguous piece of a translated range.
struct MmuSegment {
  std::uint64_t phys = 0;
  std::uint64_t bytes = 0;
};

struct MmuResult {
  bool ok = true;
  std::vector<MmuSegment> segments;  // the range, page by page, merged where contiguous
  std::uint64_t cost_ps = 0;         // TLB misses x miss_ps
  std::uint64_t tlb_hits = 0;
  std::uint64_t tlb_misses = 0;
  std::uint64_t fault_address = 0;  // the first virtual address that failed
  std::string fault;                // why, for the error log and humans
};

class DeviceMmu {
 public:
  explicit DeviceMmu(const MmuParams& p);
  /// Installs (or replaces) context `ctx`'s table; flushes its TLB entries. Returns an error
  /// message (empty on success): ctx 0 or out of range, a table that is empty or too large.
  std::string set_context(unsigned ctx, std::vector<std::uint64_t> entries);
  void remove_context(unsigned ctx);
  bool has_context(unsigned ctx) const { return ctx == 0 || tables_.count(ctx) != 0; }
  /// Translates [vaddr, vaddr + bytes) of context `ctx` for a read or a write.
  MmuResult translate(unsigned ctx, std::uint64_t vaddr, std::uint64_t bytes, bool write);
  void reset();  // every context removed, TLB flushed
  const MmuParams& params() const noexcept { return p_; }
  std::uint64_t hits() const noexcept { return hits_; }
  std::uint64_t misses() const noexcept { return misses_; }

 private:
  bool tlb_lookup(unsigned ctx, std::uint64_t vpn);
  void flush(unsigned ctx);
  MmuParams p_;
  std::uint64_t hits_ = 0, misses_ = 0;
  std::unordered_map<unsigned, std::vector<std::uint64_t>> tables_;
  std::list<std::pair<unsigned, std::uint64_t>> lru_;  // front: most recent
  std::unordered_map<std::uint64_t, std::list<std::pair<unsigned, std::uint64_t>>::iterator> tlb_;
};

}  // namespace sohusim::device
