#include "sohusim/platform/sim_device_access.hpp"

#include <sstream>
#include <string>

#include <systemc>

#include "sohusim/driver/errors.hpp"
#include "sohusim/pcie/config_space.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
#include "sohusim/pcie/requester_id.hpp"
#include "sohusim/pcie/sriov.hpp"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::platform {

namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

constexpr std::uint16_t kCommand = 0x04;
constexpr std::uint32_t kMemorySpace = 0x2;
constexpr std::uint8_t kCapMsix = 0x11;
// The SR-IOV capability's registers are pcie::Sriov's offsets (PCIe Base Spec 9.3.3), read
// here as the dwords that hold them (configuration reads are dwords).
constexpr std::uint16_t dword_of(std::uint16_t offset) {
  return static_cast<std::uint16_t>(offset & ~3u);
}

// The standard capability list from 0x34; 0 if `id` is absent. Bounded: a corrupt list
// cannot loop.
unsigned find_capability(host::CpuAgent& cpu, std::uint16_t rid, std::uint8_t id) {
  unsigned p = cpu.cfg_read(rid, 0x34) & 0xFCu;
  for (int guard = 0; p != 0 && guard < 48; ++guard) {
    const std::uint32_t h = cpu.cfg_read(rid, p);
    if ((h & 0xFFu) == id) return p;
    p = (h >> 8) & 0xFCu;
  }
  return 0;
}

