#include "sohusim/device/units/device_mmu.hpp"

#include <sstream>
#include <stdexcept>

#include "hex.hpp"

namespace sohusim::device {

using detail::hex;

namespace {
std::uint64_t key(unsigned ctx, std::uint64_t vpn) {
  return (static_cast<std::uint64_t>(ctx) << 48) ^ vpn;
}
}  // namespace

void MmuParams::validate() const {
  if (contexts < 1 || contexts > 65536) throw std::invalid_argument("device.mmu.contexts must be in 1 .. 65536");
  if (page_bytes < 4096 || (page_bytes & (page_bytes - 1)) != 0) {
    throw std::invalid_argument("device.mmu.page_size must be a power of two >= 4 KiB");
  }
  if (tlb_entries < 1 || tlb_entries > 65536)
    throw std::invalid_argument("device.mmu.tlb_entries must be in 1 .. 65536");
  if (max_table_entries < 1) throw std::invalid_argument("device.mmu.max_table_entries must be >= 1");
}

DeviceMmu::DeviceMmu(const MmuParams& p) : p_(p) {
  p_.validate();
}

std::string DeviceMmu::set_context(unsigned ctx, std::vector<std::uint64_t> entries) {
  if (ctx == 0 || ctx >= p_.contexts) {
    return "context " + std::to_string(ctx) + " is not in 1 .. " + std::to_string(p_.contexts - 1);
  }
  if (entries.empty() || entries.size() > p_.max_table_entries) {
    return "context " + std::to_string(ctx) + ": table of " + std::to_string(entries.size()) +
           " entries (allowed 1 .. " + std::to_string(p_.max_table_entries) + ")";
  }
  flush(ctx);
  tables_[ctx] = std::move(entries);
  return {};
}

void DeviceMmu::remove_context(unsigned ctx) {
  flush(ctx);
  tables_.erase(ctx);
}

void DeviceMmu::reset() {
  tables_.clear();
  lru_.clear();
  tlb_.clear();
}

void DeviceMmu::flush(unsigned ctx) {
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->first == ctx) {
      tlb_.erase(key(it->first, it->second));
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

bool DeviceMmu::tlb_lookup(unsigned ctx, std::uint64_t vpn) {
  const std::uint64_t k = key(ctx, vpn);
  auto it = tlb_.find(k);
  if (it != tlb_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return true;
  }
  if (lru_.size() >= p_.tlb_entries) {
    tlb_.erase(key(lru_.back().first, lru_.back().second));
    lru_.pop_back();
  }
  lru_.emplace_front(ctx, vpn);
  tlb_[k] = lru_.begin();
  return false;
}

MmuResult DeviceMmu::translate(unsigned ctx, std::uint64_t vaddr, std::uint64_t bytes, bool write) {
  MmuResult r;
  if (ctx == 0) {
    r.segments.push_back({vaddr, bytes});
    return r;
  }
  auto t = tables_.find(ctx);
  if (t == tables_.end()) {
    r.ok = false;
    r.fault_address = vaddr;
    r.fault = "context " + std::to_string(ctx) + " has no page table (SET_CONTEXT first)";
    return r;
  }
  const std::vector<std::uint64_t>& table = t->second;
  std::uint64_t a = vaddr;
  const std::uint64_t end = vaddr + bytes;
  if (end < vaddr) {
    r.ok = false;
    r.fault_address = vaddr;
    r.fault = "range " + hex(vaddr) + " + " + std::to_string(bytes) + " wraps the address space";
    return r;
  }
  while (a < end) {
    const std::uint64_t vpn = a / p_.page_bytes;
    const std::uint64_t page_end = (vpn + 1) * p_.page_bytes;
    const std::uint64_t n = std::min(end, page_end) - a;
    if (vpn >= table.size() || (table[vpn] & 1) == 0 || (write && (table[vpn] & 2) == 0)) {
      r.ok = false;
      r.fault_address = a;
      r.fault = "context " + std::to_string(ctx) + " " + (write ? "write" : "read") + " at " + hex(a) + ": " +
                (vpn >= table.size()     ? "beyond the page table (" + std::to_string(table.size()) + " pages)"
                 : (table[vpn] & 1) == 0 ? std::string("page not valid")
                                         : std::string("page is read-only"));
      return r;
    }
    if (tlb_lookup(ctx, vpn)) {
      ++r.tlb_hits;
      ++hits_;
    } else {
      ++r.tlb_misses;
      ++misses_;
      r.cost_ps += p_.miss_ps;
    }
    const std::uint64_t phys = (table[vpn] & ~(p_.page_bytes - 1)) + (a - vpn * p_.page_bytes);
    if (!r.segments.empty() && r.segments.back().phys + r.segments.back().bytes == phys) {
      r.segments.back().bytes += n;
    } else {
      r.segments.push_back({phys, n});
    }
    a += n;
  }
  return r;
}

}  // namespace sohusim::device
