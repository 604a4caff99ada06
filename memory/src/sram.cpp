#include "sohusim/memory/sram.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "payload_data.hpp"

namespace sohusim::memory {

void SramParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("SRAM: " + what); };
  if (banks == 0) fail("banks must be at least 1");
  if (ports == 0) fail("ports (per bank) must be at least 1");
  if (access_width == 0) fail("access_width must be at least 1 byte");
  if (capacity == 0 || capacity % access_width != 0) {
    fail("capacity " + std::to_string(capacity) + " B must be a non-zero multiple of access_width (" +
         std::to_string(access_width) + " B)");
  }
  if (!(clock_hz > 0.0) || !std::isfinite(clock_hz)) fail("clock must be a positive frequency");
}

SramBanks::SramBanks(const SramParams& params) : params_(params) {
  params_.validate();
  port_free_.assign(static_cast<std::size_t>(params_.banks) * params_.ports, 0);
  scratch_.assign(params_.banks, 0);
}

SramBanks::Timing SramBanks::access(std::uint64_t cycle, std::uint64_t addr, std::uint64_t bytes) {
  const std::uint64_t w = params_.access_width;
  const std::uint64_t banks = params_.banks;
  const std::uint64_t first = addr / w;
  const std::uint64_t lines = (addr + bytes - 1) / w - first + 1;
  Timing t;
  t.lines = lines;
  t.done_cycle = cycle;

  // Lines go to banks round-robin from first % banks: each bank gets lines / banks, and
  // the `lines % banks` banks that come first get one more.
  const std::uint64_t base_count = lines / banks;
  const std::uint64_t extra = lines % banks;
  const std::uint64_t first_bank = first % banks;
  const std::uint32_t ports = params_.ports;
  if (ports == 1 && latest_free_ <= cycle && lines >= banks) {
    // Fast path, same result: every port is idle by `cycle` and the request touches every
    // bank, so bank b's lines simply follow each other from `cycle` (no conflicts).
    std::uint64_t* free = port_free_.data();
    std::fill(free, free + banks, cycle + base_count);
    for (std::uint64_t step = 0; step < extra; ++step) {
      const std::uint64_t bank = first_bank + step < banks ? first_bank + step : first_bank + step - banks;
      free[bank] = cycle + base_count + 1;
    }
    latest_free_ = cycle + base_count + (extra > 0 ? 1 : 0);
    t.done_cycle = latest_free_ + params_.latency_cycles;
    return t;
  }
  const std::uint64_t touched = std::min<std::uint64_t>(lines, banks);
  std::uint64_t bank = first_bank;  // advanced with a compare, not a division: this loop is hot
  for (std::uint64_t step = 0; step < touched; ++step, bank = bank + 1 == banks ? 0 : bank + 1) {
    const std::uint64_t count = base_count + (step < extra ? 1 : 0);
    std::uint64_t* free = &port_free_[bank * ports];
    if (ports == 1) {
      // Closed form: the lines follow each other on the one port.
      const std::uint64_t start = std::max(cycle, free[0]);
      if (start > cycle) {
        t.conflicts += count;
        t.conflict_cycles += count * (start - cycle);
      }
      free[0] = start + count;
      t.done_cycle = std::max(t.done_cycle, free[0]);
      continue;
    }
    for (std::uint64_t k = 0; k < count; ++k) {
      std::uint32_t best = 0;
      for (std::uint32_t p = 1; p < ports; ++p) {
        if (free[p] < free[best]) best = p;
      }
      const std::uint64_t ideal = cycle + k / ports;  // its slot in an idle bank
      const std::uint64_t start = std::max(ideal, free[best]);
      if (start > ideal) {
        ++t.conflicts;
        t.conflict_cycles += start - ideal;
      }
      free[best] = start + 1;
      t.done_cycle = std::max(t.done_cycle, start + 1);
    }
  }
  latest_free_ = std::max(latest_free_, t.done_cycle);
  t.done_cycle += params_.latency_cycles;
  return t;
}

