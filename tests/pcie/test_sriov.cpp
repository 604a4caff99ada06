// SR-IOV: the capability registers, VFs appearing and disappearing, their routing IDs, BAR
// windows and independent MSI-X, FLR, and bad specs.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/pcie/pcie_function.hpp"

namespace sohusim::pcie {
namespace {

constexpr std::uint64_t KiB = 1024;
const RequesterId kPfRid = make_rid(0x3b, 0, 0);

PcieFunctionSpec sriov_spec() {
  PcieFunctionSpec s;
  s.ids.vendor_id = 0x1d0f;
  s.ids.device_id = 0x5001;
  s.ids.class_code = 0x120000;
  s.bars = {BarSpec{0, 64 * KiB, true, false}};
  s.msix = MsixSpec{16, 0, 0x8000, 0, 0x9000};
  s.max_payload_size = 256;
  SriovSpec v;
  v.total_vfs = 8;
  v.first_vf_offset = 4;
  v.vf_stride = 2;
  v.vf_device_id = 0x5002;
  v.vf_bars = {BarSpec{0, 16 * KiB, true, true}, BarSpec{2, 4 * KiB, false, false}};
  v.vf_msix = MsixSpec{4, 0, 0x2000, 0, 0x3000};
  s.sriov = v;
  return s;
}

struct SriovFixture : ::testing::Test {
  PhysicalFunction dev{kPfRid, sriov_spec()};
  PcieFunction& pf = dev.pf();
  unsigned sr = pf.sriov()->cap_offset();
  int changes = 0;
  void SetUp() override {
    dev.set_vfs_changed_callback([this](PhysicalFunction&) { ++changes; });
  }
  void enable(unsigned n, bool mse = true) {
    pf.config_write(sr + Sriov::kNumVfs, 2, n);
    pf.config_write(sr + Sriov::kControl, 2, Sriov::kCtrlVfEnable | (mse ? Sriov::kCtrlVfMse : 0u));
  }
};

TEST_F(SriovFixture, CapabilityRegisters) {
  EXPECT_EQ(pf.config_read(sr, 4) & 0xFFFFu, 0x0010u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kInitialVfs, 2), 8u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kTotalVfs, 2), 8u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kFirstVfOffset, 2), 4u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kVfStride, 2), 2u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kVfDeviceId, 2), 0x5002u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kSupportedPageSizes, 4), 0x553u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kSystemPageSize, 4), 1u);
  pf.config_write(sr + Sriov::kTotalVfs, 2, 100);
  EXPECT_EQ(pf.config_read(sr + Sriov::kTotalVfs, 2), 8u) << "read-only";
  pf.config_write(sr + Sriov::kSystemPageSize, 4, 0x10);
  EXPECT_EQ(pf.sriov()->system_page_size_bytes(), 64u * 1024u);
  pf.config_write(sr + Sriov::kSystemPageSize, 4, 0x4);  // 16 KiB: not supported
  EXPECT_EQ(pf.config_read(sr + Sriov::kSystemPageSize, 4), 0u);
  pf.config_write(sr + Sriov::kControl, 2, 0xFFFF);
  EXPECT_EQ(pf.config_read(sr + Sriov::kControl, 2), 0x19u) << "VFE, VF MSE, ARI";
}

TEST_F(SriovFixture, VfBarSizingIsPerVf) {
  const unsigned b0 = sr + Sriov::kVfBar0;
  EXPECT_EQ(pf.config_read(b0, 4), 0xCu);
  pf.config_write(b0, 4, 0xFFFFFFFF);
  pf.config_write(b0 + 4, 4, 0xFFFFFFFF);
  EXPECT_EQ(pf.config_read(b0, 4), 0xFFFFC00Cu) << "16 KiB per VF";
  EXPECT_EQ(pf.config_read(b0 + 4, 4), 0xFFFFFFFFu);
  pf.config_write(b0 + 8, 4, 0xFFFFFFFF);
  EXPECT_EQ(pf.config_read(b0 + 8, 4), 0xFFFFF000u);
  pf.config_write(b0 + 12, 4, 0xFFFFFFFF);
  EXPECT_EQ(pf.config_read(b0 + 12, 4), 0u) << "unused VF BAR slot";
}

