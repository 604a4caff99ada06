#include "sohusim/pcie/msix.hpp"

#include <stdexcept>

namespace sohusim::pcie {

const char* to_string(MsixStatus s) {
  switch (s) {
    case MsixStatus::Ok:
      return "ok";
    case MsixStatus::OutsideTableAndPba:
      return "outside the MSI-X table and PBA";
    case MsixStatus::BadAccess:
      return "bad MSI-X access size or alignment";
    case MsixStatus::ReadOnly:
      return "write to the read-only PBA ignored";
    case MsixStatus::BadVector:
      return "MSI-X vector out of range";
  }
  return "?";
}

void Msix::validate(const MsixSpec& spec, const std::string& field, const BarSet* bars) {
  if (spec.vectors < 1 || spec.vectors > kMaxVectors) {
    throw std::invalid_argument(field + ".vectors: " + std::to_string(spec.vectors) + " (must be 1..2048)");
  }
  if (spec.table_bar >= kNumBarSlots) {
    throw std::invalid_argument(field + ".table_bar: " + std::to_string(spec.table_bar) + " (must be 0..5)");
  }
  if (spec.pba_bar >= kNumBarSlots) {
    throw std::invalid_argument(field + ".pba_bar: " + std::to_string(spec.pba_bar) + " (must be 0..5)");
  }
  if (spec.table_offset % 8 != 0) {
    throw std::invalid_argument(field + ".table_offset: " + std::to_string(spec.table_offset) +
                                " is not 8-byte aligned");
  }
  if (spec.pba_offset % 8 != 0) {
    throw std::invalid_argument(field + ".pba_offset: " + std::to_string(spec.pba_offset) + " is not 8-byte aligned");
  }
  const std::uint64_t tbytes = std::uint64_t{kEntryBytes} * spec.vectors;
  const std::uint64_t pbytes = 8u * ((spec.vectors + 63u) / 64u);
  if (spec.table_bar == spec.pba_bar) {
    const std::uint64_t t0 = spec.table_offset, p0 = spec.pba_offset;
    if (t0 < p0 + pbytes && p0 < t0 + tbytes) {
      throw std::invalid_argument(field + ".pba_offset: the PBA overlaps the MSI-X table");
    }
  }
  if (bars != nullptr) {
    const BarSpec* tb = bars->spec(spec.table_bar);
    if (tb == nullptr) {
      throw std::invalid_argument(field + ".table_bar: BAR " + std::to_string(spec.table_bar) + " does not exist");
    }
    if (spec.table_offset + tbytes > tb->size) {
      throw std::invalid_argument(field + ".table_offset: the table (" + std::to_string(tbytes) +
                                  " bytes) does not fit in BAR " + std::to_string(spec.table_bar));
    }
    const BarSpec* pb = bars->spec(spec.pba_bar);
    if (pb == nullptr) {
      throw std::invalid_argument(field + ".pba_bar: BAR " + std::to_string(spec.pba_bar) + " does not exist");
    }
    if (spec.pba_offset + pbytes > pb->size) {
      throw std::invalid_argument(field + ".pba_offset: the PBA (" + std::to_string(pbytes) +
                                  " bytes) does not fit in BAR " + std::to_string(spec.pba_bar));
    }
  }
}

Msix::Msix(ConfigSpace& cs, std::uint16_t cap_offset, const MsixSpec& spec)
    : cs_(&cs), cap_(cap_offset), spec_(spec), table_(spec.vectors), pending_(spec.vectors, false) {
  validate(spec, "msix", nullptr);
  cs_->define(cap_ + 2u, 2, (spec.vectors - 1u) & 0x7FFu, kCtrlFunctionMask | kCtrlEnable);
  cs_->define(cap_ + 4u, 4, spec.table_offset | spec.table_bar);
  cs_->define(cap_ + 8u, 4, spec.pba_offset | spec.pba_bar);
}

bool Msix::enabled() const {
  return (cs_->read(cap_ + 2u, 2) & kCtrlEnable) != 0;
}
bool Msix::function_masked() const {
  return (cs_->read(cap_ + 2u, 2) & kCtrlFunctionMask) != 0;
}

bool Msix::vector_masked(unsigned vector) const {
  return vector < spec_.vectors && (table_[vector].control & 1u) != 0;
}

bool Msix::pending(unsigned vector) const {
  return vector < spec_.vectors && pending_[vector];
}

std::optional<MsixMessage> Msix::entry(unsigned vector) const {
  if (vector >= spec_.vectors) return std::nullopt;
  return message(vector);
}

bool Msix::deliverable(unsigned vector) const {
  return enabled() && !function_masked() && (table_[vector].control & 1u) == 0;
}

MsixMessage Msix::message(unsigned vector) const {
  const Entry& e = table_[vector];
  return MsixMessage{vector, (static_cast<std::uint64_t>(e.addr_hi) << 32) | e.addr_lo, e.data};
}

MsixRaiseResult Msix::raise(unsigned vector) {
  if (vector >= spec_.vectors) return MsixRaiseResult{MsixRaise::BadVector, std::nullopt};
  if (deliverable(vector)) return MsixRaiseResult{MsixRaise::Delivered, message(vector)};
  pending_[vector] = true;
  return MsixRaiseResult{MsixRaise::Pending, std::nullopt};
}

std::vector<MsixMessage> Msix::flush_pending() {
  std::vector<MsixMessage> out;
  for (unsigned v = 0; v < spec_.vectors; ++v) {
    if (pending_[v] && deliverable(v)) {
      pending_[v] = false;
      out.push_back(message(v));
    }
  }
  return out;
}

std::vector<MsixMessage> Msix::on_control_written() {
  return flush_pending();
}

void Msix::reset() {
  for (Entry& e : table_) e = Entry{};
  pending_.assign(spec_.vectors, false);
}

bool Msix::in_table(unsigned bar, std::uint64_t offset) const {
  return bar == spec_.table_bar && offset >= spec_.table_offset && offset - spec_.table_offset < table_bytes();
}

bool Msix::in_pba(unsigned bar, std::uint64_t offset) const {
  return bar == spec_.pba_bar && offset >= spec_.pba_offset && offset - spec_.pba_offset < pba_bytes();
}

MsixStatus Msix::read_dword(unsigned bar, std::uint64_t offset, std::uint32_t& value) const {
  if (in_table(bar, offset)) {
    const std::uint64_t rel = offset - spec_.table_offset;
    const Entry& e = table_[rel / kEntryBytes];
    switch (rel % kEntryBytes) {
      case 0:
        value = e.addr_lo;
        break;
      case 4:
        value = e.addr_hi;
        break;
      case 8:
        value = e.data;
        break;
      default:
        value = e.control;
        break;
    }
    return MsixStatus::Ok;
  }
  if (in_pba(bar, offset)) {
    const std::uint64_t first = (offset - spec_.pba_offset) * 8;  // first vector of this dword
    value = 0;
    for (unsigned i = 0; i < 32; ++i) {
      const std::uint64_t v = first + i;
      if (v < spec_.vectors && pending_[v]) value |= 1u << i;
    }
    return MsixStatus::Ok;
  }
  return MsixStatus::OutsideTableAndPba;
}

MsixStatus Msix::write_dword(unsigned bar, std::uint64_t offset, std::uint32_t value, std::vector<MsixMessage>& out) {
  if (in_table(bar, offset)) {
    const std::uint64_t rel = offset - spec_.table_offset;
    const auto vector = static_cast<unsigned>(rel / kEntryBytes);
    Entry& e = table_[vector];
    switch (rel % kEntryBytes) {
      case 0:
        e.addr_lo = value & ~3u;
        break;
      case 4:
        e.addr_hi = value;
        break;
      case 8:
        e.data = value;
        break;
      default:
        e.control = value & 1u;
        if (pending_[vector] && deliverable(vector)) {
          pending_[vector] = false;
          out.push_back(message(vector));
        }
        break;
    }
    return MsixStatus::Ok;
  }
  if (in_pba(bar, offset)) return MsixStatus::ReadOnly;
  return MsixStatus::OutsideTableAndPba;
}

namespace {
// Both dwords of a qword access must fall in the same structure.
bool same_structure(const Msix& m, unsigned bar, std::uint64_t offset) {
  return (m.in_table(bar, offset) && m.in_table(bar, offset + 4)) ||
         (m.in_pba(bar, offset) && m.in_pba(bar, offset + 4));
}
}  // namespace

// An MMIO access to the table or PBA: a dword, or an aligned qword inside one structure.
MsixStatus Msix::check_access(unsigned bar, std::uint64_t offset, unsigned size) const {
  if (!contains(bar, offset)) return MsixStatus::OutsideTableAndPba;
  if ((size != 4 && size != 8) || offset % size != 0 || (size == 8 && !same_structure(*this, bar, offset))) {
    return MsixStatus::BadAccess;
  }
  return MsixStatus::Ok;
}

MsixMmioResult Msix::mmio_read(unsigned bar, std::uint64_t offset, unsigned size) const {
  MsixMmioResult r;
  r.status = check_access(bar, offset, size);
  if (r.status != MsixStatus::Ok) return r;
  std::uint32_t lo = 0, hi = 0;
  r.status = read_dword(bar, offset, lo);
  if (size == 8) read_dword(bar, offset + 4, hi);
  r.value = (static_cast<std::uint64_t>(hi) << 32) | lo;
  return r;
}

MsixMmioResult Msix::mmio_write(unsigned bar, std::uint64_t offset, unsigned size, std::uint64_t value) {
  MsixMmioResult r;
  r.status = check_access(bar, offset, size);
  if (r.status != MsixStatus::Ok) return r;
  r.status = write_dword(bar, offset, static_cast<std::uint32_t>(value), r.messages);
  if (size == 8) write_dword(bar, offset + 4, static_cast<std::uint32_t>(value >> 32), r.messages);
  return r;
}

}  // namespace sohusim::pcie
