#pragma once
// FakeDevice: an in-process DeviceAccess with one Sohu physical function ("fake0"), for unit
// tests of driver::Device and driver::Runtime without SystemC. It models what the driver uses of
// the device's front end (docs/registers.md): config space (IDs, two 64-bit BARs that size like
// real ones, PM/PCIe/MSI-X/AER capabilities), BAR0 registers, admin and I/O queues in DMA memory
// with doorbells, completions with phase bits, the error log and MSI-X. Host time moves only in
// spend_ns/poll_ns/wait_interrupt; each queue runs its commands in order, command_ns each, and
// a command only creates/deletes queues or moves semaphores (no data moves). Use:
//   FakeDevice fake(options);  Device d(fake, fake.rid());  d.probe(); d.enable(); ...
// then fail commands with `on_command`, stop the controller with `hung`, and check what the
// driver did with writes()/doorbells(), executed() and sq()/cq()/cqe().
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "sohusim/driver/command.hpp"
#include "sohusim/driver/device_access.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::driver::test {

struct FakeDeviceOptions {
  std::uint16_t rid = 0x0100;                  // bus 1, device 0, function 0; named "fake0"
  std::uint32_t id = SOHU_ID_RESET;            // config dword 0 and BAR0 ID: device << 16 | vendor
  std::uint32_t version = SOHU_VERSION_RESET;  // BAR0 VERSION
  unsigned max_queues = 8;                     // CAP0.MQP (at most 63)
  unsigned max_queue_entries = 1024;           // CAP0.MQES + 1
  unsigned msix_vectors = 8;                   // MSI-X table size
  std::uint64_t hbm_bytes = 1ull << 30;        // HBM_SIZE; BAR2 is the power of two at or above it
  std::uint64_t dma_bytes = 64ull << 20;       // DMA memory alloc_dma can hand out
  std::uint64_t ready_ns = 1000;               // CTRL.EN 0 -> 1 until STATUS.RDY
  std::uint64_t command_ns = 1000;             // one command's run time; 0: it completes at its doorbell
  std::uint64_t watchdog_ns = 60'000'000'000;  // the clock never passes this: std::logic_error, not a hang
};

class FakeDevice : public DeviceAccess {
 public:
  using Options = FakeDeviceOptions;
  /// What on_command decides for a command: status 0 lets the fake run it; another status
  /// fails it, with an ERRLOG entry naming `address`.
  struct Outcome {
    std::uint16_t status = SOHU_STATUS_SUCCESS;
    std::uint64_t address = 0;
  };
  struct Write {  // one MMIO write into BAR0
    std::uint32_t offset = 0;
    std::uint64_t value = 0;
  };
  struct Executed {  // one command as it completed
    std::uint16_t qid = 0;
    Command cmd;
    std::uint16_t status = 0;
    std::uint64_t time_ns = 0;
  };
  struct Sq {
    std::uint64_t base = 0;
    unsigned entries = 0;
    std::uint16_t cqid = 0;
    std::uint32_t head = 0, tail = 0;
    std::uint64_t start = 0;  // when the entry at head starts (or started) to run
  };
  struct Cq {
    std::uint64_t base = 0;
    unsigned entries = 0;
    unsigned vector = 0;
    bool ien = false;
    std::uint32_t head = 0, tail = 0;
    bool phase = true;  // written into the next entry
    unsigned sq_refs = 0;
  };
  struct Cqe {  // a completion entry as it sits in host memory
    std::uint64_t result = 0;
    std::uint16_t sq_head = 0, sq_id = 0, cid = 0, status = 0;
    bool phase = false;
  };

  FakeDevice() : FakeDevice(Options{}) {}
  explicit FakeDevice(Options options);

  /// Called for every command as it completes (qid 0: admin), before the fake runs it.
  std::function<Outcome(std::uint16_t qid, const Command& cmd)> on_command;
  /// A hung controller runs nothing: no command completes and STATUS.RDY does not rise.
  bool hung = false;

  std::uint16_t rid() const { return opt_.rid; }
  const std::vector<Write>& writes() const { return writes_; }
  /// Values written to queue `qid`'s SQ tail (sq) or CQ head doorbell, in order.
  std::vector<std::uint32_t> doorbells(std::uint16_t qid, bool sq) const;
  const std::vector<Executed>& executed() const { return executed_; }
  /// A BAR0 register as the device holds it (no side effect).
  std::uint32_t reg(std::uint32_t offset) const;
  /// The device's view of a queue, nullptr if it does not exist.
  const Sq* sq(std::uint16_t qid) const;
  const Cq* cq(std::uint16_t qid) const;
  /// Completion entry `index` of CQ `qid` as it is in DMA memory.
  Cqe cqe(std::uint16_t qid, unsigned index);
  unsigned interrupts_raised(unsigned vector) const;  // MSI-X messages the device sent
  unsigned interrupt_waits() const { return interrupt_waits_; }
  std::uint64_t polled_ns() const { return polled_ns_; }
  std::size_t error_log_size() const { return errlog_.size(); }  // entries not acknowledged
  std::uint32_t semaphore(unsigned sem) const { return sem_.at(sem); }