TEST_F(SriovFixture, NumVfsPolicy) {
  pf.config_write(sr + Sriov::kNumVfs, 2, 9);
  EXPECT_EQ(pf.config_read(sr + Sriov::kNumVfs, 2), 0u) << "above TotalVFs: ignored";
  pf.config_write(sr + Sriov::kNumVfs, 2, 8);
  EXPECT_EQ(pf.config_read(sr + Sriov::kNumVfs, 2), 8u);
  pf.config_write(sr + Sriov::kNumVfs, 2, 3);
  pf.config_write(sr + Sriov::kControl, 2, Sriov::kCtrlVfEnable);
  pf.config_write(sr + Sriov::kNumVfs, 2, 5);
  EXPECT_EQ(pf.config_read(sr + Sriov::kNumVfs, 2), 3u) << "frozen while VFs are enabled";
  EXPECT_EQ(dev.num_vfs(), 3u);
}

TEST_F(SriovFixture, EnableCreatesVfsWithRidsAndDisableRemovesThem) {
  EXPECT_EQ(dev.functions().size(), 1u);
  pf.config_write(sr + Sriov::kNumVfs, 2, 4);
  EXPECT_EQ(dev.num_vfs(), 0u) << "NumVFs alone creates nothing";
  pf.config_write(sr + Sriov::kControl, 2, Sriov::kCtrlVfEnable);
  ASSERT_EQ(dev.num_vfs(), 4u);
  EXPECT_EQ(changes, 1);
  const auto fns = dev.functions();
  ASSERT_EQ(fns.size(), 5u);
  EXPECT_EQ(fns[0], &pf);
  for (unsigned i = 0; i < 4; ++i) {
    PcieFunction* vf = dev.vf(i);
    ASSERT_NE(vf, nullptr);
    EXPECT_EQ(fns[i + 1], vf);
    EXPECT_TRUE(vf->is_virtual());
    EXPECT_EQ(vf->vf_index(), i);
    EXPECT_EQ(vf->parent(), &pf);
    EXPECT_EQ(vf->rid(), kPfRid + 4 + 2 * i);
    EXPECT_EQ(dev.find_by_rid(vf->rid()), vf);
    // VF config space: IDs read all ones, the accessors give the real ones.
    EXPECT_EQ(vf->config_read(cfg::kVendorId, 4), 0xFFFFFFFFu);
    EXPECT_EQ(vf->vendor_id(), 0x1d0fu);
    EXPECT_EQ(vf->device_id(), 0x5002u);
    EXPECT_EQ(vf->config_read(0x09, 1) | (vf->config_read(0x0A, 2) << 8), 0x120000u);
    // No BAR registers of its own.
    vf->config_write(cfg::kBar0, 4, 0xFFFFFFFF);
    EXPECT_EQ(vf->config_read(cfg::kBar0, 4), 0u);
    // Capabilities: PCIe, MSI-X, AER; no PM; no SR-IOV.
    EXPECT_TRUE(vf->config().find_capability(cfg::kCapIdPciExpress));
    EXPECT_TRUE(vf->config().find_capability(cfg::kCapIdMsix));
    EXPECT_FALSE(vf->config().find_capability(cfg::kCapIdPowerManagement));
    EXPECT_TRUE(vf->config().find_ext_capability(cfg::kExtCapIdAer));
    EXPECT_FALSE(vf->config().find_ext_capability(cfg::kExtCapIdSriov));
    EXPECT_EQ(vf->sriov(), nullptr);
  }
  EXPECT_EQ(format_rid(dev.vf(3)->rid()), "3b:01.2");
  EXPECT_EQ(dev.find_by_rid(kPfRid + 5), nullptr) << "stride 2 leaves gaps";
  EXPECT_EQ(dev.find_by_rid(kPfRid), &pf);
  EXPECT_EQ(dev.vf(4), nullptr);

  pf.config_write(sr + Sriov::kControl, 2, 0);
  EXPECT_EQ(dev.num_vfs(), 0u);
  EXPECT_EQ(dev.functions().size(), 1u);
  EXPECT_EQ(dev.find_by_rid(kPfRid + 4), nullptr);
  EXPECT_EQ(changes, 2);
}

