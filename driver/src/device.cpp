#include "sohusim/driver/device.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/regmap/sohu_regs.h"

// A field of a register value, positioned by the generated header: GET(v, SOHU_CAP0_MQP).
#define SOHU_GET(v, F) ((static_cast<std::uint64_t>(v) & static_cast<std::uint64_t>(F##_MASK)) >> F##_SHIFT)
// A field value in place: PUT(SOHU_AQA_ASQS, n - 1).
#define SOHU_PUT(F, v) ((static_cast<std::uint64_t>(v) << F##_SHIFT) & static_cast<std::uint64_t>(F##_MASK))

namespace sohusim::driver {

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

/// Admin commands are synchronous; NVMe's default admin timeout is 60 s, the simulated
/// device answers in microseconds: 1 s separates "slow" from "never" with room to spare.
constexpr std::uint64_t kAdminTimeoutNs = 1'000'000'000;
/// An interrupt wait is cut into slices of this length, after each of which the CQ is read
/// anyway: a lost interrupt (or a coalescing count with no time limit) then costs latency,
/// never a hang.
constexpr std::uint64_t kInterruptSliceNs = 1'000'000;
/// Un-waited successful completions kept per queue (their results stay readable by wait()).
constexpr std::size_t kMaxRetained = 8192;
/// ERRLOG entries popped while looking for one command's entry, and kept for later lookups.
constexpr unsigned kMaxErrlogPops = 16;
constexpr std::size_t kMaxErrlogSeen = 64;

std::string hex(std::uint64_t v) {
  std::array<char, 24> b{};
  std::snprintf(b.data(), b.size(), "0x%llX", static_cast<unsigned long long>(v));
  return b.data();
}

std::string rid_text(std::uint16_t rid) {
  std::array<char, 16> b{};
  std::snprintf(b.data(), b.size(), "%02x:%02x.%x", rid >> 8, (rid >> 3) & 0x1F, rid & 7);
  return b.data();
}

#define SOHU_CMD_SET(cmd, F, v) \
  put_field((cmd), #F, F##_DW, F##_SHIFT, static_cast<std::uint64_t>(F##_MASK), static_cast<std::uint64_t>(v))

Command admin_command(std::uint8_t opcode) {
  Command c;
  SOHU_CMD_SET(c, SOHU_SQE_OPCODE, opcode);
  return c;
}

bool has_no_irq(const Command& c) {
  return SOHU_GET(c.dw[SOHU_SQE_NO_COMPLETION_IRQ_DW], SOHU_SQE_NO_COMPLETION_IRQ) != 0;
}

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

Device::Device(DeviceAccess& access, std::uint16_t rid, const HostCosts& costs)
    : access_(access), rid_(rid), costs_(costs) {
  info_.rid = rid;
}

std::string Device::label() const {
  return info_.name.empty() ? "function " + rid_text(rid_) : info_.name;
}

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

// ---- registers ------------------------------------------------------------------------------

std::uint32_t Device::read32(std::uint32_t offset) {
  if (bar0() == 0) throw DriverError(label() + ": read32(" + hex(offset) + ") before probe()");
  return access_.mmio_read32(bar0() + offset);
}

std::uint64_t Device::read64(std::uint32_t offset) {
  if (bar0() == 0) throw DriverError(label() + ": read64(" + hex(offset) + ") before probe()");
  return access_.mmio_read64(bar0() + offset);
}

void Device::write32(std::uint32_t offset, std::uint32_t value) {
  if (bar0() == 0) throw DriverError(label() + ": write32(" + hex(offset) + ") before probe()");
  access_.mmio_write32(bar0() + offset, value);
}

void Device::write64(std::uint32_t offset, std::uint64_t value) {
  if (bar0() == 0) throw DriverError(label() + ": write64(" + hex(offset) + ") before probe()");
  access_.mmio_write64(bar0() + offset, value);
}

std::uint32_t Device::sq_doorbell(std::uint16_t qid) const {
  return SOHU_PAGE_DOORBELL + qid * info_.doorbell_stride + (SOHU_SQ_TAIL_DB(0) - SOHU_PAGE_DOORBELL);
}

std::uint32_t Device::cq_doorbell(std::uint16_t qid) const {
  return SOHU_PAGE_DOORBELL + qid * info_.doorbell_stride + (SOHU_CQ_HEAD_DB(0) - SOHU_PAGE_DOORBELL);
}

std::uint64_t Device::device_time_ns() {
  return read64(SOHU_TIMESTAMP);
}

void Device::wait_status(std::uint32_t mask, std::uint32_t value, std::uint64_t timeout_ns, const char* what) {
  const std::uint64_t start = access_.now_ns();
  for (;;) {
    const std::uint32_t st = read32(SOHU_STATUS);
    if ((st & SOHU_STATUS_CFS_MASK) != 0) {
      const std::uint32_t code = read32(SOHU_ERR_CODE);
      throw FatalError(label() + ": " + what + ": the controller reports a fatal status (STATUS " + hex(st) +
                       ", ERR_CODE " + status_name(static_cast<std::uint16_t>(code)) + "); only a reset recovers");
    }
    if ((st & mask) == value) return;
    const std::uint64_t waited = access_.now_ns() - start;
    if (waited >= timeout_ns) {
      throw TimeoutError(label() + ": " + what + ": STATUS is " + hex(st) + " after " + std::to_string(waited) +
                         " ns (waiting for STATUS & " + hex(mask) + " == " + hex(value) + ")");
    }
    // Each read stalls for the PCIe round trip; the interval keeps the loop from being only that.
    access_.poll_ns(std::max<std::uint64_t>(costs_.poll_interval_ns, 1));
  }
}

// ---- enable, reset, shutdown ------------------------------------------------------------------

void Device::enable(unsigned admin_entries, std::uint64_t timeout_ns) {
  if (!probed_) throw DriverError(label() + ": enable() before probe()");
  // AQA's size fields are 12 bits (entries - 1), and CAP0.MQES bounds every queue.
  const unsigned max_entries = std::min(4096u, info_.max_queue_entries);
  if (admin_entries < 2 || admin_entries > max_entries) {
    throw std::invalid_argument(label() + ": enable: " + std::to_string(admin_entries) +
                                " admin queue entries (allowed 2 .. " + std::to_string(max_entries) + ")");
  }
  access_.spend_ns(costs_.admin_ns);
  // A controller left enabled (by firmware or an earlier driver) is stopped first: the admin
  // queue registers are only read at the 0 -> 1 edge of CTRL.EN.
  if ((read32(SOHU_CTRL) & SOHU_CTRL_EN_MASK) != 0) {
    write32(SOHU_CTRL, 0);
    wait_status(SOHU_STATUS_RDY_MASK, 0, timeout_ns, "disable before enable");
  }
  if (admin_.entries == admin_entries && admin_.sq.size != 0) {
    reset_ring(admin_);
    admin_.in_flight.clear();
    admin_.no_irq_in_flight = 0;
  } else {
    if (admin_.sq.size != 0) {
      spare_dma_.emplace(admin_.sq.size, admin_.sq);
      spare_dma_.emplace(admin_.cq.size, admin_.cq);
    }
    admin_ = Queue{};
    admin_.entries = admin_entries;
    setup_queue_memory(admin_);
  }
  admin_.qid = 0;
  admin_.vector = 0;  // vector 0: admin completions and the device's error interrupt
  admin_.mode = CompletionMode::Interrupt;
  admin_entries_ = admin_entries;
  write32(SOHU_AQA, static_cast<std::uint32_t>(SOHU_PUT(SOHU_AQA_ASQS, admin_entries - 1) |
                                               SOHU_PUT(SOHU_AQA_ACQS, admin_entries - 1)));
  write64(SOHU_ASQ, admin_.sq.iova & SOHU_ASQ_ADDR_MASK);
  write64(SOHU_ACQ, admin_.cq.iova & SOHU_ACQ_ADDR_MASK);
  write32(SOHU_CTRL, SOHU_CTRL_EN_MASK);
  wait_status(SOHU_STATUS_RDY_MASK, SOHU_STATUS_RDY_MASK, timeout_ns, "enable");
  enabled_ = true;
}

void Device::reset(std::uint64_t timeout_ns) {
  if (!probed_) throw DriverError(label() + ": reset() before probe()");
  access_.spend_ns(costs_.admin_ns);
  write32(SOHU_CTRL, SOHU_CTRL_RST_MASK);
  enabled_ = false;
  wait_status(SOHU_STATUS_RDY_MASK, 0, timeout_ns, "reset");
  ++resets_;
  pmu_enabled_ = false;
  errlog_seen_.clear();  // the device cleared its log
  // The device abandoned every command in flight and posts nothing for them: the driver
  // completes them with ABORTED_RESET, so waiters get an error instead of a hang.
  for (auto& [qid, q] : io_) {
    for (const auto& [cid, cmd] : q.in_flight) {
      Reaped r;
      r.completion.sq_id = qid;
      r.completion.cid = cid;
      r.completion.status = SOHU_STATUS_ABORTED_RESET;
      r.command = cmd;
      r.message = std::string(opcode_name(cmd.opcode())) + " (qid " + std::to_string(qid) + ", cid " +
                  std::to_string(cid) + ", correlation " + std::to_string(cmd.correlation()) +
                  ") failed: ABORTED_RESET \xE2\x80\x94 the controller was reset (CTRL.RST) while it was in flight [" +
                  label() + "]";
      q.done[cid] = std::move(r);
      q.done_order.push_back(cid);
    }
    q.in_flight.clear();
    q.no_irq_in_flight = 0;
    reset_ring(q);
  }
  open_flows_.clear();  // their commands will never be reaped: the flows end unterminated
  enable(admin_entries_ == 0 ? 64 : admin_entries_, timeout_ns);
  for (auto& [qid, q] : io_) create_on_device(q);
}

void Device::shutdown(std::uint64_t timeout_ns) {
  if (!probed_) throw DriverError(label() + ": shutdown() before probe()");
  access_.spend_ns(costs_.admin_ns);
  write32(SOHU_CTRL, (enabled_ ? SOHU_CTRL_EN_MASK : 0u) |
                         static_cast<std::uint32_t>(SOHU_PUT(SOHU_CTRL_SHN, SOHU_CTRL_SHN_NORMAL)));
  wait_status(SOHU_STATUS_SHST_MASK, static_cast<std::uint32_t>(SOHU_PUT(SOHU_STATUS_SHST, SOHU_STATUS_SHST_COMPLETE)),
              timeout_ns, "shutdown");
  enabled_ = false;
}

void Device::require_enabled(const char* call) const {
  if (!enabled_) throw DriverError(label() + ": " + call + " while the controller is not enabled (call enable())");
}

// ---- queues -----------------------------------------------------------------------------------

DmaBuffer Device::take_dma(std::uint64_t bytes, std::uint64_t align) {
  for (auto it = spare_dma_.lower_bound(bytes); it != spare_dma_.end(); ++it) {
    if (it->second.iova % align == 0) {
      const DmaBuffer b = it->second;
      spare_dma_.erase(it);
      return b;
    }
  }
  return access_.alloc_dma(rid_, bytes, align);
}

void Device::setup_queue_memory(Queue& q) {
  // Queue bases must be 4 KiB aligned (CREATE_SQ/CREATE_CQ BASE, ASQ/ACQ).
  q.sq = take_dma(std::uint64_t{SOHU_SQE_SIZE} * q.entries, 4096);
  q.cq = take_dma(std::uint64_t{SOHU_CQE_SIZE} * q.entries, 4096);
  reset_ring(q);
}

void Device::reset_ring(Queue& q) {
  // A zeroed CQ has phase 0 everywhere, and the device writes phase 1 on its first pass: the
  // driver never mistakes an old entry (from before a reset, or reused memory) for a new one.
  const std::vector<std::uint8_t> zeros(std::size_t{SOHU_CQE_SIZE} * q.entries, 0);
  access_.host_write(q.cq.iova, zeros.data(), zeros.size());
  q.sq_tail = q.sq_head = q.sq_rung = q.cq_head = 0;
  q.phase = true;
}

void Device::create_on_device(Queue& q) {
  Command cq = admin_command(SOHU_ADMIN_OP_CREATE_CQ);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_BASE, q.cq.iova);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_QID, q.qid);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_QSIZE, q.entries - 1);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_VECTOR, q.vector);
  SOHU_CMD_SET(cq, SOHU_ADMIN_CREATE_CQ_IEN, q.mode == CompletionMode::Interrupt ? 1 : 0);
  admin(cq);
  Command sq = admin_command(SOHU_ADMIN_OP_CREATE_SQ);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_BASE, q.sq.iova);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_QID, q.qid);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_QSIZE, q.entries - 1);
  SOHU_CMD_SET(sq, SOHU_ADMIN_CREATE_SQ_CQID, q.qid);
  try {
    admin(sq);
  } catch (...) {
    Command del = admin_command(SOHU_ADMIN_OP_DELETE_CQ);
    SOHU_CMD_SET(del, SOHU_ADMIN_DELETE_CQ_QID, q.qid);
    try {
      admin(del);
    } catch (const DriverError&) {
      // The CREATE_SQ error is the one to report.
    }
    throw;
  }
}

