#include "sohusim/pcie/tlp.hpp"

namespace sohusim::pcie {

std::string_view to_string(TlpType t) {
  switch (t) {
    case TlpType::MRd:
      return "MRd";
    case TlpType::MWr:
      return "MWr";
    case TlpType::CfgRd:
      return "CfgRd0";
    case TlpType::CfgWr:
      return "CfgWr0";
    case TlpType::Cpl:
      return "Cpl";
    case TlpType::CplD:
      return "CplD";
    case TlpType::Msg:
      return "Msg";
  }
  return "?";
}

std::string_view to_string(CplStatus s) {
  switch (s) {
    case CplStatus::SC:
      return "SC";
    case CplStatus::UR:
      return "UR";
    case CplStatus::CRS:
      return "CRS";
    case CplStatus::CA:
      return "CA";
  }
  return "?";
}

}  // namespace sohusim::pcie