TEST_F(SriovFixture, VfBarWindowsAndDecode) {
  const unsigned b0 = sr + Sriov::kVfBar0;
  pf.config_write(b0, 4, 0x00000000);
  pf.config_write(b0 + 4, 4, 0x2);         // VF BAR0 at 0x2_0000_0000
  pf.config_write(b0 + 8, 4, 0xC0000000);  // VF BAR2 at 0xC000_0000
  pf.config_write(cfg::kBar0, 4, 0xF0000000);
  pf.config_write(cfg::kCommand, 2, cfg::kCmdMemorySpace);
  enable(4, /*mse=*/false);
  EXPECT_FALSE(dev.vf(2)->memory_enabled());
  EXPECT_FALSE(dev.decode(0x200000000ull + 2 * 16 * KiB)) << "VF MSE clear";
  pf.config_write(sr + Sriov::kControl, 2, Sriov::kCtrlVfEnable | Sriov::kCtrlVfMse);
  EXPECT_EQ(dev.num_vfs(), 4u) << "VF MSE does not recreate VFs";
  for (unsigned i = 0; i < 4; ++i) {
    const VfBarWindow w = dev.vf(i)->bar_window(0);
    EXPECT_EQ(w.base, 0x200000000ull + i * 16 * KiB);
    EXPECT_EQ(w.size, 16 * KiB);
    EXPECT_EQ(dev.vf(i)->bar_window(2).base, 0xC0000000ull + i * 4 * KiB);
  }
  auto h = dev.decode(0x200000000ull + 2 * 16 * KiB + 0x10);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->function, dev.vf(2));
  EXPECT_EQ(h->bar, 0u);
  EXPECT_EQ(h->offset, 0x10u);
  h = dev.decode(0xC0000000ull + 3 * 4 * KiB + 4);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->function, dev.vf(3));
  EXPECT_EQ(h->bar, 2u);
  EXPECT_EQ(h->offset, 4u);
  auto vh = dev.vf(1)->decode(0x200000000ull + 16 * KiB + 8);
  ASSERT_TRUE(vh);
  EXPECT_EQ(vh->offset, 8u);
  EXPECT_FALSE(dev.vf(1)->decode(0x200000000ull + 8)) << "VF 0's window";
  EXPECT_FALSE(dev.decode(0x200000000ull + 4 * 16 * KiB)) << "past the last enabled VF";
  h = dev.decode(0xF0000100);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->function, &pf);
  EXPECT_EQ(h->offset, 0x100u);
  // A VF's own Command register cannot enable memory (RO 0): the PF's VF MSE does.
  dev.vf(0)->config_write(cfg::kCommand, 2, cfg::kCmdMemorySpace | cfg::kCmdBusMaster);
  EXPECT_EQ(dev.vf(0)->config_read(cfg::kCommand, 2), cfg::kCmdBusMaster);
  EXPECT_TRUE(dev.vf(0)->bus_master_enabled());
  EXPECT_FALSE(dev.vf(1)->bus_master_enabled());
}

TEST_F(SriovFixture, EachVfHasItsOwnMsix) {
  enable(2);
  PcieFunction& vf0 = *dev.vf(0);
  PcieFunction& vf1 = *dev.vf(1);
  ASSERT_NE(vf0.msix(), nullptr);
  ASSERT_NE(vf1.msix(), nullptr);
  EXPECT_NE(vf0.msix(), vf1.msix());
  EXPECT_EQ(vf0.msix()->vectors(), 4u);
  EXPECT_EQ(vf0.config_read(vf0.msix()->cap_offset() + 4, 4), 0x2000u) << "table in VF BAR0";
  // Program vector 0 of VF1 only.
  Msix& m1 = *vf1.msix();
  m1.mmio_write(0, 0x2000, 4, 0xFEE01000);
  m1.mmio_write(0, 0x2008, 4, 0x77);
  m1.mmio_write(0, 0x200C, 4, 0);
  vf1.config_write(m1.cap_offset() + 2, 2, Msix::kCtrlEnable);
  vf0.config_write(vf0.msix()->cap_offset() + 2, 2, Msix::kCtrlEnable);
  const auto r1 = m1.raise(0);
  EXPECT_EQ(r1.outcome, MsixRaise::Delivered);
  EXPECT_EQ(r1.message->data, 0x77u);
  EXPECT_EQ(vf0.msix()->raise(0).outcome, MsixRaise::Pending) << "VF0's vector 0 is still masked";
  EXPECT_FALSE(m1.pending(0));
  EXPECT_TRUE(vf0.msix()->pending(0));
  EXPECT_FALSE(pf.msix()->pending(0));
  EXPECT_EQ(vf1.msix()->raise(4).outcome, MsixRaise::BadVector);
}

TEST_F(SriovFixture, VfFlrResetsOnlyThatVf) {
  enable(2);
  PcieFunction& vf0 = *dev.vf(0);
  PcieFunction& vf1 = *dev.vf(1);
  vf0.config_write(cfg::kCommand, 2, cfg::kCmdBusMaster);
  vf1.config_write(cfg::kCommand, 2, cfg::kCmdBusMaster);
  vf0.aer().completion_timeout();
  int resets = 0;
  vf0.set_reset_callback([&](PcieFunction&, ResetKind) { ++resets; });
  const unsigned p = vf0.pcie_cap_offset();
  EXPECT_NE(vf0.config_read(p + cfg::kExpDevCap, 4) & cfg::kDevCapFlr, 0u) << "VFs must support FLR";
  const auto r =
      vf0.config_write(p + cfg::kExpDevCtl, 2, vf0.config_read(p + cfg::kExpDevCtl, 2) | cfg::kDevCtlInitiateFlr);
  EXPECT_TRUE(r.flr);
  EXPECT_EQ(resets, 1);
  EXPECT_FALSE(vf0.bus_master_enabled());
  EXPECT_TRUE(vf1.bus_master_enabled());
  EXPECT_NE(vf0.aer().uncorrectable_status() & (1u << 14), 0u) << "sticky";
  EXPECT_EQ(dev.num_vfs(), 2u);
}

