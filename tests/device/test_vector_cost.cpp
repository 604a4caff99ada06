// Vector-engine costs: hand-computed cycles, bytes and FLOPs for each recipe, the attention
// softmax (full and causal), and validation errors.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/device/compute/vector_cost.hpp"

using namespace sohusim::device;

namespace {
// Defaults: 256 lanes; alu 1, exp 5, rsqrt 4, div 5, tanh 4, sigmoid 6; 32 cycles per reduction.
const VectorEngineParams kDefault{};

void expect_work(const VectorWork& w, std::uint64_t cycles, std::uint64_t elements, std::uint64_t rd, std::uint64_t wr,
                 std::uint64_t flops) {
  EXPECT_EQ(w.cycles, cycles);
  EXPECT_EQ(w.elements, elements);
  EXPECT_EQ(w.bytes_read, rd);
  EXPECT_EQ(w.bytes_written, wr);
  EXPECT_EQ(w.flops, flops);
}
}  // namespace

TEST(VectorCost, RmsNorm) {
  // 4 x 1024 bf16: work 4096*3 + 4*(2 alu + rsqrt 4) = 12312 -> ceil(/256) = 49, + 4 rows * 32.
  // Reads x (4096) + gamma (1024) elements; FLOPs 4096*4 + 4*3.
  expect_work(vector_op_cost(kDefault, VectorOp::RmsNorm, 4, 1024, DataType::BF16, DataType::BF16), 177, 4096, 10240,
              8192, 16396);
}

TEST(VectorCost, LayerNorm) {
  // 1 x 256 fp16: 256*5 + (3 + 4) = 1287 -> 6, + 2 reductions * 32; reads x, gamma, beta.
  expect_work(vector_op_cost(kDefault, VectorOp::LayerNorm, 1, 256, DataType::FP16, DataType::FP16), 70, 256, 1536, 512,
              1796);
}

TEST(VectorCost, Softmax) {
  // 2 x 300 fp32: 600*(4 + exp 5) + 2*div 5 = 5410 -> 22, + 2 rows * 2 * 32.
  expect_work(vector_op_cost(kDefault, VectorOp::Softmax, 2, 300, DataType::FP32, DataType::FP32), 150, 600, 2400, 2400,
              3002);
}

TEST(VectorCost, ElementwiseOps) {
  // Swiglu 3 x 8 (gate|up): 12 results, 12*(2 + 6) = 96 -> 1 cycle; reads 24 bf16, writes 12 fp8.
  expect_work(vector_op_cost(kDefault, VectorOp::Swiglu, 3, 8, DataType::BF16, DataType::FP8_E4M3), 1, 12, 48, 12, 36);
  // Gelu 1 x 512: 512*(6 + tanh 4) = 5120 -> 20.
  expect_work(vector_op_cost(kDefault, VectorOp::Gelu, 1, 512, DataType::BF16, DataType::BF16), 20, 512, 1024, 1024,
              4608);
  // Silu 1 x 512: 512*(1 + 6) = 3584 -> 14.
  expect_work(vector_op_cost(kDefault, VectorOp::Silu, 1, 512, DataType::BF16, DataType::BF16), 14, 512, 1024, 1024,
              1024);
  // Add 1 x 1000: 1000 -> 4; two operands read.
  expect_work(vector_op_cost(kDefault, VectorOp::Add, 1, 1000, DataType::BF16, DataType::BF16), 4, 1000, 4000, 2000,
              1000);
  // Scale 2 x 128: 256 -> 1.
  expect_work(vector_op_cost(kDefault, VectorOp::Scale, 2, 128, DataType::FP16, DataType::FP16), 1, 256, 512, 512, 256);
  // Cast 10 x 10 fp32 -> fp8: no FLOPs.
  expect_work(vector_op_cost(kDefault, VectorOp::Cast, 10, 10, DataType::FP32, DataType::FP8_E4M3), 1, 100, 400, 100,
              0);
  // Rope 2 x 6: 12 * 2 = 24 -> 1; reads x and the cos|sin table.
  expect_work(vector_op_cost(kDefault, VectorOp::Rope, 2, 6, DataType::BF16, DataType::BF16), 1, 12, 48, 24, 36);
}

