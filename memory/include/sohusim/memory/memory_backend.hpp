#pragma once
// MemoryBackend: the request-level face of a DRAM model, shared by the detailed
// (command-level) and fast (transfer-level) fidelities so that everything above
// them — the TLM-2.0 target, `sohusim mem`, the device's DMA engines — is written
// once and the fidelity is a configuration choice.
//
// Plain C++ (no SystemC): time is counted in the memory's own clock cycles (tCK).
// The owner advances the model to a cycle; the model reports completed requests
// through a callback and tells when it next has something to do, so an
// event-driven owner sleeps until then instead of ticking every cycle.
//
// Requests are single accesses of `access_bytes()` (32 B for HBM3: BL8 x 32 DQ)
// at an aligned address; splitting larger or unaligned transfers into accesses
// is the owner's job (the TLM target does it).

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

namespace sohusim::memory {

using Cycle = std::uint64_t;
inline constexpr Cycle kNever = std::numeric_limits<Cycle>::max();

struct MemRequest {
  std::uint64_t addr = 0;  // byte address within the memory, aligned to access_bytes()
  bool write = false;
  std::uint64_t id = 0;  // owner's tag, returned on completion
  Cycle arrival = 0;     // cycle it entered the model (set by enqueue)
};

class MemoryBackend {
 public:
  using Completion = std::function<void(const MemRequest& request, Cycle done)>;

  virtual ~MemoryBackend() = default;

  // Geometry and speed.
  virtual std::uint64_t capacity_bytes() const = 0;
  virtual std::uint32_t access_bytes() const = 0;
  virtual double clock_hz() const = 0;               // 1 / tCK
  virtual double peak_bytes_per_second() const = 0;  // all channels, data bus only

  // Whether a request to `addr` would find room in its queue now (back-pressure).
  virtual bool can_accept(std::uint64_t addr, bool write) const = 0;
  // Adds a request at the current cycle; precondition: can_accept(). Throws
  // std::out_of_range (naming the address and the capacity) for an address
  // outside the memory, std::invalid_argument for a misaligned one.
  virtual void enqueue(MemRequest request) = 0;
  // Runs the model up to and including `cycle` (never backwards), calling the
  // completion callback for every request whose data transfer has finished by
  // then, in completion order. Cheap when idle: due refreshes are accounted in
  // bulk, not simulated cycle by cycle.
  virtual void advance_to(Cycle cycle) = 0;
  virtual Cycle now() const = 0;
  // The next cycle at which the model has something to do for the requests it
  // holds (issue a command, finish a transfer); kNever when it holds none.
  // Refresh alone never keeps an owner awake.
  virtual Cycle next_event() const = 0;
  virtual std::size_t pending() const = 0;  // requests accepted, not completed

  void set_completion(Completion c) { completion_ = std::move(c); }

 protected:
  void complete(const MemRequest& r, Cycle done) {
    if (completion_) completion_(r, done);
  }

 private:
  Completion completion_;
};

}  // namespace sohusim::memory
