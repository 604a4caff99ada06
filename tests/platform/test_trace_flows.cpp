// Flows in a whole simulation's Perfetto trace (docs/trace.md, "Flows in a simulation"): each runtime
// call that puts commands on a queue starts a flow under its correlation id, and the flow
// runs through the driver's submit (doorbell), the device command processor's fetch, the
// commands (slices named by opcode), the engines' work, the completion write and the MSI-X,
// then the driver's reap, and ends where the call that reaped the last command returns.
// The trace is decoded with protobuf (perfetto_decode_support.hpp) and the flows are joined
// the way trace_processor joins TrackEvent flow ids: in timestamp order, a new id begins, a
// known id steps, a terminating id ends.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "counters/perfetto_decode_support.hpp"
#include "platform/platform_test_support.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/workloads/scenario.hpp"

namespace sohusim::platform {
namespace {

namespace pd = counters::perfetto_decode;

struct Node {
  std::string track;  // thread (or async lane) name
  std::string name;
  std::uint64_t ts = 0;
  bool terminates = false;
};

struct Flows {
  std::map<std::uint64_t, std::vector<Node>> chains;  // flow id -> slices in join order
  std::size_t steps_without_start = 0;                // trace_processor would drop these
  std::size_t terminated = 0;
  std::vector<Node> cp_slices;  // every slice of the command processor tracks
};

Flows join(const pd::Decoded& d) {
  std::vector<const pd::Event*> order;
  for (const pd::Event& e : d.events) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const pd::Event* a, const pd::Event* b) { return a->ts < b->ts; });
  Flows f;
  std::set<std::uint64_t> active;
  for (const pd::Event* e : order) {
    const bool slice = e->type == pd::pp::TrackEvent::TYPE_SLICE_BEGIN || e->type == pd::pp::TrackEvent::TYPE_INSTANT;
    if (!slice) continue;
    const Node n{d.track_name(e->track), e->name, e->ts, false};
    if (n.track == "command processor") f.cp_slices.push_back(n);
    for (const std::uint64_t id : e->flows) {
      if (active.insert(id).second && !f.chains[id].empty()) ++f.steps_without_start;  // restarted
      f.chains[id].push_back(n);
    }
    for (const std::uint64_t id : e->terminating_flows) {
      if (active.erase(id) == 0) continue;  // not active: trace_processor ends nothing
      Node t = n;
      t.terminates = true;
      f.chains[id].push_back(t);
      ++f.terminated;
    }
  }
  return f;
}

std::string describe(const std::vector<Node>& chain) {
  std::ostringstream s;
  for (const Node& n : chain)
    s << "\n  " << n.ts << " ns  " << n.track << " / " << n.name << (n.terminates ? " (end)" : "");
  return s.str();
}

std::size_t index_of(const std::vector<Node>& chain, const std::string& track, const std::string& name,
                     std::size_t from = 0) {
  for (std::size_t i = from; i < chain.size(); ++i)
    if (chain[i].track == track && chain[i].name == name) return i;
  return chain.size();
}

bool is_engine(const std::string& track) {
  return track.size() > 2 && (track.rfind("me", 0) == 0 || track.rfind("ve", 0) == 0);
}

