// sohusim/pcie/config_space.hpp — the 4 KiB configuration space of one PCIe function.
//
// What it models. PCIe Base Spec 7.5/7.2: a function's configuration space is 4 KiB; the first
// 64 bytes are the type-0 header, 0x40-0xFF hold the "standard" capabilities (linked from the
// Capabilities Pointer at 0x34, each with an 8-bit ID and an 8-bit next pointer), and
// 0x100-0xFFF hold the extended capabilities (a 32-bit header at 0x100: ID[15:0],
// version[19:16], next offset[31:20]).
//
// Every bit has an access attribute, stored as per-byte masks:
//   RO    read-only (the default): software writes are silently ignored, as the spec demands
//         (a write to a read-only field is not an error).
//   RW    read-write.
//   RW1C  write 1 to clear; writing 0 has no effect. Hardware sets these bits (status) through
//         hw_set_bits().
//   "hardware status" bits are RO or RW1C bits the model itself sets/clears with hw_write(),
//         hw_set_bits() and hw_clear_bits(), which bypass the attributes.
// A separate "preserve" mask marks bits a function reset (FLR, D3hot->D0 soft reset) leaves
// alone: the spec's sticky bits (RWS, RW1CS, ROS: the AER registers) plus state that belongs to
// the link rather than the function (Link Control/Status). reset() restores every other bit to
// its reset value.
//
// Accesses. read()/write() take sizes 1, 2 or 4 at naturally aligned offsets inside the 4 KiB;
// anything else is a std::invalid_argument naming offset and size (the link turns those into
// Unsupported Request before they reach here). Values are little-endian as on the wire.
//
// Register offsets are the spec's; they were checked against Linux's
// include/uapi/linux/pci_regs.h (PCI_VENDOR_ID ... PCI_CAPABILITY_LIST, PCI_EXT_CAP_*).
//
// Simplifications: no type-1 (bridge) header, no expansion ROM BAR, no I/O BARs, no
// INTx (Interrupt Pin reads 0: the function uses MSI-X only).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace sohusim::pcie {

