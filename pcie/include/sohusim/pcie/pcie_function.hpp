// sohusim/pcie/pcie_function.hpp — one PCIe endpoint function (physical or virtual), and the
// PhysicalFunction that owns a PF and the SR-IOV virtual functions it spawns.
//
// What it models. The software-visible state of a PCIe endpoint function (PCIe Base Spec 7.5,
// 7.7, 7.8, 9 (SR-IOV), 6.6.2 (FLR); PCI Bus Power Management Interface Spec 1.2), in plain
// C++ for the SystemC endpoint to wrap:
//   - a type-0 config space (config_space.hpp) with BARs (bar.hpp);
//   - capabilities, laid out by CapabilityListBuilder: PM (0x01) at 0x40, PCI Express (0x10),
//     MSI-X (0x11) when the spec asks for it; extended: AER (0x0001) at 0x100, then SR-IOV
//     (0x0010) on a PF that has an SriovSpec;
//   - PM: PMCSR PowerState D0/D3hot (D1/D2 unsupported: writing them is ignored), with a
//     transition delay for each direction (defaults 10 ms, the PM spec's D3hot recovery time)
//     reported to the caller; No_Soft_Reset (default 1): if 0, D3hot->D0 resets the function's
//     state like an FLR. In D3hot the function decodes no memory and masters nothing;
//   - PCI Express capability (endpoint, version 2): Device Capabilities (Max_Payload_Size
//     Supported, Extended Tag, Role-Based Error Reporting, FLR capable), Device Control (error
//     reporting enables, MPS, MRRS, Initiate FLR; an MPS above the supported size or a
//     reserved MRRS encoding is ignored), Device Status (error-detected bits, RW1C), Link
//     Capabilities (max speed 1..6, width, ASPM support, L0s/L1 exit latency encodings), Link
//     Control (ASPM Control writable only for supported states, RCB, Common Clock, Extended
//     Synch), Link Status (current speed/width, set by the link through set_link_status()),
//     Link Capabilities 2 (supported speeds vector) and Link Control 2 (target speed);
//   - Function Level Reset: writing Initiate FLR (or calling function_level_reset()) returns
//     the config space to its reset values except the sticky AER registers and the link's
//     Control/Status (FLR must not disturb the link), masks and clears the MSI-X table,
//     returns to D0, calls the registered reset callback, and reports the FLR duration
//     (default 100 ms, the time software must wait per spec 6.6.2) for the caller to model.
//
// Virtual functions (SR-IOV spec 9.3.4, 9.3.5): created by PhysicalFunction when software sets
// NumVFs and then VF Enable in the PF's SR-IOV capability; removed when VF Enable is cleared
// (also by a PF FLR). VF i gets routing ID PF RID + First VF Offset + i * VF Stride, its own
// config space (Vendor/Device ID registers read 0xFFFF as the spec requires — vendor_id() and
// device_id() return the PF's vendor and the VF Device ID; no BAR registers: its BAR windows
// are the PF's VF BARs at base + i * size, enabled by the PF's VF MSE; Memory Space Enable in
// its Command register is RO 0), its own PCI Express capability (MPS is the PF's; ASPM/link
// fields read-only), its own MSI-X (per SriovSpec::vf_msix, in its VF BAR windows) and AER.
// VFs have no PM capability: they follow the PF's power state.
//
// Pointers to VFs become invalid when the VFs are removed; register a callback with
// PhysicalFunction::set_vfs_changed_callback() to hear about it.
//
// Times are in picoseconds (the simulator's resolution, see sim/sim_time.hpp).
//
// Not modelled: INTx and MSI (only MSI-X), I/O BARs, expansion ROM, Function Readiness
// Status, VF migration, ARI capability structure (the ARI Capable Hierarchy bit is stored),
// the 100 ms wait after setting VF Enable, D1/D2, PME generation, Bus Master Enable gating of
// MSI-X delivery (the caller checks bus_master_enabled()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sohusim/pcie/aer.hpp"
#include "sohusim/pcie/bar.hpp"
#include "sohusim/pcie/config_space.hpp"
#include "sohusim/pcie/msix.hpp"
#include "sohusim/pcie/requester_id.hpp"
#include "sohusim/pcie/sriov.hpp"

