// A FunctionController and its CommandProcessor alone, on test implementations of what they
// need from a device (FunctionDevice, CommandBackend) and a flat host memory: a command's
// way from the doorbell to the backend and back as a completion entry and an interrupt, and
// what the function's CTRL writes ask of its device.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/systemc_test_support.hpp"
#include "sohusim/counters/registry.hpp"
#include "sohusim/device/frontend/function_controller.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::device::test {
namespace {

#define SET_FIELD(sqe, P, v) \
  ((sqe).dw[P##_DW] |= (static_cast<std::uint32_t>(v) << P##_SHIFT) & static_cast<std::uint32_t>(P##_MASK))

Sqe command(std::uint8_t opcode, std::uint16_t cid) {
  Sqe s;
  SET_FIELD(s, SOHU_SQE_OPCODE, opcode);
  SET_FIELD(s, SOHU_SQE_CID, cid);
  return s;
}

// Host memory without timing.
class FlatHostMemory final : public MemoryPort {
 public:
  explicit FlatHostMemory(std::uint64_t bytes) : bytes_(bytes) {}
  PortStatus access(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes,
                    std::uint64_t) override {
    return debug(write, address, data, bytes) ? PortStatus::Ok : PortStatus::AddressError;
  }
  bool debug(bool write, std::uint64_t address, std::uint8_t* data, std::uint64_t bytes) override {
    if (address + bytes > bytes_.size()) return false;
    if (data != nullptr) {
      if (write) {
        std::memcpy(bytes_.data() + address, data, bytes);
      } else {
        std::memcpy(data, bytes_.data() + address, bytes);
      }
    }
    return true;
  }
  std::uint64_t size() const override { return bytes_.size(); }
  bool holds_data() const override { return true; }

  void put(std::uint64_t address, const Sqe& sqe) { sqe.to_bytes(bytes_.data() + address); }
  Cqe completion(std::uint64_t address) const { return Cqe::from_bytes(bytes_.data() + address); }

 private:
  std::vector<std::uint8_t> bytes_;
};

// What the controller asks of its device, written down.
struct RecordingDevice final : FunctionDevice {
  std::vector<unsigned> msix;
  std::vector<std::string> resets;
  unsigned disables = 0;
  unsigned identity_fills = 0;

  bool send_msix(unsigned vector) override {
    msix.push_back(vector);
    return true;
  }
  void request_reset(const char* why) override { resets.emplace_back(why); }
  void function_disabled() override { ++disables; }
  void fill_identity(RegisterFile& regs) override {
    ++identity_fills;
    regs.poke(SOHU_HBM_SIZE, 1ULL << 30);
  }
};

// Runs an I/O command for kIoPs and answers with 0x1000 + its opcode; a device admin
// command at once, with 7.
struct RecordingBackend final : CommandBackend {
  static constexpr std::uint64_t kIoPs = 1'000'000;
  std::vector<std::string> log;

  Outcome execute_io(const Sqe& sqe, std::uint16_t qid) override {
    log.push_back("io q" + std::to_string(qid) + " cid " + std::to_string(sqe.cid()));
    sc_core::wait(sc_core::sc_time::from_value(kIoPs));
    Outcome o;
    o.result = 0x1000u + sqe.opcode();
    return o;
  }
  Outcome execute_admin(const Sqe& sqe) override {
    log.push_back("admin opcode " + std::to_string(sqe.opcode()));
    Outcome o;
    o.result = 7;
    return o;
  }
  std::uint32_t power_state() override { return 2; }
  void command_started(const Sqe& sqe, std::uint16_t qid) override {
    log.push_back("start q" + std::to_string(qid) + " cid " + std::to_string(sqe.cid()));
  }
  void command_completed(const Sqe& sqe, std::uint16_t qid, std::uint16_t status) override {
    log.push_back("completed q" + std::to_string(qid) + " cid " + std::to_string(sqe.cid()) + " status " +
                  std::to_string(status));
  }
};

struct ControllerBench {
  static constexpr std::uint64_t kAsq = 0x1000, kAcq = 0x2000, kIoSq = 0x4000, kIoCq = 0x8000;
  counters::Registry registry;
  DeviceParams params;
  TimestampCounter clock{params.timestamp};
  FlatHostMemory host{1 << 20};
  RecordingDevice device;
  RecordingBackend backend;
  FunctionController ctl{params,  "PF", false, host, clock, device, backend, counters::Scope(registry, "fn"),
                         nullptr, 0};

  std::uint64_t reg(std::uint32_t offset) { return ctl.registers().read(offset, 4).value; }
  void write(std::uint32_t offset, unsigned bytes, std::uint64_t value) {
    ASSERT_TRUE(ctl.registers().write(offset, bytes, value).ok());
  }
  /// Admin queues of 4 entries at kAsq/kAcq, CTRL.EN, and the enable latency waited out.
  void enable() {
    write(SOHU_AQA, 4, 3u | (3u << 16));
    write(SOHU_ASQ, 8, kAsq);
    write(SOHU_ACQ, 8, kAcq);
    write(SOHU_CTRL, 4, SOHU_CTRL_EN_MASK);
    sc_core::wait(sc_core::sc_time::from_value(params.enable_latency_ps + 1));
  }
};

/// Runs `body` as the host thread and simulates until nothing is left to do.
void run(const std::function<void()>& body) {
  bool finished = false;
  sc_core::sc_spawn([&] {
    body();
    finished = true;
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  EXPECT_TRUE(finished) << "the host thread did not finish at " << sc_core::sc_time_stamp();
}

SOHUSIM_SYSTEMC_TEST(FunctionController, CommandsGoToTheBackendAndCompleteWithAnInterrupt) {
  ControllerBench b;
  EXPECT_EQ(b.device.identity_fills, 1u);
  EXPECT_EQ(b.reg(SOHU_HBM_SIZE), 1ULL << 30);
  run([&] {
    b.enable();
    EXPECT_NE(b.reg(SOHU_STATUS) & SOHU_STATUS_RDY_MASK, 0u) << "FunctionSignals::set_ready";

    // Admin: IDENTIFY is the backend's; the queue commands are the processor's own.
    b.host.put(ControllerBench::kAsq, command(SOHU_ADMIN_OP_IDENTIFY, 1));
    Sqe cq = command(SOHU_ADMIN_OP_CREATE_CQ, 2);
    cq.set_u64(SOHU_ADMIN_CREATE_CQ_BASE_DW, ControllerBench::kIoCq);
    SET_FIELD(cq, SOHU_ADMIN_CREATE_CQ_QID, 1);
    SET_FIELD(cq, SOHU_ADMIN_CREATE_CQ_QSIZE, 3);
    SET_FIELD(cq, SOHU_ADMIN_CREATE_CQ_VECTOR, 3);
    SET_FIELD(cq, SOHU_ADMIN_CREATE_CQ_IEN, 1);
    b.host.put(ControllerBench::kAsq + 64, cq);
    Sqe sq = command(SOHU_ADMIN_OP_CREATE_SQ, 3);
    sq.set_u64(SOHU_ADMIN_CREATE_SQ_BASE_DW, ControllerBench::kIoSq);
    SET_FIELD(sq, SOHU_ADMIN_CREATE_SQ_QID, 1);
    SET_FIELD(sq, SOHU_ADMIN_CREATE_SQ_QSIZE, 3);
    SET_FIELD(sq, SOHU_ADMIN_CREATE_SQ_CQID, 1);
    b.host.put(ControllerBench::kAsq + 128, sq);
    b.write(SOHU_SQ_TAIL_DB(0), 4, 3);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    for (unsigned i = 0; i < 3; ++i) {
      const Cqe c = b.host.completion(ControllerBench::kAcq + 16 * i);
      EXPECT_EQ(c.cid, i + 1);
      EXPECT_EQ(c.status, 0u) << "admin command " << i + 1;
      EXPECT_TRUE(c.phase);
    }
    EXPECT_EQ(b.host.completion(ControllerBench::kAcq).result, 7u);
    EXPECT_EQ(b.device.msix, (std::vector<unsigned>{0, 0, 0}));

    // I/O: start, execute, completion entry, interrupt on the CQ's vector, completed.
    b.backend.log.clear();
    b.device.msix.clear();
    b.host.put(ControllerBench::kIoSq, command(SOHU_IO_OP_NOP, 9));
    b.write(SOHU_SQ_TAIL_DB(1), 4, 1);
    sc_core::wait(sc_core::sc_time::from_value(b.params.command_latency_ps + RecordingBackend::kIoPs - 1));
    EXPECT_TRUE(b.device.msix.empty()) << "the backend's command is still running";
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_NS));
    EXPECT_EQ(b.backend.log,
              (std::vector<std::string>{"start q1 cid 9", "io q1 cid 9", "completed q1 cid 9 status 0"}));
    const Cqe c = b.host.completion(ControllerBench::kIoCq);
    EXPECT_EQ(c.cid, 9u);
    EXPECT_EQ(c.sq_id, 1u);
    EXPECT_EQ(c.result, 0x1000u + SOHU_IO_OP_NOP);
    EXPECT_EQ(b.device.msix, (std::vector<unsigned>{3}));
  });
}

SOHUSIM_SYSTEMC_TEST(FunctionController, CtrlWritesAskTheDevice) {
  ControllerBench b;
  run([&] {
    b.enable();
    b.write(SOHU_CTRL, 4, 0);
    EXPECT_EQ(b.device.disables, 1u);
    EXPECT_EQ(b.reg(SOHU_STATUS) & SOHU_STATUS_RDY_MASK, 0u);
    b.write(SOHU_CTRL, 4, SOHU_CTRL_RST_MASK);
    EXPECT_EQ(b.device.resets, (std::vector<std::string>{"CTRL.RST"}));
    // The device answers a reset by resetting the function: identity filled again.
    b.ctl.reset();
    EXPECT_EQ(b.device.identity_fills, 2u);
    EXPECT_EQ(b.reg(SOHU_HBM_SIZE), 1ULL << 30);
    // A doorbell while disabled is logged; the error interrupt waits for an enabled device.
    b.write(SOHU_SQ_TAIL_DB(0), 4, 1);
    EXPECT_EQ(b.ctl.error_log().size(), 1u);
    EXPECT_TRUE(b.device.msix.empty());
  });
}

}  // namespace
}  // namespace sohusim::device::test
