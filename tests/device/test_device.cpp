// The device through the interface a driver has: BAR0 registers, queues in host memory,
// doorbells, MSI-X, DMA through the IOMMU. Each test builds a host with one device
// (device_harness.hpp) and runs a host thread against it.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>

#include "device_harness.hpp"
#include "sim/systemc_test_support.hpp"
#include "sohusim/device/compute/gemm_plan.hpp"
#include "sohusim/device/compute/kernels.hpp"
#include "sohusim/device/compute/numerics.hpp"
#include "sohusim/device/units/trace_unit.hpp"

namespace sohusim::device::test {
namespace {

/// Runs `body` as the host thread and simulates until nothing is left to do; fails if the
/// body did not finish (a hang: the device stopped answering).
void run(DeviceBench& b, const std::function<void()>& body) {
  bool finished = false;
  sc_core::sc_spawn([&] {
    body();
    finished = true;
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  EXPECT_TRUE(finished) << "the host thread did not finish (device hung?) at " << sc_core::sc_time_stamp();
  (void)b;
}

Status status_of(const Cqe& c) {
  return static_cast<Status>(c.status);
}

SOHUSIM_SYSTEMC_TEST(Device, BringUpThroughRegistersAndIdentify) {
  DeviceBench b;
  run(b, [&] {
    HostAgent& a = *b.agent;
    a.probe();
    EXPECT_EQ(a.read32(SOHU_ID), 0x50011E5Cu);
    EXPECT_EQ(a.read32(SOHU_STATUS) & SOHU_STATUS_RDY_MASK, 0u);
    a.enable();
    EXPECT_NE(a.read32(SOHU_STATUS) & SOHU_STATUS_RDY_MASK, 0u);
    EXPECT_EQ(a.read32(SOHU_CAP1) & 0xFF, 8u);        // matrix engines
    EXPECT_EQ(a.read64(SOHU_HBM_SIZE), 24ULL << 30);  // one HBM3E-8000 stack
    EXPECT_EQ(a.read32(SOHU_CAP0) & 0xFF, 63u);       // I/O queue pairs
    const std::uint64_t buf = b.host_buffer(nullptr, 4096);
    Sqe id = make_admin(SOHU_ADMIN_OP_IDENTIFY);
    id.set_u64(SOHU_ADMIN_IDENTIFY_ADDR_DW, buf);
    const Cqe c = a.admin(id);
    EXPECT_EQ(status_of(c), Status::Success);
    std::uint32_t words[4];
    b.sys->cpu().mem_read(buf, words, sizeof words);
    EXPECT_EQ(words[0], 0x50011E5Cu);
    EXPECT_EQ(words[2], 8u);    // engines
    EXPECT_EQ(words[3], 128u);  // array rows
    char name[8] = {};
    b.sys->cpu().mem_read(buf + 128, name, 4);
    EXPECT_STREQ(name, "sohu");
    EXPECT_EQ(status_of(a.admin(make_admin(SOHU_ADMIN_OP_FW_STATUS))), Status::Success);
  });
  EXPECT_EQ(b.count("dev0.cp.admin_commands"), 2);
}

SOHUSIM_SYSTEMC_TEST(Device, SubmitAndCompleteCarryQueueAndCommandIds) {
  DeviceBench b;
  run(b, [&] {
    b.bring_up();
    const std::uint16_t cid = b.agent->submit(1, make_nop());
    const Cqe c = b.agent->wait(1);
    EXPECT_EQ(c.cid, cid);
    EXPECT_EQ(c.sq_id, 1);
    EXPECT_EQ(c.sq_head, 1);
    EXPECT_TRUE(c.phase);
    EXPECT_EQ(status_of(c), Status::Success);
  });
  EXPECT_EQ(b.count("dev0.cp.commands_completed"), 3);  // CREATE_CQ, CREATE_SQ, NOP
  EXPECT_GE(b.count("host0.irq.vector1.count"), 1);
}

SOHUSIM_SYSTEMC_TEST(Device, PhaseBitFlipsWhenTheQueueWraps) {
  DeviceBench b;
  run(b, [&] {
    b.agent->probe();
    b.agent->enable();
    b.agent->create_io_queue(1, 4, 1);  // 4 slots: at most 3 outstanding
    std::vector<bool> phases;
    for (int i = 0; i < 10; ++i) {
      const std::uint16_t cid = b.agent->submit(1, make_nop());
      const Cqe c = b.agent->wait(1);
      EXPECT_EQ(c.cid, cid);
      EXPECT_EQ(c.sq_head, (i + 1) % 4);
      phases.push_back(c.phase);
    }
    // Entries 0-3 carry phase 1, 4-7 phase 0, 8-9 phase 1 again.
    const std::vector<bool> expect{true, true, true, true, false, false, false, false, true, true};
    EXPECT_EQ(phases, expect);
    // Three commands at once fill the ring (one slot stays empty); all complete.
    for (int i = 0; i < 3; ++i) b.agent->submit(1, make_nop());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(status_of(b.agent->wait(1)), Status::Success);
  });
}

SOHUSIM_SYSTEMC_TEST(Device, InterruptCoalescingByCountAndByTime) {
  DeviceBench b;
  std::uint64_t after_count = 0, after_time = 0;
  double waited_ns = 0;
  run(b, [&] {
    b.bring_up();
    Sqe f = make_admin(SOHU_ADMIN_OP_SET_FEATURES);
    f.dw[SOHU_ADMIN_SET_FEATURES_FID_DW] |= SOHU_FEAT_INT_COALESCING;
    f.dw[SOHU_ADMIN_SET_FEATURES_VALUE_DW] = 4;        // every 4 completions
    f.dw[SOHU_ADMIN_SET_FEATURES_VALUE2_DW] = 50'000;  // or 50 us after the first
    ASSERT_EQ(status_of(b.agent->admin(f)), Status::Success);
    const std::uint64_t before = b.sys->irq().delivered(1);
    for (int i = 0; i < 8; ++i) b.agent->submit(1, make_nop());
    for (int i = 0; i < 8; ++i) EXPECT_EQ(status_of(b.agent->wait(1)), Status::Success);
    after_count = b.sys->irq().delivered(1) - before;
    // One completion: no count reached, the timer fires 50 us after it.
    const std::uint64_t t_before = b.sys->irq().delivered(1);
    const double t0 = sc_core::sc_time_stamp().to_seconds() * 1e9;
    b.agent->submit(1, make_nop());
    b.agent->wait(1);
    waited_ns = sc_core::sc_time_stamp().to_seconds() * 1e9 - t0;
    after_time = b.sys->irq().delivered(1) - t_before;
  });
  EXPECT_EQ(after_count, 2u);  // 8 completions, threshold 4
  EXPECT_EQ(after_time, 1u);
  EXPECT_GE(waited_ns, 50'000.0);
  EXPECT_LT(waited_ns, 60'000.0);
}

SOHUSIM_SYSTEMC_TEST(Device, PmuCountersReadOverMmioAgreeWithTheRegistry) {
  DeviceBench b;
  std::uint64_t pmu_cmds = 0, pmu_active = 0, cycles = 0;
  double reg_cmds_delta = 0;
  run(b, [&] {
    b.bring_up();
    // Event 1 (commands completed) on counter 0, event 2 (matrix active cycles) on counter 1.
    b.agent->write32(SOHU_PMU_EVTSEL(0), SOHU_PMU_EVT_CMD_COMPLETED);
    b.agent->write32(SOHU_PMU_EVTSEL(1), SOHU_PMU_EVT_ME_ACTIVE_CYCLES);
    const double cmds0 = b.count("dev0.cp.commands_completed");
    b.agent->write32(SOHU_PMU_CTRL, SOHU_PMU_CTRL_EN_MASK | SOHU_PMU_CTRL_RESET_MASK);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(
          status_of(b.agent->run(1, make_gemm(0, 1 << 20, 2 << 20, 256, 256, 256, DataType::BF16, DataType::BF16))),
          Status::Success);
    }
    b.agent->write32(SOHU_PMU_CTRL, SOHU_PMU_CTRL_EN_MASK | SOHU_PMU_CTRL_FREEZE_MASK);
    reg_cmds_delta = b.count("dev0.cp.commands_completed") - cmds0;
    pmu_cmds = b.agent->read64(SOHU_PMU_COUNTER(0));
    pmu_active = b.agent->read64(SOHU_PMU_COUNTER(1));
    cycles = b.agent->read64(SOHU_PMU_CYCLES);
  });
  EXPECT_EQ(static_cast<double>(pmu_cmds), reg_cmds_delta);
  EXPECT_EQ(reg_cmds_delta, 3);
  EXPECT_EQ(static_cast<double>(pmu_active), b.sum("dev0.me*.active_cycles"));
  EXPECT_GT(pmu_active, 0u);
  EXPECT_GT(cycles, 0u);
}

SOHUSIM_SYSTEMC_TEST(Device, TraceRingRecordsDecodeToTheCommandsRun) {
  DeviceBench b;
  std::vector<TraceRecord> recs;
  std::vector<std::uint16_t> cids;
  run(b, [&] {
    b.bring_up();
    const std::uint64_t ring = b.host_buffer(nullptr, 4096);
    b.agent->write64(SOHU_TRC_BASE, ring);
    b.agent->write32(SOHU_TRC_SIZE, 4096);
    b.agent->write32(SOHU_TRC_MASK, SOHU_TRC_MASK_CMD_MASK);
    b.agent->write32(SOHU_TRC_CTRL, SOHU_TRC_CTRL_EN_MASK);
    for (int i = 0; i < 3; ++i) {
      Sqe s = make_nop();
      s.set_u64(SOHU_SQE_CORRELATION_DW, 1000 + i);
      cids.push_back(b.agent->submit(1, s));
      b.agent->wait(1);
    }
    sc_core::wait(5, sc_core::SC_US);  // let the trace unit's writes land
    const std::uint32_t head = b.agent->read32(SOHU_TRC_HEAD);
    std::vector<std::uint8_t> bytes(head);
    b.sys->cpu().mem_read(ring, bytes.data(), head);
    for (std::uint32_t off = 0; off < head; off += TraceRecord::kBytes)
      recs.push_back(TraceRecord::decode(bytes.data() + off));
    b.agent->write32(SOHU_TRC_TAIL, head);
    EXPECT_EQ(b.agent->read32(SOHU_TRC_DROPS), 0u);
  });
  ASSERT_EQ(recs.size(), 6u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(recs[2 * i].type, TraceRecordType::CommandStart);
    EXPECT_EQ(recs[2 * i + 1].type, TraceRecordType::CommandEnd);
    EXPECT_EQ(recs[2 * i].command, cids[i]);
    EXPECT_EQ(recs[2 * i + 1].command, cids[i]);
    EXPECT_EQ(recs[2 * i].correlation, 1000u + i);
    EXPECT_EQ(recs[2 * i].queue, 1);
    EXPECT_LE(recs[2 * i].timestamp_ns, recs[2 * i + 1].timestamp_ns);  // a NOP takes no time
    if (i > 0) {
      EXPECT_LT(recs[2 * i - 1].timestamp_ns, recs[2 * i].timestamp_ns);
    }
  }
}

SOHUSIM_SYSTEMC_TEST(Device, ResetWithCommandsInFlightRecovers) {
  DeviceBench b;
  Cqe after{};
  run(b, [&] {
    b.bring_up();
    // A long GEMM, then disable the device while it runs.
    b.agent->submit(1, make_gemm(0, 64 << 20, 128 << 20, 4096, 4096, 4096, DataType::BF16, DataType::BF16));
    sc_core::wait(20, sc_core::SC_US);
    b.agent->write32(SOHU_CTRL, 0);
    EXPECT_EQ(b.agent->read32(SOHU_STATUS) & SOHU_STATUS_RDY_MASK, 0u);
    sc_core::wait(2, sc_core::SC_MS);  // the GEMM's tiles drain; nothing may be posted
    HostAgent fresh(*b.sys);
    fresh.enable();
    fresh.create_io_queue(1, 16, 1);
    after = fresh.run(1, make_nop());
  });
  EXPECT_EQ(status_of(after), Status::Success);
  EXPECT_EQ(b.count("dev0.cp.commands_completed"), 2 + 2 + 1);  // CQ+SQ, CQ+SQ again, NOP: never the GEMM
  EXPECT_GE(b.count("dev0.resets"), 1);
}

SOHUSIM_SYSTEMC_TEST(Device, BadCommandsGetSpecificStatusesAndErrorLogEntries) {
  DeviceBench b;
  run(b, [&] {
    b.bring_up();
    HostAgent& a = *b.agent;
    a.create_io_queue(2, 16, 2);
    Sqe bad = make_admin(0x7F);  // undefined I/O opcode
    const std::uint16_t cid = a.submit(1, bad);
    EXPECT_EQ(status_of(a.wait(1)), Status::InvalidOpcode);
    EXPECT_EQ(a.read32(SOHU_ERR_CODE), static_cast<std::uint32_t>(Status::InvalidOpcode));
    EXPECT_EQ(a.read32(SOHU_ERR_INFO), 1u | (static_cast<std::uint32_t>(cid) << 16));
    a.write32(SOHU_ERR_ACK, 1);
    EXPECT_EQ(a.read32(SOHU_ERR_CODE), 0u);
    Sqe reserved = make_nop();
    reserved.dw[5] = 1;
    EXPECT_EQ(status_of(a.run(1, reserved)), Status::InvalidField);
    const std::uint64_t hbm = a.read64(SOHU_HBM_SIZE);
    EXPECT_EQ(status_of(a.run(1, make_gemm(hbm - 64, 0, 0, 64, 64, 64, DataType::BF16, DataType::BF16))),
              Status::OutOfRange);
    EXPECT_EQ(status_of(a.run(1, make_gemm(1, 4096, 8192, 8, 8, 8, DataType::BF16, DataType::BF16))),
              Status::Misaligned);
    Sqe dt = make_gemm(0, 4096, 8192, 8, 8, 8, DataType::BF16, DataType::BF16);
    dt.dw[SOHU_IO_GEMM_IN_DTYPE_DW] |= 7u << SOHU_IO_GEMM_IN_DTYPE_SHIFT;
    EXPECT_EQ(status_of(a.run(1, dt)), Status::InvalidDtype);
    EXPECT_EQ(status_of(a.run(1, make_gemm(0, 4096, 8192, 0, 8, 8, DataType::BF16, DataType::BF16))),
              Status::InvalidDimensions);
    // A host address the IOMMU has not mapped for the device.
    EXPECT_EQ(status_of(a.run(1, make_dma_copy(Space::Host, 0x7000'0000'0000ULL, Space::Hbm, 0, 4096))),
              Status::HostDmaError);
    // Queue created twice; CQ still in use.
    Sqe cq = make_admin(SOHU_ADMIN_OP_CREATE_CQ);
    cq.set_u64(SOHU_ADMIN_CREATE_CQ_BASE_DW, b.host_buffer(nullptr, 4096));
    cq.dw[SOHU_ADMIN_CREATE_CQ_QID_DW] |= 2u | (15u << SOHU_ADMIN_CREATE_CQ_QSIZE_SHIFT);
    EXPECT_EQ(status_of(a.admin(cq)), Status::QueueExists);
    Sqe del = make_admin(SOHU_ADMIN_OP_DELETE_CQ);
    del.dw[SOHU_ADMIN_DELETE_CQ_QID_DW] |= 2u;
    EXPECT_EQ(status_of(a.admin(del)), Status::QueueInUse);
    // A doorbell beyond the queue's size: logged, queue 2 unaffected, and queue 1 goes on.
    const double errors = b.count("dev0.errors");
    a.write32(SOHU_SQ_TAIL_DB(2), 999);
    a.write32(SOHU_SQ_TAIL_DB(9), 1);  // a queue that does not exist
    a.read32(SOHU_STATUS);             // posted writes: a read flushes them to the device
    EXPECT_EQ(b.count("dev0.errors"), errors + 2);
    EXPECT_EQ(status_of(a.run(2, make_nop())), Status::Success);
    EXPECT_EQ(status_of(a.run(1, make_nop())), Status::Success);
    // Disabled device: a doorbell is logged as DEVICE_DISABLED, nothing runs.
    a.write32(SOHU_CTRL, 0);
    while ((a.read32(SOHU_ERR_CODE)) != 0) a.write32(SOHU_ERR_ACK, 1);
    a.write32(SOHU_SQ_TAIL_DB(1), 1);
    EXPECT_EQ(a.read32(SOHU_ERR_CODE), static_cast<std::uint32_t>(Status::DeviceDisabled));
  });
  EXPECT_GE(b.count("dev0.cp.doorbell_errors"), 3);
  EXPECT_GE(b.count("host0.irq.vector0.count"), 1);  // error interrupts on ERR_VECTOR 0
}

// ---- functional mode: real bytes, compared with a CPU reference --------------------

std::vector<float> random_values(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<std::uint8_t> encoded(DataType t, const std::vector<float>& v) {
  std::vector<std::uint8_t> out(v.size() * bytes_of(t));
  encode(t, v.data(), out.data(), v.size());
  return out;
}

std::vector<float> decoded(DataType t, const std::vector<std::uint8_t>& raw) {
  std::vector<float> out(raw.size() / bytes_of(t));
  decode(t, raw.data(), out.data(), out.size());
  return out;
}

/// Rounds every element as the device stores its inputs.
std::vector<float> rounded(DataType t, std::vector<float> v) {
  for (float& x : v) x = round_to(t, x);
  return v;
}

SOHUSIM_SYSTEMC_TEST(Device, FunctionalGemmAttentionAndNormMatchTheCpuReference) {
  DeviceBench b({"sim.data_mode=functional"});
  const DataType bf = DataType::BF16;
  const std::uint32_t M = 48, K = 96, N = 80;
  const auto A = rounded(bf, random_values(M * K, 1)), B = rounded(bf, random_values(K * N, 2));
  std::vector<float> C_dev, C_ref(M * N);
  // Attention: 2 query heads per KV head, decode-like (q_len 3 of kv_len 17, causal).
  const std::uint32_t batch = 1, ql = 3, kvl = 17, qh = 4, kvh = 2, hd = 16;
  const auto Q = rounded(bf, random_values(batch * ql * qh * hd, 3)),
             Kc = rounded(bf, random_values(batch * kvl * kvh * hd, 4)),
             Vc = rounded(bf, random_values(batch * kvl * kvh * hd, 5));
  std::vector<float> O_dev, O_ref(Q.size());
  const auto X = rounded(bf, random_values(5 * 64, 6, 3.0f)), G = rounded(bf, random_values(64, 7));
  std::vector<float> R_dev, R_ref(X.size());
  run(b, [&] {
    b.bring_up();
    const std::uint64_t a = 0, bb = 1 << 20, c = 2 << 20;
    ASSERT_EQ(status_of(b.upload(a, encoded(bf, A).data(), A.size() * 2)), Status::Success);
    ASSERT_EQ(status_of(b.upload(bb, encoded(bf, B).data(), B.size() * 2)), Status::Success);
    ASSERT_EQ(status_of(b.agent->run(1, make_gemm(a, bb, c, M, K, N, bf, bf, Activation::Gelu))), Status::Success);
    C_dev = decoded(bf, b.download(c, M * N * 2));
    const std::uint64_t q = 4 << 20, k = 5 << 20, v = 6 << 20, o = 7 << 20;
    b.upload(q, encoded(bf, Q).data(), Q.size() * 2);
    b.upload(k, encoded(bf, Kc).data(), Kc.size() * 2);
    b.upload(v, encoded(bf, Vc).data(), Vc.size() * 2);
    ASSERT_EQ(status_of(b.agent->run(1, make_attention(q, k, v, o, batch, ql, kvl, qh, kvh, hd, bf, true))),
              Status::Success);
    O_dev = decoded(bf, b.download(o, Q.size() * 2));
    const std::uint64_t x = 8 << 20, g = 9 << 20, r = 10 << 20;
    b.upload(x, encoded(bf, X).data(), X.size() * 2);
    b.upload(g, encoded(bf, G).data(), G.size() * 2);
    ASSERT_EQ(status_of(b.agent->run(1, make_vector(VectorOp::RmsNorm, x, g, r, 5, 64, bf, bf, 1e-5f))),
              Status::Success);
    R_dev = decoded(bf, b.download(r, X.size() * 2));
  });
  // CPU reference: FP32 math on the same rounded inputs, then BF16 rounding of the output.
  GemmArgs ga;
  ga.m = M;
  ga.k = K;
  ga.n = N;
  ga.act = Activation::Gelu;
  gemm(ga, A.data(), B.data(), nullptr, nullptr, C_ref.data());
  ASSERT_EQ(C_dev.size(), C_ref.size());
  for (std::size_t i = 0; i < C_ref.size(); ++i) ASSERT_EQ(C_dev[i], round_to(bf, C_ref[i])) << "C[" << i << "]";
  AttentionArgs aa;
  aa.batch = batch;
  aa.q_len = ql;
  aa.kv_len = kvl;
  aa.q_heads = qh;
  aa.kv_heads = kvh;
  aa.head_dim = hd;
  aa.causal = true;
  attention(aa, Q.data(), Kc.data(), Vc.data(), O_ref.data());
  for (std::size_t i = 0; i < O_ref.size(); ++i) ASSERT_EQ(O_dev[i], round_to(bf, O_ref[i])) << "O[" << i << "]";
  // RMSNorm by hand in double, compared with a BF16 tolerance (an independent reference).
  for (std::size_t row = 0; row < 5; ++row) {
    double ss = 0;
    for (std::size_t j = 0; j < 64; ++j) {
      const double x = X[row * 64 + j];
      ss += x * x;
    }
    const double inv = 1.0 / std::sqrt(ss / 64 + 1e-5);
    for (std::size_t j = 0; j < 64; ++j) {
      const double ref = static_cast<double>(X[row * 64 + j]) * inv * static_cast<double>(G[j]);
      ASSERT_NEAR(static_cast<double>(R_dev[row * 64 + j]), ref, 1e-2 * std::max(1.0, std::fabs(ref)))
          << "row " << row << " col " << j;
    }
  }
  EXPECT_EQ(b.count("dev0.exec.functional_ops"), 3);
}

SOHUSIM_SYSTEMC_TEST(Device, MmuContextTranslatesAndFaults) {
  DeviceBench b;
  Cqe ok{}, fault{};
  run(b, [&] {
    b.bring_up();
    // Context 3: virtual pages 0 and 1 -> physical 2 MiB pages 10 and 11, page 1 read-only.
    const std::uint64_t table[2] = {(10ULL << 21) | 3, (11ULL << 21) | 1};
    const std::uint64_t t = b.host_buffer(table, sizeof table);
    Sqe sc = make_admin(SOHU_ADMIN_OP_SET_CONTEXT);
    sc.set_u64(SOHU_ADMIN_SET_CONTEXT_TABLE_DW, t);
    sc.dw[SOHU_ADMIN_SET_CONTEXT_CONTEXT_DW] |= 3;
    sc.dw[SOHU_ADMIN_SET_CONTEXT_VALID_DW] |= 1;
    sc.dw[SOHU_ADMIN_SET_CONTEXT_ENTRIES_DW] = 2;
    ASSERT_EQ(status_of(b.agent->admin(sc)), Status::Success);
    Sqe g = make_gemm(0, 64 << 10, 128 << 10, 64, 64, 64, DataType::BF16, DataType::BF16);
    g.dw[SOHU_SQE_CONTEXT_DW] |= 3;
    ok = b.agent->run(1, g);
    Sqe w = make_gemm(0, 64 << 10, (2ULL << 20) + 4096, 64, 64, 64, DataType::BF16,
                      DataType::BF16);  // C in the read-only page
    w.dw[SOHU_SQE_CONTEXT_DW] |= 3;
    fault = b.agent->run(1, w);
  });
  EXPECT_EQ(status_of(ok), Status::Success);
  EXPECT_EQ(status_of(fault), Status::MmuFault);
  EXPECT_GE(b.count("dev0.mmu.tlb_misses"), 1);
  EXPECT_NE(b.dev().error_log().oldest(), nullptr);
}

SOHUSIM_SYSTEMC_TEST(Device, SemaphoresOrderTwoQueues) {
  DeviceBench b;
  double waiter_done = 0, signal_done = 0;
  run(b, [&] {
    b.bring_up();
    b.agent->create_io_queue(2, 16, 2);
    Sqe w = make_admin(SOHU_IO_OP_SEM_WAIT);
    w.dw[SOHU_IO_SEM_WAIT_SEM_DW] |= 5;
    w.dw[SOHU_IO_SEM_WAIT_VALUE_DW] = 1;
    b.agent->submit(2, w);
    sc_core::wait(30, sc_core::SC_US);
    Sqe s = make_admin(SOHU_IO_OP_SEM_SIGNAL);
    s.dw[SOHU_IO_SEM_SIGNAL_SEM_DW] |= 5 | (0xFFu << SOHU_IO_SEM_SIGNAL_DEVICE_SHIFT);
    s.dw[SOHU_IO_SEM_SIGNAL_VALUE_DW] = 1;
    EXPECT_EQ(status_of(b.agent->run(1, s)), Status::Success);
    signal_done = sc_core::sc_time_stamp().to_seconds();
    EXPECT_EQ(status_of(b.agent->wait(2)), Status::Success);
    waiter_done = sc_core::sc_time_stamp().to_seconds();
    // A wait that times out.
    Sqe t = make_admin(SOHU_IO_OP_SEM_WAIT);
    t.dw[SOHU_IO_SEM_WAIT_SEM_DW] |= 6;
    t.dw[SOHU_IO_SEM_WAIT_VALUE_DW] = 1;
    t.dw[SOHU_IO_SEM_WAIT_TIMEOUT_US_DW] = 10;
    EXPECT_EQ(status_of(b.agent->run(2, t)), Status::SemTimeout);
  });
  EXPECT_GE(waiter_done, signal_done - 1e-6);
  EXPECT_GT(signal_done, 30e-6);
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

// Two hosts, each with one device, the devices joined by one chip-to-chip link.
struct PairBench {
  counters::Registry registry;
  sim::Instrumentation inst;
  std::unique_ptr<HostSystem> a, b;
  std::unique_ptr<HostAgent> ha, hb;
  std::unique_ptr<C2cChannel> ab, ba;
  PairBench() {
    inst.registry = &registry;
    const config::Config cfg =
        device_config({"sim.data_mode=functional", "device.c2c.bandwidth=50 GB/s", "device.c2c.latency=1us"});
    a = std::make_unique<HostSystem>(cfg, inst, "host0", "dev0", 0);
    b = std::make_unique<HostSystem>(cfg, inst, "host1", "dev1", 1);
    const C2cParams p = a->device().params().c2c;
    ab = std::make_unique<C2cChannel>(p, counters::Scope(registry, "dev0.c2c.p0.tx"));
    ba = std::make_unique<C2cChannel>(p, counters::Scope(registry, "dev1.c2c.p0.tx"));
    a->device().connect(1, b->device(), *ab, *ba);
    b->device().connect(0, a->device(), *ba, *ab);
    ha = std::make_unique<HostAgent>(*a);
    hb = std::make_unique<HostAgent>(*b);
  }
};

Sqe make_collective(unsigned op, std::uint64_t addr, std::uint64_t len, unsigned peer, DataType t, std::uint32_t tag) {
  Sqe s = make_admin(SOHU_IO_OP_COLLECTIVE);
  s.set_u64(SOHU_IO_COLLECTIVE_ADDR_DW, addr);
  s.set_u64(SOHU_IO_COLLECTIVE_LENGTH_DW, len);
  s.dw[SOHU_IO_COLLECTIVE_OP_DW] |= (op << SOHU_IO_COLLECTIVE_OP_SHIFT) | (peer << SOHU_IO_COLLECTIVE_PEER_SHIFT) |
                                    (static_cast<unsigned>(t) << SOHU_IO_COLLECTIVE_DTYPE_SHIFT);
  s.dw[SOHU_IO_COLLECTIVE_TAG_DW] = tag;
  return s;
}

SOHUSIM_SYSTEMC_TEST(ChipToChip, SendReduceAndRemoteSemaphore) {
  PairBench p;
  const std::uint32_t n = 4096;  // FP32 elements
  std::vector<float> x(n), y(n), got(n), sent(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 0.5f * static_cast<float>(i);
  }
  double send_s = 0, reduce_done = 0, send_start = 0;
  Status unreachable = Status::Success;
  bool a_done = false, b_done = false;
  sc_core::sc_spawn([&] {
    p.ha->probe();
    p.ha->enable();
    p.ha->create_io_queue(1, 16, 1);
    const std::uint64_t h = p.a->alloc_dma(n * 4);
    p.a->cpu().mem_write(h, x.data(), n * 4);
    p.ha->run(1, make_dma_copy(Space::Host, h, Space::Hbm, 0, n * 4));
    const double t0 = sc_core::sc_time_stamp().to_seconds();
    send_start = t0;
    EXPECT_EQ(status_of(p.ha->run(1, make_collective(0, 0, n * 4, 1, DataType::FP32, 7))), Status::Success);  // SEND
    send_s = sc_core::sc_time_stamp().to_seconds() - t0;
    // Signal semaphore 3 on device 1.
    Sqe s = make_admin(SOHU_IO_OP_SEM_SIGNAL);
    s.dw[SOHU_IO_SEM_SIGNAL_SEM_DW] |= 3u | (1u << SOHU_IO_SEM_SIGNAL_DEVICE_SHIFT);
    s.dw[SOHU_IO_SEM_SIGNAL_VALUE_DW] = 1;
    EXPECT_EQ(status_of(p.ha->run(1, s)), Status::Success);
    // No port to device 5.
    unreachable = status_of(p.ha->run(1, make_collective(0, 0, 64, 5, DataType::FP32, 1)));
    a_done = true;
  });
  sc_core::sc_spawn([&] {
    p.hb->probe();
    p.hb->enable();
    p.hb->create_io_queue(1, 16, 1);
    const std::uint64_t h = p.b->alloc_dma(n * 4);
    p.b->cpu().mem_write(h, y.data(), n * 4);
    p.hb->run(1, make_dma_copy(Space::Host, h, Space::Hbm, 1 << 20, n * 4));
    // REDUCE_STEP: receive device 0's buffer and add it into ours.
    EXPECT_EQ(status_of(p.hb->run(1, make_collective(2, 1 << 20, n * 4, 0, DataType::FP32, 7))), Status::Success);
    reduce_done = sc_core::sc_time_stamp().to_seconds();
    Sqe w = make_admin(SOHU_IO_OP_SEM_WAIT);
    w.dw[SOHU_IO_SEM_WAIT_SEM_DW] |= 3;
    w.dw[SOHU_IO_SEM_WAIT_VALUE_DW] = 1;
    EXPECT_EQ(status_of(p.hb->run(1, w)), Status::Success);
    p.hb->run(1, make_dma_copy(Space::Hbm, 1 << 20, Space::Host, h, n * 4));
    p.b->cpu().mem_read(h, got.data(), n * 4);
    b_done = true;
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  ASSERT_TRUE(a_done && b_done);
  for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] + y[i]) << i;
  EXPECT_EQ(unreachable, Status::PeerUnreachable);
  // The SEND is eager: it completes without waiting for the wire, and the receiver's reduce
  // completes after 16 KiB over 50 GB/s with 16 B per 256 B packet plus the 1 us latency.
  EXPECT_GT(send_s, 0.0);
  EXPECT_GE(reduce_done - send_start, 1e-6 + 16384.0 * (1 + 16.0 / 256) / 50e9);
  EXPECT_EQ(p.registry.value("dev0.c2c.p0.tx.bytes"), n * 4 + 16);  // the data and the semaphore message
  EXPECT_GT(reduce_done, 0);
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

SOHUSIM_SYSTEMC_TEST(Device, EveryPmuEventNamesCountersTheDeviceHas) {
  DeviceBench b;
  for (const PmuEventDesc& e : pmu_event_table()) {
    std::string glob = e.counter_glob;
    ASSERT_EQ(glob.rfind("dev.", 0), 0u) << e.name;
    glob = "dev0" + glob.substr(3);
    if (std::string(e.name) == "C2C_TX_BYTES") continue;  // channels exist once a peer is connected
    EXPECT_FALSE(b.registry.glob(glob).empty()) << e.name << ": " << glob << " matches no counter";
  }
}

SOHUSIM_SYSTEMC_TEST(Device, ReplayRepeatsTimeAndCountersOfAnIdenticalShape) {
  DeviceBench b;
  ASSERT_TRUE(b.dev().params().replay);  // fast fidelity, timing mode: on by default
  double first = 0, second = 0, active_after_first = 0, bytes_after_first = 0, warm_active = 0, warm_bytes = 0;
  std::uint16_t bad = 0;
  run(b, [&] {
    b.bring_up();
    // Warm the host side (queue fetch, IOMMU) with another shape first, so that the two
    // timed commands see the same host path.
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 128, 128, 128, DataType::BF16, DataType::BF16));
    warm_active = b.sum("dev0.me*.active_cycles");
    warm_bytes = b.count("dev0.hbm.port.bytes_read");
    double t0 = sc_core::sc_time_stamp().to_seconds();
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 512, 1024, 768, DataType::BF16, DataType::BF16));
    first = sc_core::sc_time_stamp().to_seconds() - t0;
    active_after_first = b.sum("dev0.me*.active_cycles");
    bytes_after_first = b.count("dev0.hbm.port.bytes_read");
    t0 = sc_core::sc_time_stamp().to_seconds();
    // Same shape, other addresses: replayed.
    b.agent->run(1, make_gemm(32 << 20, 40 << 20, 48 << 20, 512, 1024, 768, DataType::BF16, DataType::BF16));
    second = sc_core::sc_time_stamp().to_seconds() - t0;
    // Same shape, B beyond the HBM: the checks still run, the command still fails.
    bad = b.agent
              ->run(1, make_gemm(0, b.dev().params().hbm_bytes - 4096, 16 << 20, 512, 1024, 768, DataType::BF16,
                                 DataType::BF16))
              .status;
  });
  EXPECT_EQ(b.count("dev0.exec.replayed"), 1.0);
  EXPECT_NEAR(second, first, first * 0.02);  // the same device time, up to the command's fixed costs
  EXPECT_DOUBLE_EQ(b.sum("dev0.me*.active_cycles"), 2 * active_after_first - warm_active);
  EXPECT_DOUBLE_EQ(b.count("dev0.hbm.port.bytes_read"), 2 * bytes_after_first - warm_bytes);
  EXPECT_EQ(bad, static_cast<std::uint16_t>(Status::OutOfRange));
}

// A sum watched between the record and the replay (as the profiler and the HBM bandwidth
// tracks watch theirs): the replay fills its batch's share of it again, and the sum read
// without settling equals the counters read the usual way.
SOHUSIM_SYSTEMC_TEST(Device, ReplayedIncrementsReachAWatchedSumUnsettled) {
  DeviceBench b;
  double active_after_first = 0, warm_active = 0, watched = 0;
  bool owed = false;
  run(b, [&] {
    b.bring_up();
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 128, 128, 128, DataType::BF16, DataType::BF16));
    warm_active = b.sum("dev0.me*.active_cycles");
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 512, 1024, 768, DataType::BF16, DataType::BF16));
    active_after_first = b.sum("dev0.me*.active_cycles");
    std::vector<const counters::Counter*> parts;
    for (const counters::Stat* s : b.registry.glob("dev0.me*.active_cycles"))
      parts.push_back(&dynamic_cast<const counters::Counter&>(*s));
    const std::uint32_t sum = b.registry.watch_sum(parts);
    b.agent->run(1, make_gemm(32 << 20, 40 << 20, 48 << 20, 512, 1024, 768, DataType::BF16, DataType::BF16));
    owed = b.registry.deferred().dirty();                        // the replay's increments are owed...
    watched = static_cast<double>(b.registry.watched_sum(sum));  // ...and in the sum all the same
  });
  EXPECT_EQ(b.count("dev0.exec.replayed"), 1.0);
  EXPECT_TRUE(owed);
  EXPECT_DOUBLE_EQ(watched, 2 * active_after_first - warm_active);
  EXPECT_DOUBLE_EQ(b.sum("dev0.me*.active_cycles"), watched);
}

