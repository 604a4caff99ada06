#pragma once
// Registry: the one place every statistic of a simulation lives.
//
// Names are hierarchical and stable (`dev0.hbm.s2.ch5.pc1.row_hits`): dot-separated
// segments of letters, digits, '_' and '-'. The registry owns each stat; the
// references it returns stay valid until the registry is destroyed, so a model
// looks a counter up once at construction and then increments it directly. Counters
// are laid out side by side in the order they are registered, so that the counters a
// model registers together (and bumps together) share cache lines: a bulk HBM request
// updates six counters in each of 192 pseudo-channels.
// Iteration order is the names' lexicographic order, so every dump is
// deterministic. There is no global registry: a simulation owns one, and anything
// that reports takes it by reference (or a Scope of it).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sohusim/counters/counter.hpp"
#include "sohusim/counters/distribution.hpp"
#include "sohusim/counters/formula.hpp"
#include "sohusim/counters/gauge.hpp"
#include "sohusim/counters/snapshot.hpp"
#include "sohusim/counters/stat.hpp"

namespace sohusim::counters {

class Registry {
 public:
  Registry() = default;
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registration. A name registered twice is a programming error and throws
  // std::invalid_argument naming it; so does a malformed name.
  Counter& counter(std::string_view name, std::string_view unit, std::string_view description);
  Gauge& gauge(std::string_view name, std::string_view unit, std::string_view description);
  Distribution& distribution(std::string_view name, std::string_view unit, std::string_view description,
                             DistributionSpec spec = {});
  Formula& formula(std::string_view name, std::string_view unit, std::string_view description, std::string expression);
  Formula& formula(std::string_view name, std::string_view unit, std::string_view description,
                   std::function<double()> fn);

  // Lookup. find() returns nullptr when absent; get() throws std::out_of_range
  // naming the missing stat and the closest existing names.
  const Stat* find(std::string_view name) const;
  Stat* find(std::string_view name);
  const Stat& get(std::string_view name) const;
  double value(std::string_view name) const { return get(name).value(); }
  // Every stat whose name matches the glob (see glob.hpp), in name order.
  std::vector<const Stat*> glob(std::string_view pattern) const;
  std::vector<const Stat*> all() const;
  std::size_t size() const { return stats_.size(); }
  // Changes whenever a stat is added; formulas use it to re-resolve their names.
  std::uint64_t generation() const { return generation_; }

  // Increments owed to this registry's counters (deferred_adds.hpp), settled before any of
  // them is read.
  DeferredAdds& deferred() { return deferred_; }
  // Owes `batch` `times` more times (deferred().owe), its share of the watched sums filled
  // first if a sum was watched since it was last filled. Owers go through here.
  void owe(const std::shared_ptr<AddBatch>& batch, std::uint64_t times = 1);
  // A sum of counters of this registry that is read without settling what is owed (see
  // deferred_adds.hpp): its parts' counts plus what the owed batches bring it. Settles first,
  // so that no batch is owed with sums filled before this one existed. Returns the sum's id.
  std::uint32_t watch_sum(const std::vector<const Counter*>& parts);
  std::uint64_t watched_sum(std::uint32_t id) const;

  // Every stat back to zero (formulas recompute, gauges keep their level); or
  // just those matching a glob.
  void reset();
  void reset(std::string_view pattern);

  Snapshot snapshot() const;

  // Dumps. JSON: {"name": {"kind", "unit", "description", "value", ...detail}}.
  // CSV: one row per scalar: name,kind,unit,value,description, with a
  // distribution expanded into name.count/.mean/.min/.max/.p50/.p90/.p99.
  nlohmann::json to_json() const;
  void write_json(std::ostream& os, int indent = 2) const;
  void write_csv(std::ostream& os) const;

  static bool valid_name(std::string_view name);

 private:
  template <class T, class... A>
  T& add(std::string_view name, A&&... args);

  // Counters side by side in creation order, in chunks that never move: a model's counters
  // (a pseudo-channel's, an engine's) are updated together on hot paths.
  struct alignas(Counter) CounterSlot {
    unsigned char bytes[sizeof(Counter)];
  };
  static constexpr std::size_t kCountersPerChunk = 4096;
  std::map<std::string, Stat*, std::less<>> stats_;       // by name; owned by the two below
  std::vector<std::unique_ptr<CounterSlot[]>> counters_;  // placement-constructed Counters
  std::vector<std::unique_ptr<std::uint64_t[]>> counts_;  // their counts, same chunking
  std::size_t counters_used_ = 0;                         // in the last chunk
  std::vector<std::unique_ptr<Stat>> owned_;              // the other kinds
  std::uint64_t generation_ = 0;
  DeferredAdds deferred_;
  std::vector<std::vector<const std::uint64_t*>> sum_parts_;                        // per watched sum
  std::unordered_map<const std::uint64_t*, std::vector<std::uint32_t>> slot_sums_;  // slot -> sums
  std::uint64_t sums_generation_ = 0;  // changes with every watch_sum: batches' sums are filled again
};

// Scope: a registry seen through a name prefix, so a model registers
// "active_cycles" and gets "dev0.me3.active_cycles". Cheap to copy; nest with sub().
class Scope {
 public:
  Scope(Registry& registry, std::string prefix) : registry_(&registry), prefix_(std::move(prefix)) {}

  Scope sub(std::string_view child) const { return Scope(*registry_, join(child)); }
  const std::string& prefix() const { return prefix_; }
  Registry& registry() const { return *registry_; }
  std::string join(std::string_view leaf) const;

  Counter& counter(std::string_view leaf, std::string_view unit, std::string_view description) const {
    return registry_->counter(join(leaf), unit, description);
  }
  Gauge& gauge(std::string_view leaf, std::string_view unit, std::string_view description) const {
    return registry_->gauge(join(leaf), unit, description);
  }
  Distribution& distribution(std::string_view leaf, std::string_view unit, std::string_view description,
                             DistributionSpec spec = {}) const {
    return registry_->distribution(join(leaf), unit, description, spec);
  }
  // Names in the expression are used as written (absolute); write "{}" for this
  // scope's prefix: "{}.bytes_read / {}.busy_time".
  Formula& formula(std::string_view leaf, std::string_view unit, std::string_view description,
                   const std::string& expression) const;

 private:
  Registry* registry_;
  std::string prefix_;
};

}  // namespace sohusim::counters
