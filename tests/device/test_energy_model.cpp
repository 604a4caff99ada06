// Energy model: hand-computed joules per component, average power, validation errors.
#include <limits>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/device/units/energy_model.hpp"

using namespace sohusim::device;

TEST(EnergyModel, DefaultsHandComputed) {
  const EnergyParams p;
  EnergyActivity a;
  a.macs[static_cast<unsigned>(DataType::BF16)] = 1'000'000'000'000;      // x 0.4 pJ = 0.4 J
  a.macs[static_cast<unsigned>(DataType::FP8_E4M3)] = 1'000'000'000'000;  // x 0.2 pJ = 0.2 J
  a.sram_bytes = 1'000'000'000;                                           // x 1 pJ = 1 mJ
  a.hbm_activates = 1'000'000;                                            // x 150 pJ = 0.15 mJ
  a.hbm_bytes_read = 1'000'000'000;                                       // x 20 pJ = 20 mJ
  a.hbm_bytes_written = 500'000'000;                                      // x 20 pJ = 10 mJ
  a.pcie_bytes = 1'000'000'000;                                           // x 40 pJ = 40 mJ
  a.c2c_bytes = 1'000'000'000;                                            // x 16 pJ = 16 mJ
  a.vector_ops = 1'000'000'000;                                           // x 1 pJ = 1 mJ
  const EnergyReport r = energy(p, a, 0.01);
  EXPECT_NEAR(r.matrix.dynamic_j, 0.6, 1e-12);
  EXPECT_NEAR(r.sram.dynamic_j, 1e-3, 1e-15);
  EXPECT_NEAR(r.hbm.dynamic_j, 0.15e-3 + 20e-3 + 10e-3, 1e-15);
  EXPECT_NEAR(r.pcie.dynamic_j, 40e-3, 1e-15);
  EXPECT_NEAR(r.c2c.dynamic_j, 16e-3, 1e-15);
  EXPECT_NEAR(r.vector.dynamic_j, 1e-3, 1e-15);
  // Static: 30 + 10 + 15 + 24 + 5 + 10 + 25 = 119 W for 10 ms.
  EXPECT_NEAR(r.matrix.static_j, 0.30, 1e-12);
  EXPECT_NEAR(r.hbm.static_j, 0.24, 1e-12);
  EXPECT_NEAR(r.other.static_j, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(r.other.dynamic_j, 0.0);
  const double total = 0.6 + 1e-3 + 30.15e-3 + 40e-3 + 16e-3 + 1e-3 + 1.19;
  EXPECT_NEAR(r.total_j, total, 1e-12);
  EXPECT_NEAR(r.average_w, total / 0.01, 1e-9);
}

TEST(EnergyModel, CustomParamsAndZeroTime) {
  EnergyParams p;
  p.pj_per_mac = {1, 2, 3, 4, 5};
  p.static_w_matrix = p.static_w_vector = p.static_w_sram = p.static_w_hbm = 0;
  p.static_w_pcie = p.static_w_c2c = p.static_w_other = 0;
  EnergyActivity a;
  a.macs = {1, 10, 100, 1000, 10000};  // 1 + 20 + 300 + 4000 + 50000 pJ
  const EnergyReport r = energy(p, a, 0.0);
  EXPECT_NEAR(r.matrix.dynamic_j, 54321e-12, 1e-20);
  EXPECT_NEAR(r.total_j, 54321e-12, 1e-20);
  EXPECT_EQ(r.average_w, 0.0);
}

TEST(EnergyModel, ValidationErrorsNameTheField) {
  auto msg = [](const EnergyParams& p, double s) {
    try {
      energy(p, EnergyActivity{}, s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EnergyParams p;
  p.pj_per_hbm_byte_read = -1.0;
  EXPECT_NE(msg(p, 1.0).find("pj_per_hbm_byte_read"), std::string::npos);
  p = EnergyParams{};
  p.pj_per_mac[4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(msg(p, 1.0).find("pj_per_mac[fp32]"), std::string::npos);
  p = EnergyParams{};
  p.static_w_c2c = 1e9;
  EXPECT_NE(msg(p, 1.0).find("static_w_c2c"), std::string::npos);
  EXPECT_NE(msg(EnergyParams{}, -1.0).find("seconds"), std::string::npos);
  EXPECT_NE(msg(EnergyParams{}, std::numeric_limits<double>::infinity()).find("seconds"), std::string::npos);
  EXPECT_NO_THROW(validate(EnergyParams{}));
}
