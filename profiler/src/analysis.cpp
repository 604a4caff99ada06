#include "sohusim/profiler/analysis.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace sohusim::profiler {

namespace {

// `v` with `decimals` digits after the point.
std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string ns_text(double ns) {
  if (ns >= 1e9) return fixed(ns * 1e-9, 3) + " s";
  if (ns >= 1e6) return fixed(ns * 1e-6, 3) + " ms";
  if (ns >= 1e3) return fixed(ns * 1e-3, 2) + " us";
  return fixed(ns, 0) + " ns";
}

std::string pct(double f) {
  return fixed(f * 100, 1) + "%";
}

// Speed of light of `work` done at `place` in `secs`, per resource, and the top one.
template <typename A>
void speed_of_light(const RunProfile& p, const std::string& place, const double (&work)[kResources], double secs,
                    const AnalysisOptions& o, A& a) {
  for (unsigned r = 0; r < kResources; ++r) {
    const Unit* u = p.unit(place, static_cast<Resource>(r));
    if (work[r] <= 0 || u == nullptr || secs <= 0) continue;
    a.sol[r] = work[r] / secs / u->peak;
    if (a.sol[r] > a.top_sol) {
      a.top_sol = a.sol[r];
      a.top = static_cast<Resource>(r);
    }
  }
  a.verdict = a.top_sol >= o.bound_threshold ? verdict_of(a.top) : Verdict::Latency;
}

void analyse_op(const RunProfile& p, const OpRecord& op, const AnalysisOptions& o, OpAnalysis& a) {
  a.op = op.id;
  const double secs = op.duration_ns * 1e-9;
  speed_of_light(p, op.place, op.work, secs, o, a);
  Roofline& rf = a.roofline;
  const double flops = op.work[static_cast<unsigned>(Resource::Compute)];
  const Unit* cu = p.unit(op.place, Resource::Compute);
  const Unit* hu = p.unit(op.place, Resource::Hbm);
  const Unit* su = p.unit(op.place, Resource::Sram);
  const double hbm = op.work[static_cast<unsigned>(Resource::Hbm)];
  const double sram = op.work[static_cast<unsigned>(Resource::Sram)];
  rf.achieved = secs > 0 ? flops / secs : 0;
  if (cu == nullptr) return;
  rf.attainable = cu->peak;
  if (hu != nullptr) {
    rf.ridge_hbm = cu->peak / hu->peak;
    if (hbm > 0) {
      rf.intensity_hbm = flops / hbm;
      rf.attainable = std::min(rf.attainable, rf.intensity_hbm * hu->peak);
    }
  }
  if (su != nullptr) {
    rf.ridge_sram = cu->peak / su->peak;
    if (sram > 0) {
      rf.intensity_sram = flops / sram;
      rf.attainable = std::min(rf.attainable, rf.intensity_sram * su->peak);
    }
  }
}

void kinds_of_commands(const RunProfile& p, const AnalysisOptions& o, Analysis& a) {
  std::map<std::string, std::size_t> index;
  for (const CommandAnalysis& c : a.commands) {
    const CommandStat& row = p.commands[c.row];
    const auto [it, fresh] = index.emplace(row.name, a.kinds.size());
    if (fresh) {
      a.kinds.emplace_back();
      a.kinds.back().name = row.name;
    }
    CommandKind& k = a.kinds[it->second];
    const double t = row.count * row.mean;
    k.rows.push_back(c.row);
    k.count += row.count;
    k.total_ns += t;
    for (unsigned r = 0; r < kResources; ++r) k.sol[r] += c.sol[r] * t;
  }
  for (CommandKind& k : a.kinds) {
    for (unsigned r = 0; r < kResources; ++r) {
      k.sol[r] = k.total_ns > 0 ? k.sol[r] / k.total_ns : 0;
      if (k.sol[r] > k.top_sol) {
        k.top_sol = k.sol[r];
        k.top = static_cast<Resource>(r);
      }
    }
    k.verdict = k.top_sol >= o.bound_threshold ? verdict_of(k.top) : Verdict::Latency;
  }
  std::stable_sort(a.kinds.begin(), a.kinds.end(),
                   [](const CommandKind& x, const CommandKind& y) { return x.total_ns > y.total_ns; });
}

void critical_path(const RunProfile& p, const AnalysisOptions& o, Analysis& a) {
  if (p.ops.empty()) return;
  // The previous op on the same place, in start order.
  std::vector<std::int64_t> prev(p.ops.size(), -1);
  std::map<std::string, std::vector<std::uint32_t>> by_place;
  for (const OpRecord& op : p.ops) by_place[op.place].push_back(op.id);
  for (auto& [place, ids] : by_place) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](std::uint32_t x, std::uint32_t y) { return p.ops[x].start_ns < p.ops[y].start_ns; });
    for (std::size_t i = 1; i < ids.size(); ++i) prev[ids[i]] = ids[i - 1];
  }
  double span = p.end_ns - p.start_ns;
  double host_busy = 0;
  for (const HostActivity& h : p.hosts) host_busy = std::max(host_busy, span > 0 ? h.busy_ns / span : 0);
  const Verdict gap_verdict = host_busy >= o.host_busy_threshold ? Verdict::Host : Verdict::Latency;

  std::uint32_t cur = 0;
  for (const OpRecord& op : p.ops) {
    if (op.end_ns() > p.ops[cur].end_ns()) cur = op.id;
  }
  std::vector<std::uint32_t> path{cur};
  std::vector<Gap> gaps;
  std::vector<bool> seen(p.ops.size(), false);
  seen[cur] = true;
  for (;;) {
    const OpRecord& x = p.ops[cur];
    std::int64_t best = -1;
    auto consider = [&](std::int64_t c) {
      if (c < 0 || seen[static_cast<std::size_t>(c)]) return;
      const OpRecord& y = p.ops[static_cast<std::size_t>(c)];
      if (y.start_ns > x.start_ns) return;  // cannot have held x back
      if (best < 0 || y.end_ns() > p.ops[static_cast<std::size_t>(best)].end_ns()) best = c;
    };
    for (std::uint32_t d : x.deps) consider(d);
    consider(prev[cur]);
    if (best < 0) break;
    const OpRecord& y = p.ops[static_cast<std::size_t>(best)];
    if (x.start_ns - y.end_ns() > 0) {
      Gap g;
      g.before = y.id;
      g.after = x.id;
      g.start_ns = y.end_ns();
      g.end_ns = x.start_ns;
      g.launch = y.launch != x.launch;
      g.verdict = gap_verdict;
      gaps.push_back(g);
    }
    cur = static_cast<std::uint32_t>(best);
    seen[cur] = true;
    path.push_back(cur);
  }
  std::reverse(path.begin(), path.end());
  std::reverse(gaps.begin(), gaps.end());
  a.critical_path = path;
  a.gaps = gaps;
  a.critical_ns = p.ops[path.back()].end_ns() - p.ops[path.front()].start_ns;
  // Steps without a breakdown (kind "step") divide like the broken-down ops of their phase:
  // each verdict's share of those ops' span, the rest of the span (gaps between them) going
  // to latency/launch.
  std::map<std::string, std::pair<double, double>> phase_span;  // phase -> first start, last end
  std::map<std::string, std::array<double, kVerdicts>> phase_ns;
  for (const OpRecord& op : p.ops) {
    if (op.kind == "step") continue;
    auto it = phase_span.find(op.phase);
    if (it == phase_span.end()) it = phase_span.emplace(op.phase, std::make_pair(op.start_ns, op.end_ns())).first;
    it->second.first = std::min(it->second.first, op.start_ns);
    it->second.second = std::max(it->second.second, op.end_ns());
    phase_ns[op.phase][static_cast<unsigned>(a.ops[op.id].verdict)] += op.duration_ns;
  }
  for (std::uint32_t id : path) {
    a.ops[id].critical = true;
    const OpRecord& op = p.ops[id];
    const auto sp = phase_span.find(op.phase);
    if (op.kind != "step" || sp == phase_span.end() || sp->second.second <= sp->second.first) {
      a.verdict_ns[static_cast<unsigned>(a.ops[id].verdict)] += op.duration_ns;
      continue;
    }
    const double width = sp->second.second - sp->second.first;
    double given = 0;
    for (unsigned v = 0; v < kVerdicts; ++v) {
      const double part = op.duration_ns * std::min(1.0, phase_ns[op.phase][v] / width);
      a.verdict_ns[v] += part;
      given += part;
    }
    a.verdict_ns[static_cast<unsigned>(Verdict::Latency)] += std::max(0.0, op.duration_ns - given);
  }
  for (const Gap& g : gaps) a.verdict_ns[static_cast<unsigned>(g.verdict)] += g.end_ns - g.start_ns;
  unsigned best_v = static_cast<unsigned>(Verdict::Latency);
  for (unsigned v = 0; v < kVerdicts; ++v) {
    if (a.verdict_ns[v] > a.verdict_ns[best_v]) best_v = v;
  }
  a.run_verdict = static_cast<Verdict>(best_v);
}

