#pragma once
// CaptureSession: the device-side capture a profiler runs on one host during a request, through
// the driver only (docs/profiler.md, "Capture through the driver"; docs/clock-sync.md):
// for every physical function the host's runtime drives,
//
//   start()  the trace unit on (TRACE_CONFIG: a host ring, command start/end records) and a
//            burst of TIMESTAMP reads between host clock readings (DeviceClockSampler);
//   step()   between the request's steps (ScenarioOptions::progress): drain the ring and take
//            another burst, so the ring never fills and the bursts span the run (the drift);
//   stop()   the trace unit off, a last drain and burst, then the records paired into
//            commands and put on the host clock through the fitted offset and drift.
//
// The capture is not free, as on silicon: every drain and burst costs the host thread MMIO
// round trips, and the device writes its records over PCIe.
//
// draw_aligned_view() puts the result into the run's trace: per device a process
// "dev<g> captured (host<h> clock)" with one slice per command at the host time the
// alignment estimated. The trace's axis is simulated time, on which a host clock reading maps
// through that host's clock model; drawn there, a captured slice sits on the command
// processor's own slice of the same command (the ground truth) up to the alignment error,
// which each slice carries as an argument (error_ns) with the device and host times.
//
// Several hosts: when every host of `CaptureOptions::hosts` runs a capture at the same time,
// host 0 pings each of the others (four-timestamp pings over the host network, clock_ping.hpp)
// at every burst, and host_alignment() fits each one's clock against host 0's. Given to
// draw_aligned_view(), it puts every device's commands on host 0's clock: "dev<g> captured
// (host0 clock)" for a device of host 1 too, its host-1 times carried through both fits.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sohusim/driver/trace_capture.hpp"
#include "sohusim/platform/simulator.hpp"
#include "sohusim/profiler/clock_sync.hpp"

namespace sohusim::platform {

struct CaptureOptions {
  std::uint64_t ring_bytes = 4u << 20;  // per device; a power of two (TraceCaptureOptions)
  unsigned clock_burst = 8;             // TIMESTAMP reads per burst (the lowest round trip is kept)
  // The hosts that run a capture at the same time, host 0 among them (empty: this one alone).
  // Host 0 pings each of the others `host_pings` times per burst (the lowest round trip is
  // kept); they answer. Each must call start(), step() and stop() as often as the others.
  std::vector<unsigned> hosts;
  unsigned host_pings = 8;
};

/// Every other host's clock against the reference host's (host 0), from its capture's pings.
struct HostAlignment {
  unsigned reference = 0;
  std::map<unsigned, profiler::ClockFit> fits;  // host -> its clock (remote) against the reference's (local)
};

/// What one device delivered.
struct DeviceCapture {
  unsigned device = 0;  // global device index (System::device)
  unsigned host = 0;
  std::vector<driver::CommandRecord> commands;  // paired, aligned to the host's clock
  profiler::ClockFit fit;                       // device clock (remote) against the host's (local)
  std::size_t records = 0, clock_samples = 0, unmatched_starts = 0, unmatched_ends = 0;
  std::uint64_t drops = 0;
};

class CaptureSession {
 public:
  /// Every physical function of `host`'s runtime (created now if it was not).
  CaptureSession(HostContext& host, const System& system, const CaptureOptions& options = {});
  ~CaptureSession();
  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

  void start();
  void step();
  /// Ends the capture and aligns; devices() is filled from here on. A second call does nothing.
  void stop();
  const std::vector<DeviceCapture>& devices() const { return result_; }
  /// On host 0 after stop(): the fits of the other hosts of CaptureOptions::hosts; else empty.
  const HostAlignment& host_alignment() const { return alignment_; }

 private:
  struct PerDevice;
  void sync_hosts();  // one burst of pings: host 0 asks, the others answer
  HostContext& host_;
  CaptureOptions opt_;
  std::map<unsigned, profiler::ClockSync> peers_;  // on host 0: per other host
  HostAlignment alignment_;
  std::vector<std::unique_ptr<PerDevice>> devs_;
  std::vector<DeviceCapture> result_;
  bool running_ = false, stopped_ = false;
};

/// How far the aligned view is from the ground truth (simulated time of each command's start
/// and end, recovered from its device stamps through the device clock model).
struct AlignedViewStats {
  std::size_t commands = 0;
  double max_abs_error_ns = 0;
  double mean_abs_error_ns = 0;
};

/// Draws `captures` into the simulator's trace (nothing when it is not tracing) and measures
/// the alignment error against the ground truth. With `hosts`, a capture of another host with
/// a fit there is drawn on the reference host's clock. Call before Simulator::close_trace().
AlignedViewStats draw_aligned_view(Simulator& sim, const std::vector<DeviceCapture>& captures,
                                   const HostAlignment* hosts = nullptr);

}  // namespace sohusim::platform