// Each command's work, tallied where the executor moves it, adds up over the classes to the
// device's own counters (a replayed command's included), and reaches a command observer with
// the same numbers and its shape.
SOHUSIM_SYSTEMC_TEST(Device, CommandWorkAddsUpToTheDevicesCounters) {
  DeviceBench b;
  std::vector<WorkShape> shapes;
  std::vector<CommandWork> works;
  std::vector<std::uint64_t> durations;
  b.dev().executor().set_command_observer([&](const Sqe& s, std::uint64_t ps, const CommandWork& w) {
    shapes.push_back(work_shape(s));
    works.push_back(w);
    durations.push_back(ps);
  });
  run(b, [&] {
    b.bring_up();
    const std::vector<std::uint8_t> bytes(1 << 20, 1);
    b.upload(0, bytes.data(), bytes.size());
    for (int i = 0; i < 2; ++i)  // the second replays the first
      b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 256, 512, 384, DataType::BF16, DataType::BF16));
    b.agent->run(1, make_vector(VectorOp::RmsNorm, 0, 1 << 20, 24 << 20, 64, 4096, DataType::BF16, DataType::BF16));
    b.agent->run(1, make_attention(0, 4 << 20, 8 << 20, 12 << 20, 2, 1, 300, 8, 2, 128, DataType::BF16, false));
    b.download(0, 4096);
  });
  ASSERT_EQ(b.count("dev0.exec.replayed"), 1.0);
  double hbm = 0, matrix = 0, vector = 0, sram = 0, host_read = 0, host_write = 0, link = 0;
  for (const WorkClass& c : work_classes()) {
    const std::string at = std::string("dev0.exec.") + c.name + ".";
    hbm += b.count(at + "hbm_bytes");
    matrix += b.count(at + "matrix_flops");
    vector += b.count(at + "vector_flops");
    sram += b.count(at + "sram_bytes");
    host_read += b.count(at + "host_read_bytes");
    host_write += b.count(at + "host_write_bytes");
    link += b.count(at + "link_bytes");
  }
  EXPECT_DOUBLE_EQ(hbm, b.count("dev0.hbm.port.bytes_read") + b.count("dev0.hbm.port.bytes_written"));
  EXPECT_DOUBLE_EQ(matrix, b.sum("dev0.me*.flops.*"));
  EXPECT_DOUBLE_EQ(vector, b.sum("dev0.ve*.flops.*"));
  EXPECT_GT(vector, 0);
  EXPECT_DOUBLE_EQ(sram, b.count("dev0.sram.bytes_read") + b.count("dev0.sram.bytes_written"));
  EXPECT_DOUBLE_EQ(host_read, 1 << 20);
  EXPECT_DOUBLE_EQ(host_write, 4096);
  EXPECT_DOUBLE_EQ(link, 0);
  const auto* gemm = dynamic_cast<const counters::Distribution*>(b.registry.find("dev0.exec.gemm.duration"));
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->count(), 2u);
  // The observer: every command of a work class, in order, the replay with the record's work.
  ASSERT_EQ(shapes.size(), 6u);
  EXPECT_EQ(shapes[0].describe(), "DMA_COPY host->hbm <=1 MiB");
  EXPECT_EQ(works[0].host_read_bytes, 1u << 20);
  EXPECT_EQ(works[0].hbm_bytes, 1u << 20);
  EXPECT_EQ(shapes[1].describe(), "GEMM 256x512x384 bf16");
  EXPECT_TRUE(shapes[2] == shapes[1]);
  EXPECT_EQ(works[1].matrix_flops, 2ull * 256 * 512 * 384);
  EXPECT_EQ(works[2].matrix_flops, works[1].matrix_flops);
  EXPECT_EQ(works[2].hbm_bytes, works[1].hbm_bytes);
  EXPECT_EQ(durations[2], durations[1]);
  EXPECT_EQ(shapes[3].describe(), "VECTOR rmsnorm 64x4096 bf16");
  EXPECT_EQ(shapes[4].describe(), "ATTENTION b2 q1 kv<=512 h8/2 d128 bf16");  // KV length 300 in its bucket
  EXPECT_EQ(shapes[5].describe(), "DMA_COPY hbm->host <=4 KiB");
  EXPECT_DOUBLE_EQ(b.count("dev0.exec.gemm.matrix_flops"),
                   static_cast<double>(works[1].matrix_flops + works[2].matrix_flops));
}

