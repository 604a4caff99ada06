#pragma once
// The rig the FastDram tests share (test_fast_dram_*.cpp): one FastDram built from the
// hbm3-6400 preset with `--set`-style overrides, its completions recorded by request id,
// addresses named by bank group, bank, row and column of pseudo-channel 0, and the
// statistics of that pseudo-channel by name.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hbm_test_support.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/memory/fast_dram.hpp"

namespace sohusim::memory::fastdramtest {

struct Fixture {
  counters::Registry reg;
  std::unique_ptr<FastDram> mem;
  std::map<std::uint64_t, Cycle> done;  // id -> completion cycle

  explicit Fixture(const std::vector<std::string>& sets = {"hbm.controller.refresh=off"}) {
    mem =
        FastDram::from_config(hbmtest::hbm_config("hbm/hbm3-6400", sets), sim::Instrumentation{&reg, nullptr, 0}, "f");
    mem->set_completion([this](const MemRequest& r, Cycle at) {
      EXPECT_EQ(done.count(r.id), 0u) << "request " << r.id << " completed twice";
      done[r.id] = at;
    });
  }
  // Pseudo-channel 0 of stack 0, channel 0: bank group `bg`, bank `bank`, `row`, `column`.
  std::uint64_t at(std::uint32_t bg, std::uint32_t bank, std::uint32_t row, std::uint32_t column = 0) const {
    DecodedAddress d;
    d.bank_group = bg;
    d.bank = bank;
    d.row = row;
    d.column = column;
    return mem->mapping().encode(d);
  }
  void run() {
    while (mem->pending() > 0) mem->advance_to(mem->next_event());
  }
  double stat(const std::string& name) const { return reg.value("f.s0.ch0.pc0." + name); }
  const DramTimings& t() const { return mem->spec().timing; }
  Cycle latency() const { return mem->params().controller.latency; }
};

}  // namespace sohusim::memory::fastdramtest
