// MSI-X: capability fields, the table and PBA over MMIO, masks, pending bits, delivery.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/pcie/pcie_function.hpp"

namespace sohusim::pcie {
namespace {

constexpr std::uint32_t kTable = 0x2000, kPba = 0x3000;

PcieFunctionSpec msix_spec(unsigned vectors = 40) {
  PcieFunctionSpec s;
  s.ids.vendor_id = 0x1d0f;
  s.ids.device_id = 0x5001;
  s.bars = {BarSpec{0, 16 * 1024, true, false}};
  s.msix = MsixSpec{vectors, 0, kTable, 0, kPba};
  return s;
}

struct MsixFixture : ::testing::Test {
  PcieFunction f{make_rid(2, 0, 0), msix_spec()};
  Msix& m = *f.msix();
  unsigned ctrl() const { return f.msix()->cap_offset() + 2u; }
  void program(unsigned v, std::uint64_t addr, std::uint32_t data) {
    EXPECT_EQ(m.mmio_write(0, kTable + 16 * v, 4, addr & 0xFFFFFFFFu).status, MsixStatus::Ok);
    EXPECT_EQ(m.mmio_write(0, kTable + 16 * v + 4, 4, addr >> 32).status, MsixStatus::Ok);
    EXPECT_EQ(m.mmio_write(0, kTable + 16 * v + 8, 4, data).status, MsixStatus::Ok);
  }
  MsixMmioResult set_mask(unsigned v, bool masked) { return m.mmio_write(0, kTable + 16 * v + 12, 4, masked ? 1 : 0); }
  std::uint64_t pba(unsigned qword = 0) const { return m.mmio_read(0, kPba + 8 * qword, 8).value; }
};

TEST_F(MsixFixture, CapabilityRegisters) {
  const unsigned cap = m.cap_offset();
  EXPECT_EQ(f.config_read(cap, 1), cfg::kCapIdMsix);
  EXPECT_EQ(f.config_read(cap + 2, 2), 39u) << "Table Size is N-1; Enable and Function Mask clear";
  EXPECT_EQ(f.config_read(cap + 4, 4), kTable | 0u);
  EXPECT_EQ(f.config_read(cap + 8, 4), kPba | 0u);
  f.config_write(cap + 2, 2, 0xFFFF);
  EXPECT_EQ(f.config_read(cap + 2, 2), 0xC000u | 39u) << "only Enable and Function Mask are writable";
  f.config_write(cap + 4, 4, 0x12345678);
  EXPECT_EQ(f.config_read(cap + 4, 4), kTable);
  EXPECT_EQ(m.table_bytes(), 40u * 16u);
  EXPECT_EQ(m.pba_bytes(), 8u);
}

TEST_F(MsixFixture, TableResetsMaskedAndHoldsEntries) {
  for (unsigned v = 0; v < m.vectors(); ++v) EXPECT_TRUE(m.vector_masked(v));
  EXPECT_EQ(m.mmio_read(0, kTable + 12, 4).value, 1u);
  program(7, 0xFEE0'1000'0000'0ABFull, 0x4321);
  EXPECT_EQ(m.mmio_read(0, kTable + 16 * 7, 4).value, 0x00000ABCu) << "address bits 1:0 read 0";
  EXPECT_EQ(m.mmio_read(0, kTable + 16 * 7 + 4, 4).value, 0xFEE01000u);
  EXPECT_EQ(m.mmio_read(0, kTable + 16 * 7 + 8, 4).value, 0x4321u);
  EXPECT_EQ(m.mmio_read(0, kTable + 16 * 7, 8).value, 0xFEE0'1000'0000'0ABCull) << "qword read";
  m.mmio_write(0, kTable + 16 * 7 + 12, 4, 0xFFFFFFFE);
  EXPECT_EQ(m.mmio_read(0, kTable + 16 * 7 + 12, 4).value, 0u) << "only the mask bit is writable";
  ASSERT_TRUE(m.entry(7));
  EXPECT_EQ(m.entry(7)->data, 0x4321u);
}

TEST_F(MsixFixture, DeliversWhenEnabledAndUnmasked) {
  program(3, 0xFEE00000, 0x33);
  set_mask(3, false);
  f.config_write(ctrl(), 2, Msix::kCtrlEnable);
  const MsixRaiseResult r = m.raise(3);
  EXPECT_EQ(r.outcome, MsixRaise::Delivered);
  ASSERT_TRUE(r.message);
  EXPECT_EQ(r.message->vector, 3u);
  EXPECT_EQ(r.message->address, 0xFEE00000u);
  EXPECT_EQ(r.message->data, 0x33u);
  EXPECT_FALSE(m.pending(3));
}

TEST_F(MsixFixture, PerVectorMaskPendsAndUnmaskDelivers) {
  program(5, 0xFEE00000, 0x55);
  f.config_write(ctrl(), 2, Msix::kCtrlEnable);
  EXPECT_EQ(m.raise(5).outcome, MsixRaise::Pending) << "vector masked at reset";
  EXPECT_EQ(m.raise(37).outcome, MsixRaise::Pending);
  EXPECT_TRUE(m.pending(5));
  EXPECT_EQ(pba(), (1ull << 5) | (1ull << 37));
  EXPECT_EQ(m.mmio_read(0, kPba + 4, 4).value, 1u << 5) << "upper PBA dword holds vectors 32..63";
  const MsixMmioResult w = set_mask(5, false);
  EXPECT_EQ(w.status, MsixStatus::Ok);
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_EQ(w.messages[0].vector, 5u);
  EXPECT_EQ(w.messages[0].data, 0x55u);
  EXPECT_FALSE(m.pending(5));
  EXPECT_EQ(pba(), 1ull << 37);
  EXPECT_TRUE(set_mask(5, false).messages.empty()) << "delivered once";
}

TEST_F(MsixFixture, FunctionMaskAndEnableFlushPending) {
  for (unsigned v : {1u, 2u, 9u}) {
    program(v, 0xFEE00000 + v * 0x10, v);
    set_mask(v, false);
  }
  EXPECT_EQ(m.raise(1).outcome, MsixRaise::Pending) << "MSI-X not enabled yet";
  f.config_write(ctrl(), 2, Msix::kCtrlEnable | Msix::kCtrlFunctionMask);
  EXPECT_TRUE(m.function_masked());
  EXPECT_EQ(m.raise(2).outcome, MsixRaise::Pending);
  EXPECT_EQ(m.raise(9).outcome, MsixRaise::Pending);
  set_mask(9, true);  // vector 9 individually masked too
  const ConfigWriteResult r = f.config_write(ctrl(), 2, Msix::kCtrlEnable);
  ASSERT_EQ(r.msix_messages.size(), 2u);
  EXPECT_EQ(r.msix_messages[0].vector, 1u);
  EXPECT_EQ(r.msix_messages[0].address, 0xFEE00010u);
  EXPECT_EQ(r.msix_messages[1].vector, 2u);
  EXPECT_TRUE(m.pending(9));
  EXPECT_FALSE(m.pending(1));
  const MsixMmioResult w = set_mask(9, false);
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_EQ(w.messages[0].vector, 9u);
  EXPECT_EQ(pba(), 0u);
}

TEST_F(MsixFixture, BadAccessesAreStatusesNotCrashes) {
  EXPECT_EQ(m.mmio_read(0, 0x100, 4).status, MsixStatus::OutsideTableAndPba);
  EXPECT_EQ(m.mmio_write(0, kTable + 40 * 16, 4, 1).status, MsixStatus::OutsideTableAndPba) << "one past the table";
  EXPECT_EQ(m.mmio_write(1, kTable, 4, 1).status, MsixStatus::OutsideTableAndPba) << "other BAR";
  EXPECT_EQ(m.mmio_read(0, kTable + 2, 4).status, MsixStatus::BadAccess);
  EXPECT_EQ(m.mmio_read(0, kTable, 2).status, MsixStatus::BadAccess);
  EXPECT_EQ(m.mmio_write(0, kTable + 4, 8, 0).status, MsixStatus::BadAccess) << "qword must be 8-aligned";
  EXPECT_EQ(m.mmio_read(0, kPba + 8, 4).status, MsixStatus::OutsideTableAndPba) << "PBA is one qword";
  EXPECT_EQ(m.mmio_write(0, kPba, 4, 0xFFFFFFFF).status, MsixStatus::ReadOnly);
  EXPECT_EQ(pba(), 0u);
  EXPECT_EQ(m.raise(40).outcome, MsixRaise::BadVector);
  EXPECT_EQ(m.raise(0xFFFFFFFFu).outcome, MsixRaise::BadVector);
  EXPECT_FALSE(m.pending(4000));
  EXPECT_FALSE(m.entry(40));
  EXPECT_TRUE(m.contains(0, kTable));
  EXPECT_TRUE(m.contains(0, kPba + 7));
  EXPECT_FALSE(m.contains(0, kPba + 8));
  EXPECT_STREQ(to_string(MsixStatus::BadVector), "MSI-X vector out of range");
}

TEST(MsixSpecCheck, BadPlacementsNameTheField) {
  auto expect_msg = [](MsixSpec s, const char* part) {
    const BarSet bars({BarSpec{0, 16 * 1024, false, false}}, cfg::kBar0);
    try {
      Msix::validate(s, "msix", &bars);
      ADD_FAILURE() << "no exception for " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_msg(MsixSpec{0, 0, 0x2000, 0, 0x3000}, "msix.vectors");
  expect_msg(MsixSpec{2049, 0, 0x2000, 0, 0x3000}, "msix.vectors");
  expect_msg(MsixSpec{8, 0, 0x2004, 0, 0x3000}, "msix.table_offset");
  expect_msg(MsixSpec{8, 0, 0x2000, 0, 0x3001}, "msix.pba_offset");
  expect_msg(MsixSpec{8, 0, 0x2000, 0, 0x2040}, "overlaps");
  expect_msg(MsixSpec{2048, 0, 0x2000, 0, 0x1000}, "does not fit");
  expect_msg(MsixSpec{8, 6, 0x2000, 0, 0x3000}, "msix.table_bar");
  expect_msg(MsixSpec{8, 0, 0x2000, 2, 0x3000}, "msix.pba_bar");
}

TEST_F(MsixFixture, FlrMasksEverything) {
  program(0, 0xFEE00000, 1);
  set_mask(0, false);
  f.config_write(ctrl(), 2, Msix::kCtrlEnable);
  set_mask(1, true);
  m.raise(1);
  f.function_level_reset();
  EXPECT_FALSE(m.enabled());
  EXPECT_TRUE(m.vector_masked(0));
  EXPECT_EQ(m.entry(0)->address, 0u);
  EXPECT_FALSE(m.pending(1));
}

}  // namespace
}  // namespace sohusim::pcie
