#pragma once
// FunctionSignals: how a command processor (command_processor.hpp) signals the PCI function
// it serves — an interrupt vector to raise, an error to log, the device ready or not. The
// function's controller (function_controller.hpp) implements it: INT_MASK, the error log
// and error interrupt, STATUS.RDY live in the function's registers.
//
// No wait(): the processor calls these from register handlers as well as from its threads.
#include "sohusim/device/frontend/error_log.hpp"

namespace sohusim::device {

class FunctionSignals {
 public:
  virtual ~FunctionSignals() = default;
  /// Raises MSI-X `vector` of the function (a completion queue's, coalesced by the caller).
  virtual void raise_vector(unsigned vector) = 0;
  /// Logs an error and raises the function's error interrupt where enabled.
  virtual void report_error(ErrorEntry e) = 0;
  /// The queues have started (after enable_latency) or have been abandoned: STATUS.RDY.
  virtual void set_ready(bool ready) = 0;
};

}  // namespace sohusim::device
