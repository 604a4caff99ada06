#include "sohusim/sim/address_router.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace sohusim::sim {
namespace {

constexpr const char* kMsgType = "sohusim/AddressRouter";
constexpr std::uint64_t kMaxAddress = std::numeric_limits<std::uint64_t>::max();

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// Bytes of address space an access covers: a streaming burst revisits its first
// streaming_width bytes, anything else covers its data length.
std::uint64_t extent_of(const tlm::tlm_generic_payload& gp) noexcept {
  const unsigned int len = gp.get_data_length();
  const unsigned int width = gp.get_streaming_width();
  return (width != 0 && width < len) ? width : len;
}

// Puts the initiator's address back when a forwarded blocking call returns, also when a
// target throws: the payload belongs to the initiator.
class AddressRestorer {
 public:
  AddressRestorer(tlm::tlm_generic_payload& gp, std::uint64_t address) noexcept : gp_(gp), address_(address) {}
  ~AddressRestorer() { gp_.set_address(address_); }
  AddressRestorer(const AddressRestorer&) = delete;
  AddressRestorer& operator=(const AddressRestorer&) = delete;

 private:
  tlm::tlm_generic_payload& gp_;
  std::uint64_t address_;
};

}  // namespace

std::string AddressRange::to_string() const {
  std::ostringstream os;
  if (!label.empty()) {
    os << "'" << label << "' ";
  }
  os << "[" << hex(base) << ", ";
  if (last() == kMaxAddress) {
    os << "2^64";
  } else {
    os << hex(last() + 1);
  }
  os << ") -> target " << target;
  if (target_offset != 0) {
    os << " +" << hex(target_offset);
  }
  return os.str();
}

AddressRouter::AddressRouter(sc_core::sc_module_name name)
    : sc_core::sc_module(name), target_socket("target_socket"), initiator_socket("initiator_socket") {
  target_socket.register_b_transport(this, &AddressRouter::b_transport);
  target_socket.register_nb_transport_fw(this, &AddressRouter::nb_transport_fw);
  target_socket.register_transport_dbg(this, &AddressRouter::transport_dbg);
  target_socket.register_get_direct_mem_ptr(this, &AddressRouter::get_direct_mem_ptr);
  initiator_socket.register_nb_transport_bw(this, &AddressRouter::nb_transport_bw);
  initiator_socket.register_invalidate_direct_mem_ptr(this, &AddressRouter::invalidate_direct_mem_ptr);
}

// ---- the map --------------------------------------------------------------------------

void AddressRouter::map(std::uint64_t base, std::uint64_t size, unsigned int target, std::string label) {
  AddressRange range;
  range.base = base;
  range.size = size;
  range.target = target;
  range.label = std::move(label);
  map(std::move(range));
}

void AddressRouter::map(AddressRange range) {
  const std::string who = std::string("AddressRouter '") + name() + "': range ";
  if (range.size == 0) {
    throw std::invalid_argument(who + range.to_string() + " is empty");
  }
  if (range.size - 1 > kMaxAddress - range.base) {
    throw std::invalid_argument(who + "'" + range.label + "' at " + hex(range.base) + " of size " + hex(range.size) +
                                " wraps past 2^64");
  }
  if (range.size - 1 > kMaxAddress - range.target_offset) {
    throw std::invalid_argument(who + range.to_string() + ": target-local addresses wrap past 2^64");
  }
  const auto next = ranges_.lower_bound(range.base);
  const AddressRange* clash = nullptr;
  if (next != ranges_.end() && next->second.base <= range.last()) {
    clash = &next->second;
  } else if (next != ranges_.begin() && std::prev(next)->second.last() >= range.base) {
    clash = &std::prev(next)->second;
  }
  if (clash != nullptr) {
    throw std::invalid_argument(who + range.to_string() + " overlaps " + clash->to_string());
  }
  if (elaborated_ && range.target >= static_cast<unsigned int>(initiator_socket.size())) {
    throw std::invalid_argument(who + range.to_string() + " names a target that is not bound (" +
                                std::to_string(initiator_socket.size()) + " targets bound)");
  }
  const std::uint64_t base = range.base;
  ranges_.emplace(base, std::move(range));
}

