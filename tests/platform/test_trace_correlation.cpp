// The correlation id of a runtime call, followed through a whole request's trace: every
// `launch` slice on a host's runtime API track has its id on the driver's `submit` slice, on
// the device command processor's command slices (named by opcode; the id travels inside the
// 64-byte entries the driver writes and the device fetches over PCIe) and on the engines' work (of simulated,
// not replayed, commands); no device command or engine slice carries an id that no runtime
// call made. The tiny model in timing mode on `test-2`
// (two devices, tensor parallel: all-reduces across the chip-to-chip link), trace in Chrome
// JSON.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::platform {
namespace {

struct Slice {
  std::string name, thread;
  int pid = 0;
  double ts = 0;
  std::uint64_t correlation = 0;
};

std::vector<Slice> read_slices(const std::string& path) {
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  const nlohmann::json& events = doc.at("traceEvents");
  std::map<std::pair<int, int>, std::string> threads;  // (pid, tid) -> thread name
  for (const nlohmann::json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
      threads[{e.value("pid", 0), e.value("tid", 0)}] = e.at("args").value("name", std::string());
  }
  std::vector<Slice> out;
  for (const nlohmann::json& e : events) {
    const std::string ph = e.value("ph", "");
    if (ph != "X" && ph != "B") continue;
    Slice s;
    s.name = e.value("name", "");
    s.pid = e.value("pid", 0);
    s.ts = e.value("ts", 0.0);
    const auto t = threads.find({s.pid, e.value("tid", 0)});
    if (t != threads.end()) s.thread = t->second;
    if (e.contains("args") && e.at("args").contains("correlation_id"))
      s.correlation = e.at("args").at("correlation_id").get<std::uint64_t>();
    out.push_back(s);
  }
  return out;
}

bool is_engine(const std::string& thread) {
  return (thread.size() > 2 && (thread.rfind("me", 0) == 0 || thread.rfind("ve", 0) == 0));
}

SOHUSIM_SYSTEMC_TEST(TraceCorrelation, EveryLaunchIsFollowedToTheDevicesCommandsAndEngines) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("sohusim_corr_" + std::to_string(::getpid()) + ".json")).string();
  {
    SimulatorOptions o = test::options("test-2");
    o.trace_file = path;
    Simulator sim(o);
    const workloads::ModelConfig m = workloads::load_model("tiny", o.config_dirs);
    sim.run([&](HostContext& host) {
      workloads::ScenarioOptions so;
      so.batch = 2;
      so.prompt = 8;
      so.gen = 3;
      std::vector<unsigned> c2c;
      for (unsigned i = 0; i < host.runtime().device_count(); ++i) c2c.push_back(i);
      workloads::run_scenario(host.runtime(), m, so, c2c);
    });
    sim.close_trace();
  }
  const std::vector<Slice> slices = read_slices(path);
  std::filesystem::remove(path);

  std::map<std::uint64_t, double> launches;  // correlation -> API slice start
  std::set<std::uint64_t> api_ids, submitted;
  std::map<std::uint64_t, std::set<int>> commands_on;  // correlation -> device processes with a command
  std::map<std::uint64_t, double> first_command;
  std::set<std::uint64_t> engine_work;
  std::size_t device_commands = 0;
  for (const Slice& s : slices) {
    if (s.thread == "runtime API" && s.correlation != 0) {
      api_ids.insert(s.correlation);
      if (s.name == "launch") launches[s.correlation] = s.ts;
    } else if (s.thread == "driver" && s.name == "submit") {
      submitted.insert(s.correlation);
    } else if (s.thread == "command processor" && test::is_io_command_name(s.name)) {
      ++device_commands;
      ASSERT_NE(s.correlation, 0u) << "a device command without a correlation id at " << s.ts << " us";
      commands_on[s.correlation].insert(s.pid);
      const auto f = first_command.find(s.correlation);
      if (f == first_command.end() || s.ts < f->second) first_command[s.correlation] = s.ts;
    } else if (is_engine(s.thread) && s.correlation != 0) {
      engine_work.insert(s.correlation);
    }
  }
  // Two devices, prefill + 2 decode steps: a launch per device per step at least.
  ASSERT_GE(launches.size(), 6u);
  ASSERT_GT(device_commands, launches.size());
  for (const auto& [c, ts] : launches) {
    EXPECT_EQ(submitted.count(c), 1u) << "launch " << c << " has no driver submit slice";
    ASSERT_EQ(commands_on.count(c), 1u) << "launch " << c << " reached no device command";
    EXPECT_EQ(commands_on[c].size(), 1u) << "launch " << c << " (one device's program) ran on several devices";
    EXPECT_GE(first_command[c], ts) << "launch " << c << ": a device command started before the call";
  }
  // Engine slices come from simulated commands; a replayed command (device.replay: the 2nd
  // and later identical shapes) has its time and counters but no per-tile slices, so only
  // the first step's launches are sure to show engine work: at least one per device.
  std::set<int> devices_with_engine_work;
  for (const auto& [c, devices] : commands_on) {
    if (engine_work.count(c) != 0) devices_with_engine_work.insert(devices.begin(), devices.end());
  }
  EXPECT_EQ(devices_with_engine_work.size(), 2u);
  for (std::uint64_t c : engine_work) EXPECT_EQ(api_ids.count(c), 1u) << "engine work with orphan id " << c;
  // No device command carries an id no runtime call made.
  for (const auto& [c, devices] : commands_on) EXPECT_EQ(api_ids.count(c), 1u) << "orphan correlation id " << c;
}

}  // namespace
}  // namespace sohusim::platform
