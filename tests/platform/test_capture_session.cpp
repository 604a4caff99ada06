// CaptureSession and the aligned view in the trace (docs/profiler.md): the trace carries the
// aligned view, with the ground truth beside it for checking. On clock-sync-2h (host0 only)
// the device clock starts 5 ms in and runs 50 ppm fast, host0's starts at 1.2 s and runs 10 ppm slow: a
// request captured through the driver (trace unit + clock sync between steps) is drawn in the
// trace as "dev0 captured (host0 clock)", each command within 100 ns of the command
// processor's own slice of it (the ground truth, on the same axis), and carrying its error.
// The device's raw stamps, on the same axis, would be 1.19 s off.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "counters/perfetto_decode_support.hpp"
#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/platform/profiling/capture_session.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/platform/system.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::platform {
namespace {

namespace pd = counters::perfetto_decode;

std::string clock_system() {
  return std::string(SOHUSIM_SOURCE_DIR) + "/tests/platform/clock-sync-2h.yaml";
}

std::string temp_trace(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / (stem + std::to_string(::getpid()) + ".pftrace")).string();
}

// A request of the tiny model (2 x 8 tokens in, 4 steps), the capture drained and its clocks
// sampled after every step, and 2 ms of idle host time between steps: drift to correct.
workloads::ScenarioOptions captured_request(CaptureSession& capture, HostContext& host) {
  workloads::ScenarioOptions so;
  so.batch = 2;
  so.prompt = 8;
  so.gen = 4;
  so.progress = [&capture, &host](const std::string&, unsigned, unsigned) {
    capture.step();
    host.access().spend_ns(2'000'000);
  };
  return so;
}

SOHUSIM_SYSTEMC_TEST(CaptureSession, TheTraceCarriesTheAlignedViewBesideTheGroundTruth) {
  const std::string path = temp_trace("sohusim_aligned_");
  std::vector<DeviceCapture> captures;
  AlignedViewStats st;
  double completed = 0, completed_before = 0;
  {
    SimulatorOptions o = test::options(clock_system());
    o.trace_file = path;
    Simulator sim(o);
    const workloads::ModelConfig m = workloads::load_model("tiny", o.config_dirs);
    sim.run(
        [&](HostContext& host) {
          CaptureSession capture(host, sim.system());  // creates the runtime: probe, enable
          completed_before = sim.stats().find("dev0.cp.commands_completed")->value();
          capture.start();
          workloads::run_scenario(host.runtime(), m, captured_request(capture, host), {0});
          capture.stop();
          capture.stop();  // a second stop does nothing
          captures = capture.devices();
        },
        {0});
    completed = sim.stats().find("dev0.cp.commands_completed")->value();
    st = draw_aligned_view(sim, captures);
    sim.close_trace();
  }
  ASSERT_EQ(captures.size(), 1u);
  const DeviceCapture& c = captures[0];
  std::printf(
      "[aligned] %zu commands (%zu records, %llu drops), %zu clock samples, fitted drift %.3f ppm; "
      "error max %.1f ns, mean %.1f ns\n",
      c.commands.size(), c.records, static_cast<unsigned long long>(c.drops), c.clock_samples, c.fit.drift_ppm(),
      st.max_abs_error_ns, st.mean_abs_error_ns);
  EXPECT_EQ(c.drops, 0u);
  EXPECT_EQ(c.unmatched_starts, 0u);
  EXPECT_EQ(c.unmatched_ends, 1u);  // TRACE_CONFIG: the unit was turned on while it ran
  // Every command the device completed after TRACE_CONFIG, paired and aligned.
  EXPECT_EQ(static_cast<double>(c.commands.size()), completed - completed_before - 1);
  EXPECT_GE(c.clock_samples, 8u * 5);  // start, 4 steps, stop
  // 50 ppm fast against a host 10 ppm slow; the bursts span only ~10 ms, where 10 ns of
  // midpoint noise is 1 ppm.
  EXPECT_NEAR(c.fit.drift_ppm(), 60.0, 3.0);
  EXPECT_EQ(st.commands, c.commands.size());
  EXPECT_LE(st.max_abs_error_ns, 100.0);

  // The trace: the captured process, one slice per command, each with its error; the command
  // processor's slices (ground truth) of the same commands within that error.
  const pd::Decoded d = pd::decode_file(path);
  std::filesystem::remove(path);
  std::map<std::uint64_t, std::vector<std::uint64_t>> truth;  // correlation -> CP command starts
  std::vector<const pd::Event*> captured;
  for (const pd::Event& e : d.events) {
    if (e.type != pd::pp::TrackEvent::TYPE_SLICE_BEGIN) continue;
    const std::string process = d.process_name(e.track);
    if (process == "dev0 captured (host0 clock)") {
      captured.push_back(&e);
    } else if (d.track_name(e.track) == "command processor" && test::is_io_command_name(e.name)) {
      truth[e.correlation].push_back(e.ts);
    }
  }
  ASSERT_EQ(captured.size(), c.commands.size());
  std::size_t checked = 0;
  for (const pd::Event* e : captured) {
    ASSERT_EQ(e->args.count("error_ns"), 1u);
    ASSERT_EQ(e->args.count("device_start_ns"), 1u);
    ASSERT_EQ(e->args.count("host_start_ns"), 1u);
    if (e->correlation == 0) continue;  // admin commands: no correlation id to match by
    const auto t = truth.find(e->correlation);
    ASSERT_NE(t, truth.end()) << "captured " << e->name << " has no command processor slice";
    std::uint64_t nearest = t->second.front();
    for (const std::uint64_t ts : t->second)
      if (std::llabs(static_cast<long long>(ts) - static_cast<long long>(e->ts)) <
          std::llabs(static_cast<long long>(nearest) - static_cast<long long>(e->ts)))
        nearest = ts;
    EXPECT_LE(std::llabs(static_cast<long long>(nearest) - static_cast<long long>(e->ts)), 101)
        << e->name << " at " << e->ts << " ns, command processor at " << nearest << " ns";
    ++checked;
  }
  EXPECT_GT(checked, 50u);
}

