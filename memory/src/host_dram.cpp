#include "sohusim/memory/host_dram.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "payload_data.hpp"

namespace sohusim::memory {

void HostDramParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("host DRAM: " + what); };
  if (capacity == 0) fail("capacity must be non-zero");
  if (channels == 0) fail("channels must be at least 1");
  if (!(channel_bandwidth > 0.0) || !std::isfinite(channel_bandwidth)) fail("channel_bandwidth must be positive");
  if (!(efficiency > 0.0) || efficiency > 1.0) fail("efficiency must be in (0, 1]");
  if (!(latency_s >= 0.0) || latency_s > 1e-3) fail("latency must be between 0 and 1 ms");
  if (interleave == 0) fail("interleave must be at least 1 byte");
}

HostDramChannels::HostDramChannels(const HostDramParams& params) : params_(params) {
  params_.validate();
  latency_ps_ = static_cast<std::uint64_t>(std::llround(params_.latency_s * 1e12));
  free_ps_.assign(params_.channels, 0);
  busy_ps_.assign(params_.channels, 0);
  scratch_.assign(params_.channels, 0);
}

std::uint64_t HostDramChannels::transfer_ps(std::uint64_t bytes) const {
  return static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(bytes) * 1e12 / (params_.channel_bandwidth * params_.efficiency)));
}

std::uint64_t HostDramChannels::access(std::uint64_t arrival_ps, std::uint64_t addr, std::uint64_t bytes) {
  const std::uint64_t il = params_.interleave;
  const std::uint64_t n = params_.channels;
  // Bytes per channel: whole interleave blocks spread evenly, then the partial blocks at
  // the two ends (a loop over blocks would cost one step per 256 B of a MiB transfer).
  std::fill(scratch_.begin(), scratch_.end(), 0);
  const std::uint64_t end = addr + bytes;
  const std::uint64_t first_block = addr / il;
  const std::uint64_t last_block = (end - 1) / il;
  if (first_block == last_block) {
    scratch_[first_block % n] = bytes;
  } else {
    scratch_[first_block % n] += (first_block + 1) * il - addr;
    scratch_[last_block % n] += end - last_block * il;
    const std::uint64_t middle = last_block - first_block - 1;  // whole blocks in between
    for (std::uint64_t step = 0; step < std::min(middle, n); ++step) {
      const std::uint64_t count = middle / n + (step < middle % n ? 1 : 0);
      scratch_[(first_block + 1 + step) % n] += count * il;
    }
  }
  std::uint64_t done = arrival_ps;
  for (std::uint64_t c = 0; c < n; ++c) {
    if (scratch_[c] == 0) continue;
    const std::uint64_t start = std::max(arrival_ps, free_ps_[c]);
    const std::uint64_t busy = transfer_ps(scratch_[c]);
    free_ps_[c] = start + busy;
    busy_ps_[c] += busy;
    done = std::max(done, free_ps_[c]);
  }
  return done + latency_ps_;
}

HostDram::HostDram(sc_core::sc_module_name name, const HostDramParams& params, const sim::Instrumentation& inst,
                   const std::string& stats_prefix)
    : sc_core::sc_module(name),
      socket("socket"),
      channels_(params),
      reads_(inst.scope(stats_prefix).counter("reads", "1", "read requests served")),
      writes_(inst.scope(stats_prefix).counter("writes", "1", "write requests served")),
      bytes_read_(inst.scope(stats_prefix).counter("bytes_read", "B", "bytes read")),
      bytes_written_(inst.scope(stats_prefix).counter("bytes_written", "B", "bytes written")),
      address_errors_(
          inst.scope(stats_prefix).counter("address_errors", "1", "requests answered TLM_ADDRESS_ERROR_RESPONSE")),
      other_errors_(
          inst.scope(stats_prefix).counter("other_errors", "1", "requests answered with another error response")),
      latency_(inst.scope(stats_prefix)
                   .distribution("latency", "ns", "request latency, arrival to data",
                                 counters::DistributionSpec::log(1.0, 1.0e6, 60))) {
  sim::ensure_time_resolution();
  if (params.functional) store_ = std::make_unique<sim::SparseStore>(params.capacity);
  for (std::uint32_t c = 0; c < params.channels; ++c) {
    // A formula over the model's own tally: the model is the one place that knows it.
    inst.scope(stats_prefix)
        .registry()
        .formula(inst.scope(stats_prefix).sub("ch" + std::to_string(c)).join("busy_time"), "ps",
                 "time this channel spent transferring data",
                 [this, c] { return static_cast<double>(channels_.busy_ps(c)); });
  }
  socket.register_b_transport(this, &HostDram::b_transport);
  socket.register_nb_transport_fw(this, &HostDram::nb_transport_fw);
  socket.register_transport_dbg(this, &HostDram::transport_dbg);
}

void HostDram::serve(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (!detail::admit(gp, params().capacity, store_ != nullptr, address_errors_, other_errors_)) return;
  const std::uint64_t now_ps = sim::to_ps(sc_core::sc_time_stamp());
  const std::uint64_t arrival_ps = now_ps + sim::to_ps(delay);
  const std::uint64_t len = gp.get_data_length();
  const std::uint64_t done_ps = channels_.access(arrival_ps, gp.get_address(), len);
  if (store_) detail::move_data(*store_, gp);
  if (gp.is_read()) {
    ++reads_;
    bytes_read_ += len;
  } else {
    ++writes_;
    bytes_written_ += len;
  }
  latency_.sample(static_cast<double>(done_ps - arrival_ps) / 1e3);
  delay = sim::from_ps(done_ps - now_ps);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void HostDram::b_transport(int /*id*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  serve(gp, delay);
}

tlm::tlm_sync_enum HostDram::nb_transport_fw(int /*id*/, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                             sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
  serve(gp, delay);
  phase = tlm::BEGIN_RESP;
  return tlm::TLM_COMPLETED;
}

unsigned int HostDram::transport_dbg(int /*id*/, tlm::tlm_generic_payload& gp) {
  return detail::debug_transport(store_.get(), gp);
}

}  // namespace sohusim::memory