std::uint16_t Device::create_queue(unsigned entries, CompletionMode mode) {
  require_enabled("create_queue");
  if (entries < 2 || entries > info_.max_queue_entries) {
    throw std::invalid_argument(label() + ": create_queue: " + std::to_string(entries) + " entries (allowed 2 .. " +
                                std::to_string(info_.max_queue_entries) + ", CAP0.MQES + 1)");
  }
  std::uint16_t qid = 0;
  for (unsigned i = 1; i <= info_.max_queues; ++i) {
    if (io_.count(static_cast<std::uint16_t>(i)) == 0) {
      qid = static_cast<std::uint16_t>(i);
      break;
    }
  }
  if (qid == 0) {
    throw DriverError(label() + ": create_queue: all " + std::to_string(info_.max_queues) +
                      " I/O queue pairs (CAP0.MQP) are in use");
  }
  Queue q;
  q.qid = qid;
  q.entries = entries;
  q.mode = mode;
  // Vector 0 belongs to the admin queue and errors; I/O queues take 1.. and share them
  // round-robin when there are more queues than vectors.
  q.vector =
      (mode == CompletionMode::Interrupt && info_.msix_vectors > 1) ? 1 + (qid - 1u) % (info_.msix_vectors - 1) : 0;
  setup_queue_memory(q);
  try {
    create_on_device(q);
  } catch (...) {
    spare_dma_.emplace(q.sq.size, q.sq);
    spare_dma_.emplace(q.cq.size, q.cq);
    throw;
  }
  io_.emplace(qid, std::move(q));
  return qid;
}

