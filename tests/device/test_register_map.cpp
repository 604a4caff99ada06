// RegisterFile's access rules on the generated Sohu map, the generated C header against the
// decoder's table and against the values the register map specifies, and the generator's
// drift check and validator (scripts/gen_regmap.py, run as a subprocess).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace {

using sohusim::device::Access;
using sohusim::device::AccessError;
using sohusim::device::AccessResult;
using sohusim::device::CommandQueue;
using sohusim::device::PageDesc;
using sohusim::device::PageKind;
using sohusim::device::RegisterDesc;
using sohusim::device::RegisterFile;
using sohusim::device::RegisterMap;
namespace fs = std::filesystem;
namespace m = sohusim::device;

std::uint64_t rd(RegisterFile& rf, std::uint32_t off, unsigned size = 4) {
  const AccessResult r = rf.read(off, size);
  EXPECT_TRUE(r.ok()) << r.message;
  return r.value;
}

void wr(RegisterFile& rf, std::uint32_t off, std::uint64_t v, unsigned size = 4) {
  const AccessResult r = rf.write(off, size, v);
  EXPECT_TRUE(r.ok()) << r.message;
}

// ---------------------------------------------------------------------------------------
// The header and the table describe the same map, and it is the map the YAML specifies.

TEST(RegisterMapHeader, MacrosMatchTheDecoderTable) {
  const RegisterFile rf;
  struct Named {
    const char* name;
    std::uint32_t macro;
  };
  const Named plain[] = {
      {"ID", SOHU_ID},
      {"VERSION", SOHU_VERSION},
      {"CAP0", SOHU_CAP0},
      {"CAP1", SOHU_CAP1},
      {"HBM_SIZE", SOHU_HBM_SIZE},
      {"FW_STATUS", SOHU_FW_STATUS},
      {"CTRL", SOHU_CTRL},
      {"STATUS", SOHU_STATUS},
      {"INT_STATUS", SOHU_INT_STATUS},
      {"AQA", SOHU_AQA},
      {"ASQ", SOHU_ASQ},
      {"ACQ", SOHU_ACQ},
      {"ERR_VECTOR", SOHU_ERR_VECTOR},
      {"PMU_CTRL", SOHU_PMU_CTRL},
      {"PMU_CYCLES", SOHU_PMU_CYCLES},
      {"TRC_DROPS", SOHU_TRC_DROPS},
      {"TIMESTAMP", SOHU_TIMESTAMP},
      {"ERR_ACK", SOHU_ERR_ACK},
  };
  for (const Named& n : plain) {
    const auto i = rf.find(n.name);
    ASSERT_TRUE(i.has_value()) << n.name;
    EXPECT_EQ(rf.descriptor(*i).offset, n.macro) << n.name;
    EXPECT_EQ(rf.find(n.macro), i) << n.name;
  }
  EXPECT_EQ(rf.offset_of("PMU_EVTSEL", 5), SOHU_PMU_EVTSEL(5));
  EXPECT_EQ(rf.offset_of("PMU_COUNTER", 7), SOHU_PMU_COUNTER(7));
  EXPECT_EQ(rf.offset_of("SQ_TAIL_DB", 63), SOHU_SQ_TAIL_DB(63));
  EXPECT_EQ(rf.offset_of("CQ_HEAD_DB", 17), SOHU_CQ_HEAD_DB(17));
  const RegisterDesc& db = rf.descriptor(*rf.find("SQ_TAIL_DB"));
  EXPECT_EQ(db.count, SOHU_SQ_TAIL_DB_COUNT);
  EXPECT_EQ(db.stride, SOHU_SQ_TAIL_DB_STRIDE);
  EXPECT_EQ(rf.descriptor(*rf.find("CAP0")).reset, SOHU_CAP0_RESET);
  EXPECT_EQ(rf.descriptor(*rf.find("TRC_CTRL")).reset, SOHU_TRC_CTRL_RESET);
  EXPECT_EQ(rf.bar0_size(), SOHU_BAR0_SIZE);
}

