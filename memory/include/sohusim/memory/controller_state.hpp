#pragma once
// ControllerState: what the memory controller of one pseudo-channel holds — its read and
// write queues in arrival order, each bank's open row with the queued requests that hit it,
// and the direction it serves. DramController changes it as requests arrive and commands
// issue; its scheduler reads it to choose commands, its refresh reads it and closes banks.
//
// The hit counts follow every arrival, row opening and closing, so that "does a queued
// request hit this row" is a load, not a walk of the queue. Queues are fixed arrays (no
// allocation per request) of at most 65535 entries.
#include <cstdint>
#include <vector>

#include "sohusim/memory/channel_timing.hpp"
#include "sohusim/memory/memory_backend.hpp"

namespace sohusim::memory {

/// What an access needed before its column command: nothing, an ACT, or a PRE and an ACT.
enum class RowKind : std::uint8_t { Hit, Miss, Conflict };

struct QueuedRequest {
  MemRequest request;
  BankCoord where;
  std::uint32_t row;
  RowKind kind;
};

/// A fixed-capacity queue in arrival order: slots plus an order list of slot indices.
class RequestQueue {
 public:
  explicit RequestQueue(std::uint32_t capacity);
  std::size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  QueuedRequest& at(std::size_t position) { return slots_[order_[position]]; }
  const QueuedRequest& at(std::size_t position) const { return slots_[order_[position]]; }
  void push(const QueuedRequest& e);
  void erase(std::size_t position);

 private:
  std::vector<QueuedRequest> slots_;
  std::vector<std::uint16_t> order_;
  std::vector<std::uint16_t> free_;
};

struct BankState {
  static constexpr std::uint32_t kClosed = 0xffffffffu;
  std::uint32_t open_row = kClosed;
  std::uint32_t hits[2] = {0, 0};    // queued requests (reads, writes) that hit open_row
  std::uint32_t queued[2] = {0, 0};  // queued requests (reads, writes) of this bank
};

struct ControllerState {
  static constexpr std::uint32_t kNoBank = 0xffffffffu;

  ControllerState(std::uint32_t read_capacity, std::uint32_t write_capacity, std::uint32_t banks);

  RequestQueue reads;
  RequestQueue writes;
  std::vector<BankState> banks;
  std::uint32_t total_hits[2] = {0, 0};  // sum of the banks' hits
  bool writing = false;                  // the direction served

  /// 0 while serving reads, 1 while serving writes: the index of hits[] and queued[].
  std::size_t served() const { return writing ? 1 : 0; }
  RequestQueue& queue(bool write) { return write ? writes : reads; }
  const RequestQueue& queue(bool write) const { return write ? writes : reads; }
  std::size_t held() const { return reads.size() + writes.size(); }
  bool any_open() const;

  /// Queues `e` (as a hit, until a row command says otherwise) and counts it at its bank;
  /// returns whether it hits the bank's open row.
  bool push(const QueuedRequest& e);
  /// Opens `row` of `bank` and counts the queued requests that hit it.
  void open_row(std::uint32_t bank, std::uint32_t row);
  void close_bank(std::uint32_t bank);
  void close_all();
};

}  // namespace sohusim::memory
