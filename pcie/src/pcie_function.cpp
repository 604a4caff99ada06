#include "sohusim/pcie/pcie_function.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace sohusim::pcie {

namespace {

// log2(bytes / 128) for a valid MPS/MRRS size, -1 otherwise.
int size_code(unsigned bytes) {
  for (int code = 0; code <= 5; ++code) {
    if (bytes == (128u << code)) return code;
  }
  return -1;
}

bool overlaps(std::uint32_t offset, unsigned size, std::uint32_t reg, unsigned len) {
  return offset < reg + len && reg < offset + size;
}

}  // namespace

const char* to_string(PowerState s) {
  switch (s) {
    case PowerState::D0:
      return "D0";
    case PowerState::D1:
      return "D1";
    case PowerState::D2:
      return "D2";
    case PowerState::D3hot:
      return "D3hot";
  }
  return "?";
}

void validate(const PcieFunctionSpec& spec, RequesterId rid) {
  if (spec.ids.vendor_id == 0xFFFF) {
    throw std::invalid_argument("ids.vendor_id: 0xffff is reserved (it reads as 'no function present')");
  }
  if (spec.ids.class_code > 0xFFFFFFu) {
    throw std::invalid_argument("ids.class_code: " + std::to_string(spec.ids.class_code) + " does not fit in 24 bits");
  }
  const BarSet bars(spec.bars, cfg::kBar0, "bars");  // throws on a bad BAR
  if (spec.msix) Msix::validate(*spec.msix, "msix", &bars);
  if (size_code(spec.max_payload_size) < 0) {
    throw std::invalid_argument("max_payload_size: " + std::to_string(spec.max_payload_size) +
                                " is not a Max_Payload_Size the spec defines (128, 256, 512, 1024, 2048, 4096)");
  }
  if (spec.link_speed_gen < 1 || spec.link_speed_gen > 6) {
    throw std::invalid_argument("link_speed_gen: " + std::to_string(spec.link_speed_gen) +
                                " (PCIe generations are 1..6)");
  }
  const unsigned w = spec.link_width;
  if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12 && w != 16 && w != 32) {
    throw std::invalid_argument("link_width: x" + std::to_string(w) +
                                " does not exist (x1, x2, x4, x8, x12, x16, x32)");
  }
  if (spec.aspm_support > 3) {
    throw std::invalid_argument("aspm_support: " + std::to_string(spec.aspm_support) + " (bit 0 L0s, bit 1 L1: 0..3)");
  }
  if (spec.l0s_exit_latency > 7) {
    throw std::invalid_argument("l0s_exit_latency: encoding " + std::to_string(spec.l0s_exit_latency) + " (0..7)");
  }
  if (spec.l1_exit_latency > 7) {
    throw std::invalid_argument("l1_exit_latency: encoding " + std::to_string(spec.l1_exit_latency) + " (0..7)");
  }
  if (spec.sriov) Sriov::validate(*spec.sriov, rid);
}

// ---------------------------------------------------------------------------------------------

PcieFunction::PcieFunction(RequesterId rid, const PcieFunctionSpec& spec) : rid_(rid), spec_(spec) {
  validate(spec_, rid_);
  build();
}

PcieFunction::PcieFunction(const PcieFunction& pf, unsigned vf_index, RequesterId rid)
    : rid_(rid), spec_(pf.spec_), pf_(&pf), vf_index_(vf_index) {
  spec_.bars.clear();
  spec_.msix = spec_.sriov->vf_msix;
  spec_.ids.device_id = spec_.sriov->vf_device_id;
  spec_.sriov.reset();
  build();
}

PcieFunction::~PcieFunction() = default;