TEST(RegisterMapHeader, ValuesAreTheSpecifiedOnes) {
  // Written out from the register-map specification, not from the generator.
  EXPECT_EQ(SOHU_BAR0_SIZE, 512u * 1024u);
  EXPECT_EQ(SOHU_PAGE_CONTROL, 0x1000u);
  EXPECT_EQ(SOHU_PAGE_MSIX_TABLE, 0x8000u);
  EXPECT_EQ(SOHU_PAGE_MSIX_TABLE_SIZE, 0x2000u);
  EXPECT_EQ(SOHU_PAGE_DOORBELL, 0x10000u);
  EXPECT_EQ(SOHU_PMU_EVTSEL(3), 0x410Cu);
  EXPECT_EQ(SOHU_PMU_COUNTER(7), 0x4238u);
  EXPECT_EQ(SOHU_SQ_TAIL_DB(5), 0x15000u);
  EXPECT_EQ(SOHU_CQ_HEAD_DB(63), 0x4F004u);
  EXPECT_EQ(SOHU_ID_RESET, 0x50011E5Cu);
  EXPECT_EQ(SOHU_VERSION_RESET, 0x00010000u);
  EXPECT_EQ(SOHU_TIMESTAMP_FREQ_HZ_RESET, 1000000000u);
  EXPECT_EQ(SOHU_CTRL_SHN_MASK, 0xCu);
  EXPECT_EQ(SOHU_POWER_STATE_CUR_MASK, 0x30000u);
  EXPECT_EQ(SOHU_ASQ_ADDR_MASK, 0xFFFFFFFFFFFFF000ull);
  EXPECT_EQ(SOHU_TRC_BASE_ADDR_MASK, 0xFFFFFFFFFFFFFFC0ull);
  // CAP0 = 63 queue pairs, 4096 entries, 4 KiB doorbell stride, and the doorbell array
  // agrees with what CAP0 advertises.
  EXPECT_EQ((SOHU_CAP0_RESET & SOHU_CAP0_MQP_MASK) >> SOHU_CAP0_MQP_SHIFT, 63u);
  EXPECT_EQ((SOHU_CAP0_RESET & SOHU_CAP0_MQES_MASK) >> SOHU_CAP0_MQES_SHIFT, 4095u);
  const unsigned dstrd = (SOHU_CAP0_RESET & SOHU_CAP0_DSTRD_MASK) >> SOHU_CAP0_DSTRD_SHIFT;
  EXPECT_EQ(1u << dstrd, SOHU_SQ_TAIL_DB_STRIDE);
  EXPECT_EQ((SOHU_CAP0_RESET & SOHU_CAP0_MQP_MASK) + 1u, SOHU_SQ_TAIL_DB_COUNT);
  // Entries.
  EXPECT_EQ(SOHU_SQE_SIZE, 64u);
  EXPECT_EQ(SOHU_CQE_SIZE, 16u);
  EXPECT_EQ(SOHU_SQE_CID_DW, 0);
  EXPECT_EQ(SOHU_SQE_CID_MASK, 0xFFFF0000u);
  EXPECT_EQ(SOHU_SQE_FENCE_BEFORE_MASK, 1u << 8);
  EXPECT_EQ(SOHU_SQE_CORRELATION_DW, 2);
  EXPECT_EQ(SOHU_CQE_STATUS_DW, 3);
  EXPECT_EQ(SOHU_CQE_STATUS_SHIFT, 17);
  EXPECT_EQ(SOHU_CQE_STATUS_MASK, 0x7FFFu << 17);
  EXPECT_EQ(SOHU_CQE_PHASE_MASK, 1u << 16);
  EXPECT_EQ(SOHU_IO_GEMM_M_DW, 12);
  EXPECT_EQ(SOHU_IO_GEMM_DATAFLOW_MASK, 3u << 14);
  EXPECT_EQ(SOHU_IO_ATTENTION_HEAD_DIM_MASK, 0xFFFu << 20);
  EXPECT_EQ(SOHU_IO_DMA_COPY_DST_SPACE_SHIFT, 4);
  EXPECT_EQ(SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL, 0xFFu);
  // Codes.
  EXPECT_EQ(SOHU_ADMIN_OP_SET_CONTEXT, 0x0Bu);
  EXPECT_EQ(SOHU_IO_OP_EXEC_PROGRAM, 0x0Bu);
  EXPECT_EQ(SOHU_STATUS_QUEUE_IN_USE, 0x12u);
  EXPECT_EQ(SOHU_FEAT_ARBITRATION, 0x04u);
  EXPECT_EQ(SOHU_SPACE_PEER_HBM, 3u);
  EXPECT_EQ(SOHU_PMU_EVT_ME_STALL_HBM_CYCLES, 12u);
}

