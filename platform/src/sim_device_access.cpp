#include "sohusim/platform/sim_device_access.hpp"

#include <sstream>
#include <string>

#include <systemc>

#include "sohusim/driver/errors.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
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

// The standard capability list from 0x34; 0 if `id` is absent. Bounded: a corrupt list
// cannot loop.
unsigned find_capability(models::CpuAgent& cpu, std::uint16_t rid, std::uint8_t id) {
  unsigned p = cpu.cfg_read(rid, 0x34) & 0xFCu;
  for (int guard = 0; p != 0 && guard < 48; ++guard) {
    const std::uint32_t h = cpu.cfg_read(rid, p);
    if ((h & 0xFFu) == id) return p;
    p = (h >> 8) & 0xFCu;
  }
  return 0;
}

}  // namespace

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
  models::CpuAgent& cpu = host_.cpu();
  for (unsigned i = 0; i < host_.device_count(); ++i) {
    const std::uint16_t rid = models::HostSystem::device_rid(i);
    Bars b;
    for (unsigned bar = 0; bar < 6; ++bar) {
      const unsigned reg = 0x10 + 4 * bar;
      const std::uint32_t orig = cpu.cfg_read(rid, reg);
      if ((orig & 1u) != 0) continue;  // I/O BARs: none on this device
      const bool is64 = ((orig >> 1) & 3u) == 2u;
      cpu.cfg_write(rid, reg, 0xFFFF'FFFFu);
      std::uint64_t mask = cpu.cfg_read(rid, reg) & ~0xFULL;
      if (is64) {
        cpu.cfg_write(rid, reg + 4, 0xFFFF'FFFFu);
        mask |= static_cast<std::uint64_t>(cpu.cfg_read(rid, reg + 4)) << 32;
      } else if (mask != 0) {
        mask |= 0xFFFF'FFFF'0000'0000ULL;  // a 32-bit BAR: the upper half is implied
      }
      const std::uint64_t size = mask == 0 ? 0 : (~mask + 1);
      if (size != 0) {
        // BAR0 and BAR2 are the device's; anything else would need a window of its own.
        const std::uint64_t base = bar == 0   ? models::HostSystem::bar0_address(i)
                                   : bar == 2 ? models::HostSystem::bar2_address(i)
                                              : 0;
        const std::uint64_t window = bar == 0   ? models::HostSystem::kBar0Stride
                                     : bar == 2 ? models::HostSystem::kBar2Stride
                                                : 0;
        if (base == 0 || size > window) {
          throw driver::AccessError("enumeration: host `" + host_.name() + "` device " + std::to_string(i) + " BAR" +
                                    std::to_string(bar) + " of " + std::to_string(size) +
                                    " bytes has no window (BAR0 up to " +
                                    std::to_string(models::HostSystem::kBar0Stride) + ", BAR2 up to " +
                                    std::to_string(models::HostSystem::kBar2Stride) + " bytes)");
        }
        cpu.cfg_write(rid, reg, static_cast<std::uint32_t>(base));
        if (is64) cpu.cfg_write(rid, reg + 4, static_cast<std::uint32_t>(base >> 32));
        b.bar[bar] = driver::BarInfo{base, size, is64, ((orig >> 3) & 1u) != 0};
      } else {
        cpu.cfg_write(rid, reg, orig);
      }
      if (is64) ++bar;
    }
    bars_[rid] = b;
  }
}

std::vector<driver::PciFunction> SimDeviceAccess::functions() {
  enumerate();
  std::vector<driver::PciFunction> out;
  for (unsigned i = 0; i < host_.device_count(); ++i) {
    const std::uint16_t rid = models::HostSystem::device_rid(i);
    const std::uint32_t id = host_.cpu().cfg_read(rid, 0);
    driver::PciFunction f;
    f.rid = rid;
    f.vendor_id = static_cast<std::uint16_t>(id & 0xFFFFu);
    f.device_id = static_cast<std::uint16_t>(id >> 16);
    f.physical_rid = rid;
    f.name = host_.name() + "/" + host_.device(i).prefix();
    out.push_back(f);
    // Enabled SR-IOV VFs (extended capability 0x0010): VF Enable and NumVFs, routing ids
    // from First VF Offset and VF Stride.
    for (unsigned p = 0x100, guard = 0; p != 0 && p < 0x1000 && guard < 64; ++guard) {
      const std::uint32_t h = host_.cpu().cfg_read(rid, p);
      if ((h & 0xFFFFu) == 0x0010u) {
        const std::uint32_t ctrl = host_.cpu().cfg_read(rid, p + 0x08);
        const unsigned num = host_.cpu().cfg_read(rid, p + 0x10) & 0xFFFFu;
        const std::uint32_t off_stride = host_.cpu().cfg_read(rid, p + 0x14);
        if ((ctrl & 1u) != 0) {
          for (unsigned v = 0; v < num; ++v) {
            const auto vrid = static_cast<std::uint16_t>(rid + (off_stride & 0xFFFFu) + v * (off_stride >> 16));
            const std::uint32_t vid = host_.cpu().cfg_read(vrid, 0);
            driver::PciFunction vf;
            vf.rid = vrid;
            vf.vendor_id = static_cast<std::uint16_t>(vid & 0xFFFFu);
            vf.device_id = static_cast<std::uint16_t>(vid >> 16);
            vf.virtual_function = true;
            vf.physical_rid = rid;
            vf.name = f.name + "/vf" + std::to_string(v);
            out.push_back(vf);
          }
        }
        break;
      }
      p = h >> 20;
    }
  }
  return out;
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
  slot_of(rid, "bar");
  enumerate();
  if (index >= 6) throw driver::AccessError("bar: index " + std::to_string(index) + " (allowed 0..5)");
  return bars_[rid].bar[index];
}

namespace {
void check(tlm::tlm_response_status st, const char* call, std::uint64_t address) {
  if (st != tlm::TLM_OK_RESPONSE) {
    throw driver::AccessError(std::string(call) + ": " + hex(address) +
                              " is outside every BAR this host has placed (or the device refused the access)");
  }
}
}  // namespace

std::uint32_t SimDeviceAccess::mmio_read32(std::uint64_t address) {
  tlm::tlm_response_status st{};
  const std::uint32_t v = host_.cpu().read32(address, &st);
  check(st, "mmio_read32", address);
  return v;
}

std::uint64_t SimDeviceAccess::mmio_read64(std::uint64_t address) {
  tlm::tlm_response_status st{};
  const std::uint64_t v = host_.cpu().read64(address, &st);
  check(st, "mmio_read64", address);
  return v;
}

void SimDeviceAccess::mmio_write32(std::uint64_t address, std::uint32_t value) {
  tlm::tlm_response_status st{};
  host_.cpu().write32(address, value, &st);
  check(st, "mmio_write32", address);
}

void SimDeviceAccess::mmio_write64(std::uint64_t address, std::uint64_t value) {
  tlm::tlm_response_status st{};
  host_.cpu().write64(address, value, &st);
  check(st, "mmio_write64", address);
}

driver::DmaBuffer SimDeviceAccess::alloc_dma(std::uint16_t rid, std::uint64_t bytes, std::uint64_t align) {
  const unsigned s = slot_of(rid, "alloc_dma");
  try {
    const std::uint64_t iova = host_.alloc_dma(bytes, align, s);
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
  models::CpuAgent& cpu = host_.cpu();
  const unsigned cap = find_capability(cpu, rid, kCapMsix);
  if (cap == 0) throw driver::AccessError("enable_msix: function " + hex(rid) + " has no MSI-X capability");
  const std::uint32_t ctrl = cpu.cfg_read(rid, cap);
  const unsigned table_size = ((ctrl >> 16) & 0x7FFu) + 1;
  if (count == 0 || count > table_size || count > kVectorsPerFunction) {
    throw driver::AccessError("enable_msix: " + std::to_string(count) + " vectors requested, function " + hex(rid) +
                              " has " + std::to_string(table_size));
  }
  const std::uint32_t table = cpu.cfg_read(rid, cap + 4);
  const driver::BarInfo b = bars_[rid].bar[table & 7u];
  if (b.size == 0) throw driver::AccessError("enable_msix: the MSI-X table's BAR is not placed");
  cpu.cfg_write(rid, kCommand, cpu.cfg_read(rid, kCommand) | kMemorySpace);
  const std::uint64_t base = b.address + (table & ~7u);
  for (unsigned v = 0; v < count; ++v) {
    const std::uint64_t e = base + 16ULL * v;
    cpu.write32(e + 0, static_cast<std::uint32_t>(pcie::InterruptController::kMsiBase));
    cpu.write32(e + 4, 0);
    cpu.write32(e + 8, s * kVectorsPerFunction + v);
    cpu.write32(e + 12, 0);  // unmasked
  }
  cpu.cfg_write(rid, cap, (ctrl & 0xFFFF'0000u) | (1u << 31));
}

bool SimDeviceAccess::wait_interrupt(std::uint16_t rid, unsigned vector, std::uint64_t timeout_ns) {
  const unsigned s = slot_of(rid, "wait_interrupt");
  const std::uint32_t v = s * kVectorsPerFunction + vector;
  if (timeout_ns == 0) {
    host_.irq().wait_for(v);
    return true;
  }
  return host_.irq().wait_for(v, sc_core::sc_time(static_cast<double>(timeout_ns), sc_core::SC_NS));
}

std::uint64_t SimDeviceAccess::now_ns() {
  return sim::to_ns(sc_core::sc_time_stamp());
}

void SimDeviceAccess::spend_ns(std::uint64_t ns) {
  if (ns > 0) sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

}  // namespace sohusim::platform