void PcieFunction::build() {
  Type0HeaderSpec header = spec_.ids;
  if (is_virtual()) {
    header.vendor_id = 0xFFFF;  // SR-IOV 9.3.4.1.1/2: VFs read all ones here
    header.device_id = 0xFFFF;
  } else {
    bars_ = BarSet(spec_.bars, cfg::kBar0, "bars");
  }
  build_type0_header(cs_, header, !is_virtual());
  bars_.install(cs_);

  CapabilityListBuilder caps(cs_);
  if (!is_virtual()) {
    pm_cap_ = caps.add(cfg::kCapIdPowerManagement, cfg::kPmCapLength);
    cs_.define(pm_cap_ + cfg::kPmCapabilities, 2, 0x0003);  // PM spec version 1.2, no D1/D2, no PME
    cs_.define(pm_cap_ + cfg::kPmControlStatus, 2, spec_.no_soft_reset ? cfg::kPmcsrNoSoftReset : 0u,
               cfg::kPmcsrPowerStateMask);
    cs_.define(pm_cap_ + 6u, 2, 0);
  }

  pcie_cap_ = caps.add(cfg::kCapIdPciExpress, cfg::kExpCapLength);
  const std::uint16_t p = pcie_cap_;
  cs_.define(p + cfg::kExpFlags, 2, 0x0002);  // version 2, device/port type 0: PCI Express Endpoint
  const auto mpss = static_cast<std::uint32_t>(size_code(spec_.max_payload_size));
  const std::uint32_t devcap = mpss | cfg::kDevCapExtTag | (7u << 6) | (7u << 9) | cfg::kDevCapRoleBasedError |
                               (spec_.flr_capable || is_virtual() ? cfg::kDevCapFlr : 0u);
  cs_.define(p + cfg::kExpDevCap, 4, devcap);
  // Reset: Relaxed Ordering and No Snoop enabled, MPS 128 B, MRRS 512 B (spec defaults).
  const std::uint32_t devctl_reset = cfg::kDevCtlRelaxedOrdering | cfg::kDevCtlNoSnoop | (2u << cfg::kDevCtlMrrsShift);
  std::uint32_t devctl_rw =
      0x000Fu | cfg::kDevCtlRelaxedOrdering | cfg::kDevCtlExtTag | cfg::kDevCtlNoSnoop | (7u << cfg::kDevCtlMrrsShift);
  if (!is_virtual()) devctl_rw |= 7u << cfg::kDevCtlMpsShift;  // a VF's MPS field is RsvdP: it uses the PF's
  if (spec_.flr_capable || is_virtual()) devctl_rw |= cfg::kDevCtlInitiateFlr;
  cs_.define(p + cfg::kExpDevCtl, 2, devctl_reset, devctl_rw);
  cs_.define(p + cfg::kExpDevSta, 2, 0, 0,
             cfg::kDevStaCorrectable | cfg::kDevStaNonFatal | cfg::kDevStaFatal | cfg::kDevStaUnsupportedRequest);
  const std::uint32_t lnkcap =
      spec_.link_speed_gen | (spec_.link_width << 4) | (spec_.aspm_support << cfg::kLnkCapAspmShift) |
      (spec_.l0s_exit_latency << cfg::kLnkCapL0sExitShift) | (spec_.l1_exit_latency << cfg::kLnkCapL1ExitShift);
  cs_.define(p + cfg::kExpLnkCap, 4, lnkcap);
  // Link Control and Status belong to the link: an FLR leaves them alone (preserve mask).
  const std::uint32_t lnkctl_rw = is_virtual() ? 0u
                                               : (spec_.aspm_support & cfg::kLnkCtlAspmMask) | cfg::kLnkCtlRcb |
                                                     cfg::kLnkCtlCommonClock | cfg::kLnkCtlExtendedSynch;
  cs_.define(p + cfg::kExpLnkCtl, 2, 0, lnkctl_rw, 0, 0xFFFF);
  cs_.define(p + cfg::kExpLnkSta, 2, spec_.link_speed_gen | (spec_.link_width << cfg::kLnkStaWidthShift) | (1u << 12),
             0, 0, 0xFFFF);
  cs_.define(p + cfg::kExpDevCap2, 4, 0);
  cs_.define(p + cfg::kExpDevCtl2, 2, 0, 0x001F);                                 // Completion Timeout Value / Disable
  cs_.define(p + cfg::kExpLnkCap2, 4, ((1u << spec_.link_speed_gen) - 1u) << 1);  // supported speeds vector
  cs_.define(p + cfg::kExpLnkCtl2, 2, spec_.link_speed_gen, is_virtual() ? 0u : 0x000Fu, 0, 0x000F);
  cs_.define(p + cfg::kExpLnkSta2, 2, 0);

  if (spec_.msix) {
    const std::uint16_t at = caps.add(cfg::kCapIdMsix, Msix::kCapLength);
    msix_ = std::make_unique<Msix>(cs_, at, *spec_.msix);
  }

  const std::uint16_t aer_at = caps.add_extended(cfg::kExtCapIdAer, 2, Aer::kCapLength);
  aer_ = std::make_unique<Aer>(cs_, aer_at, pcie_cap_);

  if (spec_.sriov) {
    const std::uint16_t at = caps.add_extended(cfg::kExtCapIdSriov, 1, Sriov::kCapLength);
    sriov_ = std::make_unique<Sriov>(cs_, at, *spec_.sriov, rid_function(rid_));
  }
}

