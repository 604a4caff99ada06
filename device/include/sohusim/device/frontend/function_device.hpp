#pragma once
// FunctionDevice: what a PCI function's controller (function_controller.hpp) needs from the
// device it is part of — the PCIe side of its interrupts, the reset its CTRL.RST asks for,
// the identity its registers show. The commands its queues carry go to a CommandBackend
// (command_backend.hpp) instead.
//
// The device implements it for the PF; a VF's own adapter (sohu_device.hpp) for each VF.
// No wait(): every call comes from a register write or from a command processor's thread
// that must not be held up.
#include "sohusim/device/frontend/register_map.hpp"

namespace sohusim::device {

class FunctionDevice {
 public:
  virtual ~FunctionDevice() = default;
  /// Sends MSI-X `vector` of this function (already unmasked in INT_MASK); false if the
  /// function has nowhere to send it (no endpoint attached).
  virtual bool send_msix(unsigned vector) = 0;
  /// CTRL.RST was written: the PF's resets the whole device, a VF's the VF.
  virtual void request_reset(const char* why) = 0;
  /// CTRL.EN went 1 -> 0 and the function's queues have been abandoned.
  virtual void function_disabled() = 0;
  /// Writes the identity registers (ID, CAP0, HBM_SIZE, ...): after construction and
  /// after every reset of the function.
  virtual void fill_identity(RegisterFile& regs) = 0;
};

}  // namespace sohusim::device
