#include "sohusim/pcie/root_complex.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "sohusim/sim/correlation_extension.hpp"

namespace sohusim::pcie {

using sc_core::sc_time;

namespace {
std::uint64_t ps(double seconds) {
  return static_cast<std::uint64_t>(std::llround(seconds * 1e12));
}
}  // namespace

RootComplexParams RootComplexParams::from_config(const config::Config& c) {
  RootComplexParams p;
  p.cpu_mmio_latency_ps = ps(c.get_quantity("pcie.root.cpu_mmio_latency"));
  p.cpu_posted_write_ps = ps(c.get_quantity("pcie.root.cpu_posted_write"));
  p.numa_nodes = static_cast<unsigned>(c.get_uint("pcie.root.numa_nodes"));
  p.node_bytes = static_cast<std::uint64_t>(c.get_quantity("pcie.root.node_bytes"));
  p.device_node = static_cast<unsigned>(c.get_uint("pcie.root.device_node"));
  p.remote_latency_ps = ps(c.get_quantity("pcie.root.remote_latency"));
  p.remote_bandwidth = c.get_quantity("pcie.root.remote_bandwidth");
  return p;
}

void RootComplexParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("root complex: " + what); };
  if (numa_nodes == 0) fail("numa_nodes must be at least 1");
  if (device_node >= numa_nodes) {
    fail("device_node " + std::to_string(device_node) + " does not exist (numa_nodes is " + std::to_string(numa_nodes) +
         ")");
  }
  if (node_bytes == 0) fail("node_bytes must be non-zero");
  if (!(remote_bandwidth > 0)) fail("remote_bandwidth must be positive");
  if (ecam_size == 0 || ecam_size > (256ULL << 20)) fail("the ECAM window holds at most 256 buses (256 MiB)");
}

RootComplex::RootComplex(sc_core::sc_module_name name, const RootComplexParams& params, PciePort& port, Iommu* iommu,
                         InterruptController& interrupts, const sim::Instrumentation& inst, const std::string& prefix)
    : sc_core::sc_module(name),
      cpu_socket("cpu_socket"),
      memory_socket("memory_socket"),
      params_(params),
      port_(port),
      iommu_(iommu),
      interrupts_(interrupts),
      mmio_reads_(inst.registry->counter(prefix + ".mmio_reads", "accesses", "CPU MMIO reads sent to the device")),
      mmio_writes_(inst.registry->counter(prefix + ".mmio_writes", "accesses", "CPU MMIO writes sent to the device")),
      config_reads_(inst.registry->counter(prefix + ".config_reads", "accesses", "configuration reads (ECAM)")),
      config_writes_(inst.registry->counter(prefix + ".config_writes", "accesses", "configuration writes (ECAM)")),
      mmio_ur_(inst.registry->counter(prefix + ".mmio_unsupported", "accesses",
                                      "CPU reads answered Unsupported Request (read as all ones)")),
      dma_reads_(inst.registry->counter(prefix + ".dma_reads", "requests", "device reads of host memory (TLPs)")),
      dma_writes_(inst.registry->counter(prefix + ".dma_writes", "requests", "device writes to host memory (TLPs)")),
      dma_bytes_(inst.registry->counter(prefix + ".dma_bytes", "B", "bytes the device moved to or from host memory")),
      dma_blocked_(inst.registry->counter(prefix + ".dma_blocked", "requests", "DMA blocked by an IOMMU fault")),
      remote_bytes_(inst.registry->counter(prefix + ".remote_bytes", "B",
                                           "DMA bytes to memory on another NUMA node than the device's")),
      msi_(inst.registry->counter(prefix + ".msi", "messages",
                                  "MSI/MSI-X writes delivered to the interrupt controller")),
      mmio_read_latency_(inst.registry->distribution(prefix + ".mmio_read_latency", "ns", "CPU MMIO read round trip",
                                                     counters::DistributionSpec::log(10.0, 1.0e7, 60))) {
  params_.validate();
  cpu_socket.register_b_transport(this, &RootComplex::cpu_b_transport);
  SC_HAS_PROCESS(RootComplex);
  SC_THREAD(posted_writer);
  port_.set_completer(this);
}

