#pragma once
// Device: the driver of one Sohu-class PCI function (a PF, or a VF once SR-IOV is enabled),
// written against DeviceAccess only. It does what a kernel or user-space (VFIO) driver of
// an NVMe-style device does, in the same order:
//
//   probe()     read IDs (vendor 0x1E5C, device 0x5001), check the register-interface major
//               version, size the BARs through config space (save, write all ones, read the
//               mask, restore), walk the capability list (PM, PCIe, MSI-X, AER, SR-IOV),
//               enable memory space + bus mastering, route MSI-X vectors, read CAP0/CAP1/
//               HBM_SIZE/SRAM_SIZE/CLOCK_MHZ.
//               On a VF (the function list says virtual_function): the IDs come from the
//               list (a VF's header reads 0xFFFF; device 0x5002 expected), BAR0 from
//               DeviceAccess::bar() (a VF's header BARs cannot be sized), no BAR2; the rest
//               is the same, against the VF's own BAR0 (same register layout as the PF's).
//   enable()    admin SQ/CQ in DMA memory, AQA/ASQ/ACQ, CTRL.EN, wait for STATUS.RDY.
//   create_queue() / delete_queue()   CREATE_CQ + CREATE_SQ / DELETE_SQ + DELETE_CQ.
//   submit()    write entries at the SQ tail in host memory, one doorbell per batch.
//   wait()      interrupt-driven (wait on the CQ's vector, then reap by phase bit) or
//               polling (read the CQ in host memory every poll interval); ring the CQ head
//               doorbell after reaping. A completion with an error status becomes a
//               CommandError naming the command (and the device's error-log entry).
//   reset()     CTRL.RST, wait for RDY to drop, enable again and re-create the I/O queues
//               (commands in flight complete with ABORTED_RESET; the caller resubmits).
//
// Every step costs host time from HostCosts; MMIO reads stall for the PCIe round trip.
// Errors: ProbeError (wrong IDs, version, BAR sizes, no MSI-X), TimeoutError and FatalError
// (RDY, SHST or a completion not in time; STATUS.CFS), CommandError (an error completion),
// std::invalid_argument for a bad argument (unknown queue id, sizes out of range) and a
// DriverError for calls out of order (enable before probe, submit before enable) or that a
// VF cannot serve (PMU, trace unit, SR-IOV: the PF's).
// Not thread-safe: one host thread drives a Device. docs/driver.md has the whole story.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sohusim/counters/trace_types.hpp"
#include "sohusim/driver/command.hpp"
#include "sohusim/driver/device_access.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/driver/host_costs.hpp"

namespace sohusim::counters {
class TraceRecorder;
}

namespace sohusim::driver {

/// What probe() learned.
struct DeviceInfo {
  std::uint16_t rid = 0;
  std::string name;
  std::uint16_t vendor_id = 0, device_id = 0;
  unsigned version_major = 0, version_minor = 0, version_patch = 0;
  bool virtual_function = false;   // an SR-IOV VF (DeviceAccess's function list says so)
  std::uint16_t physical_rid = 0;  // a VF's PF; a PF's own rid
  BarInfo bar0, bar2;              // bar2 empty on a VF (no device-memory aperture)
  unsigned max_queues = 0;         // CAP0.MQP
  unsigned max_queue_entries = 0;  // CAP0.MQES + 1
  unsigned doorbell_stride = 0;    // bytes (1 << CAP0.DSTRD)
  unsigned matrix_engines = 0, vector_engines = 0, dma_channels = 0, c2c_ports = 0;
  std::uint64_t hbm_bytes = 0, sram_bytes = 0;
  unsigned clock_mhz = 0;
  std::vector<std::uint8_t> capabilities;       // capability IDs in list order (0x01 PM, 0x10 PCIe, 0x11 MSI-X)
  std::vector<std::uint16_t> ext_capabilities;  // extended IDs (0x0001 AER, 0x0010 SR-IOV)
  unsigned msix_vectors = 0;
  unsigned sriov_total_vfs = 0;  // 0: no SR-IOV capability
};

enum class CompletionMode { Interrupt, Polling };

/// One completion entry as the driver reaped it.
struct Completion {
  std::uint64_t result = 0;
  std::uint16_t sq_head = 0, sq_id = 0, cid = 0, status = 0;
};

/// Where a submitted command can be waited on.
struct Ticket {
  std::uint16_t qid = 0, cid = 0;
};

class Device {
 public:
  Device(DeviceAccess& access, std::uint16_t rid, const HostCosts& costs = {});

  /// Routes min(msix_vectors, the MSI-X table size) vectors. Times are host ns.
  const DeviceInfo& probe(unsigned msix_vectors = 64);
  /// Disables the controller first if it was left enabled (a previous driver instance).
  void enable(unsigned admin_entries = 64, std::uint64_t timeout_ns = 10'000'000);
  /// Soft reset and recovery (queues re-created with the same ids, sizes and modes). Commands
  /// in flight get an ABORTED_RESET completion from the driver (the device posts nothing for
  /// them); device semaphores, the PMU and the trace unit are back at their reset state.
  void reset(std::uint64_t timeout_ns = 10'000'000);
  /// Normal shutdown notification; waits for SHST = COMPLETE.
  void shutdown(std::uint64_t timeout_ns = 10'000'000);

