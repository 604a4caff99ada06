// Config space, BARs, the capability walk, AER, PM and FLR of a PCIe endpoint function.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/pcie/config_space.hpp"
#include "sohusim/pcie/pcie_function.hpp"

namespace sohusim::pcie {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

PcieFunctionSpec accel_spec() {
  PcieFunctionSpec s;
  s.ids.vendor_id = 0x1d0f;
  s.ids.device_id = 0x5001;
  s.ids.revision_id = 0x02;
  s.ids.class_code = 0x120000;  // processing accelerator
  s.ids.subsystem_vendor_id = 0x1d0f;
  s.ids.subsystem_id = 0x0042;
  s.bars = {BarSpec{0, 64 * KiB, true, false}, BarSpec{2, 1 * GiB, true, true}, BarSpec{4, 4 * KiB, false, false}};
  s.msix = MsixSpec{64, 0, 0x8000, 0, 0x9000};
  s.max_payload_size = 512;
  s.link_speed_gen = 5;
  s.link_width = 16;
  return s;
}

// Expects `f` to throw std::invalid_argument whose message contains every one of `parts`.
template <typename F>
void expect_invalid(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

TEST(PcieConfigSpace, AttributesRoRwRw1c) {
  ConfigSpace cs;
  cs.define(0x40, 4, 0x12345678);         // RO
  cs.define(0x44, 4, 0, 0x0000FFFF);      // low half RW
  cs.define(0x48, 2, 0, 0x00FF, 0xFF00);  // low byte RW, high byte RW1C
  cs.write(0x40, 4, 0xFFFFFFFF);
  EXPECT_EQ(cs.read(0x40, 4), 0x12345678u) << "read-only write ignored";
  cs.write(0x44, 4, 0xAAAA5555);
  EXPECT_EQ(cs.read(0x44, 4), 0x00005555u);
  EXPECT_EQ(cs.read(0x45, 1), 0x55u);
  EXPECT_EQ(cs.read(0x44, 2), 0x5555u);
  cs.hw_set_bits(0x48, 2, 0xF000);
  cs.write(0x48, 2, 0x3042);  // clears bits 13:12, sets low byte
  EXPECT_EQ(cs.read(0x48, 2), 0xC042u);
  cs.write(0x48, 2, 0x0000);  // writing 0 to RW1C does nothing
  EXPECT_EQ(cs.read(0x48, 2) & 0xFF00u, 0xC000u);
  // reset() restores reset values except preserved (sticky) bits.
  cs.define(0x50, 4, 0, 0xFFFFFFFF, 0, 0x0000FF00);
  cs.write(0x50, 4, 0x11223344);
  cs.reset();
  EXPECT_EQ(cs.read(0x50, 4), 0x00003300u);
  EXPECT_EQ(cs.read(0x44, 4), 0u);
}

TEST(PcieConfigSpace, BadAccessesNameOffsetAndSize) {
  ConfigSpace cs;
  expect_invalid([&] { (void)cs.read(0x41, 2); }, {"offset 0x41", "size 2"});
  expect_invalid([&] { (void)cs.read(0x42, 4); }, {"offset 0x42", "size 4"});
  expect_invalid([&] { cs.write(0x1000, 4, 0); }, {"offset 0x1000", "size 4"});
  expect_invalid([&] { (void)cs.read(0x40, 3); }, {"size 3", "offset 0x40"});
  EXPECT_NO_THROW((void)cs.read(0xFFC, 4));
}

TEST(PcieConfigSpace, Type0HeaderAndReadOnlyIds) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  EXPECT_EQ(f.config_read(cfg::kVendorId, 2), 0x1d0fu);
  EXPECT_EQ(f.config_read(cfg::kDeviceId, 2), 0x5001u);
  EXPECT_EQ(f.config_read(cfg::kVendorId, 4), 0x50011d0fu);
  EXPECT_EQ(f.config_read(0x08, 4), 0x12000002u) << "class code and revision";
  EXPECT_EQ(f.config_read(cfg::kHeaderType, 1), 0u);
  EXPECT_EQ(f.config_read(cfg::kSubsystemId, 2), 0x0042u);
  EXPECT_NE(f.config_read(cfg::kStatus, 2) & cfg::kStatCapabilitiesList, 0u);
  EXPECT_EQ(f.config_read(cfg::kCapabilitiesPointer, 1), 0x40u);
  // Writes to read-only fields are ignored, not errors.
  f.config_write(cfg::kVendorId, 4, 0xdeadbeef);
  f.config_write(0x08, 4, 0xFFFFFFFF);
  f.config_write(cfg::kCapabilitiesPointer, 1, 0x80);
  EXPECT_EQ(f.config_read(cfg::kVendorId, 4), 0x50011d0fu);
  EXPECT_EQ(f.config_read(0x08, 4), 0x12000002u);
  EXPECT_EQ(f.config_read(cfg::kCapabilitiesPointer, 1), 0x40u);
  // Command: I/O Space RO 0 (no I/O BARs), Memory/Bus Master RW.
  f.config_write(cfg::kCommand, 2, 0xFFFF);
  EXPECT_EQ(f.config_read(cfg::kCommand, 2), 0x0546u);
  EXPECT_TRUE(f.memory_enabled());
  EXPECT_TRUE(f.bus_master_enabled());
}

TEST(PcieConfigSpace, StatusErrorBitsAreRw1c) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  f.config().hw_set_bits(cfg::kStatus, 2, cfg::kStatReceivedMasterAbort | cfg::kStatSignaledTargetAbort);
  f.config_write(cfg::kStatus, 2, cfg::kStatReceivedMasterAbort | cfg::kStatCapabilitiesList);
  const auto st = f.config_read(cfg::kStatus, 2);
  EXPECT_EQ(st & cfg::kStatReceivedMasterAbort, 0u);
  EXPECT_NE(st & cfg::kStatSignaledTargetAbort, 0u);
  EXPECT_NE(st & cfg::kStatCapabilitiesList, 0u) << "writing 1 to a RO bit does not clear it";
}