SOHUSIM_SYSTEMC_TEST(Device, ReplayIsOffInFunctionalModeAndWhenDisabled) {
  DeviceBench f({"sim.data_mode=functional"});
  EXPECT_FALSE(f.dev().params().replay);
}

SOHUSIM_SYSTEMC_TEST(Device, ReplayCanBeTurnedOff) {
  DeviceBench b({"device.replay=false"});
  EXPECT_FALSE(b.dev().params().replay);
  run(b, [&] {
    b.bring_up();
    for (int i = 0; i < 2; ++i)
      b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 256, 256, 256, DataType::BF16, DataType::BF16));
  });
  EXPECT_EQ(b.count("dev0.exec.replayed"), 0.0);
}

SOHUSIM_SYSTEMC_TEST(Device, EnergyReportFollowsTheWork) {
  DeviceBench b;
  double t = 0;
  run(b, [&] {
    b.bring_up();
    const double t0 = sc_core::sc_time_stamp().to_seconds();
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 1024, 1024, 1024, DataType::BF16, DataType::BF16));
    t = sc_core::sc_time_stamp().to_seconds() - t0;
  });
  const EnergyReport e = b.dev().energy(t);
  const EnergyParams& p = b.dev().params().energy;
  // At least the MACs' dynamic energy (1024^3 BF16 MACs) and every unit's static power.
  const double macs = 1024.0 * 1024 * 1024;
  EXPECT_GE(e.total_j, macs * p.pj_per_mac[static_cast<unsigned>(DataType::BF16)] * 1e-12);
  EXPECT_GT(e.average_w, 0);
  EXPECT_NEAR(e.average_w, e.total_j / t, 1e-9 * e.average_w);
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

