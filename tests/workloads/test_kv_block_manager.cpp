// The paged KV cache's bookkeeping: blocks, tables, watermark, growth, preemption and swap.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sohusim/counters/registry.hpp"
#include "sohusim/workloads/kv_block_manager.hpp"

namespace sohusim::workloads {
namespace {

struct Fixture {
  counters::Registry reg;
  KvBlockManager kv;
  explicit Fixture(std::uint64_t blocks, double watermark = 0.0)
      : kv(KvCacheOptions{16, blocks, 1024, watermark}, counters::Scope(reg, "dev0.kv")) {}
};

std::string logic_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KvBlockManager, APromptGetsTheBlocksItsPositionsNeedLowestFirst) {
  Fixture f(10);
  EXPECT_EQ(f.kv.blocks_for(16), 1U);
  EXPECT_EQ(f.kv.blocks_for(17), 2U);
  f.kv.admit(7, 33);  // 3 blocks
  f.kv.admit(8, 16);  // 1 block
  EXPECT_EQ(f.kv.table(7), (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(f.kv.table(8), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(f.kv.blocks_used(), 4U);
  EXPECT_EQ(f.reg.value("dev0.kv.blocks_used"), 4.0);
  EXPECT_EQ(f.reg.value("dev0.kv.allocations"), 4.0);
}

TEST(KvBlockManager, AppendTakesANewBlockExactlyAtEachBlockBoundary) {
  Fixture f(3);
  f.kv.admit(1, 15);
  EXPECT_TRUE(f.kv.append(1));  // position 16: still block 0
  EXPECT_EQ(f.kv.table(1).size(), 1U);
  EXPECT_TRUE(f.kv.append(1));  // position 17: block 1
  EXPECT_EQ(f.kv.table(1), (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(f.kv.tokens(1), 17U);
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(f.kv.append(1));  // up to 32 positions: 2 blocks
  EXPECT_EQ(f.kv.table(1).size(), 2U);
  EXPECT_TRUE(f.kv.append(1));  // 33: the last block
  EXPECT_EQ(f.kv.blocks_free(), 0U);
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(f.kv.append(1));  // 48 positions fill it
  EXPECT_FALSE(f.kv.append(1));                              // 49 needs a fourth: none
  EXPECT_EQ(f.kv.tokens(1), 48U);                            // nothing changed
}

TEST(KvBlockManager, AdmissionKeepsTheWatermarkFreeForRunningSequences) {
  Fixture f(100, 0.1);  // 10 blocks kept free
  EXPECT_TRUE(f.kv.can_admit(90 * 16));
  EXPECT_FALSE(f.kv.can_admit(90 * 16 + 1));
  f.kv.admit(1, 90 * 16);
  EXPECT_FALSE(f.kv.can_admit(1));
  for (int i = 0; i < 10 * 16; ++i) ASSERT_TRUE(f.kv.append(1));  // growth may use the reserve
  EXPECT_EQ(f.kv.blocks_free(), 0U);
}

TEST(KvBlockManager, ReleasedBlocksAreReusedAndPreemptionsCounted) {
  Fixture f(4);
  f.kv.admit(1, 32);
  f.kv.admit(2, 32);
  f.kv.release(1, /*preempted=*/true);
  EXPECT_EQ(f.reg.value("dev0.kv.preemptions"), 1.0);
  f.kv.admit(3, 20);
  EXPECT_EQ(f.kv.table(3), (std::vector<std::uint64_t>{0, 1}));
  f.kv.release(2);
  f.kv.release(3);
  EXPECT_EQ(f.kv.blocks_free(), 4U);
  EXPECT_EQ(f.reg.value("dev0.kv.preemptions"), 1.0);
  EXPECT_EQ(f.reg.value("dev0.kv.blocks_used"), 0.0);
}

TEST(KvBlockManager, ASwappedSequenceLeavesTheDeviceAndComesBackToNewBlocks) {
  Fixture f(4);
  f.kv.admit(1, 40);  // blocks 0-2
  f.kv.admit(2, 10);  // block 3
  EXPECT_EQ(f.kv.swap_out(1), 3U * 1024);
  EXPECT_TRUE(f.kv.swapped(1));
  EXPECT_EQ(f.kv.tokens(1), 40U);
  EXPECT_EQ(f.kv.blocks_free(), 3U);
  f.kv.release(2);
  f.kv.admit(3, 16);  // block 0
  EXPECT_TRUE(f.kv.can_swap_in(1));
  EXPECT_EQ(f.kv.swap_in(1), 3U * 1024);
  EXPECT_EQ(f.kv.table(1), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_FALSE(f.kv.can_swap_in(1));
  EXPECT_EQ(f.reg.value("dev0.kv.swapped_out_bytes"), 3072.0);
  EXPECT_EQ(f.reg.value("dev0.kv.swapped_in_bytes"), 3072.0);
  EXPECT_EQ(f.reg.value("dev0.kv.preemptions"), 1.0);
}

TEST(KvBlockManager, MisuseNamesTheSequenceAndTheCall) {
  Fixture f(2);
  f.kv.admit(5, 16);
  EXPECT_EQ(logic_error_of([&] { f.kv.admit(5, 1); }), "KvBlockManager::admit: sequence 5 is already admitted");
  EXPECT_EQ(logic_error_of([&] { f.kv.admit(6, 40); }), "KvBlockManager::admit: sequence 6 needs 3 blocks; free: 1");
  EXPECT_EQ(logic_error_of([&] { f.kv.append(9); }), "KvBlockManager::append: sequence 9 has no blocks");
  f.kv.swap_out(5);
  EXPECT_EQ(logic_error_of([&] { f.kv.release(5); }), "KvBlockManager::release: sequence 5 is swapped out");
  EXPECT_EQ(logic_error_of([&] { f.kv.swap_in(4); }), "KvBlockManager::swap_in: sequence 4 is not swapped out");
  counters::Registry reg;
  EXPECT_THROW(KvBlockManager(KvCacheOptions{16, 0, 1, 0}, counters::Scope(reg, "x")), std::invalid_argument);
  EXPECT_THROW(KvBlockManager(KvCacheOptions{0, 4, 1, 0}, counters::Scope(reg, "y")), std::invalid_argument);
}

}  // namespace
}  // namespace sohusim::workloads