void Device::delete_queue(std::uint16_t qid) {
  require_enabled("delete_queue");
  if (qid == 0) throw std::invalid_argument(label() + ": delete_queue: queue 0 is the admin queue");
  Queue& q = queue(qid, "delete_queue");
  // DELETE_SQ aborts what is still queued; the driver forgets those commands with the queue.
  Command sq = admin_command(SOHU_ADMIN_OP_DELETE_SQ);
  SOHU_CMD_SET(sq, SOHU_ADMIN_DELETE_SQ_QID, qid);
  admin(sq);
  Command cq = admin_command(SOHU_ADMIN_OP_DELETE_CQ);
  SOHU_CMD_SET(cq, SOHU_ADMIN_DELETE_CQ_QID, qid);
  admin(cq);
  spare_dma_.emplace(q.sq.size, q.sq);
  spare_dma_.emplace(q.cq.size, q.cq);
  io_.erase(qid);
}

Device::Queue& Device::queue(std::uint16_t qid, const char* call) {
  return const_cast<Queue&>(static_cast<const Device*>(this)->queue(qid, call));
}

const Device::Queue& Device::queue(std::uint16_t qid, const char* call) const {
  if (qid == 0) return admin_;
  const auto it = io_.find(qid);
  if (it == io_.end()) {
    std::string have;
    for (const auto& [id, q] : io_) have += (have.empty() ? "" : ", ") + std::to_string(id);
    throw std::invalid_argument(label() + ": " + call + ": queue " + std::to_string(qid) +
                                " does not exist (I/O queues: " + (have.empty() ? "none" : have) + ")");
  }
  return it->second;
}

