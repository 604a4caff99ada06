#pragma once
// CommandReplay: the replay of command shapes (device.replay; fast fidelity and timing mode
// only), owned by the device's CommandExecutor (command_executor.hpp).
//
// A transformer runs the same command shapes over and over (every layer, every step), and
// in the fast fidelity a command's timing on an idle device depends on its shape, not on
// where its operands are. So the first GEMM, ATTENTION or VECTOR command of a given
// signature (the entry with its address operands, command id and correlation masked) that
// runs while no other command is in flight on the device is simulated in full and recorded:
// its duration and the increment of every counter under the device's prefix. A later
// command of the same signature that starts on an idle device is checked exactly as usual
// (decode, MMU, ranges: errors are the same) and then replays the record: it waits the
// duration and adds the increments. Not replayed: distributions and gauges (latency
// histograms, occupancies), per-tile trace slices, and the memory models' internal state
// (their queues are idle before and after). `<prefix>.exec.replayed` counts replays;
// device.replay = false turns it off. Records are shared between devices of one
// configuration (replay_cache.hpp): what one records, the others replay.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sohusim/counters/registry.hpp"
#include "sohusim/device/exec/command_work.hpp"
#include "sohusim/device/exec/replay_cache.hpp"
#include "sohusim/device/frontend/command.hpp"

namespace sohusim::device {

class CommandReplay {
 public:
  /// Runs the command in full (`validate_only` false) or checks its operands only (true);
  /// `done` (if given) receives the command's work.
  using Dispatch = std::function<Outcome(bool validate_only, CommandWork* done)>;
  /// A command ended by replay after `duration_ps`, having done `work` (the record's).
  using Replayed = std::function<void(std::uint64_t duration_ps, const CommandWork& work)>;

  /// `device_scope` holds the device's counters; `excluded` (the executor's command count)
  /// is never part of a record.
  CommandReplay(const counters::Scope& device_scope, const counters::Counter& excluded);

  /// GEMM, ATTENTION and VECTOR: the commands whose shapes are replayed.
  static bool replayable(const Sqe& sqe);
  /// The entry's dwords with its command id, correlation and address operands masked.
  static std::vector<std::uint32_t> signature(const Sqe& sqe);

  /// Shares records with the other devices given the same cache.
  void share(std::shared_ptr<ReplayCache> cache) { shared_ = std::move(cache); }

  /// Runs a replayable command: replays its record if the device is idle and one exists
  /// (here or in the shared cache, or when another device is recording it), else runs it
  /// through `dispatch` and, on an idle device, records it.
  Outcome execute(const Sqe& sqe, const Dispatch& dispatch, const Replayed& replayed);

  /// A command that runs without replay, counted in flight while this lives: a recording
  /// it overlaps is not clean.
  class InFlight {
   public:
    explicit InFlight(CommandReplay& replay) : replay_(replay) {
      ++replay_.in_flight_;
      ++replay_.started_;
    }
    ~InFlight() { --replay_.in_flight_; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    CommandReplay& replay_;
  };

 private:
  // A record on this device's counters.
  struct Record {
    std::uint64_t duration_ps = 0;
    CommandWork work;
    // The counts to add (Counter::slot(): dense, in registration order) and how much, owed
    // to the registry at each replay and added when a counter is next read.
    std::shared_ptr<counters::AddBatch> increments = std::make_shared<counters::AddBatch>();
  };
  void apply(const Record& r) { scope_.registry().owe(r.increments); }
  // This device's record of `key` (resolving a shared record onto its counters), or nullptr.
  const Record* find(const std::vector<std::uint32_t>& key);
  std::vector<std::pair<counters::Counter*, std::uint64_t>> device_counters();
  // Bounds this device's table like the shared one's (it is rebuilt from that one on demand).
  void forget_if_full(std::size_t adding) {
    adds_ += adding;
    if (adds_ > ReplayCache::kMaxIncrements) {
      records_.clear();
      adds_ = adding;
    }
  }
  void refresh_own_counters();

  counters::Scope scope_;
  const counters::Counter& excluded_;
  std::unordered_map<std::vector<std::uint32_t>, Record, SignatureHash> records_;  // on this device's counters
  std::size_t adds_ = 0;                                                           // increments in records_
  std::shared_ptr<ReplayCache> shared_;                            // records shared with identical devices
  std::vector<counters::Counter*> own_counters_;                   // this device's counters (device_counters())
  std::unordered_map<std::string, counters::Counter*> by_suffix_;  // the same, by name below the prefix
  std::size_t counters_seen_ = 0;                                  // registry size when own_counters_ was built
  unsigned in_flight_ = 0;                                         // commands executing now
  std::uint64_t started_ = 0;  // commands started so far (detects overlap while recording)
};

}  // namespace sohusim::device