SOHUSIM_SYSTEMC_TEST(Device, EngineTimeBucketsSumToElapsedCycles) {
  DeviceBench b;
  run(b, [&] {
    b.bring_up();
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 2048, 1024, 1024, DataType::BF16, DataType::BF16));
    sc_core::wait(3, sc_core::SC_US);  // some idle time after the work
    const double elapsed = static_cast<double>(sc_core::sc_time_stamp().value() / b.dev().params().period_ps());
    for (const char* e : {"dev0.me0", "dev0.me7", "dev0.ve0"}) {
      const std::string p = e;
      const double sum = b.count(p + ".active_cycles") + b.count(p + ".stall_hbm_cycles") +
                         b.count(p + ".stall_sram_cycles") + b.count(p + ".stall_store_cycles") +
                         b.count(p + ".stall_dependency_cycles") + b.count(p + ".idle_cycles");
      EXPECT_NEAR(sum, elapsed, 1.0) << e;
    }
    EXPECT_GT(b.count("dev0.me0.active_cycles"), 0);
    EXPECT_GT(b.count("dev0.me0.idle_cycles"), 0);
  });
}

// Random submission entries (bounded sizes so that legal ones stay small) never crash or hang
// the device: every one completes with some status, and the queue keeps working.
SOHUSIM_SYSTEMC_TEST(Device, RandomCommandsAlwaysComplete) {
  DeviceBench b;
  unsigned completed = 0, failed = 0;
  std::map<std::uint16_t, unsigned> by_status;
  run(b, [&] {
    b.bring_up(256);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 300; ++i) {
      Sqe s;
      for (auto& d : s.dw) d = static_cast<std::uint32_t>(rng());
      s.dw[0] =
          (s.dw[0] & 0xFFFF0000u) | static_cast<std::uint32_t>(rng() % 14);  // mostly defined opcodes, flags clear
      const CommandDesc* d = find_command(CommandQueue::Io, s.opcode());
      const bool keep_reserved = rng() % 8 == 0;  // now and then a reserved bit set
      for (unsigned k = 1; k < 16; ++k) {
        if (d != nullptr && !keep_reserved) s.dw[k] &= d->defined_mask[k];
        if (k >= 4 && rng() % 4 != 0) s.dw[k] &= 0x3FF;  // small addresses, sizes and dimensions, mostly
      }
      if (rng() % 2 == 0) s.dw[1] = 0;             // physical context half the time
      s.dw[5] = s.dw[7] = s.dw[9] = s.dw[11] = 0;  // high address halves: inside the device
      if (s.opcode() == SOHU_IO_OP_SEM_WAIT) s.dw[SOHU_IO_SEM_WAIT_TIMEOUT_US_DW] |= 1;  // no endless waits
      const Cqe c = b.agent->run(1, s);
      ++completed;
      ++by_status[c.status];
      if (c.status != 0) ++failed;
    }
    EXPECT_EQ(status_of(b.agent->run(1, make_nop())), Status::Success);
  });
  EXPECT_EQ(completed, 300u);
  EXPECT_GT(failed, 0u);
  for (const auto& [st, n] : by_status) std::cout << "  status " << status_name(st) << ": " << n << "\n";
  // The entries got past decoding into execution: successes and range/alignment failures too.
  EXPECT_GT(by_status[0], 30u);
  EXPECT_GE(by_status.size(), 5u);
  EXPECT_GE(b.count("dev0.errors"), failed);
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

