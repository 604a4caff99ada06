// sohusim/pcie/sriov.hpp — the Single Root I/O Virtualization extended capability (ID 0x0010).
//
// What it models. PCIe Base Spec 9.3.3 (SR-IOV Extended Capability), 64 bytes; offsets as in
// the spec and Linux's include/uapi/linux/pci_regs.h (PCI_SRIOV_*):
//   +0x04 SR-IOV Capabilities        RO 0 (no VF Migration)
//   +0x08 SR-IOV Control (16 bits)   VF Enable bit 0, VF MSE bit 3, ARI Capable Hierarchy
//                                    bit 4: RW; VF Migration bits RO 0
//   +0x0A SR-IOV Status              RO 0
//   +0x0C InitialVFs, +0x0E TotalVFs RO (InitialVFs = TotalVFs: no migration)
//   +0x10 NumVFs                     RW, see below
//   +0x12 Function Dependency Link   RO: the PF's function number
//   +0x14 First VF Offset, +0x16 VF Stride   RO (constant: they do not depend on NumVFs/ARI)
//   +0x1A VF Device ID               RO
//   +0x1C Supported Page Sizes       RO (bit n = page size 2^(n+12))
//   +0x20 System Page Size           RW on the supported bits; 4 KiB (bit 0) at reset
//   +0x24 VF BAR0..5                 sized like BARs (bar.hpp); the size is per VF
//   +0x3C VF Migration State Array Offset RO 0
//
// VF routing IDs (9.3.3.10/11): VF i (0-based) = PF RID + First VF Offset + i * VF Stride.
// VF BAR windows (9.3.3.14): VF i's window of VF BAR b is [base_b + i * size_b, + size_b).
//
// NumVFs policy (the spec leaves it undefined): a write above TotalVFs is ignored (NumVFs
// keeps its value, so software can detect it by reading back), and NumVFs is frozen while
// VF Enable is set, as software must not change it then. VF BAR sizes must be at least 4 KiB
// (the smallest System Page Size).
//
// Creating and removing the VF functions themselves is PhysicalFunction's job
// (pcie_function.hpp); this class only holds the registers and the arithmetic.
//
// Simplifications: no VF Migration, no VF Resizable BARs, First VF Offset and Stride fixed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sohusim/pcie/bar.hpp"
#include "sohusim/pcie/config_space.hpp"
#include "sohusim/pcie/msix.hpp"
#include "sohusim/pcie/requester_id.hpp"

namespace sohusim::pcie {

struct SriovSpec {
  std::uint16_t total_vfs = 0;        // >= 1
  std::uint16_t first_vf_offset = 1;  // routing-ID offset of VF 0 from the PF, >= 1
  std::uint16_t vf_stride = 1;        // routing-ID distance between VFs, >= 1 if total_vfs > 1
  std::uint16_t vf_device_id = 0;
  std::uint32_t supported_page_sizes = 0x553;  // 4K, 8K, 64K, 256K, 1M, 4M (a common choice)
  std::vector<BarSpec> vf_bars;                // per-VF sizes
  std::optional<MsixSpec> vf_msix;             // each VF's MSI-X, inside its VF BAR windows
};

/// A window [base, base + size) one VF owns in one of its BARs.
struct VfBarWindow {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
};

class Sriov {
 public:
  static constexpr unsigned kCapLength = 0x40;
  static constexpr std::uint16_t kCapabilities = 0x04;
  static constexpr std::uint16_t kControl = 0x08;
  static constexpr std::uint16_t kStatus = 0x0A;
  static constexpr std::uint16_t kInitialVfs = 0x0C;
  static constexpr std::uint16_t kTotalVfs = 0x0E;
  static constexpr std::uint16_t kNumVfs = 0x10;
  static constexpr std::uint16_t kFunctionDependencyLink = 0x12;
  static constexpr std::uint16_t kFirstVfOffset = 0x14;
  static constexpr std::uint16_t kVfStride = 0x16;
  static constexpr std::uint16_t kVfDeviceId = 0x1A;
  static constexpr std::uint16_t kSupportedPageSizes = 0x1C;
  static constexpr std::uint16_t kSystemPageSize = 0x20;
  static constexpr std::uint16_t kVfBar0 = 0x24;
  static constexpr std::uint16_t kVfMigrationState = 0x3C;
  // Control bits.
  static constexpr std::uint16_t kCtrlVfEnable = 1u << 0;
  static constexpr std::uint16_t kCtrlVfMse = 1u << 3;
  static constexpr std::uint16_t kCtrlAri = 1u << 4;

  /// Checks the spec, including that the last VF's routing ID fits in 16 bits given the PF's.
  /// Messages name the field ("sriov.total_vfs", "sriov.vf_bars: BAR 2", ...).
  static void validate(const SriovSpec& spec, RequesterId pf_rid);

  /// Defines the capability body at `cap_offset` (header written by the builder).
  Sriov(ConfigSpace& cs, std::uint16_t cap_offset, const SriovSpec& spec, unsigned pf_function_number);

  const SriovSpec& spec() const { return spec_; }
  std::uint16_t cap_offset() const { return cap_; }
  const BarSet& vf_bars() const { return vf_bars_; }

  bool vf_enable() const;
  bool vf_memory_enable() const;
  bool ari_capable_hierarchy() const;
  std::uint16_t num_vfs() const;
  std::uint16_t total_vfs() const { return spec_.total_vfs; }
  std::uint16_t first_vf_offset() const { return spec_.first_vf_offset; }
  std::uint16_t vf_stride() const { return spec_.vf_stride; }
  std::uint32_t system_page_size_bytes() const;

  /// Routing ID of VF `index` (0-based).
  RequesterId vf_rid(RequesterId pf_rid, unsigned index) const;
  /// VF `index`'s window in VF BAR `bar`, or nullopt if there is no such BAR.
  std::optional<VfBarWindow> vf_bar_window(unsigned bar, unsigned index) const;

  /// Register state that matters for VF creation, to compare before/after a config write.
  struct State {
    bool vf_enable = false;
    bool vf_mse = false;
    std::uint16_t num_vfs = 0;
    bool operator==(const State& o) const {
      return vf_enable == o.vf_enable && vf_mse == o.vf_mse && num_vfs == o.num_vfs;
    }
    bool operator!=(const State& o) const { return !(*this == o); }
  };
  State state() const;
  /// Enforces the NumVFs policy after a config write, given the state before it.
  void after_write(const State& before);

 private:
  ConfigSpace* cs_;
  std::uint16_t cap_;
  SriovSpec spec_;
  BarSet vf_bars_;
};

}  // namespace sohusim::pcie
