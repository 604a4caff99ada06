// sohusim/sim/correlation_extension.hpp — follow one request across every hop.
//
// A request from the host (an API call, a doorbell write, a DMA read of a command) crosses
// many components: host agent, PCIe link, IOMMU, router, memory controller, engine, and
// back. Each of them emits trace events; the profiler can only draw one arrow through all
// of them if every event names the same id (docs/trace.md, "Flows in a simulation"). That id travels with
// the transaction as this TLM extension, so no component has to know who created it.
//
// Fields:
//   correlation_id  the id shared by every trace event of the request; 0 means "none".
//                   Ids are given out by whoever starts the request (a counter in the
//                   issuing module is enough: ids must be unique, not meaningful).
//   requester       optional source id of the original initiator (a requester/function id
//                   on PCIe, an engine index on the device) for per-source statistics.
//   issue_time_ps   optional simulated time at which the request was first issued, so a
//                   target can measure end-to-end latency without a side table.
//
// Ownership follows the TLM-2.0 rules, which set_correlation() applies for you: on a
// payload with a memory manager the extension is an "auto" extension, freed by the
// manager's reset() when the payload is recycled, so a stale id never reaches an
// unrelated request; on a payload without one it is freed by the payload's destructor,
// or by clear_correlation() when the initiator reuses the payload object. Interconnects
// that copy a payload (deep_copy_from) copy the extension with clone(), so the id
// survives protocol conversion.
#pragma once

#include <cstdint>
#include <optional>

#include <tlm>

namespace sohusim::sim {

class CorrelationExtension final : public tlm::tlm_extension<CorrelationExtension> {
 public:
  CorrelationExtension() = default;
  explicit CorrelationExtension(std::uint64_t id, std::optional<std::uint32_t> requester_id = std::nullopt,
                                std::optional<std::uint64_t> issue_ps = std::nullopt) noexcept
      : correlation_id(id), requester(requester_id), issue_time_ps(issue_ps) {}

  tlm::tlm_extension_base* clone() const override;
  /// Throws std::invalid_argument if `other` is not a CorrelationExtension.
  void copy_from(const tlm::tlm_extension_base& other) override;

  std::uint64_t correlation_id = 0;
  std::optional<std::uint32_t> requester;
  std::optional<std::uint64_t> issue_time_ps;
};

/// Attaches the correlation to `gp`, or overwrites all three fields of the one already
/// attached (no allocation then). Returns the attached extension.
CorrelationExtension& set_correlation(tlm::tlm_generic_payload& gp, std::uint64_t id,
                                      std::optional<std::uint32_t> requester = std::nullopt,
                                      std::optional<std::uint64_t> issue_time_ps = std::nullopt);

/// The correlation id of `gp`, or 0 if it carries none.
std::uint64_t correlation_of(const tlm::tlm_generic_payload& gp) noexcept;

/// The attached extension, or nullptr: for the optional fields.
const CorrelationExtension* find_correlation(const tlm::tlm_generic_payload& gp) noexcept;

/// Detaches and frees the correlation, if any; correlation_of() returns 0 afterwards.
void clear_correlation(tlm::tlm_generic_payload& gp);

}  // namespace sohusim::sim
