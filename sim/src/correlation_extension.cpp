#include "sohusim/sim/correlation_extension.hpp"

#include <stdexcept>

namespace sohusim::sim {

tlm::tlm_extension_base* CorrelationExtension::clone() const {
  return new CorrelationExtension(*this);
}

void CorrelationExtension::copy_from(const tlm::tlm_extension_base& other) {
  const auto* src = dynamic_cast<const CorrelationExtension*>(&other);
  if (src == nullptr) {
    throw std::invalid_argument("sohusim::sim::CorrelationExtension::copy_from: source is another extension type");
  }
  correlation_id = src->correlation_id;
  requester = src->requester;
  issue_time_ps = src->issue_time_ps;
}

CorrelationExtension& set_correlation(tlm::tlm_generic_payload& gp, std::uint64_t id,
                                      std::optional<std::uint32_t> requester,
                                      std::optional<std::uint64_t> issue_time_ps) {
  // A payload built before this extension type registered its index would be too short.
  gp.resize_extensions();
  if (auto* ext = gp.get_extension<CorrelationExtension>()) {
    ext->correlation_id = id;
    ext->requester = requester;
    ext->issue_time_ps = issue_time_ps;
    return *ext;
  }
  auto* ext = new CorrelationExtension(id, requester, issue_time_ps);
  // Auto (freed at the manager's reset) when there is a manager; set_auto_extension
  // asserts that there is one, so payloads without a manager keep it until destruction.
  if (gp.has_mm()) {
    gp.set_auto_extension(ext);
  } else {
    gp.set_extension(ext);
  }
  return *ext;
}

const CorrelationExtension* find_correlation(const tlm::tlm_generic_payload& gp) noexcept {
  return gp.get_extension<CorrelationExtension>();
}

std::uint64_t correlation_of(const tlm::tlm_generic_payload& gp) noexcept {
  const CorrelationExtension* ext = find_correlation(gp);
  return ext == nullptr ? 0 : ext->correlation_id;
}

void clear_correlation(tlm::tlm_generic_payload& gp) {
  // Not release_extension(): on a managed payload that only marks the extension for
  // freeing at recycling time, so correlation_of() would still report the old id.
  // Clearing the slot first is safe for the manager too: reset() skips emptied slots.
  if (auto* ext = gp.get_extension<CorrelationExtension>()) {
    gp.clear_extension<CorrelationExtension>();
    ext->free();
  }
}

}  // namespace sohusim::sim
