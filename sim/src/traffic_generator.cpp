#include "sohusim/sim/traffic_generator.hpp"

#include <stdexcept>

#include "sohusim/sim/correlation_extension.hpp"

namespace sohusim::sim {

const char* TrafficPattern::to_string(Kind kind) {
  switch (kind) {
    case Kind::Stream:
      return "stream";
    case Kind::Strided:
      return "strided";
    case Kind::Random:
      return "random";
  }
  return "?";
}

void TrafficPattern::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument("traffic pattern: " + what); };
  if (request_bytes == 0) bad("request_bytes must be > 0");
  if (window < request_bytes) {
    bad("window (" + std::to_string(window) + " B) is smaller than one request (" + std::to_string(request_bytes) +
        " B)");
  }
  if (kind == Kind::Strided && stride == 0) bad("stride must be > 0");
  if (!(read_fraction >= 0.0 && read_fraction <= 1.0)) bad("read_fraction must be in [0, 1]");
}

TrafficGenerator::TrafficGenerator(sc_core::sc_module_name name, const TrafficPattern& pattern,
                                   const Instrumentation& inst, const std::string& stats_prefix, MemoryManager& mm,
                                   std::uint64_t& next_correlation_id, std::uint32_t requester_id)
    : sc_core::sc_module(name),
      socket("socket"),
      pattern_(pattern),
      inst_(inst),
      mm_(mm),
      next_correlation_id_(next_correlation_id),
      requester_id_(requester_id),
      rng_(pattern.seed),
      requests_(inst.scope(stats_prefix).counter("requests", "1", "requests completed")),
      reads_(inst.scope(stats_prefix).counter("reads", "1", "read requests completed")),
      writes_(inst.scope(stats_prefix).counter("writes", "1", "write requests completed")),
      bytes_read_(inst.scope(stats_prefix).counter("bytes_read", "B", "bytes read")),
      bytes_written_(inst.scope(stats_prefix).counter("bytes_written", "B", "bytes written")),
      errors_(inst.scope(stats_prefix).counter("errors", "1", "requests answered with an error response")),
      read_latency_(inst.scope(stats_prefix)
                        .distribution("read_latency", "ns", "issue to response of reads",
                                      counters::DistributionSpec::log(1, 1e7, 70))),
      write_latency_(inst.scope(stats_prefix)
                         .distribution("write_latency", "ns", "issue to response of writes",
                                       counters::DistributionSpec::log(1, 1e7, 70))) {
  pattern_.validate();
  if (inst_.tracing("generator")) {
    track_ = inst_.trace->thread_track(inst_.process_track, basename());
    rd_name_ = inst_.trace->intern("read");
    wr_name_ = inst_.trace->intern("write");
  }
  SC_HAS_PROCESS(TrafficGenerator);
  SC_THREAD(run);
}

TrafficGenerator::~TrafficGenerator() {
  if (in_flight_ != nullptr) in_flight_->release();
}

std::uint64_t TrafficGenerator::next_address(std::uint64_t i) {
  const std::uint64_t slots = pattern_.window / pattern_.request_bytes;
  switch (pattern_.kind) {
    case TrafficPattern::Kind::Stream:
      return pattern_.base + (i % slots) * pattern_.request_bytes;
    case TrafficPattern::Kind::Strided: {
      const std::uint64_t span = pattern_.window - pattern_.request_bytes + 1;
      return pattern_.base + (i * pattern_.stride) % span;
    }
    case TrafficPattern::Kind::Random:
      return pattern_.base + (rng_() % slots) * pattern_.request_bytes;
  }
  return pattern_.base;
}

void TrafficGenerator::run() {
  std::bernoulli_distribution is_read(pattern_.read_fraction);
  for (std::uint64_t i = 0; i < pattern_.requests; ++i) {
    const bool read = pattern_.read_fraction >= 1.0 ? true : pattern_.read_fraction <= 0.0 ? false : is_read(rng_);
    const std::uint64_t addr = next_address(i);
    tlm::tlm_generic_payload& gp = mm_.acquire(pattern_.request_bytes);
    in_flight_ = &gp;
    gp.set_command(read ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
    gp.set_address(addr);
    gp.set_data_length(static_cast<unsigned int>(pattern_.request_bytes));
    gp.set_streaming_width(static_cast<unsigned int>(pattern_.request_bytes));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const std::uint64_t corr = ++next_correlation_id_;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    set_correlation(gp, corr, requester_id_, to_ps(start));

    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(gp, delay);
    wait(delay);

    const sc_core::sc_time end = sc_core::sc_time_stamp();
    const double latency_ns = static_cast<double>(to_ps(end - start)) / 1000.0;
    const bool ok = gp.is_response_ok();
    ++requests_;
    if (!ok) ++errors_;
    if (read) {
      ++reads_;
      if (ok) bytes_read_ += pattern_.request_bytes;
      read_latency_.sample(latency_ns);
    } else {
      ++writes_;
      if (ok) bytes_written_ += pattern_.request_bytes;
      write_latency_.sample(latency_ns);
    }
    if (track_ != 0) {
      const std::uint64_t s = to_ns(start);
      inst_.trace->complete(track_, s, to_ns(end) - s, read ? rd_name_ : wr_name_,
                            {{"addr", addr}, {"bytes", pattern_.request_bytes}, {"ok", ok}}, {}, corr);
    }
    in_flight_ = nullptr;
    gp.release();
    ++completed_;
    if (pattern_.gap != sc_core::SC_ZERO_TIME) wait(pattern_.gap);
  }
  done_ = true;
  finish_time_ = sc_core::sc_time_stamp();
  done_event_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace sohusim::sim
