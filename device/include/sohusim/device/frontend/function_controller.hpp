#pragma once
// FunctionController: the part of the register interface that every PCI function of the
// device has for itself — the PF and each SR-IOV virtual function alike, so that one driver
// programs either (docs/device.md, docs/registers.md). Per function:
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
// PMU, the trace unit, the power state, the device MMU, device-level admin commands. The
// controller reaches it through two interfaces: FunctionDevice (function_device.hpp: MSI-X
// delivery, reset, identity registers) and CommandBackend (command_backend.hpp: what its
// command processor does not run itself). The controller is its command processor's
// FunctionSignals (function_signals.hpp). On the PF the device-wide registers get their
// hooks from the device; a VF's controller is built with `pf_only_pages` set, and there the
// PMU and TRACE pages and POWER_STATE read 0 and a write is logged as INVALID_FIELD (they
// belong to the PF).
//
// Stats under the function's scope (the device's prefix for the PF, `<dev>.vf<i>` for a VF):
// errors, errors_dropped, msix_raised, resets, and the command processor's `cp.*`.
#include <cstdint>
#include <memory>
#include <string>

#include <tlm>

#include "sohusim/counters/registry.hpp"
#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/device/device_params.hpp"
#include "sohusim/device/frontend/command_backend.hpp"
#include "sohusim/device/frontend/command_processor.hpp"
#include "sohusim/device/frontend/error_log.hpp"
#include "sohusim/device/frontend/function_device.hpp"
#include "sohusim/device/frontend/function_signals.hpp"
#include "sohusim/device/frontend/register_map.hpp"
#include "sohusim/device/units/memory_port.hpp"
#include "sohusim/device/units/timestamp_counter.hpp"

namespace sohusim::device {

class FunctionController : private FunctionSignals {
 public:
  /// `params` must outlive the controller (the command processor keeps a reference), and so
  /// must `device` (its interrupts, reset, identity) and `commands` (what the command
  /// processor passes on); `label` names the function in error messages ("VF 2").
  FunctionController(const DeviceParams& params, std::string label, bool pf_only_pages, MemoryPort& host,
                     const TimestampCounter& clock, FunctionDevice& device, CommandBackend& commands,
                     const counters::Scope& scope, counters::TraceRecorder* trace, counters::TrackId track);

  /// A software access to this function's BAR0 (offset, 4 or 8 bytes). No wait().
  void bar0_access(tlm::tlm_generic_payload& gp);
  /// Logs an error and raises the function's error interrupt where enabled.
  void report_error(ErrorEntry e) override;
  /// Raises `vector` (held while masked in INT_MASK).
  void raise_vector(unsigned vector) override;
  /// Back to the reset state: queues abandoned, error log and registers reset.
  void reset();

  RegisterFile& registers() { return regs_; }
  const ErrorLog& error_log() const { return errlog_; }
  CommandProcessor& command_processor() { return *cp_; }
  const std::string& label() const { return label_; }

 private:
  void set_ready(bool ready) override;
  void install_hooks();
  void update_error_registers();
  static bool pf_only(std::uint32_t offset);
  std::uint64_t now_ps() const;

  std::string label_;
  bool pf_only_pages_;
  const TimestampCounter& clock_;
  FunctionDevice& device_;
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