  /// Creates an I/O queue pair with the lowest free id and returns the id. Interrupt mode:
  /// the CQ gets vector 1 + (qid - 1) mod (vectors - 1), so queues share vectors only when
  /// there are more queues than vectors (safe: waits reap before and after blocking).
  /// Polling mode: the CQ is created with interrupts disabled.
  std::uint16_t create_queue(unsigned entries = 1024, CompletionMode mode = CompletionMode::Interrupt);
  void delete_queue(std::uint16_t qid);

  /// Synchronous admin command (interrupt-driven on vector 0, 1 s simulated timeout);
  /// throws CommandError on an error status.
  Completion admin(Command cmd);

  /// Places the commands on SQ `qid` (each gets a CID and `correlation`) and rings the
  /// doorbell once per batch; waits (reaping) while the queue is full. Returns one ticket
  /// per command.
  std::vector<Ticket> submit(std::uint16_t qid, const std::vector<Command>& cmds, std::uint64_t correlation = 0);
  Ticket submit(std::uint16_t qid, Command cmd, std::uint64_t correlation = 0);
  /// Blocks until the ticket's command completed; throws CommandError on an error status.
  /// A ticket whose completion was already retired (by drain(), or trimmed after thousands
  /// of un-waited successes) returns at once with status 0 and result 0: only successes are
  /// retired unseen. timeout_ns 0 = no limit; otherwise TimeoutError naming queue and cid.
  /// A command submitted with NO_COMPLETION_IRQ is waited for by polling, unless one that
  /// raises an interrupt is in flight on the queue (it completes after it: the queue is in order).
  Completion wait(const Ticket& t, std::uint64_t timeout_ns = 0);
  /// Blocks until every command submitted to `qid` completed and retires all its reaped
  /// completions; throws the first error (in completion order), saying how many more failed.
  void drain(std::uint16_t qid, std::uint64_t timeout_ns = 0);
  /// Reaps whatever completions are posted on `qid` without blocking; returns how many.
  unsigned poll(std::uint16_t qid);
  /// Commands submitted to `qid` and not yet reaped.
  unsigned outstanding(std::uint16_t qid) const;

  // ---- trace (optional) ----
  /// Records a `reap` slice on `track` (a host's driver track) whenever completions are
  /// reaped, with the flows of the correlation ids they complete (docs/trace.md);
  /// `summary`: only reaps that complete the last command of a correlation id (polling a long
  /// program reaps one completion at a time). nullptr: nothing recorded (the default).
  void set_trace(counters::TraceRecorder* trace, counters::TrackId track, bool summary = false);
  /// Correlation ids whose every submitted command has been reaped since the last call
  /// (traced devices only): the caller ends their flows where its call returns.
  std::vector<std::uint64_t> take_finished_flows();

  // ---- registers (BAR0 offsets from sohu_regs.h) ----
  std::uint32_t read32(std::uint32_t offset);
  std::uint64_t read64(std::uint32_t offset);
  void write32(std::uint32_t offset, std::uint32_t value);
  void write64(std::uint32_t offset, std::uint64_t value);

  // ---- PMU and trace unit (admin PMU_CONFIG / TRACE_CONFIG and the PMU registers) ----
  // The PF's only: on a VF each of these throws a DriverError naming the VF and its PF.
  /// PMU_CONFIG: counter (0..7) counts `event` (SOHU_PMU_EVT_*); the PMU enable is kept.
  void pmu_configure(unsigned counter, unsigned event);
  /// PMU_CTRL.EN (and PMU_CTRL.RESET): a register write, no admin command.
  void pmu_enable(bool on, bool reset_counters = false);
  std::uint64_t pmu_counter(unsigned counter);
  std::uint64_t pmu_cycles();
  /// Allocates a host ring of `ring_bytes` (power of two >= 4096) and enables the classes
  /// in `mask`. Returns the ring's IOVA.
  std::uint64_t trace_configure(std::uint64_t ring_bytes, unsigned mask);

  // ---- Device-MMU contexts (admin SET_CONTEXT / VF_CONTEXT; the PF's only) ----
  /// Installs device-MMU context `context` (1..contexts-1) from `entries` (page-table
  /// entries, docs/registers.md "Device MMU": bit 0 valid, bit 1 writable, the physical page
  /// address above): the table goes to the device through a host buffer it reads once.
  /// Empty `entries` invalidates the context.
  void set_context(std::uint16_t context, const std::vector<std::uint64_t>& entries);
  /// VF_CONTEXT: VF `vf` (0-based) runs every command in `context` (0: none, its device-memory
  /// operands fault). What keeps a VF in its part of device memory.
  void assign_vf_context(unsigned vf, std::uint16_t context);

