#pragma once
// PointRunner: runs sweep points as separate processes, N at a time, each with a wall-time
// limit. A point is `PROGRAM ARGS...`; its stdout (the point's JSON) and stderr go to files
// under the work folder; a point past its limit is killed with its whole process group.
//
//   studies::PointRunner runner("/usr/bin/sohusim", "out/points", /*jobs=*/2, /*timeout_s=*/600);
//   runner.run(points, [&](const SweepPoint& p, const PointOutcome& o) { store.record(p, o); });
//
// `on_done` runs in the caller's thread as each point ends, in completion order. stop()
// (async-signal-safe: it sets a flag) makes run() kill what is running and return; the points
// it killed are not reported. Per-point overhead: a fork/exec and two small files.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "sohusim/studies/result_store.hpp"
#include "sohusim/studies/sweep_spec.hpp"

namespace sohusim::studies {

class PointRunner {
 public:
  PointRunner(std::string program, std::string work_dir, unsigned jobs, double timeout_s);

  using Done = std::function<void(const SweepPoint&, const PointOutcome&)>;
  /// Runs every point; returns the number it finished (all of them unless stopped).
  std::size_t run(const std::vector<SweepPoint>& points, const Done& on_done);
  /// Asks run() to stop (from a signal handler too).
  void stop() { stop_.store(true); }
  bool stopped() const { return stop_.load(); }

  /// How much of a failed point's stderr its record keeps.
  static constexpr std::size_t kErrorTail = 4000;

 private:
  std::string program_, work_dir_;
  unsigned jobs_;
  double timeout_s_;
  std::atomic<bool> stop_{false};
};

/// The last `max_bytes` of a file ("" when it cannot be read).
std::string file_tail(const std::string& path, std::size_t max_bytes);

}  // namespace sohusim::studies