void RootComplex::cpu_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
  // The CPU stalls for its access: time passes here, in the caller's thread.
  sc_core::wait(delay);
  delay = sc_core::SC_ZERO_TIME;
  const std::uint64_t t0 = sc_core::sc_time_stamp().value();
  const bool read = gp.is_read();
  const std::uint64_t addr = gp.get_address();
  const unsigned len = gp.get_data_length();
  if (len == 0 || len > 4096 || (!read && !gp.is_write())) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const bool ecam = addr >= params_.ecam_base && addr < params_.ecam_base + params_.ecam_size;
  if (!read && !ecam) {
    // Posted: the CPU pays its store and goes on; the write reaches the root port later.
    PostedWrite w;
    w.at_ps = sc_core::sc_time_stamp().value() + params_.cpu_mmio_latency_ps;
    w.request.type = TlpType::MWr;
    w.request.requester = params_.rid;
    w.request.address = addr;
    w.request.length = len;
    w.request.allow_bulk = false;
    if (const auto* corr = gp.get_extension<sim::CorrelationExtension>()) w.request.correlation = corr->correlation_id;
    w.data.assign(gp.get_data_ptr(), gp.get_data_ptr() + len);
    posted_writes_.push_back(std::move(w));
    posted_queued_.notify(sc_core::SC_ZERO_TIME);
    mmio_writes_.inc();
    sc_core::wait(sc_time::from_value(params_.cpu_posted_write_ps));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  sc_core::wait(sc_time::from_value(params_.cpu_mmio_latency_ps));
  // Reads and configuration requests do not pass the posted writes ahead of them.
  while (!posted_writes_.empty() || writer_busy_) sc_core::wait(posted_drained_);
  PciePort::Request r;
  r.requester = params_.rid;
  r.data = gp.get_data_ptr();
  r.length = len;
  r.allow_bulk = false;
  if (const auto* corr = gp.get_extension<sim::CorrelationExtension>()) r.correlation = corr->correlation_id;
  if (ecam) {
    // ECAM: bus[27:20] device[19:15] function[14:12] register[11:0].
    const std::uint64_t off = addr - params_.ecam_base;
    if (len != 4 || (off & 3) != 0) {
      gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);  // configuration accesses are one aligned dword
      return;
    }
    r.type = read ? TlpType::CfgRd : TlpType::CfgWr;
    r.completer = static_cast<RequesterId>(off >> 12);
    r.address = off & 0xFFF;
    (read ? config_reads_ : config_writes_).inc();
  } else {
    r.type = TlpType::MRd;
    r.address = addr;
    mmio_reads_.inc();
  }
  const PciePort::Result res = port_.transact(r);
  if (read || r.type == TlpType::CfgWr) sc_core::wait(sc_time::from_value(params_.cpu_mmio_latency_ps));
  if (res.status != CplStatus::SC || res.timed_out) {
    if (read) {
      std::memset(gp.get_data_ptr(), 0xFF, len);  // a failed read returns all ones
      mmio_ur_.inc();
    }
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  } else {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  if (read) mmio_read_latency_.sample(static_cast<double>(sc_core::sc_time_stamp().value() - t0) / 1000.0);
}

void RootComplex::posted_writer() {
  for (;;) {
    while (posted_writes_.empty()) sc_core::wait(posted_queued_);
    writer_busy_ = true;
    PostedWrite w = std::move(posted_writes_.front());
    posted_writes_.pop_front();
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    if (w.at_ps > now) sc_core::wait(sc_time::from_value(w.at_ps - now));
    w.request.data = w.data.data();
    port_.transact(w.request);
    writer_busy_ = false;
    if (posted_writes_.empty()) posted_drained_.notify(sc_core::SC_ZERO_TIME);
  }
}

std::uint64_t RootComplex::memory_access(bool write, std::uint64_t addr, std::uint64_t bytes, std::uint8_t* data,
                                         bool& ok, std::uint64_t after_ps) {
  tlm::tlm_generic_payload gp;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(addr);
  gp.set_data_length(static_cast<unsigned>(bytes));
  gp.set_streaming_width(static_cast<unsigned>(bytes));
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // Timing-only accesses carry no data: the memory models accept a null pointer then.
  gp.set_data_ptr(data);
  // The access arrives `after_ps` from now (the LT annotation); the answer is the time from
  // now at which it completes.
  sc_time delay = sc_time::from_value(after_ps);
  memory_socket->b_transport(gp, delay);
  ok = gp.is_response_ok();
  return delay.value();
}

std::uint64_t RootComplex::numa_cost(std::uint64_t addr, std::uint64_t bytes) {
  if (params_.numa_nodes <= 1) return 0;
  const unsigned node =
      static_cast<unsigned>(std::min<std::uint64_t>(addr / params_.node_bytes, params_.numa_nodes - 1));
  if (node == params_.device_node) return 0;
  remote_bytes_.inc(bytes);
  // The inter-socket link: a server of remote_bandwidth, plus its latency.
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  const auto transfer =
      static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) * 1e12 / params_.remote_bandwidth));
  remote_free_ps_ = std::max(remote_free_ps_, now) + transfer;
  return remote_free_ps_ - now + params_.remote_latency_ps;
}

