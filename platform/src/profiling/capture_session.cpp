#include "sohusim/platform/profiling/capture_session.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sohusim/counters/trace_recorder.hpp"
#include "sohusim/driver/clock_sampler.hpp"
#include "sohusim/driver/errors.hpp"
#include "sohusim/driver/runtime.hpp"
#include "sohusim/platform/system.hpp"

namespace sohusim::platform {

struct CaptureSession::PerDevice {
  PerDevice(driver::Device& d, unsigned global, const CaptureOptions& o)
      : device(global),
        trace(d, driver::TraceCaptureOptions{o.ring_bytes, SOHU_TRC_MASK_CMD_MASK}),
        clock(d, profiler::ClockSync::Options{o.clock_burst, 1}) {}
  unsigned device;
  driver::TraceCapture trace;
  driver::DeviceClockSampler clock;
};

CaptureSession::CaptureSession(HostContext& host, const System& system, const CaptureOptions& options)
    : host_(host), opt_(options) {
  if (opt_.clock_burst == 0) throw std::invalid_argument("capture: clock_burst must be at least 1");
  const unsigned h = host.host_index();
  if (!opt_.hosts.empty()) {
    const auto has = [&](unsigned x) { return std::find(opt_.hosts.begin(), opt_.hosts.end(), x) != opt_.hosts.end(); };
    if (!has(0) || !has(h))
      throw std::invalid_argument("capture: hosts must name host 0 and this host (" + std::to_string(h) + ")");
    for (unsigned x : opt_.hosts) {
      if (x >= system.host_count())
        throw std::invalid_argument("capture: host " + std::to_string(x) + " does not exist (" +
                                    std::to_string(system.host_count()) + " hosts)");
    }
    if (opt_.host_pings == 0) throw std::invalid_argument("capture: host_pings must be at least 1");
    if (h == 0) {
      for (unsigned x : opt_.hosts) {
        if (x != 0) peers_.emplace(x, profiler::ClockSync(profiler::ClockSync::Options{opt_.host_pings, 1}));
      }
    }
  }
  unsigned base = 0;
  for (unsigned i = 0; i < h; ++i) base += system.spec().hosts.at(i).devices;
  driver::Runtime& rt = host.runtime();
  for (unsigned i = 0; i < rt.device_count(); ++i) {
    driver::Device& d = rt.device(i);
    if (d.info().virtual_function) continue;  // the trace unit and TIMESTAMP page are the PF's
    devs_.push_back(std::make_unique<PerDevice>(d, base + i, opt_));
  }
}

CaptureSession::~CaptureSession() = default;

void CaptureSession::start() {
  if (running_ || stopped_) return;
  for (auto& d : devs_) d->trace.start();
  for (auto& d : devs_) d->clock.sample();
  sync_hosts();
  running_ = true;
}

void CaptureSession::sync_hosts() {
  if (opt_.hosts.empty()) return;
  if (host_.host_index() != 0) {
    for (unsigned i = 0; i < opt_.host_pings; ++i) host_.answer_ping(0);
    return;
  }
  for (auto& [peer, sync] : peers_) {
    for (unsigned i = 0; i < opt_.host_pings; ++i) {
      const PingStamps p = host_.ping(peer);
      sync.add_ping(static_cast<std::int64_t>(p.t1), static_cast<std::int64_t>(p.t2), static_cast<std::int64_t>(p.t3),
                    static_cast<std::int64_t>(p.t4));
    }
  }
}

void CaptureSession::step() {
  if (!running_) return;
  for (auto& d : devs_) {
    d->trace.drain();
    d->clock.sample();
  }
  sync_hosts();
}

void CaptureSession::stop() {
  if (!running_ || stopped_) return;
  running_ = false;
  stopped_ = true;
  for (auto& d : devs_) d->trace.stop();
  for (auto& d : devs_) d->clock.sample();
  sync_hosts();
  const unsigned h = host_.host_index();
  for (const auto& [peer, sync] : peers_) alignment_.fits[peer] = sync.fit();
  for (auto& d : devs_) {
    DeviceCapture c;
    c.device = d->device;
    c.host = h;
    const std::vector<driver::CapturedRecord> records = d->trace.take();
    c.records = records.size();
    c.drops = d->trace.drops();
    c.clock_samples = d->clock.samples().size();
    driver::PairedCommands paired = driver::pair_commands(records);
    c.unmatched_starts = paired.unmatched_starts;
    c.unmatched_ends = paired.unmatched_ends;
    c.fit = d->clock.sync().fit();
    driver::align_commands(paired.commands, c.fit);
    c.commands = std::move(paired.commands);
    result_.push_back(std::move(c));
  }
}

AlignedViewStats draw_aligned_view(Simulator& sim, const std::vector<DeviceCapture>& captures,
                                   const HostAlignment* hosts) {
  AlignedViewStats st;
  System& sys = sim.system();
  counters::TraceRecorder& trace = sim.trace();
  const bool tracing = trace.enabled();
  double sum_abs = 0;
  for (const DeviceCapture& c : captures) {
    const device::TimestampParams& dc = sys.device(c.device).timestamp().params();
    // The clock the commands are drawn on: their own host's, or the reference host's through
    // the fit of their host's clock against it.
    const profiler::ClockFit* to_reference = nullptr;
    if (hosts != nullptr && c.host != hosts->reference) {
      const auto f = hosts->fits.find(c.host);
      if (f != hosts->fits.end()) to_reference = &f->second;
    }
    const unsigned drawn_on = to_reference != nullptr ? hosts->reference : c.host;
    const host::HostClock& hc = sys.access(drawn_on).clock();
    const auto on_clock = [to_reference](std::int64_t host_ns) {
      return to_reference != nullptr ? to_reference->to_local(host_ns) : host_ns;
    };
    // Ground truth: a stamp d was taken at simulated time (d - offset) / (1 + drift), within
    // the 1 ns the counter truncates.
    const auto true_ns = [&dc](std::uint64_t d) {
      return (static_cast<long double>(d) - dc.offset_ns) / (1.0L + static_cast<long double>(dc.drift_ppm) * 1e-6L);
    };
    const auto axis_ns = [&hc](std::int64_t host_ns) {
      return hc.sim_ps_at(static_cast<long double>(host_ns)) / 1000.0L;
    };
    counters::TrackId track = 0;
    if (tracing) {
      const std::string host_name = sys.spec().hosts.at(drawn_on).name;
      const counters::TrackId proc =
          trace.process_track("dev" + std::to_string(c.device) + " captured (" + host_name + " clock)");
      track = trace.async_track(proc, "commands");  // queues run concurrently: slices may overlap
    }
    for (const driver::CommandRecord& r : c.commands) {
      if (!r.aligned) continue;
      const long double start = axis_ns(on_clock(r.host_start_ns)), end = axis_ns(on_clock(r.host_end_ns));
      const long double error = start - true_ns(r.device_start_ns);
      const double abs_error = std::fabs(static_cast<double>(error));
      st.max_abs_error_ns = std::max(st.max_abs_error_ns, abs_error);
      sum_abs += abs_error;
      ++st.commands;
      if (!tracing) continue;
      const auto ts = static_cast<counters::TimeNs>(std::max(0.0L, std::round(start)));
      const auto end_ts = std::max(ts, static_cast<counters::TimeNs>(std::max(0.0L, std::round(end))));
      trace.complete(
          track, ts, end_ts - ts, driver::opcode_name(static_cast<std::uint8_t>(r.opcode), r.queue == 0),
          {counters::Arg{"device_start_ns", r.device_start_ns}, counters::Arg{"host_start_ns", r.host_start_ns},
           counters::Arg{"error_ns", static_cast<double>(error)}, counters::Arg{"queue", r.queue},
           counters::Arg{"cid", r.command}},
          {}, r.correlation);
    }
  }
  st.mean_abs_error_ns = st.commands > 0 ? sum_abs / static_cast<double>(st.commands) : 0;
  return st;
}

}  // namespace sohusim::platform
