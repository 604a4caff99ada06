#include "sohusim/memory/dram_system.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "sohusim/config/config.hpp"
#include "sohusim/memory/hbm_schema.hpp"

namespace sohusim::memory {

// Finished requests, ordered by (completion cycle, issue order): a binary heap on a
// vector that keeps its capacity, so the steady state allocates nothing.
class DramSystem::Completions final : public CompletionSink {
 public:
  struct Item {
    Cycle done;
    std::uint64_t seq;
    MemRequest request;
  };

  void on_complete(const MemRequest& request, Cycle done) override {
    items_.push_back({done, seq_++, request});
    std::push_heap(items_.begin(), items_.end(), later);
  }
  bool empty() const { return items_.empty(); }
  Cycle top() const { return items_.empty() ? kNever : items_.front().done; }
  Item pop() {
    std::pop_heap(items_.begin(), items_.end(), later);
    Item item = items_.back();
    items_.pop_back();
    return item;
  }

 private:
  static bool later(const Item& a, const Item& b) { return a.done != b.done ? a.done > b.done : a.seq > b.seq; }
  std::vector<Item> items_;
  std::uint64_t seq_ = 0;
};

// Controllers by next cycle; ties go to the lower index, so runs are deterministic
// (BusArbiter::Fixed; oldest_due picks among a channel's pseudo-channels otherwise).
class DramSystem::ControllerHeap {
 public:
  explicit ControllerHeap(std::size_t n) : key_(n, kNever), pos_(n), heap_(n) {
    for (std::size_t i = 0; i < n; ++i) pos_[i] = heap_[i] = static_cast<std::uint32_t>(i);
  }
  std::uint32_t top() const { return heap_.front(); }
  Cycle top_key() const { return key_[heap_.front()]; }
  Cycle key(std::uint32_t id) const { return key_[id]; }
  void update(std::uint32_t id, Cycle key) {
    const Cycle old = key_[id];
    if (old == key) return;
    key_[id] = key;
    if (less(key, id, old, id)) {
      up(pos_[id]);
    } else {
      down(pos_[id]);
    }
  }

 private:
  static bool less(Cycle ka, std::uint32_t a, Cycle kb, std::uint32_t b) { return ka != kb ? ka < kb : a < b; }
  bool less_at(std::size_t i, std::size_t j) const { return less(key_[heap_[i]], heap_[i], key_[heap_[j]], heap_[j]); }
  void swap_at(std::size_t i, std::size_t j) {
    std::swap(heap_[i], heap_[j]);
    pos_[heap_[i]] = static_cast<std::uint32_t>(i);
    pos_[heap_[j]] = static_cast<std::uint32_t>(j);
  }
  void up(std::size_t i) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!less_at(i, parent)) break;
      swap_at(i, parent);
      i = parent;
    }
  }
  void down(std::size_t i) {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t l = 2 * i + 1;
      const std::size_t r = l + 1;
      std::size_t best = i;
      if (l < n && less_at(l, best)) best = l;
      if (r < n && less_at(r, best)) best = r;
      if (best == i) break;
      swap_at(i, best);
      i = best;
    }
  }

  std::vector<Cycle> key_;
  std::vector<std::uint32_t> pos_;
  std::vector<std::uint32_t> heap_;
};