std::uint16_t Device::allocate_cid(Queue& q) {
  for (unsigned tries = 0; tries < 0x10000; ++tries) {
    const std::uint16_t cid = q.next_cid;
    q.next_cid = static_cast<std::uint16_t>(q.next_cid == 0xFFFF ? 1 : q.next_cid + 1);
    if (cid != 0 && q.in_flight.count(cid) == 0 && q.done.count(cid) == 0) return cid;
  }
  throw DriverError(label() + ": queue " + std::to_string(q.qid) + " has no free command id (" +
                    std::to_string(q.in_flight.size()) + " in flight, " + std::to_string(q.done.size()) +
                    " completions not waited for)");
}

void Device::ring_sq_doorbell(Queue& q) {
  if (q.sq_tail == q.sq_rung) return;
  access_.spend_ns(costs_.doorbell_ns);
  access_.mmio_write32(bar0() + sq_doorbell(q.qid),
                       static_cast<std::uint32_t>(SOHU_PUT(SOHU_SQ_TAIL_DB_TAIL, q.sq_tail)));
  q.sq_rung = q.sq_tail;
}

std::vector<Ticket> Device::submit(std::uint16_t qid, const std::vector<Command>& cmds, std::uint64_t correlation) {
  require_enabled("submit");
  Queue& q = queue(qid, "submit");
  std::vector<Ticket> tickets;
  tickets.reserve(cmds.size());
  // Entries that sit next to each other in the ring are stored with one host write.
  std::vector<std::uint8_t> run;
  std::uint32_t run_start = q.sq_tail;
  const auto flush = [&] {
    if (!run.empty()) access_.host_write(q.sq.iova + std::uint64_t{SOHU_SQE_SIZE} * run_start, run.data(), run.size());
    run.clear();
    run_start = q.sq_tail;
  };
  for (const Command& in : cmds) {
    // One slot stays empty: tail + 1 == head is full. The device must see what is queued
    // before it can free slots, so ring first, then reap (or wait) until one frees.
    while ((q.sq_tail + 1) % q.entries == q.sq_head) {
      flush();
      ring_sq_doorbell(q);
      if (q.in_flight.empty()) {
        throw DriverError(label() + ": SQ " + std::to_string(qid) + " is full (head " + std::to_string(q.sq_head) +
                          ", tail " + std::to_string(q.sq_tail) + ") with nothing in flight");
      }
      if (reap(q) == 0) block_for_completion(q, 0, "a free slot in SQ " + std::to_string(qid));
    }
    Command c = in;
    const std::uint16_t cid = allocate_cid(q);
    c.set_cid(cid);
    c.set_correlation(correlation);
    access_.spend_ns(costs_.per_command_ns);
    std::uint8_t bytes[SOHU_SQE_SIZE];
    c.to_bytes(bytes);
    run.insert(run.end(), bytes, bytes + SOHU_SQE_SIZE);
    if (has_no_irq(c)) ++q.no_irq_in_flight;
    if (trace_ != nullptr && correlation != 0) ++open_flows_[correlation];
    q.in_flight.emplace(cid, c);
    tickets.push_back(Ticket{qid, cid});
    q.sq_tail = (q.sq_tail + 1) % q.entries;
    if (q.sq_tail == 0) flush();  // the ring wrapped: the next entries start at slot 0
  }
  flush();
  ring_sq_doorbell(q);
  return tickets;
}

