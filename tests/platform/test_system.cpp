// The platform layer: system files, System assembly (hosts, devices on their own root ports,
// chip-to-chip links, host network) and SimDeviceAccess as the driver's view of a host.
#include <string>

#include <gtest/gtest.h>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/driver/runtime.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/platform/system_spec.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::platform {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    SystemSpec::parse(yaml, "sys.yaml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SystemSpec, ShippedSystemsLoad) {
  const SystemSpec one = SystemSpec::load("sohu-1", test::config_dirs());
  EXPECT_EQ(one.device_count(), 1u);
  const SystemSpec eight = SystemSpec::load("sohu-8", test::config_dirs());
  EXPECT_EQ(eight.device_count(), 8u);
  EXPECT_EQ(eight.links_of(0).size(), 28u);  // a full mesh of 8
  const SystemSpec two = SystemSpec::load("sohu-2x8", test::config_dirs());
  EXPECT_EQ(two.hosts.size(), 2u);
  EXPECT_EQ(two.device_count(), 16u);
  EXPECT_DOUBLE_EQ(two.network_bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(two.network_latency_s, 5e-6);
}

TEST(SystemSpec, BadFilesNameTheKey) {
  EXPECT_NE(error_of("hosts: []").find("hosts"), std::string::npos);
  EXPECT_NE(error_of("hosts: [{devices: 0}]").find("hosts[0].devices"), std::string::npos);
  EXPECT_NE(error_of("hosts: [{devices: 2}]\nc2c: [[0, 5]]").find("does not exist"), std::string::npos);
  EXPECT_NE(error_of("hosts: [{devices: 2}]\nc2c: torus").find("allowed: mesh"), std::string::npos);
  EXPECT_NE(error_of("hosts: [{devices: 2}]\nnetwork: {bandwidth: fast}").find("network.bandwidth"), std::string::npos);
  EXPECT_NE(error_of("hosts: [{devices: 1}]\ncolour: red").find("unknown key"), std::string::npos);
  EXPECT_NE(error_of("hosts: [{devices: 1}]\nhost_costs: {launch: 5}").find("host_costs.launch"), std::string::npos);
  EXPECT_NE(error_of("x: &a [1, 2]\ny: [*a, *a]\nhosts: [{devices: 1}]").find("sys.yaml:2:5: YAML aliases"),
            std::string::npos);
  try {
    SystemSpec::load("sohu-3", test::config_dirs());
    FAIL() << "an unknown system loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sohu-8"), std::string::npos) << e.what();
  }
}

SOHUSIM_SYSTEMC_TEST(Platform, EightDevicesEnumerateOnTheirOwnRootPorts) {
  SimulatorOptions o;
  o.system = "sohu-8";
  o.config_dirs = test::config_dirs();
  Simulator sim(o);
  ASSERT_EQ(sim.system().device_count(), 8u);
  std::vector<driver::PciFunction> fns;
  std::vector<driver::BarInfo> bar2;
  std::uint32_t id_reg = 0;
  sim.run([&](HostContext& host) {
    driver::DeviceAccess& a = host.access();
    fns = a.functions();
    for (const auto& f : fns) bar2.push_back(a.bar(f.rid, 2));
    // BAR0 of the last device answers with the device's identity over its own link.
    const driver::BarInfo b0 = a.bar(fns.back().rid, 0);
    a.config_write32(fns.back().rid, 0x04, 0x6);
    id_reg = a.mmio_read32(b0.address + SOHU_ID);
  });
  ASSERT_EQ(fns.size(), 8u);
  for (unsigned i = 0; i < 8; ++i) {
    EXPECT_EQ(fns[i].vendor_id, 0x1E5C);
    EXPECT_EQ(fns[i].device_id, 0x5001);
    EXPECT_EQ(fns[i].rid, static_cast<std::uint16_t>((i + 1) << 8));
    EXPECT_GE(bar2[i].size, sim.system().device(i).params().hbm_bytes);
    EXPECT_TRUE(bar2[i].is_64bit);
  }
  EXPECT_EQ(id_reg, 0x50011E5Cu);
  // Each device has its own link: only the last one carried a memory read (config reads went to all).
  EXPECT_GT(sim.stats().value("host0.pcie.dev7.down.tlps_mrd"), 0.0);
  EXPECT_EQ(sim.stats().value("host0.pcie.dev3.down.tlps_mrd"), 0.0);
}

