// A host with one device behind a PCIe link, the way platform/ will assemble it: host
// DRAM (functional), root complex with IOMMU and interrupt controller, link, endpoint
// with a PF (BAR0 registers + MSI-X, BAR2 memory aperture, SR-IOV with 4 VFs), a fake
// device behind the endpoint (registers, DMA initiator) and a CPU that issues MMIO.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "link_harness.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/host_dram.hpp"
#include "sohusim/pcie/interrupt_controller.hpp"
#include "sohusim/pcie/iommu.hpp"
#include "sohusim/pcie/pcie_endpoint.hpp"
#include "sohusim/pcie/root_complex.hpp"
#include "sohusim/sim/correlation_extension.hpp"

namespace sohusim::pcie::test {

constexpr RequesterId kDeviceRid = make_rid(1, 0, 0);

inline PcieFunctionSpec device_spec() {
  PcieFunctionSpec s;
  s.ids.vendor_id = 0x1e5c;  // an unassigned-looking vendor ID for the virtual device
  s.ids.device_id = 0x5001;
  s.ids.class_code = 0x120000;  // processing accelerator
  s.bars = {BarSpec{0, 64 << 10, true, false}, BarSpec{2, 1 << 20, true, true}};
  s.msix = MsixSpec{8, 0, 0x2000, 0, 0x3000};
  s.link_speed_gen = 5;
  SriovSpec v;
  v.total_vfs = 4;
  v.first_vf_offset = 4;
  v.vf_stride = 2;
  v.vf_device_id = 0x5002;
  v.vf_bars = {BarSpec{0, 16 << 10, true, false}};
  v.vf_msix = MsixSpec{2, 0, 0x2000, 0, 0x3000};
  s.sriov = v;
  return s;
}

struct FakeDevice : sc_core::sc_module {
  tlm_utils::simple_target_socket<FakeDevice> regs{"regs"};
  tlm_utils::simple_initiator_socket<FakeDevice> dma{"dma"};
  std::map<std::pair<RequesterId, std::uint64_t>, std::uint32_t> values;
  std::vector<BarAccessExtension> seen;

  explicit FakeDevice(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    regs.register_b_transport(this, &FakeDevice::access);
  }
  void access(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const BarAccessExtension* ext = gp.get_extension<BarAccessExtension>();
    if (ext != nullptr) seen.push_back(*ext);
    const std::pair<RequesterId, std::uint64_t> key{ext ? ext->function : 0, gp.get_address()};
    std::uint32_t v = 0;
    if (gp.is_write()) {
      std::memcpy(&v, gp.get_data_ptr(), std::min(4u, gp.get_data_length()));
      values[key] = v;
    } else {
      auto it = values.find(key);
      v = it == values.end() ? 0xC0DE0000u | static_cast<std::uint32_t>(gp.get_address() & 0xFFFF) : it->second;
      std::memcpy(gp.get_data_ptr(), &v, std::min(4u, gp.get_data_length()));
    }
    delay += sc_core::sc_time(100, sc_core::SC_NS);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  /// DMA as function `rid`; blocking.
  tlm::tlm_response_status transfer(bool write, std::uint64_t addr, std::uint8_t* data, unsigned len, RequesterId rid) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    sim::CorrelationExtension corr(7, rid);
    gp.set_extension(&corr);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    dma->b_transport(gp, delay);
    gp.clear_extension(&corr);
    return gp.get_response_status();
  }
};

struct Cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Cpu> socket{"socket"};
  explicit Cpu(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  std::uint32_t read32(std::uint64_t addr, tlm::tlm_response_status* status = nullptr) {
    std::uint32_t v = 0;
    access(false, addr, &v, status);
    return v;
  }
  void write32(std::uint64_t addr, std::uint32_t v, tlm::tlm_response_status* status = nullptr) {
    access(true, addr, &v, status);
  }
  static std::uint64_t ecam(RequesterId rid, unsigned reg) {
    return 0xE000'0000ULL + (static_cast<std::uint64_t>(rid) << 12) + reg;
  }
  std::uint32_t cfg_read(RequesterId rid, unsigned reg) { return read32(ecam(rid, reg)); }
  void cfg_write(RequesterId rid, unsigned reg, std::uint32_t v) { write32(ecam(rid, reg), v); }

 private:
  void access(bool write, std::uint64_t addr, std::uint32_t* v, tlm::tlm_response_status* status) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(v));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(gp, delay);
    if (status != nullptr) *status = gp.get_response_status();
  }
};