SOHUSIM_SYSTEMC_TEST(Device, PmuOverflowSetsStatusAndInterrupts) {
  DeviceBench b({"device.pmu.counter_bits=16"});
  std::uint32_t ovf = 0, ovf_after_clear = 0;
  std::uint64_t counter = 0;
  run(b, [&] {
    b.bring_up();
    b.agent->write32(SOHU_ERR_VECTOR, 5);
    b.agent->write32(SOHU_PMU_EVTSEL(2), SOHU_PMU_EVT_ME_ACTIVE_CYCLES);
    b.agent->write32(SOHU_PMU_CTRL, SOHU_PMU_CTRL_EN_MASK | SOHU_PMU_CTRL_RESET_MASK | SOHU_PMU_CTRL_OVF_IRQ_EN_MASK);
    // 8 engines x well over 65536 / 8 active cycles each.
    b.agent->run(1, make_gemm(0, 8 << 20, 16 << 20, 2048, 2048, 2048, DataType::BF16, DataType::BF16));
    b.sys->irq().wait_for(5);
    ovf = b.agent->read32(SOHU_PMU_OVF);
    counter = b.agent->read64(SOHU_PMU_COUNTER(2));
    b.agent->write32(SOHU_PMU_OVF, ovf);  // RW1C
    ovf_after_clear = b.agent->read32(SOHU_PMU_OVF);
  });
  EXPECT_NE(ovf & (1u << 2), 0u);
  EXPECT_LT(counter, 1u << 16);  // wrapped to 16 bits
  EXPECT_GT(b.sum("dev0.me*.active_cycles"), 65536);
  EXPECT_EQ(ovf_after_clear & (1u << 2), 0u);
}