namespace {

std::string dotted(const counters::Scope& scope) {
  return scope.prefix().empty() ? "" : scope.prefix() + ".";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void add_rollups(const counters::Scope& scope, const std::string& glob_prefix, const std::string& cycles, double tck_s,
                 double peak_bytes_per_s, const std::string& what) {
  const std::string bytes = "(sum(" + glob_prefix + "bytes_read) + sum(" + glob_prefix + "bytes_written))";
  const std::string seconds = "(" + cycles + " * " + number(tck_s) + ")";
  const std::string bandwidth = bytes + " / " + seconds + " / 1e9";
  scope.formula("bandwidth", "GB/s", "bytes read and written per second of elapsed time, " + what, bandwidth);
  scope.formula("efficiency", "ratio", "bandwidth as a fraction of the data-bus peak, " + what,
                bandwidth + " / " + number(peak_bytes_per_s / 1e9));
  scope.formula("row_hit_rate", "ratio", "row hits / accesses, " + what,
                "sum(" + glob_prefix + "row_hits) / (sum(" + glob_prefix + "row_hits) + sum(" + glob_prefix +
                    "row_misses) + sum(" + glob_prefix + "row_conflicts))");
}

}  // namespace

DramSystem::DramSystem(DramSpec spec, AddressMapping mapping, ControllerParams params, const counters::Scope& scope)
    : spec_(std::move(spec)),
      mapping_(std::move(mapping)),
      params_(params),
      cycles_(scope.counter("cycles", "cycles", "elapsed memory-clock cycles (tCK), kept by advance_to")),
      completions_(std::make_unique<Completions>()),
      heap_(std::make_unique<ControllerHeap>(spec_.org.total_pcs())) {
  check_refresh_timings(spec_, params_.refresh, "DramSystem");  // before the pseudo-channels register theirs
  const DramOrganization& org = spec_.org;
  const std::size_t channels = std::size_t{org.stacks} * org.channels;
  timings_.reserve(channels);
  for (std::size_t c = 0; c < channels; ++c) timings_.emplace_back(spec_);
  controllers_.reserve(org.total_pcs());
  const double tck_s = spec_.tCK_seconds();
  const std::string cycles_name = scope.join("cycles");
  for (std::uint32_t s = 0; s < org.stacks; ++s) {
    const counters::Scope stack_scope = scope.sub("s" + std::to_string(s));
    for (std::uint32_t c = 0; c < org.channels; ++c) {
      for (std::uint32_t p = 0; p < org.pseudo_channels; ++p) {
        const counters::Scope pc_scope = stack_scope.sub("ch" + std::to_string(c)).sub("pc" + std::to_string(p));
        controllers_.emplace_back(spec_, params_, timings_[std::size_t{s} * org.channels + c], p,
                                  PcStats(pc_scope, tck_s * 1e9), *completions_);
        add_rollups(pc_scope, dotted(pc_scope), cycles_name, tck_s, spec_.peak_bytes_per_second_per_pc(),
                    "this pseudo-channel");
      }
    }
    add_rollups(stack_scope, dotted(stack_scope) + "ch*.pc*.", cycles_name, tck_s,
                spec_.peak_bytes_per_second_per_pc() * org.pcs_per_stack(), "this stack");
  }
  add_rollups(scope, dotted(scope) + "s*.ch*.pc*.", cycles_name, tck_s, spec_.peak_bytes_per_second(), "all stacks");
}

DramSystem::~DramSystem() = default;

std::unique_ptr<DramSystem> DramSystem::from_config(const config::Config& config, const counters::Scope& scope) {
  DramSpec spec = DramSpec::from_config(config);
  const std::vector<std::string>& fields = config.get_strings("hbm.mapping.fields");
  AddressMapping mapping = fields.empty()
                               ? AddressMapping(AddressMapping::preset_fields(config.get_string("hbm.mapping.preset")),
                                                config.get_strings("hbm.mapping.xor"), spec.org)
                               : AddressMapping(fields, config.get_strings("hbm.mapping.xor"), spec.org);
  return std::make_unique<DramSystem>(std::move(spec), std::move(mapping), ControllerParams::from_config(config),
                                      scope);
}

void DramSystem::check_address(std::uint64_t addr) const {
  if (addr >= capacity_bytes()) {
    throw std::out_of_range("DRAM address " + std::to_string(addr) + " is outside the memory (capacity " +
                            std::to_string(capacity_bytes()) + " B)");
  }
  if (addr % access_bytes() != 0) {
    throw std::invalid_argument("DRAM address " + std::to_string(addr) + " is not aligned to the access size (" +
                                std::to_string(access_bytes()) + " B)");
  }
}

bool DramSystem::can_accept(std::uint64_t addr, bool write) const {
  if (addr >= capacity_bytes()) return true;
  return controllers_[index_of(mapping_.decode(addr))].can_accept(write);
}

void DramSystem::enqueue(MemRequest request) {
  check_address(request.addr);
  const DecodedAddress d = mapping_.decode(request.addr);
  const std::uint32_t i = index_of(d);
  DramController& ctrl = controllers_[i];
  if (!ctrl.can_accept(request.write)) {
    throw std::logic_error("DramSystem::enqueue: the queue for address " + std::to_string(request.addr) +
                           " is full (call can_accept first)");
  }
  if (ctrl.held() == 0) ctrl.catch_up(now_);
  request.arrival = now_;
  ctrl.enqueue(request, d, now_);
  ++pending_;
  heap_->update(i, ctrl.next_cycle());
}

void DramSystem::advance_to(Cycle cycle) {
  if (cycle < now_) {
    throw std::logic_error("DramSystem::advance_to: cycle " + std::to_string(cycle) + " is before now (" +
                           std::to_string(now_) + ")");
  }
  const Cycle start = now_;
  for (;;) {
    const Cycle tc = heap_->top_key();
    const Cycle td = completions_->top();
    if (std::min(tc, td) > cycle) break;
    if (td <= tc) {
      now_ = td;
      const Completions::Item item = completions_->pop();
      --pending_;
      complete(item.request, item.done);  // may enqueue more, at now_
    } else {
      now_ = tc;
      const std::uint32_t i = params_.bus_arbiter == BusArbiter::Oldest ? oldest_due(heap_->top(), tc) : heap_->top();
      DramController& ctrl = controllers_[i];
      ctrl.step(tc);
      heap_->update(i, ctrl.next_cycle());
    }
  }
  now_ = cycle;
  cycles_ += cycle - start;
}

std::uint32_t DramSystem::oldest_due(std::uint32_t top, Cycle t) const {
  const std::uint32_t n = spec_.org.pseudo_channels;
  const std::uint32_t first = top - top % n;
  std::uint32_t best = top;
  Cycle oldest = controllers_[top].oldest_arrival();
  for (std::uint32_t p = 0; p < n; ++p) {
    const std::uint32_t i = first + p;
    if (i == top || heap_->key(i) != t) continue;
    const Cycle a = controllers_[i].oldest_arrival();
    if (a < oldest) {
      oldest = a;
      best = i;
    }
  }
  return best;
}

Cycle DramSystem::next_event() const {
  return std::min(heap_->top_key(), completions_->top());
}

void DramSystem::sync_stats() {
  for (DramController& ctrl : controllers_) {
    if (ctrl.held() == 0) ctrl.catch_up(now_);
  }
}

DramController& DramSystem::controller(std::uint32_t stack, std::uint32_t channel, std::uint32_t pc) {
  return controllers_.at((std::size_t{stack} * spec_.org.channels + channel) * spec_.org.pseudo_channels + pc);
}

ChannelTiming& DramSystem::channel_timing(std::uint32_t stack, std::uint32_t channel) {
  return timings_.at(std::size_t{stack} * spec_.org.channels + channel);
}

}  // namespace sohusim::memory
