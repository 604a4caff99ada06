// AddressMapping: presets, split fields, XOR pairs, mixed-radix digits, the inverse, and
// the validation errors.
#include <random>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "sohusim/memory/address_mapping.hpp"

namespace sohusim::memory {
namespace {

DramOrganization hbm3_stack(std::uint32_t stacks = 1) {
  DramOrganization org;  // HBM3 defaults: 16 ch x 2 pc x 4 bg x 4 banks, 32 columns, 32768 rows
  org.stacks = stacks;
  return org;
}

TEST(AddressMapping, DefaultSpreadsAStreamOverEveryPseudoChannelOfEveryStack) {
  const DramOrganization org = hbm3_stack(2);
  const AddressMapping m = AddressMapping::preset("default", org);
  // 64 B (two columns of one row) per pseudo-channel...
  EXPECT_EQ(m.decode(32).column, 1u);
  EXPECT_EQ(m.decode(32).channel, 0u);
  EXPECT_EQ(m.decode(32).pseudo_channel, 0u);
  // ...then every pseudo-channel of every stack before one is reused.
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> seen;
  for (std::uint64_t i = 0; i < 64; ++i) {
    const DecodedAddress d = m.decode(i * 64);
    EXPECT_EQ(d.bank_group, 0u);
    EXPECT_EQ(d.column, 0u);
    EXPECT_EQ(d.row, 0u);
    seen.insert({d.stack, d.channel, d.pseudo_channel});
  }
  EXPECT_EQ(seen.size(), 64u);  // 2 stacks x 16 channels x 2 pseudo-channels, none reused
  // Then the bank groups rotate, then the columns of the same row, then the banks.
  EXPECT_EQ(m.decode(64 * 64).bank_group, 1u);
  EXPECT_EQ(m.decode(4 * 64 * 64).column, 2u);
  EXPECT_EQ(m.decode(4 * 64 * 64).bank_group, 0u);
  EXPECT_EQ(m.decode(16 * 4 * 64 * 64).bank, 1u);
  EXPECT_EQ(m.decode(16 * 4 * 64 * 64).column, 0u);
}

TEST(AddressMapping, SinglePcKeepsAStreamInOnePseudoChannel) {
  const DramOrganization org = hbm3_stack();
  const AddressMapping m = AddressMapping::preset("single-pc", org);
  for (std::uint64_t i = 0; i < 100000; i += 7) {
    const DecodedAddress d = m.decode(i * 32);
    EXPECT_EQ(d.channel, 0u);
    EXPECT_EQ(d.pseudo_channel, 0u);
  }
  EXPECT_EQ(m.decode(32).bank_group, 1u);  // bank groups alternate: tCCD_S within the one PC
}

TEST(AddressMapping, RowInterleavedPreset) {
  const AddressMapping m = AddressMapping::preset("RoBaBgCoPcCh", hbm3_stack());
  EXPECT_EQ(m.decode(32).channel, 1u);
  EXPECT_EQ(m.decode(16 * 32).pseudo_channel, 1u);
  EXPECT_EQ(m.decode(32 * 32).column, 1u);
}

TEST(AddressMapping, EncodeInvertsDecodeForEveryPreset) {
  std::mt19937_64 rng(7);
  DramOrganization org = hbm3_stack(6);  // 6 stacks: a mixed-radix digit
  org.rows = 49152;                      // 24 Gb dies: another
  for (const std::string& name : AddressMapping::preset_names()) {
    const AddressMapping m = AddressMapping::preset(name, org);
    std::uniform_int_distribution<std::uint64_t> pick(0, org.capacity_bytes() / 32 - 1);
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t a = pick(rng) * 32;
      const DecodedAddress d = m.decode(a);
      ASSERT_LT(d.stack, 6u);
      ASSERT_LT(d.row, 49152u);
      ASSERT_EQ(m.encode(d), a) << name;
    }
  }
}

TEST(AddressMapping, SmallOrganizationIsABijection) {
  DramOrganization org;
  org.stacks = 3;
  org.channels = 2;
  org.pseudo_channels = 2;
  org.sids = 2;
  org.bank_groups = 2;
  org.banks_per_group = 2;
  org.rows = 6;
  org.columns = 4;
  const AddressMapping m(
      {"column:1", "pseudo_channel", "stack", "bank_group", "column", "channel", "bank", "sid", "row"},
      {"bank_group^row", "bank^column"}, org);
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                      std::uint32_t, std::uint32_t>>
      seen;
  const std::uint64_t n = org.capacity_bytes() / 32;
  for (std::uint64_t i = 0; i < n; ++i) {
    const DecodedAddress d = m.decode(i * 32);
    seen.insert({d.stack, d.channel, d.pseudo_channel, d.sid, d.bank_group, d.bank, d.row, d.column});
    ASSERT_EQ(m.encode(d), i * 32);
  }
  EXPECT_EQ(seen.size(), n);
}

TEST(AddressMapping, SplitFieldsTakeLowBitsFirst) {
  const AddressMapping m({"column:2", "pseudo_channel", "channel", "bank_group", "column", "bank", "row"}, {},
                         hbm3_stack());
  EXPECT_EQ(m.decode(32).column, 1u);
  EXPECT_EQ(m.decode(3 * 32).column, 3u);
  EXPECT_EQ(m.decode(4 * 32).pseudo_channel, 1u);
  EXPECT_EQ(m.decode(4 * 32).column, 0u);
  EXPECT_EQ(m.decode(4 * 32 * 32 * 4).column, 4u);  // past pc, channel, bank group: column bit 2
}

TEST(AddressMapping, XorSpreadsRowsOverBankGroups) {
  const DramOrganization org = hbm3_stack();
  const AddressMapping plain = AddressMapping::preset("default", org);
  const AddressMapping xored(AddressMapping::preset_fields("default"), {"bank_group^row"}, org);
  const std::uint64_t row_stride = org.capacity_bytes() / org.rows;
  EXPECT_EQ(plain.decode(row_stride).bank_group, 0u);
  EXPECT_EQ(xored.decode(row_stride).bank_group, 1u);
  EXPECT_EQ(xored.decode(row_stride).row, 1u);
}

void expect_error(const std::vector<std::string>& fields, const std::vector<std::string>& xors,
                  const std::string& fragment, DramOrganization org = hbm3_stack()) {
  try {
    AddressMapping m(fields, xors, org);
    ADD_FAILURE() << "expected an error mentioning " << fragment;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(AddressMapping, Errors) {
  expect_error({"pseudo_channel", "channel", "bank_group", "column", "bank"}, {}, "`row`");
  expect_error({"pseudo_channel", "channel", "bank_group", "column", "column", "bank", "row"}, {}, "more than once");
  expect_error({"pseudo_channel", "channel", "bank_group", "column:4", "column:2", "bank", "row"}, {}, "cover 6");
  expect_error({"pseudo_channel", "channel", "bank_group", "column:4", "bank", "row"}, {}, "cover 4");
  expect_error({"pseudo_channel", "chanel", "bank_group", "column", "bank", "row"}, {}, "`chanel` is not a level");
  expect_error({"pseudo_channel", "channel", "bank_group", "column:x", "bank", "row"}, {}, "bit count");
  expect_error(AddressMapping::preset_fields("default"), {"bank_group"}, "target^source");
  expect_error(AddressMapping::preset_fields("default"), {"bank_group^bank_group"}, "itself");
  DramOrganization odd = hbm3_stack();
  odd.bank_groups = 3;
  expect_error(AddressMapping::preset_fields("default"), {"bank_group^row"}, "power of two", odd);
  expect_error({"pseudo_channel", "channel", "bank_group:1", "bank_group", "column", "bank", "row"}, {}, "power of two",
               odd);
  EXPECT_THROW(AddressMapping::preset("fancy", hbm3_stack()), std::invalid_argument);
}

TEST(AddressMapping, Describe) {
  const AddressMapping m({"column:2", "pseudo_channel", "channel", "bank_group", "column", "bank", "row"}, {"bank^row"},
                         hbm3_stack());
  EXPECT_EQ(m.describe(), "column:2, pseudo_channel, channel, bank_group, column:3, bank, row; xor bank^row");
}

}  // namespace
}  // namespace sohusim::memory
