#include "scheduler/read_write_mode.hpp"

namespace sohusim::memory {

bool ReadWriteMode::wants_writing(const ControllerState& state, Cycle t) const {
  const std::size_t rq = state.reads.size();
  const std::size_t wq = state.writes.size();
  const bool starving = rq > 0 && t >= state.reads.at(0).request.arrival + read_starvation_;
  if (!state.writing) return wq > 0 && !starving && (wq >= write_high_ || rq == 0);
  return !(wq == 0 || starving || (rq > 0 && wq <= write_low_));
}

Cycle ReadWriteMode::next_switch(const ControllerState& state, Cycle t) const {
  if (!state.writing || state.reads.empty()) return kNever;
  const Cycle starve = state.reads.at(0).request.arrival + read_starvation_;
  return starve > t ? starve : kNever;
}

}  // namespace sohusim::memory