TEST(RegisterMapHeader, RegistersStayOutOfMsixPagesAndInsideBar0) {
  const RegisterFile rf;
  for (const RegisterDesc& d : rf.descriptors()) {
    for (std::uint32_t i = 0; i < d.count; ++i) {
      const std::uint32_t off = d.offset + i * d.stride;
      const std::uint32_t end = off + d.width_bits / 8 - 1;
      EXPECT_LT(end, SOHU_BAR0_SIZE) << d.name;
      EXPECT_EQ(off / 4096, end / 4096) << d.name << " crosses a page";
      for (std::uint32_t page : {off / 4096, end / 4096}) {
        EXPECT_FALSE(page * 4096 >= SOHU_PAGE_MSIX_TABLE && page * 4096 < SOHU_PAGE_MSIX_PBA + SOHU_PAGE_MSIX_PBA_SIZE)
            << d.name << "[" << i << "] shares a page with the MSI-X structures";
      }
    }
  }
}

TEST(RegisterMapTables, StatusPmuAndCommandTables) {
  EXPECT_STREQ(m::status_name(SOHU_STATUS_INVALID_FIELD), "INVALID_FIELD");
  EXPECT_STREQ(m::status_name(0), "SUCCESS");
  EXPECT_EQ(m::status_name(0x7FFF), nullptr);
  ASSERT_EQ(m::status_table().size(), 0x14u);  // 0x00..0x13, contiguous
  for (std::size_t i = 0; i < m::status_table().size(); ++i) EXPECT_EQ(m::status_table()[i].code, i);

  ASSERT_EQ(m::pmu_event_table().size(), 12u);
  EXPECT_EQ(m::pmu_event_table()[0].id, 1u);
  EXPECT_STREQ(m::pmu_event_table()[0].name, "CMD_COMPLETED");
  EXPECT_STREQ(m::pmu_event_table()[0].counter_glob, "dev.cp.commands_completed");
  EXPECT_STREQ(m::pmu_event_table()[1].counter_glob, "dev.me*.active_cycles");

  const m::CommandDesc* gemm = m::find_command(CommandQueue::Io, SOHU_IO_OP_GEMM);
  ASSERT_NE(gemm, nullptr);
  EXPECT_STREQ(gemm->name, "GEMM");
  EXPECT_EQ(gemm->defined_mask[0], 0xFFFF03FFu);  // OPCODE, FENCE_BEFORE, NO_COMPLETION_IRQ, CID
  EXPECT_EQ(gemm->defined_mask[1], 0x0000FFFFu);  // CONTEXT
  EXPECT_EQ(gemm->defined_mask[15], 0x0000FFFFu);
  const m::CommandDesc* att = m::find_command(CommandQueue::Io, SOHU_IO_OP_ATTENTION);
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->defined_mask[15], 0xFFFF001Fu);  // [15:5] reserved
  const m::CommandDesc* nop = m::find_command(CommandQueue::Io, SOHU_IO_OP_NOP);
  ASSERT_NE(nop, nullptr);
  for (int dw = 4; dw < 16; ++dw) EXPECT_EQ(nop->defined_mask[dw], 0u);
  EXPECT_EQ(m::find_command(CommandQueue::Admin, 0x00), nullptr);
  EXPECT_STREQ(m::find_command(CommandQueue::Admin, 0x01)->name, "IDENTIFY");
}

// ---------------------------------------------------------------------------------------
// Access rules.

TEST(RegisterFile, ResetValuesAndReadOnly) {
  RegisterFile rf;
  EXPECT_EQ(rd(rf, SOHU_ID), 0x50011E5Cu);
  EXPECT_EQ(rd(rf, SOHU_TIMESTAMP_FREQ_HZ), 1000000000u);
  const AccessResult w = rf.write(SOHU_ID, 4, 0x12345678);
  EXPECT_EQ(w.error, AccessError::ReadOnly);
  EXPECT_NE(w.message.find("ID"), std::string::npos) << w.message;
  EXPECT_EQ(rd(rf, SOHU_ID), 0x50011E5Cu);
  // The device fills RO registers with poke.
  rf.poke(SOHU_CAP1, 0x02040808);
  EXPECT_EQ(rd(rf, SOHU_CAP1), 0x02040808u);
  rf.poke(SOHU_HBM_SIZE, 80ull << 30);
  EXPECT_EQ(rd(rf, SOHU_HBM_SIZE, 8), 80ull << 30);
}