struct SystemBench {
  counters::Registry registry;
  sim::Instrumentation inst;
  std::unique_ptr<memory::HostDram> dram;
  std::unique_ptr<Iommu> iommu;
  std::unique_ptr<InterruptController> irq;
  std::unique_ptr<PcieLink> link;
  std::unique_ptr<PciePort> rc_port, ep_port;
  std::unique_ptr<RootComplex> rc;
  std::unique_ptr<PcieEndpoint> ep;
  std::unique_ptr<FakeDevice> device;
  std::unique_ptr<Cpu> cpu;

  explicit SystemBench(RootComplexParams root = {}, LinkParams lp = {}, bool with_iommu = true, IommuParams ip = {}) {
    inst.registry = &registry;
    memory::HostDramParams hp;
    hp.capacity = 1ULL << 30;
    hp.functional = true;
    dram = std::make_unique<memory::HostDram>("dram", hp, inst, "host0.dram");
    ip.page_table_base = hp.capacity - (64ULL << 20);
    ip.page_table_bytes = 64ULL << 20;
    if (with_iommu) iommu = std::make_unique<Iommu>(ip, counters::Scope(registry, "host0.iommu"));
    irq = std::make_unique<InterruptController>(inst, "host0.irq");
    link = std::make_unique<PcieLink>("link", lp, inst, "host0.pcie.dev0");
    rc_port =
        std::make_unique<PciePort>("rc_port", lp, PortParams{}, link->down(), link->up(), inst, "host0.pcie.dev0.rc");
    ep_port = std::make_unique<PciePort>("ep_port", lp, PortParams{}, link->up(), link->down(), inst, "dev0.pcie");
    rc = std::make_unique<RootComplex>("rc", root, *rc_port, iommu.get(), *irq, inst, "host0.rc");
    rc->memory_socket.bind(dram->socket);
    ep = std::make_unique<PcieEndpoint>("ep", kDeviceRid, device_spec(), *ep_port, *link, inst, "dev0.ep");
    device = std::make_unique<FakeDevice>("device");
    ep->bar_socket.bind(device->regs);
    device->dma.bind(ep->dma_socket);
    cpu = std::make_unique<Cpu>("cpu");
    cpu->socket.bind(rc->cpu_socket);
  }

  /// What a driver's probe does: size and place the BARs (BAR0 at 0xF000_0000, BAR2 at
  /// 0xF800_0000), enable memory space and bus mastering.
  void enumerate() {
    const RequesterId d = kDeviceRid;
    cpu->cfg_write(d, 0x10, 0xFFFFFFFF);
    cpu->cfg_write(d, 0x14, 0xFFFFFFFF);
    bar0_size = ~(cpu->cfg_read(d, 0x10) & ~0xFu) + 1;
    cpu->cfg_write(d, 0x10, 0xF000'0000);
    cpu->cfg_write(d, 0x14, 0);
    cpu->cfg_write(d, 0x18, 0xF800'0000);
    cpu->cfg_write(d, 0x1C, 0);
    cpu->cfg_write(d, 0x04, 0x6);  // Memory Space + Bus Master
  }
  std::uint32_t bar0_size = 0;
  double count(const std::string& n) const { return registry.value(n); }
};

}  // namespace sohusim::pcie::test
