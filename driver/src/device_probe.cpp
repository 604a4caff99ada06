// driver::Device (device.hpp): probe() — the function's IDs, register-interface version,
// BARs, capabilities, MSI-X and controller capabilities, read through PCI configuration
// space and BAR0 — and sriov_enable(), which sets up the PF's virtual functions.
#include <algorithm>
#include <stdexcept>

#include "device_detail.hpp"
#include "sohusim/driver/device.hpp"

namespace sohusim::driver {

using detail::hex;
using detail::rid_text;

namespace {

// ---- PCI configuration space (PCIe Base Spec 7.5.1, 7.7.2, 9.3.3; Linux pci_regs.h) ------
// driver/ may not include pcie/, and a driver on silicon has only the spec: the handful of
// offsets it needs are spelled out here.
constexpr std::uint16_t kCfgId = 0x00;       // vendor [15:0], device [31:16]
constexpr std::uint16_t kCfgCommand = 0x04;  // command [15:0], status [31:16] (error bits RW1C)
constexpr std::uint16_t kCfgBar0 = 0x10;     // BAR n at 0x10 + 4n
constexpr std::uint16_t kCfgCapPtr = 0x34;
constexpr std::uint32_t kCmdMemorySpace = 1u << 1;
constexpr std::uint32_t kCmdBusMaster = 1u << 2;
constexpr std::uint32_t kStatusCapList = 1u << (16 + 4);  // Status.Capabilities List, seen in the dword
constexpr std::uint8_t kCapIdMsix = 0x11;
constexpr std::uint16_t kFirstStdCap = 0x40;
constexpr std::uint16_t kFirstExtCap = 0x100;
// Loop bounds of the capability walks: more entries than fit in the space means the list
// loops or is garbage, so a corrupt list ends the walk instead of hanging the host.
constexpr unsigned kMaxStdCaps = (0x100 - kFirstStdCap) / 4;
constexpr unsigned kMaxExtCaps = (0x1000 - kFirstExtCap) / 4;
constexpr std::uint16_t kExtCapIdSriov = 0x0010;
// SR-IOV capability registers, offsets from the capability.
constexpr std::uint16_t kSriovControl = 0x08;       // control [15:0], status [31:16] (RO)
constexpr std::uint16_t kSriovInitialTotal = 0x0C;  // InitialVFs [15:0], TotalVFs [31:16]
constexpr std::uint16_t kSriovNumVfs = 0x10;        // NumVFs [15:0], Function Dependency Link (RO)
constexpr std::uint16_t kSriovOffsetStride = 0x14;  // First VF Offset [15:0], VF Stride [31:16]
constexpr std::uint32_t kSriovVfEnable = 1u << 0;
constexpr std::uint32_t kSriovVfMse = 1u << 3;

constexpr auto kSohuVendor = static_cast<std::uint16_t>(SOHU_GET(SOHU_ID_RESET, SOHU_ID_VENDOR));
constexpr auto kSohuDevice = static_cast<std::uint16_t>(SOHU_GET(SOHU_ID_RESET, SOHU_ID_DEVICE));
// A VF's Device ID (the PF's SR-IOV capability, VF Device ID): the PF's + 1. Its BAR0 ID
// register reads the same pair, VF Device ID << 16 | vendor.
constexpr auto kSohuVfDevice = static_cast<std::uint16_t>(kSohuDevice + 1);
// The driver speaks the register interface of the header it was compiled with.
constexpr auto kSupportedMajor = static_cast<unsigned>(SOHU_GET(SOHU_VERSION_RESET, SOHU_VERSION_MAJOR));

/// Sizes BAR `index` the way enumeration software does: save, write all ones, read back
/// the mask, restore. A 64-bit BAR is two dwords; above 4 GiB its low dword reads back 0.
BarInfo size_bar(DeviceAccess& a, std::uint16_t rid, unsigned index) {
  const auto off = static_cast<std::uint16_t>(kCfgBar0 + 4 * index);
  const std::uint32_t lo = a.config_read32(rid, off);
  BarInfo b;
  if ((lo & 1u) != 0) return b;  // an I/O BAR: this device has none
  b.is_64bit = ((lo >> 1) & 3u) == 2u;
  b.prefetchable = (lo & 8u) != 0;
  const std::uint32_t hi = b.is_64bit ? a.config_read32(rid, static_cast<std::uint16_t>(off + 4)) : 0;
  a.config_write32(rid, off, 0xFFFFFFFFu);
  if (b.is_64bit) a.config_write32(rid, static_cast<std::uint16_t>(off + 4), 0xFFFFFFFFu);
  const std::uint32_t lo_mask = a.config_read32(rid, off) & ~0xFu;
  const std::uint32_t hi_mask = b.is_64bit ? a.config_read32(rid, static_cast<std::uint16_t>(off + 4)) : 0xFFFFFFFFu;
  a.config_write32(rid, off, lo);
  if (b.is_64bit) a.config_write32(rid, static_cast<std::uint16_t>(off + 4), hi);
  if (lo_mask == 0 && (!b.is_64bit || hi_mask == 0)) return BarInfo{};  // not implemented
  const std::uint64_t mask = (static_cast<std::uint64_t>(hi_mask) << 32) | lo_mask;
  b.size = ~mask + 1;
  b.address = (static_cast<std::uint64_t>(hi) << 32) | (lo & ~0xFu);
  return b;
}

}  // namespace

// ---- probe --------------------------------------------------------------------------------

const DeviceInfo& Device::probe(unsigned msix_vectors) {
  access_.spend_ns(costs_.admin_ns);  // the driver's own bookkeeping; config accesses cost themselves
  info_ = DeviceInfo{};
  info_.rid = rid_;
  probed_ = enabled_ = false;
  msix_cap_ = sriov_cap_ = 0;
  std::optional<PciFunction> listed;
  for (const PciFunction& f : access_.functions()) {
    if (f.rid == rid_) listed = f;
  }
  if (listed) info_.name = listed->name;
  const bool vf = listed && listed->virtual_function;
  info_.virtual_function = vf;
  info_.physical_rid = listed ? listed->physical_rid : rid_;

  // A VF's header reads 0xFFFF for both IDs (SR-IOV spec 9.3.4.1): its IDs are the PF's
  // vendor and the VF Device ID of the PF's SR-IOV capability, which the platform lists (as
  // sysfs does on Linux).
  const std::uint32_t id = vf ? (static_cast<std::uint32_t>(listed->device_id) << 16) | listed->vendor_id
                              : access_.config_read32(rid_, kCfgId);
  info_.vendor_id = static_cast<std::uint16_t>(id & 0xFFFF);
  info_.device_id = static_cast<std::uint16_t>(id >> 16);
  if (!listed && id == 0xFFFFFFFFu) {
    throw ProbeError(label() +
                     ": no function answers (its ID dword reads 0xFFFFFFFF) and the platform does not list it; a VF "
                     "exists only while its PF's SR-IOV VF Enable is set");
  }
  const std::uint16_t expected_device = vf ? kSohuVfDevice : kSohuDevice;
  if (info_.vendor_id != kSohuVendor || info_.device_id != expected_device) {
    char b[200];
    std::snprintf(b, sizeof b, ": vendor 0x%04X device 0x%04X is not a Sohu %s (expected vendor 0x%04X device 0x%04X)",
                  info_.vendor_id, info_.device_id, vf ? "virtual function" : "device", kSohuVendor, expected_device);
    throw ProbeError(label() + b);
  }

  const std::uint32_t command = access_.config_read32(rid_, kCfgCommand) & 0xFFFFu;
  if (vf) {
    // A VF's header BARs are RO 0: its BARs are slices of the PF's VF BARs, which only the
    // PF's SR-IOV capability sizes, so the platform's placement is the one there is (VFIO's
    // region info on Linux). A VF has no BAR2: info_.bar2 stays empty. Its Memory Space
    // Enable is RO 0 (the PF's VF MSE decodes its windows); Bus Master Enable is its own.
    access_.config_write32(rid_, kCfgCommand, command | kCmdBusMaster);
    const BarInfo bar0 = access_.bar(rid_, 0);
    if (bar0.size == 0 || bar0.address == 0) {
      throw ProbeError(label() +
                       ": the platform reports no BAR0 window for this VF (its PF's SR-IOV VF BAR0 is "
                       "not placed)");
    }
    info_.bar0 = bar0;
  } else {
    // Memory decoding off while the BARs are sized: a BAR briefly holding all ones must not
    // claim addresses that belong to something else. The status half is written 0 because
    // its error bits are write-1-to-clear.
    access_.config_write32(rid_, kCfgCommand, command & ~kCmdMemorySpace);
    const BarInfo bar0 = size_bar(access_, rid_, 0);
    const BarInfo bar2 = size_bar(access_, rid_, 2);
    access_.config_write32(rid_, kCfgCommand, command | kCmdMemorySpace | kCmdBusMaster);
    const std::pair<unsigned, const BarInfo*> bars[] = {{0u, &bar0}, {2u, &bar2}};
    for (const auto& [index, sized] : bars) {
      const BarInfo placed = access_.bar(rid_, index);
      const std::string name = "BAR" + std::to_string(index);
      if (sized->size == 0) throw ProbeError(label() + ": " + name + " is not implemented (sizing read back 0)");
      if (placed.size != sized->size) {
        throw ProbeError(label() + ": " + name + " sizes to " + std::to_string(sized->size) +
                         " bytes in config space but the platform reports " + std::to_string(placed.size));
      }
      if (sized->address == 0 || placed.address != sized->address) {
        throw ProbeError(label() + ": " + name + " is at " + hex(sized->address) +
                         " in config space, the platform says " + hex(placed.address) +
                         " (unassigned, or enumeration and platform disagree)");
      }
    }
    info_.bar0 = bar0;
    info_.bar2 = bar2;
  }
  if (info_.bar0.size < SOHU_BAR0_SIZE) {
    throw ProbeError(label() + ": BAR0 is " + std::to_string(info_.bar0.size) + " bytes; the register map needs " +
                     std::to_string(SOHU_BAR0_SIZE));
  }

  // Standard capability list, from the Capabilities Pointer.
  const std::uint32_t command_status = access_.config_read32(rid_, kCfgCommand);
  if ((command_status & kStatusCapList) != 0) {
    auto ptr = static_cast<std::uint16_t>(access_.config_read32(rid_, kCfgCapPtr) & 0xFCu);
    std::vector<std::uint16_t> seen;
    for (unsigned n = 0; ptr >= kFirstStdCap && n < kMaxStdCaps; ++n) {
      if (std::find(seen.begin(), seen.end(), ptr) != seen.end()) break;  // a loop
      seen.push_back(ptr);
      const std::uint32_t h = access_.config_read32(rid_, ptr);
      const auto cap = static_cast<std::uint8_t>(h & 0xFF);
      info_.capabilities.push_back(cap);
      if (cap == kCapIdMsix && msix_cap_ == 0) {
        msix_cap_ = ptr;
        info_.msix_vectors = ((h >> 16) & 0x7FFu) + 1;  // Message Control: Table Size is N - 1
      }
      ptr = static_cast<std::uint16_t>((h >> 8) & 0xFCu);
    }
  }
  // Extended capabilities, from 0x100: ID [15:0], version [19:16], next [31:20].
  {
    std::uint16_t ptr = kFirstExtCap;
    std::vector<std::uint16_t> seen;
    for (unsigned n = 0; ptr >= kFirstExtCap && n < kMaxExtCaps; ++n) {
      if (std::find(seen.begin(), seen.end(), ptr) != seen.end()) break;
      seen.push_back(ptr);
      const std::uint32_t h = access_.config_read32(rid_, ptr);
      if (h == 0 || h == 0xFFFFFFFFu) break;  // no extended capabilities
      const auto cap = static_cast<std::uint16_t>(h & 0xFFFF);
      info_.ext_capabilities.push_back(cap);
      if (cap == kExtCapIdSriov && sriov_cap_ == 0) {
        sriov_cap_ = ptr;
        info_.sriov_total_vfs = access_.config_read32(rid_, static_cast<std::uint16_t>(ptr + kSriovInitialTotal)) >> 16;
      }
      ptr = static_cast<std::uint16_t>((h >> 20) & 0xFFCu);
    }
  }
  if (msix_cap_ == 0) {
    throw ProbeError(label() + ": no MSI-X capability in the capability list (" +
                     std::to_string(info_.capabilities.size()) + " capabilities found); the driver needs MSI-X");
  }
  info_.msix_vectors = std::max(1u, std::min(msix_vectors, info_.msix_vectors));
  access_.enable_msix(rid_, info_.msix_vectors);

  // Identification registers (BAR0 is decoded now).
  const std::uint32_t ident = read32(SOHU_ID);
  if (ident != id) {
    throw ProbeError(label() + ": BAR0 ID register reads " + hex(ident) +
                     (vf ? ", the VF's IDs (PF vendor, VF Device ID) are " : ", config space says ") + hex(id) +
                     (vf ? ": BAR0 is not this VF's register window" : ": BAR0 is not this device's register window"));
  }
  const std::uint32_t version = read32(SOHU_VERSION);
  info_.version_major = static_cast<unsigned>(SOHU_GET(version, SOHU_VERSION_MAJOR));
  info_.version_minor = static_cast<unsigned>(SOHU_GET(version, SOHU_VERSION_MINOR));
  info_.version_patch = static_cast<unsigned>(SOHU_GET(version, SOHU_VERSION_PATCH));
  if (info_.version_major != kSupportedMajor) {
    throw ProbeError(label() + ": register interface version " + std::to_string(info_.version_major) + "." +
                     std::to_string(info_.version_minor) + "." + std::to_string(info_.version_patch) +
                     "; this driver supports major version " + std::to_string(kSupportedMajor));
  }
  const std::uint32_t cap0 = read32(SOHU_CAP0);
  info_.max_queues = static_cast<unsigned>(SOHU_GET(cap0, SOHU_CAP0_MQP));
  info_.max_queue_entries = static_cast<unsigned>(SOHU_GET(cap0, SOHU_CAP0_MQES)) + 1;
  info_.doorbell_stride = 1u << SOHU_GET(cap0, SOHU_CAP0_DSTRD);
  const std::uint32_t cap1 = read32(SOHU_CAP1);
  info_.matrix_engines = static_cast<unsigned>(SOHU_GET(cap1, SOHU_CAP1_ME));
  info_.vector_engines = static_cast<unsigned>(SOHU_GET(cap1, SOHU_CAP1_VE));
  info_.dma_channels = static_cast<unsigned>(SOHU_GET(cap1, SOHU_CAP1_DMA));
  info_.c2c_ports = static_cast<unsigned>(SOHU_GET(cap1, SOHU_CAP1_C2C));
  info_.hbm_bytes = read64(SOHU_HBM_SIZE);
  info_.sram_bytes = read64(SOHU_SRAM_SIZE);
  info_.clock_mhz = read32(SOHU_CLOCK_MHZ);
  const std::uint64_t last_doorbell = cq_doorbell(static_cast<std::uint16_t>(info_.max_queues)) + 4ull;
  if (last_doorbell > info_.bar0.size) {
    throw ProbeError(label() + ": " + std::to_string(info_.max_queues) + " queue pairs with a doorbell stride of " +
                     std::to_string(info_.doorbell_stride) + " bytes do not fit in BAR0 (" +
                     std::to_string(info_.bar0.size) + " bytes)");
  }
  if (!vf && info_.bar2.size < info_.hbm_bytes) {
    throw ProbeError(label() + ": BAR2 (" + std::to_string(info_.bar2.size) + " bytes) is smaller than HBM_SIZE (" +
                     std::to_string(info_.hbm_bytes) + " bytes)");
  }
  probed_ = true;
  return info_;
}

// ---- SR-IOV ---------------------------------------------------------------------------------------

std::vector<std::uint16_t> Device::sriov_enable(unsigned num_vfs) {
  if (!probed_) throw DriverError(label() + ": sriov_enable() before probe()");
  if (info_.virtual_function) {
    throw DriverError(label() + ": sriov_enable: a VF has no SR-IOV capability; its PF (" +
                      rid_text(info_.physical_rid) + ") enables the VFs");
  }
  if (sriov_cap_ == 0) throw DriverError(label() + ": sriov_enable: the function has no SR-IOV capability");
  if (num_vfs > info_.sriov_total_vfs) {
    throw std::invalid_argument(label() + ": sriov_enable: " + std::to_string(num_vfs) + " VFs (TotalVFs is " +
                                std::to_string(info_.sriov_total_vfs) + ")");
  }
  access_.spend_ns(costs_.admin_ns);
  const auto ctl_off = static_cast<std::uint16_t>(sriov_cap_ + kSriovControl);
  std::uint32_t ctl = access_.config_read32(rid_, ctl_off) & 0xFFFFu;  // status half is read-only
  if ((ctl & (kSriovVfEnable | kSriovVfMse)) != 0) {
    // NumVFs may only change while VF Enable is clear.
    ctl &= ~(kSriovVfEnable | kSriovVfMse);
    access_.config_write32(rid_, ctl_off, ctl);
  }
  if (num_vfs == 0) return {};
  const auto num_off = static_cast<std::uint16_t>(sriov_cap_ + kSriovNumVfs);
  access_.config_write32(rid_, num_off, num_vfs);
  const std::uint32_t readback = access_.config_read32(rid_, num_off) & 0xFFFFu;
  if (readback != num_vfs) {
    throw DriverError(label() + ": sriov_enable: NumVFs reads back " + std::to_string(readback) + " after writing " +
                      std::to_string(num_vfs) + " (TotalVFs " + std::to_string(info_.sriov_total_vfs) + ")");
  }
  // First VF Offset and VF Stride may depend on NumVFs: read them after setting it.
  const std::uint32_t os = access_.config_read32(rid_, static_cast<std::uint16_t>(sriov_cap_ + kSriovOffsetStride));
  const std::uint32_t offset = os & 0xFFFFu, stride = os >> 16;
  access_.config_write32(rid_, ctl_off, ctl | kSriovVfEnable | kSriovVfMse);
  std::vector<std::uint16_t> rids;
  rids.reserve(num_vfs);
  for (unsigned i = 0; i < num_vfs; ++i) {
    const std::uint32_t r = rid_ + offset + i * stride;
    if (r > 0xFFFFu) {
      throw DriverError(label() + ": sriov_enable: VF " + std::to_string(i) + " would have routing id " + hex(r) +
                        " (First VF Offset " + std::to_string(offset) + ", VF Stride " + std::to_string(stride) + ")");
    }
    rids.push_back(static_cast<std::uint16_t>(r));
  }
  return rids;
}

}  // namespace sohusim::driver