std::uint64_t RootComplex::dma(const Tlp& tlp, bool write, std::uint8_t* read_out, const std::uint8_t* write_data,
                               bool& blocked) {
  blocked = false;
  // Time from now (ps) at which the translation is done and the data access can start.
  std::uint64_t translated = 0;
  IommuTranslation tr;
  if (iommu_ != nullptr) {
    iommu_->translate(tlp.requester, tlp.address, tlp.length, write, tr);
    if (!tr.ok) {
      blocked = true;
      dma_blocked_.inc();
      return 0;
    }
    translated += ps(iommu_->params().iotlb_hit_latency_s) * tr.iotlb_lookups();
    // A walk is a chain of dependent reads: each is issued when the one before it has
    // returned (its arrival is the previous completion, so queueing in host memory is paid
    // when a read meets it, not once per read). Walks run on the IOMMU's page walkers, a
    // pool shared by all DMA: a walk takes the walker that frees first.
    if (!tr.walk_starts.empty()) {
      if (walker_free_ps_.size() != iommu_->params().page_walkers)
        walker_free_ps_.assign(iommu_->params().page_walkers, 0);
      const std::uint64_t now = sc_core::sc_time_stamp().value();
      const std::uint64_t start = translated;
      std::uint8_t entry[8];
      for (std::size_t w = 0; w < tr.walk_starts.size(); ++w) {
        const std::size_t first = tr.walk_starts[w];
        const std::size_t last = w + 1 < tr.walk_starts.size() ? tr.walk_starts[w + 1] : tr.walk_reads.size();
        auto walker = std::min_element(walker_free_ps_.begin(), walker_free_ps_.end());
        std::uint64_t t = std::max(start, *walker > now ? *walker - now : 0);
        for (std::size_t r = first; r < last; ++r) {
          bool walk_ok = true;
          t = memory_access(false, tr.walk_reads[r], 8, entry, walk_ok, t);
        }
        *walker = now + t;
        translated = std::max(translated, t);
      }
    }
  } else {
    tr.ok = true;
    tr.segments.push_back({tlp.address, tlp.address, tlp.length});
  }
  std::uint64_t slowest = translated;
  for (const PhysSegment& s : tr.segments) {
    std::uint8_t* p = nullptr;
    if (read_out != nullptr) p = read_out + (s.iova - tlp.address);
    if (write_data != nullptr) p = const_cast<std::uint8_t*>(write_data) + (s.iova - tlp.address);
    bool ok = true;
    // The data access follows the translation.
    const std::uint64_t t = memory_access(write, s.phys, s.bytes, p, ok, translated) + numa_cost(s.phys, s.bytes);
    if (!ok) {
      blocked = true;  // beyond host memory: the root complex answers UR
      dma_blocked_.inc();
    }
    slowest = std::max(slowest, t);
  }
  dma_bytes_.inc(tlp.length);
  return slowest;
}

std::uint64_t RootComplex::posted(const Tlp& tlp, const std::uint8_t* data) {
  if (InterruptController::is_msi_address(tlp.address)) {
    std::uint32_t value = 0;
    if (data != nullptr) std::memcpy(&value, data, std::min<std::uint32_t>(4, tlp.length));
    msi_.inc();
    interrupts_.deliver(tlp.address, value, tlp.requester);
    return 0;
  }
  dma_writes_.inc(tlp.bulk_tlps);
  bool blocked = false;
  const std::uint64_t t = dma(tlp, true, nullptr, data, blocked);
  // The receive buffer frees when the write has left the root complex: back-pressure
  // comes from the inter-socket link only (host DRAM outruns any PCIe link).
  (void)t;
  if (params_.numa_nodes > 1) {
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    return remote_free_ps_ > now ? remote_free_ps_ - now : 0;
  }
  return 0;
}

Completer::Answer RootComplex::nonposted(const Tlp& tlp, std::uint8_t* read_out, const std::uint8_t*) {
  if (tlp.type != TlpType::MRd) return {CplStatus::UR, 0, false};  // a root port takes no config requests
  dma_reads_.inc(tlp.bulk_tlps);
  bool blocked = false;
  if (tlp.bulk_tlps > 1) {
    // An aggregate of read requests: its first request is timed on its own, so that the
    // port can bound a tag-limited stream by what one request sees.
    Tlp head = tlp;
    head.length = static_cast<std::uint32_t>(tlp.length / tlp.bulk_tlps);
    Tlp rest = tlp;
    rest.address += head.length;
    rest.length -= head.length;
    const std::uint64_t t_head = dma(head, false, read_out, nullptr, blocked);
    bool rest_blocked = false;
    const std::uint64_t t_rest = dma(rest, false, read_out ? read_out + head.length : nullptr, nullptr, rest_blocked);
    if (blocked || rest_blocked) return {CplStatus::UR, 0, false};
    Answer a{CplStatus::SC, std::max(t_head, t_rest), false};
    a.unit_latency_ps = t_head;
    return a;
  }
  const std::uint64_t t = dma(tlp, false, read_out, nullptr, blocked);
  if (blocked) return {CplStatus::UR, 0, false};
  return {CplStatus::SC, t, false};
}

}  // namespace sohusim::pcie