TEST(RegisterFile, ReadWriteKeepsOnlyWritableBits) {
  RegisterFile rf;
  wr(rf, SOHU_AQA, 0xFFFFFFFF);
  EXPECT_EQ(rd(rf, SOHU_AQA), 0x0FFF0FFFu) << "ASQS [11:0] and ACQS [27:16]; the rest reserved";
  wr(rf, SOHU_AQA, (31u << 16) | 63u);
  EXPECT_EQ(rd(rf, SOHU_AQA), (31u << 16) | 63u);
  // An RO field inside an RW register keeps the device's value.
  rf.poke(SOHU_POWER_STATE, 2u << 16);
  wr(rf, SOHU_POWER_STATE, 0xFFFFFFFF);
  EXPECT_EQ(rd(rf, SOHU_POWER_STATE), (2u << 16) | 3u);
  wr(rf, SOHU_POWER_STATE, 0);
  EXPECT_EQ(rd(rf, SOHU_POWER_STATE), 2u << 16);
  // TRC_CTRL.DROP_ON_FULL: stalling is not supported, the bit stays 1.
  wr(rf, SOHU_TRC_CTRL, 0x1);
  EXPECT_EQ(rd(rf, SOHU_TRC_CTRL), 0x3u);
  wr(rf, SOHU_TRC_CTRL, 0x0);
  EXPECT_EQ(rd(rf, SOHU_TRC_CTRL), 0x2u);
  wr(rf, SOHU_INT_MASK, 0xA5A5A5A5);
  EXPECT_EQ(rd(rf, SOHU_INT_MASK), 0xA5A5A5A5u);
}

TEST(RegisterFile, SelfClearingActionBitsReachTheHookThenReadZero) {
  RegisterFile rf;
  std::vector<std::uint64_t> seen;
  rf.on_write(SOHU_CTRL, [&](std::uint32_t idx, std::uint64_t, std::uint64_t nv) {
    EXPECT_EQ(idx, 0u);
    seen.push_back(nv);
  });
  wr(rf, SOHU_CTRL, 0x1 | 0x2 | (1u << 2) | 0xFFFF0000u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], 0x7u) << "EN, RST and SHN=1; reserved bits dropped";
  EXPECT_EQ(rd(rf, SOHU_CTRL), 0x5u) << "RST reads 0";
  EXPECT_EQ(rf.peek(SOHU_CTRL), 0x5u);
  wr(rf, SOHU_PMU_CTRL, 0xF);
  EXPECT_EQ(rd(rf, SOHU_PMU_CTRL), 0xBu) << "PMU_CTRL.RESET self-clears";
}

TEST(RegisterFile, Rw1cClearsOnlyTheOnesWritten) {
  RegisterFile rf;
  rf.poke(SOHU_INT_STATUS, 0x7);
  wr(rf, SOHU_INT_STATUS, 0x5);
  EXPECT_EQ(rd(rf, SOHU_INT_STATUS), 0x2u);
  wr(rf, SOHU_INT_STATUS, 0x0);
  EXPECT_EQ(rd(rf, SOHU_INT_STATUS), 0x2u);
  rf.poke(SOHU_PMU_OVF, 0x80000081u);
  wr(rf, SOHU_PMU_OVF, 0xFFFFFF00u);  // bits 8..30 are reserved: no effect; bit 31 clears
  EXPECT_EQ(rd(rf, SOHU_PMU_OVF), 0x81u);
}

TEST(RegisterFile, WriteOnlyReadsZeroAndDoorbellsReachTheirHook) {
  RegisterFile rf;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> rings;
  rf.on_write(SOHU_SQ_TAIL_DB(0), [&](std::uint32_t q, std::uint64_t, std::uint64_t nv) { rings.emplace_back(q, nv); });
  wr(rf, SOHU_SQ_TAIL_DB(5), 0xABCD0012u);
  wr(rf, SOHU_SQ_TAIL_DB(5), 0x12u);  // the same tail again still rings
  wr(rf, SOHU_SQ_TAIL_DB(63), 7);
  ASSERT_EQ(rings.size(), 3u);
  EXPECT_EQ(rings[0], std::make_pair(5u, std::uint64_t{0x12}));
  EXPECT_EQ(rings[1], std::make_pair(5u, std::uint64_t{0x12}));
  EXPECT_EQ(rings[2], std::make_pair(63u, std::uint64_t{7}));
  const AccessResult r = rf.read(SOHU_SQ_TAIL_DB(5), 4);
  EXPECT_EQ(r.error, AccessError::WriteOnly);
  EXPECT_EQ(r.value, 0u);
  EXPECT_NE(r.message.find("SQ_TAIL_DB[5]"), std::string::npos) << r.message;
  EXPECT_EQ(rf.peek(SOHU_SQ_TAIL_DB(5)), 0x12u) << "the device sees the last value written";
  // The CQ doorbell of the same page is a different register: its hook list is empty.
  wr(rf, SOHU_CQ_HEAD_DB(5), 3);
  EXPECT_EQ(rings.size(), 3u);
  EXPECT_EQ(rf.read(SOHU_ERR_ACK, 4).value, 0u);
}