TEST(VectorCost, CustomTable) {
  VectorEngineParams p;
  p.lanes = 1;
  p.reduction_latency = 0.0;
  p.cost.exp = 10.0;
  // Softmax 1 x 3: 3*(4 + 10) + div 5 = 47 cycles on one lane.
  EXPECT_EQ(vector_op_cost(p, VectorOp::Softmax, 1, 3, DataType::FP32, DataType::FP32).cycles, 47u);
  p.reduction_latency = 7.5;  // 2 reductions -> 15 more
  EXPECT_EQ(vector_op_cost(p, VectorOp::Softmax, 1, 3, DataType::FP32, DataType::FP32).cycles, 62u);
}

TEST(VectorCost, AttentionSoftmax) {
  // 2 heads, 3 x 5 scores: 30 elements, 6 rows; 30*(5 alu + exp 5) + 6*div 5 = 330 -> 2,
  // + 6 rows * 2 * 32 = 384; FLOPs 30*6 + 6.
  expect_work(attention_vector_cost(kDefault, 2, 3, 5, DataType::BF16, DataType::BF16), 386, 30, 60, 60, 186);
  // Causal, q=3, kv=5: queries see 3, 4, 5 keys.
  EXPECT_EQ(attention_vector_cost(kDefault, 1, 3, 5, DataType::BF16, DataType::BF16, true).elements, 12u);
  // Causal, q=4, kv=2: 0, 0, 1, 2.
  EXPECT_EQ(attention_vector_cost(kDefault, 1, 4, 2, DataType::BF16, DataType::BF16, true).elements, 3u);
  // Decode: one query sees every key.
  EXPECT_EQ(attention_vector_cost(kDefault, 8, 1, 7, DataType::BF16, DataType::BF16, true).elements, 56u);
  // Prefill q = kv = 4: 1 + 2 + 3 + 4.
  EXPECT_EQ(attention_vector_cost(kDefault, 1, 4, 4, DataType::BF16, DataType::BF16, true).elements, 10u);
}

TEST(VectorCost, ValidationErrorsNameTheField) {
  auto msg = [](auto fn) {
    try {
      fn();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(msg([] { vector_op_cost(kDefault, VectorOp::Add, 0, 4, DataType::BF16, DataType::BF16); }).find("rows"),
            std::string::npos);
  EXPECT_NE(msg([] { vector_op_cost(kDefault, VectorOp::Add, 4, 0, DataType::BF16, DataType::BF16); }).find("cols"),
            std::string::npos);
  EXPECT_NE(msg([] { vector_op_cost(kDefault, VectorOp::Rope, 1, 5, DataType::BF16, DataType::BF16); }).find("even"),
            std::string::npos);
  EXPECT_NE(msg([] { vector_op_cost(kDefault, VectorOp::Swiglu, 1, 3, DataType::BF16, DataType::BF16); }).find("even"),
            std::string::npos);
  EXPECT_NE(msg([] { attention_vector_cost(kDefault, 1, 0, 4, DataType::BF16, DataType::BF16); }).find("q_len"),
            std::string::npos);
  VectorEngineParams p;
  p.lanes = 0;
  EXPECT_NE(msg([&] { validate(p); }).find("lanes"), std::string::npos);
  p = VectorEngineParams{};
  p.cost.exp = 0.0;
  EXPECT_NE(msg([&] { validate(p); }).find("cost.exp"), std::string::npos);
  p = VectorEngineParams{};
  p.clock_hz = -1.0;
  EXPECT_NE(msg([&] { validate(p); }).find("clock_hz"), std::string::npos);
  p = VectorEngineParams{};
  p.reduction_latency = -1.0;
  EXPECT_NE(msg([&] { validate(p); }).find("reduction_latency"), std::string::npos);
  EXPECT_NE(msg([] {
              vector_op_cost(kDefault, static_cast<VectorOp>(42), 1, 2, DataType::BF16, DataType::BF16);
            }).find("unknown vector op"),
            std::string::npos);
}
