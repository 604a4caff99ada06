// sohusim/sim/address_router.hpp — decode a global address to a target and its offset.
//
// Wherever several memory-mapped targets share one address space (a device's HBM stacks
// and SRAM behind its fabric, BAR windows on a PCIe function, host DRAM and the MMIO hole),
// an AddressRouter sits between the initiators and the targets. It owns the address map:
// ranges [base, base + size) each mapped to a target index and to a target-local address
// (by default the offset from `base`, optionally shifted by `target_offset`). Targets
// therefore only ever see their own local addresses and can be placed anywhere.
//
// The router is a decoder, not an interconnect: it adds no delay and does no arbitration,
// so it is safe to put on any path without changing timing. Contention belongs to the
// fabric or link model in front of it.
//
// Sockets. `target_socket` is a tlm_utils::multi_passthrough_target_socket: any number of
// initiators may bind to it, and the router tells them apart by the binding index the
// socket passes with each call (needed to send AT responses and DMI invalidations back to
// the right one). `initiator_socket` is a multi_passthrough_initiator_socket bound once per
// target; target index i is the i-th binding. One multi-socket rather than a vector of
// simple sockets because the number of targets is then simply the number of bindings and
// the backward path gets the target index for free. Both need at least one binding.
//
// The map:
//   - map() rejects, with std::invalid_argument naming both ranges, a range that overlaps
//     one already mapped; also an empty range or one that wraps past 2^64.
//   - A target index that no initiator_socket binding provides is an SC_REPORT_ERROR at
//     end of elaboration (or immediately, for ranges mapped after elaboration).
//   - A target may be mapped by several ranges (aliases); DMI invalidations from it are
//     then reported for every alias.
//
// Errors never crash the simulation. An access that hits no range, or that starts inside a
// range but runs past its end (one range per transaction: the router does not split), is
// answered with TLM_ADDRESS_ERROR_RESPONSE without reaching any target. Unmapped accesses
// and boundary crossings are counted separately, and the faulting address of the last one
// of either kind is kept, for the error counters and for tests. The extent of an access is
// its data length, or its streaming width for a streaming burst.
//
// What passes through:
//   - b_transport: translated, forwarded, address restored on return.
//   - nb_transport_fw/bw (AT base protocol, any phase sequence the targets use): on
//     BEGIN_REQ the payload's address is translated and stays translated while the target
//     owns the request, because a target may read it at any time until it responds. From
//     the response (BEGIN_RESP on either path, or TLM_COMPLETED) on, the payload carries
//     the initiator's original address again, and any backward call made before that
//     (END_REQ) shows the initiator its own address too. An unmapped BEGIN_REQ completes
//     at once: TLM_COMPLETED with the error response.
//   - transport_dbg: translated and forwarded; no range or a crossing returns 0 bytes and
//     counts nothing (debug accesses must not change what the model reports).
//   - get_direct_mem_ptr: the granted (or refused) range comes back in local addresses and
//     is translated to global ones and clipped to the mapped window, with the DMI pointer
//     advanced to match. For an unmapped address, DMI is refused over the whole unmapped
//     gap around it, so the initiator need not ask again anywhere in that gap.
//   - invalidate_direct_mem_ptr from a target: translated to every global alias of the
//     invalidated local range and sent to every bound initiator.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace sohusim::sim {

struct AddressRange {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  unsigned int target = 0;
  std::uint64_t target_offset = 0;  // the target-local address that `base` maps to
  std::string label;                // for messages: "hbm0", "bar2", ...

  std::uint64_t last() const noexcept { return base + (size - 1); }
  bool contains(std::uint64_t addr) const noexcept { return addr >= base && addr - base < size; }
  std::uint64_t to_local(std::uint64_t addr) const noexcept { return addr - base + target_offset; }
  /// "'hbm0' [0x1000, 0x2000) -> target 1" (plus "+0x..." for a non-zero target_offset).
  std::string to_string() const;
};

class AddressRouter : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<AddressRouter> target_socket;
  tlm_utils::multi_passthrough_initiator_socket<AddressRouter> initiator_socket;

  explicit AddressRouter(sc_core::sc_module_name name);

  /// Maps [base, base + size) to `target`, local address 0 at `base`.
  void map(std::uint64_t base, std::uint64_t size, unsigned int target, std::string label = {});
  /// Maps a range with every field given. Throws std::invalid_argument as described above.
  void map(AddressRange range);

  /// The range containing `addr`, or nullptr.
  const AddressRange* decode(std::uint64_t addr) const noexcept;
  /// All ranges, by ascending base.
  std::vector<AddressRange> ranges() const;

  /// Accesses (b_transport, BEGIN_REQ) that hit no range.
  std::uint64_t unmapped_accesses() const noexcept { return unmapped_accesses_; }
  /// Accesses that start in a range and run past its end.
  std::uint64_t boundary_errors() const noexcept { return boundary_errors_; }
  /// Start address of the most recent access of either kind above.
  std::optional<std::uint64_t> last_fault_address() const noexcept { return last_fault_; }
  /// Accesses forwarded to `target` (b_transport and BEGIN_REQ); 0 for an unknown index.
  std::uint64_t routed(unsigned int target) const noexcept;
  /// AT transactions between BEGIN_REQ and their end, as the router has seen them.
  std::size_t in_flight() const noexcept { return in_flight_.size(); }

 protected:
  void end_of_elaboration() override;

 private:
  struct Route {
    int initiator;                 // target_socket binding the request came from
    unsigned int target;           // initiator_socket binding it went to
    std::uint64_t global_address;  // what the initiator put in the payload
    std::uint64_t local_address;   // what the target sees
    bool responding;               // response phase reached: address already restored
  };

  // Decodes and range-checks an access; on failure sets the error response, counts it and
  // returns nullptr.
  const AddressRange* route_or_fail(tlm::tlm_generic_payload& gp);
  const AddressRange* decode_access(const tlm::tlm_generic_payload& gp, bool& crosses) const;
  void check_target_index(const AddressRange& range) const;
  void finish(tlm::tlm_generic_payload& gp);

  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  void invalidate_direct_mem_ptr(int id, sc_dt::uint64 start, sc_dt::uint64 end);

  std::map<std::uint64_t, AddressRange> ranges_;                          // by base: ordered decode and output
  std::unordered_map<const tlm::tlm_generic_payload*, Route> in_flight_;  // lookup only
  std::vector<std::uint64_t> routed_;
  std::uint64_t unmapped_accesses_ = 0;
  std::uint64_t boundary_errors_ = 0;
  std::optional<std::uint64_t> last_fault_;
  bool elaborated_ = false;
};

}  // namespace sohusim::sim
