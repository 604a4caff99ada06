#include "sohusim/pcie/requester_id.hpp"

#include <cstdio>

namespace sohusim::pcie {

std::string format_rid(RequesterId rid) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02x:%02x.%x", rid_bus(rid), rid_device(rid), rid_function(rid));
  return buf;
}

}  // namespace sohusim::pcie
