#include "sohusim/platform/profiling/profile_sampler.hpp"

#include <algorithm>
#include <stdexcept>

#include "sohusim/device/sohu_device.hpp"
#include "sohusim/platform/system.hpp"

namespace sohusim::platform {

namespace {

std::vector<const counters::Stat*> stats(const counters::Registry& r, const std::string& pattern) {
  return r.glob(pattern);
}

void append(std::vector<const counters::Stat*>& to, const std::vector<const counters::Stat*>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

namespace {
// Trace counters per place kind: name, unit, the window's value.
struct TraceColumn {
  const char* name;
  const char* unit;
  double (*value)(const profiler::Window& w, double engine_cycles);
};
double rate(const profiler::Window& w, profiler::Resource r) {
  return w.rate[static_cast<unsigned>(r)];
}
const TraceColumn kDeviceColumns[] = {
    {"compute TFLOP/s", "TFLOP/s",
     [](const profiler::Window& w, double) { return rate(w, profiler::Resource::Compute) * 1e-12; }},
    {"HBM GB/s", "GB/s", [](const profiler::Window& w, double) { return rate(w, profiler::Resource::Hbm) * 1e-9; }},
    {"SRAM GB/s", "GB/s", [](const profiler::Window& w, double) { return rate(w, profiler::Resource::Sram) * 1e-9; }},
    {"PCIe h2d GB/s", "GB/s",
     [](const profiler::Window& w, double) { return rate(w, profiler::Resource::PcieH2d) * 1e-9; }},
    {"PCIe d2h GB/s", "GB/s",
     [](const profiler::Window& w, double) { return rate(w, profiler::Resource::PcieD2h) * 1e-9; }},
    {"links GB/s", "GB/s", [](const profiler::Window& w, double) { return rate(w, profiler::Resource::Link) * 1e-9; }},
    {"matrix engines busy %", "%",
     [](const profiler::Window& w, double cycles) {
       return cycles > 0 ? 100.0 * (w.stalls.busy_useful + w.stalls.busy_padding + w.stalls.busy_overhead) / cycles
                         : 0.0;
     }},
    {"commands in flight %", "%", [](const profiler::Window& w, double) { return 100.0 * std::max(0.0, w.busy); }},
};
const TraceColumn kHostColumns[] = {
    {"CPU busy %", "%", [](const profiler::Window& w, double) { return 100.0 * rate(w, profiler::Resource::Host); }},
    {"network GB/s", "GB/s",
     [](const profiler::Window& w, double) { return rate(w, profiler::Resource::Network) * 1e-9; }},
};
}  // namespace

ProfileSampler::ProfileSampler(System& system, counters::Registry& registry, std::uint64_t interval_ns,
                               std::size_t max_samples, counters::TraceRecorder* trace)
    : system_(system),
      registry_(registry),
      interval_ns_(interval_ns),
      max_samples_(std::max<std::size_t>(max_samples, 4)),
      trace_(trace != nullptr && trace->enabled() ? trace : nullptr) {
  if (interval_ns == 0) throw std::invalid_argument("profile sampling interval must be > 0 ns");
  const unsigned per_host = system.spec().hosts.empty() ? 0 : system.spec().hosts.front().devices;
  for (unsigned d = 0; d < system.device_count(); ++d) {
    Place p;
    p.name = "dev" + std::to_string(d);
    p.device = true;
    p.host = per_host ? d / per_host : 0;
    const device::DeviceParams& dp = system.device(d).params();
    p.engines = dp.matrix.engines;
    p.clock_hz = dp.clock_hz;
    const std::string me = p.name + ".me*.";
    append(p.columns[kCompute], stats(registry, me + "flops.*"));
    append(p.columns[kVector], stats(registry, p.name + ".ve*.flops.*"));
    append(p.columns[kHbm], stats(registry, p.name + ".hbm.port.bytes_read"));
    append(p.columns[kHbm], stats(registry, p.name + ".hbm.port.bytes_written"));
    append(p.columns[kSram], stats(registry, p.name + ".sram.bytes_read"));
    append(p.columns[kSram], stats(registry, p.name + ".sram.bytes_written"));
    const std::string link =
        "host" + std::to_string(p.host) + ".pcie.dev" + std::to_string(per_host ? d % per_host : d);
    append(p.columns[kPcieH2d], stats(registry, link + ".down.payload_bytes"));
    append(p.columns[kPcieD2h], stats(registry, link + ".up.payload_bytes"));
    append(p.columns[kLink], stats(registry, p.name + ".c2c.to*.tx.bytes"));
    append(p.columns[kActive], stats(registry, me + "active_cycles"));
    append(p.columns[kUseful], stats(registry, me + "macs_useful"));
    append(p.columns[kIssued], stats(registry, me + "macs_issued"));
    append(p.columns[kMacCycles], stats(registry, me + "mac_cycles"));
    append(p.columns[kStallHbm], stats(registry, me + "stall_hbm_cycles"));
    append(p.columns[kStallSram], stats(registry, me + "stall_sram_cycles"));
    append(p.columns[kStallSram], stats(registry, me + "stall_store_cycles"));
    append(p.columns[kStallDep], stats(registry, me + "stall_dependency_cycles"));
    append(p.columns[kBusy], stats(registry, p.name + ".cp.busy_ns"));
    // What the sampler reads, at every sample and (the stamp columns) at every TIMESTAMP
    // command: the counters of a column as one watched sum, read without settling the
    // replayed commands' owed increments a few commands at a time (deferred_adds.hpp).
    for (unsigned c = 0; c < kColumns; ++c) {
      std::vector<const counters::Counter*> parts;
      std::vector<const counters::Stat*> others;
      for (const counters::Stat* s : p.columns[c]) {
        if (const auto* counter = dynamic_cast<const counters::Counter*>(s)) {
          parts.push_back(counter);
        } else {
          others.push_back(s);
        }
      }
      if (parts.empty()) continue;
      p.sums[c] = static_cast<std::int64_t>(registry.watch_sum(parts));
      p.columns[c] = std::move(others);
    }
    if (trace_ != nullptr) {
      for (const TraceColumn& c : kDeviceColumns)
        p.tracks.push_back(trace_->counter_track(system.device_track(d), c.name, c.unit));
    }
    places_.push_back(std::move(p));
  }
  for (unsigned h = 0; h < system.host_count(); ++h) {
    Place p;
    p.name = "host" + std::to_string(h);
    p.host = h;
    append(p.columns[kLink], stats(registry, "net.h" + std::to_string(h) + "_h*.bytes"));
    if (trace_ != nullptr) {
      for (const TraceColumn& c : kHostColumns)
        p.tracks.push_back(trace_->counter_track(system.host_track(h), c.name, c.unit));
    }
    places_.push_back(std::move(p));
  }
}

double ProfileSampler::value(const Place& p, unsigned column) const {
  if (!p.device && column == kActive) return static_cast<double>(system_.access(p.host).cpu_busy_ns());
  double v = p.sums[column] >= 0
                 ? static_cast<double>(registry_.watched_sum(static_cast<std::uint32_t>(p.sums[column])))
                 : 0.0;
  for (const counters::Stat* s : p.columns[column]) v += s->value();
  return v;
}

void ProfileSampler::sample(std::uint64_t now_ns) {
  if (!times_.empty() && now_ns <= times_.back()) return;
  // No System::sync_stats() here: it closes the links' trace bandwidth bins early; the
  // counters read here are kept up to date as traffic moves.
  std::vector<double> row;
  row.reserve(places_.size() * kColumns);
  for (const Place& p : places_) {
    for (unsigned c = 0; c < kColumns; ++c) row.push_back(value(p, c));
  }
  times_.push_back(now_ns);
  rows_.push_back(std::move(row));
  if (trace_ != nullptr && times_.size() > 1) trace_window(times_.size() - 1);
  if (times_.size() > max_samples_) {
    // Keep samples 0, 2, 4, ... and the newest: cumulative counters merge windows exactly.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < times_.size(); ++i) {
      if (i % 2 == 0 || i + 1 == times_.size()) {
        if (kept != i) {
          times_[kept] = times_[i];
          rows_[kept] = std::move(rows_[i]);
        }
        ++kept;
      }
    }
    times_.resize(kept);
    rows_.resize(kept);
    interval_ns_ *= 2;
  }
}

profiler::Window ProfileSampler::window(std::size_t i, std::size_t pi) const {
  using profiler::Resource;
  const double dt_ns = static_cast<double>(times_[i] - times_[i - 1]);
  const double dt_s = dt_ns * 1e-9;
  const Place& p = places_[pi];
  auto delta = [&](unsigned c) { return std::max(0.0, rows_[i][pi * kColumns + c] - rows_[i - 1][pi * kColumns + c]); };
  profiler::Window w;
  w.place = p.name;
  w.start_ns = static_cast<double>(times_[i - 1]);
  w.end_ns = static_cast<double>(times_[i]);
  auto set = [&](Resource r, double v) { w.rate[static_cast<unsigned>(r)] = v; };
  if (p.device) {
    set(Resource::Compute, delta(kCompute) / dt_s);
    set(Resource::Vector, delta(kVector) / dt_s);
    set(Resource::Hbm, delta(kHbm) / dt_s);
    set(Resource::Sram, delta(kSram) / dt_s);
    set(Resource::PcieH2d, delta(kPcieH2d) / dt_s);
    set(Resource::PcieD2h, delta(kPcieD2h) / dt_s);
    set(Resource::Link, delta(kLink) / dt_s);
    w.stalls = buckets(p, &rows_[i - 1][pi * kColumns], &rows_[i][pi * kColumns], dt_s);
    if (!p.columns[kBusy].empty()) w.busy = std::min(1.0, delta(kBusy) / dt_ns);
  } else {
    set(Resource::Host, delta(kActive) / dt_ns);
    set(Resource::Network, delta(kLink) / dt_s);
  }
  return w;
}

profiler::StallBuckets ProfileSampler::buckets(const Place& p, const double* from, const double* to, double dt_s) {
  auto delta = [&](unsigned c) { return std::max(0.0, to[c] - from[c]); };
  profiler::StallBuckets b;
  // Active cycles: the issued MACs' share at the array's peak, useful or padding, and the
  // overhead around them (fill, drain, weight loads, the softmax on the engine's lanes).
  const double active = delta(kActive), issued = delta(kIssued);
  const double macs = std::min(active, delta(kMacCycles));
  b.busy_useful = issued > 0 ? macs * std::min(1.0, delta(kUseful) / issued) : 0;
  b.busy_padding = macs - b.busy_useful;
  b.busy_overhead = active - macs;
  b.wait_hbm = delta(kStallHbm);
  b.wait_sram = delta(kStallSram);
  b.wait_dependency = delta(kStallDep);
  const double cycles = p.engines * dt_s * p.clock_hz;
  b.idle = std::max(0.0, cycles - (active + b.wait_hbm + b.wait_sram + b.wait_dependency));
  return b;
}

void ProfileSampler::stamp(unsigned device, std::uint64_t device_ns, std::uint64_t now_ns) {
  if (device >= places_.size() || !places_[device].device || stamp_count_ >= kMaxStamps) return;
  if (stamps_.size() <= device) stamps_.resize(device + 1);
  Stamp st;
  st.now_ns = now_ns;
  // Only what stalls_between and sram_bytes_between read: a stamp is taken at every TIMESTAMP
  // command, and the FLOP columns alone are an engine count x data types of counters.
  for (unsigned c : kStampColumns) st.values[c] = value(places_[device], c);
  if (stamps_[device].emplace(device_ns, st).second) ++stamp_count_;
}

std::pair<const ProfileSampler::Stamp*, const ProfileSampler::Stamp*> ProfileSampler::stamps(unsigned device,
                                                                                             std::uint64_t from,
                                                                                             std::uint64_t to) const {
  if (device >= stamps_.size()) return {nullptr, nullptr};
  const auto a = stamps_[device].find(from), b = stamps_[device].find(to);
  if (a == stamps_[device].end() || b == stamps_[device].end() || b->second.now_ns < a->second.now_ns)
    return {nullptr, nullptr};
  return {&a->second, &b->second};
}

bool ProfileSampler::stalls_between(unsigned device, std::uint64_t from_device_ns, std::uint64_t to_device_ns,
                                    profiler::StallBuckets& out) const {
  const auto [a, b] = stamps(device, from_device_ns, to_device_ns);
  if (a == nullptr) return false;
  const double dt_s = static_cast<double>(b->now_ns - a->now_ns) * 1e-9;
  out = buckets(places_[device], a->values, b->values, dt_s);
  return true;
}

bool ProfileSampler::sram_bytes_between(unsigned device, std::uint64_t from_device_ns, std::uint64_t to_device_ns,
                                        double& out) const {
  const auto [a, b] = stamps(device, from_device_ns, to_device_ns);
  if (a == nullptr) return false;
  out = std::max(0.0, b->values[kSram] - a->values[kSram]);
  return true;
}

void ProfileSampler::trace_window(std::size_t i) {
  for (std::size_t pi = 0; pi < places_.size(); ++pi) {
    const Place& p = places_[pi];
    const profiler::Window w = window(i, pi);
    const double cycles = p.engines * (w.end_ns - w.start_ns) * 1e-9 * p.clock_hz;
    const auto ts = static_cast<counters::TimeNs>(times_[i - 1]);
    for (std::size_t c = 0; c < p.tracks.size(); ++c) {
      const TraceColumn& col = p.device ? kDeviceColumns[c] : kHostColumns[c];
      trace_->counter(p.tracks[c], ts, col.value(w, cycles));
    }
  }
}

std::vector<profiler::Window> ProfileSampler::windows() const {
  std::vector<profiler::Window> out;
  out.reserve(times_.empty() ? 0 : (times_.size() - 1) * places_.size());
  for (std::size_t i = 1; i < times_.size(); ++i) {
    for (std::size_t pi = 0; pi < places_.size(); ++pi) out.push_back(window(i, pi));
  }
  return out;
}

}  // namespace sohusim::platform
