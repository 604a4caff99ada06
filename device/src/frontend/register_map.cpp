#include "sohusim/device/frontend/register_map.hpp"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/compute/ops.hpp"
#include "sohusim/regmap/sohu_regs.h"

#include "regmap_table.inc"

namespace sohusim::device {

// The command formats carry the shared vocabularies' numeric values: the YAML and the enums
// must agree, and a new enumerator must get its encoding (the _COUNT checks).
static_assert(SOHU_DTYPE_FP8_E4M3 == static_cast<unsigned>(DataType::FP8_E4M3), "DTYPE FP8_E4M3 != DataType");
static_assert(SOHU_DTYPE_FP8_E5M2 == static_cast<unsigned>(DataType::FP8_E5M2), "DTYPE FP8_E5M2 != DataType");
static_assert(SOHU_DTYPE_BF16 == static_cast<unsigned>(DataType::BF16), "DTYPE BF16 != DataType");
static_assert(SOHU_DTYPE_FP16 == static_cast<unsigned>(DataType::FP16), "DTYPE FP16 != DataType");
static_assert(SOHU_DTYPE_FP32 == static_cast<unsigned>(DataType::FP32), "DTYPE FP32 != DataType");
static_assert(SOHU_DTYPE_COUNT == kNumDataTypes, "DTYPE encodings and DataType differ in number");

static_assert(SOHU_ACT_NONE == static_cast<unsigned>(Activation::None), "ACT NONE != Activation");
static_assert(SOHU_ACT_RELU == static_cast<unsigned>(Activation::Relu), "ACT RELU != Activation");
static_assert(SOHU_ACT_GELU == static_cast<unsigned>(Activation::Gelu), "ACT GELU != Activation");
static_assert(SOHU_ACT_SILU == static_cast<unsigned>(Activation::Silu), "ACT SILU != Activation");
static_assert(SOHU_ACT_COUNT == kNumActivations, "ACT encodings and Activation differ in number");

static_assert(SOHU_VOP_RMSNORM == static_cast<unsigned>(VectorOp::RmsNorm), "VOP RMSNORM != VectorOp");
static_assert(SOHU_VOP_LAYERNORM == static_cast<unsigned>(VectorOp::LayerNorm), "VOP LAYERNORM != VectorOp");
static_assert(SOHU_VOP_ROPE == static_cast<unsigned>(VectorOp::Rope), "VOP ROPE != VectorOp");
static_assert(SOHU_VOP_SILU == static_cast<unsigned>(VectorOp::Silu), "VOP SILU != VectorOp");
static_assert(SOHU_VOP_GELU == static_cast<unsigned>(VectorOp::Gelu), "VOP GELU != VectorOp");
static_assert(SOHU_VOP_SWIGLU == static_cast<unsigned>(VectorOp::Swiglu), "VOP SWIGLU != VectorOp");
static_assert(SOHU_VOP_ADD == static_cast<unsigned>(VectorOp::Add), "VOP ADD != VectorOp");
static_assert(SOHU_VOP_SCALE == static_cast<unsigned>(VectorOp::Scale), "VOP SCALE != VectorOp");
static_assert(SOHU_VOP_CAST == static_cast<unsigned>(VectorOp::Cast), "VOP CAST != VectorOp");
static_assert(SOHU_VOP_SOFTMAX == static_cast<unsigned>(VectorOp::Softmax), "VOP SOFTMAX != VectorOp");
static_assert(SOHU_VOP_COUNT == kNumVectorOps, "VOP encodings and VectorOp differ in number");

// GEMM's DATAFLOW field reserves 0 for "the device's configured dataflow", so it carries
// Dataflow + 1.
static_assert(SOHU_IO_GEMM_DATAFLOW_WS == static_cast<unsigned>(Dataflow::WeightStationary) + 1, "GEMM WS");
static_assert(SOHU_IO_GEMM_DATAFLOW_OS == static_cast<unsigned>(Dataflow::OutputStationary) + 1, "GEMM OS");
static_assert(SOHU_IO_GEMM_DATAFLOW_IS == static_cast<unsigned>(Dataflow::InputStationary) + 1, "GEMM IS");

static_assert(regmap_generated::kBar0Size == SOHU_BAR0_SIZE, "table and header disagree on BAR0's size");

namespace {

template <typename T, std::size_t N>
TableView<T> view(const T (&a)[N]) {
  return TableView<T>{a, N};
}

std::uint64_t width_mask(unsigned bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIX64, v);
  return buf;
}

std::string offset_text(std::uint32_t offset) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "BAR0+0x%05" PRIX32, offset);
  return buf;
}

AccessResult fail(AccessError e, std::string message) {
  AccessResult r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

}  // namespace