void AddressRouter::end_of_elaboration() {
  routed_.assign(static_cast<std::size_t>(initiator_socket.size()), 0);
  for (const auto& entry : ranges_) {
    if (entry.second.target >= routed_.size()) {
      const std::string msg = std::string(name()) + ": range " + entry.second.to_string() +
                              " names a target that is not bound (" + std::to_string(routed_.size()) +
                              " targets bound to initiator_socket)";
      SC_REPORT_ERROR(kMsgType, msg.c_str());
    }
  }
  elaborated_ = true;
}

const AddressRange* AddressRouter::decode(std::uint64_t addr) const noexcept {
  auto it = ranges_.upper_bound(addr);  // first range starting after addr
  if (it == ranges_.begin()) {
    return nullptr;
  }
  --it;
  return it->second.contains(addr) ? &it->second : nullptr;
}

std::vector<AddressRange> AddressRouter::ranges() const {
  std::vector<AddressRange> out;
  out.reserve(ranges_.size());
  for (const auto& entry : ranges_) {
    out.push_back(entry.second);
  }
  return out;
}

std::uint64_t AddressRouter::routed(unsigned int target) const noexcept {
  return target < routed_.size() ? routed_[target] : 0;
}

const AddressRange* AddressRouter::decode_access(const tlm::tlm_generic_payload& gp, bool& crosses) const {
  crosses = false;
  const std::uint64_t addr = gp.get_address();
  const AddressRange* range = decode(addr);
  if (range == nullptr) {
    return nullptr;
  }
  const std::uint64_t extent = extent_of(gp);
  if (extent > 0 && extent - 1 > range->last() - addr) {
    crosses = true;
    return nullptr;
  }
  return range;
}

const AddressRange* AddressRouter::route_or_fail(tlm::tlm_generic_payload& gp) {
  bool crosses = false;
  const AddressRange* range = decode_access(gp, crosses);
  if (range != nullptr) {
    if (range->target < routed_.size()) {
      ++routed_[range->target];
    }
    return range;
  }
  gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  last_fault_ = gp.get_address();
  ++(crosses ? boundary_errors_ : unmapped_accesses_);
  return nullptr;
}

// ---- blocking and debug transport -----------------------------------------------------

void AddressRouter::b_transport(int /*id*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const std::uint64_t global = gp.get_address();
  const AddressRange* range = route_or_fail(gp);
  if (range == nullptr) {
    return;
  }
  const unsigned int target = range->target;
  AddressRestorer restore(gp, global);
  gp.set_address(range->to_local(global));
  initiator_socket[static_cast<int>(target)]->b_transport(gp, delay);
}

unsigned int AddressRouter::transport_dbg(int /*id*/, tlm::tlm_generic_payload& gp) {
  bool crosses = false;
  const AddressRange* range = decode_access(gp, crosses);
  if (range == nullptr) {
    return 0;
  }
  const std::uint64_t global = gp.get_address();
  AddressRestorer restore(gp, global);
  gp.set_address(range->to_local(global));
  return initiator_socket[static_cast<int>(range->target)]->transport_dbg(gp);
}

// ---- approximately-timed transport ----------------------------------------------------
//
// After every call into another component the route is looked up again: that component
// may have called back through the router (a target answering BEGIN_RESP from inside
// nb_transport_fw, say), which can finish the transaction or start others.

void AddressRouter::finish(tlm::tlm_generic_payload& gp) {
  const auto it = in_flight_.find(&gp);
  if (it != in_flight_.end()) {
    gp.set_address(it->second.global_address);
    in_flight_.erase(it);
  }
}

tlm::tlm_sync_enum AddressRouter::nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
  unsigned int target = 0;
  const tlm::tlm_phase sent = phase;
  if (phase == tlm::BEGIN_REQ) {
    const std::uint64_t global = gp.get_address();
    const AddressRange* range = route_or_fail(gp);
    if (range == nullptr) {
      return tlm::TLM_COMPLETED;  // early completion carrying the address error
    }
    target = range->target;
    const std::uint64_t local = range->to_local(global);
    const bool inserted = in_flight_.emplace(&gp, Route{id, target, global, local, false}).second;
    if (!inserted) {
      SC_REPORT_ERROR(kMsgType, "BEGIN_REQ for a payload that is already in flight");
      return tlm::TLM_COMPLETED;
    }
    gp.set_address(local);
  } else {
    const auto it = in_flight_.find(&gp);
    if (it == in_flight_.end()) {
      SC_REPORT_ERROR(kMsgType, "nb_transport_fw for a transaction the router never routed");
      return tlm::TLM_COMPLETED;
    }
    target = it->second.target;
  }

  const tlm::tlm_sync_enum status = initiator_socket[static_cast<int>(target)]->nb_transport_fw(gp, phase, delay);

  const auto it = in_flight_.find(&gp);
  if (it == in_flight_.end()) {
    return status;
  }
  if (status == tlm::TLM_COMPLETED || sent == tlm::END_RESP) {
    finish(gp);
  } else if (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
    it->second.responding = true;
    gp.set_address(it->second.global_address);
  }
  return status;
}