TEST(RegisterFile, ReadClearClearsOnReadAndIgnoresWrites) {
  RegisterFile rf;
  rf.poke(SOHU_TRC_DROPS, 7);
  EXPECT_EQ(rd(rf, SOHU_TRC_DROPS), 7u);
  EXPECT_EQ(rd(rf, SOHU_TRC_DROPS), 0u);
  rf.poke(SOHU_TRC_DROPS, 3);
  EXPECT_EQ(rf.write(SOHU_TRC_DROPS, 4, 0).error, AccessError::ReadOnly);
  EXPECT_EQ(rf.peek(SOHU_TRC_DROPS), 3u);
}

TEST(RegisterFile, SixtyFourBitRegistersWholeAndInHalves) {
  RegisterFile rf;
  wr(rf, SOHU_ASQ, 0x0000123456789ABCull, 8);
  EXPECT_EQ(rd(rf, SOHU_ASQ, 8), 0x0000123456789000ull) << "low 12 bits reserved";
  EXPECT_EQ(rd(rf, SOHU_ASQ), 0x56789000u);
  EXPECT_EQ(rd(rf, SOHU_ASQ + 4), 0x1234u);
  wr(rf, SOHU_ASQ + 4, 0xCAFEF00D);
  EXPECT_EQ(rd(rf, SOHU_ASQ, 8), 0xCAFEF00D56789000ull) << "a high-half write keeps the low half";
  wr(rf, SOHU_ASQ, 0xFFFFFFFF);
  EXPECT_EQ(rd(rf, SOHU_ASQ, 8), 0xCAFEF00DFFFFF000ull);
  EXPECT_EQ(rf.find(SOHU_ASQ + 4), rf.find("ASQ"));
  const auto loc = rf.locate(SOHU_PMU_COUNTER(3) + 4);
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->desc, *rf.find("PMU_COUNTER"));
  EXPECT_EQ(loc->index, 3u);
  EXPECT_EQ(loc->byte, 4u);
}

TEST(RegisterFile, LowHalfReadLatchesTheHighHalf) {
  RegisterFile rf;
  // A clock that ticks across a 2^32 boundary between any two samples.
  std::uint64_t now = 0xFFFFFFF0ull;
  int samples = 0;
  rf.on_read(SOHU_TIMESTAMP, [&](std::uint32_t, std::uint64_t) {
    ++samples;
    now += 0x20;
    return now;
  });
  const std::uint64_t lo = rd(rf, SOHU_TIMESTAMP);
  const std::uint64_t hi = rd(rf, SOHU_TIMESTAMP + 4);
  EXPECT_EQ(samples, 1);
  EXPECT_EQ((hi << 32) | lo, 0x100000010ull) << "both halves of one sample";
  EXPECT_EQ(rd(rf, SOHU_TIMESTAMP + 4), 0x1u) << "no latch pending: a fresh sample";
  EXPECT_EQ(samples, 2);
  EXPECT_EQ(rd(rf, SOHU_TIMESTAMP, 8), 0x100000050ull);
  EXPECT_EQ(rf.peek(SOHU_TIMESTAMP), 0u) << "the hook computes; storage is untouched";
  // The latch belongs to one element of an array.
  rf.poke(SOHU_PMU_COUNTER(1), 0x0000000500000006ull);
  rf.poke(SOHU_PMU_COUNTER(2), 0x0000000700000008ull);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(1)), 6u);
  rf.poke(SOHU_PMU_COUNTER(1), 0x0000000900000000ull);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(2) + 4), 7u);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(1) + 4), 5u) << "latched before the counter moved";
  // A whole read in between drops the latch: the next high-half read samples afresh.
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(2)), 8u);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(2), 8), 0x0000000700000008ull);
  rf.poke(SOHU_PMU_COUNTER(2), 0x0000000B00000000ull);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(2) + 4), 0xBu);
}

