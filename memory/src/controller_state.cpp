#include "sohusim/memory/controller_state.hpp"

#include <algorithm>

namespace sohusim::memory {

RequestQueue::RequestQueue(std::uint32_t capacity) : slots_(capacity) {
  order_.reserve(capacity);
  free_.reserve(capacity);
  for (std::uint32_t i = capacity; i > 0; --i) free_.push_back(static_cast<std::uint16_t>(i - 1));
}

void RequestQueue::push(const QueuedRequest& e) {
  const std::uint16_t slot = free_.back();
  free_.pop_back();
  slots_[slot] = e;
  order_.push_back(slot);
}

void RequestQueue::erase(std::size_t position) {
  free_.push_back(order_[position]);
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(position));
}

ControllerState::ControllerState(std::uint32_t read_capacity, std::uint32_t write_capacity, std::uint32_t nbanks)
    : reads(read_capacity), writes(write_capacity), banks(nbanks) {}

bool ControllerState::any_open() const {
  return std::any_of(banks.begin(), banks.end(), [](const BankState& b) { return b.open_row != BankState::kClosed; });
}

bool ControllerState::push(const QueuedRequest& e) {
  const std::size_t qi = e.request.write ? 1 : 0;
  queue(e.request.write).push(e);
  BankState& bank = banks[e.where.bank];
  ++bank.queued[qi];
  const bool hit = bank.open_row == e.row;
  if (hit) {
    ++bank.hits[qi];
    ++total_hits[qi];
  }
  return hit;
}

void ControllerState::open_row(std::uint32_t b, std::uint32_t row) {
  BankState& bank = banks[b];
  total_hits[0] -= bank.hits[0];
  total_hits[1] -= bank.hits[1];
  bank.open_row = row;
  bank.hits[0] = bank.hits[1] = 0;
  if (bank.queued[0] > 0) {
    for (std::size_t i = 0; i < reads.size(); ++i) {
      const QueuedRequest& e = reads.at(i);
      if (e.where.bank == b && e.row == row) ++bank.hits[0];
    }
  }
  if (bank.queued[1] > 0) {
    for (std::size_t i = 0; i < writes.size(); ++i) {
      const QueuedRequest& e = writes.at(i);
      if (e.where.bank == b && e.row == row) ++bank.hits[1];
    }
  }
  total_hits[0] += bank.hits[0];
  total_hits[1] += bank.hits[1];
}

void ControllerState::close_bank(std::uint32_t b) {
  BankState& bank = banks[b];
  total_hits[0] -= bank.hits[0];
  total_hits[1] -= bank.hits[1];
  bank.open_row = BankState::kClosed;
  bank.hits[0] = bank.hits[1] = 0;
}

void ControllerState::close_all() {
  for (std::uint32_t b = 0; b < banks.size(); ++b) close_bank(b);
}

}  // namespace sohusim::memory
