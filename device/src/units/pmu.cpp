#include "sohusim/device/units/pmu.hpp"

#include <cmath>
#include <stdexcept>

#include "sohusim/counters/stat.hpp"

namespace sohusim::device {

Pmu::Pmu(const counters::Registry& registry, std::vector<PmuEvent> events, unsigned counter_bits,
         std::uint64_t period_ps)
    : registry_(registry), events_(std::move(events)), bits_(counter_bits), period_ps_(period_ps) {
  if (bits_ < 16 || bits_ > 64) throw std::invalid_argument("device.pmu.counter_bits must be in 16 .. 64");
  if (period_ps_ == 0) throw std::invalid_argument("PMU clock period must be > 0");
}

double Pmu::source(unsigned i) const {
  double v = 0;
  for (const counters::Stat* s : sources_[i]) v += s->value();
  return v;
}

void Pmu::start(std::uint64_t now_ps) {
  for (unsigned i = 0; i < kCounters; ++i) base_[i] = source(i);
  cyc_base_ps_ = now_ps;
}

void Pmu::stop(std::uint64_t now_ps) {
  for (unsigned i = 0; i < kCounters; ++i) acc_[i] += static_cast<std::uint64_t>(std::llround(source(i) - base_[i]));
  cyc_acc_ += (now_ps - cyc_base_ps_) / period_ps_;
}

void Pmu::control(std::uint32_t value, std::uint64_t now_ps) {
  const bool was = counting();
  if (was) stop(now_ps);
  if ((value & 4u) != 0) {
    acc_.fill(0);
    wraps_.fill(0);
    cyc_acc_ = 0;
    cyc_wraps_ = 0;
  }
  ctrl_ = value & 0xBu;
  if (counting()) start(now_ps);
}

bool Pmu::select(unsigned i, std::uint16_t event, std::uint64_t now_ps) {
  if (i >= kCounters) return false;
  const PmuEvent* e = nullptr;
  for (const PmuEvent& ev : events_) {
    if (ev.id == event) e = &ev;
  }
  if (event != 0 && e == nullptr) return false;
  const bool was = counting();
  if (was) stop(now_ps);
  sel_[i] = event;
  sources_[i].clear();
  if (e != nullptr) sources_[i] = registry_.glob(e->counter_glob);
  if (was) start(now_ps);
  return true;
}

void Pmu::check(unsigned i, std::uint64_t raw) {
  const std::uint64_t wraps = bits_ >= 64 ? 0 : raw >> bits_;
  std::uint64_t& seen = i == 31 ? cyc_wraps_ : wraps_[i];
  if (wraps > seen) {
    seen = wraps;
    ovf_ |= 1u << i;
  }
}

std::uint64_t Pmu::counter(unsigned i, std::uint64_t now_ps) {
  if (i >= kCounters) return 0;
  (void)now_ps;
  std::uint64_t raw = acc_[i];
  if (counting()) raw += static_cast<std::uint64_t>(std::llround(source(i) - base_[i]));
  check(i, raw);
  return bits_ >= 64 ? raw : raw & ((1ULL << bits_) - 1);
}

std::uint64_t Pmu::cycles(std::uint64_t now_ps) {
  std::uint64_t raw = cyc_acc_;
  if (counting()) raw += (now_ps - cyc_base_ps_) / period_ps_;
  check(31, raw);
  return bits_ >= 64 ? raw : raw & ((1ULL << bits_) - 1);
}

std::uint32_t Pmu::poll_overflow(std::uint64_t now_ps) {
  for (unsigned i = 0; i < kCounters; ++i) counter(i, now_ps);
  cycles(now_ps);
  const std::uint32_t fresh = ovf_ & ~ovf_reported_;
  ovf_reported_ = ovf_;
  return fresh;
}

void Pmu::reset() {
  ctrl_ = 0;
  sel_.fill(0);
  for (auto& s : sources_) s.clear();
  acc_.fill(0);
  base_.fill(0);
  wraps_.fill(0);
  cyc_acc_ = cyc_wraps_ = cyc_base_ps_ = 0;
  ovf_ = ovf_reported_ = 0;
}

}  // namespace sohusim::device
