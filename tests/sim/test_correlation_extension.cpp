// CorrelationExtension: attach, read, copy across hops, and no stale ids after recycling.
// (That the id survives a trip through the AddressRouter is checked in
// test_address_router.cpp, with a target that records what it receives.)
#include <memory>
#include <optional>
#include <stdexcept>

#include <gtest/gtest.h>

#include "sohusim/sim/correlation_extension.hpp"
#include "sohusim/sim/memory_manager.hpp"

namespace {

using sohusim::sim::clear_correlation;
using sohusim::sim::correlation_of;
using sohusim::sim::CorrelationExtension;
using sohusim::sim::find_correlation;
using sohusim::sim::set_correlation;

struct OtherExtension final : tlm::tlm_extension<OtherExtension> {
  tlm::tlm_extension_base* clone() const override { return new OtherExtension(*this); }
  void copy_from(const tlm::tlm_extension_base&) override {}
};

TEST(CorrelationExtension, AbsentMeansZero) {
  tlm::tlm_generic_payload gp;
  EXPECT_EQ(correlation_of(gp), 0u);
  EXPECT_EQ(find_correlation(gp), nullptr);
}

TEST(CorrelationExtension, SetAndReadAllFields) {
  tlm::tlm_generic_payload gp;  // no memory manager: freed with the payload
  set_correlation(gp, 42, 7u, 123456u);
  EXPECT_EQ(correlation_of(gp), 42u);
  const CorrelationExtension* ext = find_correlation(gp);
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->requester, 7u);
  EXPECT_EQ(ext->issue_time_ps, 123456u);
}

TEST(CorrelationExtension, SettingAgainOverwritesInPlaceAndResetsOptionals) {
  tlm::tlm_generic_payload gp;
  CorrelationExtension& first = set_correlation(gp, 1, 3u, 99u);
  CorrelationExtension& second = set_correlation(gp, 2);
  EXPECT_EQ(&first, &second) << "reuse the attached extension, do not allocate another";
  EXPECT_EQ(correlation_of(gp), 2u);
  EXPECT_FALSE(second.requester.has_value());
  EXPECT_FALSE(second.issue_time_ps.has_value());
}

TEST(CorrelationExtension, CloneAndCopyFromCopyEveryField) {
  const CorrelationExtension original(0xABCDEF0123ull, 12u, 5000u);
  std::unique_ptr<tlm::tlm_extension_base, void (*)(tlm::tlm_extension_base*)> copy(
      original.clone(), [](tlm::tlm_extension_base* e) { e->free(); });
  const auto* clone = dynamic_cast<const CorrelationExtension*>(copy.get());
  ASSERT_NE(clone, nullptr);
  EXPECT_NE(clone, &original);
  EXPECT_EQ(clone->correlation_id, 0xABCDEF0123ull);
  EXPECT_EQ(clone->requester, 12u);
  EXPECT_EQ(clone->issue_time_ps, 5000u);

  CorrelationExtension target(1, 2u, std::nullopt);
  target.copy_from(original);
  EXPECT_EQ(target.correlation_id, 0xABCDEF0123ull);
  EXPECT_EQ(target.requester, 12u);
  EXPECT_EQ(target.issue_time_ps, 5000u);

  const OtherExtension other;
  EXPECT_THROW(target.copy_from(other), std::invalid_argument);
}

TEST(CorrelationExtension, SurvivesADeepCopyAcrossAHop) {
  tlm::tlm_generic_payload upstream;
  set_correlation(upstream, 77, 1u);
  tlm::tlm_generic_payload downstream;  // e.g. a bridge that rebuilds the transaction
  downstream.deep_copy_from(upstream);
  EXPECT_EQ(correlation_of(downstream), 77u);
  EXPECT_NE(find_correlation(downstream), find_correlation(upstream));
}

TEST(CorrelationExtension, ClearDetachesAtOnceEvenWithAManager) {
  sohusim::sim::MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire();
  set_correlation(gp, 9);
  clear_correlation(gp);
  EXPECT_EQ(correlation_of(gp), 0u);
  clear_correlation(gp);  // nothing attached: harmless
  tlm::tlm_generic_payload plain;
  set_correlation(plain, 10);
  clear_correlation(plain);
  EXPECT_EQ(correlation_of(plain), 0u);
  gp.release();
}

TEST(CorrelationExtension, RecycledPayloadHasNoStaleId) {
  sohusim::sim::MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire();
  set_correlation(gp, 1234, 2u, 10u);
  gp.release();
  tlm::tlm_generic_payload& next = mm.acquire();
  ASSERT_EQ(&next, &gp);
  EXPECT_EQ(correlation_of(next), 0u);
  next.release();
}

}  // namespace