// ---- Type-0 header offsets (PCIe Base Spec 7.5.1) ----
namespace cfg {
inline constexpr std::uint16_t kVendorId = 0x00;
inline constexpr std::uint16_t kDeviceId = 0x02;
inline constexpr std::uint16_t kCommand = 0x04;
inline constexpr std::uint16_t kStatus = 0x06;
inline constexpr std::uint16_t kRevisionId = 0x08;
inline constexpr std::uint16_t kClassCode = 0x09;  // 3 bytes: prog-if, subclass, base class
inline constexpr std::uint16_t kCacheLineSize = 0x0C;
inline constexpr std::uint16_t kHeaderType = 0x0E;
inline constexpr std::uint16_t kBar0 = 0x10;  // BAR0..5 at 0x10..0x24
inline constexpr std::uint16_t kSubsystemVendorId = 0x2C;
inline constexpr std::uint16_t kSubsystemId = 0x2E;
inline constexpr std::uint16_t kCapabilitiesPointer = 0x34;
inline constexpr std::uint16_t kInterruptLine = 0x3C;
inline constexpr std::uint16_t kInterruptPin = 0x3D;

inline constexpr std::uint16_t kFirstCapability = 0x40;      // standard capabilities from here
inline constexpr std::uint16_t kFirstExtCapability = 0x100;  // extended capabilities from here

// Command register bits.
inline constexpr std::uint16_t kCmdIoSpace = 1u << 0;
inline constexpr std::uint16_t kCmdMemorySpace = 1u << 1;
inline constexpr std::uint16_t kCmdBusMaster = 1u << 2;
inline constexpr std::uint16_t kCmdParityErrorResponse = 1u << 6;
inline constexpr std::uint16_t kCmdSerrEnable = 1u << 8;
inline constexpr std::uint16_t kCmdInterruptDisable = 1u << 10;

// Status register bits.
inline constexpr std::uint16_t kStatInterrupt = 1u << 3;              // RO
inline constexpr std::uint16_t kStatCapabilitiesList = 1u << 4;       // RO
inline constexpr std::uint16_t kStatMasterDataParityError = 1u << 8;  // RW1C
inline constexpr std::uint16_t kStatSignaledTargetAbort = 1u << 11;   // RW1C
inline constexpr std::uint16_t kStatReceivedTargetAbort = 1u << 12;   // RW1C
inline constexpr std::uint16_t kStatReceivedMasterAbort = 1u << 13;   // RW1C
inline constexpr std::uint16_t kStatSignaledSystemError = 1u << 14;   // RW1C
inline constexpr std::uint16_t kStatDetectedParityError = 1u << 15;   // RW1C

// Capability IDs (PCI Code and ID Assignment Spec; Linux PCI_CAP_ID_*, PCI_EXT_CAP_ID_*).
inline constexpr std::uint8_t kCapIdPowerManagement = 0x01;
inline constexpr std::uint8_t kCapIdMsi = 0x05;
inline constexpr std::uint8_t kCapIdPciExpress = 0x10;
inline constexpr std::uint8_t kCapIdMsix = 0x11;
inline constexpr std::uint16_t kExtCapIdAer = 0x0001;
inline constexpr std::uint16_t kExtCapIdSriov = 0x0010;

// Power Management capability (PCI PM 1.2; Linux PCI_PM_*), offsets inside the capability.
inline constexpr std::uint16_t kPmCapabilities = 0x02;   // PMC
inline constexpr std::uint16_t kPmControlStatus = 0x04;  // PMCSR
inline constexpr unsigned kPmCapLength = 8;
inline constexpr std::uint16_t kPmcsrPowerStateMask = 0x3;  // bits 1:0: D0..D3hot
inline constexpr std::uint16_t kPmcsrNoSoftReset = 1u << 3;
inline constexpr std::uint16_t kPmcsrPmeEnable = 1u << 8;
inline constexpr std::uint16_t kPmcsrPmeStatus = 1u << 15;

// PCI Express capability (PCIe Base Spec 7.5.3; Linux PCI_EXP_*), offsets inside it.
inline constexpr std::uint16_t kExpFlags = 0x02;
inline constexpr std::uint16_t kExpDevCap = 0x04;
inline constexpr std::uint16_t kExpDevCtl = 0x08;
inline constexpr std::uint16_t kExpDevSta = 0x0A;
inline constexpr std::uint16_t kExpLnkCap = 0x0C;
inline constexpr std::uint16_t kExpLnkCtl = 0x10;
inline constexpr std::uint16_t kExpLnkSta = 0x12;
inline constexpr std::uint16_t kExpDevCap2 = 0x24;
inline constexpr std::uint16_t kExpDevCtl2 = 0x28;
inline constexpr std::uint16_t kExpLnkCap2 = 0x2C;
inline constexpr std::uint16_t kExpLnkCtl2 = 0x30;
inline constexpr std::uint16_t kExpLnkSta2 = 0x32;
inline constexpr unsigned kExpCapLength = 0x3C;  // version 2 capability
// Device Capabilities.
inline constexpr std::uint32_t kDevCapMpssMask = 0x7;  // Max_Payload_Size Supported
inline constexpr std::uint32_t kDevCapExtTag = 1u << 5;
inline constexpr std::uint32_t kDevCapRoleBasedError = 1u << 15;
inline constexpr std::uint32_t kDevCapFlr = 1u << 28;
// Device Control.
inline constexpr std::uint16_t kDevCtlCorrErrReporting = 1u << 0;
inline constexpr std::uint16_t kDevCtlNonFatalReporting = 1u << 1;
inline constexpr std::uint16_t kDevCtlFatalReporting = 1u << 2;
inline constexpr std::uint16_t kDevCtlUrReporting = 1u << 3;
inline constexpr std::uint16_t kDevCtlRelaxedOrdering = 1u << 4;
inline constexpr std::uint16_t kDevCtlMpsShift = 5;  // bits 7:5
inline constexpr std::uint16_t kDevCtlExtTag = 1u << 8;
inline constexpr std::uint16_t kDevCtlNoSnoop = 1u << 11;
inline constexpr std::uint16_t kDevCtlMrrsShift = 12;  // bits 14:12
inline constexpr std::uint16_t kDevCtlInitiateFlr = 1u << 15;
// Device Status (RW1C error bits).
inline constexpr std::uint16_t kDevStaCorrectable = 1u << 0;
inline constexpr std::uint16_t kDevStaNonFatal = 1u << 1;
inline constexpr std::uint16_t kDevStaFatal = 1u << 2;
inline constexpr std::uint16_t kDevStaUnsupportedRequest = 1u << 3;
inline constexpr std::uint16_t kDevStaTransactionsPending = 1u << 5;
// Link Capabilities / Control / Status.
inline constexpr std::uint32_t kLnkCapAspmShift = 10;     // bits 11:10: bit 0 L0s, bit 1 L1
inline constexpr std::uint32_t kLnkCapL0sExitShift = 12;  // bits 14:12
inline constexpr std::uint32_t kLnkCapL1ExitShift = 15;   // bits 17:15
inline constexpr std::uint16_t kLnkCtlAspmMask = 0x3;     // bits 1:0
inline constexpr std::uint16_t kLnkCtlRcb = 1u << 3;
inline constexpr std::uint16_t kLnkCtlCommonClock = 1u << 6;
inline constexpr std::uint16_t kLnkCtlExtendedSynch = 1u << 7;
inline constexpr std::uint16_t kLnkStaWidthShift = 4;  // bits 9:4; speed in bits 3:0
}  // namespace cfg

