#include "sohusim/memory/fast_dram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "sohusim/config/config.hpp"
#include "sohusim/config/param_table.hpp"

namespace sohusim::memory {

namespace {

constexpr std::uint32_t kClosed = 0xffffffffu;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The derived stats DramSystem registers at every level, with the same names and units,
// so reports and roll-ups read the same whichever fidelity ran.
void add_derived(const counters::Scope& scope, const std::string& glob_prefix, const std::string& cycles, double tck_s,
                 double peak, const std::string& what) {
  const std::string bytes = "(sum(" + glob_prefix + "bytes_read) + sum(" + glob_prefix + "bytes_written))";
  const std::string bandwidth = bytes + " / (" + cycles + " * " + number(tck_s) + ") / 1e9";
  scope.formula("bandwidth", "GB/s", "bytes read and written per second of elapsed time, " + what, bandwidth);
  scope.formula("efficiency", "ratio", "bandwidth as a fraction of the data-bus peak, " + what,
                bandwidth + " / " + number(peak / 1e9));
  scope.formula("row_hit_rate", "ratio", "row hits / accesses, " + what,
                "sum(" + glob_prefix + "row_hits) / (sum(" + glob_prefix + "row_hits) + sum(" + glob_prefix +
                    "row_misses) + sum(" + glob_prefix + "row_conflicts))");
}

// A calibration an embedder set wrongly would stretch bookings without end (NaN, infinity)
// or make activations free: refused, naming the term. The range is the term's row: at most
// its maximum (1e6), at least its minimum, or above 0 where the minimum is above 0 (act_gap:
// the schema's minimum is the least worth writing in a file, not a bound of the model).
void check_calibration(const FastDramCalibration& c) {
  const auto& table = FastDramCalibration::params();
  for (const auto& row : table.rows()) {
    const double v = std::get<double>(row.value(c));
    const double most = std::get<double>(*row.spec().max);
    const bool strictly = std::get<double>(*row.spec().min) > 0.0;
    const double least = strictly ? 0.0 : std::get<double>(*row.spec().min);
    if (!std::isfinite(v) || v > most || (strictly ? v <= least : v < least)) {
      const std::string name = row.spec().key.substr(table.prefix().size() + 1);
      throw std::invalid_argument("FastDramCalibration::" + name + " is " + number(v) + "; it must be " +
                                  (strictly ? "above " : "from ") + number(least) +
                                  (strictly ? " and at most" : " to") + " 1e6 cycles");
    }
  }
}

Cycle up(double v) {
  return static_cast<Cycle>(std::ceil(v - 1e-9));
}

}  // namespace

FastDram::FastDram(const DramSpec& spec, const AddressMapping& mapping, const FastDramParams& params,
                   const sim::Instrumentation& inst, const std::string& stats_prefix)
    : spec_(spec), mapping_(mapping), params_(params) {
  if (inst.registry == nullptr) throw std::invalid_argument("FastDram: the instrumentation has no registry");
  check_calibration(params_.calibration);
  check_refresh_timings(spec_, params_.controller.refresh, "FastDram");
  const DramOrganization& org = spec_.org;
  const DramTimings& t = spec_.timing;
  const counters::Scope scope = inst.scope(stats_prefix);
  cycles_ = &scope.counter("cycles", "cycles", "elapsed memory-clock cycles (tCK), kept by advance_to");
  registry_ = &scope.registry();
  const double tck_s = spec_.tCK_seconds();
  const std::string cycles_name = scope.join("cycles");
  const auto dotted = [](const counters::Scope& s) { return s.prefix().empty() ? "" : s.prefix() + "."; };
  const std::uint32_t npcs = org.total_pcs();
  stats_.reserve(npcs);
  for (std::uint32_t s = 0; s < org.stacks; ++s) {
    const counters::Scope stack_scope = scope.sub("s" + std::to_string(s));
    for (std::uint32_t c = 0; c < org.channels; ++c) {
      for (std::uint32_t p = 0; p < org.pseudo_channels; ++p) {
        const counters::Scope pc_scope = stack_scope.sub("ch" + std::to_string(c)).sub("pc" + std::to_string(p));
        stats_.emplace_back(pc_scope, tck_s * 1e9);
        add_derived(pc_scope, dotted(pc_scope), cycles_name, tck_s, spec_.peak_bytes_per_second_per_pc(),
                    "this pseudo-channel");
      }
    }
    add_derived(stack_scope, dotted(stack_scope) + "ch*.pc*.", cycles_name, tck_s,
                spec_.peak_bytes_per_second_per_pc() * org.pcs_per_stack(), "this stack");
  }
  add_derived(scope, dotted(scope) + "s*.ch*.pc*.", cycles_name, tck_s, spec_.peak_bytes_per_second(), "all stacks");
  pcs_.resize(npcs);
  banks_.resize(std::size_t{npcs} * org.banks_per_pc());
  bus_.own.assign(npcs, 0.0);
  act_.own.assign(npcs, 0.0);

  const std::uint64_t a = org.access_bytes();
  for (std::uint32_t p = 0; p < npcs; ++p) {
    PcStats& st = stats_[p];
    refresh_adds_->adds.emplace_back((params_.controller.refresh == RefreshMode::AllBank ? st.refab : st.refpb).slot(),
                                     1);
    for (int w = 0; w < 2; ++w) {
      for (int activates = 0; activates < 2; ++activates) {
        auto& batch = bulk_adds_[w][activates];
        if (!batch) batch = std::make_shared<counters::AddBatch>();
        batch->adds.emplace_back((w ? st.wr : st.rd).slot(), 1);
        batch->adds.emplace_back((w ? st.bytes_written : st.bytes_read).slot(), a);
        batch->adds.emplace_back(st.busy_cycles.slot(), t.burst_cycles);
        if (activates) {
          batch->adds.emplace_back(st.act.slot(), 1);
          batch->adds.emplace_back(st.row_misses.slot(), 1);
        } else {
          batch->adds.emplace_back(st.row_hits.slot(), 1);
        }
      }
    }
  }

  burst_ = std::max<Cycle>(t.burst_cycles, t.CCD_S);
  switch (params_.controller.refresh) {
    case RefreshMode::AllBank:
      window_ = t.RP + t.RFCab;
      bulk_duty_ = 1.0 - static_cast<double>(window_) / t.REFI;
      act_duty_ = bulk_duty_;
      break;
    case RefreshMode::PerBank:
      refpb_step_ = std::max<Cycle>(1, t.refi_per_bank(org.banks_per_pc()));
      act_duty_ = 1.0 - static_cast<double>(t.RREFD) / static_cast<double>(refpb_step_);
      break;
    case RefreshMode::Off:
      break;
  }

  // The mapping's groups: `run_` accesses stay in one pseudo-channel (the pieces below its
  // digits), then the pseudo-channel digits; if they are all there, together, every group of
  // run_ x pseudo-channels accesses gives each pseudo-channel run_ of them.
  const auto is_pc_level = [](DramLevel l) {
    return l == DramLevel::Stack || l == DramLevel::Channel || l == DramLevel::PseudoChannel;
  };
  const auto& pieces = mapping_.pieces();
  std::size_t i = 0;
  for (; i < pieces.size() && !(is_pc_level(pieces[i].level) && pieces[i].count > 1); ++i) run_ *= pieces[i].count;
  std::uint64_t block = 1;
  for (; i < pieces.size() && (is_pc_level(pieces[i].level) || pieces[i].count == 1); ++i) block *= pieces[i].count;
  bool uniform = block == npcs;
  const std::size_t above = i;
  for (; i < pieces.size(); ++i) {
    if (is_pc_level(pieces[i].level) && pieces[i].count > 1) uniform = false;
  }
  i = above;
  for (const auto& x : mapping_.xors()) {
    if (is_pc_level(x.target)) uniform = false;
  }
  if (uniform) group_ = run_ * npcs;
  for (; i < pieces.size() && pieces[i].level != DramLevel::Column; ++i) visit_low_ *= pieces[i].count;
  for (; i < pieces.size() && pieces[i].level == DramLevel::Column; ++i) visit_columns_ *= pieces[i].count;
  stream_rows_.resize(visit_low_);
}

FastDram::~FastDram() = default;

std::unique_ptr<FastDram> FastDram::from_config(const config::Config& config, const sim::Instrumentation& inst,
                                                const std::string& stats_prefix) {
  const DramSpec spec = DramSpec::from_config(config);
  const std::vector<std::string>& fields = config.get_strings("hbm.mapping.fields");
  const AddressMapping mapping =
      fields.empty() ? AddressMapping(AddressMapping::preset_fields(config.get_string("hbm.mapping.preset")),
                                      config.get_strings("hbm.mapping.xor"), spec.org)
                     : AddressMapping(fields, config.get_strings("hbm.mapping.xor"), spec.org);
  FastDramParams params;
  params.controller = ControllerParams::from_config(config);
  params.calibration = FastDramCalibration::from_config(config);
  return std::make_unique<FastDram>(spec, mapping, params, inst, stats_prefix);
}

Cycle FastDram::stretched_by_refreshes(Cycle from, Cycle cost, Cycle first, Cycle interval, Cycle window) {
  // Each interval leaves interval - window (> 0, the constructor's check) for the work.
  const Cycle end = from + cost;
  if (end < first) return end;
  const Cycle reached = (end - first) / (interval - window) + 1;
  return end + reached * window;
}

void FastDram::check(std::uint64_t addr, std::uint64_t bytes) const {
  if (addr >= capacity_bytes() || bytes > capacity_bytes() - addr) {
    throw std::out_of_range("FastDram: access of " + std::to_string(bytes) + " B at " + std::to_string(addr) +
                            " is outside the memory (capacity " + std::to_string(capacity_bytes()) + " B)");
  }
  if (addr % access_bytes() != 0 || bytes % access_bytes() != 0 || bytes == 0) {
    throw std::invalid_argument("FastDram: access of " + std::to_string(bytes) + " B at " + std::to_string(addr) +
                                " is not a non-empty whole number of aligned " + std::to_string(access_bytes()) +
                                " B accesses");
  }
}

// ---- refresh ------------------------------------------------------------------------
// All-bank: windows [k tREFI, k tREFI + tRP + tRFCab) for k >= 1, in which nothing issues.

Cycle FastDram::bus_start(Cycle t) const {
  if (window_ == 0 || t < spec_.timing.REFI) return t;
  const Cycle k = t / spec_.timing.REFI;
  const Cycle end = k * spec_.timing.REFI + window_;
  return t < end ? end : t;
}

double FastDram::stretched(double from, double cost, Cycle interval, Cycle window) {
  const double iv = static_cast<double>(interval);
  const double first = (std::floor(from / iv) + 1) * iv;
  const double end = from + cost;
  if (end < first) return end;
  return end + (std::floor((end - first) / (iv - static_cast<double>(window))) + 1) * static_cast<double>(window);
}

double FastDram::bus_after(double start, double cost) const {
  if (window_ == 0) return start + cost;
  return stretched(start, cost, spec_.timing.REFI, window_);
}

double FastDram::act_after(double start, double cost) const {
  if (refpb_step_ != 0) return stretched(start, cost, refpb_step_, spec_.timing.RREFD);  // each REFpb holds it tRREFD
  // All-bank: refresh's share as a duty cycle (the pipeline's backlog goes on after a window).
  if (window_ != 0) return start + cost / act_duty_;
  return start + cost;
}

// Per-bank: bank b's REFpb at k tREFI + b (tREFI / banks), for tRFCpb.
Cycle FastDram::bank_refresh_end(std::uint32_t bank, Cycle t) const {
  if (refpb_step_ == 0) return t;
  const Cycle refi = spec_.timing.REFI;
  const Cycle phase = Cycle{bank} * refpb_step_;
  if (t < phase + refi) return t;
  const Cycle start = (t - phase) / refi * refi + phase;
  return t < start + spec_.timing.RFCpb ? start + spec_.timing.RFCpb : t;
}

bool FastDram::refreshed_between(std::uint32_t bank, Cycle a, Cycle b) const {
  const Cycle refi = spec_.timing.REFI;
  switch (params_.controller.refresh) {
    case RefreshMode::AllBank:
      return a / refi != b / refi;
    case RefreshMode::PerBank: {
      const Cycle phase = Cycle{bank} * refpb_step_;
      const auto index = [&](Cycle x) { return x < phase ? Cycle{0} : (x - phase) / refi; };  // REFpbs by x
      return index(a) != index(b);
    }
    case RefreshMode::Off:
      break;
  }
  return false;
}

void FastDram::count_refreshes(Cycle cycle) {
  if (params_.controller.refresh == RefreshMode::Off) return;
  const Cycle step = params_.controller.refresh == RefreshMode::AllBank ? spec_.timing.REFI : refpb_step_;
  const Cycle before = refreshes_counted_ / step;
  const Cycle after = cycle / step;
  if (after == before) return;
  registry_->owe(refresh_adds_, after - before);  // every pseudo-channel's count, when next read
  refreshes_counted_ = cycle;
}

// ---- single accesses ----------------------------------------------------------------

// Whether a bank still has its row open for an access arriving at `arrive` that will use it
// about `use`, as the page policy and refresh left it: closed page never; adaptive while the
// access was queued before the row's last column (the controller closes a row with its last
// queued hit); open until a refresh falls between the row's last column and `use`.
bool FastDram::row_open(const Bank& bk, std::uint32_t bank, Cycle arrive, Cycle use) const {
  if (bk.row == kClosed || params_.controller.page_policy == PagePolicy::Closed) return false;
  if (params_.controller.page_policy == PagePolicy::Adaptive && bk.last_col < arrive) return false;
  return !refreshed_between(bank, bk.last_col, std::max(use, bk.last_col));
}

std::size_t FastDram::queued(const Pc& pc, bool write) const {
  auto& q = pc.cols[write];
  while (!q.empty() && q.top() <= now_) q.pop();
  return q.size() + (write ? pc.buffered : 0);
}

bool FastDram::can_accept(std::uint64_t addr, bool write) const {
  if (addr >= capacity_bytes()) return true;  // enqueue() reports it
  const Pc& pc = pcs_[pc_index(mapping_.decode(addr))];
  if (queued(pc, write) < (write ? params_.controller.write_queue : params_.controller.read_queue)) return true;
  // Refused: an entry frees when the earliest queued column command issues (after now_), or
  // at a drain of the write buffer (its check is an event of its own).
  if (!pc.cols[write].empty()) wake_ = std::min(wake_, pc.cols[write].top());
  if (write && pc.drain_check != kNever) wake_ = std::min(wake_, pc.drain_check);
  return false;
}

void FastDram::enqueue(MemRequest request) {
  check(request.addr, access_bytes());
  request.arrival = now_;
  const DecodedAddress d = mapping_.decode(request.addr);
  const std::uint32_t p = pc_index(d);
  ++pending_;
  if (!request.write) {
    ++pcs_[p].reads;
    ++single_reads_;
  }
  submit(p, Item{request, d, 1, 0});
}

// The controller serves reads first: a write waits in the write buffer while reads are
// queued in its pseudo-channel, until none is (their columns have issued) or the buffer
// reaches write_high; then the writes are booked as a batch (write mode), down to write_low
// if reads wait, else all.
void FastDram::submit(std::uint32_t p, const Item& item) {
  Pc& pc = pcs_[p];
  if (!item.request.write) {
    finish(p, item, book_run(p, item.where, item.n, false));
    return;
  }
  pc.writes.push_back(item);
  pc.buffered += item.n;
  if (pc.read_col <= now_) {
    drain(p, 0);
  } else if (pc.buffered >= params_.controller.write_high) {
    drain(p, params_.controller.write_low);
  } else {
    schedule_drain(p, pc.read_col + 1);
  }
}

void FastDram::drain(std::uint32_t p, std::uint64_t keep) {
  Pc& pc = pcs_[p];
  while (pc.buffered > keep && !pc.writes.empty()) {
    const Item item = pc.writes.front();
    pc.writes.pop_front();
    pc.buffered -= item.n;
    finish(p, item, book_run(p, item.where, item.n, true));
  }
  if (!pc.writes.empty()) schedule_drain(p, std::max(pc.read_col, now_) + 1);
}

void FastDram::schedule_drain(std::uint32_t p, Cycle at) {
  Pc& pc = pcs_[p];
  if (pc.drain_check <= at && pc.drain_check > now_) return;  // one is due sooner; it looks again
  pc.drain_check = at;
  done_.push(Done{at, seq_++, MemRequest{}, p, 0, Kind::DrainCheck});
}

void FastDram::finish(std::uint32_t p, const Item& item, Cycle at) {
  if (item.parent == 0 && !item.request.write) {
    PcStats& st = stats_[p];
    st.read_latency.sample(static_cast<double>(at - item.request.arrival) * st.tck_ns);
  }
  done_.push(Done{at, seq_++, item.request, p, item.parent, item.parent ? Kind::Part : Kind::Single});
}

Cycle FastDram::book_run(std::uint32_t p, const DecodedAddress& d, std::uint64_t n, bool w) {
  const DramOrganization& org = spec_.org;
  const DramTimings& t = spec_.timing;
  const ControllerParams& ctl = params_.controller;
  const FastDramCalibration& cal = params_.calibration;
  Pc& pc = pcs_[p];
  PcStats& st = stats_[p];
  const Cycle arrive = now_;
  const std::uint32_t bank = (d.sid * org.bank_groups + d.bank_group) * org.banks_per_group + d.bank;
  Bank& bk = banks_[std::size_t{p} * org.banks_per_pc() + bank];
  const bool fcfs = ctl.scheduler == SchedulerKind::Fcfs;
  // FCFS: the controller looks at the head of its queue only; this access's commands wait
  // for the column command of the one booked before it.
  const Cycle floor = fcfs ? std::max(arrive, pc.last_col) : arrive;
  // `use`: about when this access will use the row, behind what its data bus has booked.
  const bool open = row_open(bk, bank, arrive, std::max(arrive, static_cast<Cycle>(bus_.get(p))));
  const bool hit = open && bk.row == d.row;
  // FR-FCFS serves a queued hit before the precharge that closes its row: an access to the
  // row a conflict is about to close, arriving before that precharge, is a hit in it.
  Bank::Past* before_close = nullptr;
  if (!fcfs && !hit) {
    for (Bank::Past& past : bk.past) {
      if (past.row == d.row && arrive + t.RP < past.close) before_close = &past;
    }
  }
  Cycle col_ready = floor;
  if (before_close != nullptr) {
    col_ready = std::max({col_ready, before_close->act + (w ? t.RCDWR : t.RCDRD), before_close->col + t.CCD_L});
    before_close->col = col_ready + (n - 1) * burst_;
    st.row_hits += n;
  } else if (!hit) {
    Cycle ready = floor;
    if (bk.row != kClosed) {  // the bank has been used: tRC, and its row's precharge
      const Cycle recovery = bk.write ? t.CWL + t.burst_cycles + t.WR : t.RTP;
      const Cycle precharged = std::max(bk.last_col + recovery, bk.act + t.RAS) + t.RP;
      ready = std::max({ready, bk.act + t.RC, precharged});
    }
    ready = bank_refresh_end(bank, ready);
    // The activation pipeline is work-conserving: an ACT waiting for its bank does not hold
    // the others' (FR-FCFS issues the oldest *ready* ACT).
    const double a0 = std::max(static_cast<double>(arrive), act_.get(p));
    act_.set(p, act_after(a0, cal.act_gap));
    const Cycle at = bus_start(std::max(ready, up(a0)));
    col_ready = at + (w ? t.RCDWR : t.RCDRD);
    if (open) {  // the row this ACT closes joins the bank's past rows, until its precharge
      std::copy_backward(bk.past, bk.past + Bank::kPast - 1, bk.past + Bank::kPast);
      bk.past[0] = Bank::Past{bk.row, bk.act, bk.last_col, at};
    }
    bk.act = at;
    bk.row = d.row;
    ++st.act;
    if (open) {
      ++st.pre;
      ++st.row_conflicts;
    } else {
      ++st.row_misses;
    }
    st.row_hits += n - 1;
  } else {
    // A hit follows its row's ACT by tRCD and the bank's last column by tCCD_L.
    col_ready = std::max({col_ready, bk.act + (w ? t.RCDWR : t.RCDRD), bk.last_col + t.CCD_L});
    st.row_hits += n;
  }
  // The data bus: work-conserving under FR-FCFS (a slot this access cannot use yet is
  // another's), in order under FCFS.
  double cost = static_cast<double>(n * burst_);
  if (w != pc.last_write) {
    cost += cal.switch_bus_cost;
    act_.set(p, std::max(static_cast<double>(arrive), act_.get(p)) + cal.switch_act_cost);
    pc.last_write = w;
  }
  double s0 = std::max(static_cast<double>(arrive), bus_.get(p));
  if (fcfs) s0 = std::max(s0, static_cast<double>(col_ready));
  // The server keeps fractional cycles (the calibrated terms are averages); the access's own
  // column command is on a whole cycle.
  const auto whole = static_cast<Cycle>(s0);
  if (bus_start(whole) != whole) s0 = static_cast<double>(bus_start(whole));
  bus_.set(p, bus_after(s0, cost));
  const Cycle col = std::max(up(s0), bus_start(col_ready));
  const Cycle last = col + (n - 1) * burst_;
  if (before_close == nullptr) {
    bk.last_col = std::max(bk.last_col, last);
    bk.write = w;
  }
  pc.last_col = std::max(pc.last_col, last);
  for (std::uint64_t k = 0; k < n; ++k) pc.cols[w].push(col + k * burst_);

  const Cycle done = last + (w ? t.CWL : t.CL) + t.burst_cycles + ctl.latency;
  if (w) {
    st.wr += n;
    st.bytes_written += n * access_bytes();
  } else {
    st.rd += n;
    st.bytes_read += n * access_bytes();
    pc.read_col = std::max(pc.read_col, last);
  }
  st.busy_cycles += n * t.burst_cycles;
  return done;
}

// ---- bulk transfers -----------------------------------------------------------------

void FastDram::enqueue_bulk(std::uint64_t addr, std::uint64_t bytes, bool write, std::uint64_t id) {
  check(addr, bytes);
  const std::uint64_t a = access_bytes();
  const Cycle arrival = now_;
  const FastDramCalibration& cal = params_.calibration;
  const DramTimings& t = spec_.timing;
  const std::uint64_t first = addr / a;
  const std::uint64_t end = first + bytes / a;
  std::uint32_t parent;
  if (free_parents_.empty()) {
    parents_.emplace_back();
    parent = static_cast<std::uint32_t>(parents_.size());
  } else {
    parent = free_parents_.back();
    free_parents_.pop_back();
  }
  Parent& par = parents_[parent - 1];
  par.request = MemRequest{addr, write, id, arrival};
  par.parts = 1;  // held until every part is submitted
  ++pending_;
  // Runs of accesses in one pseudo-channel and one row, as single accesses are served.
  const auto runs = [&](std::uint64_t from, std::uint64_t to) {
    while (from < to) {
      const std::uint64_t run_end = std::min(to, (from / run_ + 1) * run_);
      const DecodedAddress d = mapping_.decode(from * a);
      ++parents_[parent - 1].parts;
      submit(pc_index(d), Item{par.request, d, static_cast<std::uint32_t>(run_end - from), parent});
      from = run_end;
    }
  };
  if (group_ == 0 || end - first < 2 * group_) {
    runs(first, end);
  } else {
    // Every pseudo-channel gets the same share (whole groups exactly; the partial groups at
    // the ends spread), charged at once. The activations are the row visits of the groups it
    // touches, less those a transfer before left open; refresh takes its share as a duty
    // cycle.
    const std::uint64_t npcs = spec_.org.total_pcs();
    const double per_pc = static_cast<double>(end - first) / static_cast<double>(npcs);
    const double busy = bus_.max();
    const auto acts = static_cast<double>(
        activations(first / group_, (end + group_ - 1) / group_, arrival,
                    up(std::max(busy, static_cast<double>(arrival)) + per_pc * static_cast<double>(burst_))));
    const double cost = per_pc * static_cast<double>(burst_) + acts * cal.stream_act_cost;
    // Writes among reads: the turnarounds of the write batches they make, as an average per
    // access; the pseudo-channel issues nothing meanwhile (both servers).
    const double turnaround =
        write && (bulk_reads_until_ > arrival || single_reads_ > 0) ? per_pc * cal.write_switch_cost : 0.0;
    bus_.charge_all(static_cast<double>(arrival), (cost + turnaround) / bulk_duty_);
    act_.charge_all(static_cast<double>(arrival), (acts * cal.act_gap + turnaround) / act_duty_);
    double last = bus_.max() - static_cast<double>(burst_);
    if (acts > 0) last = std::max(last, act_.max() + static_cast<double>(write ? t.RCDWR : t.RCDRD));
    const Cycle at = up(last) + (write ? t.CWL : t.CL) + t.burst_cycles + params_.controller.latency;
    if (!write) bulk_reads_until_ = std::max(bulk_reads_until_, at);
    ++parents_[parent - 1].parts;
    done_.push(Done{at, seq_++, MemRequest{}, 0, parent, Kind::Part});
    // Statistics: per access on every pseudo-channel, owed (settled when read); what does
    // not divide evenly is carried to the next transfer.
    carry_[write] += end - first;
    const std::uint64_t each = carry_[write] / npcs;
    carry_[write] -= each * npcs;
    act_carry_ += acts;
    const auto whole = static_cast<std::uint64_t>(act_carry_);
    act_carry_ -= static_cast<double>(whole);
    const std::uint64_t with_act = std::min(whole, each);
    registry_->owe(bulk_adds_[write][1], with_act);
    registry_->owe(bulk_adds_[write][0], each - with_act);
  }
  Parent& held = parents_[parent - 1];
  if (--held.parts == 0) {  // (every part completes later, at least at arrival + latency)
    free_parents_.push_back(parent);
    --pending_;
    complete(held.request, arrival);
  }
}

std::uint64_t FastDram::activations(std::uint64_t u0, std::uint64_t u1, Cycle arrival, Cycle until) {
  const std::uint64_t L = visit_low_, C = visit_columns_, lc = L * C;
  const std::uint64_t b0 = u0 / lc, b1 = (u1 - 1) / lc;
  // Whether block b visits low digit l within [u0, u1): at u = b lc + c L + l, c < C.
  const auto visits = [&](std::uint64_t b, std::uint64_t l) {
    const std::uint64_t base = b * lc + l;
    const std::uint64_t c0 = u0 > base ? (u0 - base + L - 1) / L : 0;
    return c0 < C && base + c0 * L < u1;
  };
  const bool adaptive = params_.controller.page_policy != PagePolicy::Open;
  std::uint64_t n = 0;
  for (std::uint64_t l = 0; l < L; ++l) {
    const bool first = visits(b0, l);
    const bool last = b1 > b0 && visits(b1, l);
    const std::uint64_t inner = b1 > b0 + 1 ? b1 - b0 - 1 : 0;
    const std::uint64_t k = (first ? 1 : 0) + inner + (last ? 1 : 0);
    if (k == 0) continue;
    const std::uint64_t from = first ? b0 : b0 + 1;
    const std::uint64_t to = last || inner == 0 ? (last ? b1 : from) : b1 - 1;
    auto& rows = stream_rows_[l];
    bool open = false;
    if (params_.controller.page_policy != PagePolicy::Closed) {
      for (const StreamRow& row : rows) {
        open = open || (row.block == from && (!adaptive || arrival <= row.until) &&
                        !refreshed_between(0, std::min(row.until, arrival), arrival));
      }
    }
    n += k - (open ? 1 : 0);
    // Remember `to` in its own entry, or in place of the one that closed first.
    StreamRow* slot = &rows[0];
    for (StreamRow& row : rows) {
      if (row.block == to || row.block == from) {
        slot = &row;
        break;
      }
      if (row.until < slot->until) slot = &row;
    }
    slot->block = to;
    slot->until = std::max(slot->until, until);
  }
  return n;
}

// ---- time ---------------------------------------------------------------------------

void FastDram::advance_to(Cycle cycle) {
  if (cycle < now_) {
    throw std::logic_error("FastDram::advance_to: cycle " + std::to_string(cycle) + " is before now (" +
                           std::to_string(now_) + ")");
  }
  const Cycle start = now_;
  while (!done_.empty() && done_.top().at <= cycle) {
    const Done d = done_.top();
    done_.pop();
    now_ = std::max(now_, d.at);
    switch (d.kind) {
      case Kind::DrainCheck: {
        Pc& pc = pcs_[d.pc];
        if (pc.drain_check != d.at) break;  // superseded
        pc.drain_check = kNever;
        if (pc.writes.empty()) break;
        if (pc.read_col <= now_) {
          drain(d.pc, 0);  // no read waits
        } else {
          schedule_drain(d.pc, pc.read_col + 1);
        }
        break;
      }
      case Kind::Single:
        if (!d.request.write) {
          --pcs_[d.pc].reads;
          --single_reads_;
        }
        --pending_;
        complete(d.request, d.at);
        break;
      case Kind::Part: {
        Parent& par = parents_[d.parent - 1];
        if (--par.parts == 0) {
          free_parents_.push_back(d.parent);
          --pending_;
          complete(par.request, d.at);
        }
        break;
      }
    }
  }
  now_ = cycle;
  if (wake_ <= now_) wake_ = kNever;
  *cycles_ += now_ - start;
  count_refreshes(now_);
}

Cycle FastDram::next_event() const {
  if (pending_ == 0) return kNever;
  const Cycle done = done_.empty() ? kNever : done_.top().at;
  return wake_ > now_ ? std::min(done, wake_) : done;
}

}  // namespace sohusim::memory