namespace sohusim::pcie {

inline constexpr std::uint64_t kPsPerMs = 1'000'000'000ull;

enum class PowerState : std::uint8_t { D0 = 0, D1 = 1, D2 = 2, D3hot = 3 };
const char* to_string(PowerState s);

enum class ResetKind { FunctionLevelReset, SoftReset /* D3hot->D0 with No_Soft_Reset clear */ };

struct PcieFunctionSpec {
  Type0HeaderSpec ids;           // vendor/device/revision/class/subsystem
  std::vector<BarSpec> bars;     // memory BARs
  std::optional<MsixSpec> msix;  // MSI-X vectors and the table/PBA placement in the BARs
  // PCI Express capability.
  unsigned max_payload_size = 256;  // Max_Payload_Size Supported, bytes: 128, 256, ... 4096
  unsigned link_speed_gen = 4;      // Max Link Speed: 1 (2.5 GT/s) .. 6 (64 GT/s)
  unsigned link_width = 16;         // Maximum Link Width: 1, 2, 4, 8, 12, 16 or 32
  unsigned aspm_support = 3;        // bit 0 L0s, bit 1 L1
  unsigned l0s_exit_latency = 3;    // encoding 0..7: 0 <64 ns, 1 64-128 ns, ... 6 2-4 us, 7 >4 us
  unsigned l1_exit_latency = 3;     // encoding 0..7: 0 <1 us, 1 1-2 us, ... 6 32-64 us, 7 >64 us
  // Power management.
  bool no_soft_reset = true;
  std::uint64_t d0_to_d3hot_delay_ps = 10 * kPsPerMs;
  std::uint64_t d3hot_to_d0_delay_ps = 10 * kPsPerMs;
  // Function Level Reset.
  bool flr_capable = true;
  std::uint64_t flr_duration_ps = 100 * kPsPerMs;
  // SR-IOV (PFs only).
  std::optional<SriovSpec> sriov;
};

/// Throws std::invalid_argument naming the offending field. `rid` is needed to check that all
/// VFs' routing IDs fit.
void validate(const PcieFunctionSpec& spec, RequesterId rid);

/// Side effects of a configuration write the caller must act on.
struct ConfigWriteResult {
  std::vector<MsixMessage> msix_messages;  // pending vectors now unmasked: send these
  bool flr = false;                        // the write initiated a Function Level Reset
  bool power_state_changed = false;
  std::uint64_t busy_ps = 0;  // time until the function may be accessed again (FLR, D-state change)
};

class PhysicalFunction;

class PcieFunction {
 public:
  using ResetCallback = std::function<void(PcieFunction&, ResetKind)>;

  /// A physical (or ordinary) function. Validates `spec`.
  PcieFunction(RequesterId rid, const PcieFunctionSpec& spec);
  PcieFunction(const PcieFunction&) = delete;
  PcieFunction& operator=(const PcieFunction&) = delete;
  ~PcieFunction();

  RequesterId rid() const { return rid_; }
  bool is_virtual() const { return pf_ != nullptr; }
  unsigned vf_index() const { return vf_index_; }
  /// The PF of a VF; nullptr for a PF.
  const PcieFunction* parent() const { return pf_; }
  std::uint16_t vendor_id() const;
  std::uint16_t device_id() const;
  const PcieFunctionSpec& spec() const { return spec_; }

  // ---- Configuration space ----
  ConfigSpace& config() { return cs_; }
  const ConfigSpace& config() const { return cs_; }
  /// Same rules as ConfigSpace::read (std::invalid_argument on a bad offset/size).
  std::uint32_t config_read(std::uint32_t offset, unsigned size) const { return cs_.read(offset, size); }
  /// A configuration write from software, with all its side effects.
  ConfigWriteResult config_write(std::uint32_t offset, unsigned size, std::uint32_t value);

  std::uint16_t pm_cap_offset() const { return pm_cap_; }  // 0 on a VF
  std::uint16_t pcie_cap_offset() const { return pcie_cap_; }

