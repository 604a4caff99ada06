#include "sohusim/pcie/sriov.hpp"

#include <stdexcept>
#include <string>

namespace sohusim::pcie {

namespace {
constexpr std::uint64_t kMinVfBarSize = 4096;
}

void Sriov::validate(const SriovSpec& spec, RequesterId pf_rid) {
  if (spec.total_vfs == 0) throw std::invalid_argument("sriov.total_vfs: must be at least 1");
  if (spec.first_vf_offset == 0) {
    throw std::invalid_argument("sriov.first_vf_offset: must be at least 1 (offset 0 is the PF itself)");
  }
  if (spec.total_vfs > 1 && spec.vf_stride == 0) {
    throw std::invalid_argument("sriov.vf_stride: must be at least 1 with more than one VF");
  }
  const std::uint64_t last_rid =
      std::uint64_t{pf_rid} + spec.first_vf_offset + std::uint64_t{spec.total_vfs - 1u} * spec.vf_stride;
  if (last_rid > 0xFFFFu) {
    throw std::invalid_argument("sriov.total_vfs: " + std::to_string(spec.total_vfs) + " VFs with first_vf_offset " +
                                std::to_string(spec.first_vf_offset) + " and vf_stride " +
                                std::to_string(spec.vf_stride) + " from PF " + format_rid(pf_rid) +
                                " run past the 16-bit routing-ID space (last VF would be " + std::to_string(last_rid) +
                                ")");
  }
  if ((spec.supported_page_sizes & 1u) == 0) {
    throw std::invalid_argument("sriov.supported_page_sizes: must include 4 KiB (bit 0)");
  }
  const BarSet bars(spec.vf_bars, kVfBar0, "sriov.vf_bars", kMinVfBarSize);  // throws on a bad BAR
  if (spec.vf_msix) Msix::validate(*spec.vf_msix, "sriov.vf_msix", &bars);
}

Sriov::Sriov(ConfigSpace& cs, std::uint16_t cap_offset, const SriovSpec& spec, unsigned pf_function_number)
    : cs_(&cs),
      cap_(cap_offset),
      spec_(spec),
      vf_bars_(spec.vf_bars, static_cast<std::uint16_t>(cap_offset + kVfBar0), "sriov.vf_bars", kMinVfBarSize) {
  cs_->define(cap_ + kCapabilities, 4, 0);
  cs_->define(cap_ + kControl, 2, 0, kCtrlVfEnable | kCtrlVfMse | kCtrlAri);
  cs_->define(cap_ + kStatus, 2, 0);
  cs_->define(cap_ + kInitialVfs, 2, spec.total_vfs);
  cs_->define(cap_ + kTotalVfs, 2, spec.total_vfs);
  cs_->define(cap_ + kNumVfs, 2, 0, 0xFFFF);
  cs_->define(cap_ + kFunctionDependencyLink, 2, pf_function_number & 0xFFu);
  cs_->define(cap_ + kFirstVfOffset, 2, spec.first_vf_offset);
  cs_->define(cap_ + kVfStride, 2, spec.vf_stride);
  cs_->define(cap_ + 0x18, 2, 0);  // reserved
  cs_->define(cap_ + kVfDeviceId, 2, spec.vf_device_id);
  cs_->define(cap_ + kSupportedPageSizes, 4, spec.supported_page_sizes);
  cs_->define(cap_ + kSystemPageSize, 4, 1, spec.supported_page_sizes);
  vf_bars_.install(*cs_);
  cs_->define(cap_ + kVfMigrationState, 4, 0);
}

bool Sriov::vf_enable() const {
  return (cs_->read(cap_ + kControl, 2) & kCtrlVfEnable) != 0;
}
bool Sriov::vf_memory_enable() const {
  return (cs_->read(cap_ + kControl, 2) & kCtrlVfMse) != 0;
}
bool Sriov::ari_capable_hierarchy() const {
  return (cs_->read(cap_ + kControl, 2) & kCtrlAri) != 0;
}
std::uint16_t Sriov::num_vfs() const {
  return static_cast<std::uint16_t>(cs_->read(cap_ + kNumVfs, 2));
}

std::uint32_t Sriov::system_page_size_bytes() const {
  const std::uint32_t v = cs_->read(cap_ + kSystemPageSize, 4);
  for (unsigned bit = 0; bit < 20; ++bit) {
    if ((v >> bit) & 1u) return 4096u << bit;  // lowest set bit (software must set only one)
  }
  return 4096;
}

RequesterId Sriov::vf_rid(RequesterId pf_rid, unsigned index) const {
  return static_cast<RequesterId>(pf_rid + spec_.first_vf_offset + index * spec_.vf_stride);
}

std::optional<VfBarWindow> Sriov::vf_bar_window(unsigned bar, unsigned index) const {
  const BarSpec* b = vf_bars_.spec(bar);
  if (b == nullptr) return std::nullopt;
  return VfBarWindow{vf_bars_.address(*cs_, bar) + std::uint64_t{index} * b->size, b->size};
}

Sriov::State Sriov::state() const {
  return State{vf_enable(), vf_memory_enable(), num_vfs()};
}

void Sriov::after_write(const State& before) {
  const std::uint16_t now = num_vfs();
  if (now == before.num_vfs) return;
  if (now > spec_.total_vfs || before.vf_enable) cs_->hw_write(cap_ + kNumVfs, 2, before.num_vfs);
}

}  // namespace sohusim::pcie
