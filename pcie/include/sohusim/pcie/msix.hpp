// sohusim/pcie/msix.hpp — MSI-X: the capability, the vector table and the Pending Bit Array.
//
// What it models. PCIe Base Spec 7.7.2 (MSI-X Capability and Table Structure), 6.1.4.
//   Capability (12 bytes, ID 0x11): +2 Message Control: Table Size (N-1) bits 10:0 RO,
//   Function Mask bit 14 RW, MSI-X Enable bit 15 RW; +4 Table Offset[31:3] / Table BIR[2:0]
//   RO; +8 PBA Offset[31:3] / PBA BIR[2:0] RO. (Offsets as Linux's PCI_MSIX_FLAGS,
//   PCI_MSIX_TABLE, PCI_MSIX_PBA in include/uapi/linux/pci_regs.h.)
//   Table: 16 bytes per vector inside a BAR: +0 Message Address (bits 1:0 RO 0), +4 Message
//   Upper Address, +8 Message Data, +12 Vector Control (bit 0 Mask, RW; other bits RO 0).
//   Every vector comes out of reset masked.
//   PBA: one bit per vector in qwords inside a BAR, read-only.
//
// Behaviour.
//   raise(v): if MSI-X is enabled and neither the function nor the vector is masked, returns
//   the message (address, data) to send as a posted memory write; otherwise sets v's pending
//   bit. (As in common device models such as QEMU's msix.c, an event while MSI-X Enable is
//   clear also pends; the spec leaves that case to the function.)
//   Unmasking a vector (a table write clearing its Mask bit), clearing Function Mask or
//   setting Enable delivers every vector that is now deliverable with its pending bit set
//   and clears the bit: those messages are returned and the caller must send them.
//   MMIO: dword accesses (and aligned qword accesses, split as the spec allows) at offsets
//   inside the BAR named by the table/PBA BIR. Anything else — an offset in neither
//   structure, a wrong size or alignment, a write to the read-only PBA — comes back as a
//   status, never an exception or a crash; a vector number out of range likewise.
//
// Simplifications: no TPH steering tags in Vector Control; no MSI (only MSI-X).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sohusim/pcie/bar.hpp"
#include "sohusim/pcie/config_space.hpp"

namespace sohusim::pcie {

struct MsixSpec {
  unsigned vectors = 0;  // 1..2048
  unsigned table_bar = 0;
  std::uint32_t table_offset = 0;  // 8-byte aligned offset inside table_bar
  unsigned pba_bar = 0;
  std::uint32_t pba_offset = 0;  // 8-byte aligned offset inside pba_bar
};

/// A message to deliver: a posted memory write of `data` (4 bytes) to `address`.
struct MsixMessage {
  unsigned vector = 0;
  std::uint64_t address = 0;
  std::uint32_t data = 0;
};

enum class MsixStatus {
  Ok,
  OutsideTableAndPba,  // the BAR offset is in neither structure (not an MSI-X access)
  BadAccess,           // size other than 4/8, misaligned, or straddling the structure's end
  ReadOnly,            // write to the PBA: ignored
  BadVector,           // vector number >= table size
};
const char* to_string(MsixStatus s);

struct MsixMmioResult {
  MsixStatus status = MsixStatus::Ok;
  std::uint64_t value = 0;            // read data (reads); 0 on error
  std::vector<MsixMessage> messages;  // writes: messages now due (a vector got unmasked)
};

enum class MsixRaise { Delivered, Pending, BadVector };

struct MsixRaiseResult {
  MsixRaise outcome = MsixRaise::Pending;
  std::optional<MsixMessage> message;  // set when Delivered
};

class Msix {
 public:
  static constexpr unsigned kCapLength = 12;
  static constexpr unsigned kMaxVectors = 2048;
  static constexpr unsigned kEntryBytes = 16;
  // Message Control bits.
  static constexpr std::uint16_t kCtrlFunctionMask = 1u << 14;
  static constexpr std::uint16_t kCtrlEnable = 1u << 15;

  /// Checks a spec (vector count, alignment, BIRs, table/PBA overlap); with `bars`, also that
  /// the named BARs exist and hold the structures. Messages start with `field`.
  static void validate(const MsixSpec& spec, const std::string& field, const BarSet* bars);

  /// Defines the capability body at `cap_offset` (its ID/next header was written by the
  /// CapabilityListBuilder) and creates a masked table. `cs` must outlive this object.
  Msix(ConfigSpace& cs, std::uint16_t cap_offset, const MsixSpec& spec);

  const MsixSpec& spec() const { return spec_; }
  unsigned vectors() const { return spec_.vectors; }
  std::uint16_t cap_offset() const { return cap_; }
  std::uint64_t table_bytes() const { return std::uint64_t{kEntryBytes} * spec_.vectors; }
  std::uint64_t pba_bytes() const { return 8u * ((spec_.vectors + 63u) / 64u); }

  bool enabled() const;
  bool function_masked() const;
  bool vector_masked(unsigned vector) const;  // false for an out-of-range vector
  bool pending(unsigned vector) const;        // false for an out-of-range vector
  /// The table entry as a message (regardless of masks); nullopt if out of range.
  std::optional<MsixMessage> entry(unsigned vector) const;

  MsixRaiseResult raise(unsigned vector);

  bool in_table(unsigned bar, std::uint64_t offset) const;
  bool in_pba(unsigned bar, std::uint64_t offset) const;
  bool contains(unsigned bar, std::uint64_t offset) const { return in_table(bar, offset) || in_pba(bar, offset); }
  MsixMmioResult mmio_read(unsigned bar, std::uint64_t offset, unsigned size) const;
  MsixMmioResult mmio_write(unsigned bar, std::uint64_t offset, unsigned size, std::uint64_t value);

  /// Call after any config write that may have changed Message Control: returns the pending
  /// messages that became deliverable (Enable set / Function Mask cleared).
  std::vector<MsixMessage> on_control_written();

  /// Function reset: every vector masked, addresses/data 0, PBA clear. (Message Control is
  /// reset with the config space.)
  void reset();

 private:
  struct Entry {
    std::uint32_t addr_lo = 0;
    std::uint32_t addr_hi = 0;
    std::uint32_t data = 0;
    std::uint32_t control = 1;  // masked
  };
  bool deliverable(unsigned vector) const;
  MsixStatus check_access(unsigned bar, std::uint64_t offset, unsigned size) const;
  MsixMessage message(unsigned vector) const;
  std::vector<MsixMessage> flush_pending();
  MsixStatus write_dword(unsigned bar, std::uint64_t offset, std::uint32_t value, std::vector<MsixMessage>& out);
  MsixStatus read_dword(unsigned bar, std::uint64_t offset, std::uint32_t& value) const;

  ConfigSpace* cs_;
  std::uint16_t cap_;
  MsixSpec spec_;
  std::vector<Entry> table_;
  std::vector<bool> pending_;
};

}  // namespace sohusim::pcie