TEST(PcieBar, Sizing32Bit) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  const std::uint32_t bar4 = cfg::kBar0 + 4 * 4;
  EXPECT_EQ(f.config_read(bar4, 4), 0u) << "32-bit, non-prefetchable memory";
  f.config_write(bar4, 4, 0xFFFFFFFF);
  EXPECT_EQ(f.config_read(bar4, 4), 0xFFFFF000u);
  EXPECT_EQ(~(f.config_read(bar4, 4) & ~0xFu) + 1u, 4096u) << "size as software computes it";
  f.config_write(bar4, 4, 0xFEB01234);
  EXPECT_EQ(f.config_read(bar4, 4), 0xFEB01000u) << "address bits below the size read 0";
  EXPECT_EQ(f.bar_window(4).base, 0xFEB01000u);
  EXPECT_EQ(f.bar_window(4).size, 4096u);
}

TEST(PcieBar, Sizing64BitPrefetchable) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  const std::uint32_t lo = cfg::kBar0 + 2 * 4, hi = lo + 4;
  EXPECT_EQ(f.config_read(lo, 4), 0xCu) << "64-bit (bits 2:1 = 10) prefetchable (bit 3)";
  f.config_write(lo, 4, 0xFFFFFFFF);
  f.config_write(hi, 4, 0xFFFFFFFF);
  EXPECT_EQ(f.config_read(lo, 4), 0xC000000Cu);
  EXPECT_EQ(f.config_read(hi, 4), 0xFFFFFFFFu) << "upper dword fully writable below 4 GiB";
  const std::uint64_t mask = (std::uint64_t{f.config_read(hi, 4)} << 32) | (f.config_read(lo, 4) & ~0xFu);
  EXPECT_EQ(~mask + 1, 1 * GiB);
  f.config_write(lo, 4, 0x40000000);
  f.config_write(hi, 4, 0x00000020);
  EXPECT_EQ(f.bar_window(2).base, 0x2040000000ull);
  // BAR0: 64-bit non-prefetchable 64 KiB; slot 1 is its upper half, slots 3 and 5 are BAR2/unused.
  EXPECT_EQ(f.config_read(cfg::kBar0, 4), 0x4u);
  f.config_write(cfg::kBar0 + 5 * 4, 4, 0xFFFFFFFF);
  EXPECT_EQ(f.config_read(cfg::kBar0 + 5 * 4, 4), 0u) << "unused slot reads 0";
}

