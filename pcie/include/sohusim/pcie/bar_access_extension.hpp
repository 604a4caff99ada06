#pragma once
// The TLM-2.0 extension on every MMIO access the endpoint hands to the device model: which
// function (requester ID; VFs included), which BAR, and the offset inside it (also the
// payload's address). The device registers its BAR handlers behind one target socket and
// never sees a TLP.
#include <cstdint>

#include <tlm>

#include "sohusim/pcie/requester_id.hpp"

namespace sohusim::pcie {

class BarAccessExtension final : public tlm::tlm_extension<BarAccessExtension> {
 public:
  BarAccessExtension() = default;
  BarAccessExtension(RequesterId f, bool vf, unsigned vf_i, unsigned b, std::uint64_t off) noexcept
      : function(f), is_vf(vf), vf_index(vf_i), bar(b), offset(off) {}
  tlm::tlm_extension_base* clone() const override { return new BarAccessExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const BarAccessExtension&>(other);
  }

  RequesterId function = 0;
  bool is_vf = false;
  unsigned vf_index = 0;
  unsigned bar = 0;
  std::uint64_t offset = 0;
};

}  // namespace sohusim::pcie
