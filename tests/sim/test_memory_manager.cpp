// MemoryManager: reuse, reference counting, clean recycling, shutdown with payloads in flight.
// Payload bookkeeping needs no kernel, so these run in the test process itself; leaks and
// use-after-free are caught by the sanitizer build.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/sim/memory_manager.hpp"

namespace {

using sohusim::sim::MemoryManager;

// Counts live instances, so tests can see that the pool frees extensions.
struct CountedExtension final : tlm::tlm_extension<CountedExtension> {
  static inline int live = 0;
  CountedExtension() { ++live; }
  CountedExtension(const CountedExtension&) : tlm::tlm_extension<CountedExtension>() { ++live; }
  CountedExtension& operator=(const CountedExtension&) = delete;
  ~CountedExtension() override { --live; }
  tlm::tlm_extension_base* clone() const override { return new CountedExtension(*this); }
  void copy_from(const tlm::tlm_extension_base&) override {}
};

TEST(MemoryManager, AcquireGivesACleanPayloadHeldOnce) {
  MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire();
  EXPECT_EQ(gp.get_ref_count(), 1);
  EXPECT_TRUE(gp.has_mm());
  EXPECT_EQ(gp.get_command(), tlm::TLM_IGNORE_COMMAND);
  EXPECT_EQ(gp.get_data_ptr(), nullptr);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);
  EXPECT_EQ(mm.in_use(), 1u);
  EXPECT_EQ(mm.pooled(), 0u);
  gp.release();
  EXPECT_EQ(mm.in_use(), 0u);
  EXPECT_EQ(mm.pooled(), 1u);
  EXPECT_EQ(mm.returns(), 1u);
}

TEST(MemoryManager, ReleasedPayloadIsReusedWithoutNewAllocation) {
  MemoryManager mm;
  tlm::tlm_generic_payload* first = &mm.acquire();
  first->release();
  tlm::tlm_generic_payload* second = &mm.acquire();
  EXPECT_EQ(first, second);
  EXPECT_EQ(mm.payloads_created(), 1u);
  EXPECT_EQ(mm.acquisitions(), 2u);
  second->release();
}

TEST(MemoryManager, ReturnsOnlyWhenTheLastReferenceIsReleased) {
  MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire();
  gp.acquire();  // a second holder, e.g. a target keeping it in a queue
  EXPECT_EQ(gp.get_ref_count(), 2);
  gp.release();
  EXPECT_EQ(mm.in_use(), 1u) << "returned while still referenced";
  EXPECT_EQ(mm.returns(), 0u);
  gp.release();
  EXPECT_EQ(mm.in_use(), 0u);
  EXPECT_EQ(mm.returns(), 1u);
  // While one payload is held, the next acquisition must not hand out the same one.
  tlm::tlm_generic_payload& a = mm.acquire();
  tlm::tlm_generic_payload& b = mm.acquire();
  EXPECT_NE(&a, &b);
  a.release();
  b.release();
}

TEST(MemoryManager, RecycledPayloadCarriesNoStateFromItsLastUse) {
  MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire(16);
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(0x1234);
  static unsigned char enables[4] = {0xff, 0, 0xff, 0};
  gp.set_byte_enable_ptr(enables);
  gp.set_byte_enable_length(4);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  gp.set_dmi_allowed(true);
  gp.set_extension(new CountedExtension);  // sticky: TLM's reset() alone would keep it
  EXPECT_EQ(CountedExtension::live, 1);
  gp.release();
  EXPECT_EQ(CountedExtension::live, 0) << "the pool must free sticky extensions too";

  tlm::tlm_generic_payload& again = mm.acquire();
  ASSERT_EQ(&again, &gp);
  EXPECT_EQ(again.get_command(), tlm::TLM_IGNORE_COMMAND);
  EXPECT_EQ(again.get_address(), 0u);
  EXPECT_EQ(again.get_data_ptr(), nullptr);
  EXPECT_EQ(again.get_data_length(), 0u);
  EXPECT_EQ(again.get_byte_enable_ptr(), nullptr);
  EXPECT_EQ(again.get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);
  EXPECT_FALSE(again.is_dmi_allowed());
  EXPECT_EQ(again.get_extension<CountedExtension>(), nullptr);
  again.release();
}

TEST(MemoryManager, AutoExtensionsAreFreedOnReturn) {
  MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire();
  gp.set_auto_extension(new CountedExtension);
  gp.release();
  EXPECT_EQ(CountedExtension::live, 0);
}

TEST(MemoryManager, OwnsZeroedDataBuffers) {
  MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire(64);
  ASSERT_NE(gp.get_data_ptr(), nullptr);
  EXPECT_EQ(gp.get_data_length(), 64u);
  EXPECT_EQ(gp.get_streaming_width(), 64u);
  std::memset(gp.get_data_ptr(), 0xAB, 64);
  gp.release();
  EXPECT_GE(mm.buffer_bytes(), 64u);

  tlm::tlm_generic_payload& again = mm.acquire(32);
  ASSERT_EQ(&again, &gp);
  EXPECT_EQ(again.get_data_length(), 32u);
  const std::vector<unsigned char> zeros(32, 0);
  EXPECT_EQ(std::memcmp(again.get_data_ptr(), zeros.data(), 32), 0)
      << "a recycled buffer must not show the previous transaction's bytes";
  again.release();
  EXPECT_THROW(mm.acquire(std::size_t{1} << 33), std::length_error);
  EXPECT_EQ(mm.in_use(), 0u);
}

TEST(MemoryManager, SteadyTrafficStopsAllocatingAfterWarmUp) {
  MemoryManager mm;
  std::vector<tlm::tlm_generic_payload*> held;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 100; ++i) {
      held.push_back(&mm.acquire(8));
    }
    for (auto* gp : held) {
      gp->release();
    }
    held.clear();
  }
  EXPECT_EQ(mm.payloads_created(), 100u);
  EXPECT_EQ(mm.acquisitions(), 500u);
  EXPECT_EQ(mm.returns(), 500u);
  EXPECT_EQ(mm.pooled(), 100u);
}

TEST(MemoryManager, MisuseIsDetected) {
  MemoryManager mm;
  tlm::tlm_generic_payload& gp = mm.acquire();
  gp.release();
  EXPECT_THROW(mm.free(&gp), std::logic_error);  // second return of the same payload

  MemoryManager other;
  tlm::tlm_generic_payload& foreign = other.acquire();
  EXPECT_THROW(mm.free(&foreign), std::invalid_argument);
  tlm::tlm_generic_payload plain;
  EXPECT_THROW(mm.free(&plain), std::invalid_argument);
  foreign.release();
  EXPECT_EQ(mm.pooled(), 1u);
  EXPECT_EQ(other.pooled(), 1u);
}

// A payload still referenced when the manager goes away (in flight at the end of a
// simulation) stays valid and is deleted at its final release: ASan reports a
// use-after-free or a leak if not.
TEST(MemoryManager, PayloadsInFlightOutliveTheManager) {
  auto mm = std::make_unique<MemoryManager>();
  tlm::tlm_generic_payload& a = mm->acquire(128);
  tlm::tlm_generic_payload& b = mm->acquire();
  tlm::tlm_generic_payload& c = mm->acquire();
  c.release();  // pooled: deleted with the manager
  a.acquire();
  a.set_extension(new CountedExtension);
  mm.reset();

  std::memset(a.get_data_ptr(), 1, 128);  // the buffer is still there
  a.set_address(0x40);
  a.release();
  EXPECT_EQ(CountedExtension::live, 1);
  a.release();
  EXPECT_EQ(CountedExtension::live, 0);
  b.release();
}

}  // namespace