TEST(RegisterFile, BadAccessesAreReportedNotThrown) {
  RegisterFile rf;
  auto expect = [&](AccessResult r, AccessError e, const std::string& needle) {
    EXPECT_EQ(r.error, e) << r.message;
    EXPECT_EQ(r.value, 0u);
    EXPECT_NE(r.message.find(needle), std::string::npos) << r.message;
  };
  expect(rf.read(SOHU_CTRL, 8), AccessError::BadSize, "CTRL");
  expect(rf.write(SOHU_CTRL, 8, 1), AccessError::BadSize, "0x01000");
  expect(rf.read(SOHU_CTRL, 2), AccessError::BadSize, "0x01000");
  expect(rf.read(SOHU_CTRL, 1), AccessError::BadSize, "0x01000");
  expect(rf.write(SOHU_CTRL, 16, 1), AccessError::BadSize, "0x01000");
  expect(rf.read(SOHU_CTRL + 2, 4), AccessError::Misaligned, "0x01002");
  expect(rf.read(SOHU_ASQ + 4, 8), AccessError::Misaligned, "0x0200C");
  expect(rf.read(0x0FFC, 4), AccessError::Unmapped, "0x00FFC");
  expect(rf.write(0x0FFC, 4, 1), AccessError::Unmapped, "0x00FFC");
  expect(rf.read(SOHU_PAGE_MSIX_TABLE, 4), AccessError::Unmapped, "MSIX_TABLE");
  expect(rf.read(SOHU_PAGE_MSIX_PBA + 8, 8), AccessError::Unmapped, "MSIX_PBA");
  expect(rf.read(SOHU_BAR0_SIZE, 4), AccessError::Unmapped, "beyond BAR0");
  expect(rf.write(0xFFFFFFFCu, 4, 1), AccessError::Unmapped, "beyond BAR0");
  expect(rf.read(SOHU_SQ_TAIL_DB(3) + 8, 4), AccessError::Unmapped, "DOORBELL");
  EXPECT_EQ(rd(rf, SOHU_CTRL), 0u) << "the refused 8-byte write changed nothing";
  EXPECT_EQ(rf.write(SOHU_CTRL, 4, 1).error, AccessError::None);

  // Any offset and size: never a throw; unmapped words read 0.
  RegisterFile sweep;
  for (std::uint32_t off = 0; off < SOHU_BAR0_SIZE + 0x100; off += (off < 0x12000 ? 4 : 0x3C)) {
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      AccessResult r;
      EXPECT_NO_THROW(r = sweep.read(off, size));
      if (r.error == AccessError::Unmapped) {
        EXPECT_EQ(r.value, 0u);
      }
      EXPECT_NO_THROW(sweep.write(off, size, ~std::uint64_t{0}));
    }
  }
}

TEST(RegisterFile, PeekPokeAndHookArgumentsAreChecked) {
  RegisterFile rf;
  EXPECT_THROW(rf.peek(SOHU_ASQ + 4), std::invalid_argument);
  EXPECT_THROW(rf.peek(0x0FFC), std::invalid_argument);
  EXPECT_THROW(rf.poke(SOHU_CTRL, 0x100000000ull), std::invalid_argument);
  EXPECT_THROW(rf.on_write(0x0FFC, [](std::uint32_t, std::uint64_t, std::uint64_t) {}), std::invalid_argument);
  EXPECT_THROW(rf.on_read(SOHU_CTRL, RegisterFile::ReadHook{}), std::invalid_argument);
  EXPECT_THROW(rf.offset_of("PMU_EVTSEL", 8), std::invalid_argument);
  EXPECT_THROW(rf.offset_of("NO_SUCH"), std::invalid_argument);
  try {
    rf.peek(SOHU_ASQ + 4);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ASQ"), std::string::npos) << e.what();
  }
}

TEST(RegisterFile, HooksRunInOrderAndReadHooksReplace) {
  RegisterFile rf;
  std::string order;
  rf.on_write(SOHU_COAL_COUNT, [&](std::uint32_t, std::uint64_t old_v, std::uint64_t new_v) {
    order += "a" + std::to_string(old_v) + ">" + std::to_string(new_v);
  });
  rf.on_write(SOHU_COAL_COUNT, [&](std::uint32_t, std::uint64_t, std::uint64_t) { order += "b"; });
  wr(rf, SOHU_COAL_COUNT, 0x10005);
  EXPECT_EQ(order, "a0>5b");
  rf.on_read(SOHU_CLOCK_MHZ, [](std::uint32_t, std::uint64_t) { return std::uint64_t{1}; });
  rf.on_read(SOHU_CLOCK_MHZ, [](std::uint32_t, std::uint64_t cur) { return cur + 2; });
  rf.poke(SOHU_CLOCK_MHZ, 1000);
  EXPECT_EQ(rd(rf, SOHU_CLOCK_MHZ), 1002u);
  // A hook may act on the file: a soft reset hook resets everything.
  rf.on_write(SOHU_CTRL, [&](std::uint32_t, std::uint64_t, std::uint64_t nv) {
    if (nv & SOHU_CTRL_RST_MASK) rf.reset();
  });
  wr(rf, SOHU_AQA, 0x00100010);
  wr(rf, SOHU_CTRL, SOHU_CTRL_RST_MASK | SOHU_CTRL_EN_MASK);
  EXPECT_EQ(rd(rf, SOHU_AQA), 0u);
  EXPECT_EQ(rd(rf, SOHU_CTRL), 0u);
}