const char* to_string(Access a) {
  switch (a) {
    case Access::RO:
      return "RO";
    case Access::RW:
      return "RW";
    case Access::RW1C:
      return "RW1C";
    case Access::WO:
      return "WO";
    case Access::RC:
      return "RC";
  }
  return "?";
}

const char* to_string(AccessError e) {
  switch (e) {
    case AccessError::None:
      return "none";
    case AccessError::BadSize:
      return "bad size";
    case AccessError::Misaligned:
      return "misaligned";
    case AccessError::Unmapped:
      return "unmapped";
    case AccessError::ReadOnly:
      return "read-only";
    case AccessError::WriteOnly:
      return "write-only";
  }
  return "?";
}

const RegisterMap& sohu_register_map() {
  static const RegisterMap map{view(regmap_generated::kRegisters), view(regmap_generated::kPages),
                               regmap_generated::kBar0Size};
  return map;
}

TableView<StatusDesc> status_table() {
  return view(regmap_generated::kStatuses);
}
TableView<PmuEventDesc> pmu_event_table() {
  return view(regmap_generated::kPmuEvents);
}
TableView<CommandDesc> command_table() {
  return view(regmap_generated::kCommands);
}

const char* status_name(std::uint16_t code) {
  for (const StatusDesc& s : status_table())
    if (s.code == code) return s.name;
  return nullptr;
}

const CommandDesc* find_command(CommandQueue queue, std::uint8_t opcode) {
  for (const CommandDesc& c : command_table())
    if (c.queue == queue && c.opcode == opcode) return &c;
  return nullptr;
}

// ---------------------------------------------------------------------------------------

RegisterFile::RegisterFile() : RegisterFile(sohu_register_map()) {}

RegisterFile::RegisterFile(const RegisterMap& map)
    : descs_(map.registers.begin(), map.registers.end()),
      pages_(map.pages.begin(), map.pages.end()),
      bar0_size_(map.bar0_size) {
  // A bound on the storage a hand-made map can ask for; the Sohu map has a few hundred.
  constexpr std::size_t kMaxElements = std::size_t{1} << 20;
  std::size_t elements = 0;
  for (const RegisterDesc& d : descs_) {
    const std::string name = d.name ? d.name : "(unnamed)";
    if (!d.name || !*d.name) throw std::invalid_argument("register at " + hex(d.offset) + " has no name");
    if (d.width_bits != 32 && d.width_bits != 64)
      throw std::invalid_argument("register " + name + ": width " + std::to_string(d.width_bits) +
                                  " bits (allowed: 32, 64)");
    const std::uint32_t bytes = d.width_bits / 8;
    const std::uint64_t wm = width_mask(d.width_bits);
    if (d.offset % bytes)
      throw std::invalid_argument("register " + name + ": offset " + hex(d.offset) + " not aligned to " +
                                  std::to_string(bytes) + " bytes");
    if (d.count == 0) throw std::invalid_argument("register " + name + ": count 0 (allowed: >= 1)");
    if (d.count > 1 && (d.stride < bytes || d.stride % bytes))
      throw std::invalid_argument("register " + name + ": stride " + hex(d.stride) + " (allowed: a multiple of " +
                                  std::to_string(bytes) + " bytes, at least one register)");
    if ((d.reset | d.writable_mask | d.self_clearing_mask) & ~wm)
      throw std::invalid_argument("register " + name + ": reset or masks wider than " + std::to_string(d.width_bits) +
                                  " bits");
    if (d.self_clearing_mask & ~d.writable_mask)
      throw std::invalid_argument("register " + name + ": self-clearing bits outside the writable mask");
    const std::uint64_t last = std::uint64_t{d.offset} + std::uint64_t{d.count - 1} * d.stride + bytes;
    if (last > (bar0_size_ ? bar0_size_ : std::uint64_t{1} << 32))
      throw std::invalid_argument("register " + name + ": ends at " + hex(last) + ", beyond BAR0 (size " +
                                  hex(bar0_size_) + ")");
    elements += d.count;
    if (elements > kMaxElements)
      throw std::invalid_argument("register map: more than " + std::to_string(kMaxElements) + " register elements");
  }
  first_.reserve(descs_.size());
  values_.reserve(elements);
  for (std::size_t i = 0; i < descs_.size(); ++i) {
    const RegisterDesc& d = descs_[i];
    first_.push_back(values_.size());
    for (std::uint32_t k = 0; k < d.count; ++k) {
      values_.push_back(d.reset);
      const std::uint32_t at = d.offset + k * d.stride;
      for (std::uint32_t b = 0; b < d.width_bits / 8; b += 4) {
        const Slot s{static_cast<std::uint32_t>(i), k, b};
        const auto [it, fresh] = words_.emplace((at + b) / 4, s);
        if (!fresh)
          throw std::invalid_argument("registers " + label(it->second) + " and " + label(s) + " share offset " +
                                      hex(at + b));
      }
    }
  }
  latched_.assign(values_.size(), 0);
  latch_.assign(values_.size(), 0);
  write_hooks_.resize(descs_.size());
  read_hooks_.resize(descs_.size());
}