TEST(PcieBar, HugeBarMasksUpperDword) {
  PcieFunctionSpec s = accel_spec();
  s.bars = {BarSpec{0, 8 * GiB, true, true}};
  s.msix.reset();
  PcieFunction f(make_rid(1, 0, 0), s);
  f.config_write(cfg::kBar0, 4, 0xFFFFFFFF);
  f.config_write(cfg::kBar0 + 4, 4, 0xFFFFFFFF);
  EXPECT_EQ(f.config_read(cfg::kBar0, 4), 0xCu);
  EXPECT_EQ(f.config_read(cfg::kBar0 + 4, 4), 0xFFFFFFFEu);
}

TEST(PcieBar, BadSpecsNameTheBar) {
  auto with_bars = [](std::vector<BarSpec> bars) {
    PcieFunctionSpec s = accel_spec();
    s.msix.reset();
    s.bars = std::move(bars);
    return s;
  };
  expect_invalid(
      [&] {
        PcieFunction f(0x100, with_bars({BarSpec{0, 3000, false, false}}));
      },
      {"bars", "BAR 0", "3000", "power of two"});
  expect_invalid([&] { PcieFunction f(0x100, with_bars({BarSpec{5, 4096, true, false}})); }, {"BAR 5", "64-bit"});
  expect_invalid(
      [&] {
        PcieFunction f(0x100, with_bars({BarSpec{0, 4096, true, false}, BarSpec{1, 4096, false, false}}));
      },
      {"BAR 1", "slot 1"});
  expect_invalid([&] { PcieFunction f(0x100, with_bars({BarSpec{3, 8, false, false}})); }, {"BAR 3", "minimum"});
  expect_invalid([&] { PcieFunction f(0x100, with_bars({BarSpec{2, 4 * GiB, false, false}})); }, {"BAR 2", "64-bit"});
  expect_invalid([&] { PcieFunction f(0x100, with_bars({BarSpec{6, 4096, false, false}})); }, {"BAR 6"});
}

TEST(PcieBar, DecodeNeedsMemorySpaceEnable) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  f.config_write(cfg::kBar0, 4, 0xF0000000);
  f.config_write(cfg::kBar0 + 4, 4, 0);
  f.config_write(cfg::kBar0 + 16, 4, 0xE0000000);
  EXPECT_FALSE(f.decode(0xF0000010)) << "Memory Space Enable clear";
  f.config_write(cfg::kCommand, 2, cfg::kCmdMemorySpace);
  auto h = f.decode(0xF0000010);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->bar, 0u);
  EXPECT_EQ(h->offset, 0x10u);
  h = f.decode(0xE0000FFC);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->bar, 4u);
  EXPECT_EQ(h->offset, 0xFFCu);
  EXPECT_FALSE(f.decode(0xF0010000)) << "just past BAR0";
  EXPECT_FALSE(f.decode(0x10)) << "BAR2 is unassigned (base 0)";
}

TEST(PcieCapabilities, WalkFindsEveryCapability) {
  PcieFunctionSpec s = accel_spec();
  s.sriov = SriovSpec{};
  s.sriov->total_vfs = 4;
  PcieFunction f(make_rid(1, 0, 0), s);
  const ConfigSpace& cs = f.config();
  auto pm = cs.find_capability(cfg::kCapIdPowerManagement);
  auto exp = cs.find_capability(cfg::kCapIdPciExpress);
  auto msix = cs.find_capability(cfg::kCapIdMsix);
  ASSERT_TRUE(pm && exp && msix);
  EXPECT_EQ(*pm, 0x40u);
  EXPECT_EQ(*exp, f.pcie_cap_offset());
  EXPECT_EQ(*msix, f.msix()->cap_offset());
  EXPECT_FALSE(cs.find_capability(cfg::kCapIdMsi));
  // Walk by hand the way an OS does: pointers and IDs only.
  std::vector<unsigned> ids;
  for (unsigned p = f.config_read(cfg::kCapabilitiesPointer, 1); p != 0; p = f.config_read(p + 1, 1)) {
    ids.push_back(f.config_read(p, 1));
  }
  EXPECT_EQ(ids, (std::vector<unsigned>{0x01, 0x10, 0x11}));
  auto aer = cs.find_ext_capability(cfg::kExtCapIdAer);
  auto sriov = cs.find_ext_capability(cfg::kExtCapIdSriov);
  ASSERT_TRUE(aer && sriov);
  EXPECT_EQ(*aer, 0x100u);
  EXPECT_EQ(*sriov, f.sriov()->cap_offset());
  EXPECT_EQ(f.config_read(0x100, 4) >> 20, *sriov) << "AER's next offset points at SR-IOV";
  EXPECT_EQ(f.config_read(*sriov, 4) >> 20, 0u) << "end of the extended list";
  EXPECT_EQ((f.config_read(0x100, 4) >> 16) & 0xFu, 2u) << "AER version 2";
  EXPECT_FALSE(cs.find_ext_capability(0x000B));
}

