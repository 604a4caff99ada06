#pragma once
// Submission and completion queues in the NVMe manner (docs/driver.md, "Queues"): rings in host
// memory, produced and consumed across PCIe.
//
// A submission queue (SQ) holds 64-byte commands; software writes entries at the tail and
// rings the SQ tail doorbell; the device fetches from the head. A completion queue (CQ)
// holds 16-byte entries; the device writes at its tail, flipping the phase bit every time
// the tail wraps, so software can tell new entries from old without reading a device
// register; software consumes from its head and reports progress through the CQ head
// doorbell. One slot is always left empty, so head == tail means empty and tail + 1 == head
// (mod size) means full.
//
// The device-side state lives here; the rings themselves are in host memory. Objects are
// shared_ptr-owned so that a command still in flight when its queue is deleted (or the
// device reset) holds on to valid state and can tell, from `generation`, that it must not
// post a completion.
#include <cstdint>
#include <vector>

#include <systemc>

namespace sohusim::device {

inline std::uint32_t ring_used(std::uint32_t head, std::uint32_t tail, std::uint32_t entries) {
  return (tail + entries - head) % entries;
}
inline std::uint32_t ring_next(std::uint32_t i, std::uint32_t entries) {
  return (i + 1) % entries;
}

struct SubmissionQueue {
  std::uint16_t id = 0;
  std::uint64_t base = 0;     // IOVA of entry 0
  std::uint32_t entries = 0;  // ring size (QSIZE + 1)
  std::uint16_t cqid = 0;
  std::uint32_t head = 0;  // next entry the device fetches
  std::uint32_t tail = 0;  // from the doorbell
  std::uint64_t generation = 0;
  bool deleted = false;
  unsigned in_flight = 0;                  // fetched, not yet completed
  std::vector<std::uint8_t> fetch_buffer;  // here, not on the fetch thread's stack: a thread
                                           // still waiting at the end of a run never unwinds
  sc_core::sc_event doorbell;              // tail moved, or the queue is going away
  sc_core::sc_event drained;               // in_flight reached 0
};

struct CompletionQueue {
  std::uint16_t id = 0;
  std::uint64_t base = 0;
  std::uint32_t entries = 0;
  std::uint32_t tail = 0;    // next entry the device writes
  std::uint32_t head = 0;    // from the doorbell
  bool phase = true;         // phase tag the device writes; flips at every wrap
  std::uint16_t vector = 0;  // MSI-X vector
  bool irq_enabled = true;
  unsigned sq_refs = 0;  // SQs posting here (a CQ in use cannot be deleted)
  std::uint64_t generation = 0;
  bool deleted = false;
  // Interrupt coalescing: raise after `coalesce_count` completions or `coalesce_time_ps`
  // after the first unsignalled one, whichever comes first (0/1 and 0: every completion).
  unsigned coalesce_count = 0;
  std::uint64_t coalesce_time_ps = 0;
  unsigned pending = 0;                      // completions posted since the last interrupt
  std::vector<std::uint64_t> pending_flows;  // their correlation ids (traced runs): the interrupt's flows
  sc_core::sc_event space;                   // head moved (room for more entries)
  sc_core::sc_event timer;                   // coalescing time threshold
};

}  // namespace sohusim::device