std::uint16_t PcieFunction::vendor_id() const {
  return spec_.ids.vendor_id;
}
std::uint16_t PcieFunction::device_id() const {
  return spec_.ids.device_id;
}

ConfigWriteResult PcieFunction::config_write(std::uint32_t offset, unsigned size, std::uint32_t value) {
  ConfigWriteResult r;
  const std::uint32_t devctl_at = pcie_cap_ + cfg::kExpDevCtl;
  const std::uint32_t pmcsr_at = pm_cap_ + cfg::kPmControlStatus;
  const std::uint32_t devctl_before = cs_.read(devctl_at, 2);
  const std::uint32_t pmcsr_before = pm_cap_ != 0 ? cs_.read(pmcsr_at, 2) : 0u;
  const Sriov::State sriov_before = sriov_ ? sriov_->state() : Sriov::State{};

  cs_.write(offset, size, value);  // throws on a bad offset/size before anything changed

  if (overlaps(offset, size, devctl_at, 2)) {
    const std::uint32_t now = cs_.read(devctl_at, 2);
    std::uint32_t fixed = now & ~static_cast<std::uint32_t>(cfg::kDevCtlInitiateFlr);  // always reads 0
    const std::uint32_t mps_mask = 7u << cfg::kDevCtlMpsShift;
    if (((now & mps_mask) >> cfg::kDevCtlMpsShift) > static_cast<std::uint32_t>(size_code(spec_.max_payload_size))) {
      fixed = (fixed & ~mps_mask) | (devctl_before & mps_mask);  // above MPS Supported: ignored
    }
    const std::uint32_t mrrs_mask = 7u << cfg::kDevCtlMrrsShift;
    if (((now & mrrs_mask) >> cfg::kDevCtlMrrsShift) > 5) {
      fixed = (fixed & ~mrrs_mask) | (devctl_before & mrrs_mask);  // reserved encoding: ignored
    }
    if (fixed != now) cs_.hw_write(devctl_at, 2, fixed);
    if ((now & cfg::kDevCtlInitiateFlr) != 0) {  // writable only on FLR-capable functions
      reset_state(ResetKind::FunctionLevelReset);
      ++flr_count_;
      r.flr = true;
      r.busy_ps = spec_.flr_duration_ps;
      notify_sriov_if_changed(sriov_before);
      return r;
    }
  }

  if (pm_cap_ != 0 && overlaps(offset, size, pmcsr_at, 2)) {
    const std::uint32_t now = cs_.read(pmcsr_at, 2);
    const std::uint32_t old_ps = pmcsr_before & cfg::kPmcsrPowerStateMask;
    std::uint32_t ps = now & cfg::kPmcsrPowerStateMask;
    if (ps == 1 || ps == 2) {  // D1/D2 not supported: the write completes, the state stays
      cs_.hw_write(pmcsr_at, 2, (now & ~static_cast<std::uint32_t>(cfg::kPmcsrPowerStateMask)) | old_ps);
      ps = old_ps;
    }
    if (ps != old_ps) {
      r.power_state_changed = true;
      if (ps == static_cast<std::uint32_t>(PowerState::D3hot)) {
        r.busy_ps = spec_.d0_to_d3hot_delay_ps;
      } else {
        r.busy_ps = spec_.d3hot_to_d0_delay_ps;
        if (!spec_.no_soft_reset) reset_state(ResetKind::SoftReset);  // D0uninitialized
      }
    }
  }

  if (msix_ && overlaps(offset, size, msix_->cap_offset() + 2u, 2)) r.msix_messages = msix_->on_control_written();

  if (sriov_) {
    sriov_->after_write(sriov_before);
    notify_sriov_if_changed(sriov_before);
  }
  return r;
}

