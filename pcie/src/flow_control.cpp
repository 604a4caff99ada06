#include "sohusim/pcie/flow_control.hpp"

#include <stdexcept>
#include <string>

namespace sohusim::pcie {

FlowControl::FlowControl(const CreditLimits& l) {
  header_limit_ = {l.posted_header, l.nonposted_header, l.completion_header};
  data_limit_ = {l.posted_data, l.nonposted_data, l.completion_data};
}

bool FlowControl::can_send(FcClass c, std::uint32_t data_credits) const noexcept {
  const unsigned i = index(c);
  if (header_limit_[i] != 0 && header_used_[i] + 1 > header_limit_[i]) return false;
  if (data_limit_[i] != 0 && data_used_[i] + data_credits > data_limit_[i]) return false;
  return true;
}

void FlowControl::consume(FcClass c, std::uint32_t data_credits) noexcept {
  const unsigned i = index(c);
  header_used_[i] += 1;
  data_used_[i] += data_credits;
}

void FlowControl::release(FcClass c, std::uint32_t data_credits) noexcept {
  const unsigned i = index(c);
  header_used_[i] -= header_used_[i] ? 1 : 0;
  data_used_[i] -= data_credits <= data_used_[i] ? data_credits : data_used_[i];
}

TagPool::TagPool(unsigned tag_bits)
    : capacity_(tag_bits == 5   ? 32
                : tag_bits == 8 ? 256
                                : 768),
      first_(tag_bits == 10 ? 256 : 0) {
  if (tag_bits != 5 && tag_bits != 8 && tag_bits != 10) {
    throw std::invalid_argument("tag pool: " + std::to_string(tag_bits) + "-bit tags do not exist (5, 8, 10)");
  }
  free_.reserve(capacity_);
  for (unsigned t = capacity_; t-- > 0;) free_.push_back(static_cast<std::uint16_t>(first_ + t));
  used_.assign(first_ + capacity_, false);
}

std::uint16_t TagPool::allocate() {
  const std::uint16_t t = free_.back();
  free_.pop_back();
  used_[t] = true;
  return t;
}

void TagPool::release(std::uint16_t tag) {
  if (tag < used_.size() && used_[tag]) {
    used_[tag] = false;
    free_.push_back(tag);
  }
}

bool TagPool::in_use(std::uint16_t tag) const noexcept {
  return tag < used_.size() && used_[tag];
}

}  // namespace sohusim::pcie
