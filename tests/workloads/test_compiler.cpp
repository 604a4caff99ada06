// The compiler's all-reduce lowerings and its memory plan: what each algorithm sends to
// which peer, how much, under which tags; that every byte a rank sends is received by the
// peer it names with the same tag and length; the mesh's choice by message size; the
// "does not fit" error.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/graph.hpp"
#include "sohusim/workloads/model_config.hpp"

namespace wl = sohusim::workloads;
namespace drv = sohusim::driver;

namespace {

std::vector<std::string> dirs() {
  return {std::string(SOHUSIM_SOURCE_DIR) + "/configs"};
}

struct Coll {
  unsigned op, peer;
  std::uint64_t addr, length;
  std::uint32_t tag;
  std::uint32_t peers;  // ALL_REDUCE
};

std::vector<Coll> collectives(const drv::Program& p) {
  std::vector<Coll> out;
  for (const drv::Command& c : p.commands) {
    if (c.opcode() != SOHU_IO_OP_COLLECTIVE) continue;
    const std::uint32_t d8 = c.dw[SOHU_IO_COLLECTIVE_OP_DW];
    out.push_back(Coll{d8 & SOHU_IO_COLLECTIVE_OP_MASK, (d8 & SOHU_IO_COLLECTIVE_PEER_MASK) >> 8,
                       c.dw[4] | (std::uint64_t{c.dw[5]} << 32), c.dw[6] | (std::uint64_t{c.dw[7]} << 32),
                       c.dw[SOHU_IO_COLLECTIVE_TAG_DW], c.dw[SOHU_IO_COLLECTIVE_PEERS_DW]});
  }
  return out;
}

// One decode step of a 4-layer Llama-3-70B-shaped model on `ranks` ranks, compiled for each.
struct Compiled {
  std::vector<wl::CompiledProgram> programs;
  std::vector<wl::MemoryPlan> plans;
  std::uint64_t allreduce_bytes = 0;  // per all-reduce, per rank
};

Compiled compile_all(unsigned ranks, unsigned batch, wl::AllReduceAlgorithm algorithm) {
  wl::ModelConfig m = wl::load_model("llama-3-70b", dirs());
  m.layers = 2;
  Compiled c;
  for (unsigned r = 0; r < ranks; ++r) {
    const wl::Shard s{ranks, r};
    const wl::Graph pre = wl::build_graph(m, s, wl::Phase::Prefill, batch, 16, 16);
    const wl::Graph g = wl::build_graph(m, s, wl::Phase::Decode, batch, 1, 17);
    c.plans.push_back(wl::plan_memory(m, s, drv::DType::Fp8E4M3, pre, 64ULL << 30));
    c.plans.back().base = 1ULL << 32;
    wl::CompileOptions o;
    o.dtype = drv::DType::Fp8E4M3;
    for (unsigned k = 0; k < ranks; ++k) o.group_devices.push_back(10 + k);  // device index of rank k
    o.tag_base = 100;
    o.allreduce = algorithm;
    c.programs.push_back(wl::compile(g, c.plans.back(), o));
  }
  c.allreduce_bytes = std::uint64_t{batch} * m.hidden;  // FP8: one byte per element
  return c;
}

// Every SEND from rank r to device 10+p under tag t has a receiving step on rank p naming
// device 10+r with the same tag and length, and vice versa (an ALL_REDUCE sends to and
// receives from each device of its PEERS); returns the bytes each rank sent.
std::vector<std::uint64_t> check_matched(const Compiled& c) {
  const unsigned n = static_cast<unsigned>(c.programs.size());
  using Key = std::tuple<unsigned, unsigned, std::uint32_t>;  // from rank, to rank, tag
  std::map<Key, std::vector<std::uint64_t>> sent, received;
  std::vector<std::uint64_t> bytes(n, 0);
  for (unsigned r = 0; r < n; ++r) {
    for (const Coll& x : collectives(c.programs[r].program)) {
      if (x.op == SOHU_IO_COLLECTIVE_OP_ALL_REDUCE) {
        EXPECT_EQ(x.peers & (1u << (10 + r)), 0u) << "an ALL_REDUCE names its own device";
        for (unsigned p = 0; p < n; ++p) {
          if ((x.peers >> (10 + p) & 1u) == 0) continue;
          sent[{r, p, x.tag}].push_back(x.length);
          received[{p, r, x.tag}].push_back(x.length);
          bytes[r] += x.length;
        }
        continue;
      }
      EXPECT_GE(x.peer, 10u);
      const unsigned p = x.peer - 10;
      EXPECT_NE(p, r);
      EXPECT_GT(x.length, 0u);
      if (x.op == SOHU_IO_COLLECTIVE_OP_SEND) {
        sent[{r, p, x.tag}].push_back(x.length);
        bytes[r] += x.length;
      } else {
        received[{p, r, x.tag}].push_back(x.length);
      }
    }
  }
  EXPECT_EQ(sent, received);
  return bytes;
}

}  // namespace