// The extended capability list from 0x100 (ID [15:0], next [31:20]); 0 if `id` is absent.
std::uint16_t find_ext_capability(host::CpuAgent& cpu, std::uint16_t rid, std::uint16_t id) {
  for (unsigned p = 0x100, guard = 0; p >= 0x100 && p < 0x1000 && guard < 64; ++guard) {
    const std::uint32_t h = cpu.cfg_read(rid, p);
    if (h == 0 || h == 0xFFFF'FFFFu) return 0;
    if ((h & 0xFFFFu) == id) return static_cast<std::uint16_t>(p);
    p = (h >> 20) & 0xFFCu;
  }
  return 0;
}

// A memory BAR (a header BAR, or a VF BAR of the SR-IOV capability) as sizing found it.
struct SizedBar {
  std::uint32_t orig = 0;      // the low dword before sizing
  std::uint32_t readback = 0;  // the low dword after writing all ones
  bool io = false;             // an I/O BAR: not sized (this device has none)
  bool is64 = false, prefetchable = false;
  std::uint64_t size = 0;  // 0: not implemented
};

// Sizes the BAR at config offset `reg` the way enumeration software does: write all ones
// (both dwords of a 64-bit BAR) and read the mask back. The BAR holds the ones afterwards:
// the caller programs an address or calls restore().
SizedBar size_bar(host::CpuAgent& cpu, std::uint16_t rid, unsigned reg) {
  SizedBar b;
  b.orig = cpu.cfg_read(rid, reg);
  if ((b.orig & 1u) != 0) {
    b.io = true;
    return b;
  }
  b.is64 = ((b.orig >> 1) & 3u) == 2u;
  b.prefetchable = ((b.orig >> 3) & 1u) != 0;
  cpu.cfg_write(rid, reg, 0xFFFF'FFFFu);
  b.readback = cpu.cfg_read(rid, reg);
  std::uint64_t mask = b.readback & ~0xFULL;
  if (b.is64) {
    cpu.cfg_write(rid, reg + 4, 0xFFFF'FFFFu);
    mask |= static_cast<std::uint64_t>(cpu.cfg_read(rid, reg + 4)) << 32;
  } else if (mask != 0) {
    mask |= 0xFFFF'FFFF'0000'0000ULL;  // a 32-bit BAR: the upper half is implied
  }
  b.size = mask == 0 ? 0 : (~mask + 1);
  return b;
}

void program_bar(host::CpuAgent& cpu, std::uint16_t rid, unsigned reg, const SizedBar& b, std::uint64_t base) {
  cpu.cfg_write(rid, reg, static_cast<std::uint32_t>(base));
  if (b.is64) cpu.cfg_write(rid, reg + 4, static_cast<std::uint32_t>(base >> 32));
}

// Puts an unimplemented BAR's low dword back (nothing to write if it ignored the ones).
void restore_bar(host::CpuAgent& cpu, std::uint16_t rid, unsigned reg, const SizedBar& b) {
  if (b.readback != b.orig) cpu.cfg_write(rid, reg, b.orig);
}

}  // namespace

std::uint32_t SimDeviceAccess::host_vector(std::uint16_t rid, unsigned v) {
  return static_cast<std::uint32_t>(rid - platform::HostSystem::device_rid(0)) * kVectorsPerFunction + v;
}

unsigned SimDeviceAccess::slot_of(std::uint16_t rid, const char* call) const {
  // A PF is on bus slot + 1; its VFs share the bus (functions 1..7).
  const unsigned bus = rid >> 8;
  const int s = bus >= 1 && bus <= host_.device_count() ? static_cast<int>(bus - 1) : -1;
  if (s < 0) {
    throw driver::AccessError(std::string(call) + ": no function " + hex(rid) + " on host `" + host_.name() +
                              "` (its devices are on buses 1.." + std::to_string(host_.device_count()) + ")");
  }
  return static_cast<unsigned>(s);
}

void SimDeviceAccess::enumerate() {
  if (enumerated_) return;
  enumerated_ = true;
  // What firmware and the OS do before any driver runs: size each BAR (write all ones, read
  // the mask back) and place it in the window the host decodes for that root port.
  host::CpuAgent& cpu = host_.cpu();
  sriov_.assign(host_.device_count(), Sriov{});
  for (unsigned i = 0; i < host_.device_count(); ++i) {
    const std::uint16_t rid = platform::HostSystem::device_rid(i);
    const std::string device = "enumeration: host `" + host_.name() + "` device " + std::to_string(i);
    Bars b;
    for (unsigned bar = 0; bar < 6; ++bar) {
      const unsigned reg = 0x10 + 4 * bar;
      const SizedBar sized = size_bar(cpu, rid, reg);
      if (sized.io) continue;  // I/O BARs: none on this device
      if (sized.size != 0) {
        // BAR0 and BAR2 are the device's; anything else would need a window of its own.
        const std::uint64_t base = bar == 0   ? platform::HostSystem::bar0_address(i)
                                   : bar == 2 ? platform::HostSystem::bar2_address(i)
                                              : 0;
        const std::uint64_t window = bar == 0   ? platform::HostSystem::kBar0Stride
                                     : bar == 2 ? platform::HostSystem::kBar2Stride
                                                : 0;
        if (base == 0 || sized.size > window) {
          throw driver::AccessError(device + " BAR" + std::to_string(bar) + " of " + std::to_string(sized.size) +
                                    " bytes has no window (BAR0 up to " +
                                    std::to_string(platform::HostSystem::kBar0Stride) + ", BAR2 up to " +
                                    std::to_string(platform::HostSystem::kBar2Stride) + " bytes)");
        }
        program_bar(cpu, rid, reg, sized, base);
        b.bar[bar] = driver::BarInfo{base, sized.size, sized.is64, sized.prefetchable};
      } else {
        restore_bar(cpu, rid, reg, sized);
      }
      if (sized.is64) ++bar;
    }
    bars_[rid] = b;

    // SR-IOV: the VF BARs are sized per VF and placed as one region (VF n's window at base +
    // n x size), the way Linux assigns a PF's IOV resources. VF BAR0 (the VFs' register
    // pages) goes to the upper half of the device's BAR0 window, above the PF's BAR0.
    Sriov& sr = sriov_[i];
    sr.cap = find_ext_capability(cpu, rid, pcie::cfg::kExtCapIdSriov);
    if (sr.cap == 0) continue;
    sr.total_vfs = cpu.cfg_read(rid, sr.cap + dword_of(pcie::Sriov::kTotalVfs)) >> 16;
    for (unsigned bar = 0; bar < 6; ++bar) {
      const unsigned reg = sr.cap + pcie::Sriov::kVfBar0 + 4 * bar;
      const SizedBar sized = size_bar(cpu, rid, reg);
      if (sized.io) continue;
      if (sized.size != 0 && sr.total_vfs != 0) {
        const std::uint64_t base = platform::HostSystem::vf_bar0_address(i);
        const std::uint64_t room = platform::HostSystem::kBar0Stride - platform::HostSystem::kVfBar0Offset;
        const std::string what = device + " SR-IOV VF BAR" + std::to_string(bar) + " (" + std::to_string(sized.size) +
                                 " bytes per VF, TotalVFs " + std::to_string(sr.total_vfs) + ")";
        if (bar != 0) {
          throw driver::AccessError(what +
                                    " has no window: only VF BAR0 is placed (in the upper half of BAR0's window)");
        }
        if (sized.size > room / sr.total_vfs || base % sized.size != 0) {
          throw driver::AccessError(what + " does not fit in the " + std::to_string(room) + " bytes at " + hex(base) +
                                    " (each VF's window must be aligned to its size)");
        }
        if (b.bar[0].size > platform::HostSystem::kVfBar0Offset) {
          throw driver::AccessError(what + ": the PF's BAR0 (" + std::to_string(b.bar[0].size) +
                                    " bytes) would overlap the VF BAR0 region at " + hex(base));
        }
        program_bar(cpu, rid, reg, sized, base);
        sr.vf_bar[bar] = driver::BarInfo{base, sized.size, sized.is64, sized.prefetchable};
      } else {
        restore_bar(cpu, rid, reg, sized);
      }
      if (sized.is64) ++bar;
    }
  }
}

std::vector<driver::PciFunction> SimDeviceAccess::functions() {
  enumerate();
  host::CpuAgent& cpu = host_.cpu();
  std::vector<driver::PciFunction> out;
  for (unsigned i = 0; i < host_.device_count(); ++i) {
    const std::uint16_t rid = platform::HostSystem::device_rid(i);
    const std::uint32_t id = cpu.cfg_read(rid, 0);
    driver::PciFunction f;
    f.rid = rid;
    f.vendor_id = static_cast<std::uint16_t>(id & 0xFFFFu);
    f.device_id = static_cast<std::uint16_t>(id >> 16);
    f.physical_rid = rid;
    f.name = host_.name() + "/" + host_.device(i).prefix();
    out.push_back(f);
    // Enabled SR-IOV VFs: VF Enable and NumVFs, routing ids from First VF Offset and VF
    // Stride. A VF's own header reads 0xFFFF for both IDs (SR-IOV spec): like Linux, report
    // the PF's vendor and the capability's VF Device ID.
    const std::uint16_t cap = sriov_[i].cap;
    if (cap == 0 || (cpu.cfg_read(rid, cap + pcie::Sriov::kControl) & pcie::Sriov::kCtrlVfEnable) == 0) continue;
    const unsigned num = cpu.cfg_read(rid, cap + pcie::Sriov::kNumVfs) & 0xFFFFu;
    const std::uint32_t off_stride = cpu.cfg_read(rid, cap + pcie::Sriov::kFirstVfOffset);
    const auto vf_device =
        static_cast<std::uint16_t>(cpu.cfg_read(rid, cap + dword_of(pcie::Sriov::kVfDeviceId)) >> 16);
    for (unsigned v = 0; v < num; ++v) {
      driver::PciFunction vf;
      vf.rid = static_cast<std::uint16_t>(rid + (off_stride & 0xFFFFu) + v * (off_stride >> 16));
      vf.vendor_id = f.vendor_id;
      vf.device_id = vf_device;
      vf.virtual_function = true;
      vf.physical_rid = rid;
      vf.name = f.name + "/vf" + std::to_string(v);
      out.push_back(vf);
    }
  }
  return out;
}

SimDeviceAccess::EnabledVf SimDeviceAccess::enabled_vf(unsigned slot, std::uint16_t rid, const char* call) {
  const std::uint16_t pf = platform::HostSystem::device_rid(slot);
  const std::string device =
      "host `" + host_.name() + "` device " + host_.device(slot).prefix() + " (PF " + pcie::format_rid(pf) + ")";
  const std::uint16_t cap = sriov_.at(slot).cap;
  if (cap == 0) {
    throw driver::AccessError(std::string(call) + ": no function " + pcie::format_rid(rid) + ": " + device +
                              " has no SR-IOV capability");
  }
  host::CpuAgent& cpu = host_.cpu();
  const std::uint32_t ctrl = cpu.cfg_read(pf, cap + pcie::Sriov::kControl);
  const unsigned num = cpu.cfg_read(pf, cap + pcie::Sriov::kNumVfs) & 0xFFFFu;
  const std::uint32_t off_stride = cpu.cfg_read(pf, cap + pcie::Sriov::kFirstVfOffset);
  const unsigned offset = off_stride & 0xFFFFu, stride = off_stride >> 16;
  const bool enabled = (ctrl & pcie::Sriov::kCtrlVfEnable) != 0;
  for (unsigned v = 0; enabled && v < num; ++v) {
    if (pf + offset + v * stride == rid) return EnabledVf{v, (ctrl & pcie::Sriov::kCtrlVfMse) != 0};
  }
  std::string state = "VF Enable clear";
  if (enabled) {
    state = "NumVFs " + std::to_string(num);
    if (num > 0) {
      state += ": VFs " + pcie::format_rid(static_cast<std::uint16_t>(pf + offset)) + " .. " +
               pcie::format_rid(static_cast<std::uint16_t>(pf + offset + (num - 1) * stride));
    }
  }
  throw driver::AccessError(std::string(call) + ": " + pcie::format_rid(rid) + " is not an enabled VF of " + device +
                            " (" + state + ")");
}

driver::BarInfo SimDeviceAccess::vf_bar(unsigned slot, unsigned vf, unsigned index) const {
  const driver::BarInfo& b = sriov_.at(slot).vf_bar[index];
  if (b.size == 0) return driver::BarInfo{};
  return driver::BarInfo{b.address + std::uint64_t{vf} * b.size, b.size, b.is_64bit, b.prefetchable};
}

std::uint32_t SimDeviceAccess::config_read32(std::uint16_t rid, std::uint16_t offset) {
  slot_of(rid, "config_read32");
  if (offset % 4 != 0 || offset >= 4096) {
    throw driver::AccessError("config_read32: offset " + hex(offset) + " is not a dword in 0..0xFFC");
  }
  return host_.cpu().cfg_read(rid, offset);
}

void SimDeviceAccess::config_write32(std::uint16_t rid, std::uint16_t offset, std::uint32_t value) {
  slot_of(rid, "config_write32");
  if (offset % 4 != 0 || offset >= 4096) {
    throw driver::AccessError("config_write32: offset " + hex(offset) + " is not a dword in 0..0xFFC");
  }
  host_.cpu().cfg_write(rid, offset, value);
}

driver::BarInfo SimDeviceAccess::bar(std::uint16_t rid, unsigned index) {
  const unsigned s = slot_of(rid, "bar");
  enumerate();
  if (index >= 6) throw driver::AccessError("bar: index " + std::to_string(index) + " (allowed 0..5)");
  if (rid == platform::HostSystem::device_rid(s)) return bars_[rid].bar[index];
  // A VF: its slice of the PF's VF BAR (VF BAR2 does not exist: an empty BarInfo).
  return vf_bar(s, enabled_vf(s, rid, "bar").index, index);
}

namespace {
void check(tlm::tlm_response_status st, const char* call, std::uint64_t address) {
  if (st != tlm::TLM_OK_RESPONSE) {
    throw driver::AccessError(std::string(call) + ": " + hex(address) +
                              " is outside every BAR this host has placed (or the device refused the access)");
  }
}
// Adds the simulated time an MMIO access took (a read stalls for the round trip) to the
// host's busy time.
class CpuTimer {
 public:
  explicit CpuTimer(std::uint64_t& total) : total_(total), start_(sc_core::sc_time_stamp()) {}
  ~CpuTimer() { total_ += sim::to_ns(sc_core::sc_time_stamp() - start_); }
  CpuTimer(const CpuTimer&) = delete;
  CpuTimer& operator=(const CpuTimer&) = delete;

 private:
  std::uint64_t& total_;
  sc_core::sc_time start_;
};
}  // namespace

std::uint32_t SimDeviceAccess::mmio_read32(std::uint64_t address) {
  tlm::tlm_response_status st{};
  const CpuTimer busy(cpu_busy_ns_);
  const std::uint32_t v = host_.cpu().read32(address, &st);
  check(st, "mmio_read32", address);
  return v;
}

std::uint64_t SimDeviceAccess::mmio_read64(std::uint64_t address) {
  tlm::tlm_response_status st{};
  const CpuTimer busy(cpu_busy_ns_);
  const std::uint64_t v = host_.cpu().read64(address, &st);
  check(st, "mmio_read64", address);
  return v;
}

void SimDeviceAccess::mmio_write32(std::uint64_t address, std::uint32_t value) {
  tlm::tlm_response_status st{};
  const CpuTimer busy(cpu_busy_ns_);
  host_.cpu().write32(address, value, &st);
  check(st, "mmio_write32", address);
}

void SimDeviceAccess::mmio_write64(std::uint64_t address, std::uint64_t value) {
  tlm::tlm_response_status st{};
  const CpuTimer busy(cpu_busy_ns_);
  host_.cpu().write64(address, value, &st);
  check(st, "mmio_write64", address);
}

driver::DmaBuffer SimDeviceAccess::alloc_dma(std::uint16_t rid, std::uint64_t bytes, std::uint64_t align) {
  slot_of(rid, "alloc_dma");
  try {
    // Mapped in the function's own IOMMU domain: a PF's buffer is not a VF's, and back.
    const std::uint64_t iova = host_.alloc_dma_for(rid, bytes, align);
    return driver::DmaBuffer{iova, bytes};
  } catch (const std::exception& e) {
    throw driver::AccessError(std::string("host `") + host_.name() + "`: " + e.what());
  }
}

void SimDeviceAccess::host_write(std::uint64_t iova, const void* data, std::size_t bytes) {
  if (iova + bytes > host_.dram().params().capacity || iova + bytes < iova) {
    throw driver::AccessError("host_write: [" + hex(iova) + ", +" + std::to_string(bytes) + ") is outside host DRAM (" +
                              std::to_string(host_.dram().params().capacity) + " bytes)");
  }
  host_.cpu().mem_write(iova, data, bytes);
}

void SimDeviceAccess::host_read(std::uint64_t iova, void* data, std::size_t bytes) {
  if (iova + bytes > host_.dram().params().capacity || iova + bytes < iova) {
    throw driver::AccessError("host_read: [" + hex(iova) + ", +" + std::to_string(bytes) + ") is outside host DRAM (" +
                              std::to_string(host_.dram().params().capacity) + " bytes)");
  }
  host_.cpu().mem_read(iova, data, bytes);
}

void SimDeviceAccess::enable_msix(std::uint16_t rid, unsigned count) {
  // What the kernel does for VFIO_DEVICE_SET_IRQS: program the MSI-X table entries (address
  // of the interrupt window, data = this host's vector number) and set MSI-X Enable.
  const unsigned s = slot_of(rid, "enable_msix");
  enumerate();
  host::CpuAgent& cpu = host_.cpu();
  const bool pf = rid == platform::HostSystem::device_rid(s);
  EnabledVf vf;
  if (!pf) {
    vf = enabled_vf(s, rid, "enable_msix");
    if (!vf.memory_enabled) {
      throw driver::AccessError("enable_msix: VF " + pcie::format_rid(rid) +
                                " decodes no memory (VF MSE is clear in its PF's SR-IOV control): its MSI-X table "
                                "cannot be written");
    }
  }
  const unsigned cap = find_capability(cpu, rid, kCapMsix);
  if (cap == 0) throw driver::AccessError("enable_msix: function " + hex(rid) + " has no MSI-X capability");
  const std::uint32_t ctrl = cpu.cfg_read(rid, cap);
  const unsigned table_size = ((ctrl >> 16) & 0x7FFu) + 1;
  if (count == 0 || count > table_size || count > kVectorsPerFunction) {
    throw driver::AccessError("enable_msix: " + std::to_string(count) + " vectors requested, function " + hex(rid) +
                              " has " + std::to_string(table_size));
  }
  const std::uint32_t table = cpu.cfg_read(rid, cap + 4);
  const driver::BarInfo b = pf ? bars_[rid].bar[table & 7u] : vf_bar(s, vf.index, table & 7u);
  if (b.size == 0) throw driver::AccessError("enable_msix: the MSI-X table's BAR is not placed");
  // A VF's Memory Space Enable is RO 0: the PF's VF MSE (checked above) decodes its BARs.
  if (pf) cpu.cfg_write(rid, kCommand, cpu.cfg_read(rid, kCommand) | kMemorySpace);
  const std::uint64_t base = b.address + (table & ~7u);
  for (unsigned v = 0; v < count; ++v) {
    const std::uint64_t e = base + 16ULL * v;
    cpu.write32(e + 0, static_cast<std::uint32_t>(pcie::InterruptController::kMsiBase));
    cpu.write32(e + 4, 0);
    cpu.write32(e + 8, host_vector(rid, v));
    cpu.write32(e + 12, 0);  // unmasked
  }
  cpu.cfg_write(rid, cap, (ctrl & 0xFFFF'0000u) | (1u << 31));
}

bool SimDeviceAccess::wait_interrupt(std::uint16_t rid, unsigned vector, std::uint64_t timeout_ns) {
  slot_of(rid, "wait_interrupt");
  if (vector >= kVectorsPerFunction) {
    throw driver::AccessError("wait_interrupt: vector " + std::to_string(vector) + " of function " + hex(rid) +
                              " (allowed 0.." + std::to_string(kVectorsPerFunction - 1) + ")");
  }
  const std::uint32_t v = host_vector(rid, vector);
  if (timeout_ns == 0) {
    host_.irq().wait_for(v);
    return true;
  }
  return host_.irq().wait_for(v, sc_core::sc_time(static_cast<double>(timeout_ns), sc_core::SC_NS));
}

std::uint64_t SimDeviceAccess::now_ns() {
  return sim::to_ns(sc_core::sc_time_stamp());
}

std::uint64_t SimDeviceAccess::host_clock_ns() {
  return clock_.read_ns(static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()));
}

void SimDeviceAccess::spend_ns(std::uint64_t ns) {
  cpu_busy_ns_ += ns;
  if (ns > 0) sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

void SimDeviceAccess::poll_ns(std::uint64_t ns) {
  cpu_poll_ns_ += ns;
  if (ns > 0) sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

}  // namespace sohusim::platform
