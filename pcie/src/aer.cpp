#include "sohusim/pcie/aer.hpp"

namespace sohusim::pcie {

Aer::Aer(ConfigSpace& cs, std::uint16_t cap_offset, std::uint16_t pcie_cap_offset)
    : cs_(&cs), cap_(cap_offset), pcie_(pcie_cap_offset) {
  // Everything in AER is sticky (RW1CS / RWS / ROS): preserve all implemented bits.
  cs_->define(cap_ + kUncStatus, 4, 0, 0, kUncImplemented, kUncImplemented);
  cs_->define(cap_ + kUncMask, 4, 0, kUncImplemented, 0, kUncImplemented);
  cs_->define(cap_ + kUncSeverity, 4, kUncSeverityDefault, kUncImplemented, 0, kUncImplemented);
  cs_->define(cap_ + kCorStatus, 4, 0, 0, kCorImplemented, kCorImplemented);
  cs_->define(cap_ + kCorMask, 4, kCorMaskDefault, kCorImplemented, 0, kCorImplemented);
  cs_->define(cap_ + kCapControl, 4, 0, 0, 0, 0x1Fu);  // First Error Pointer, ROS
  for (unsigned i = 0; i < 4; ++i) cs_->define(cap_ + kHeaderLog + 4u * i, 4, 0, 0, 0, 0xFFFFFFFFu);
}

AerReport Aer::record_uncorrectable(UncorrectableError e, const std::array<std::uint32_t, 4>& tlp_header) {
  const auto bit = static_cast<std::uint32_t>(e);
  AerReport r;
  r.fatal = (cs_->read(cap_ + kUncSeverity, 4) & bit) != 0;
  r.masked = (cs_->read(cap_ + kUncMask, 4) & bit) != 0;

  // Device Status logs regardless of the AER masks (spec 7.5.3.5).
  std::uint32_t devsta = r.fatal ? cfg::kDevStaFatal : cfg::kDevStaNonFatal;
  if (e == UncorrectableError::UnsupportedRequest) devsta |= cfg::kDevStaUnsupportedRequest;
  cs_->hw_set_bits(pcie_ + cfg::kExpDevSta, 2, devsta);

  const std::uint32_t before = cs_->read(cap_ + kUncStatus, 4);
  cs_->hw_set_bits(cap_ + kUncStatus, 4, bit);
  if (r.masked) return r;

  // First Error Pointer and Header Log are updated only when no earlier error is still
  // logged (the bit the pointer names is clear).
  const unsigned fep = first_error_pointer();
  if ((before & (1u << fep)) == 0) {
    unsigned pos = 0;
    while (((bit >> pos) & 1u) == 0) ++pos;
    cs_->hw_write(cap_ + kCapControl, 4, (cs_->read(cap_ + kCapControl, 4) & ~0x1Fu) | pos);
    for (unsigned i = 0; i < 4; ++i) cs_->hw_write(cap_ + kHeaderLog + 4u * i, 4, tlp_header[i]);
  }

  const std::uint32_t devctl = cs_->read(pcie_ + cfg::kExpDevCtl, 2);
  const bool serr = (cs_->read(cfg::kCommand, 2) & cfg::kCmdSerrEnable) != 0;
  bool enabled = r.fatal ? ((devctl & cfg::kDevCtlFatalReporting) != 0 || serr)
                         : ((devctl & cfg::kDevCtlNonFatalReporting) != 0 || serr);
  // An Unsupported Request is additionally gated by UR Reporting Enable (spec 6.2.5) unless
  // SERR# Enable applies.
  if (e == UncorrectableError::UnsupportedRequest && (devctl & cfg::kDevCtlUrReporting) == 0 && !serr) {
    enabled = false;
  }
  if (enabled) r.message = r.fatal ? ErrorMessage::ErrFatal : ErrorMessage::ErrNonFatal;
  return r;
}

AerReport Aer::record_correctable(CorrectableError e) {
  const auto bit = static_cast<std::uint32_t>(e);
  AerReport r;
  r.masked = (cs_->read(cap_ + kCorMask, 4) & bit) != 0;
  cs_->hw_set_bits(pcie_ + cfg::kExpDevSta, 2, cfg::kDevStaCorrectable);
  cs_->hw_set_bits(cap_ + kCorStatus, 4, bit);
  if (r.masked) return r;
  if ((cs_->read(pcie_ + cfg::kExpDevCtl, 2) & cfg::kDevCtlCorrErrReporting) != 0) r.message = ErrorMessage::ErrCor;
  return r;
}

std::uint32_t Aer::uncorrectable_status() const {
  return cs_->read(cap_ + kUncStatus, 4);
}
std::uint32_t Aer::correctable_status() const {
  return cs_->read(cap_ + kCorStatus, 4);
}
unsigned Aer::first_error_pointer() const {
  return cs_->read(cap_ + kCapControl, 4) & 0x1Fu;
}

std::array<std::uint32_t, 4> Aer::header_log() const {
  std::array<std::uint32_t, 4> h{};
  for (unsigned i = 0; i < 4; ++i) h[i] = cs_->read(cap_ + kHeaderLog + 4u * i, 4);
  return h;
}

}  // namespace sohusim::pcie