TEST(Compiler, OneShotIsOneAllReduceCommandNamingEveryPeer) {
  const Compiled c = compile_all(4, 64, wl::AllReduceAlgorithm::OneShot);
  const std::vector<std::uint64_t> bytes = check_matched(c);
  const std::vector<Coll> x = collectives(c.programs[1].program);
  ASSERT_EQ(x.size(), 2u * 2u);  // 2 layers x 2 all-reduces, one ALL_REDUCE each
  for (const Coll& k : x) {
    EXPECT_EQ(k.op, SOHU_IO_COLLECTIVE_OP_ALL_REDUCE);
    EXPECT_EQ(k.length, c.allreduce_bytes);
    EXPECT_EQ(k.addr, c.plans[1].address("partial"));
    EXPECT_EQ(k.peers, (1u << 10) | (1u << 12) | (1u << 13));  // devices of ranks 0, 2, 3
  }
  EXPECT_EQ(bytes[1], 4u * 3u * c.allreduce_bytes);
  EXPECT_EQ(c.programs[1].next_tag, 100u + 4u);  // one tag per all-reduce
}

TEST(Compiler, TwoShotScattersReducesAndGathersChunks) {
  const Compiled c = compile_all(4, 64, wl::AllReduceAlgorithm::TwoShot);
  const std::vector<std::uint64_t> bytes = check_matched(c);
  const std::uint64_t chunk = c.allreduce_bytes / 4;
  const std::uint64_t buffer = c.plans[2].address("partial");
  const std::vector<Coll> x = collectives(c.programs[2].program);
  ASSERT_EQ(x.size(), 4u * 12u);  // per all-reduce: 3 SEND + 3 REDUCE_STEP + 3 SEND + 3 GATHER_STEP
  for (unsigned j = 0; j < 12; ++j) {
    const Coll& k = x[j];
    EXPECT_EQ(k.length, chunk);
    if (j < 3) {  // reduce-scatter: chunk p to rank p
      EXPECT_EQ(k.op, SOHU_IO_COLLECTIVE_OP_SEND);
      EXPECT_EQ(k.addr, buffer + (k.peer - 10) * chunk);
    } else if (j < 6) {  // own chunk (rank 2) reduced
      EXPECT_EQ(k.op, SOHU_IO_COLLECTIVE_OP_REDUCE_STEP);
      EXPECT_EQ(k.addr, buffer + 2 * chunk);
    } else if (j < 9) {  // the reduced chunk to everyone, under the next tag
      EXPECT_EQ(k.op, SOHU_IO_COLLECTIVE_OP_SEND);
      EXPECT_EQ(k.addr, buffer + 2 * chunk);
      EXPECT_EQ(k.tag, x[0].tag + 1);
    } else {  // each peer's chunk into its place
      EXPECT_EQ(k.op, SOHU_IO_COLLECTIVE_OP_GATHER_STEP);
      EXPECT_EQ(k.addr, buffer + (k.peer - 10) * chunk);
    }
  }
  // Each rank sends 2 (n-1)/n buffers, against n-1 for one-shot.
  EXPECT_EQ(bytes[2], 4u * 2u * 3u * chunk);
  EXPECT_EQ(c.programs[2].next_tag, 100u + 8u);
}

TEST(Compiler, RingPassesChunksToTheNextRank) {
  const Compiled c = compile_all(4, 64, wl::AllReduceAlgorithm::Ring);
  const std::vector<std::uint64_t> bytes = check_matched(c);
  for (const Coll& k : collectives(c.programs[0].program)) {
    EXPECT_EQ(k.peer, k.op == SOHU_IO_COLLECTIVE_OP_SEND ? 11u : 13u);
  }
  EXPECT_EQ(bytes[0], 4u * 2u * 3u * (c.allreduce_bytes / 4));
}

TEST(Compiler, MeshAutoIsOneShotForSmallAndTwoShotForLargeMessages) {
  // Batch 64 x 8192 x 1 B = 512 KiB: one shot. Batch 256: 2 MiB > kOneShotMaxBytes: two shots.
  ASSERT_LE(64u * 8192u, wl::kOneShotMaxBytes);
  ASSERT_GT(256u * 8192u, wl::kOneShotMaxBytes);
  const auto lengths = [](const Compiled& c) {
    std::vector<std::uint64_t> l;
    for (const Coll& k : collectives(c.programs[0].program)) l.push_back(k.length);
    return l;
  };
  EXPECT_EQ(lengths(compile_all(4, 64, wl::AllReduceAlgorithm::MeshAuto)),
            lengths(compile_all(4, 64, wl::AllReduceAlgorithm::OneShot)));
  EXPECT_EQ(lengths(compile_all(4, 256, wl::AllReduceAlgorithm::MeshAuto)),
            lengths(compile_all(4, 256, wl::AllReduceAlgorithm::TwoShot)));
}

TEST(Compiler, AllReduceWithoutDeviceIndicesIsAnError) {
  wl::ModelConfig m = wl::load_model("llama-3-70b", dirs());
  m.layers = 1;
  const wl::Graph g = wl::build_graph(m, {2, 0}, wl::Phase::Decode, 1, 1, 2);
  wl::MemoryPlan plan = wl::plan_memory(m, {2, 0}, drv::DType::Fp8E4M3, g, 64ULL << 30);
  try {
    wl::compile(g, plan, wl::CompileOptions{});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device indices"), std::string::npos) << e.what();
  }
}

TEST(Compiler, APlanThatDoesNotFitNamesTheNumbers) {
  const wl::ModelConfig m = wl::load_model("llama-3-70b", dirs());
  const wl::Graph g = wl::build_graph(m, {}, wl::Phase::Prefill, 1, 16, 16);
  try {
    wl::plan_memory(m, {}, drv::DType::Bf16, g, 80ULL << 30);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("GiB"), std::string::npos) << w;
    EXPECT_NE(w.find("80"), std::string::npos) << w;
  }
}
