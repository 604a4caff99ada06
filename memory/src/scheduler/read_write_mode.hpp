#pragma once
// ReadWriteMode: which direction the controller of a pseudo-channel serves. It serves one
// queue at a time, switching to writes when the write queue reaches write_high, or when no
// read waits and a write does; back to reads when the write queue falls to write_low (and a
// read waits), when it empties, or when the oldest read has waited read_starvation cycles.
//
// Use (DramController): update() before and after each step's commands; next_switch() is
// the cycle the starvation rule will switch back to reads, a cycle to wake at.
#include <cstdint>

#include "sohusim/memory/controller_params.hpp"
#include "sohusim/memory/controller_state.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

class ReadWriteMode {
 public:
  explicit ReadWriteMode(const ControllerParams& params)
      : write_high_(params.write_high), write_low_(params.write_low), read_starvation_(params.read_starvation) {}

  /// The direction `state` should serve at t: true for writes.
  bool wants_writing(const ControllerState& state, Cycle t) const;
  void update(ControllerState& state, Cycle t) const { state.writing = wants_writing(state, t); }
  /// While writes are served and a read waits: when that read starves (if after t); else kNever.
  Cycle next_switch(const ControllerState& state, Cycle t) const;

 private:
  std::uint32_t write_high_;
  std::uint32_t write_low_;
  std::uint32_t read_starvation_;  // cycles
};

}  // namespace sohusim::memory