Sram::Sram(sc_core::sc_module_name name, const SramParams& params, const sim::Instrumentation& inst,
           const std::string& stats_prefix)
    : sc_core::sc_module(name),
      socket("socket"),
      banks_(params),
      period_ps_(0),
      reads_(inst.scope(stats_prefix).counter("reads", "1", "read requests served")),
      writes_(inst.scope(stats_prefix).counter("writes", "1", "write requests served")),
      bytes_read_(inst.scope(stats_prefix).counter("bytes_read", "B", "bytes read")),
      bytes_written_(inst.scope(stats_prefix).counter("bytes_written", "B", "bytes written")),
      line_accesses_(inst.scope(stats_prefix).counter("line_accesses", "1", "bank accesses of access_width bytes")),
      bank_conflicts_(
          inst.scope(stats_prefix)
              .counter("bank_conflicts", "1", "line accesses delayed by another request's use of the bank")),
      conflict_cycles_(
          inst.scope(stats_prefix)
              .counter("conflict_cycles", "cycles", "SRAM cycles lost by line accesses to bank conflicts")),
      address_errors_(
          inst.scope(stats_prefix).counter("address_errors", "1", "requests answered TLM_ADDRESS_ERROR_RESPONSE")),
      other_errors_(
          inst.scope(stats_prefix).counter("other_errors", "1", "requests answered with another error response")),
      latency_(inst.scope(stats_prefix)
                   .distribution("latency", "ns", "request latency, arrival to data",
                                 counters::DistributionSpec::log(1.0, 1.0e6, 60))) {
  sim::ensure_time_resolution();
  period_ps_ = static_cast<std::uint64_t>(std::llround(1e12 / params.clock_hz));
  if (period_ps_ == 0) throw std::invalid_argument("SRAM: clock above 2 THz");
  if (params.functional) store_ = std::make_unique<sim::SparseStore>(params.capacity);
  socket.register_b_transport(this, &Sram::b_transport);
  socket.register_nb_transport_fw(this, &Sram::nb_transport_fw);
  socket.register_transport_dbg(this, &Sram::transport_dbg);
}

void Sram::serve(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (!detail::admit(gp, params().capacity, store_ != nullptr, address_errors_, other_errors_)) return;
  const std::uint64_t now_ps = sim::to_ps(sc_core::sc_time_stamp());
  const std::uint64_t arrival_ps = now_ps + sim::to_ps(delay);
  const std::uint64_t cycle = (arrival_ps + period_ps_ - 1) / period_ps_;
  const std::uint64_t len = gp.get_data_length();
  const SramBanks::Timing t = banks_.access(cycle, gp.get_address(), len);
  if (store_) detail::move_data(*store_, gp);

  line_accesses_ += t.lines;
  bank_conflicts_ += t.conflicts;
  conflict_cycles_ += t.conflict_cycles;
  if (gp.is_read()) {
    ++reads_;
    bytes_read_ += len;
  } else {
    ++writes_;
    bytes_written_ += len;
  }
  const std::uint64_t done_ps = t.done_cycle * period_ps_;
  latency_.sample(static_cast<double>(done_ps - arrival_ps) / 1e3);
  delay = sim::from_ps(done_ps - now_ps);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Sram::b_transport(int /*id*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  serve(gp, delay);
}

tlm::tlm_sync_enum Sram::nb_transport_fw(int /*id*/, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {
    // END_RESP cannot arrive (every transaction completes at BEGIN_REQ); tolerate it.
    return tlm::TLM_COMPLETED;
  }
  serve(gp, delay);
  phase = tlm::BEGIN_RESP;
  return tlm::TLM_COMPLETED;
}

unsigned int Sram::transport_dbg(int /*id*/, tlm::tlm_generic_payload& gp) {
  return detail::debug_transport(store_.get(), gp);
}

}  // namespace sohusim::memory