tlm::tlm_sync_enum AddressRouter::nb_transport_bw(int /*id*/, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
  auto it = in_flight_.find(&gp);
  if (it == in_flight_.end()) {
    SC_REPORT_ERROR(kMsgType, "nb_transport_bw for a transaction the router never routed");
    return tlm::TLM_COMPLETED;
  }
  if (phase == tlm::BEGIN_RESP) {
    it->second.responding = true;
  }
  const int initiator = it->second.initiator;
  gp.set_address(it->second.global_address);  // the initiator sees its own address

  const tlm::tlm_sync_enum status = target_socket[initiator]->nb_transport_bw(gp, phase, delay);

  it = in_flight_.find(&gp);
  if (it == in_flight_.end()) {
    return status;
  }
  if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::END_RESP)) {
    finish(gp);
  } else if (!it->second.responding) {
    gp.set_address(it->second.local_address);  // the request is still the target's
  }
  return status;
}

// ---- direct memory interface ----------------------------------------------------------

bool AddressRouter::get_direct_mem_ptr(int /*id*/, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  const std::uint64_t global = gp.get_address();
  const AddressRange* found = decode(global);
  if (found == nullptr) {
    // Refuse for the whole hole between the neighbouring ranges.
    const auto next = ranges_.upper_bound(global);
    dmi.allow_none();
    dmi.set_start_address(next == ranges_.begin() ? 0 : std::prev(next)->second.last() + 1);
    dmi.set_end_address(next == ranges_.end() ? kMaxAddress : next->second.base - 1);
    return false;
  }
  const AddressRange range = *found;
  const std::uint64_t local = range.to_local(global);
  bool granted = false;
  {
    AddressRestorer restore(gp, global);
    gp.set_address(local);
    granted = initiator_socket[static_cast<int>(range.target)]->get_direct_mem_ptr(gp, dmi);
  }

  // Clip the target's answer to the part of it this range makes visible.
  const std::uint64_t window_lo = range.target_offset;
  const std::uint64_t window_hi = range.target_offset + (range.size - 1);
  const std::uint64_t lo = std::max<std::uint64_t>(dmi.get_start_address(), window_lo);
  const std::uint64_t hi = std::min<std::uint64_t>(dmi.get_end_address(), window_hi);
  if (lo > hi || local < lo || local > hi) {
    // The target answered for a region that does not contain the address asked for: vouch
    // for nothing but that address.
    dmi.allow_none();
    dmi.set_start_address(global);
    dmi.set_end_address(global);
    return false;
  }
  if (granted) {
    dmi.set_dmi_ptr(dmi.get_dmi_ptr() + (lo - dmi.get_start_address()));
  }
  dmi.set_start_address(range.base + (lo - window_lo));
  dmi.set_end_address(range.base + (hi - window_lo));
  return granted;
}

void AddressRouter::invalidate_direct_mem_ptr(int id, sc_dt::uint64 start, sc_dt::uint64 end) {
  for (const auto& entry : ranges_) {
    const AddressRange& range = entry.second;
    if (range.target != static_cast<unsigned int>(id)) {
      continue;
    }
    const std::uint64_t window_lo = range.target_offset;
    const std::uint64_t window_hi = range.target_offset + (range.size - 1);
    const std::uint64_t lo = std::max<std::uint64_t>(start, window_lo);
    const std::uint64_t hi = std::min<std::uint64_t>(end, window_hi);
    if (lo > hi) {
      continue;
    }
    for (unsigned int i = 0; i < target_socket.size(); ++i) {
      target_socket[static_cast<int>(i)]->invalidate_direct_mem_ptr(range.base + (lo - window_lo),
                                                                    range.base + (hi - window_lo));
    }
  }
}

}  // namespace sohusim::sim