SOHUSIM_SYSTEMC_TEST(Platform, MmioReadStallsForTheRoundTripAndBadAddressesAreErrors) {
  SimulatorOptions o;
  o.system = "sohu-1";
  o.config_dirs = test::config_dirs();
  Simulator sim(o);
  std::uint64_t t = 0;
  std::string error;
  sim.run([&](HostContext& host) {
    driver::DeviceAccess& a = host.access();
    const auto f = a.functions().at(0);
    a.config_write32(f.rid, 0x04, 0x6);
    const std::uint64_t t0 = a.now_ns();
    a.mmio_read32(a.bar(f.rid, 0).address + SOHU_VERSION);
    t = a.now_ns() - t0;
    try {
      a.mmio_read32(0x1234'0000ULL);
    } catch (const driver::AccessError& e) {
      error = e.what();
    }
  });
  EXPECT_GE(t, 1000u);
  EXPECT_LE(t, 3000u);
  EXPECT_NE(error.find("0x12340000"), std::string::npos) << error;
}

SOHUSIM_SYSTEMC_TEST(Platform, HostNetworkDeliversAfterBandwidthAndLatency) {
  SimulatorOptions o;
  o.system = "sohu-2x8";
  o.config_dirs = test::config_dirs();
  Simulator sim(o);
  std::uint64_t arrived = 0;
  sim.run([&](HostContext& host) {
    if (host.host_index() == 0) host.net_send(1, 50'000'000, 7);  // 1 ms at 50 GB/s
    if (host.host_index() == 1) {
      host.net_recv(0, 50'000'000, 7);
      arrived = host.now_ns();
    }
  });
  EXPECT_EQ(arrived, 1'000'000u + 5'000u);
  EXPECT_EQ(sim.stats().value("net.h0_h1.bytes"), 50e6);
}

// Host 1 waits for a message host 0 never sends: the run ends with an error that says so
// (nothing is left to happen) instead of hanging; `profile_interval_ns` turns the profile's
// sampler on, which wakes on its own interval yet must not keep the run going.
void expect_hang_reported(std::uint64_t profile_interval_ns) {
  SimulatorOptions o;
  o.system = "sohu-2x8";
  o.config_dirs = test::config_dirs();
  o.profile_interval_ns = profile_interval_ns;
  Simulator sim(o);
  try {
    sim.run([&](HostContext& host) {
      if (host.host_index() == 1) host.net_recv(0, 8, 1);  // nobody sends
    });
    FAIL() << "the run returned";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing is left to happen"), std::string::npos) << e.what();
  }
  EXPECT_LT(sim.simulated_seconds(), 1e-3);
}

SOHUSIM_SYSTEMC_TEST(Platform, AHostProgramThatWaitsForeverIsReportedNotHung) {
  expect_hang_reported(0);
}

SOHUSIM_SYSTEMC_TEST(Platform, AHangIsReportedAtOnceWhileSamplersRun) {
  expect_hang_reported(1000);
}

// Devices of one configuration share replay records (device/exec/replay_cache.hpp): a GEMM shape
// simulated on one device is replayed on the other, with the same duration and counters;
// launched on both at once, one records and the other follows the recording.
struct ReplayRun {
  double replayed[2] = {0, 0};
  double active[2] = {0, 0};
  std::uint64_t took_ns[2] = {0, 0};
};

ReplayRun run_gemm_on_both(bool at_once) {
  SimulatorOptions o;
  o.system = "test-2";
  o.config_dirs = test::config_dirs();
  Simulator sim(o);
  ReplayRun r;
  sim.run([&](HostContext& host) {
    driver::Runtime& rt = host.runtime();
    driver::Stream s[2];
    driver::Program p[2];
    for (unsigned d = 0; d < 2; ++d) {
      s[d] = rt.create_stream(d);
      driver::GemmDesc g;
      g.a = rt.malloc(d, 4 << 20);
      g.b = rt.malloc(d, 4 << 20);
      g.c = rt.malloc(d, 4 << 20);
      g.m = 512;
      g.k = 1024;
      g.n = 768;
      p[d].commands.push_back(driver::gemm(g));
    }
    for (unsigned d = 0; d < 2; ++d) {
      const std::uint64_t t0 = host.now_ns();
      rt.launch(s[d], p[d]);
      if (!at_once) {
        rt.synchronize(s[d]);
        r.took_ns[d] = host.now_ns() - t0;
      }
    }
    if (at_once) rt.synchronize();
  });
  for (unsigned d = 0; d < 2; ++d) {
    const std::string dev = "dev" + std::to_string(d);
    r.replayed[d] = sim.stats().value(dev + ".exec.replayed");
    for (const counters::Stat* c : sim.stats().glob(dev + ".me*.active_cycles")) r.active[d] += c->value();
  }
  return r;
}

SOHUSIM_SYSTEMC_TEST(Platform, DevicesOfOneConfigurationShareReplayRecords) {
  const ReplayRun r = run_gemm_on_both(false);
  EXPECT_EQ(r.replayed[0], 0.0);
  EXPECT_EQ(r.replayed[1], 1.0);  // dev1 replays what dev0 recorded
  EXPECT_GT(r.active[0], 0.0);
  EXPECT_EQ(r.active[1], r.active[0]);
  EXPECT_NEAR(static_cast<double>(r.took_ns[1]), static_cast<double>(r.took_ns[0]), 0.02 * r.took_ns[0]);
}

SOHUSIM_SYSTEMC_TEST(Platform, ADeviceFollowsARecordingInProgress) {
  const ReplayRun r = run_gemm_on_both(true);
  EXPECT_EQ(r.replayed[0] + r.replayed[1], 1.0);  // one simulated, one followed
  EXPECT_GT(r.active[0], 0.0);
  EXPECT_EQ(r.active[1], r.active[0]);
}

}  // namespace
}  // namespace sohusim::platform