Ticket Device::submit(std::uint16_t qid, Command cmd, std::uint64_t correlation) {
  return submit(qid, std::vector<Command>{cmd}, correlation).front();
}

unsigned Device::reap(Queue& q) {
  unsigned n = 0;
  const std::uint64_t start_ns = trace_ != nullptr ? access_.now_ns() : 0;
  const std::size_t finished_before = finished_flows_.size();
  std::vector<counters::Flow> flows;  // the reaped commands' correlation ids, each once
  while (n < q.entries) {
    std::uint8_t b[SOHU_CQE_SIZE];
    access_.host_read(q.cq.iova + std::uint64_t{SOHU_CQE_SIZE} * q.cq_head, b, sizeof b);
    std::uint32_t dw[4];
    for (unsigned i = 0; i < 4; ++i) {
      dw[i] = static_cast<std::uint32_t>(b[4 * i]) | (static_cast<std::uint32_t>(b[4 * i + 1]) << 8) |
              (static_cast<std::uint32_t>(b[4 * i + 2]) << 16) | (static_cast<std::uint32_t>(b[4 * i + 3]) << 24);
    }
    if ((SOHU_GET(dw[SOHU_CQE_PHASE_DW], SOHU_CQE_PHASE) != 0) != q.phase) break;  // not written yet
    Completion c;
    c.result = dw[SOHU_CQE_RESULT_DW] | (static_cast<std::uint64_t>(dw[SOHU_CQE_RESULT_DW + 1]) << 32);
    c.sq_head = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_SQ_HEAD_DW], SOHU_CQE_SQ_HEAD));
    c.sq_id = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_SQ_ID_DW], SOHU_CQE_SQ_ID));
    c.cid = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_CID_DW], SOHU_CQE_CID));
    c.status = static_cast<std::uint16_t>(SOHU_GET(dw[SOHU_CQE_STATUS_DW], SOHU_CQE_STATUS));
    access_.spend_ns(costs_.reap_per_cqe_ns);
    ++n;
    q.cq_head = (q.cq_head + 1) % q.entries;
    if (q.cq_head == 0) q.phase = !q.phase;
    if (c.sq_head < q.entries) q.sq_head = c.sq_head;
    const auto it = q.in_flight.find(c.cid);
    if (it == q.in_flight.end()) continue;  // a command the driver no longer tracks
    Reaped r;
    r.completion = c;
    r.command = it->second;
    if (has_no_irq(r.command) && q.no_irq_in_flight > 0) --q.no_irq_in_flight;
    q.in_flight.erase(it);
    if (c.status != SOHU_STATUS_SUCCESS) r.message = describe_failure(q, r.command, c);
    if (trace_ != nullptr) note_reaped(r.command.correlation(), flows);
    q.done[c.cid] = std::move(r);
    q.done_order.push_back(c.cid);
  }
  if (n > 0) {
    access_.mmio_write32(bar0() + cq_doorbell(q.qid),
                         static_cast<std::uint32_t>(SOHU_PUT(SOHU_CQ_HEAD_DB_HEAD, q.cq_head)));
    trim_done(q);
    if (trace_ != nullptr && trace_->enabled() && (!trace_summary_ || finished_flows_.size() > finished_before)) {
      const counters::Arg args[] = {{"queue", q.qid}, {"completions", n}};
      counters::TraceEvent e;
      e.type = counters::EventType::Complete;
      e.track = trace_track_;
      e.ts = start_ns;
      e.duration = access_.now_ns() - start_ns;
      e.name = "reap";
      e.extras.args = counters::ConstSpan<counters::Arg>(args, 2);
      e.extras.flows = counters::ConstSpan<counters::Flow>(flows.data(), flows.size());
      trace_->record(e);
    }
  }
  return n;
}

void Device::note_reaped(std::uint64_t correlation, std::vector<counters::Flow>& flows) {
  const auto open = open_flows_.find(correlation);
  if (open == open_flows_.end()) return;  // 0, or submitted before set_trace
  bool listed = false;
  for (const counters::Flow& f : flows) listed = listed || f.id == correlation;
  if (!listed) flows.push_back(counters::Flow{correlation});
  if (--open->second == 0) {
    finished_flows_.push_back(correlation);
    open_flows_.erase(open);
  }
}