const RegisterFile::Slot* RegisterFile::slot(std::uint32_t offset) const {
  const auto it = words_.find(offset / 4);
  return it == words_.end() ? nullptr : &it->second;
}

std::string RegisterFile::label(const Slot& s) const {
  const RegisterDesc& d = descs_[s.desc];
  std::string out = d.name;
  if (d.count > 1) out += "[" + std::to_string(s.index) + "]";
  if (d.width_bits == 64) out += s.byte ? " high half" : "";
  return out;
}

std::string RegisterFile::describe(std::uint32_t offset) const {
  if (bar0_size_ && offset >= bar0_size_) return "beyond BAR0 (size " + hex(bar0_size_) + ")";
  for (const PageDesc& p : pages_) {
    if (offset < p.offset || offset - p.offset >= p.size) continue;
    if (p.kind == PageKind::MsixTable || p.kind == PageKind::MsixPba)
      return std::string("no register: ") + p.name + " is served by the PCIe endpoint's MSI-X model";
    return std::string("no register (reserved space of page ") + p.name + ")";
  }
  return "no register (reserved space)";
}

std::optional<RegisterLocation> RegisterFile::locate(std::uint32_t offset) const {
  const Slot* s = slot(offset);
  if (!s) return std::nullopt;
  return RegisterLocation{s->desc, s->index, s->byte + offset % 4};
}

std::optional<std::size_t> RegisterFile::find(std::uint32_t offset) const {
  const Slot* s = slot(offset);
  if (!s) return std::nullopt;
  return std::size_t{s->desc};
}

std::optional<std::size_t> RegisterFile::find(std::string_view name) const {
  for (std::size_t i = 0; i < descs_.size(); ++i)
    if (name == descs_[i].name) return i;
  return std::nullopt;
}

std::uint32_t RegisterFile::offset_of(std::string_view name, std::uint32_t index) const {
  const auto i = find(name);
  if (!i) throw std::invalid_argument("no register named '" + std::string(name) + "'");
  const RegisterDesc& d = descs_[*i];
  if (index >= d.count)
    throw std::invalid_argument("register " + std::string(name) + ": index " + std::to_string(index) +
                                " (allowed: 0.." + std::to_string(d.count - 1) + ")");
  return d.offset + index * d.stride;
}

std::size_t RegisterFile::element_at(std::uint32_t offset, const char* what) const {
  const Slot* s = slot(offset);
  if (!s || s->byte != 0 || offset % 4)
    throw std::invalid_argument(std::string(what) + ": no register starts at " + offset_text(offset) +
                                (s ? " (it is inside " + label(*s) + ")" : std::string()));
  return element(s->desc, s->index);
}

std::uint64_t RegisterFile::peek(std::uint32_t offset) const {
  return values_[element_at(offset, "peek")];
}

void RegisterFile::poke(std::uint32_t offset, std::uint64_t value) {
  const std::size_t e = element_at(offset, "poke");
  const RegisterDesc& d = descs_[slot(offset)->desc];
  if (value & ~width_mask(d.width_bits))
    throw std::invalid_argument("poke " + hex(value) + " into " + std::string(d.name) + ": wider than its " +
                                std::to_string(d.width_bits) + " bits");
  values_[e] = value;
}

std::uint64_t RegisterFile::sample(const Slot& s) {
  const RegisterDesc& d = descs_[s.desc];
  const std::size_t e = element(s.desc, s.index);
  std::uint64_t v = values_[e];
  if (read_hooks_[s.desc]) {
    const ReadHook hook = read_hooks_[s.desc];  // a copy: the hook may replace itself
    v = hook(s.index, v);
  }
  v &= width_mask(d.width_bits);
  if (d.access == Access::RC) values_[e] = 0;
  return v;
}