void summarise_places(const RunProfile& p, Analysis& a) {
  std::vector<std::string> places;
  for (const Unit& u : p.units) {
    if (std::find(places.begin(), places.end(), u.place) == places.end()) places.push_back(u.place);
  }
  for (const std::string& place : places) {
    PlaceSummary s;
    s.place = place;
    double covered = 0, moved[kResources] = {};
    for (const Window& w : p.windows) {
      if (w.place != place) continue;
      const double dt = (w.end_ns - w.start_ns) * 1e-9;
      covered += dt;
      for (unsigned r = 0; r < kResources; ++r) moved[r] += w.rate[r] * dt;
      s.stalls += w.stalls;
    }
    if (covered <= 0) {  // no windows: the ops' work over the profiled span
      covered = (p.end_ns - p.start_ns) * 1e-9;
      for (const OpRecord& op : p.ops) {
        if (op.place != place) continue;
        for (unsigned r = 0; r < kResources; ++r) moved[r] += op.work[r];
      }
    }
    for (unsigned r = 0; r < kResources; ++r) {
      const Unit* u = p.unit(place, static_cast<Resource>(r));
      if (u != nullptr && covered > 0) s.sol[r] = moved[r] / covered / u->peak;
    }
    a.places.push_back(s);
  }
}

struct Findings {
  const AnalysisOptions& o;
  std::map<std::string, std::vector<Finding>> by_detector;
  void add(Finding f) { by_detector[f.detector].push_back(std::move(f)); }
  std::vector<Finding> take() {
    std::vector<Finding> out;
    for (auto& [name, list] : by_detector) {
      std::stable_sort(list.begin(), list.end(),
                       [](const Finding& x, const Finding& y) { return x.cost_ns > y.cost_ns; });
      if (list.size() > o.max_findings_per_detector) list.resize(o.max_findings_per_detector);
      out.insert(out.end(), list.begin(), list.end());
    }
    std::stable_sort(out.begin(), out.end(), [](const Finding& x, const Finding& y) { return x.cost_ns > y.cost_ns; });
    return out;
  }
};