void Device::set_trace(counters::TraceRecorder* trace, counters::TrackId track, bool summary) {
  trace_ = trace;
  trace_track_ = track;
  trace_summary_ = summary;
  open_flows_.clear();
  finished_flows_.clear();
}

std::vector<std::uint64_t> Device::take_finished_flows() {
  std::vector<std::uint64_t> out;
  out.swap(finished_flows_);
  return out;
}

void Device::trim_done(Queue& q) {
  // done_order also holds cids already waited for; drop those once they dominate.
  if (q.done_order.size() > 2 * q.done.size() + 64) {
    std::deque<std::uint16_t> live;
    for (std::uint16_t cid : q.done_order) {
      if (q.done.count(cid) != 0) live.push_back(cid);
    }
    q.done_order.swap(live);
  }
  // Successes no one waits for are retired oldest first; errors stay until reported.
  std::deque<std::uint16_t> errors;
  while (q.done.size() > kMaxRetained && !q.done_order.empty()) {
    const std::uint16_t cid = q.done_order.front();
    q.done_order.pop_front();
    const auto it = q.done.find(cid);
    if (it == q.done.end()) continue;
    if (it->second.completion.status == SOHU_STATUS_SUCCESS) {
      q.done.erase(it);
    } else {
      errors.push_back(cid);
    }
  }
  q.done_order.insert(q.done_order.begin(), errors.begin(), errors.end());
}

void Device::block_for_completion(Queue& q, std::uint64_t deadline_ns, const std::string& what) {
  const std::uint64_t now = access_.now_ns();
  if (deadline_ns != 0 && now >= deadline_ns) {
    const std::uint32_t st = read32(SOHU_STATUS);
    const std::string state = "SQ tail " + std::to_string(q.sq_tail) + ", device SQ head " + std::to_string(q.sq_head) +
                              ", CQ head " + std::to_string(q.cq_head) + ", phase " + std::to_string(q.phase ? 1 : 0) +
                              ", " + std::to_string(q.in_flight.size()) + " in flight, STATUS " + hex(st);
    if ((st & SOHU_STATUS_CFS_MASK) != 0) {
      throw FatalError(label() + ": " + what + ": the controller reports a fatal status (" + state + ")");
    }
    throw TimeoutError(label() + ": " + what + ": no completion in time (" + state + ")");
  }
  const std::uint64_t left = deadline_ns == 0 ? ~std::uint64_t{0} : deadline_ns - now;
  // Polling queues read the CQ every poll interval; so does a wait on commands posted without
  // an interrupt when none in flight will raise one. Otherwise the host sleeps until an
  // interrupt: the queue runs in order, so a command that raises one completes after those
  // posted before it without (one interrupt per launch, as drivers batch them), and polling
  // through a whole program would cost the host a wake-up every interval.
  const bool interrupt_coming = q.in_flight.size() > q.no_irq_in_flight;
  if (q.mode == CompletionMode::Polling || (q.no_irq_in_flight > 0 && !interrupt_coming)) {
    access_.poll_ns(std::min(left, std::max<std::uint64_t>(costs_.poll_interval_ns, 1)));
    return;
  }
  if (access_.wait_interrupt(rid_, q.vector, std::min(left, kInterruptSliceNs))) {
    access_.spend_ns(costs_.interrupt_ns);
  }
}

Completion Device::wait(const Ticket& t, std::uint64_t timeout_ns) {
  Queue& q = queue(t.qid, "wait");
  const std::uint64_t deadline = timeout_ns == 0 ? 0 : access_.now_ns() + timeout_ns;
  for (;;) {
    const auto d = q.done.find(t.cid);
    if (d != q.done.end()) {
      Reaped r = std::move(d->second);
      q.done.erase(d);
      if (r.completion.status != SOHU_STATUS_SUCCESS) fail(q, r);
      return r.completion;
    }
    const auto f = q.in_flight.find(t.cid);
    if (f == q.in_flight.end()) {
      // Retired without being waited for: only successes are (drain reports errors).
      Completion c;
      c.sq_id = t.qid;
      c.cid = t.cid;
      return c;
    }
    if (reap(q) > 0) continue;
    block_for_completion(q, deadline,
                         std::string("wait for ") + opcode_name(f->second.opcode(), t.qid == 0) + " (qid " +
                             std::to_string(t.qid) + ", cid " + std::to_string(t.cid) + ", correlation " +
                             std::to_string(f->second.correlation()) + ")");
  }
}

