#pragma once
// FunctionController: the part of the register interface that every PCI function of the
// device has for itself — the PF and each SR-IOV virtual function alike, so that one driver
// programs either (DESIGN.md section 5). Per function:
//
//   - a BAR0 register file with the whole register map (register_map.hpp): identity,
//     CTRL/STATUS (enable, reset, shutdown), the admin queue registers, INT_MASK and the
//     coalescing defaults, TIMESTAMP, the error-log page, the doorbell pages;
//   - its own error log (the ERRLOG page) and error interrupt;
//   - its own command processor (command_processor.hpp): admin queue, I/O queues, fetch and
//     completion DMA through the function's host port (so a VF's DMA carries the VF's
//     requester ID), MSI-X on the function's own vectors;
//   - the interrupt mask (vectors raised while masked are delivered when unmasked).
//
// What is device-wide stays with the device (sohu_device.hpp): the engines and memories, the
// PMU, the trace unit, the power state, the device MMU, device-level admin commands. On the
// PF those registers get their hooks from the device; a VF's controller is built with
// `pf_only_pages` set, and there the PMU and TRACE pages and POWER_STATE read 0 and a write
// is logged as INVALID_FIELD (they belong to the PF).
//
// Stats under the function's scope (the device's prefix for the PF, `<dev>.vf<i>` for a VF):
// errors, errors_dropped, msix_raised, resets, and the command processor's `cp.*`.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <tlm>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/device/frontend/command.hpp"
#include "sohusim/device/frontend/command_processor.hpp"
#include "sohusim/device/device_params.hpp"
#include "sohusim/device/frontend/error_log.hpp"
#include "sohusim/device/units/memory_port.hpp"
#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"

namespace sohusim::device {

class FunctionController {
 public:
  struct Hooks {
    /// Runs an I/O command for this function (its host port, its context).
    std::function<Outcome(const Sqe&, std::uint16_t qid)> execute_io;
    /// Admin commands the device answers (IDENTIFY, PMU_CONFIG, ..., VF_CONTEXT).
    std::function<Outcome(const Sqe&)> execute_admin_device;
    /// Command start/end (trace unit, PMU overflow poll); optional.
    std::function<void(const Sqe&, std::uint16_t qid, bool start, std::uint16_t status)> command_event;
    /// Sends MSI-X `vector` of this function (unmasked in INT_MASK); false if the function
    /// has nowhere to send it (no endpoint attached). No wait(): a register write may raise.
    std::function<bool(unsigned vector)> send_msix;
    /// CTRL.RST: the reset this function's write asks for (the PF resets the device).
    std::function<void(const char* why)> reset;
    /// CTRL.EN 1->0 after the queues were abandoned; optional.
    std::function<void()> disabled;
    /// Identity registers after construction and every reset (CAP0, HBM_SIZE, ...).
    std::function<void(RegisterFile&)> fill_identity;
    /// GET_FEATURES POWER_STATE; optional.
    std::function<std::uint32_t()> power_state;
  };

  /// `params` must outlive the controller (the command processor keeps a reference);
  /// `label` names the function in error messages ("VF 2").
  FunctionController(const DeviceParams& params, std::string label, bool pf_only_pages, MemoryPort& host,
                     const TimestampCounter& clock, Hooks hooks, const counters::Scope& scope,
                     counters::TraceRecorder* trace, counters::TrackId track);

  /// A software access to this function's BAR0 (offset, 4 or 8 bytes). No wait().
  void bar0_access(tlm::tlm_generic_payload& gp);
  /// Logs an error and raises the function's error interrupt where enabled.
  void report_error(ErrorEntry e);
  /// Raises `vector` (held while masked in INT_MASK).
  void raise_vector(unsigned vector);
  /// Back to the reset state: queues abandoned, error log and registers reset.
  void reset();

  RegisterFile& registers() { return regs_; }
  const ErrorLog& error_log() const { return errlog_; }
  CommandProcessor& command_processor() { return *cp_; }
  const std::string& label() const { return label_; }

 private:
  void install_hooks();
  void update_error_registers();
  static bool pf_only(std::uint32_t offset);
  std::uint64_t now_ps() const;

  std::string label_;
  bool pf_only_pages_;
  const TimestampCounter& clock_;
  Hooks hooks_;
  RegisterFile regs_;
  ErrorLog errlog_;
  std::unique_ptr<CommandProcessor> cp_;
  std::uint32_t masked_pending_ = 0;  // vectors < 32 raised while INT_MASK had them masked
  counters::Counter& errors_;
  counters::Counter& errors_dropped_;
  counters::Counter& msix_raised_;
  counters::Counter& resets_;
};

}  // namespace sohusim::device
