#include "sohusim/memory/load_initiator.hpp"

#include <algorithm>
#include <stdexcept>

#include "sohusim/sim/correlation_extension.hpp"
#include "sohusim/sim/sim_time.hpp"

namespace sohusim::memory {

namespace {

// Issue time of a payload in flight, so the response can be timed without a side table.
struct IssueTime final : tlm::tlm_extension<IssueTime> {
  std::uint64_t ps = 0;
  tlm::tlm_extension_base* clone() const override { return new IssueTime(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override { ps = static_cast<const IssueTime&>(other).ps; }
};

counters::DistributionSpec latency_spec() {
  return counters::DistributionSpec::log(1.0, 1.0e7, 280);
}

}  // namespace

void LoadPattern::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("load pattern: " + what); };
  if (kind != Kind::Trace) {
    if (request_bytes == 0) fail("request size must be at least 1 byte");
    if (window < request_bytes) fail("the window is smaller than one request");
    if (kind == Kind::Strided && stride == 0) fail("stride must be at least 1 byte");
    if (!(read_fraction >= 0.0 && read_fraction <= 1.0)) fail("read fraction must be in [0, 1]");
  }
  if (outstanding == 0) fail("outstanding requests must be at least 1");
}

LoadInitiator::LoadInitiator(sc_core::sc_module_name name, const LoadPattern& pattern, std::uint32_t index,
                             std::uint32_t count, sim::MemoryManager& mm, const counters::Scope& stats)
    : sc_core::sc_module(name),
      socket("socket"),
      pattern_(pattern),
      index_(index),
      count_(std::max<std::uint32_t>(1, count)),
      mm_(mm),
      rng_(pattern.seed),
      requests_(stats.counter("requests", "1", "requests completed")),
      reads_(stats.counter("reads", "1", "read requests completed")),
      writes_(stats.counter("writes", "1", "write requests completed")),
      bytes_read_(stats.counter("bytes_read", "B", "bytes read")),
      bytes_written_(stats.counter("bytes_written", "B", "bytes written")),
      errors_(stats.counter("errors", "1", "requests answered with an error response")),
      read_latency_(stats.distribution("read_latency", "ns", "read latency, BEGIN_REQ to BEGIN_RESP", latency_spec())),
      write_latency_(
          stats.distribution("write_latency", "ns", "write latency, BEGIN_REQ to BEGIN_RESP", latency_spec())) {
  pattern_.validate();
  sim::ensure_time_resolution();
  socket.register_nb_transport_bw(this, &LoadInitiator::nb_transport_bw);
  total_ = pattern_.kind == LoadPattern::Kind::Trace ? pattern_.trace.size() : pattern_.requests;
  SC_HAS_PROCESS(LoadInitiator);
  SC_THREAD(run);
}

std::uint64_t LoadInitiator::next_address(std::uint64_t k) {
  const std::uint64_t size = pattern_.request_bytes;
  const std::uint64_t slots = pattern_.window / size;
  const std::uint64_t n = k * count_ + index_;  // this initiator's place in the shared sequence
  switch (pattern_.kind) {
    case LoadPattern::Kind::Stream:
      return pattern_.base + (n % slots) * size;
    case LoadPattern::Kind::Strided: {
      const std::uint64_t per_pass = std::max<std::uint64_t>(1, pattern_.window / pattern_.stride);
      const std::uint64_t offset = (n % per_pass) * pattern_.stride + (n / per_pass) * size;
      return pattern_.base + (offset % pattern_.window) / size * size;
    }
    default:
      return pattern_.base + (rng_() % slots) * size;
  }
}

void LoadInitiator::run() {
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (std::uint64_t k = 0; k < total_; ++k) {
    std::uint64_t addr;
    bool write;
    std::uint32_t size;
    if (pattern_.kind == LoadPattern::Kind::Trace) {
      const TraceRequest& r = pattern_.trace[k];
      const std::uint64_t now = sim::to_ps(sc_core::sc_time_stamp());
      if (r.time_ps > now) wait(sim::from_ps(r.time_ps - now));
      addr = r.address;
      write = r.write;
      size = r.size;
    } else {
      addr = next_address(k);
      write = coin(rng_) >= pattern_.read_fraction;
      size = pattern_.request_bytes;
    }
    while (in_flight_ >= pattern_.outstanding) wait(slot_free_);

    tlm::tlm_generic_payload& gp = pattern_.with_data ? mm_.acquire(size) : mm_.acquire();
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_length(size);
    gp.set_streaming_width(size);
    sim::set_correlation(gp, next_id_++, index_, sim::to_ps(sc_core::sc_time_stamp()));
    auto* issued = new IssueTime;
    issued->ps = sim::to_ps(sc_core::sc_time_stamp());
    gp.set_auto_extension(issued);
    ++in_flight_;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    waiting_end_req_ = true;
    const tlm::tlm_sync_enum r = socket->nb_transport_fw(gp, phase, delay);
    if (r == tlm::TLM_COMPLETED) {
      waiting_end_req_ = false;
      respond(gp, sc_core::sc_time_stamp() + delay);
    } else if (r == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
      waiting_end_req_ = false;
      if (delay > sc_core::SC_ZERO_TIME) wait(delay);
    } else if (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
      waiting_end_req_ = false;
      respond(gp, sc_core::sc_time_stamp() + delay);
    } else {
      if (waiting_end_req_) wait(end_req_);  // back-pressure: the target withholds END_REQ
    }
    gp.release();  // our reference; the target holds its own while it has the payload
  }
  while (in_flight_ > 0) wait(slot_free_);
  done_ = true;
  done_event_.notify();
}

tlm::tlm_sync_enum LoadInitiator::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
  if (phase == tlm::END_REQ) {
    waiting_end_req_ = false;
    end_req_.notify(delay);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    respond(gp, sc_core::sc_time_stamp() + delay);
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

void LoadInitiator::respond(tlm::tlm_generic_payload& gp, const sc_core::sc_time& at) {
  // A BEGIN_RESP may come before the END_REQ was seen (the target may skip END_REQ): the
  // response implies it.
  if (waiting_end_req_) {
    waiting_end_req_ = false;
    end_req_.notify(sc_core::SC_ZERO_TIME);
  }
  const IssueTime* issued = gp.get_extension<IssueTime>();
  const double latency_ns =
      issued ? static_cast<double>(sim::to_ps(at) - std::min(sim::to_ps(at), issued->ps)) / 1e3 : 0.0;
  const std::uint64_t len = gp.get_data_length();
  if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
    ++errors_;
  } else if (gp.is_write()) {
    ++writes_;
    bytes_written_ += len;
    write_latency_.sample(latency_ns);
  } else {
    ++reads_;
    bytes_read_ += len;
    read_latency_.sample(latency_ns);
  }
  ++requests_;
  ++completed_;
  finish_ = std::max(finish_, at);
  --in_flight_;
  slot_free_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace sohusim::memory