double fact(const RunProfile& p, const std::string& place, const char* key, double fallback = -1) {
  const auto it = p.facts.find(place);
  if (it == p.facts.end()) return fallback;
  const auto k = it->second.find(key);
  return k == it->second.end() ? fallback : k->second;
}

void detect(const RunProfile& p, const AnalysisOptions& o, Analysis& a) {
  Findings f{o, {}};
  const double span = p.end_ns - p.start_ns;
  // PCIe saturation, per window and direction.
  for (const Window& w : p.windows) {
    for (Resource r : {Resource::PcieH2d, Resource::PcieD2h}) {
      const Unit* u = p.unit(w.place, r);
      if (u == nullptr) continue;
      const double s = w.rate[static_cast<unsigned>(r)] / u->peak;
      if (s < o.saturation) continue;
      Finding x;
      x.detector = "pcie_saturation";
      x.place = w.place;
      x.start_ns = w.start_ns;
      x.end_ns = w.end_ns;
      x.cost_ns = w.end_ns - w.start_ns;
      x.numbers = {{"rate_gbps", w.rate[static_cast<unsigned>(r)] * 1e-9}, {"peak_gbps", u->peak * 1e-9}, {"sol", s}};
      x.message = "PCIe " + std::string(r == Resource::PcieH2d ? "host-to-device" : "device-to-host") + " of " +
                  w.place + " at " + pct(s) + " of its peak (" + fixed(x.numbers["rate_gbps"], 2) + " of " +
                  fixed(x.numbers["peak_gbps"], 2) + " GB/s) from " + ns_text(w.start_ns) + " to " + ns_text(w.end_ns);
      f.add(std::move(x));
    }
  }
  // Places: payload size, row hits, bank conflicts.
  for (const PlaceSummary& s : a.places) {
    const double mps = fact(p, s.place, "pcie_mps_bytes");
    for (const auto& [key, dir, res] : {std::tuple<const char*, const char*, Resource>{
                                            "pcie_h2d_avg_payload_bytes", "host-to-device", Resource::PcieH2d},
                                        {"pcie_d2h_avg_payload_bytes", "device-to-host", Resource::PcieD2h}}) {
      const double payload = fact(p, s.place, key);
      if (mps <= 0 || payload <= 0 || payload >= o.small_payload * mps) continue;
      if (s.sol[static_cast<unsigned>(res)] < o.small_payload_min_sol) continue;
      Finding x;
      x.detector = "pcie_small_payload";
      x.place = s.place;
      x.start_ns = p.start_ns;
      x.end_ns = p.end_ns;
      x.cost_ns = span * s.sol[static_cast<unsigned>(res)] * (1 - payload / mps);
      x.numbers = {{"avg_payload_bytes", payload}, {"mps_bytes", mps}, {"sol", s.sol[static_cast<unsigned>(res)]}};
      x.message = std::string("PCIe ") + dir + " TLPs of " + s.place + " carry " + fixed(payload, 0) +
                  " bytes on average, " + pct(payload / mps) + " of the " + fixed(mps, 0) +
                  "-byte max payload: headers and DLLPs take a large share of the link";
      f.add(std::move(x));
    }
    const double hit = fact(p, s.place, "hbm_row_hit_rate");
    const double hbm_sol = s.sol[static_cast<unsigned>(Resource::Hbm)];
    if (hit >= 0 && hit < o.row_hit_floor && hbm_sol >= o.busy_floor) {
      Finding x;
      x.detector = "hbm_row_miss";
      x.place = s.place;
      x.start_ns = p.start_ns;
      x.end_ns = p.end_ns;
      x.cost_ns = span * hbm_sol * (1 - hit);
      x.numbers = {{"row_hit_rate", hit}, {"hbm_sol", hbm_sol}};
      x.message = "HBM of " + s.place + " runs at " + pct(hbm_sol) + " of peak with a row-hit rate of only " +
                  pct(hit) + ": activates and precharges cost bandwidth (address mapping or access order)";
      f.add(std::move(x));
    }
    const double conflicts = fact(p, s.place, "sram_bank_conflicts"), accesses = fact(p, s.place, "sram_accesses");
    if (conflicts > 0 && accesses > 0 && conflicts / accesses >= o.conflict_ceiling) {
      Finding x;
      x.detector = "sram_bank_conflicts";
      x.place = s.place;
      x.start_ns = p.start_ns;
      x.end_ns = p.end_ns;
      x.cost_ns = span * conflicts / accesses * s.sol[static_cast<unsigned>(Resource::Sram)];
      x.numbers = {{"conflicts", conflicts}, {"accesses", accesses}, {"rate", conflicts / accesses}};
      x.message = "SRAM of " + s.place + ": " + pct(conflicts / accesses) + " of accesses hit a busy bank (" +
                  fixed(conflicts, 0) + " of " + fixed(accesses, 0) + ")";
      f.add(std::move(x));
    }
  }
  // Gaps on the critical path.
  for (const Gap& g : a.gaps) {
    const double len = g.end_ns - g.start_ns;
    if (len < o.gap_ns) continue;
    const OpRecord& before = p.ops[g.before];
    const OpRecord& after = p.ops[g.after];
    Finding x;
    x.detector = g.launch ? "launch_gap" : "bubble";
    x.place = after.place;
    x.start_ns = g.start_ns;
    x.end_ns = g.end_ns;
    x.cost_ns = len;
    x.numbers = {{"gap_ns", len}, {"before", static_cast<double>(g.before)}, {"after", static_cast<double>(g.after)}};
    x.message = std::string(g.launch ? "launch gap" : "bubble") + " of " + ns_text(len) + " on the critical path on " +
                after.place + " between `" + before.name + "` (ends " + ns_text(g.start_ns) + ") and `" + after.name +
                "`" + (g.verdict == Verdict::Host ? ": the host was busy launching" : "");
    f.add(std::move(x));
  }
  // A device idle while another works, per window.
  std::map<std::pair<double, double>, std::vector<const Window*>> by_time;
  for (const Window& w : p.windows) by_time[{w.start_ns, w.end_ns}].push_back(&w);
  auto busy = [&](const Window& w) {
    if (w.busy >= 0) return w.busy;
    double s = 0;
    for (Resource r : {Resource::Compute, Resource::Hbm}) {
      const Unit* u = p.unit(w.place, r);
      if (u != nullptr) s = std::max(s, w.rate[static_cast<unsigned>(r)] / u->peak);
    }
    return s;
  };
  for (const auto& [span_key, ws] : by_time) {
    const Window* busiest = nullptr;
    for (const Window* w : ws) {
      if (p.unit(w->place, Resource::Compute) == nullptr) continue;  // devices only
      if (busiest == nullptr || busy(*w) > busy(*busiest)) busiest = w;
    }
    if (busiest == nullptr || busy(*busiest) < o.busy_floor) continue;
    for (const Window* w : ws) {
      if (p.unit(w->place, Resource::Compute) == nullptr || busy(*w) >= o.idle_floor) continue;
      Finding x;
      x.detector = "idle_device";
      x.place = w->place;
      x.start_ns = w->start_ns;
      x.end_ns = w->end_ns;
      x.cost_ns = w->end_ns - w->start_ns;
      const bool by_commands = w->busy >= 0 && busiest->busy >= 0;
      x.numbers = {{"busy", busy(*w)}, {"other_busy", busy(*busiest)}};
      const char* measure = by_commands ? " of the time with a command in flight" : " of compute/HBM peak";
      x.message = w->place + " is idle (" + pct(busy(*w)) + measure + ") from " + ns_text(w->start_ns) + " to " +
                  ns_text(w->end_ns) + " while " + busiest->place + " works (" + pct(busy(*busiest)) + ")";
      f.add(std::move(x));
    }
  }
  a.findings = f.take();
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Compute:
      return "compute-bound";
    case Verdict::Hbm:
      return "HBM-bound";
    case Verdict::Pcie:
      return "PCIe-bound";
    case Verdict::Interconnect:
      return "interconnect-bound";
    case Verdict::Latency:
      return "latency/launch-bound";
    case Verdict::Host:
      return "host-bound";
  }
  return "?";
}