SOHUSIM_SYSTEMC_TEST(Device, TraceRingFullDropsAndCounts) {
  DeviceBench b;
  std::uint32_t drops = 0, drops_again = 0, head = 0;
  run(b, [&] {
    b.bring_up(256);
    const std::uint64_t ring = b.host_buffer(nullptr, 4096);  // 128 records, one slot kept empty
    Sqe t = make_admin(SOHU_ADMIN_OP_TRACE_CONFIG);
    t.set_u64(SOHU_ADMIN_TRACE_CONFIG_RING_DW, ring);
    t.dw[SOHU_ADMIN_TRACE_CONFIG_SIZE_DW] = 4096;
    t.dw[SOHU_ADMIN_TRACE_CONFIG_MASK_DW] = 1;
    t.dw[SOHU_ADMIN_TRACE_CONFIG_ENABLE_DW] = 1;
    ASSERT_EQ(status_of(b.agent->admin(t)), Status::Success);
    for (int i = 0; i < 100; ++i) b.agent->run(1, make_nop());  // 200 records, nobody consuming
    head = b.agent->read32(SOHU_TRC_HEAD);
    drops = b.agent->read32(SOHU_TRC_DROPS);
    drops_again = b.agent->read32(SOHU_TRC_DROPS);  // read clears
  });
  EXPECT_EQ(head, 4096u - 32u);
  // 201 records (TRACE_CONFIG's own end record, then 100 start/end pairs); 127 fit.
  EXPECT_EQ(drops, 201u - 127u);
  EXPECT_EQ(drops_again, 0u);
  EXPECT_EQ(b.count("dev0.trace_unit.drops"), 74);
}

