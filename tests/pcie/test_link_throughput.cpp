// Link throughput against the pcie-bench accounting (docs/validation.md; sources in docs/sources.md): the closed
// form, the TLP-by-TLP model and the bulk path, for writes, reads and tag-limited reads.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "link_harness.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/pcie/link_params.hpp"

namespace sohusim::pcie {
namespace {

using test::LinkBench;

LinkParams link(unsigned gen, unsigned lanes, std::uint32_t mps) {
  LinkParams p;
  p.generation = gen;
  p.lanes = lanes;
  p.mps = mps;
  return p;
}

struct Figure {
  unsigned gen;
  std::uint32_t mps;
  double gbps;  // GB/s, pcie-bench model, x16, 3DW, large posted writes
};
void PrintTo(const Figure& f, std::ostream* os) {
  *os << "Gen" << f.gen << " x16 MPS " << f.mps;
}
constexpr Figure kFigures[] = {{3, 128, 12.08}, {3, 256, 13.18}, {3, 512, 13.79}, {4, 128, 24.15}, {4, 256, 26.37},
                               {4, 512, 27.58}, {5, 128, 48.30}, {5, 256, 52.73}, {5, 512, 55.16}};

TEST(LinkAccounting, ClosedFormMatchesPcieBenchFigures) {
  for (const Figure& f : kFigures) {
    const double got = link(f.gen, 16, f.mps).posted_write_throughput() / 1e9;
    EXPECT_NEAR(got, f.gbps, f.gbps * 0.001) << "Gen" << f.gen << " MPS " << f.mps;
  }
}

TEST(LinkAccounting, FourDwAndEcrcFollowFromTheSameArithmetic) {
  LinkParams p = link(3, 16, 256);
  const double base = p.posted_write_throughput();
  p.header_4dw = true;
  EXPECT_NEAR(p.posted_write_throughput() / base, 276.0 / 280.0, 1e-9);
  p.ecrc = true;
  EXPECT_NEAR(p.posted_write_throughput() / base, 276.0 / 284.0, 1e-9);
  EXPECT_EQ(p.tlp_wire_bytes(false, 0), 24u);  // 3DW + ECRC
  EXPECT_EQ(p.tlp_wire_bytes(true, 0), 28u);
}

TEST(LinkAccounting, RawRatesAndFlitMode) {
  EXPECT_NEAR(link(1, 1, 128).raw_bytes_per_s(), 250e6, 1);
  EXPECT_NEAR(link(3, 16, 128).raw_bytes_per_s(), 8e9 * 16 * 128 / 130 / 8, 1);
  const LinkParams g6 = link(6, 16, 256);
  EXPECT_NEAR(g6.raw_bytes_per_s(), 128e9, 1);
  EXPECT_DOUBLE_EQ(g6.dllp_overhead_fraction(), 0.0);
  EXPECT_NEAR(g6.posted_write_throughput(), 128e9 * 236 / 256 * 256 / 268, 1e3);
}

TEST(LinkAccounting, BadParametersNameTheField) {
  auto message = [](LinkParams p) {
    try {
      p.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  LinkParams p;
  p.generation = 7;
  EXPECT_NE(message(p).find("generation 7"), std::string::npos);
  p = LinkParams{};
  p.lanes = 12;
  EXPECT_NE(message(p).find("x12"), std::string::npos);
  p = LinkParams{};
  p.mps = 384;
  EXPECT_NE(message(p).find("MPS 384"), std::string::npos);
  p = LinkParams{};
  p.mrrs = 64;
  EXPECT_NE(message(p).find("MRRS 64"), std::string::npos);
  p = LinkParams{};
  p.rcb = 256;
  EXPECT_NE(message(p).find("RCB 256"), std::string::npos);
  p = LinkParams{};
  p.tag_bits = 9;
  EXPECT_NE(message(p).find("9 bits"), std::string::npos);
}

// Moves `bytes` of posted writes upstream and returns GB/s at the transmitter.
double simulated_write_gbps(const LinkParams& p, std::uint64_t bytes, bool bulk) {
  LinkBench bench(p);
  double gbps = 0;
  test::Driver d("driver", [&] {
    PciePort::Request r;
    r.type = TlpType::MWr;
    r.length = bytes;
    r.allow_bulk = bulk;
    bench.ep->transact(r);
    gbps = static_cast<double>(bytes) / test::now_ns();
  });
  sc_core::sc_start();
  return gbps;
}

// One simulation per process (SystemC elaborates once): the parameter reaches the
// forked child through this variable.
Figure g_figure{};

class LinkThroughputFigure : public ::testing::TestWithParam<Figure> {};

void tlp_level_write_body() {
  const Figure f = g_figure;
  const double got = simulated_write_gbps(link(f.gen, 16, f.mps), 4u << 20, false);
  EXPECT_NEAR(got, f.gbps, f.gbps * 0.01) << "Gen" << f.gen << " MPS " << f.mps;
  std::printf("Gen%u x16 MPS %u: TLP-level %.3f GB/s (pcie-bench %.2f)\n", f.gen, f.mps, got, f.gbps);
}

void bulk_write_body() {
  const Figure f = g_figure;
  const double got = simulated_write_gbps(link(f.gen, 16, f.mps), 64u << 20, true);
  EXPECT_NEAR(got, f.gbps, f.gbps * 0.01) << "Gen" << f.gen << " MPS " << f.mps;
}

TEST_P(LinkThroughputFigure, TlpLevelWritesWithinOnePercent) {
  g_figure = GetParam();
  ::sohusim::test::run_in_child(&tlp_level_write_body);
}

TEST_P(LinkThroughputFigure, BulkWritesWithinOnePercent) {
  g_figure = GetParam();
  ::sohusim::test::run_in_child(&bulk_write_body);
}

INSTANTIATE_TEST_SUITE_P(PcieBench, LinkThroughputFigure, ::testing::ValuesIn(kFigures),
                         [](const ::testing::TestParamInfo<Figure>& p) {
                           return "Gen" + std::to_string(p.param.gen) + "Mps" + std::to_string(p.param.mps);
                         });

}  // namespace
}  // namespace sohusim::pcie