Verdict verdict_of(Resource r) {
  switch (r) {
    case Resource::Compute:
    case Resource::Vector:
      return Verdict::Compute;
    case Resource::Hbm:
    case Resource::Sram:
      return Verdict::Hbm;
    case Resource::PcieH2d:
    case Resource::PcieD2h:
      return Verdict::Pcie;
    case Resource::Link:
    case Resource::Network:
      return Verdict::Interconnect;
    case Resource::Host:
      return Verdict::Host;
  }
  return Verdict::Latency;
}

double Analysis::verdict_share(Verdict v) const {
  double total = 0;
  for (double x : verdict_ns) total += x;
  return total > 0 ? verdict_ns[static_cast<unsigned>(v)] / total : 0;
}

std::string kind_places(const RunProfile& profile, const CommandKind& kind) {
  if (kind.rows.empty()) return "";
  if (kind.rows.size() <= 3) {
    std::string s;
    for (std::uint32_t r : kind.rows) s += (s.empty() ? "" : ", ") + profile.commands[r].place;
    return s;
  }
  return profile.commands[kind.rows.front()].place + " .. " + profile.commands[kind.rows.back()].place + " (" +
         std::to_string(kind.rows.size()) + " places)";
}

Analysis analyze(const RunProfile& profile, const AnalysisOptions& options) {
  profile.validate();
  Analysis a;
  a.ops.resize(profile.ops.size());
  for (const OpRecord& op : profile.ops) analyse_op(profile, op, options, a.ops[op.id]);
  for (std::size_t i = 0; i < profile.commands.size(); ++i) {
    const CommandStat& c = profile.commands[i];
    if (!c.has_work()) continue;
    CommandAnalysis ca;
    ca.row = static_cast<std::uint32_t>(i);
    speed_of_light(profile, c.place, c.work, c.count * c.mean * 1e-9, options, ca);
    a.commands.push_back(ca);
  }
  kinds_of_commands(profile, options, a);
  critical_path(profile, options, a);
  summarise_places(profile, a);
  detect(profile, options, a);
  return a;
}

}  // namespace sohusim::profiler