AccessResult RegisterFile::read(std::uint32_t offset, unsigned size_bytes) {
  const std::string at = offset_text(offset);
  if (size_bytes != 4 && size_bytes != 8)
    return fail(AccessError::BadSize, std::to_string(size_bytes) + "-byte read at " + at +
                                          ": reads 0 (allowed sizes: 4, or 8 on 64-bit registers)");
  if (offset % size_bytes)
    return fail(AccessError::Misaligned,
                std::to_string(size_bytes) + "-byte read at " + at + ": not aligned to its size; reads 0");
  const Slot* s = slot(offset);
  if (!s) return fail(AccessError::Unmapped, "read at " + at + ": " + describe(offset) + "; reads 0");
  const RegisterDesc& d = descs_[s->desc];
  if (size_bytes == 8 && d.width_bits != 64)
    return fail(AccessError::BadSize, "8-byte read at " + at + " (" + label(*s) +
                                          "): 32-bit register; 8-byte accesses only on 64-bit registers; reads 0");
  if (d.access == Access::WO)
    return fail(AccessError::WriteOnly, "read at " + at + " (" + label(*s) + "): write-only register reads 0");

  const std::size_t e = element(s->desc, s->index);
  AccessResult r;
  if (size_bytes == 4 && d.width_bits == 64 && s->byte == 4 && latched_[e]) {
    latched_[e] = 0;
    r.value = latch_[e];
    return r;
  }
  const std::uint64_t v = sample(*s);
  if (size_bytes == 8 || d.width_bits == 32) {
    latched_[e] = 0;  // a whole read supersedes an earlier half read
    r.value = v;
  } else if (s->byte == 0) {
    latch_[e] = static_cast<std::uint32_t>(v >> 32);
    latched_[e] = 1;
    r.value = v & 0xFFFFFFFFu;
  } else {
    r.value = v >> 32;
  }
  return r;
}

AccessResult RegisterFile::write(std::uint32_t offset, unsigned size_bytes, std::uint64_t value) {
  const std::string at = offset_text(offset);
  if (size_bytes != 4 && size_bytes != 8)
    return fail(AccessError::BadSize, std::to_string(size_bytes) + "-byte write at " + at +
                                          ": ignored (allowed sizes: 4, or 8 on 64-bit registers)");
  if (offset % size_bytes)
    return fail(AccessError::Misaligned,
                std::to_string(size_bytes) + "-byte write at " + at + ": not aligned to its size; ignored");
  const Slot* s = slot(offset);
  if (!s) return fail(AccessError::Unmapped, "write at " + at + ": " + describe(offset) + "; ignored");
  const RegisterDesc& d = descs_[s->desc];
  if (size_bytes == 8 && d.width_bits != 64)
    return fail(AccessError::BadSize, "8-byte write at " + at + " (" + label(*s) +
                                          "): 32-bit register; 8-byte accesses only on 64-bit registers; ignored");
  if (d.access == Access::RO || d.access == Access::RC)
    return fail(AccessError::ReadOnly,
                "write at " + at + " (" + label(*s) + "): " + to_string(d.access) + " register; ignored");

  // The bytes the access carries, placed where they land in the register.
  const unsigned shift = 8 * s->byte;
  const std::uint64_t lanes = size_bytes == 8 ? ~std::uint64_t{0} : std::uint64_t{0xFFFFFFFFu} << shift;
  const std::uint64_t data = size_bytes == 8 ? value : (value & 0xFFFFFFFFu) << shift;
  const std::uint64_t changeable = lanes & d.writable_mask;

  const std::size_t e = element(s->desc, s->index);
  const std::uint64_t old_value = values_[e];
  const std::uint64_t new_value =
      d.access == Access::RW1C ? old_value & ~(data & changeable) : (old_value & ~changeable) | (data & changeable);
  values_[e] = new_value & ~d.self_clearing_mask;
  latched_[e] = 0;
  if (!write_hooks_[s->desc].empty()) {
    const std::vector<WriteHook> hooks = write_hooks_[s->desc];  // hooks may attach hooks
    for (const WriteHook& h : hooks) h(s->index, old_value, new_value);
  }
  return AccessResult{};
}

void RegisterFile::on_write(std::uint32_t offset, WriteHook hook) {
  if (!hook) throw std::invalid_argument("on_write at " + offset_text(offset) + ": empty hook");
  element_at(offset, "on_write");  // throws unless a register element starts there
  write_hooks_[slot(offset)->desc].push_back(std::move(hook));
}

void RegisterFile::on_read(std::uint32_t offset, ReadHook hook) {
  if (!hook) throw std::invalid_argument("on_read at " + offset_text(offset) + ": empty hook");
  element_at(offset, "on_read");
  read_hooks_[slot(offset)->desc] = std::move(hook);
}

void RegisterFile::reset() {
  for (std::size_t i = 0; i < descs_.size(); ++i)
    for (std::uint32_t k = 0; k < descs_[i].count; ++k) values_[element(i, k)] = descs_[i].reset;
  latched_.assign(latched_.size(), 0);
}

}  // namespace sohusim::device
