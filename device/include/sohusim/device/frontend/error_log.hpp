#pragma once
// The device's error log (BAR0 ERRLOG page): what software reads after an error completion
// or an error interrupt to learn what went wrong and where — status code, faulting address,
// queue and command id — the way NVMe's Error Information log page does. A bounded FIFO:
// entries are popped by software (ERR_ACK); when it is full the newest entry is dropped and
// counted, so a flood of bad doorbells cannot grow memory without bound. A human-readable
// message is kept beside each entry for the simulator's own diagnostics (stats, CLI).
#include <cstdint>
#include <deque>
#include <string>

namespace sohusim::device {

struct ErrorEntry {
  std::uint16_t status = 0;   // SOHU_STATUS_* code
  std::uint64_t address = 0;  // faulting address, or 0
  std::uint16_t queue = 0;    // queue id (0: admin or none)
  std::uint16_t command = 0;  // command id, or 0
  std::uint64_t time_ps = 0;  // simulated time it was logged
  std::string message;        // what the simulator knows, for humans
};

class ErrorLog {
 public:
  explicit ErrorLog(std::size_t capacity = 64) : capacity_(capacity == 0 ? 1 : capacity) {}
  /// Logs an entry; returns false (and counts it) if the log was full.
  bool push(ErrorEntry e) {
    ++logged_;
    if (entries_.size() >= capacity_) {
      ++dropped_;
      return false;
    }
    entries_.push_back(std::move(e));
    return true;
  }
  /// The oldest unacknowledged entry, or nullptr.
  const ErrorEntry* oldest() const { return entries_.empty() ? nullptr : &entries_.front(); }
  void pop() {
    if (!entries_.empty()) entries_.pop_front();
  }
  void clear() { entries_.clear(); }
  std::uint64_t logged() const noexcept { return logged_; }
  std::uint64_t dropped() const noexcept { return dropped_; }
  std::size_t size() const noexcept { return entries_.size(); }
  /// The unacknowledged entries, oldest first.
  const std::deque<ErrorEntry>& pending() const noexcept { return entries_; }

 private:
  std::size_t capacity_;
  std::deque<ErrorEntry> entries_;
  std::uint64_t logged_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace sohusim::device
