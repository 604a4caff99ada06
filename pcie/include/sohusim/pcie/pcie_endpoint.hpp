#pragma once
// The device's end of the link: its PCIe functions (a physical function and the SR-IOV
// virtual functions it creates), the routing of requests that arrive over the link, and
// the device's DMA going out.
//
// Arriving requests (Completer): configuration requests go to the function the completer
// ID names (unknown function: UR). Memory requests are decoded against every function's
// BARs (Memory Space Enable, D0): the MSI-X table and PBA are served here; everything else
// goes to the device model through bar_socket with a BarAccessExtension (function, BAR,
// offset; the payload address is the offset). An access that hits no BAR is answered
// Unsupported Request (a read) or dropped (a write), and recorded in the PF's AER status.
// BAR handlers are loosely timed: they annotate their latency on the delay and must not
// call wait().
//
// Device DMA (dma_socket, blocking b_transport from a device thread): the payload's
// CorrelationExtension names the requester (a VF's routing ID; default: the PF). The
// function must have Bus Master Enable set; DMA that targets the device's own BARs is
// blocked and reported (the reentrancy bug class QEMU's device fuzzing found); then the
// request goes out as memory read/write TLPs with the function's requester ID. Completion
// timeouts and poisoned data are recorded in that function's AER status; a failed DMA
// returns TLM_ADDRESS_ERROR_RESPONSE (UR/CA) or TLM_GENERIC_ERROR_RESPONSE (timeout, block).
//
// raise_msix(function, vector): the function's MSI-X table decides (masked: pending bit);
// a deliverable message goes upstream as a 4-byte posted write.
//
// ASPM: a write to the PF's Link Control sets the link's L0s/L1 enables (pcie_link.hpp).
//
// Transitions take time: after a Function Level Reset (100 ms by default) or a D-state
// change through PMCSR (10 ms), the function answers configuration requests with
// Configuration Request Retry Status and memory requests with UR until it is ready again,
// as the spec lets software find out (PCIe Base Spec 6.6.2, PCI PM 5.4.1).
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/bar_access_extension.hpp"
#include "sohusim/pcie/pcie_function.hpp"
#include "sohusim/pcie/pcie_link.hpp"
#include "sohusim/pcie/pcie_port.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie {

class PcieEndpoint : public sc_core::sc_module, public Completer {
 public:
  tlm_utils::simple_initiator_socket<PcieEndpoint> bar_socket;
  tlm_utils::simple_target_socket<PcieEndpoint> dma_socket;

  PcieEndpoint(sc_core::sc_module_name name, RequesterId rid, const PcieFunctionSpec& spec, PciePort& port,
               PcieLink& link, const sim::Instrumentation& inst, const std::string& prefix);

  PhysicalFunction& functions() noexcept { return functions_; }
  PcieFunction& pf() noexcept { return functions_.pf(); }

  /// Raises `vector` of the function `fn` (PF or VF routing ID).
  MsixRaise raise_msix(RequesterId fn, unsigned vector);

  /// DMA blocked by the reentrancy guard or Bus Master Enable, newest last (bounded).
  const std::deque<std::string>& blocked_dma_log() const noexcept { return blocked_log_; }

  // Completer: requests from the host.
  std::uint64_t posted(const Tlp& tlp, const std::uint8_t* data) override;
  Answer nonposted(const Tlp& tlp, std::uint8_t* read_out, const std::uint8_t* write_data) override;

 private:
  void dma_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  std::uint64_t bar_access(const PhysicalFunction::Hit& hit, bool write, std::uint8_t* data, unsigned len,
                           tlm::tlm_response_status& status, std::uint64_t correlation);
  void send_msix(RequesterId fn, const MsixMessage& m);
  void unsupported(const Tlp& tlp);
  PcieFunction* function_of(RequesterId rid);
  void block(const std::string& why);
  bool busy(RequesterId rid) const;

  std::map<RequesterId, std::uint64_t> busy_until_ps_;
  PhysicalFunction functions_;
  PciePort& port_;
  PcieLink& link_;
  std::deque<std::string> blocked_log_;
  counters::Counter& mmio_reads_;
  counters::Counter& mmio_writes_;
  counters::Counter& config_reads_;
  counters::Counter& config_writes_;
  counters::Counter& unsupported_;
  counters::Counter& dma_reads_;
  counters::Counter& dma_writes_;
  counters::Counter& dma_bytes_;
  counters::Counter& dma_errors_;
  counters::Counter& dma_blocked_;
  counters::Counter& msix_sent_;
  counters::Counter& msix_pended_;
  counters::Counter& flrs_;
  counters::Counter& retries_;
};

}  // namespace sohusim::pcie
