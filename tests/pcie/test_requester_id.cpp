// Requester IDs, and the one TU of the pcie test program that brings in sc_main
// (tests/sim/systemc_test_support.hpp explains why every program linking SystemC needs it).
#include <gtest/gtest.h>

#include "sim/systemc_test_support.hpp"
#include "sohusim/pcie/requester_id.hpp"

namespace sohusim::pcie {
namespace {

TEST(RequesterId, PacksBusDeviceFunction) {
  const RequesterId rid = make_rid(0x3b, 0x1f, 7);
  EXPECT_EQ(rid, 0x3bff);
  EXPECT_EQ(rid_bus(rid), 0x3bu);
  EXPECT_EQ(rid_device(rid), 0x1fu);
  EXPECT_EQ(rid_function(rid), 7u);
  EXPECT_EQ(format_rid(make_rid(1, 0, 0)), "01:00.0");
  EXPECT_EQ(format_rid(make_rid(0x3b, 2, 5)), "3b:02.5");
}

}  // namespace
}  // namespace sohusim::pcie
