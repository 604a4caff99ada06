// FastDram and bad input: accesses out of range or misaligned, time running backwards, and
// calibrations out of range, each with its message.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "fast_dram_harness.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory {
namespace {

using fastdramtest::Fixture;

TEST(FastDram, RejectsBadAccessesAndCalibrations) {
  Fixture f;
  EXPECT_THROW(f.mem->enqueue(MemRequest{f.mem->capacity_bytes(), false, 1, 0}), std::out_of_range);
  EXPECT_THROW(f.mem->enqueue(MemRequest{3, false, 1, 0}), std::invalid_argument);
  EXPECT_THROW(f.mem->enqueue_bulk(0, 33, false, 1), std::invalid_argument);
  f.mem->advance_to(10);
  EXPECT_THROW(f.mem->advance_to(5), std::logic_error);
}

TEST(FastDram, RejectsACalibrationOutOfRange) {
  const auto message = [](FastDramCalibration c) {
    counters::Registry reg;
    Fixture probe;
    FastDramParams params = probe.mem->params();
    params.calibration = c;
    try {
      FastDram mem(probe.mem->spec(), probe.mem->mapping(), params, sim::Instrumentation{&reg, nullptr, 0}, "x");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  FastDramCalibration c;
  c.act_gap = 0;
  EXPECT_EQ(message(c), "FastDramCalibration::act_gap is 0; it must be above 0 and at most 1e6 cycles");
  c = FastDramCalibration{};
  c.write_switch_cost = -1;
  EXPECT_EQ(message(c), "FastDramCalibration::write_switch_cost is -1; it must be from 0 to 1e6 cycles");
  EXPECT_EQ(message(FastDramCalibration::fitted()), "accepted");
}

}  // namespace
}  // namespace sohusim::memory