SOHUSIM_SYSTEMC_TEST(Device, TimestampCounterHasItsOwnOffsetAndDrift) {
  DeviceBench b({"device.timestamp.offset=5 ms", "device.timestamp.drift_ppm=50"});
  std::uint64_t d0 = 0, d1 = 0;
  double t0 = 0, t1 = 0;
  run(b, [&] {
    b.agent->probe();
    t0 = sc_core::sc_time_stamp().to_seconds();
    d0 = b.agent->read64(SOHU_TIMESTAMP);
    sc_core::wait(100, sc_core::SC_MS);
    t1 = sc_core::sc_time_stamp().to_seconds();
    d1 = b.agent->read64(SOHU_TIMESTAMP);
  });
  // Device time = 5 ms + t x (1 + 50e-6), read somewhere inside each MMIO round trip.
  EXPECT_NEAR(static_cast<double>(d0), 5e6 + t0 * 1e9 * (1 + 50e-6), 2000.0);
  const double rate = static_cast<double>(d1 - d0) / ((t1 - t0) * 1e9);
  EXPECT_NEAR(rate, 1 + 50e-6, 2e-6);
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

// Operands that end exactly at the top of HBM are legal: the tile streams stay inside.
SOHUSIM_SYSTEMC_TEST(Device, OperandsAtTheTopOfHbm) {
  DeviceBench b;
  Cqe g{}, a{}, v{};
  run(b, [&] {
    b.bring_up();
    const std::uint64_t top = b.agent->read64(SOHU_HBM_SIZE);
    const std::uint64_t m = 256, k = 512, n = 384;
    const std::uint64_t c = top - m * n * 2, bb = c - k * n * 2, aa = bb - m * k * 2;
    Sqe s = make_gemm(aa, bb, c, m, k, n, DataType::BF16, DataType::BF16);
    s.dw[SOHU_IO_GEMM_RESIDUAL_DW] |= SOHU_IO_GEMM_RESIDUAL_MASK;
    s.set_u64(SOHU_IO_GEMM_D_DW, c);  // residual in place
    g = b.agent->run(1, s);
    const std::uint64_t kv = 4 * 128 * 2 * 64;  // kv_len 128, 4 KV heads, head_dim 64, BF16
    a = b.agent->run(1, make_attention(top - 4 * kv, top - 3 * kv, top - 2 * kv, top - kv, 1, 1, 128, 4, 4, 64,
                                       DataType::BF16, false));
    v = b.agent->run(1, make_vector(VectorOp::Add, top - 2 * 65536, top - 65536, top - 65536, 32, 1024, DataType::BF16,
                                    DataType::BF16));
  });
  EXPECT_EQ(status_of(g), Status::Success);
  EXPECT_EQ(status_of(a), Status::Success);
  EXPECT_EQ(status_of(v), Status::Success);
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

SOHUSIM_SYSTEMC_TEST(Device, SoftResetRestoresRegistersAndTheDeviceComesBack) {
  DeviceBench b;
  std::uint32_t coal_after = 1, status_after = 1, ctrl_after = 1;
  std::uint64_t hbm_after = 0;
  Cqe after{};
  run(b, [&] {
    b.bring_up();
    b.agent->write32(SOHU_COAL_COUNT, 9);  // must not outlive the reset: NOP below waits for its interrupt
    b.agent->write32(SOHU_CTRL, SOHU_CTRL_EN_MASK | SOHU_CTRL_RST_MASK);
    coal_after = b.agent->read32(SOHU_COAL_COUNT);
    status_after = b.agent->read32(SOHU_STATUS) & SOHU_STATUS_RDY_MASK;
    ctrl_after = b.agent->read32(SOHU_CTRL);
    hbm_after = b.agent->read64(SOHU_HBM_SIZE);  // identity comes from the configuration again
    HostAgent fresh(*b.sys);
    fresh.enable();
    fresh.create_io_queue(1, 16, 1);
    after = fresh.run(1, make_nop());
  });
  EXPECT_EQ(coal_after, 0u);
  EXPECT_EQ(status_after, 0u);
  EXPECT_EQ(ctrl_after, 0u);
  EXPECT_EQ(hbm_after, 24ULL << 30);
  EXPECT_EQ(status_of(after), Status::Success);
  EXPECT_EQ(b.dev().last_reset_reason(), "CTRL.RST");
}

}  // namespace
}  // namespace sohusim::device::test