class ConfigSpace {
 public:
  static constexpr std::uint32_t kSize = 4096;

  /// All bytes zero, read-only, not preserved.
  ConfigSpace();

  // ---- Software (configuration request) view ----
  /// Reads `size` (1, 2, 4) bytes at a naturally aligned `offset` (< 4096).
  std::uint32_t read(std::uint32_t offset, unsigned size) const;
  /// Writes honouring the per-bit attributes: RW bits take the value, RW1C bits written 1
  /// clear, everything else is unchanged (read-only writes are ignored, not errors).
  void write(std::uint32_t offset, unsigned size, std::uint32_t value);

  // ---- Model (hardware) view ----
  /// Declares a register: its reset value (also its current value) and attribute masks.
  /// `rw` and `rw1c` must not overlap. Bits in neither are RO. `preserve` marks bits reset()
  /// keeps (sticky). Throws std::invalid_argument on a bad offset/size or overlapping masks.
  void define(std::uint32_t offset, unsigned size, std::uint32_t reset_value, std::uint32_t rw = 0,
              std::uint32_t rw1c = 0, std::uint32_t preserve = 0);
  /// Sets the value regardless of attributes (hardware-owned fields, e.g. Link Status).
  void hw_write(std::uint32_t offset, unsigned size, std::uint32_t value);
  void hw_set_bits(std::uint32_t offset, unsigned size, std::uint32_t bits);
  void hw_clear_bits(std::uint32_t offset, unsigned size, std::uint32_t bits);
  /// Changes only the writable mask of a register (e.g. a field that becomes read-only).
  void set_rw_mask(std::uint32_t offset, unsigned size, std::uint32_t rw);
  std::uint32_t rw_mask(std::uint32_t offset, unsigned size) const;

  /// Function reset: every bit not in the preserve mask returns to its reset value.
  void reset();

  // ---- Capability walkers ----
  /// Offset of the first standard capability with `id`, walking from the Capabilities Pointer
  /// (only if Status.Capabilities List is set). Loops and out-of-range pointers end the walk.
  std::optional<std::uint16_t> find_capability(std::uint8_t id) const;
  /// Offset of the first extended capability with `id`, walking from 0x100.
  std::optional<std::uint16_t> find_ext_capability(std::uint16_t id) const;

 private:
  static void check_access(std::uint32_t offset, unsigned size);
  std::array<std::uint8_t, kSize> value_{};
  std::array<std::uint8_t, kSize> reset_{};
  std::array<std::uint8_t, kSize> rw_{};
  std::array<std::uint8_t, kSize> rw1c_{};
  std::array<std::uint8_t, kSize> preserve_{};
};

/// The identity fields of a type-0 header.
struct Type0HeaderSpec {
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint8_t revision_id = 0;
  std::uint32_t class_code = 0;  // 24 bits: base class[23:16], subclass[15:8], prog-if[7:0]
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_id = 0;
};

/// Writes a type-0 header: IDs, Command (Memory Space, Bus Master, Parity Error Response,
/// SERR# Enable and Interrupt Disable RW; I/O Space RO 0: no I/O BARs), Status (Capabilities
/// List RO 0 until a capability is added; the error bits RW1C), Cache Line Size RW, Header
/// Type 0 (single-function), Capabilities Pointer 0. BARs are left for bar.hpp to install.
/// `memory_space_writable` = false makes Memory Space Enable RO 0 (SR-IOV VFs).
void build_type0_header(ConfigSpace& cs, const Type0HeaderSpec& spec, bool memory_space_writable = true);

/// Lays out capabilities one after another: standard ones from 0x40 chained through the
/// Capabilities Pointer and each one's next pointer (the first add() sets Status.Capabilities
/// List), extended ones from 0x100 chained through 12-bit next offsets. Each add writes the
/// capability's header (ID/next, or ID/version/next) and returns its offset; the caller
/// defines the body registers. Running out of room is a std::invalid_argument.
class CapabilityListBuilder {
 public:
  explicit CapabilityListBuilder(ConfigSpace& cs) : cs_(&cs) {}
  /// `length` in bytes including the 2-byte header; allocated dword-aligned below 0x100.
  std::uint16_t add(std::uint8_t id, unsigned length);
  /// `length` in bytes including the 4-byte header; allocated dword-aligned below 0x1000.
  std::uint16_t add_extended(std::uint16_t id, std::uint8_t version, unsigned length);

 private:
  ConfigSpace* cs_;
  std::uint16_t next_std_ = cfg::kFirstCapability;
  std::uint16_t last_std_ = 0;
  std::uint16_t next_ext_ = cfg::kFirstExtCapability;
  std::uint16_t last_ext_ = 0;
};

}  // namespace sohusim::pcie