  // ---- SR-IOV (config-space SR-IOV capability of a PF) ----
  /// Sets NumVFs, then VF Enable and VF MSE (disabling VFs first if they were on); returns
  /// the VFs' requester ids (PF RID + First VF Offset + i x VF Stride). 0 disables the VFs.
  /// A VF is then driven by a Device of its own on its rid (probe, enable, queues; its BAR0
  /// window is placed by the platform). DriverError on a VF (it has no SR-IOV capability).
  std::vector<std::uint16_t> sriov_enable(unsigned num_vfs);

  /// Device time in ns (TIMESTAMP register, 64-bit latched read).
  std::uint64_t device_time_ns();

  /// Soft resets done through reset() (the runtime uses it to know that device semaphores
  /// went back to 0).
  std::uint64_t reset_count() const { return resets_; }

  const DeviceInfo& info() const { return info_; }
  DeviceAccess& access() { return access_; }
  const HostCosts& costs() const { return costs_; }

 private:
  /// A completion reaped from the CQ that no one has waited for yet, with the command it
  /// completes and, for an error, the message (error-log entry included) built at reap time.
  struct Reaped {
    Completion completion;
    Command command;
    std::string message;
  };
  struct Queue {
    std::uint16_t qid = 0;
    unsigned entries = 0;
    DmaBuffer sq, cq;
    std::uint32_t sq_tail = 0;  // next slot the driver writes
    std::uint32_t sq_head = 0;  // the device's fetch position, as the last CQE reported it
    std::uint32_t sq_rung = 0;  // tail value last written to the doorbell
    std::uint32_t cq_head = 0;
    bool phase = true;
    CompletionMode mode = CompletionMode::Interrupt;
    unsigned vector = 0;
    std::uint16_t next_cid = 1;                  // CID 0 is never used: ERR_INFO reports 0 for "no command"
    unsigned no_irq_in_flight = 0;               // in-flight commands with NO_COMPLETION_IRQ
    std::map<std::uint16_t, Command> in_flight;  // cid -> command (for error messages)
    std::map<std::uint16_t, Reaped> done;        // reaped, not yet waited on
    std::deque<std::uint16_t> done_order;        // cids of `done` in reap order
  };
  /// One ERRLOG entry as the registers show it.
  struct ErrLogEntry {
    std::uint16_t status = 0, qid = 0, cid = 0;
    std::uint64_t address = 0;
  };
  Queue& queue(std::uint16_t qid, const char* call);
  const Queue& queue(std::uint16_t qid, const char* call) const;
  void require_enabled(const char* call) const;
  /// DriverError naming `call` on a VF: `unit` ("the PMU") is the PF's only.
  void require_physical(const char* call, const char* unit) const;
  void setup_queue_memory(Queue& q);
  void reset_ring(Queue& q);
  void create_on_device(Queue& q);
  std::uint16_t allocate_cid(Queue& q);
  void ring_sq_doorbell(Queue& q);
  unsigned reap(Queue& q);
  /// Trace bookkeeping of one reaped command: its flow joins `flows`; its correlation id
  /// is finished when it was the last command of it in flight.
  void note_reaped(std::uint64_t correlation, std::vector<counters::Flow>& flows);
  void trim_done(Queue& q);
  /// Waits once for something to reap (an interrupt, or one poll interval); throws
  /// TimeoutError past `deadline_ns` (0: none), naming `what`.
  void block_for_completion(Queue& q, std::uint64_t deadline_ns, const std::string& what);
  void wait_status(std::uint32_t mask, std::uint32_t value, std::uint64_t timeout_ns, const char* what);
  std::string describe_failure(const Queue& q, const Command& cmd, const Completion& c);
  std::optional<ErrLogEntry> find_error_log(std::uint16_t qid, std::uint16_t cid);
  [[noreturn]] void fail(const Queue& q, const Reaped& r) const;
  DmaBuffer take_dma(std::uint64_t bytes, std::uint64_t align);
  std::uint32_t sq_doorbell(std::uint16_t qid) const;  // BAR0 offsets, from CAP0.DSTRD
  std::uint32_t cq_doorbell(std::uint16_t qid) const;
  std::string label() const;
  std::uint64_t bar0() const { return info_.bar0.address; }

  DeviceAccess& access_;
  std::uint16_t rid_;
  HostCosts costs_;
  DeviceInfo info_;
  bool probed_ = false, enabled_ = false;
  unsigned admin_entries_ = 0;
  std::uint16_t msix_cap_ = 0, sriov_cap_ = 0;  // config-space offsets, 0 = absent
  bool pmu_enabled_ = false;
  std::uint64_t resets_ = 0;
  Queue admin_;
  std::map<std::uint16_t, Queue> io_;
  std::deque<ErrLogEntry> errlog_seen_;                // popped while looking for another entry
  std::multimap<std::uint64_t, DmaBuffer> spare_dma_;  // by size: memory of deleted queues, old rings
  DmaBuffer trace_ring_;
  counters::TraceRecorder* trace_ = nullptr;
  counters::TrackId trace_track_ = 0;
  bool trace_summary_ = false;
  std::map<std::uint64_t, unsigned> open_flows_;  // correlation -> commands submitted, not reaped
  std::vector<std::uint64_t> finished_flows_;
};

}  // namespace sohusim::driver
