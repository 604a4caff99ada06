#pragma once
// CommandBackend: what a command processor (command_processor.hpp) hands to the device it
// belongs to. The processor manages its queues itself (fetch, queue admin commands,
// features, completions, interrupts); everything that needs the device's units it passes
// here: I/O commands, the device-level admin commands, the power state, and the start and
// completion of every command (for the trace unit and the PMU).
//
// Every PCI function has one: the device is the PF's, a VF's own adapter adds the VF's
// host port, device-MMU context and limits (sohu_device.hpp). Calls come from the thread of
// the queue the command came from and may wait() for the command's duration.
#include <cstdint>

#include "sohusim/device/frontend/command.hpp"

namespace sohusim::device {

class CommandBackend {
 public:
  virtual ~CommandBackend() = default;
  /// Runs an I/O command of queue `qid` (>= 1) to its end; the outcome goes in its completion.
  virtual Outcome execute_io(const Sqe& sqe, std::uint16_t qid) = 0;
  /// Runs an admin command the device answers, not the queues: IDENTIFY, PMU_CONFIG,
  /// TRACE_CONFIG, FW_STATUS, SET_CONTEXT, VF_CONTEXT, and SET_FEATURES POWER_STATE.
  virtual Outcome execute_admin(const Sqe& sqe) = 0;
  /// The power state GET_FEATURES POWER_STATE reports (POWER_STATE.PS).
  virtual std::uint32_t power_state() = 0;
  /// A command of queue `qid` starts executing (after fetch and decode latency).
  virtual void command_started(const Sqe& sqe, std::uint16_t qid) = 0;
  /// A command's completion entry, with `status`, has been written to host memory.
  virtual void command_completed(const Sqe& sqe, std::uint16_t qid, std::uint16_t status) = 0;
};

}  // namespace sohusim::device