void Device::drain(std::uint16_t qid, std::uint64_t timeout_ns) {
  Queue& q = queue(qid, "drain");
  const std::uint64_t deadline = timeout_ns == 0 ? 0 : access_.now_ns() + timeout_ns;
  reap(q);
  while (!q.in_flight.empty()) {
    block_for_completion(q, deadline,
                         "drain of queue " + std::to_string(qid) + " (" + std::to_string(q.in_flight.size()) +
                             " commands outstanding, oldest cid " + std::to_string(q.in_flight.begin()->first) + ")");
    reap(q);
  }
  std::optional<Reaped> first;
  unsigned failures = 0;
  for (std::uint16_t cid : q.done_order) {
    const auto it = q.done.find(cid);
    if (it == q.done.end()) continue;
    if (it->second.completion.status != SOHU_STATUS_SUCCESS) {
      if (!first) first = it->second;
      ++failures;
    }
    q.done.erase(it);
  }
  q.done.clear();
  q.done_order.clear();
  if (first) {
    if (failures > 1)
      first->message += " (and " + std::to_string(failures - 1) + " more failed commands on this queue)";
    fail(q, *first);
  }
}

unsigned Device::poll(std::uint16_t qid) {
  require_enabled("poll");
  return reap(queue(qid, "poll"));
}

unsigned Device::outstanding(std::uint16_t qid) const {
  return static_cast<unsigned>(queue(qid, "outstanding").in_flight.size());
}

Completion Device::admin(Command cmd) {
  require_enabled("admin");
  access_.spend_ns(costs_.admin_ns);
  const Ticket t = submit(0, cmd, 0);
  return wait(t, kAdminTimeoutNs);
}

// ---- errors -------------------------------------------------------------------------------------

std::optional<Device::ErrLogEntry> Device::find_error_log(std::uint16_t qid, std::uint16_t cid) {
  const auto match = [&](const ErrLogEntry& e) { return e.qid == qid && e.cid == cid; };
  const auto seen = std::find_if(errlog_seen_.begin(), errlog_seen_.end(), match);
  if (seen != errlog_seen_.end()) {
    const ErrLogEntry e = *seen;
    errlog_seen_.erase(seen);
    return e;
  }
  // The log is a FIFO read at its oldest entry: pop until this command's entry shows up,
  // keeping the others for the commands they belong to.
  for (unsigned i = 0; i < kMaxErrlogPops; ++i) {
    const std::uint32_t code = read32(SOHU_ERR_CODE);
    if (code == 0) break;  // empty
    const std::uint32_t info = read32(SOHU_ERR_INFO);
    ErrLogEntry e;
    e.status = static_cast<std::uint16_t>(code);
    e.qid = static_cast<std::uint16_t>(SOHU_GET(info, SOHU_ERR_INFO_QID));
    e.cid = static_cast<std::uint16_t>(SOHU_GET(info, SOHU_ERR_INFO_CID));
    e.address = read64(SOHU_ERR_ADDR);
    write32(SOHU_ERR_ACK, SOHU_ERR_ACK_ACK_MASK);
    if (match(e)) return e;
    errlog_seen_.push_back(e);
    if (errlog_seen_.size() > kMaxErrlogSeen) errlog_seen_.pop_front();
  }
  return std::nullopt;
}

std::string Device::describe_failure(const Queue& q, const Command& cmd, const Completion& c) {
  std::string s = std::string(opcode_name(cmd.opcode(), q.qid == 0)) + " (qid " + std::to_string(q.qid) + ", cid " +
                  std::to_string(c.cid) + ", correlation " + std::to_string(cmd.correlation()) +
                  ") failed: " + status_name(c.status) + " \xE2\x80\x94 ";
  const std::optional<ErrLogEntry> e = find_error_log(q.qid, c.cid);
  if (e) {
    s += "error log: " + std::string(status_name(e->status)) + " at address " + hex(e->address);
  } else {
    s += "no error-log entry";
  }
  return s + " [" + label() + "]";
}

void Device::fail(const Queue& q, const Reaped& r) const {
  throw CommandError(r.message, r.completion.status, r.command.opcode(), q.qid, r.completion.cid,
                     r.command.correlation());
}

// ---- PMU and trace unit -----------------------------------------------------------------------

void Device::require_physical(const char* call, const char* unit) const {
  if (!info_.virtual_function) return;
  throw DriverError(label() + ": " + call + ": " + unit + " belongs to the physical function (" +
                    rid_text(info_.physical_rid) + "): a VF cannot program it");
}