TEST(PcieCapabilities, WalkerSurvivesLoopsAndEmptyLists) {
  ConfigSpace cs;
  EXPECT_FALSE(cs.find_capability(cfg::kCapIdMsix)) << "no Capabilities List bit";
  EXPECT_FALSE(cs.find_ext_capability(cfg::kExtCapIdAer)) << "header 0 at 0x100";
  cs.define(cfg::kStatus, 2, cfg::kStatCapabilitiesList);
  cs.define(cfg::kCapabilitiesPointer, 1, 0x40);
  cs.define(0x40, 2, 0x4401);  // PM -> 0x44
  cs.define(0x44, 2, 0x4005);  // MSI -> 0x40: a loop
  EXPECT_FALSE(cs.find_capability(cfg::kCapIdMsix));
  cs.define(0x100, 4, 0x10010001);  // AER pointing at itself
  EXPECT_FALSE(cs.find_ext_capability(cfg::kExtCapIdSriov));
}

TEST(PcieCapabilities, BuilderRunsOutOfRoom) {
  ConfigSpace cs;
  CapabilityListBuilder b(cs);
  EXPECT_EQ(b.add(0x09, 0x80), 0x40u);
  expect_invalid([&] { b.add(0x09, 0x80); }, {"capability", "0x100"});
}

TEST(PcieExpressCap, DeviceAndLinkFields) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  const unsigned p = f.pcie_cap_offset();
  const auto devcap = f.config_read(p + cfg::kExpDevCap, 4);
  EXPECT_EQ(devcap & cfg::kDevCapMpssMask, 2u) << "512 B supported";
  EXPECT_NE(devcap & cfg::kDevCapFlr, 0u);
  EXPECT_EQ(f.mps_bytes(), 128u) << "reset MPS";
  EXPECT_EQ(f.mrrs_bytes(), 512u) << "reset MRRS";
  auto set_devctl = [&](unsigned mps_code, unsigned mrrs_code) {
    const auto v = (f.config_read(p + cfg::kExpDevCtl, 2) & ~0x70E0u) | (mps_code << 5) | (mrrs_code << 12);
    f.config_write(p + cfg::kExpDevCtl, 2, v);
  };
  set_devctl(2, 5);
  EXPECT_EQ(f.mps_bytes(), 512u);
  EXPECT_EQ(f.mrrs_bytes(), 4096u);
  set_devctl(3, 6);  // 1024 B above supported, MRRS 6 reserved: both ignored
  EXPECT_EQ(f.mps_bytes(), 512u);
  EXPECT_EQ(f.mrrs_bytes(), 4096u);
  const auto lnkcap = f.config_read(p + cfg::kExpLnkCap, 4);
  EXPECT_EQ(lnkcap & 0xFu, 5u);
  EXPECT_EQ((lnkcap >> 4) & 0x3Fu, 16u);
  EXPECT_EQ((lnkcap >> 10) & 0x3u, 3u);
  EXPECT_EQ((lnkcap >> 12) & 0x7u, 3u);
  EXPECT_EQ((lnkcap >> 15) & 0x7u, 3u);
  EXPECT_EQ(f.config_read(p + cfg::kExpLnkCap2, 4), 0x3Eu) << "2.5..32 GT/s supported";
  f.set_link_status(4, 8);
  EXPECT_EQ(f.config_read(p + cfg::kExpLnkSta, 2) & 0x3FFu, 4u | (8u << 4));
  f.config_write(p + cfg::kExpLnkCtl, 2, 0x2);
  EXPECT_EQ(f.aspm_control(), 2u) << "L1 enabled";
  f.config_write(p + cfg::kExpLnkSta, 2, 0xFFFF);
  EXPECT_EQ(f.config_read(p + cfg::kExpLnkSta, 2) & 0x3FFu, 4u | (8u << 4)) << "Link Status is RO";
}

