#include "sohusim/platform/host_system.hpp"

#include <algorithm>
#include <stdexcept>

#include "sohusim/device/exec/replay_cache.hpp"
#include "sohusim/pcie/link_params.hpp"
#include "sohusim/pcie/pcie_schema.hpp"

namespace sohusim::platform {

HostSystem::HostSystem(const config::Config& config, const sim::Instrumentation& inst, const std::string& host,
                       const std::string& device, unsigned index)
    : HostSystem(config, inst, host,
                 std::vector<DeviceSlot>{DeviceSlot{device, index, nullptr, sim::Instrumentation{}}}) {}

HostSystem::HostSystem(const config::Config& config, const sim::Instrumentation& inst, const std::string& host,
                       const std::vector<DeviceSlot>& devices)
    : host_(host) {
  if (devices.empty() || devices.size() > kMaxDevices) {
    throw std::invalid_argument("host `" + host + "`: " + std::to_string(devices.size()) + " devices (allowed 1 .. " +
                                std::to_string(kMaxDevices) + " per host)");
  }
  memory::HostDramParams hp = memory::HostDramParams::from_config(config);
  hp.functional = true;
  hp.validate();
  dram_ = std::make_unique<memory::HostDram>((host + "_dram").c_str(), hp, inst, host + ".dram");
  pcie::IommuParams ip = pcie::iommu_params_from_config(config);
  ip.validate();
  if (ip.enabled) iommu_ = std::make_unique<pcie::Iommu>(ip, counters::Scope(*inst.registry, host + ".iommu"));
  dma_limit_ = ip.page_table_base;
  irq_ = std::make_unique<pcie::InterruptController>(inst, host + ".irq");
  pcie::RootComplexParams rp = pcie::RootComplexParams::from_config(config);
  rp.validate();
  cpu_ = std::make_unique<host::CpuAgent>((host + "_cpu").c_str(), rp.ecam_base, kCpuMemoryAccessPs);
  cpu_->memory.bind(dram_->socket);
  // The CPU's MMIO goes to the root port whose device owns the address: its ECAM bus window
  // and its two BAR windows. Ranges keep their global addresses (target_offset = base).
  mmio_router_ = std::make_unique<sim::AddressRouter>((host + "_mmio").c_str());
  cpu_->mmio.bind(mmio_router_->target_socket);

  slots_.resize(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceSlot& d = devices[i];
    const config::Config& dc = d.config != nullptr ? *d.config : config;
    const sim::Instrumentation& di = d.inst.registry != nullptr ? d.inst : inst;
    Slot& s = slots_[i];
    const auto n = static_cast<unsigned>(i);
    const std::string tag = host + "_" + d.name;
    const pcie::LinkParams lp = pcie::LinkParams::from_config(dc);
    pcie::RootComplexParams drp = rp;
    s.link = std::make_unique<pcie::PcieLink>((tag + "_link").c_str(), lp, inst, host + ".pcie." + d.name);
    s.rc_port = std::make_unique<pcie::PciePort>((tag + "_rc_port").c_str(), lp, pcie::PortParams{}, s.link->down(),
                                                 s.link->up(), inst, host + ".pcie." + d.name + ".rc");
    s.ep_port = std::make_unique<pcie::PciePort>((tag + "_ep_port").c_str(), lp, pcie::PortParams{}, s.link->up(),
                                                 s.link->down(), di, d.name + ".pcie");
    // Root port i's stats: host0.rc for the first (as on a one-device host), host0.rc<i> after.
    const std::string rc_prefix = host + ".rc" + (n == 0 ? std::string() : std::to_string(n));
    s.rc = std::make_unique<pcie::RootComplex>((tag + "_rc").c_str(), drp, *s.rc_port, iommu_.get(), *irq_, inst,
                                               rc_prefix);
    s.rc->memory_socket.bind(dram_->socket);
    s.device = std::make_unique<device::SohuDevice>(d.name.c_str(), dc, di, d.name, d.index);
    s.ep = std::make_unique<pcie::PcieEndpoint>(
        (d.name + "_ep").c_str(), device_rid(n),
        device::SohuDevice::function_spec(s.device->params(), lp.generation, lp.lanes), *s.ep_port, *s.link, di,
        d.name + ".ep");
    s.ep->bar_socket.bind(s.device->bar);
    s.device->host_dma.bind(s.ep->dma_socket);
    s.device->attach(*s.ep);
    mmio_router_->initiator_socket.bind(s.rc->cpu_socket);
    const std::uint64_t ecam = rp.ecam_base + (static_cast<std::uint64_t>(n + 1) << 20);
    mmio_router_->map(sim::AddressRange{ecam, 1ULL << 20, n, ecam, d.name + " config"});
    mmio_router_->map(sim::AddressRange{bar0_address(n), kBar0Stride, n, bar0_address(n), d.name + " BAR0"});
    mmio_router_->map(sim::AddressRange{bar2_address(n), kBar2Stride, n, bar2_address(n), d.name + " BAR2"});
    if (iommu_) {
      s.domain = iommu_->create_domain();
      iommu_->attach(device_rid(n), s.domain);
    }
  }
  // Devices of one configuration share their replay records (a system of several hosts
  // regroups them across hosts).
  std::vector<device::SohuDevice*> built;
  for (Slot& s : slots_) built.push_back(s.device.get());
  share_replays(built);
}

HostSystem::~HostSystem() = default;

int HostSystem::slot_of(pcie::RequesterId rid) const {
  for (unsigned i = 0; i < slots_.size(); ++i) {
    if (device_rid(i) == rid) return static_cast<int>(i);
  }
  return -1;
}

void HostSystem::sync_stats() {
  for (Slot& s : slots_) s.link->sync_stats();
}

int HostSystem::function_slot(pcie::RequesterId rid) const {
  const unsigned bus = pcie::rid_bus(rid);
  if (bus < 1 || bus > slots_.size()) return -1;
  const unsigned n = bus - 1;
  if (rid == device_rid(n)) return static_cast<int>(n);
  const pcie::Sriov* sr = slots_[n].ep->pf().sriov();
  if (sr == nullptr) return -1;
  for (unsigned v = 0; v < sr->total_vfs(); ++v) {
    if (sr->vf_rid(device_rid(n), v) == rid) return static_cast<int>(n);
  }
  return -1;
}

std::string HostSystem::describe_functions(unsigned slot) const {
  std::string s = "PF " + pcie::format_rid(device_rid(slot));
  if (const pcie::Sriov* sr = slots_.at(slot).ep->pf().sriov()) {
    s += ", VFs " + pcie::format_rid(sr->vf_rid(device_rid(slot), 0)) + " .. " +
         pcie::format_rid(sr->vf_rid(device_rid(slot), sr->total_vfs() - 1u));
  }
  return s;
}

unsigned HostSystem::checked_function_slot(pcie::RequesterId rid, const char* call) const {
  const int n = function_slot(rid);
  if (n >= 0) return static_cast<unsigned>(n);
  const unsigned bus = pcie::rid_bus(rid);
  throw std::invalid_argument(
      std::string(call) + ": requester " + pcie::format_rid(rid) + " is not a function of host `" + host_ + "`" +
      (bus >= 1 && bus <= slots_.size()
           ? " (its device " + slots_[bus - 1].device->prefix() + " has " + describe_functions(bus - 1) + ")"
           : " (its devices are on buses 1.." + std::to_string(slots_.size()) + ")"));
}

pcie::DomainId HostSystem::attach_function(pcie::RequesterId rid) {
  return function_domain(rid, checked_function_slot(rid, "attach_function"));
}

pcie::DomainId HostSystem::function_domain(pcie::RequesterId rid, unsigned n) {
  if (!iommu_) return pcie::kNoDomain;
  if (rid == device_rid(n)) return slots_[n].domain;
  pcie::DomainId d = iommu_->domain_of(rid);
  if (d == pcie::kNoDomain) {
    // A VF's own domain, as VFIO gives each VF an IOMMU group of its own: its DMA sees
    // only what was mapped for it.
    d = iommu_->create_domain();
    iommu_->attach(rid, d);
  }
  return d;
}

std::uint64_t HostSystem::take_dma(std::uint64_t bytes, std::uint64_t align, std::uint64_t& size) {
  if (align == 0 || (align & (align - 1)) != 0)
    throw std::invalid_argument("alloc_dma: alignment must be a power of two");
  // A large pinned buffer sits in 2 MiB host pages (hugepage-backed, as drivers and
  // runtimes allocate their staging buffers), so that the IOMMU can map it with 2 MiB
  // superpages; not when the IOMMU maps 4 KiB pages only.
  if (iommu_ && iommu_->params().max_page_bytes > pcie::Iommu::kPageBytes && bytes >= pcie::Iommu::k2MiB)
    align = std::max<std::uint64_t>(align, pcie::Iommu::k2MiB);
  const std::uint64_t a = (next_dma_ + align - 1) & ~(align - 1);
  size = (bytes + 4095) & ~4095ULL;
  if (bytes == 0 || a + size > dma_limit_ || a + size < a) {
    throw std::runtime_error("alloc_dma: " + std::to_string(bytes) +
                             " bytes do not fit in host DRAM below the IOMMU tables (" +
                             std::to_string(dma_limit_ - next_dma_) + " bytes left)");
  }
  next_dma_ = a + size;
  return a;
}

std::uint64_t HostSystem::alloc_dma(std::uint64_t bytes, std::uint64_t align, unsigned device) {
  if (device >= slots_.size()) {
    throw std::invalid_argument("alloc_dma: device " + std::to_string(device) + " does not exist (host `" + host_ +
                                "` has " + std::to_string(slots_.size()) + ")");
  }
  std::uint64_t size = 0;
  const std::uint64_t a = take_dma(bytes, align, size);
  if (iommu_) iommu_->map(slots_[device].domain, a, a, size, pcie::IommuPerm::ReadWrite);
  return a;
}

std::uint64_t HostSystem::alloc_dma_for(pcie::RequesterId rid, std::uint64_t bytes, std::uint64_t align) {
  const pcie::DomainId d = function_domain(rid, checked_function_slot(rid, "alloc_dma"));  // before any memory is taken
  std::uint64_t size = 0;
  const std::uint64_t a = take_dma(bytes, align, size);
  if (iommu_) iommu_->map(d, a, a, size, pcie::IommuPerm::ReadWrite);
  return a;
}

}  // namespace sohusim::platform