void PcieFunction::reset_state(ResetKind kind) {
  cs_.reset();
  if (msix_) msix_->reset();
  if (reset_cb_) reset_cb_(*this, kind);
}

void PcieFunction::notify_sriov_if_changed(const Sriov::State& before) {
  if (sriov_ && sriov_changed_ && sriov_->state() != before) sriov_changed_();
}

std::uint64_t PcieFunction::function_level_reset() {
  const Sriov::State before = sriov_ ? sriov_->state() : Sriov::State{};
  reset_state(ResetKind::FunctionLevelReset);
  ++flr_count_;
  notify_sriov_if_changed(before);
  return spec_.flr_duration_ps;
}

unsigned PcieFunction::mps_bytes() const {
  if (is_virtual()) return pf_->mps_bytes();
  return 128u << ((cs_.read(pcie_cap_ + cfg::kExpDevCtl, 2) >> cfg::kDevCtlMpsShift) & 7u);
}

unsigned PcieFunction::mrrs_bytes() const {
  return 128u << ((cs_.read(pcie_cap_ + cfg::kExpDevCtl, 2) >> cfg::kDevCtlMrrsShift) & 7u);
}

PowerState PcieFunction::power_state() const {
  if (is_virtual()) return pf_->power_state();
  return static_cast<PowerState>(cs_.read(pm_cap_ + cfg::kPmControlStatus, 2) & cfg::kPmcsrPowerStateMask);
}

bool PcieFunction::bus_master_enabled() const {
  return (cs_.read(cfg::kCommand, 2) & cfg::kCmdBusMaster) != 0 && power_state() == PowerState::D0;
}

bool PcieFunction::memory_enabled() const {
  if (power_state() != PowerState::D0) return false;
  if (is_virtual()) return pf_->sriov_->vf_enable() && pf_->sriov_->vf_memory_enable();
  return (cs_.read(cfg::kCommand, 2) & cfg::kCmdMemorySpace) != 0;
}

unsigned PcieFunction::aspm_control() const {
  const PcieFunction& f = is_virtual() ? *pf_ : *this;
  return f.cs_.read(f.pcie_cap_ + cfg::kExpLnkCtl, 2) & cfg::kLnkCtlAspmMask;
}

VfBarWindow PcieFunction::bar_window(unsigned bar) const {
  if (is_virtual()) {
    const Sriov& s = *pf_->sriov_;
    const auto w = s.vf_bar_window(bar, vf_index_);
    if (!w || s.vf_bars().address(pf_->cs_, bar) == 0) return VfBarWindow{};
    return *w;
  }
  const BarSpec* b = bars_.spec(bar);
  const std::uint64_t base = bars_.address(cs_, bar);
  if (b == nullptr || base == 0) return VfBarWindow{};
  return VfBarWindow{base, b->size};
}