// `detail`: trace.detail. With "summary" a program's flow skips its middle commands, but the
// path from call to return is the same.
void check_flows(const std::string& detail) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("sohusim_flows_" + std::to_string(::getpid()) + ".pftrace")).string();
  {
    SimulatorOptions o = test::options("sohu-1");
    o.trace_file = path;
    o.overrides.push_back("trace.detail=" + detail);
    Simulator sim(o);
    const workloads::ModelConfig m = workloads::load_model("tiny", o.config_dirs);
    sim.run([&](HostContext& host) {
      driver::Runtime& rt = host.runtime();
      // A copy of its own: one DMA_COPY command, waited for by synchronize.
      const driver::Stream s = rt.create_stream(0);
      const driver::HostBuffer buf = rt.alloc_host(0, 1 << 20);
      const std::uint64_t dst = rt.malloc(0, 1 << 20);
      rt.memcpy_h2d_async(s, dst, buf, 0, 1 << 20);
      rt.synchronize(s);
      workloads::ScenarioOptions so;
      so.batch = 1;
      so.prompt = 8;
      so.gen = 2;
      workloads::run_scenario(rt, m, so, {0});
    });
    sim.close_trace();
  }
  const pd::Decoded d = pd::decode_file(path);
  std::filesystem::remove(path);
  const Flows f = join(d);

  // Command slices carry their opcode's name.
  std::set<std::string> io_names;
  for (const device::CommandDesc& c : device::command_table())
    if (c.queue == device::CommandQueue::Io) io_names.insert(c.name);
  std::set<std::string> cp_names;
  for (const Node& n : f.cp_slices) cp_names.insert(n.name);
  for (const char* expected : {"GEMM", "ATTENTION", "VECTOR", "DMA_COPY", "fetch", "completion", "MSI-X"})
    EXPECT_EQ(cp_names.count(expected), 1u) << "no '" << expected << "' slice on the command processor";

  ASSERT_FALSE(f.chains.empty()) << "the trace has no flows";
  EXPECT_EQ(f.steps_without_start, 0u) << "a flow id was reused after it ended";
  std::size_t launches = 0, copies = 0, with_engines = 0;
  for (const auto& [id, chain] : f.chains) {
    SCOPED_TRACE("flow " + std::to_string(id) + ":" + describe(chain));
    ASSERT_GE(chain.size(), 2u);
    // Starts at the call, then the driver's doorbell: the id is the call's correlation id.
    EXPECT_EQ(chain[0].track, "runtime API");
    EXPECT_EQ(chain[1].track, "driver");
    EXPECT_EQ(chain[1].name, "submit");
    // Through the device: the fetch of its entries, its commands, their completions and the
    // interrupt, in that order of first appearance; then the reap; ends at a call's return.
    const std::size_t fetch = index_of(chain, "command processor", "fetch");
    std::size_t command = chain.size();
    for (std::size_t i = fetch; i < chain.size(); ++i)
      if (chain[i].track == "command processor" && io_names.count(chain[i].name) != 0) {
        command = i;
        break;
      }
    const std::size_t completion = index_of(chain, "command processor", "completion", command);
    const std::size_t msix = index_of(chain, "command processor", "MSI-X", completion);
    // The reap slice begins when the driver starts reading the completion queue and takes
    // the entries the device writes while it reads (each costs the driver time), so it may
    // begin before the completion slice of the last command it reaps: after the command.
    const std::size_t reap = index_of(chain, "driver", "reap", command);
    EXPECT_LT(fetch, chain.size()) << "no fetch";
    EXPECT_LT(command, chain.size()) << "no command after the fetch";
    EXPECT_LT(completion, chain.size()) << "no completion write after a command";
    EXPECT_LT(msix, chain.size()) << "no MSI-X after a completion write";
    EXPECT_LT(reap, chain.size()) << "the driver never reaped it";
    EXPECT_TRUE(chain.back().terminates) << "the flow does not end";
    EXPECT_EQ(chain.back().track, "runtime API");
    EXPECT_EQ(chain.back().name, "return");
    for (std::size_t i = 1; i < chain.size(); ++i) EXPECT_GE(chain[i].ts, chain[i - 1].ts);
    if (chain[0].name == "launch") ++launches;
    if (chain[0].name == "memcpy_h2d_async") {
      ++copies;
      EXPECT_LT(index_of(chain, "dma", "dma host->hbm"), chain.size()) << "the copy's DMA slice is not on the flow";
    }
    for (const Node& n : chain) {
      if (is_engine(n.track)) {
        ++with_engines;
        break;
      }
    }
  }
  EXPECT_GE(launches, 2u);  // prefill and a decode step at least
  EXPECT_GE(copies, 1u);
  // Simulated (not replayed) commands show their engines' first tiles on the flow.
  EXPECT_GE(with_engines, 1u);
  EXPECT_EQ(f.terminated, f.chains.size());
  // Full: a completion slice per command (admin ones too); summary: one per interrupt or
  // error, not one per command.
  std::set<std::string> command_names;
  for (const device::CommandDesc& c : device::command_table()) command_names.insert(c.name);
  std::size_t completions = 0, commands = 0;
  for (const Node& n : f.cp_slices) {
    completions += n.name == "completion" ? 1 : 0;
    commands += command_names.count(n.name);
  }
  if (detail == "summary") {
    EXPECT_LT(completions * 4, commands);
  } else {
    EXPECT_EQ(completions, commands);
  }
}

SOHUSIM_SYSTEMC_TEST(TraceFlows, EveryCallIsFollowedFromDoorbellToDeviceAndBackToTheReturn) {
  check_flows("full");
}

SOHUSIM_SYSTEMC_TEST(TraceFlows, SummaryDetailKeepsThePathWithFewerSteps) {
  check_flows("summary");
}

}  // namespace
}  // namespace sohusim::platform