TEST_F(SriovFixture, PfFlrRemovesVfs) {
  enable(3);
  ASSERT_EQ(dev.num_vfs(), 3u);
  const auto r = pf.config_write(pf.pcie_cap_offset() + cfg::kExpDevCtl, 2, cfg::kDevCtlInitiateFlr);
  EXPECT_TRUE(r.flr);
  EXPECT_EQ(dev.num_vfs(), 0u);
  EXPECT_EQ(pf.config_read(sr + Sriov::kNumVfs, 2), 0u);
  EXPECT_EQ(changes, 2);
}

TEST_F(SriovFixture, VfsFollowPfMpsPowerStateAndLink) {
  dev.set_link_status(3, 8);
  enable(2);
  const unsigned ls = dev.vf(1)->pcie_cap_offset() + cfg::kExpLnkSta;
  EXPECT_EQ(dev.vf(1)->config_read(ls, 2) & 0x3FFu, 3u | (8u << 4));
  dev.set_link_status(4, 16);
  EXPECT_EQ(dev.vf(1)->config_read(ls, 2) & 0x3FFu, 4u | (16u << 4));
  PcieFunction& vf = *dev.vf(0);
  const unsigned p = pf.pcie_cap_offset();
  pf.config_write(p + cfg::kExpDevCtl, 2, (pf.config_read(p + cfg::kExpDevCtl, 2) & ~0xE0u) | (1u << 5));
  EXPECT_EQ(pf.mps_bytes(), 256u);
  EXPECT_EQ(vf.mps_bytes(), 256u);
  vf.config_write(vf.pcie_cap_offset() + cfg::kExpDevCtl, 2, (1u << 5) | (3u << 12));
  EXPECT_EQ(vf.mrrs_bytes(), 1024u) << "a VF's MRRS is its own";
  EXPECT_EQ(vf.config_read(vf.pcie_cap_offset() + cfg::kExpDevCtl, 2) & 0xE0u, 0u) << "VF MPS field RsvdP";
  pf.config_write(pf.pm_cap_offset() + cfg::kPmControlStatus, 2, 3);
  EXPECT_EQ(vf.power_state(), PowerState::D3hot);
  EXPECT_FALSE(vf.memory_enabled());
}

TEST(SriovSpecCheck, BadSpecsNameTheField) {
  auto expect_msg = [](RequesterId rid, auto mutate, std::initializer_list<const char*> parts) {
    PcieFunctionSpec s = sriov_spec();
    mutate(*s.sriov);
    try {
      PhysicalFunction dev(rid, s);
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  // 256 VFs from bus 0xff: the last routing ID would be 0x10003.
  expect_msg(make_rid(0xff, 0, 0),
             [](SriovSpec& v) {
               v.total_vfs = 256;
               v.vf_stride = 1;
             },
             {"sriov.total_vfs", "256", "routing-ID"});
  expect_msg(kPfRid, [](SriovSpec& v) { v.total_vfs = 0; }, {"sriov.total_vfs"});
  expect_msg(kPfRid, [](SriovSpec& v) { v.first_vf_offset = 0; }, {"sriov.first_vf_offset"});
  expect_msg(kPfRid, [](SriovSpec& v) { v.vf_stride = 0; }, {"sriov.vf_stride"});
  expect_msg(kPfRid, [](SriovSpec& v) { v.vf_bars[0].size = 3000; }, {"sriov.vf_bars", "BAR 0", "3000"});
  expect_msg(kPfRid, [](SriovSpec& v) { v.vf_bars[1].size = 2048; }, {"sriov.vf_bars", "BAR 2", "minimum"});
  expect_msg(kPfRid, [](SriovSpec& v) { v.vf_msix->table_bar = 4; }, {"sriov.vf_msix.table_bar", "BAR 4"});
  // The same 256 VFs fit from a lower bus.
  PcieFunctionSpec ok = sriov_spec();
  ok.sriov->total_vfs = 256;
  ok.sriov->vf_stride = 1;
  EXPECT_NO_THROW(PhysicalFunction(make_rid(0xfe, 0, 0), ok));
}

}  // namespace
}  // namespace sohusim::pcie
