#include "sohusim/counters/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <new>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "sohusim/counters/glob.hpp"

namespace sohusim::counters {

bool Registry::valid_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  char prev = 0;
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    if (!ok || (c == '.' && prev == '.')) return false;
    prev = c;
  }
  return true;
}

template <class T, class... A>
T& Registry::add(std::string_view name, A&&... args) {
  if (!valid_name(name)) {
    throw std::invalid_argument("invalid stat name '" + std::string(name) +
                                "': use dot-separated segments of letters, digits, '_' and '-'");
  }
  auto it = stats_.find(name);
  if (it != stats_.end()) {
    throw std::invalid_argument("stat '" + std::string(name) + "' is registered twice (first as a " +
                                to_string(it->second->kind()) + ")");
  }
  T* stat;
  if constexpr (std::is_same_v<T, Counter>) {
    // Counters side by side in creation order: a model's counters (a pseudo-channel's, an
    // engine's) are updated together on hot paths, and then share cache lines.
    // Their counts side by side too, apart from the names (Counter::slot()).
    if (counters_.empty() || counters_used_ == kCountersPerChunk) {
      counters_.push_back(std::make_unique<CounterSlot[]>(kCountersPerChunk));
      counts_.push_back(std::make_unique<std::uint64_t[]>(kCountersPerChunk));
      counters_used_ = 0;
    }
    stat = new (&counters_.back()[counters_used_])
        Counter(&counts_.back()[counters_used_], &deferred_, std::string(name), std::forward<A>(args)...);
    ++counters_used_;
  } else {
    owned_.push_back(std::make_unique<T>(std::string(name), std::forward<A>(args)...));
    stat = static_cast<T*>(owned_.back().get());
  }
  stats_.emplace(std::string(name), stat);
  ++generation_;
  return *stat;
}

Registry::~Registry() {
  for (std::size_t c = 0; c < counters_.size(); ++c) {
    const std::size_t n = c + 1 == counters_.size() ? counters_used_ : kCountersPerChunk;
    for (std::size_t i = 0; i < n; ++i) std::launder(reinterpret_cast<Counter*>(&counters_[c][i]))->~Counter();
  }
}

Counter& Registry::counter(std::string_view name, std::string_view unit, std::string_view description) {
  return add<Counter>(name, std::string(unit), std::string(description));
}

Gauge& Registry::gauge(std::string_view name, std::string_view unit, std::string_view description) {
  return add<Gauge>(name, std::string(unit), std::string(description));
}

Distribution& Registry::distribution(std::string_view name, std::string_view unit, std::string_view description,
                                     DistributionSpec spec) {
  return add<Distribution>(name, std::string(unit), std::string(description), spec);
}

Formula& Registry::formula(std::string_view name, std::string_view unit, std::string_view description,
                           std::string expression) {
  return add<Formula>(name, std::string(unit), std::string(description), static_cast<const Registry&>(*this),
                      std::move(expression));
}

Formula& Registry::formula(std::string_view name, std::string_view unit, std::string_view description,
                           std::function<double()> fn) {
  return add<Formula>(name, std::string(unit), std::string(description), std::move(fn));
}

const Stat* Registry::find(std::string_view name) const {
  auto it = stats_.find(name);
  return it == stats_.end() ? nullptr : it->second;
}

Stat* Registry::find(std::string_view name) {
  auto it = stats_.find(name);
  return it == stats_.end() ? nullptr : it->second;
}

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

const Stat& Registry::get(std::string_view name) const {
  if (const Stat* s = find(name)) return *s;
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const auto& [n, s] : stats_) near.emplace_back(edit_distance(name, n), n);
  std::sort(near.begin(), near.end());
  std::string msg = "no stat named '" + std::string(name) + "'";
  if (!near.empty() && near.front().first <= std::max<std::size_t>(3, name.size() / 3)) {
    msg += "; did you mean '" + near.front().second + "'?";
  }
  throw std::out_of_range(msg);
}

std::vector<const Stat*> Registry::glob(std::string_view pattern) const {
  std::vector<const Stat*> out;
  if (!is_glob(pattern)) {
    if (const Stat* s = find(pattern)) out.push_back(s);
    return out;
  }
  // Everything before the first wildcard is a literal prefix: seek to it.
  const std::string prefix(pattern.substr(0, pattern.find_first_of("*?[")));
  for (auto it = stats_.lower_bound(prefix); it != stats_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (glob_match(pattern, it->first)) out.push_back(it->second);
  }
  return out;
}

std::vector<const Stat*> Registry::all() const {
  std::vector<const Stat*> out;
  out.reserve(stats_.size());
  for (const auto& kv : stats_) out.push_back(kv.second);
  return out;
}

