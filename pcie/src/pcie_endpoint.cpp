#include "sohusim/pcie/pcie_endpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sohusim/sim/correlation_extension.hpp"

namespace sohusim::pcie {

using sc_core::sc_time;

namespace {
// The first dword pair of a TLP header as AER's header log keeps it (type, length,
// requester, tag, address): enough to find the access in a capture.
std::array<std::uint32_t, 4> header_of(const Tlp& t) {
  return {static_cast<std::uint32_t>(static_cast<unsigned>(t.type) << 24 | (t.length / 4 & 0x3FF)),
          static_cast<std::uint32_t>(t.requester) << 16 | static_cast<std::uint32_t>(t.tag & 0xFF) << 8,
          static_cast<std::uint32_t>(t.address >> 32), static_cast<std::uint32_t>(t.address)};
}
constexpr std::size_t kBlockedLogSize = 64;
}  // namespace

PcieEndpoint::PcieEndpoint(sc_core::sc_module_name name, RequesterId rid, const PcieFunctionSpec& spec, PciePort& port,
                           PcieLink& link, const sim::Instrumentation& inst, const std::string& prefix)
    : sc_core::sc_module(name),
      bar_socket("bar_socket"),
      dma_socket("dma_socket"),
      functions_(rid, spec),
      port_(port),
      link_(link),
      mmio_reads_(inst.registry->counter(prefix + ".mmio_reads", "accesses", "host reads of the device's BARs")),
      mmio_writes_(inst.registry->counter(prefix + ".mmio_writes", "accesses", "host writes to the device's BARs")),
      config_reads_(inst.registry->counter(prefix + ".config_reads", "accesses", "configuration reads")),
      config_writes_(inst.registry->counter(prefix + ".config_writes", "accesses", "configuration writes")),
      unsupported_(inst.registry->counter(prefix + ".unsupported_requests", "requests",
                                          "requests that hit no BAR or function (UR)")),
      dma_reads_(inst.registry->counter(prefix + ".dma_reads", "requests", "DMA reads of host memory")),
      dma_writes_(inst.registry->counter(prefix + ".dma_writes", "requests", "DMA writes to host memory")),
      dma_bytes_(inst.registry->counter(prefix + ".dma_bytes", "B", "bytes moved by DMA")),
      dma_errors_(inst.registry->counter(prefix + ".dma_errors", "requests", "DMA that failed (UR, CA, timeout)")),
      dma_blocked_(inst.registry->counter(prefix + ".dma_blocked", "requests",
                                          "DMA blocked at the device: reentrancy guard or Bus Master Enable off")),
      msix_sent_(inst.registry->counter(prefix + ".msix_sent", "messages", "MSI-X messages sent")),
      msix_pended_(inst.registry->counter(prefix + ".msix_pended", "messages",
                                          "MSI-X raises left pending (masked or disabled)")),
      flrs_(inst.registry->counter(prefix + ".function_level_resets", "resets", "Function Level Resets")),
      retries_(inst.registry->counter(prefix + ".config_retries", "requests",
                                      "configuration requests answered CRS during a reset or D-state change")) {
  dma_socket.register_b_transport(this, &PcieEndpoint::dma_b_transport);
  port_.set_completer(this);
  const LinkParams& lp = link.params();
  functions_.set_link_status(lp.generation, lp.lanes);
  port_.set_error_listener([this](PortError e, const Tlp& t) {
    PcieFunction* f = function_of(t.requester);
    if (f == nullptr) f = &functions_.pf();
    switch (e) {
      case PortError::CompletionTimeout:
        f->aer().completion_timeout();
        break;
      case PortError::UnexpectedCompletion:
        f->aer().unexpected_completion(header_of(t));
        break;
      case PortError::PoisonedReceived:
        f->aer().poisoned_tlp(header_of(t));
        break;
    }
  });
  // LCRC errors on TLPs to the device are its receiver's; replay rollovers on its own
  // transmitter are its data link layer's.
  link.down().set_error_listener([this](LinkError e) {
    if (e == LinkError::BadTlp) functions_.pf().aer().bad_tlp();
  });
  link.up().set_error_listener([this](LinkError e) {
    if (e == LinkError::ReplayRollover) functions_.pf().aer().replay_num_rollover();
  });
}

PcieFunction* PcieEndpoint::function_of(RequesterId rid) {
  return functions_.find_by_rid(rid);
}

bool PcieEndpoint::busy(RequesterId rid) const {
  auto it = busy_until_ps_.find(rid);
  return it != busy_until_ps_.end() && sc_core::sc_time_stamp().value() < it->second;
}

void PcieEndpoint::unsupported(const Tlp& tlp) {
  unsupported_.inc();
  functions_.pf().aer().unsupported_request(header_of(tlp));
}

void PcieEndpoint::send_msix(RequesterId fn, const MsixMessage& m) {
  PcieFunction* f = function_of(fn);
  if (f != nullptr && !f->bus_master_enabled()) {
    msix_pended_.inc();  // a function without Bus Master Enable sends no messages
    return;
  }
  PciePort::Request r;
  r.type = TlpType::MWr;
  r.requester = fn;
  r.address = m.address;
  r.length = 4;
  std::uint8_t bytes[4];
  std::memcpy(bytes, &m.data, 4);
  r.data = bytes;  // post() copies it
  port_.post(r);
  msix_sent_.inc();
}

MsixRaise PcieEndpoint::raise_msix(RequesterId fn, unsigned vector) {
  PcieFunction* f = function_of(fn);
  if (f == nullptr || f->msix() == nullptr) return MsixRaise::BadVector;
  const MsixRaiseResult r = f->msix()->raise(vector);
  if (r.outcome == MsixRaise::Delivered && r.message) {
    send_msix(fn, *r.message);
  } else if (r.outcome == MsixRaise::Pending) {
    msix_pended_.inc();
  }
  return r.outcome;
}

std::uint64_t PcieEndpoint::bar_access(const PhysicalFunction::Hit& hit, bool write, std::uint8_t* data, unsigned len,
                                       tlm::tlm_response_status& status, std::uint64_t correlation) {
  PcieFunction& f = *hit.function;
  if (f.msix() != nullptr && f.msix()->contains(hit.bar, hit.offset)) {
    if (write) {
      std::uint64_t value = 0;
      if (data != nullptr) std::memcpy(&value, data, std::min<unsigned>(len, 8));
      const MsixMmioResult r = f.msix()->mmio_write(hit.bar, hit.offset, len, value);
      for (const MsixMessage& m : r.messages) send_msix(f.rid(), m);
      status = r.status == MsixStatus::Ok || r.status == MsixStatus::ReadOnly ? tlm::TLM_OK_RESPONSE
                                                                              : tlm::TLM_ADDRESS_ERROR_RESPONSE;
    } else {
      const MsixMmioResult r = f.msix()->mmio_read(hit.bar, hit.offset, len);
      if (data != nullptr) std::memcpy(data, &r.value, std::min<unsigned>(len, 8));
      status = r.status == MsixStatus::Ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE;
    }
    return 0;
  }
  std::vector<std::uint8_t> scratch;
  if (data == nullptr) {
    scratch.assign(len, 0);
    data = scratch.data();
  }
  tlm::tlm_generic_payload gp;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(hit.offset);
  gp.set_data_ptr(data);
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  BarAccessExtension ext(f.rid(), f.is_virtual(), f.vf_index(), hit.bar, hit.offset);
  sim::CorrelationExtension corr(correlation, f.rid());
  gp.set_extension(&ext);
  gp.set_extension(&corr);
  sc_time delay = sc_core::SC_ZERO_TIME;
  bar_socket->b_transport(gp, delay);
  gp.clear_extension(&ext);
  gp.clear_extension(&corr);
  status = gp.get_response_status();
  return delay.value();
}

std::uint64_t PcieEndpoint::posted(const Tlp& tlp, const std::uint8_t* data) {
  const auto hit = functions_.decode(tlp.address);
  if (!hit || tlp.type != TlpType::MWr || busy(hit->function->rid())) {
    unsupported(tlp);  // a posted request gets no completion: only the error is logged
    return 0;
  }
  mmio_writes_.inc();
  std::vector<std::uint8_t> copy;
  if (data != nullptr) copy.assign(data, data + tlp.length);
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  bar_access(*hit, true, data != nullptr ? copy.data() : nullptr, tlp.length, status, tlp.correlation);
  return 0;
}

Completer::Answer PcieEndpoint::nonposted(const Tlp& tlp, std::uint8_t* read_out, const std::uint8_t* write_data) {
  if (tlp.type == TlpType::CfgRd || tlp.type == TlpType::CfgWr) {
    PcieFunction* f = function_of(tlp.completer);
    if (f == nullptr || tlp.address > 0xFFC) {
      unsupported(tlp);
      return {CplStatus::UR, 0, false};
    }
    if (busy(f->rid())) {
      retries_.inc();
      return {CplStatus::CRS, 0, false};
    }
    const auto offset = static_cast<std::uint32_t>(tlp.address);
    if (tlp.type == TlpType::CfgRd) {
      config_reads_.inc();
      const std::uint32_t v = f->config_read(offset, 4);
      if (read_out != nullptr) std::memcpy(read_out, &v, 4);
      return {CplStatus::SC, 0, false};
    }
    config_writes_.inc();
    std::uint32_t v = 0;
    if (write_data != nullptr) std::memcpy(&v, write_data, 4);
    const RequesterId rid = f->rid();
    const bool link_control = !f->is_virtual() && f->pcie_cap_offset() != 0 && offset == f->pcie_cap_offset() + 0x10u;
    const ConfigWriteResult r = f->config_write(offset, 4, v);  // may remove VFs (f invalid after)
    if (link_control) {
      // Link Control's ASPM Control field (bit 0 L0s, bit 1 L1) sets the link's ASPM.
      const unsigned aspm = functions_.pf().aspm_control();
      link_.set_aspm((aspm & 1u) != 0, (aspm & 2u) != 0);
    }
    if (r.flr) flrs_.inc();
    if (r.busy_ps > 0) busy_until_ps_[rid] = sc_core::sc_time_stamp().value() + r.busy_ps;
    for (const MsixMessage& m : r.msix_messages) send_msix(rid, m);
    return {CplStatus::SC, 0, false};
  }
  if (tlp.type != TlpType::MRd) {
    unsupported(tlp);
    return {CplStatus::UR, 0, false};
  }
  const auto hit = functions_.decode(tlp.address);
  if (!hit || busy(hit->function->rid())) {
    unsupported(tlp);
    return {CplStatus::UR, 0, false};
  }
  mmio_reads_.inc();
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  const std::uint64_t latency = bar_access(*hit, false, read_out, tlp.length, status, tlp.correlation);
  if (status != tlm::TLM_OK_RESPONSE) return {CplStatus::CA, latency, false};
  return {CplStatus::SC, latency, false};
}

void PcieEndpoint::block(const std::string& why) {
  dma_blocked_.inc();
  blocked_log_.push_back(why);
  if (blocked_log_.size() > kBlockedLogSize) blocked_log_.pop_front();
}

void PcieEndpoint::dma_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
  sc_core::wait(delay);
  delay = sc_core::SC_ZERO_TIME;
  RequesterId rid = functions_.pf().rid();
  std::uint64_t correlation = 0;
  if (const auto* c = gp.get_extension<sim::CorrelationExtension>()) {
    if (c->requester) rid = static_cast<RequesterId>(*c->requester);
    correlation = c->correlation_id;
  }
  const std::uint64_t addr = gp.get_address();
  const std::uint64_t len = gp.get_data_length();
  char what[160];
  PcieFunction* f = function_of(rid);
  if (f == nullptr || len == 0 || !(gp.is_read() || gp.is_write())) {
    std::snprintf(what, sizeof what, "DMA from unknown function %s or empty/invalid command", format_rid(rid).c_str());
    block(what);
    gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (!f->bus_master_enabled()) {
    std::snprintf(what, sizeof what, "DMA by %s at 0x%llx blocked: Bus Master Enable is off", format_rid(rid).c_str(),
                  static_cast<unsigned long long>(addr));
    block(what);
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  // Reentrancy guard: DMA into the device's own BARs would re-enter its register handlers.
  for (PcieFunction* g : functions_.functions()) {
    for (unsigned b = 0; b < kNumBarSlots; ++b) {
      const VfBarWindow w = g->bar_window(b);
      if (w.size == 0 || w.base == 0) continue;
      if (addr < w.base + w.size && w.base < addr + len) {
        std::snprintf(what, sizeof what, "DMA by %s at 0x%llx+%llu targets the device's own BAR%u of %s: blocked",
                      format_rid(rid).c_str(), static_cast<unsigned long long>(addr),
                      static_cast<unsigned long long>(len), b, format_rid(g->rid()).c_str());
        block(what);
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
      }
    }
  }
  PciePort::Request r;
  r.type = gp.is_read() ? TlpType::MRd : TlpType::MWr;
  r.requester = rid;
  r.address = addr;
  r.length = len;
  r.data = gp.get_data_ptr();
  r.correlation = correlation;
  (gp.is_read() ? dma_reads_ : dma_writes_).inc();
  const PciePort::Result res = port_.transact(r);
  dma_bytes_.inc(len);
  if (res.timed_out) {
    dma_errors_.inc();
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  } else if (res.status != CplStatus::SC) {
    dma_errors_.inc();
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  } else {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
}

}  // namespace sohusim::pcie
