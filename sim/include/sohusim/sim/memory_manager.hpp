// sohusim/sim/memory_manager.hpp — a pool of reference-counted TLM generic payloads.
//
// Any initiator that uses the approximately-timed (nb_transport) base protocol must give
// its payloads a memory manager: the payload outlives the call that sent it, components
// along the path acquire() it while they hold it, and whoever drops the last reference
// returns it with release(). MemoryManager is that manager for sohusim. It recycles
// payloads through a free list, so a steady stream of transactions allocates nothing
// after warm-up, and it can own each payload's data buffer, so an initiator does not have
// to keep a buffer alive for as long as some downstream component might look at it.
//
// Life of a payload:
//   tlm::tlm_generic_payload& gp = mm.acquire(64);  // reference count 1: the caller's
//   ... fill in command/address, gp.data_ptr() points at 64 pool-owned bytes ...
//   socket->nb_transport_fw(gp, phase, delay);       // holders call gp.acquire()/release()
//   gp.release();                                    // the caller's reference
// When the count reaches 0, tlm_generic_payload::release() calls free() below, which
// strips the payload and puts it back on the free list.
//
// What a recycled payload looks like: like a new one. free() frees *all* extensions,
// including sticky ones set with set_extension(), and acquire() resets every attribute.
// Keeping sticky extensions for reuse would save an allocation per transaction, but a
// stale correlation id (correlation_extension.hpp) silently attached to an unrelated
// request is a much worse bug than a small allocation. The TLM rule that follows: an
// extension attached to a pooled payload must be heap-allocated and owned by the payload.
//
// Shutdown: when simulation stops, transactions may still be in flight (held in a PEQ,
// say), and SystemC destroys modules in an order this class does not control. If the
// manager is destroyed while payloads are still referenced, those payloads are handed to a
// small heap object that deletes each of them at its final release() and then itself, so
// late releases are safe and nothing leaks unless a holder never releases at all (which
// is a bug that a leak checker should and will report). Free payloads are deleted at once.
//
// Not thread-safe, like the SystemC kernel it serves: use one manager per kernel thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <tlm>

namespace sohusim::sim {

class MemoryManager final : public tlm::tlm_mm_interface {
 public:
  MemoryManager() = default;
  ~MemoryManager() override;
  MemoryManager(const MemoryManager&) = delete;
  MemoryManager& operator=(const MemoryManager&) = delete;
  MemoryManager(MemoryManager&&) = delete;
  MemoryManager& operator=(MemoryManager&&) = delete;

  /// A clean payload with reference count 1, held by the caller, which must release() it
  /// once. Command TLM_IGNORE_COMMAND, address 0, no data, no byte enables, streaming
  /// width 0, response TLM_INCOMPLETE_RESPONSE, DMI hint false, no extensions.
  tlm::tlm_generic_payload& acquire();

  /// As acquire(), with a zeroed data buffer of `data_bytes` owned by the pool: data_ptr()
  /// points at it and data_length and streaming_width are `data_bytes`. The buffer lives as
  /// long as the payload is referenced; its storage is reused by later acquisitions.
  /// Zeroed so that a payload never exposes the previous transaction's bytes (initiators
  /// that only model timing should use acquire() and move no data at all).
  tlm::tlm_generic_payload& acquire(std::size_t data_bytes);

  /// Called by tlm_generic_payload::release() when the count reaches 0; not for direct use.
  /// Throws std::invalid_argument for a payload this manager did not hand out and
  /// std::logic_error for one that is already back in the pool.
  void free(tlm::tlm_generic_payload* gp) override;

  /// Payload objects ever created: grows only when the free list is empty.
  std::size_t payloads_created() const noexcept { return all_.size(); }
  /// Payloads handed out and not yet returned.
  std::size_t in_use() const noexcept { return all_.size() - free_list_.size(); }
  /// Payloads waiting on the free list.
  std::size_t pooled() const noexcept { return free_list_.size(); }
  /// Calls of acquire(), ever.
  std::uint64_t acquisitions() const noexcept { return acquisitions_; }
  /// Payloads returned through free(), ever.
  std::uint64_t returns() const noexcept { return returns_; }
  /// Bytes of pool-owned data buffers currently allocated (capacity, in use or pooled).
  std::size_t buffer_bytes() const noexcept;

 private:
  struct PooledPayload;  // a payload plus its buffer and pool bookkeeping

  std::vector<PooledPayload*> all_;        // owned; every payload ever created
  std::vector<PooledPayload*> free_list_;  // LIFO: the most recently used is the warmest
  std::uint64_t acquisitions_ = 0;
  std::uint64_t returns_ = 0;
};

}  // namespace sohusim::sim