TEST(PcieExpressCap, AspmControlOnlyForSupportedStates) {
  PcieFunctionSpec s = accel_spec();
  s.aspm_support = 2;  // L1 only
  PcieFunction f(make_rid(1, 0, 0), s);
  f.config_write(f.pcie_cap_offset() + cfg::kExpLnkCtl, 2, 0x3);
  EXPECT_EQ(f.aspm_control(), 2u);
}

TEST(PcieFunctionSpecCheck, BadValuesNameTheField) {
  auto with = [](auto mutate) {
    PcieFunctionSpec s = accel_spec();
    mutate(s);
    return s;
  };
  expect_invalid([&] { PcieFunction f(0x100, with([](PcieFunctionSpec& s) { s.max_payload_size = 384; })); },
                 {"max_payload_size", "384"});
  expect_invalid([&] { PcieFunction f(0x100, with([](PcieFunctionSpec& s) { s.link_speed_gen = 7; })); },
                 {"link_speed_gen", "7"});
  expect_invalid([&] { PcieFunction f(0x100, with([](PcieFunctionSpec& s) { s.link_width = 3; })); },
                 {"link_width", "x3"});
  expect_invalid([&] { PcieFunction f(0x100, with([](PcieFunctionSpec& s) { s.l1_exit_latency = 8; })); },
                 {"l1_exit_latency"});
  expect_invalid([&] { PcieFunction f(0x100, with([](PcieFunctionSpec& s) { s.ids.vendor_id = 0xFFFF; })); },
                 {"ids.vendor_id"});
  expect_invalid(
      [&] {
        PcieFunction f(0x100, with([](PcieFunctionSpec& s) {
                         s.msix->table_bar = 4;
                         s.msix->pba_bar = 4;
                       }));
      },
      {"msix.table_offset", "BAR 4"});
  expect_invalid([&] { PcieFunction f(0x100, with([](PcieFunctionSpec& s) { s.msix->table_bar = 1; })); },
                 {"msix.table_bar", "BAR 1", "does not exist"});
}

TEST(PcieAer, RecordsErrorsAtSpecBitPositions) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  Aer& aer = f.aer();
  const unsigned a = aer.cap_offset();
  const unsigned devsta = f.pcie_cap_offset() + cfg::kExpDevSta;
  aer.poisoned_tlp({1, 2, 3, 4});
  aer.completion_timeout();
  aer.unexpected_completion();
  aer.malformed_tlp();
  aer.unsupported_request();
  EXPECT_EQ(f.config_read(a + Aer::kUncStatus, 4), (1u << 12) | (1u << 14) | (1u << 16) | (1u << 18) | (1u << 20));
  aer.receiver_error();
  aer.bad_tlp();
  aer.bad_dllp();
  aer.replay_num_rollover();
  aer.replay_timer_timeout();
  EXPECT_EQ(f.config_read(a + Aer::kCorStatus, 4), (1u << 0) | (1u << 6) | (1u << 7) | (1u << 8) | (1u << 12));
  // Device Status: Correctable, Non-Fatal, Fatal (Malformed TLP is fatal by default), UR.
  EXPECT_EQ(f.config_read(devsta, 2) & 0xFu, 0xFu);
  // First error: the poisoned TLP, with its header logged.
  EXPECT_EQ(aer.first_error_pointer(), 12u);
  EXPECT_EQ(aer.header_log(), (std::array<std::uint32_t, 4>{1, 2, 3, 4}));
  // RW1C: clearing the first error lets the next unmasked error log.
  f.config_write(a + Aer::kUncStatus, 4, 1u << 12);
  EXPECT_EQ(f.config_read(a + Aer::kUncStatus, 4) & (1u << 12), 0u);
  aer.poisoned_tlp({9, 9, 9, 9});
  EXPECT_EQ(aer.header_log()[0], 9u);
  f.config_write(a + Aer::kCorStatus, 4, 0xFFFFFFFF);
  EXPECT_EQ(f.config_read(a + Aer::kCorStatus, 4), 0u);
  f.config_write(devsta, 2, 0xF);
  EXPECT_EQ(f.config_read(devsta, 2) & 0xFu, 0u);
  // Default severity: DLP, FCP, Receiver Overflow, Malformed fatal.
  EXPECT_EQ(f.config_read(a + Aer::kUncSeverity, 4), 0x00062010u);
}

