#include "sohusim/pcie/tlp_capture.hpp"

#include <cstdio>
#include <stdexcept>

namespace sohusim::pcie {

std::set<TlpType> CaptureFilter::parse_types(std::string_view list) {
  std::set<TlpType> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view name =
        list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (!name.empty()) {
      bool found = false;
      for (TlpType t :
           {TlpType::MRd, TlpType::MWr, TlpType::CfgRd, TlpType::CfgWr, TlpType::Cpl, TlpType::CplD, TlpType::Msg}) {
        if (name == to_string(t) || (t == TlpType::CfgRd && name == "CfgRd") ||
            (t == TlpType::CfgWr && name == "CfgWr")) {
          out.insert(t);
          found = true;
        }
      }
      if (!found) {
        throw std::invalid_argument("TLP capture: unknown TLP type `" + std::string(name) +
                                    "` (allowed: MRd, MWr, CfgRd, CfgWr, Cpl, CplD, Msg)");
      }
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

TlpCapture::TlpCapture(std::ostream& out, CaptureFilter filter) : out_(out), filter_(std::move(filter)) {
  out_ << "time_ns       dir   type    requester tag  address             len   status\n";
}

void TlpCapture::record(std::uint64_t time_ps, std::string_view direction, const Tlp& tlp) {
  if (!filter_.types.empty() && filter_.types.count(tlp.type) == 0) return;
  if (tlp.address < filter_.address_lo || tlp.address > filter_.address_hi) return;
  char line[160];
  std::snprintf(line, sizeof line, "%-13.3f %-5.*s %-7.*s %-9s %-4u 0x%016llx %-5u %.*s%s%s", time_ps / 1000.0,
                static_cast<int>(direction.size()), direction.data(), static_cast<int>(to_string(tlp.type).size()),
                to_string(tlp.type).data(), format_rid(tlp.requester).c_str(), static_cast<unsigned>(tlp.tag),
                static_cast<unsigned long long>(tlp.address), tlp.length,
                is_completion(tlp.type) ? static_cast<int>(to_string(tlp.status).size()) : 0,
                to_string(tlp.status).data(), tlp.poisoned ? " poisoned" : "", tlp.replays ? " replay" : "");
  out_ << line;
  // The bulk path moves an aggregate as one event: say what it stands for.
  if (tlp.bulk_tlps > 1) out_ << " (aggregate of " << tlp.bulk_tlps << " TLPs)";
  out_ << '\n';
  ++lines_;
}

}  // namespace sohusim::pcie