// Both hosts capture at once (CaptureOptions::hosts): host 0 pings host 1 at every burst, and
// host 1's device is drawn on host 0's clock through two fits (device against host 1, host 1
// against host 0). Host 1's clock is 2.5 s ahead of host 0's and 50 ppm faster, so drawn on
// its own clock the commands would be seconds off; through the fits the error stays within
// the bounds added up (100 ns device to host, 1 us host to host).
SOHUSIM_SYSTEMC_TEST(CaptureSession, AnotherHostsDevicesAreDrawnOnHost0sClock) {
  const std::string path = temp_trace("sohusim_aligned2_");
  std::vector<DeviceCapture> captures(2);
  HostAlignment alignment;
  AlignedViewStats st;
  {
    SimulatorOptions o = test::options(clock_system());
    o.trace_file = path;
    Simulator sim(o);
    const workloads::ModelConfig m = workloads::load_model("tiny", o.config_dirs);
    sim.run(
        [&](HostContext& host) {
          const unsigned h = host.host_index();
          CaptureOptions co;
          co.hosts = {0, 1};
          CaptureSession capture(host, sim.system(), co);
          capture.start();
          workloads::run_scenario(host.runtime(), m, captured_request(capture, host), {h});
          capture.stop();
          captures[h] = capture.devices().at(0);
          if (h == 0) alignment = capture.host_alignment();
        },
        {0, 1});
    st = draw_aligned_view(sim, captures, &alignment);
    sim.close_trace();
  }
  ASSERT_EQ(alignment.fits.count(1), 1u);
  const profiler::ClockFit& f = alignment.fits.at(1);
  const double offset_ns = f.offset_ns(f.last_local_ns);
  std::printf(
      "[aligned 2 hosts] host1 against host0: %.3f ppm, offset %.6f s, over %zu points; %zu commands, "
      "error max %.1f ns, mean %.1f ns\n",
      f.drift_ppm(), offset_ns * 1e-9, f.points, st.commands, st.max_abs_error_ns, st.mean_abs_error_ns);
  EXPECT_NEAR(f.drift_ppm(), 50.0, 5.0);
  EXPECT_NEAR(offset_ns, 2.5e9, 1e6);  // what drawing host 1's times on host 0's axis unaligned would be off by
  EXPECT_EQ(st.commands, captures[0].commands.size() + captures[1].commands.size());
  EXPECT_LE(st.max_abs_error_ns, 1100.0);

  // In the trace: both devices' captured commands under host 0's clock, none under host 1's.
  const pd::Decoded d = pd::decode_file(path);
  std::filesystem::remove(path);
  std::map<std::string, std::size_t> slices;
  for (const pd::Event& e : d.events) {
    if (e.type == pd::pp::TrackEvent::TYPE_SLICE_BEGIN) ++slices[d.process_name(e.track)];
  }
  EXPECT_EQ(slices["dev1 captured (host0 clock)"], captures[1].commands.size());
  EXPECT_EQ(slices["dev1 captured (host1 clock)"], 0u);
  EXPECT_EQ(slices["dev0 captured (host0 clock)"], captures[0].commands.size());
}

}  // namespace
}  // namespace sohusim::platform