std::uint32_t Registry::watch_sum(const std::vector<const Counter*>& parts) {
  deferred_.settle();  // nothing owed under batches filled without this sum
  const std::uint32_t id = deferred_.add_sum();
  std::vector<const std::uint64_t*> slots;
  for (const Counter* c : parts) {
    slots.push_back(c->slot());
    slot_sums_[c->slot()].push_back(id);
  }
  sum_parts_.push_back(std::move(slots));
  ++sums_generation_;
  return id;
}

std::uint64_t Registry::watched_sum(std::uint32_t id) const {
  std::uint64_t v = deferred_.owed_to_sum(id);
  for (const std::uint64_t* slot : sum_parts_.at(id)) v += *slot;
  return v;
}

void Registry::owe(const std::shared_ptr<AddBatch>& batch, std::uint64_t times) {
  if (batch->sums_generation != sums_generation_) {
    // What the batch brings each watched sum (not owed now: watch_sum settled everything).
    std::map<std::uint32_t, std::uint64_t> sums;
    for (const auto& [slot, n] : batch->adds) {
      const auto it = slot_sums_.find(slot);
      if (it == slot_sums_.end()) continue;
      for (std::uint32_t id : it->second) sums[id] += n;
    }
    batch->sums.assign(sums.begin(), sums.end());
    batch->sums_generation = sums_generation_;
  }
  deferred_.owe(batch, times);
}

void Registry::reset() {
  for (auto& kv : stats_) kv.second->reset();
}

void Registry::reset(std::string_view pattern) {
  for (const Stat* s : glob(pattern)) const_cast<Stat*>(s)->reset();
}

Snapshot Registry::snapshot() const {
  Snapshot snap;
  for (const auto& [name, s] : stats_) snap.values.emplace(name, s->value());
  return snap;
}

nlohmann::json Registry::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, s] : stats_) {
    nlohmann::json e;
    e["kind"] = to_string(s->kind());
    e["unit"] = s->unit();
    e["description"] = s->description();
    s->to_json(e);
    out[name] = std::move(e);
  }
  return out;
}

void Registry::write_json(std::ostream& os, int indent) const {
  os << to_json().dump(indent) << '\n';
}

namespace {
void csv_field(std::ostream& os, const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) {
    os << s;
    return;
  }
  os << '"';
  for (char c : s) {
    if (c == '"') os << '"';
    os << c;
  }
  os << '"';
}

void csv_number(std::ostream& os, double v) {
  if (!std::isfinite(v)) return;  // undefined: empty cell
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
    os << static_cast<long long>(v);
  } else {
    os << std::setprecision(17) << v;
  }
}

void csv_row(std::ostream& os, const std::string& name, const char* kind, const std::string& unit, double v,
             const std::string& desc) {
  csv_field(os, name);
  os << ',' << kind << ',';
  csv_field(os, unit);
  os << ',';
  csv_number(os, v);
  os << ',';
  csv_field(os, desc);
  os << '\n';
}
}  // namespace

void Registry::write_csv(std::ostream& os) const {
  os << "name,kind,unit,value,description\n";
  for (const auto& [name, s] : stats_) {
    const char* kind = to_string(s->kind());
    if (s->kind() == StatKind::Distribution) {
      const auto& d = static_cast<const Distribution&>(*s);
      csv_row(os, name + ".count", kind, "1", static_cast<double>(d.count()), s->description());
      csv_row(os, name + ".mean", kind, s->unit(), d.mean(), s->description());
      csv_row(os, name + ".min", kind, s->unit(), d.min(), s->description());
      csv_row(os, name + ".max", kind, s->unit(), d.max(), s->description());
      csv_row(os, name + ".p50", kind, s->unit(), d.percentile(0.50), s->description());
      csv_row(os, name + ".p90", kind, s->unit(), d.percentile(0.90), s->description());
      csv_row(os, name + ".p99", kind, s->unit(), d.percentile(0.99), s->description());
    } else if (s->kind() == StatKind::Gauge) {
      const auto& g = static_cast<const Gauge&>(*s);
      csv_row(os, name, kind, s->unit(), g.current(), s->description());
      csv_row(os, name + ".max", kind, s->unit(), g.max(), s->description());
    } else {
      csv_row(os, name, kind, s->unit(), s->value(), s->description());
    }
  }
}

std::string Scope::join(std::string_view leaf) const {
  if (prefix_.empty()) return std::string(leaf);
  std::string out = prefix_;
  out += '.';
  out += leaf;
  return out;
}

Formula& Scope::formula(std::string_view leaf, std::string_view unit, std::string_view description,
                        const std::string& expression) const {
  std::string expanded;
  expanded.reserve(expression.size());
  for (std::size_t i = 0; i < expression.size(); ++i) {
    if (expression.compare(i, 2, "{}") == 0) {
      expanded += prefix_;
      ++i;
    } else {
      expanded += expression[i];
    }
  }
  return registry_->formula(join(leaf), unit, description, std::move(expanded));
}

}  // namespace sohusim::counters
