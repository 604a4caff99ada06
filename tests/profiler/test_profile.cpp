// RunProfile's JSON: a round trip keeps everything; bad input gets an error naming the
// source, the JSON path and what was wrong.
#include <sstream>

#include <gtest/gtest.h>

#include "sohusim/profiler/profile.hpp"

using namespace sohusim::profiler;

namespace {

RunProfile sample() {
  RunProfile p;
  p.start_ns = 0;
  p.end_ns = 5000;
  p.summary["ttft_ms"] = 3.25;
  p.summary_text["model"] = "tiny \"model\"";
  p.units = {{"dev0", Resource::Compute, 1e15}, {"dev0", Resource::Hbm, 4e12}, {"host0", Resource::Host, 1}};
  OpRecord a;
  a.id = 0;
  a.name = "L0.q_proj";
  a.kind = "gemm";
  a.phase = "decode";
  a.place = "dev0";
  a.stalls.busy_useful = 60;
  a.stalls.busy_overhead = 10;
  a.stalls.wait_hbm = 20;
  a.stalls.idle = 10;
  a.layer = 0;
  a.launch = 7;
  a.start_ns = 100;
  a.duration_ns = 900;
  a.work[static_cast<unsigned>(Resource::Compute)] = 2e9;
  a.work[static_cast<unsigned>(Resource::Hbm)] = 3e6;
  a.padded_flops = 5e7;
  OpRecord b = a;
  b.id = 1;
  b.name = "L0.attn";
  b.start_ns = 1000;
  b.deps = {0};
  p.ops = {a, b};
  Window w;
  w.place = "dev0";
  w.start_ns = 0;
  w.end_ns = 5000;
  w.rate[static_cast<unsigned>(Resource::Hbm)] = 1.5e12;
  w.stalls.busy_useful = 10;
  w.stalls.idle = 5;
  p.windows = {w};
  p.commands = {{"dev0", "start_to_complete", 12, 800, 700, 1200, 1500, 1600},
                {"dev0", "GEMM 1x8192x1024 fp8_e4m3", 4, 2000, 2000, 2100, 2200, 2200}};
  p.commands[1].work[static_cast<unsigned>(Resource::Hbm)] = 3.4e7;
  p.commands[1].work[static_cast<unsigned>(Resource::Compute)] = 6.7e7;
  p.hosts = {{"host0", 2500, 2, 30, 1000}};
  p.facts["dev0"]["pcie_mps_bytes"] = 256;
  return p;
}

std::string expect_error(const std::string& text) {
  std::istringstream in(text);
  try {
    read_profile(in, "run.profile.json");
  } catch (const ProfileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text.substr(0, 80);
  return {};
}

}  // namespace

TEST(Profile, RoundTripKeepsEveryField) {
  RunProfile p = sample();
  p.ops[1].stalls = StallBuckets{};  // an op without measured buckets
  p.configuration = {{"system", "sohu-8"}, {"hash", "0123456789abcdef"}};
  std::stringstream s;
  write_profile(s, p);
  const RunProfile q = read_profile(s, "mem");
  ASSERT_EQ(q.ops.size(), 2u);
  EXPECT_EQ(q.ops[1].name, "L0.attn");
  EXPECT_EQ(q.ops[1].deps, std::vector<std::uint32_t>{0});
  EXPECT_EQ(q.ops[0].launch, 7u);
  EXPECT_EQ(q.ops[0].layer, 0);
  EXPECT_DOUBLE_EQ(q.ops[0].work[static_cast<unsigned>(Resource::Compute)], 2e9);
  EXPECT_DOUBLE_EQ(q.ops[0].work[static_cast<unsigned>(Resource::Hbm)], 3e6);
  EXPECT_DOUBLE_EQ(q.ops[0].padded_flops, 5e7);
  EXPECT_DOUBLE_EQ(q.ops[0].stalls.wait_hbm, 20);
  EXPECT_DOUBLE_EQ(q.ops[0].stalls.busy_overhead, 10);
  EXPECT_DOUBLE_EQ(q.ops[0].stalls.total(), 100);
  EXPECT_DOUBLE_EQ(q.ops[1].stalls.total(), 0);  // not measured: no "stalls" written
  EXPECT_EQ(q.summary_text.at("model"), "tiny \"model\"");
  EXPECT_DOUBLE_EQ(q.summary.at("ttft_ms"), 3.25);
  EXPECT_EQ(q.configuration, p.configuration);
  ASSERT_EQ(q.units.size(), 3u);
  EXPECT_EQ(q.units[2].name(), "host0.host");
  ASSERT_EQ(q.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(q.windows[0].rate[static_cast<unsigned>(Resource::Hbm)], 1.5e12);
  EXPECT_DOUBLE_EQ(q.windows[0].stalls.total(), 15);
  ASSERT_EQ(q.commands.size(), 2u);
  EXPECT_DOUBLE_EQ(q.commands[0].p99, 1500);
  EXPECT_FALSE(q.commands[0].has_work());  // an empty "work" object
  EXPECT_EQ(q.commands[1].name, "GEMM 1x8192x1024 fp8_e4m3");
  EXPECT_DOUBLE_EQ(q.commands[1].work[static_cast<unsigned>(Resource::Hbm)], 3.4e7);
  EXPECT_DOUBLE_EQ(q.commands[1].work[static_cast<unsigned>(Resource::Compute)], 6.7e7);
  ASSERT_EQ(q.hosts.size(), 1u);
  EXPECT_DOUBLE_EQ(q.hosts[0].busy_ns, 2500);
  EXPECT_DOUBLE_EQ(q.facts.at("dev0").at("pcie_mps_bytes"), 256);
  std::stringstream again;
  write_profile(again, q);
  std::stringstream first;
  write_profile(first, p);
  EXPECT_EQ(again.str(), first.str());
}

TEST(Profile, ACommandRowFromItsDurations) {
  const CommandStat s = command_stat("dev1", "GEMM", {40, 10, 30, 20, 50});
  EXPECT_EQ(s.place, "dev1");
  EXPECT_EQ(s.name, "GEMM");
  EXPECT_DOUBLE_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.mean, 30);
  EXPECT_DOUBLE_EQ(s.p50, 30);
  EXPECT_DOUBLE_EQ(s.p90, 46);  // between the 4th and 5th of 10..50
  EXPECT_DOUBLE_EQ(s.p99, 49.6);
  EXPECT_DOUBLE_EQ(s.max, 50);
  EXPECT_DOUBLE_EQ(command_stat("dev0", "x", {}).count, 0);
}

TEST(Profile, ResourceNamesRoundTrip) {
  for (unsigned r = 0; r < kResources; ++r) {
    EXPECT_EQ(static_cast<unsigned>(resource_from_name(resource_name(static_cast<Resource>(r)))), r);
  }
  EXPECT_THROW(resource_from_name("gpu"), ProfileError);
}

TEST(Profile, ForeignAndTruncatedInputNameTheProblem) {
  std::stringstream s;
  write_profile(s, sample());
  const std::string whole = s.str();
  std::string e = expect_error(whole.substr(0, whole.size() / 2));
  EXPECT_NE(e.find("run.profile.json"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  e = expect_error(R"({"traceEvents": [], "displayTimeUnit": "ns"})");
  EXPECT_NE(e.find("Chrome JSON trace"), std::string::npos) << e;
  e = expect_error(R"({"ttft_ms": 3.2, "tpot_ms": 1.9})");
  EXPECT_NE(e.find("sohusim run --json"), std::string::npos) << e;
  e = expect_error(std::string("\x0a\x12\x08\x01\x00\xff", 6));  // a protobuf trace's first bytes
  EXPECT_NE(e.find("not a sohusim profile"), std::string::npos) << e;
  e = expect_error(R"({"format": "sohusim-profile", "version": 9, "start_ns": 0, "end_ns": 1})");
  EXPECT_NE(e.find("$.version"), std::string::npos) << e;
}

TEST(Profile, FieldErrorsGiveTheJsonPath) {
  auto with = [](const std::string& ops) {
    return R"({"format": "sohusim-profile", "version": 1, "start_ns": 0, "end_ns": 10,
              "units": [{"place": "dev0", "resource": "compute", "peak": 1e12}], "ops": )" +
           ops + "}";
  };
  std::string e = expect_error(with(R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0}])"));
  EXPECT_NE(e.find("$.ops[0].duration_ns: missing"), std::string::npos) << e;
  e = expect_error(
      with(R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0, "duration_ns": "5"}])"));
  EXPECT_NE(e.find("$.ops[0].duration_ns: expected a number"), std::string::npos) << e;
  e = expect_error(with(
      R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0, "duration_ns": 5, "work": {"tpu": 1}}])"));
  EXPECT_NE(e.find("$.ops[0].work.tpu"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown resource"), std::string::npos) << e;
  e = expect_error(with(
      R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0, "duration_ns": 5, "deps": [0]}])"));
  EXPECT_NE(e.find("not an earlier op"), std::string::npos) << e;
  e = expect_error(
      with(R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev9", "start_ns": 0, "duration_ns": 5}])"));
  EXPECT_NE(e.find("dev9"), std::string::npos) << e;
  e = expect_error(
      with(R"([{"id": 3, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0, "duration_ns": 5}])"));
  EXPECT_NE(e.find("$.ops[0].id"), std::string::npos) << e;
  e = expect_error(with(
      R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0, "duration_ns": 5, "stalls": 3}])"));
  EXPECT_NE(e.find("$.ops[0].stalls: expected an object"), std::string::npos) << e;
  e = expect_error(with(
      R"([{"id": 0, "name": "a", "kind": "gemm", "place": "dev0", "start_ns": 0, "duration_ns": 5, "stalls": {"idle": "x"}}])"));
  EXPECT_NE(e.find("$.ops[0].stalls.idle: expected a number"), std::string::npos) << e;
}

TEST(Profile, MissingFileNamesThePath) {
  try {
    read_profile_file("/nonexistent/run.profile.json");
    FAIL();
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/run.profile.json: cannot open"), std::string::npos);
  }
}
