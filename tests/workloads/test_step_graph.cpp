// Serving steps (build_step_graph): a step of one uniform group costs what the uniform graph
// of the same shape costs; a mixed step reads the weights once and attends per group; the
// compiler points each group's ATTENTION at its rows of q and of the KV pool; bad groups are
// refused with the numbers.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/regmap/sohu_regs.h"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/graph.hpp"

namespace wl = sohusim::workloads;
namespace drv = sohusim::driver;

namespace {

wl::ModelConfig load(const std::string& name) {
  return wl::load_model(name, {std::string(SOHUSIM_SOURCE_DIR) + "/configs"});
}

void expect_same_cost(const wl::Cost& a, const wl::Cost& b) {
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.weight_elems, b.weight_elems);
  EXPECT_EQ(a.act_elems, b.act_elems);
  EXPECT_EQ(a.kv_read_elems, b.kv_read_elems);
  EXPECT_EQ(a.kv_write_elems, b.kv_write_elems);
  EXPECT_EQ(a.comm_elems, b.comm_elems);
}

unsigned count(const wl::Graph& g, wl::OpKind k) {
  unsigned n = 0;
  for (const wl::Op& op : g.ops) n += op.kind == k ? 1 : 0;
  return n;
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(StepGraph, AUniformDecodeStepCostsWhatTheDecodeGraphCosts) {
  const wl::ModelConfig m = load("llama-3-8b");
  for (unsigned tp : {1u, 2u}) {
    const wl::Shard s{tp, 0};
    const wl::Graph uniform = wl::build_graph(m, s, wl::Phase::Decode, 16, 1, 300);
    const wl::Graph step = wl::build_step_graph(m, s, {wl::StepGroup{16, 1, 300, 0}}, 16, 1 << 16);
    EXPECT_TRUE(step.ragged);
    EXPECT_EQ(step.rows(), 16u);
    expect_same_cost(wl::totals(step), wl::totals(uniform));
  }
}

TEST(StepGraph, AUniformPrefillStepCostsWhatThePrefillGraphCosts) {
  const wl::ModelConfig m = load("gpt2");  // learned positions, GELU, biases
  const wl::Graph uniform = wl::build_graph(m, wl::Shard{}, wl::Phase::Prefill, 1, 200, 200);
  const wl::Graph step = wl::build_step_graph(m, wl::Shard{}, {wl::StepGroup{1, 200, 200, 0}}, 1, 4096);
  EXPECT_EQ(step.phase, wl::Phase::Prefill);
  expect_same_cost(wl::totals(step), wl::totals(uniform));
}

TEST(StepGraph, AMixedStepReadsTheWeightsOnceAndAttendsPerGroup) {
  const wl::ModelConfig m = load("llama-3-8b");
  const std::vector<wl::StepGroup> groups{{8, 1, 500, 0}, {1, 256, 256, 4000}, {1, 100, 900, 5000}};
  const wl::Graph step = wl::build_step_graph(m, wl::Shard{}, groups, 9, 1 << 16);
  EXPECT_EQ(step.rows(), 8u + 256 + 100);
  EXPECT_EQ(count(step, wl::OpKind::Attention), 3 * m.layers);
  const wl::Graph decode_only = wl::build_step_graph(m, wl::Shard{}, {groups[0]}, 8, 1 << 16);
  const wl::GraphTotals t = wl::totals(step), d = wl::totals(decode_only);
  // Weights once (the embedding reads one table row per token: those grow with the rows).
  EXPECT_EQ(t.weight_elems - d.weight_elems, (256u + 100u) * m.hidden);
  // Attention: the sum of the groups' uniform costs.
  std::uint64_t attn_flops = 0, kv_read = 0;
  for (const wl::StepGroup& g : groups) {
    const wl::Graph u = wl::build_graph(m, wl::Shard{}, g.q_len > 1 ? wl::Phase::Prefill : wl::Phase::Decode, g.batch,
                                        g.q_len, g.kv_len);
    attn_flops += wl::totals(u).per_kind.at(wl::OpKind::Attention).flops;
    kv_read += wl::totals(u).per_kind.at(wl::OpKind::Attention).kv_read_elems;
  }
  EXPECT_EQ(t.per_kind.at(wl::OpKind::Attention).flops, attn_flops);
  EXPECT_EQ(t.per_kind.at(wl::OpKind::Attention).kv_read_elems, kv_read);
  // The head sees the 9 sampled rows only.
  for (const wl::Op& op : step.ops) {
    if (op.kind == wl::OpKind::LmHead) {
      EXPECT_EQ(op.gemm.m, 9u);
    }
  }
  // A step of prompt chunks that all go on has no head.
  const wl::Graph chunks = wl::build_step_graph(m, wl::Shard{}, {groups[1]}, 0, 1 << 16);
  EXPECT_EQ(count(chunks, wl::OpKind::LmHead), 0u);
  EXPECT_EQ(count(chunks, wl::OpKind::FinalNorm), 0u);
}

TEST(StepGraph, EachGroupsAttentionPointsAtItsRowsOfQAndOfThePool) {
  wl::ModelConfig m = load("tiny");
  const std::vector<wl::StepGroup> groups{{4, 1, 40, 0}, {1, 30, 60, 200}};
  const std::uint64_t pool = 1024;
  const wl::Graph step = wl::build_step_graph(m, wl::Shard{}, groups, 5, pool);
  const wl::MemoryPlan plan = wl::plan_memory(m, wl::Shard{}, drv::DType::Bf16, step, 1ULL << 30);
  wl::CompileOptions o;
  o.dtype = drv::DType::Bf16;
  const wl::CompiledProgram cp = wl::compile(step, plan, o);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> qk;  // per ATTENTION: q, k
  for (const drv::Command& c : cp.program.commands) {
    if (c.opcode() != SOHU_IO_OP_ATTENTION) continue;
    qk.emplace_back(c.dw[SOHU_IO_ATTENTION_Q_DW] | (std::uint64_t{c.dw[SOHU_IO_ATTENTION_Q_DW + 1]} << 32),
                    c.dw[SOHU_IO_ATTENTION_K_DW] | (std::uint64_t{c.dw[SOHU_IO_ATTENTION_K_DW + 1]} << 32));
  }
  ASSERT_EQ(qk.size(), 2 * m.layers);
  const std::uint64_t q_row_bytes = std::uint64_t{m.heads} * m.head_dim * 2;
  const std::uint64_t cache_row_bytes = std::uint64_t{m.kv_heads} * m.head_dim * 2;
  EXPECT_EQ(qk[0].first, plan.address("q"));
  EXPECT_EQ(qk[0].second, plan.address("L0.k_cache"));
  EXPECT_EQ(qk[1].first, plan.address("q") + 4 * q_row_bytes);  // after the 4 decode rows
  EXPECT_EQ(qk[1].second, plan.address("L0.k_cache") + 200 * cache_row_bytes);

  o.functional = true;
  EXPECT_NE(message([&] { wl::compile(step, plan, o); }).find("timing mode only"), std::string::npos);
}

TEST(StepGraph, BadGroupsAreRefusedWithTheNumbers) {
  const wl::ModelConfig m = load("tiny");  // 128 positions
  EXPECT_NE(message([&] { wl::build_step_graph(m, wl::Shard{}, {}, 0, 64); }).find("no sequences"), std::string::npos);
  EXPECT_NE(message([&] {
              wl::build_step_graph(m, wl::Shard{}, {{1, 10, 5, 0}}, 1, 64);
            }).find("group 0: kv_len = 5 < q_len = 10"),
            std::string::npos);
  EXPECT_NE(message([&] {
              wl::build_step_graph(m, wl::Shard{}, {{1, 1, 200, 0}}, 1, 4096);
            }).find("exceeds max_positions = 128"),
            std::string::npos);
  EXPECT_NE(message([&] {
              wl::build_step_graph(m, wl::Shard{}, {{2, 1, 40, 0}, {1, 1, 40, 70}}, 3, 100);
            }).find("group 1: cache rows 70 .. 109 outside the pool of 100"),
            std::string::npos);
  EXPECT_NE(message([&] {
              wl::build_step_graph(m, wl::Shard{}, {{2, 1, 40, 0}}, 3, 128);
            }).find("3 sampled sequences of 2"),
            std::string::npos);
}