namespace sohusim::device::test {
namespace {

/// The plan input the command executor builds for a GEMM on this device (exec_gemm).
GemmPlanInput device_plan_input(const DeviceParams& p, GemmShape shape, DataType in_type, DataType out_type) {
  GemmPlanInput in;
  in.shape = shape;
  in.in_bytes = bytes_of(in_type);
  in.out_bytes = bytes_of(out_type);
  in.acc_bytes = 4;
  in.engine = p.matrix;
  in.dtype = in_type;
  in.sram_bytes = p.sram_bytes;
  in.hbm_bytes_per_second = p.hbm_peak_bytes_per_s * p.hbm_sustained_fraction;
  in.vector = p.vector;
  return in;
}

// A decode GEMV whose N = 128 is one column block: split-K spreads it over the 8 engines and
// the vector engines reduce the partials. The command's time (less a NOP's fixed cost) is the
// plan's estimate within 15 %, and under half the estimate without split.
SOHUSIM_SYSTEMC_TEST(Device, SplitKGemvRunsNearItsEstimate) {
  DeviceBench b;
  const DataType f8 = DataType::FP8_E4M3;
  GemmPlanInput in = device_plan_input(b.dev().params(), {1, 8192, 128}, f8, f8);
  const GemmPlan plan = plan_gemm(in);
  const double est = estimate_seconds(plan, in);
  in.max_split_k = 1;
  const double no_split = estimate_seconds(plan_gemm(in), in);
  double nop = 0, t = 0;
  Status st = Status::InternalError;
  run(b, [&] {
    b.bring_up();
    b.agent->run(1, make_nop());  // warm the host path
    double t0 = sc_core::sc_time_stamp().to_seconds();
    b.agent->run(1, make_nop());
    nop = sc_core::sc_time_stamp().to_seconds() - t0;
    t0 = sc_core::sc_time_stamp().to_seconds();
    st = status_of(b.agent->run(1, make_gemm(0, 1 << 20, 2 << 20, 1, 8192, 128, f8, f8)));
    t = sc_core::sc_time_stamp().to_seconds() - t0;
  });
  ASSERT_EQ(st, Status::Success);
  EXPECT_GT(plan.split_k, 1u);
  std::printf(
      "1x8192x128 fp8 on 8 engines: split %llu, simulated %.3f us (less a NOP %.3f us), estimate %.3f us, "
      "no split %.3f us\n",
      static_cast<unsigned long long>(plan.split_k), t * 1e6, (t - nop) * 1e6, est * 1e6, no_split * 1e6);
  EXPECT_NEAR(t - nop, est, 0.15 * est);
  EXPECT_LT(t - nop, 0.5 * no_split);
  // The reductions ran on the vector engines: one per output tile.
  double reductions = 0;
  for (const auto& list : plan.per_vector_engine) reductions += static_cast<double>(list.size());
  EXPECT_EQ(b.sum("dev0.ve*.tiles"), reductions);
  EXPECT_GT(b.sum("dev0.ve*.active_cycles"), 0);
  EXPECT_EQ(b.sum("dev0.me*.tiles"), static_cast<double>(plan.tile_count()));
}

// Functional mode computes C with the CPU kernel after the timing: a split plan (with a bias
// epilogue) gives the same bytes as the reference.
SOHUSIM_SYSTEMC_TEST(Device, FunctionalSplitKGemmMatchesTheCpuReference) {
  DeviceBench b({"sim.data_mode=functional"});
  const DataType bf = DataType::BF16;
  const std::uint32_t M = 2, K = 4096, N = 128;
  const GemmPlan plan = plan_gemm(device_plan_input(b.dev().params(), {M, K, N}, bf, bf));
  ASSERT_GT(plan.split_k, 1u);
  const auto A = rounded(bf, random_values(M * K, 11)), B = rounded(bf, random_values(K * N, 12));
  const auto D = rounded(bf, random_values(N, 13));
  std::vector<float> C_dev, C_ref(M * N);
  run(b, [&] {
    b.bring_up();
    const std::uint64_t a = 0, bb = 1 << 20, c = 2 << 20, d = 3 << 20;
    ASSERT_EQ(status_of(b.upload(a, encoded(bf, A).data(), A.size() * 2)), Status::Success);
    ASSERT_EQ(status_of(b.upload(bb, encoded(bf, B).data(), B.size() * 2)), Status::Success);
    ASSERT_EQ(status_of(b.upload(d, encoded(bf, D).data(), D.size() * 2)), Status::Success);
    Sqe s = make_gemm(a, bb, c, M, K, N, bf, bf, Activation::Silu);
    s.dw[SOHU_IO_GEMM_BIAS_DW] |= SOHU_IO_GEMM_BIAS_MASK;
    s.set_u64(SOHU_IO_GEMM_D_DW, d);
    ASSERT_EQ(status_of(b.agent->run(1, s)), Status::Success);
    C_dev = decoded(bf, b.download(c, M * N * 2));
  });
  GemmArgs ga;
  ga.m = M;
  ga.k = K;
  ga.n = N;
  ga.act = Activation::Silu;
  ga.bias = true;
  gemm(ga, A.data(), B.data(), D.data(), nullptr, C_ref.data());
  ASSERT_EQ(C_dev.size(), C_ref.size());
  for (std::size_t i = 0; i < C_ref.size(); ++i) ASSERT_EQ(C_dev[i], round_to(bf, C_ref[i])) << "C[" << i << "]";
}

}  // namespace
}  // namespace sohusim::device::test