TEST(RegisterFile, ResetRestoresEveryResetValue) {
  RegisterFile rf;
  wr(rf, SOHU_TRC_CTRL, 1);
  wr(rf, SOHU_PMU_EVTSEL(7), 9);
  wr(rf, SOHU_ACQ, 0x1000, 8);
  rf.poke(SOHU_ID, 0);
  rf.poke(SOHU_PMU_COUNTER(0), 0x100000002ull);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(0)), 2u);  // leaves a latch pending
  rf.reset();
  EXPECT_EQ(rd(rf, SOHU_TRC_CTRL), 2u);
  EXPECT_EQ(rd(rf, SOHU_PMU_EVTSEL(7)), 0u);
  EXPECT_EQ(rd(rf, SOHU_ACQ, 8), 0u);
  EXPECT_EQ(rd(rf, SOHU_ID), 0x50011E5Cu);
  EXPECT_EQ(rd(rf, SOHU_PMU_COUNTER(0) + 4), 0u) << "the latch went with the reset";
  for (const RegisterDesc& d : rf.descriptors())
    for (std::uint32_t i = 0; i < d.count; ++i) EXPECT_EQ(rf.peek(d.offset + i * d.stride), d.reset) << d.name;
}

TEST(RegisterFile, CustomMapsFollowTheSameRulesAndAreValidated) {
  const RegisterDesc good[] = {
      {"A", 0x0, 32, Access::RW1C, 0, 0x0F, 1, 0, "a", 0},
      {"C", 0x8, 64, Access::RC, 0, 0, 1, 0, "c", 0},
  };
  RegisterFile rf(RegisterMap{{good, 2}, {}, 0x1000});
  rf.poke(0x0, 0xFF);
  wr(rf, 0x0, 0xFF);
  EXPECT_EQ(rd(rf, 0x0), 0xF0u) << "RW1C clears only writable bits (here: an RO field in bits 7:4)";
  rf.poke(0x8, 0x0000000300000004ull);
  EXPECT_EQ(rd(rf, 0x8), 4u);
  EXPECT_EQ(rf.peek(0x8), 0u) << "RC: the low-half read cleared the whole register";
  EXPECT_EQ(rd(rf, 0xC), 3u) << "and latched its high half";
  const AccessResult hole = rf.read(0x4, 4);
  EXPECT_EQ(hole.error, AccessError::Unmapped);
  EXPECT_NE(hole.message.find("reserved space"), std::string::npos) << hole.message;

  const RegisterDesc overlap[] = {
      {"A", 0x0, 64, Access::RW, 0, 0, 1, 0, "a", 0},
      {"B", 0x4, 32, Access::RW, 0, 0, 1, 0, "b", 0},
  };
  try {
    RegisterFile bad(RegisterMap{{overlap, 2}, {}, 0});
    ADD_FAILURE() << "overlap accepted";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("A high half"), std::string::npos) << msg;
    EXPECT_NE(msg.find("B"), std::string::npos) << msg;
  }
  const RegisterDesc width[] = {{"W", 0x0, 16, Access::RW, 0, 0, 1, 0, "w", 0}};
  EXPECT_THROW(RegisterFile(RegisterMap{{width, 1}, {}, 0}), std::invalid_argument);
  const RegisterDesc wide_reset[] = {{"R", 0x0, 32, Access::RO, 0x100000000ull, 0, 1, 0, "r", 0}};
  EXPECT_THROW(RegisterFile(RegisterMap{{wide_reset, 1}, {}, 0}), std::invalid_argument);
  const RegisterDesc stride[] = {{"S", 0x0, 64, Access::RO, 0, 0, 4, 4, "s", 0}};
  EXPECT_THROW(RegisterFile(RegisterMap{{stride, 1}, {}, 0}), std::invalid_argument);
  const RegisterDesc outside[] = {{"O", 0xFFC, 32, Access::RO, 0, 0, 2, 4, "o", 0}};
  EXPECT_THROW(RegisterFile(RegisterMap{{outside, 1}, {}, 0x1000}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// The generator: drift check and validator, run as the build's tests would.

struct ScriptRun {
  int status = -1;
  std::string output;
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class TempDir {
 public:
  TempDir() {
    static int serial = 0;
    path_ =
        fs::temp_directory_path() / ("sohusim_regmap_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

ScriptRun run(const std::string& command, const fs::path& out_file) {
  ScriptRun r;
  const int raw = std::system((command + " > " + quote(out_file.string()) + " 2>&1").c_str());
  r.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(out_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

const std::string kSource = SOHUSIM_SOURCE_DIR;
const std::string kScript = kSource + "/scripts/gen_regmap.py";
const std::string kYaml = kSource + "/regmap/sohu_regmap.yaml";

// The script exits 3 without PyYAML; the shell answers 127 without python3.
bool missing_python(const ScriptRun& r) {
  return r.status == 127 || r.status == 3;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A copy of the committed YAML with exact pieces of text replaced.
fs::path edited_yaml(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = read_file(kYaml);
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "the YAML no longer contains: " << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  const fs::path p = dir.path() / "sohu_regmap.yaml";
  std::ofstream(p) << text;
  return p;
}

TEST(RegmapGenerator, CommittedOutputsMatchTheYaml) {
  TempDir tmp;
  const ScriptRun r = run("python3 " + quote(kScript) + " --check", tmp.path() / "out.txt");
  if (missing_python(r)) GTEST_SKIP() << "python3 with PyYAML (python3-yaml) is needed: " << r.output;
  EXPECT_EQ(r.status, 0) << "generated files differ from regmap/sohu_regmap.yaml; run "
                            "python3 scripts/gen_regmap.py\n"
                         << r.output;
}

TEST(RegmapGenerator, CheckCatchesADrift) {
  TempDir tmp;
  const fs::path out = tmp.path() / "gen";
  const fs::path yaml = edited_yaml(tmp, {});  // an unchanged copy
  const std::string args = " --yaml " + quote(yaml.string()) + " --out-dir " + quote(out.string());
  ScriptRun r = run("python3 " + quote(kScript) + args, tmp.path() / "out.txt");
  if (missing_python(r)) GTEST_SKIP() << "python3 with PyYAML (python3-yaml) is needed: " << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(fs::exists(out / "regmap/include/sohusim/regmap/sohu_regs.h"));

  edited_yaml(tmp, {{"- name: TIMESTAMP_FREQ_HZ\n        offset: 0x6008",
                     "- name: TIMESTAMP_FREQ_HZ\n        offset: 0x600C"}});
  r = run("python3 " + quote(kScript) + " --check" + args, tmp.path() / "out.txt");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("-#define SOHU_TIMESTAMP_FREQ_HZ 0x00006008u"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("+#define SOHU_TIMESTAMP_FREQ_HZ 0x0000600Cu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("regmap_table.inc"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("registers.md"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(out / "regmap/include/sohusim/regmap/sohu_regs.h").find("0x0000600Cu"), std::string::npos)
      << "--check must not write";
}

TEST(RegmapGenerator, ValidatorNamesTheRegisterAndTheLine) {
  TempDir tmp;
  const fs::path yaml =
      edited_yaml(tmp, {{"- name: VERSION\n        offset: 0x0004", "- name: VERSION\n        offset: 0x0000"},
                        {"{name: DSTRD, bits: 27:24", "{name: DSTRD, bits: 35:32"}});
  const ScriptRun r = run("python3 " + quote(kScript) + " --yaml " + quote(yaml.string()) + " --out-dir " +
                              quote((tmp.path() / "gen").string()),
                          tmp.path() / "out.txt");
  if (missing_python(r)) GTEST_SKIP() << "python3 with PyYAML (python3-yaml) is needed: " << r.output;
  EXPECT_EQ(r.status, 2) << r.output;
  // Each error: the YAML's name and line, then the register (and field) and what is wrong.
  const std::string overlap = "register VERSION (0x0..0x3) overlaps register ID (0x0..0x3)";
  const std::string field = "register CAP0 field DSTRD: bits 35:32 lie outside the 32-bit container";
  EXPECT_NE(r.output.find(overlap), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(field), std::string::npos) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  int located = 0;
  while (std::getline(lines, line)) {
    if (line.find(overlap) == std::string::npos && line.find(field) == std::string::npos) continue;
    const auto colon = line.find(':');
    ASSERT_NE(colon, std::string::npos) << line;
    EXPECT_EQ(line.rfind("sohu_regmap.yaml:", 0), 0u) << line;
    EXPECT_GT(std::atoi(line.c_str() + colon + 1), 0) << "no line number: " << line;
    ++located;
  }
  EXPECT_EQ(located, 2);
  EXPECT_FALSE(fs::exists(tmp.path() / "gen")) << "nothing is written when the YAML is invalid";
}

}  // namespace