void Device::pmu_configure(unsigned counter, unsigned event) {
  require_physical("pmu_configure", "the PMU");
  if (counter >= SOHU_PMU_COUNTER_COUNT) {
    throw std::invalid_argument(label() + ": pmu_configure: counter " + std::to_string(counter) + " (the PMU has " +
                                std::to_string(SOHU_PMU_COUNTER_COUNT) + ")");
  }
  if (event > SOHU_GET(SOHU_ADMIN_PMU_CONFIG_EVENT_MASK, SOHU_ADMIN_PMU_CONFIG_EVENT)) {
    throw std::invalid_argument(label() + ": pmu_configure: event id " + std::to_string(event) + " does not fit");
  }
  Command c = admin_command(SOHU_ADMIN_OP_PMU_CONFIG);
  SOHU_CMD_SET(c, SOHU_ADMIN_PMU_CONFIG_COUNTER, counter);
  SOHU_CMD_SET(c, SOHU_ADMIN_PMU_CONFIG_EVENT, event);
  SOHU_CMD_SET(c, SOHU_ADMIN_PMU_CONFIG_ENABLE, pmu_enabled_ ? 1 : 0);  // PMU_CONFIG also sets PMU_CTRL.EN
  admin(c);
}

void Device::pmu_enable(bool on, bool reset_counters) {
  require_physical("pmu_enable", "the PMU");
  write32(SOHU_PMU_CTRL, (on ? SOHU_PMU_CTRL_EN_MASK : 0u) | (reset_counters ? SOHU_PMU_CTRL_RESET_MASK : 0u));
  pmu_enabled_ = on;
}

std::uint64_t Device::pmu_counter(unsigned counter) {
  require_physical("pmu_counter", "the PMU");
  if (counter >= SOHU_PMU_COUNTER_COUNT) {
    throw std::invalid_argument(label() + ": pmu_counter: counter " + std::to_string(counter) + " (the PMU has " +
                                std::to_string(SOHU_PMU_COUNTER_COUNT) + ")");
  }
  return read64(SOHU_PMU_COUNTER(counter));
}

std::uint64_t Device::pmu_cycles() {
  require_physical("pmu_cycles", "the PMU");
  return read64(SOHU_PMU_CYCLES);
}

void Device::set_context(std::uint16_t context, const std::vector<std::uint64_t>& entries) {
  require_physical("set_context", "the device MMU");
  Command c = admin_command(SOHU_ADMIN_OP_SET_CONTEXT);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_CONTEXT, context);
  if (entries.empty()) {
    admin(c);  // VALID 0: invalidate
    return;
  }
  const std::uint64_t bytes = entries.size() * sizeof(std::uint64_t);
  const DmaBuffer table = take_dma(bytes, 8);
  access_.host_write(table.iova, entries.data(), bytes);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_TABLE, table.iova);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_VALID, 1);
  SOHU_CMD_SET(c, SOHU_ADMIN_SET_CONTEXT_ENTRIES, entries.size());
  try {
    admin(c);
  } catch (...) {
    spare_dma_.emplace(table.size, table);
    throw;
  }
  spare_dma_.emplace(table.size, table);  // the device has read it: reusable
}

void Device::assign_vf_context(unsigned vf, std::uint16_t context) {
  require_physical("assign_vf_context", "VF_CONTEXT");
  Command c = admin_command(SOHU_ADMIN_OP_VF_CONTEXT);
  SOHU_CMD_SET(c, SOHU_ADMIN_VF_CONTEXT_VF, vf);
  SOHU_CMD_SET(c, SOHU_ADMIN_VF_CONTEXT_CONTEXT, context);
  admin(c);
}

std::uint64_t Device::trace_configure(std::uint64_t ring_bytes, unsigned mask) {
  require_physical("trace_configure", "the trace unit");
  if (ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1)) != 0 ||
      ring_bytes > SOHU_GET(SOHU_ADMIN_TRACE_CONFIG_SIZE_MASK, SOHU_ADMIN_TRACE_CONFIG_SIZE)) {
    throw std::invalid_argument(label() + ": trace_configure: ring of " + std::to_string(ring_bytes) +
                                " bytes (a power of two, 4096 .. 2^31)");
  }
  const auto mask_max = SOHU_GET(SOHU_ADMIN_TRACE_CONFIG_MASK_MASK, SOHU_ADMIN_TRACE_CONFIG_MASK);
  if (mask > mask_max) {
    throw std::invalid_argument(label() + ": trace_configure: mask " + hex(mask) + " (classes are bits 0.." +
                                std::to_string(SOHU_TRC_MASK_IRQ_SHIFT) + ")");
  }
  const DmaBuffer ring = take_dma(ring_bytes, 4096);
  Command c = admin_command(SOHU_ADMIN_OP_TRACE_CONFIG);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_RING, ring.iova);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_SIZE, ring_bytes);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_MASK, mask);
  SOHU_CMD_SET(c, SOHU_ADMIN_TRACE_CONFIG_ENABLE, 1);
  try {
    admin(c);
  } catch (...) {
    spare_dma_.emplace(ring.size, ring);
    throw;
  }
  // The device writes only the new ring from here on.
  if (trace_ring_.size != 0) spare_dma_.emplace(trace_ring_.size, trace_ring_);
  trace_ring_ = ring;
  return ring.iova;
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