TEST(PcieAer, MasksAndMessages) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  Aer& aer = f.aer();
  const unsigned a = aer.cap_offset();
  EXPECT_EQ(aer.bad_tlp().message, ErrorMessage::None) << "reporting disabled in Device Control";
  f.config_write(f.pcie_cap_offset() + cfg::kExpDevCtl, 2,
                 f.config_read(f.pcie_cap_offset() + cfg::kExpDevCtl, 2) | 0xF);
  EXPECT_EQ(aer.bad_tlp().message, ErrorMessage::ErrCor);
  EXPECT_EQ(aer.completion_timeout().message, ErrorMessage::ErrNonFatal);
  EXPECT_EQ(aer.malformed_tlp().message, ErrorMessage::ErrFatal);
  f.config_write(a + Aer::kCorMask, 4, 1u << 6);
  const AerReport r = aer.bad_tlp();
  EXPECT_TRUE(r.masked);
  EXPECT_EQ(r.message, ErrorMessage::None);
  // Masked uncorrectable: status logged, no first-error update, Device Status still set.
  f.config_write(a + Aer::kUncStatus, 4, 0xFFFFFFFF);
  f.config_write(a + Aer::kUncMask, 4, 1u << 20);
  f.config_write(f.pcie_cap_offset() + cfg::kExpDevSta, 2, 0xF);
  EXPECT_TRUE(aer.unsupported_request().masked);
  EXPECT_NE(aer.uncorrectable_status() & (1u << 20), 0u);
  EXPECT_NE(f.config_read(f.pcie_cap_offset() + cfg::kExpDevSta, 2) & cfg::kDevStaUnsupportedRequest, 0u);
  // Unimplemented bits are RsvdZ.
  f.config_write(a + Aer::kUncMask, 4, 0xFFFFFFFF);
  EXPECT_EQ(f.config_read(a + Aer::kUncMask, 4), Aer::kUncImplemented);
}

TEST(PciePowerManagement, D0ToD3hotAndBack) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  const unsigned pmcsr = f.pm_cap_offset() + cfg::kPmControlStatus;
  f.config_write(cfg::kBar0, 4, 0xF0000000);
  f.config_write(cfg::kCommand, 2, cfg::kCmdMemorySpace | cfg::kCmdBusMaster);
  ASSERT_TRUE(f.decode(0xF0000000));
  EXPECT_EQ(f.power_state(), PowerState::D0);
  EXPECT_NE(f.config_read(pmcsr, 2) & cfg::kPmcsrNoSoftReset, 0u);

  ConfigWriteResult r = f.config_write(pmcsr, 2, 3);
  EXPECT_TRUE(r.power_state_changed);
  EXPECT_EQ(r.busy_ps, 10 * kPsPerMs);
  EXPECT_EQ(f.power_state(), PowerState::D3hot);
  EXPECT_FALSE(f.memory_enabled()) << "D3hot decodes no memory";
  EXPECT_FALSE(f.bus_master_enabled());
  EXPECT_FALSE(f.decode(0xF0000000));

  r = f.config_write(pmcsr, 2, 1);  // D1 unsupported: ignored
  EXPECT_FALSE(r.power_state_changed);
  EXPECT_EQ(f.power_state(), PowerState::D3hot);

  r = f.config_write(pmcsr, 2, 0);
  EXPECT_TRUE(r.power_state_changed);
  EXPECT_EQ(r.busy_ps, 10 * kPsPerMs);
  EXPECT_EQ(f.power_state(), PowerState::D0);
  EXPECT_TRUE(f.decode(0xF0000000)) << "No_Soft_Reset: state kept";
}

TEST(PciePowerManagement, SoftResetWithoutNoSoftReset) {
  PcieFunctionSpec s = accel_spec();
  s.no_soft_reset = false;
  s.d3hot_to_d0_delay_ps = 12 * kPsPerMs;
  PcieFunction f(make_rid(1, 0, 0), s);
  int resets = 0;
  f.set_reset_callback([&](PcieFunction&, ResetKind k) {
    EXPECT_EQ(k, ResetKind::SoftReset);
    ++resets;
  });
  const unsigned pmcsr = f.pm_cap_offset() + cfg::kPmControlStatus;
  f.config_write(cfg::kCommand, 2, cfg::kCmdMemorySpace);
  f.config_write(pmcsr, 2, 3);
  const ConfigWriteResult r = f.config_write(pmcsr, 2, 0);
  EXPECT_EQ(r.busy_ps, 12 * kPsPerMs);
  EXPECT_EQ(resets, 1);
  EXPECT_EQ(f.config_read(cfg::kCommand, 2), 0u);
  EXPECT_EQ(f.power_state(), PowerState::D0);
}