std::optional<BarHit> PcieFunction::decode(std::uint64_t addr) const {
  if (!memory_enabled()) return std::nullopt;
  if (!is_virtual()) return bars_.decode(cs_, addr);
  for (const BarSpec& b : pf_->sriov_->vf_bars().specs()) {
    const VfBarWindow w = bar_window(b.index);
    if (w.size != 0 && addr >= w.base && addr - w.base < w.size) return BarHit{b.index, addr - w.base};
  }
  return std::nullopt;
}

void PcieFunction::set_link_status(unsigned speed_gen, unsigned width) {
  const std::uint32_t at = pcie_cap_ + cfg::kExpLnkSta;
  const std::uint32_t keep = cs_.read(at, 2) & ~0x03FFu;
  cs_.hw_write(at, 2, keep | (speed_gen & 0xFu) | ((width & 0x3Fu) << cfg::kLnkStaWidthShift));
}

// ---------------------------------------------------------------------------------------------

PhysicalFunction::PhysicalFunction(RequesterId rid, const PcieFunctionSpec& spec)
    : pf_(std::make_unique<PcieFunction>(rid, spec)) {
  if (pf_->sriov_) pf_->sriov_changed_ = [this] { sync_vfs(); };
}

PhysicalFunction::~PhysicalFunction() {
  vfs_.clear();
  pf_->sriov_changed_ = nullptr;
}

void PhysicalFunction::sync_vfs() {
  const Sriov& s = *pf_->sriov_;
  const std::size_t want = s.vf_enable() ? s.num_vfs() : 0;
  if (want == vfs_.size()) return;
  // NumVFs is frozen while VF Enable is set, so the set changes only on enable/disable.
  vfs_.clear();
  for (std::size_t i = 0; i < want; ++i) {
    const auto idx = static_cast<unsigned>(i);
    vfs_.push_back(std::unique_ptr<PcieFunction>(new PcieFunction(*pf_, idx, s.vf_rid(pf_->rid(), idx))));
    const std::uint32_t lnksta = pf_->config_read(pf_->pcie_cap_offset() + cfg::kExpLnkSta, 2);
    vfs_.back()->set_link_status(lnksta & 0xFu, (lnksta >> cfg::kLnkStaWidthShift) & 0x3Fu);
  }
  if (vfs_changed_) vfs_changed_(*this);
}

void PhysicalFunction::set_link_status(unsigned speed_gen, unsigned width) {
  pf_->set_link_status(speed_gen, width);
  for (auto& v : vfs_) v->set_link_status(speed_gen, width);
}

PcieFunction* PhysicalFunction::vf(std::size_t index) {
  return index < vfs_.size() ? vfs_[index].get() : nullptr;
}

std::vector<PcieFunction*> PhysicalFunction::functions() {
  std::vector<PcieFunction*> out;
  out.reserve(1 + vfs_.size());
  out.push_back(pf_.get());
  for (auto& v : vfs_) out.push_back(v.get());
  return out;
}

PcieFunction* PhysicalFunction::find_by_rid(RequesterId rid) {
  if (pf_->rid() == rid) return pf_.get();
  for (auto& v : vfs_) {
    if (v->rid() == rid) return v.get();
  }
  return nullptr;
}

std::optional<PhysicalFunction::Hit> PhysicalFunction::decode(std::uint64_t addr) {
  if (auto h = pf_->decode(addr)) return Hit{pf_.get(), h->bar, h->offset};
  if (vfs_.empty()) return std::nullopt;
  const Sriov& s = *pf_->sriov_;
  if (!s.vf_memory_enable() || pf_->power_state() != PowerState::D0) return std::nullopt;
  for (const BarSpec& b : s.vf_bars().specs()) {
    const std::uint64_t base = s.vf_bars().address(pf_->config(), b.index);
    if (base == 0 || addr < base) continue;
    const std::uint64_t rel = addr - base;
    const std::uint64_t idx = rel / b.size;
    if (idx < vfs_.size()) return Hit{vfs_[idx].get(), b.index, rel % b.size};
  }
  return std::nullopt;
}

}  // namespace sohusim::pcie