  // ---- What the link and the endpoint use ----
  unsigned mps_bytes() const;   // Device Control Max_Payload_Size (a VF's is its PF's)
  unsigned mrrs_bytes() const;  // Device Control Max_Read_Request_Size
  bool bus_master_enabled() const;
  bool memory_enabled() const;  // Memory Space Enable (VF: the PF's VF MSE) and in D0
  PowerState power_state() const;
  unsigned aspm_control() const;  // Link Control ASPM Control: bit 0 L0s, bit 1 L1
  /// The BAR and offset `addr` hits, only with memory decoding enabled.
  std::optional<BarHit> decode(std::uint64_t addr) const;
  /// The programmed window of BAR `bar` ({0, 0} if there is none or it is unassigned).
  VfBarWindow bar_window(unsigned bar) const;
  /// The link reports the trained speed (1..6) and width into Link Status.
  void set_link_status(unsigned speed_gen, unsigned width);

  Msix* msix() { return msix_.get(); }
  const Msix* msix() const { return msix_.get(); }
  Aer& aer() { return *aer_; }
  const Aer& aer() const { return *aer_; }
  Sriov* sriov() { return sriov_.get(); }
  const Sriov* sriov() const { return sriov_.get(); }

  // ---- Reset ----
  /// Performs an FLR now; returns its duration (spec_.flr_duration_ps).
  std::uint64_t function_level_reset();
  void set_reset_callback(ResetCallback cb) { reset_cb_ = std::move(cb); }
  unsigned flr_count() const { return flr_count_; }

 private:
  friend class PhysicalFunction;
  // A VF of `pf`.
  PcieFunction(const PcieFunction& pf, unsigned vf_index, RequesterId rid);
  void build();
  void reset_state(ResetKind kind);
  void notify_sriov_if_changed(const Sriov::State& before);

  RequesterId rid_;
  PcieFunctionSpec spec_;
  const PcieFunction* pf_ = nullptr;
  unsigned vf_index_ = 0;
  ConfigSpace cs_;
  BarSet bars_;
  std::uint16_t pm_cap_ = 0;
  std::uint16_t pcie_cap_ = 0;
  std::unique_ptr<Msix> msix_;
  std::unique_ptr<Aer> aer_;
  std::unique_ptr<Sriov> sriov_;
  ResetCallback reset_cb_;
  std::function<void()> sriov_changed_;  // set by PhysicalFunction
  unsigned flr_count_ = 0;
};

/// A PF and its VFs. Owns the PF; creates VF i when software has set NumVFs and VF Enable,
/// removes them all when VF Enable is cleared (a change of NumVFs takes effect at the next
/// enable, as NumVFs is frozen while VFs are enabled). functions() lists the PF first, then
/// the VFs in order. Not copyable or movable (the PF calls back into it).
class PhysicalFunction {
 public:
  struct Hit {
    PcieFunction* function = nullptr;
    unsigned bar = 0;
    std::uint64_t offset = 0;
  };
  using VfsChangedCallback = std::function<void(PhysicalFunction&)>;

  PhysicalFunction(RequesterId rid, const PcieFunctionSpec& spec);
  PhysicalFunction(const PhysicalFunction&) = delete;
  PhysicalFunction& operator=(const PhysicalFunction&) = delete;
  ~PhysicalFunction();

  PcieFunction& pf() { return *pf_; }
  const PcieFunction& pf() const { return *pf_; }
  std::size_t num_vfs() const { return vfs_.size(); }
  /// VF `index` (0-based) or nullptr.
  PcieFunction* vf(std::size_t index);
  std::vector<PcieFunction*> functions();
  PcieFunction* find_by_rid(RequesterId rid);
  /// Which function, BAR and offset `addr` hits (PF BARs with the PF's Memory Space Enable,
  /// VF windows with VF MSE); nullopt if none.
  std::optional<Hit> decode(std::uint64_t addr);

  /// The link trained: updates Link Status of the PF and every VF (new VFs copy the PF's).
  void set_link_status(unsigned speed_gen, unsigned width);

  /// Called after VFs were created or removed.
  void set_vfs_changed_callback(VfsChangedCallback cb) { vfs_changed_ = std::move(cb); }

 private:
  void sync_vfs();
  std::unique_ptr<PcieFunction> pf_;
  std::vector<std::unique_ptr<PcieFunction>> vfs_;
  VfsChangedCallback vfs_changed_;
};

}  // namespace sohusim::pcie