TEST(PcieFlr, ClearsStateKeepsStickyBits) {
  PcieFunction f(make_rid(1, 0, 0), accel_spec());
  const unsigned p = f.pcie_cap_offset();
  int resets = 0;
  f.set_reset_callback([&](PcieFunction& fn, ResetKind k) {
    EXPECT_EQ(&fn, &f);
    EXPECT_EQ(k, ResetKind::FunctionLevelReset);
    ++resets;
  });
  f.config_write(cfg::kBar0, 4, 0xF0000000);
  f.config_write(cfg::kBar0 + 8, 4, 0x80000000);
  f.config_write(cfg::kCommand, 2, cfg::kCmdMemorySpace | cfg::kCmdBusMaster);
  f.config_write(f.msix()->cap_offset() + 2, 2, Msix::kCtrlEnable);
  f.msix()->mmio_write(0, 0x8000 + 12, 4, 0);  // unmask vector 0
  f.config_write(p + cfg::kExpLnkCtl, 2, 0x3);
  f.set_link_status(5, 16);
  f.aer().completion_timeout();
  f.aer().bad_dllp();
  f.config_write(f.aer().cap_offset() + Aer::kCorMask, 4, 1u << 8);
  ASSERT_TRUE(f.msix()->enabled());

  const ConfigWriteResult r =
      f.config_write(p + cfg::kExpDevCtl, 2, f.config_read(p + cfg::kExpDevCtl, 2) | cfg::kDevCtlInitiateFlr);
  EXPECT_TRUE(r.flr);
  EXPECT_EQ(r.busy_ps, 100 * kPsPerMs);
  EXPECT_EQ(resets, 1);
  EXPECT_EQ(f.flr_count(), 1u);
  EXPECT_EQ(f.config_read(cfg::kCommand, 2), 0u);
  EXPECT_FALSE(f.msix()->enabled());
  EXPECT_TRUE(f.msix()->vector_masked(0));
  EXPECT_EQ(f.config_read(cfg::kBar0, 4), 0x4u) << "address cleared, type bits kept";
  EXPECT_EQ(f.config_read(cfg::kBar0 + 8, 4), 0xCu);
  EXPECT_EQ(f.config_read(p + cfg::kExpDevCtl, 2) & cfg::kDevCtlInitiateFlr, 0u) << "always reads 0";
  EXPECT_EQ(f.config_read(p + cfg::kExpDevSta, 2) & 0xFu, 0u) << "Device Status is not sticky";
  // Sticky AER registers survive.
  EXPECT_NE(f.aer().uncorrectable_status() & (1u << 14), 0u);
  EXPECT_NE(f.aer().correctable_status() & (1u << 7), 0u);
  EXPECT_EQ(f.config_read(f.aer().cap_offset() + Aer::kCorMask, 4), 1u << 8);
  EXPECT_EQ(f.aer().first_error_pointer(), 14u);
  // The link is not disturbed.
  EXPECT_EQ(f.aspm_control(), 3u);
  EXPECT_EQ(f.config_read(p + cfg::kExpLnkSta, 2) & 0x3FFu, 5u | (16u << 4));
  // Identity untouched.
  EXPECT_EQ(f.config_read(cfg::kVendorId, 4), 0x50011d0fu);
  EXPECT_EQ(f.function_level_reset(), 100 * kPsPerMs);
  EXPECT_EQ(resets, 2);
}

TEST(PcieFlr, NotCapableMeansTheBitIsReadOnly) {
  PcieFunctionSpec s = accel_spec();
  s.flr_capable = false;
  PcieFunction f(make_rid(1, 0, 0), s);
  const unsigned p = f.pcie_cap_offset();
  EXPECT_EQ(f.config_read(p + cfg::kExpDevCap, 4) & cfg::kDevCapFlr, 0u);
  f.config_write(cfg::kCommand, 2, cfg::kCmdBusMaster);
  const auto r = f.config_write(p + cfg::kExpDevCtl, 2, cfg::kDevCtlInitiateFlr);
  EXPECT_FALSE(r.flr);
  EXPECT_TRUE(f.bus_master_enabled());
}

}  // namespace
}  // namespace sohusim::pcie
