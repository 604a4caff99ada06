#pragma once
// ReplayCache: the recorded timings of command shapes (device.replay, command_replay.hpp),
// shared by every device of one configuration.
//
// A record holds what a command of one signature did on an idle device: its duration and
// the increment of each counter it changed, named below the device's prefix (`me3.tiles`,
// `hbm.s0.ch1.pc0.rd`, ...), so that a device of the same configuration can replay it on its
// own counters. Devices whose configuration differs in anything (arch preset, --set
// overrides) get different caches: share_replays() groups by the whole configuration.
// In a tensor-parallel group every device runs the same shapes, so the first device to run a
// shape records it and the others replay it (following a recording still in progress, see
// Pending): the 8 devices of `sohu-8` simulate each shape once, not eight times.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>

#include "sohusim/device/exec/command_work.hpp"

namespace sohusim::device {

class SohuDevice;

/// Hash of a command signature (its 16 dwords with addresses masked): the replay tables
/// are looked up once per command; nothing iterates them, so their order never shows.
struct SignatureHash {
  std::size_t operator()(const std::vector<std::uint32_t>& k) const noexcept {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the dwords
    for (std::uint32_t d : k) {
      h ^= d;
      h *= 1099511628211ULL;
    }
    return static_cast<std::size_t>(h);
  }
};

class ReplayCache {
 public:
  struct Record {
    std::uint64_t duration_ps = 0;
    std::vector<std::pair<std::string, std::uint64_t>> increments;  // counter name below the device prefix
    CommandWork work;                                               // what the command did (command_work.hpp)
  };
  /// The record of `signature`, or nullptr.
  const Record* find(const std::vector<std::uint32_t>& signature) const {
    const auto it = records_.find(signature);
    return it == records_.end() ? nullptr : &it->second;
  }
  /// The records hold at most this many counter increments (each a name and a count, about
  /// 40 B): past it the oldest records go. A record of a GEMM on `sohu` changes about 3,000
  /// counters; serving steps bring shapes without end (every step's row count and contexts),
  /// while a layer's shapes recur within a step, so the recent ones are worth keeping.
  static constexpr std::size_t kMaxIncrements = std::size_t{4} << 20;
  /// Keeps the first record of a signature.
  void insert(const std::vector<std::uint32_t>& signature, Record r) {
    const std::size_t n = r.increments.size();
    if (!records_.emplace(signature, std::move(r)).second) return;
    order_.push_back(signature);
    increments_ += n;
    while (increments_ > kMaxIncrements && order_.size() > 1) evict_oldest();
  }
  std::size_t size() const { return records_.size(); }

  /// A recording in progress. The devices of a tensor-parallel group reach a shape at nearly
  /// the same time, before any of them has a record; the first records, the others follow:
  /// they wait for the recording to end (`done`) and then finish at their own start plus
  /// the recorded duration. `record` is empty when the recording was not clean (the
  /// recorder's device was shared, or the command failed): followers then simulate in full.
  struct Pending {
    sc_core::sc_event done;
    bool finished = false;
    std::optional<Record> record;
  };
  /// The recording of `signature` in progress, or nullptr.
  std::shared_ptr<Pending> pending(const std::vector<std::uint32_t>& signature) const {
    const auto it = pending_.find(signature);
    return it == pending_.end() ? nullptr : it->second;
  }
  /// Announces a recording of `signature`.
  std::shared_ptr<Pending> begin(const std::vector<std::uint32_t>& signature) {
    auto p = std::make_shared<Pending>();
    pending_[signature] = p;
    return p;
  }
  /// Ends the recording: stores a clean record and wakes the followers.
  void end(const std::vector<std::uint32_t>& signature, const std::shared_ptr<Pending>& p, std::optional<Record> r) {
    if (r) insert(signature, *r);
    p->record = std::move(r);
    p->finished = true;
    p->done.notify(sc_core::SC_ZERO_TIME);
    const auto it = pending_.find(signature);
    if (it != pending_.end() && it->second == p) pending_.erase(it);
  }

 private:
  void evict_oldest();

  std::unordered_map<std::vector<std::uint32_t>, Record, SignatureHash> records_;
  std::deque<std::vector<std::uint32_t>> order_;  // the records' signatures, oldest first
  std::size_t increments_ = 0;                    // in all records
  std::unordered_map<std::vector<std::uint32_t>, std::shared_ptr<Pending>, SignatureHash> pending_;
};

/// Gives the devices of identical configuration (SohuDevice::config_key()) one cache each.
void share_replays(const std::vector<SohuDevice*>& devices);

}  // namespace sohusim::device