  // ---- DeviceAccess ----
  std::vector<PciFunction> functions() override;
  std::uint32_t config_read32(std::uint16_t rid, std::uint16_t offset) override;
  void config_write32(std::uint16_t rid, std::uint16_t offset, std::uint32_t value) override;
  BarInfo bar(std::uint16_t rid, unsigned index) override;
  std::uint32_t mmio_read32(std::uint64_t address) override;
  std::uint64_t mmio_read64(std::uint64_t address) override;
  void mmio_write32(std::uint64_t address, std::uint32_t value) override;
  void mmio_write64(std::uint64_t address, std::uint64_t value) override;
  DmaBuffer alloc_dma(std::uint16_t rid, std::uint64_t bytes, std::uint64_t align = 4096) override;
  void host_write(std::uint64_t iova, const void* data, std::size_t bytes) override;
  void host_read(std::uint64_t iova, void* data, std::size_t bytes) override;
  void enable_msix(std::uint16_t rid, unsigned count) override;
  bool wait_interrupt(std::uint16_t rid, unsigned vector, std::uint64_t timeout_ns) override;
  std::uint64_t now_ns() override { return clock_; }
  void spend_ns(std::uint64_t ns) override { advance(ns); }
  void poll_ns(std::uint64_t ns) override;

 private:
  struct Bar {
    std::uint16_t reg = 0;  // config offset of its low dword (64-bit BARs: two dwords)
    std::uint64_t placed = 0, size = 0, address = 0;
    bool prefetchable = false;
  };
  struct ErrLogEntry {
    std::uint16_t status = 0, qid = 0, cid = 0;
    std::uint64_t address = 0;
  };
  void check_function(std::uint16_t rid, const char* call) const;
  std::uint32_t bar0_offset(std::uint64_t address, unsigned size, const char* call) const;
  void write_reg(std::uint32_t offset, std::uint32_t value);
  void write_ctrl(std::uint32_t value);
  void doorbell(std::uint32_t offset, std::uint32_t value);
  void disable();
  std::uint8_t* dma(std::uint64_t iova, std::size_t bytes, const char* what);
  Command fetch(const Sq& q, std::uint32_t index);
  bool runnable(std::uint16_t qid, const Sq& q);
  void hold_blocked(std::uint64_t t);
  std::uint16_t next_queue(std::uint64_t& finish);  // 0xFFFF: nothing can run
  void run_until(std::uint64_t t);
  void execute(std::uint16_t qid, std::uint64_t t);
  Outcome admin(const Command& c);
  Outcome io(const Command& c);
  void log_error(std::uint16_t status, std::uint16_t qid, std::uint16_t cid, std::uint64_t address);
  void raise(unsigned vector);
  void advance(std::uint64_t ns);
  void set_clock(std::uint64_t t);

  Options opt_;
  std::uint64_t clock_ = 0;
  std::uint32_t command_ = 0;  // config Command register
  Bar bars_[2];                // BAR0 (registers), BAR2 (device memory, not modelled)
  bool msix_enabled_ = false;
  unsigned msix_count_ = 0;                      // vectors the host routed
  std::vector<unsigned> pending_, raised_;       // per vector
  std::map<std::uint32_t, std::uint32_t> regs_;  // storage registers, by BAR0 offset
  bool enabled_ = false, ready_ = false, fatal_ = false, shutdown_ = false;
  std::uint64_t ready_at_ = 0;
  std::map<std::uint16_t, Sq> sqs_;
  std::map<std::uint16_t, Cq> cqs_;
  std::vector<std::uint32_t> sem_ = std::vector<std::uint32_t>(256, 0);
  std::deque<ErrLogEntry> errlog_;
  std::uint32_t errors_logged_ = 0;
  std::map<std::uint64_t, std::vector<std::uint8_t>> dma_;  // by IOVA
  std::uint64_t next_iova_;
  std::vector<Write> writes_;
  std::vector<Executed> executed_;
  unsigned interrupt_waits_ = 0;
  std::uint64_t polled_ns_ = 0;
};

}  // namespace sohusim::driver::test
