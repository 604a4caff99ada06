#include "sohusim/memory/fast_dram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "sohusim/memory/hbm_schema.hpp"
#include "sohusim/sim/config.hpp"

namespace sohusim::memory {

namespace {

constexpr std::uint32_t kClosed = 0xffffffffu;
constexpr Cycle kSlotSpan = 64;  // cycles: farther apart than any spacing rule

struct Bank {
  std::uint32_t open_row = kClosed;
  Cycle act = 0;               // the ACT that opened open_row
  Cycle pre_allowed = 0;       // earliest PRE: tRAS, tRTP, write recovery
  Cycle act_allowed = 0;       // earliest ACT of a closed bank: tRC, auto-precharge + tRP
  Cycle last_col = 0;          // the last column command booked on open_row
  std::uint32_t epoch = 0;     // StreamState::epoch when open_row was last valid
  std::uint32_t bookings = 0;  // accesses booked on the bank (a journal entry's `after` is the latest if equal)
  // Rows booked before open_row whose precharge may still lie ahead (newest first): an
  // access to one of them, queued while it was open, is served before its precharge
  // (FR-FCFS row hits first) if its column fits before the next ACT's tRP.
  struct Past {
    std::uint32_t row = kClosed;
    Cycle act = 0;       // its ACT
    Cycle last_col = 0;  // its last column booked
    Cycle end = 0;       // its PRE is done by then: the next ACT of the bank minus tRP
  };
  static constexpr int kPast = 4;
  Past past[kPast];
};

// When a REFpb that may issue from `start` issues: a REFpb needs its bank precharged, so if
// the bank's row was opened (`opened`) before then, once it is (`precharged`: its PRE may
// go, plus tRP), DramController::refresh_perbank issuing the PRE first.
Cycle refpb_issue(Cycle start, Cycle opened, Cycle precharged) {
  return opened < start && precharged > start ? precharged : start;
}

// An access's bank group (numbered over the pseudo-channel's stack IDs) and its bank, as
// Pc::banks indexes them.
std::uint32_t group_of(const DecodedAddress& d, const DramOrganization& org) {
  return d.sid * org.bank_groups + d.bank_group;
}
std::uint32_t bank_of(const DecodedAddress& d, const DramOrganization& org) {
  return group_of(d, org) * org.banks_per_group + d.bank;
}

// Where an access to `row` of bank `b` is served if FR-FCFS takes it before the precharge
// of that row, which the bank has been booked to close (Bank::past): the row's entry and
// the window of its column command, from tRCD after the row's ACT (or its arrival) to the
// last one whose recovery ends before the precharge. None (row null) if the bank has not
// that row in its past or the access came too late for it: queued after its last column
// booked (the adaptive policy's auto-precharge) or arriving after the precharge (open).
struct PastHit {
  Bank::Past* row = nullptr;
  Cycle first = 0;    // earliest column cycle
  Cycle last = 0;     // latest column cycle
  bool fits = false;  // first <= last
};

PastHit past_hit(Bank& b, std::uint32_t row, bool write, bool adaptive, Cycle arrival, Cycle queued,
                 const DramTimings& t) {
  PastHit h;
  Bank::Past* p = std::find_if(b.past, b.past + Bank::kPast, [&](const Bank::Past& x) { return x.row == row; });
  if (p == b.past + Bank::kPast || (adaptive ? queued > p->last_col : arrival >= p->end)) return h;
  const Cycle recovery = write ? t.CWL + t.burst_cycles + t.WR : t.RTP;
  h.row = p;
  h.first = std::max(arrival, p->act + (write ? t.RCDWR : t.RCDRD));
  h.fits = p->end >= h.first + recovery;
  h.last = h.fits ? p->end - recovery : 0;
  return h;
}

// A booking on the data bus: column commands from `col` to `last_col` (one access, or a
// stream of them), all of one direction.
struct Slot {
  Cycle col;
  Cycle last_col;
  std::uint32_t group_first;
  std::uint32_t group_last;
  bool write;
};

struct Act {
  Cycle at;
  std::uint32_t group;
  Cycle ready;  // the cycle its bank allowed it (place_act's lower bound)
};

// A queue sorted by time that is consumed at the front and mostly grown at the back: a
// vector with a moving head, compacted when the consumed prefix is the larger half. Unlike
// std::deque it allocates nothing in steady state (the bookings of a long run push and pop
// millions of entries) and keeps its entries contiguous for the binary searches.
template <typename T>
class TimeQueue {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;
  bool empty() const { return head_ == v_.size(); }
  std::size_t size() const { return v_.size() - head_; }
  T& front() { return v_[head_]; }
  T& back() { return v_.back(); }
  const T& back() const { return v_.back(); }
  iterator begin() { return v_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return v_.end(); }
  const_iterator begin() const { return v_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return v_.end(); }
  void push_back(const T& x) { v_.push_back(x); }
  void insert(iterator at, const T& x) { v_.insert(at, x); }
  iterator erase(iterator at) { return v_.erase(at); }
  void pop_back() {
    v_.pop_back();
    if (head_ == v_.size()) clear();
  }
  void clear() {
    v_.clear();
    head_ = 0;
  }
  void pop_front() {
    if (++head_ == v_.size()) {
      v_.clear();
      head_ = 0;
    } else if (head_ >= 64 && 2 * head_ >= v_.size()) {
      v_.erase(v_.begin(), begin());
      head_ = 0;
    }
  }

 private:
  std::vector<T> v_;
  std::size_t head_ = 0;
};

// Drops bookings that ended before `now` in batches: the searches start from c - span by
// binary search, so a few stale ones cost nothing, and most calls touch no old booking.
void drop_past(TimeQueue<Slot>& slots, Cycle now) {
  if (slots.size() <= 32) return;
  while (!slots.empty() && slots.front().last_col + kSlotSpan < now) slots.pop_front();
}

// Takes a booking off a pseudo-channel's timelines: its column slot (of its direction) and
// its activation (kNever: none, or one that has issued and stays).
void erase_booking(TimeQueue<Slot>& slots, TimeQueue<Act>& acts, Cycle col, bool write, Cycle act) {
  const auto slot =
      std::lower_bound(slots.begin(), slots.end(), col, [](const Slot& sl, Cycle v) { return sl.col < v; });
  if (slot != slots.end() && slot->col == col && slot->write == write) slots.erase(slot);
  if (act == kNever) return;
  const auto a = std::lower_bound(acts.begin(), acts.end(), act, [](const Act& x, Cycle v) { return x.at < v; });
  if (a != acts.end() && a->at == act) acts.erase(a);
}

struct Buffered {
  MemRequest request;
  DecodedAddress where;
  bool counted = false;      // its row statistics are counted (an activation that had issued)
  std::uint64_t parent = 0;  // the bulk request it is part of (0: none)
};

// An access not booked yet: at the door of a full queue (Pc::waiting), or a read write
// mode holds (Pc::held).
struct Waiting {
  MemRequest request;
  DecodedAddress where;
  std::uint64_t parent;
  bool counted = false;  // a read a drain took back after its activation had issued (counted then)
};

// A read booked since the pseudo-channel's last booking of anything else: with its bank as
// it was before, a drain can take the booking back (LIFO) and make it again later. The
// same for a write booked since the last booking of anything else, which a read's arrival
// can take back (the controller leaves write mode).
struct Journalled {
  MemRequest request;
  DecodedAddress where;
  Bank before;  // as the booking found it
  Bank after;   // as the booking left it
  std::uint32_t bank;
  Cycle act;  // kNever: no activation
  Cycle col;
  std::uint64_t ticket;
  std::uint8_t outcome = 0;  // its FastDram::RowOutcome still to count (a write's; reads count theirs at completion)
  std::uint64_t parent = 0;  // the bulk request it is part of (0: none)
  Cycle ready = kNever;      // Booking::ready
};

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

}  // namespace

struct FastDram::Pc {
  explicit Pc(PcStats s) : stats(std::move(s)) {}
  PcStats stats;
  std::vector<Bank> banks;
  TimeQueue<Slot> slots;           // sorted by col
  TimeQueue<Act> acts;             // sorted by cycle
  std::vector<Buffered> buffered;  // writes waiting for a drain
  std::size_t drained = 0;         // the first ones a drain has booked (in the loop that books them)
  std::uint32_t reads = 0;         // reads booked or forwarded, not completed
  std::uint32_t writes = 0;        // writes buffered or booked, not completed
  Cycle last_read_col = 0;         // reads wait in the controller's queue until then
  // Column-command cycles of booked accesses: an access holds its queue entry until its
  // column command issues, as in DramController. Popped lazily. A re-booked read's first
  // column stays in read_cols, and its twin in read_cancelled, until it passes.
  using MinHeap = std::priority_queue<Cycle, std::vector<Cycle>, std::greater<Cycle>>;
  mutable MinHeap read_cols, write_cols, read_cancelled, write_cancelled;
  std::size_t queued(bool write, Cycle now) const {
    auto& q = write ? write_cols : read_cols;
    auto& cancelled = write ? write_cancelled : read_cancelled;
    while (!q.empty() && q.top() <= now) q.pop();
    while (!cancelled.empty() && cancelled.top() <= now) cancelled.pop();
    return q.size() - cancelled.size() + (write ? buffered.size() : held.size());
  }
  TimeQueue<Journalled> journal;     // reads, in booking order
  TimeQueue<Journalled> wjournal;    // writes, in booking order
  std::vector<Journalled> rebook;    // a drain's scratch
  std::vector<Journalled> rejoin;    // take_back_for_hit's: the bookings it took back, oldest first
  std::vector<std::size_t> mine;     // take_back_for_hit's scratch: their journal positions, newest first
  std::vector<std::uint32_t> stays;  // take_back_writes's scratch: banks of writes that stay
  std::vector<Journalled> behind;    // let_ready_act_first's scratch: the bookings it takes back
  // rebook_from's: the accesses it books again, oldest first; those from again_next on
  // are still queued, not booked yet (book_access's adaptive policy looks at them).
  std::vector<Journalled> again;
  std::size_t again_next = 0;
  mutable std::vector<std::uint8_t> seen;  // can_rebook_from's scratch: banks met
  std::vector<std::uint32_t> moved;        // let_ready_act_first's scratch: their banks
  std::vector<std::size_t> order;          // let_ready_act_first's scratch: the order it books them again in
  Cycle drain_check = kNever;              // when a drain check is scheduled
  Cycle admit_check = kNever;              // when an admit check is scheduled
  // Write mode: the reads a drain took back, and those arriving after them, in arrival
  // order; booked once its writes are done (ResumeReads at resume_at).
  std::vector<Waiting> held;
  Cycle resume_at = kNever;
  // Accesses of bulk requests booked access by access that found their queue full (or
  // others waiting), [write], in arrival order: the front end holds them.
  std::deque<Waiting> waiting[2];
  Cycle write_mode_end = 0;  // the last column of the writes a drain to write_low booked
  // Per-bank refresh: which bank each REFpb takes, decided as single accesses are booked
  // (empty with other refresh modes).
  std::optional<PerBankRefreshPlan> plan;
  // FCFS: the REFpbs (bank, due) decided for good since settle_refreshes last looked,
  // those not over by then.
  std::vector<std::pair<std::uint32_t, Cycle>> late_refreshes;
  Cycle refresh_due = kNever;  // FCFS with per-bank refresh: when a RefreshDue is scheduled
};

namespace {

// Hints only: they change no result.
template <typename T>
void prefetch_object(const T& object) {
  const char* p = reinterpret_cast<const char*>(&object);
  __builtin_prefetch(p);
  __builtin_prefetch(p + sizeof(T) - 1);
}

// A calibration an embedder set wrongly would stretch bookings without end (a scale of
// NaN or infinity) or make them free (zero): refused, naming the field.
void check_calibration(const FastDramCalibration& c) {
  const auto positive = [](double v, const char* name, double most) {
    if (!std::isfinite(v) || v <= 0.0 || v > most) {
      throw std::invalid_argument(std::string("FastDramCalibration::") + name + " is " + number(v) +
                                  "; it must be above 0 and at most " + number(most));
    }
  };
  const auto at_least_zero = [](double v, const char* name) {
    if (!std::isfinite(v) || v < 0.0 || v > 1e6) {
      throw std::invalid_argument(std::string("FastDramCalibration::") + name + " is " + number(v) +
                                  "; it must be from 0 to 1e6 cycles");
    }
  };
  at_least_zero(c.stream_act_cost, "stream_act_cost");
  at_least_zero(c.perbank_stream_cost, "perbank_stream_cost");
  at_least_zero(c.switch_cut_cost, "switch_cut_cost");
  positive(c.switch_cut_visit, "switch_cut_visit", 1e6);
  positive(c.turnaround_scale, "turnaround_scale", 100.0);
  positive(c.stream_act_scale, "stream_act_scale", 100.0);
  positive(c.stream_busy_banks, "stream_busy_banks", 1.0);
  positive(c.stream_write_act_scale, "stream_write_act_scale", 100.0);
  positive(c.faw_scale, "faw_scale", 100.0);
}

}  // namespace

FastDram::FastDram(const DramSpec& spec, const AddressMapping& mapping, const FastDramParams& params,
                   const sim::Instrumentation& inst, const std::string& stats_prefix)
    : spec_(spec), mapping_(mapping), params_(params) {
  if (inst.registry == nullptr) throw std::invalid_argument("FastDram: the instrumentation has no registry");
  check_calibration(params_.calibration);
  // Refresh must leave time to work (the schema says so per key): the closed forms of
  // stretched_by_refreshes and place_slot's moves past all-bank windows rely on it.
  check_refresh_timings(spec_, params_.controller.refresh, "FastDram");
  const DramOrganization& org = spec_.org;
  const counters::Scope scope = inst.scope(stats_prefix);
  cycles_ = &scope.counter("cycles", "cycles", "elapsed memory-clock cycles (tCK), kept by advance_to");
  const double tck_s = spec_.tCK_seconds();
  const std::string cycles_name = scope.join("cycles");
  const auto dotted = [](const counters::Scope& s) { return s.prefix().empty() ? "" : s.prefix() + "."; };
  pcs_.reserve(org.total_pcs());
  for (std::uint32_t s = 0; s < org.stacks; ++s) {
    const counters::Scope stack_scope = scope.sub("s" + std::to_string(s));
    for (std::uint32_t c = 0; c < org.channels; ++c) {
      for (std::uint32_t p = 0; p < org.pseudo_channels; ++p) {
        const counters::Scope pc_scope = stack_scope.sub("ch" + std::to_string(c)).sub("pc" + std::to_string(p));
        pcs_.push_back(std::make_unique<Pc>(PcStats(pc_scope, tck_s * 1e9)));
        pcs_.back()->banks.resize(org.banks_per_pc());
        add_derived(pc_scope, dotted(pc_scope), cycles_name, tck_s, spec_.peak_bytes_per_second_per_pc(),
                    "this pseudo-channel");
      }
    }
    add_derived(stack_scope, dotted(stack_scope) + "ch*.pc*.", cycles_name, tck_s,
                spec_.peak_bytes_per_second_per_pc() * org.pcs_per_stack(), "this stack");
  }
  add_derived(scope, dotted(scope) + "s*.ch*.pc*.", cycles_name, tck_s, spec_.peak_bytes_per_second(), "all stacks");
  registry_ = &scope.registry();
  for (auto& pc : pcs_) {
    counters::Counter& ref = params_.controller.refresh == RefreshMode::AllBank ? pc->stats.refab : pc->stats.refpb;
    refresh_adds_->adds.emplace_back(ref.slot(), 1);
  }

  // The mapping's structure, for the bulk shortcut (see the header): [column pieces]
  // [every pseudo-channel digit] [bank digits] [column pieces] [the rest].
  const auto& pieces = mapping_.pieces();
  std::size_t i = 0;
  const auto is_pc_level = [](DramLevel l) {
    return l == DramLevel::Stack || l == DramLevel::Channel || l == DramLevel::PseudoChannel;
  };
  for (; i < pieces.size() && pieces[i].level == DramLevel::Column; ++i) inner_ *= pieces[i].count;
  std::uint64_t pcs = 1;
  for (; i < pieces.size() && is_pc_level(pieces[i].level); ++i) pcs *= pieces[i].count;
  if (pcs == org.total_pcs()) group_pcs_ = pcs;
  bool low_alternates_groups = false;
  for (; i < pieces.size() && pieces[i].level != DramLevel::Column; ++i) {
    if (pieces[i].level == DramLevel::Row) low_has_row_ = true;
    if (is_pc_level(pieces[i].level)) group_pcs_ = 0;  // a PC digit above bank digits: no uniform groups
    if ((pieces[i].level == DramLevel::BankGroup || pieces[i].level == DramLevel::Sid) && pieces[i].count > 1) {
      low_alternates_groups = true;
    }
    low_radix_ *= pieces[i].count;
  }
  for (; i < pieces.size() && pieces[i].level == DramLevel::Column; ++i) column_radix_ *= pieces[i].count;
  for (; i < pieces.size(); ++i) {
    if (is_pc_level(pieces[i].level) && pieces[i].count > 1) group_pcs_ = 0;
  }
  stream_rows_.assign(low_radix_, {});
  stream_counts_.assign(org.total_pcs(), 0);
  streams_.assign(org.total_pcs(), StreamState{});
  stream_banks_.assign(org.banks_per_pc(), BankStream{});
  visit_of_bank_.assign(org.banks_per_pc(), -1);
  if (group_pcs_ != 0 && mapping_.xors().empty() && !low_has_row_) {
    // The bank fields each low digit of a group selects (stream_visits or's them with its
    // block's).
    for (std::uint64_t lo = 0; lo < low_radix_; ++lo) {
      low_decoded_.push_back(mapping_.decode(lo * group_pcs_ * inner_ * org.access_bytes()));
    }
  }
  if (group_pcs_ != 0) {
    // Which pseudo-channel each digit of a group selects: the same in every group unless an
    // XOR pair folds higher bits into a pseudo-channel level (then enqueue_bulk decodes).
    const bool pc_xored = std::any_of(mapping_.xors().begin(), mapping_.xors().end(),
                                      [&](const AddressMapping::XorPair& x) { return is_pc_level(x.target); });
    if (!pc_xored) {
      digit_pc_.resize(group_pcs_);
      for (std::uint64_t digit = 0; digit < group_pcs_; ++digit) {
        digit_pc_[digit] = pc_index(mapping_.decode(digit * inner_ * org.access_bytes()));
      }
    }
  }
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int same = 0; same < 2; ++same) {
        gap_[a][b][same][0] = spec_gap(a != 0, b != 0, same != 0, 1.0);
        gap_[a][b][same][1] = spec_gap(a != 0, b != 0, same != 0, params_.calibration.turnaround_scale);
      }
    }
  }
  const DramTimings& t = spec_.timing;
  stream_gap_ = std::max<Cycle>(t.burst_cycles, low_alternates_groups ? t.CCD_S : t.CCD_L);
  faw_ = static_cast<Cycle>(std::llround(params_.calibration.faw_scale * static_cast<double>(t.FAW)));
  if (params_.controller.refresh == RefreshMode::PerBank) {
    refresh_step_ = std::max<Cycle>(1, t.refi_per_bank(org.banks_per_pc()));
    for (auto& pc : pcs_) pc->plan.emplace(org.banks_per_pc(), refresh_step_);
  } else {
    refresh_step_ = t.REFI;
  }
}

FastDram::~FastDram() = default;

std::unique_ptr<FastDram> FastDram::from_config(const sim::Config& config, const sim::Instrumentation& inst,
                                                const std::string& stats_prefix,
                                                const FastDramCalibration& calibration) {
  const DramSpec spec = DramSpec::from_config(config);
  const std::vector<std::string>& fields = config.get_strings("hbm.mapping.fields");
  const AddressMapping mapping =
      fields.empty() ? AddressMapping(AddressMapping::preset_fields(config.get_string("hbm.mapping.preset")),
                                      config.get_strings("hbm.mapping.xor"), spec.org)
                     : AddressMapping(fields, config.get_strings("hbm.mapping.xor"), spec.org);
  FastDramParams params;
  params.controller = ControllerParams::from_config(config);
  params.calibration = calibration;
  // The target's front end, when the configuration has one (HbmMemory's; a FastDram driven
  // directly keeps the schema's default).
  if (config.has("hbm.target.staging")) {
    params.staging = static_cast<std::uint32_t>(config.get_uint("hbm.target.staging"));
  }
  return std::make_unique<FastDram>(spec, mapping, params, inst, stats_prefix);
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

bool FastDram::has_room(const Pc& pc, bool write) const {
  return pc.queued(write, now_) < (write ? params_.controller.write_queue : params_.controller.read_queue);
}

bool FastDram::can_accept(std::uint64_t addr, bool write) const {
  if (addr >= capacity_bytes()) return true;  // enqueue() reports it
  const Pc& pc = *pcs_[pc_index(mapping_.decode(addr))];
  if (!pc.waiting[write].empty()) return false;  // its admit check wakes the owner (next_event)
  if (has_room(pc, write)) return true;
  // Refused: an entry frees when the earliest booked column command of that queue issues,
  // which is no completion; next_event() wakes the owner then, as the detailed model's
  // command events do. (A queue full of buffered writes frees at its drain check.)
  const auto& cols = write ? pc.write_cols : pc.read_cols;
  if (!cols.empty()) wake_ = std::min(wake_, cols.top());  // after queued(): > now_
  return false;
}

// ---- refresh windows ----------------------------------------------------------------
//
// All-bank: window k >= 1 is [k tREFI, k tREFI + tRP + tRFCab): a PREA and the REFab.
// Per-bank: the k-th REFpb (k >= 1) falls due at k tREFI/banks and refreshes one bank for
// tRFCpb, from its due time or, when a row of that bank is open then, from the row's
// precharge plus tRP (DramController::refresh_perbank issues the PRE first). Which bank:
// for single accesses the pseudo-channel's PerBankRefreshPlan (bank_refresh_end,
// row_survives); for bulk streams, whose bookings leave no per-bank state, bank
// (k - 1) mod banks (refresh_window_end). The first refresh falls due one interval in, as
// in DramController.

Cycle FastDram::refresh_window_end(std::uint32_t bank, Cycle t, Cycle opened, Cycle precharged) const {
  const DramTimings& tm = spec_.timing;
  switch (params_.controller.refresh) {
    case RefreshMode::Off:
      return t;
    case RefreshMode::AllBank: {
      const Cycle k = refi_index(t);
      if (k == 0) return t;
      const Cycle end = k * tm.REFI + tm.RP + tm.RFCab;
      return t < end ? end : t;
    }
    case RefreshMode::PerBank: {
      if (bank == kAnyGroup) return t;
      const Cycle banks = spec_.org.banks_per_pc();
      const Cycle k = t / refresh_step_;  // the latest REFpb at or before t
      // The latest REFpb of this bank at or before t: k' <= k with (k' - 1) mod banks == bank.
      if (k == 0) return t;
      const Cycle back = (k - 1 + banks - bank % banks) % banks;
      if (k < back + 1) return t;
      const Cycle end = refpb_issue((k - back) * refresh_step_, opened, precharged) + tm.RFCpb;
      return t < end ? end : t;
    }
  }
  return t;
}

Cycle FastDram::stretched_by_refreshes(Cycle from, Cycle cost, Cycle first, Cycle interval, Cycle window) {
  // Work that needs `cost` cycles from `from` loses `window` at every refresh it reaches
  // (one falling due exactly at its end included), the first at `first`, then one every
  // `interval`: in closed form, so that no cost, however large, takes time to place.
  // Each interval leaves interval - window (> 0, the constructor's check) for the work.
  const Cycle end = from + cost;
  if (end < first) return end;
  const Cycle reached = (end - first) / (interval - window) + 1;
  return end + reached * window;
}

Cycle FastDram::activations_end_across(Cycle from, Cycle cost) const {
  const DramTimings& tm = spec_.timing;
  switch (params_.controller.refresh) {
    case RefreshMode::Off:
      act_quiet_from_ = 0;
      act_quiet_to_ = kNever;
      return from + cost;
    case RefreshMode::AllBank: {
      from = refresh_window_end(kAnyGroup, from);
      const Cycle k0 = refi_index(from);
      act_quiet_from_ = k0 == 0 ? 0 : k0 * tm.REFI + tm.RP + tm.RFCab;
      act_quiet_to_ = (k0 + 1) * tm.REFI;
      return stretched_by_refreshes(from, cost, (k0 + 1) * tm.REFI, tm.REFI, tm.RP + tm.RFCab);
    }
    case RefreshMode::PerBank: {
      const Cycle k0 = from / refresh_step_;
      act_quiet_from_ = k0 * refresh_step_;
      act_quiet_to_ = (k0 + 1) * refresh_step_;
      return stretched_by_refreshes(from, cost, (k0 + 1) * refresh_step_, refresh_step_, tm.RRD_S + tm.RREFD);
    }
  }
  return from + cost;
}

bool FastDram::row_survives(std::uint32_t index, std::uint32_t bank, Cycle opened, Cycle used) {
  used = std::max(used, opened);  // a row booked to open later is open for a booking now
  switch (params_.controller.refresh) {
    case RefreshMode::Off:
      return true;
    case RefreshMode::AllBank:
      return refi_index(opened) == refi_index(used);
    case RefreshMode::PerBank:
      return !decide_refreshes(index, bank, used).refreshed_in(bank, opened, used);
  }
  return true;
}

const PerBankRefreshPlan& FastDram::decide_refreshes(std::uint32_t index, std::uint32_t bank, Cycle t) {
  Pc& pc = *pcs_[index];
  if (t <= pc.plan->decided_through()) return *pc.plan;
  const DramOrganization& org = spec_.org;
  // A bank has a request queued at `due` if a booking's column command comes after it, if
  // a buffered write or a read held by write mode is for it, or if it is `bank`, whose
  // access is being booked now (queued at every due time from now on).
  const auto queued = [&](std::uint32_t b, Cycle due) {
    if (b == bank && due >= now_) return true;
    const Bank& k = pc.banks[b];
    if (k.last_col > due || k.past[0].last_col > due) return true;
    for (std::size_t i = pc.drained; i < pc.buffered.size(); ++i) {
      if (bank_of(pc.buffered[i].where, org) == b) return true;
    }
    return std::any_of(pc.held.begin(), pc.held.end(), [&](const Waiting& w) { return bank_of(w.where, org) == b; });
  };
  // The REFpbs due by now are decided for good: every booking asks about its arrival or
  // later (row_survives, place_act), so each is decided with the requests that arrived
  // before it fell due, as the controller decides it. Later ones are not known yet (more
  // requests may come first): a question about them is answered from a copy of the plan
  // that decides them from what is booked now, and is then dropped.
  if (params_.controller.scheduler == SchedulerKind::Fcfs) {
    // For settle_refreshes: those still holding their banks (an ACT booked from now on
    // may have ignored them).
    const Cycle rfc = spec_.timing.RFCpb;
    pc.plan->decide_through(now_, queued, [&pc, rfc, this](std::uint32_t b, Cycle due) {
      if (due + rfc > now_) pc.late_refreshes.emplace_back(b, due);
    });
  } else {
    pc.plan->decide_through(now_, queued);
  }
  if (t <= now_) return *pc.plan;
  tentative_plan_ = *pc.plan;
  tentative_plan_->decide_through(t, queued);
  return *tentative_plan_;
}

Cycle FastDram::bank_refresh_end(std::uint32_t index, std::uint32_t bank, Cycle t, Cycle opened, Cycle precharged) {
  if (params_.controller.refresh != RefreshMode::PerBank) return t;
  const Cycle due = decide_refreshes(index, bank, t).latest(bank, t);
  if (due == 0) return t;
  const Cycle end = refpb_issue(due, opened, precharged) + spec_.timing.RFCpb;
  return t < end ? end : t;
}

bool FastDram::busy_at(std::uint32_t index, Cycle t) const {
  const Pc& pc = *pcs_[index];
  if (pc.drained < pc.buffered.size() || !pc.held.empty()) return true;
  return std::any_of(pc.banks.begin(), pc.banks.end(),
                     [t](const Bank& b) { return b.last_col > t || b.past[0].last_col > t; });
}

Cycle FastDram::after_refpb(std::uint32_t index, std::uint32_t bank, Cycle c) {
  if (!params_.calibration.single_access_rrefd || params_.controller.refresh != RefreshMode::PerBank ||
      c < refresh_step_) {
    return c;
  }
  const Cycle due = c / refresh_step_ * refresh_step_;
  const std::uint32_t refreshed = decide_refreshes(index, bank, c).bank_due(due);
  if (refreshed == bank || refreshed == PerBankRefreshPlan::kNone) return c;
  Cycle issued = due;
  if (shares_row_bus() && (now_ <= due || busy_at(index, due))) {
    // Controllers with requests queued issue their REFpbs in pseudo-channel order, one a
    // cycle on the row bus; an idle one issues it when it falls due.
    const std::uint32_t first = index / spec_.org.pseudo_channels * spec_.org.pseudo_channels;
    for (std::uint32_t s = first; s < index; ++s) issued += busy_at(s, due) ? 1 : 0;
  }
  const Bank& r = pcs_[index]->banks[refreshed];
  issued = refpb_issue(issued, r.act, r.pre_allowed + spec_.timing.RP);
  const Cycle end = issued + spec_.timing.RREFD;
  return c >= issued && c < end ? end : c;
}

// ---- booking --------------------------------------------------------------------------

Cycle FastDram::spec_gap(bool a_write, bool b_write, bool same_group, double scale) const {
  // Minimum distance between the column command of access a and that of a later access b.
  const DramTimings& t = spec_.timing;
  if (a_write == b_write) return std::max<Cycle>(t.burst_cycles, same_group ? t.CCD_L : t.CCD_S);
  if (!a_write) {
    // RD -> WR: tRTW, and the write data may not start before the read data ended.
    const Cycle bus = t.CL + t.burst_cycles > t.CWL ? t.CL + t.burst_cycles - t.CWL : 0;
    return std::max<Cycle>(bus, static_cast<Cycle>(std::llround(t.RTW * scale)));
  }
  // WR -> RD: CWL + nBL + tWTR_S/L.
  const Cycle wtr = t.CWL + t.burst_cycles + (same_group ? t.WTR_L : t.WTR_S);
  return std::max<Cycle>(t.burst_cycles, static_cast<Cycle>(std::llround(static_cast<double>(wtr) * scale)));
}

Cycle FastDram::place_act(std::uint32_t index, Cycle lower, std::uint32_t group, std::uint32_t bank, Cycle opened,
                          Cycle precharged) {
  Pc& pc = *pcs_[index];
  const DramTimings& t = spec_.timing;
  const Cycle faw = faw_;
  auto& acts = pc.acts;
  while (!acts.empty() && acts.front().at + faw + t.RRD_L < now_) acts.pop_front();
  Cycle c = lower;
  for (;;) {
    const Cycle before = c;
    c = refresh_window_end(kAnyGroup, c);                      // all-bank windows block every ACT
    c = bank_refresh_end(index, bank, c, opened, precharged);  // a REFpb blocks its bank
    c = after_refpb(index, bank, c);                           // and the others for tRREFD (if set)
    // tRRD against every neighbour.
    const auto from = std::lower_bound(acts.begin(), acts.end(), c >= faw ? c - faw : 0,
                                       [](const Act& a, Cycle v) { return a.at < v; });
    auto it = from;
    for (; it != acts.end() && it->at < c + faw; ++it) {
      const Cycle rrd = it->group == group ? t.RRD_L : t.RRD_S;
      if (c + rrd > it->at && c < it->at + rrd) {
        c = it->at + rrd;
        break;
      }
    }
    if (c != before) continue;
    // tFAW: with c inserted, every five consecutive ACTs span at least tFAW.
    Cycle window[16];
    std::size_t n = 0, pos = 0;
    for (it = from; it != acts.end() && it->at < c + faw && n < 15; ++it) {
      if (it->at <= c) pos = n + 1;
      window[n++] = it->at;
    }
    std::copy_backward(window + pos, window + n, window + n + 1);
    window[pos] = c;
    ++n;
    bool moved = false;
    for (std::size_t j = pos >= 4 ? pos - 4 : 0; j + 4 < n && j <= pos; ++j) {
      if (window[j + 4] - window[j] < faw) {
        c = window[j] + faw;
        moved = true;
        break;
      }
    }
    if (moved || c != before) continue;
    if (shares_row_bus()) c = row_bus_free(index, c);
    if (c == before) break;
  }
  const auto at = std::upper_bound(acts.begin(), acts.end(), c, [](Cycle v, const Act& a) { return v < a.at; });
  acts.insert(at, Act{c, group, lower});
  return c;
}

Cycle FastDram::append_stream(std::uint32_t index, Cycle ready, Cycle length, bool write, Cycle bank_ready,
                              double exposed, bool opens_rows, bool joins) {
  // Bulk traffic goes after everything booked: searching a long backlog for gaps would cost
  // O(backlog) per booking, and a sequential transfer leaves no gaps to fill. The last
  // stream booking is the pseudo-channel's StreamState tail, not yet in its slot list.
  StreamState& st = streams_[index];
  Cycle c = ready;
  bool have = false, last_write = false;
  Cycle last_end = 0;
  if (st.tail) {
    have = true;
    last_end = st.last_col;
    last_write = st.write;
  } else if (!pcs_[index]->slots.empty()) {
    const Slot& last = pcs_[index]->slots.back();
    have = true;
    last_end = last.last_col;
    last_write = last.write;
  }
  // A write joining a write mode in progress makes no switch: booked as the direction the
  // timeline is in (the reads booked since the mode began come after it in the controller).
  if (joins && have) write = last_write;
  if (have) {
    c = std::max(c, last_end + stream_gap(last_write, write));
    if (last_write != write) {
      // A read/write switch. The controller serves one queue at a time and opens no rows for
      // the other, so the new direction's activations start at the switch: its first column
      // is tRCD after the other direction's last, and a wait for a bank has nothing of its
      // own direction queued to hide behind.
      if (opens_rows) c = std::max(c, last_end + (write ? spec_.timing.RCDWR : spec_.timing.RCDRD));
      exposed = 1.0;
    }
  }
  if (bank_ready > c) c += static_cast<Cycle>(exposed * static_cast<double>(bank_ready - c) + 0.5);
  c = refresh_window_end(kAnyGroup, c);
  if (st.tail && st.write == write && c == st.last_col + gap(write, kAnyGroup, write, kAnyGroup)) {
    // Back to back with the previous stream of the same direction: one booking covers both
    // (a single access could not fit in the column-to-column gap between them anyway).
    st.last_col = c + length;
    return c;
  }
  // A tail that ended long ago can no longer constrain a booking (every booking starts at or
  // after now): it is dropped rather than written to the pseudo-channel's list.
  if (st.tail && st.last_col + kSlotSpan >= now_) flush_tail(index);
  st.tail = true;
  st.col = c;
  st.last_col = c + length;
  st.write = write;
  return c;
}

void FastDram::flush_tail(std::uint32_t index) {
  StreamState& st = streams_[index];
  if (!st.tail) return;
  auto& slots = pcs_[index]->slots;
  drop_past(slots, now_);
  slots.push_back(Slot{st.col, st.last_col, kAnyGroup, kAnyGroup, st.write});
  st.tail = false;
}

bool FastDram::contends_for_buses(const Pc& pc, bool write) const {
  return spec_.org.pseudo_channels > 1 && pc.queued(write, now_) < spec_.org.banks_per_pc();
}

Cycle FastDram::row_bus_free(std::uint32_t index, Cycle c) const {
  const std::uint32_t per = spec_.org.pseudo_channels;
  const std::uint32_t first = index / per * per;
  const Cycle hold = spec_.timing.ACT_bus;
  for (std::uint32_t s = first; s < first + per; ++s) {
    if (s == index) continue;
    // An ACT of the sibling at a holds the bus over [a, a + hold); this one needs [c, c + hold).
    const auto& acts = pcs_[s]->acts;
    const auto it = std::lower_bound(acts.begin(), acts.end(), c + 1 > hold ? c + 1 - hold : 0,
                                     [](const Act& a, Cycle v) { return a.at < v; });
    if (it != acts.end() && it->at < c + hold) return it->at + hold;
  }
  return c;
}

Cycle FastDram::column_bus_slot(std::uint32_t index, Cycle c) const {
  const std::uint32_t per = spec_.org.pseudo_channels;
  const std::uint32_t first = index / per * per;
  const Cycle w = params_.calibration.column_bus_window;
  const Cycle from = c > w ? c - w : 0;
  for (std::uint32_t s = first; s < first + per; ++s) {
    if (s == index) continue;
    const StreamState& st = streams_[s];
    bool near = st.tail && st.col <= c + w && st.last_col >= from;
    if (!near) {
      const auto& slots = pcs_[s]->slots;
      const auto it =
          std::lower_bound(slots.begin(), slots.end(), from, [](const Slot& x, Cycle v) { return x.last_col < v; });
      near = it != slots.end() && it->col <= c + w;
    }
    if (near) return c + (index % per + per - c % per) % per;
  }
  return c;
}

Cycle FastDram::place_slot(std::uint32_t index, Cycle ready, Cycle length, bool write, std::uint32_t group_first,
                           std::uint32_t group_last, bool shared_buses, Cycle limit, bool insert) {
  // `length`: cycles from the first to the last column command of the booking.
  flush_tail(index);  // the slot list then holds every booking, in order
  auto& slots = pcs_[index]->slots;
  const Cycle span = kSlotSpan;
  drop_past(slots, now_);
  const DramTimings& t = spec_.timing;
  const Cycle lat = write ? t.CWL : t.CL;
  Cycle c = ready;
  for (;;) {
    const Cycle before = c;
    if (params_.controller.refresh == RefreshMode::AllBank) {
      // Nothing issues inside an all-bank refresh window (single accesses move past it;
      // streams are stretched by book_stream instead).
      const Cycle end = refresh_window_end(kAnyGroup, c);
      if (end != c) c = end;
      const Cycle next_start = (refi_index(c) + 1) * t.REFI;
      if (length == 0 && c + lat + t.burst_cycles > next_start) c = next_start + t.RP + t.RFCab;
    }
    const auto from = std::lower_bound(slots.begin(), slots.end(), c >= span ? c - span : 0,
                                       [](const Slot& s, Cycle v) { return s.last_col < v; });
    // One forward pass: moving c later never breaks the spacing to a slot already passed.
    // A gap is looked for among the next kGapSearch slots only; past them the booking
    // goes among the last kTailSearch slots, or after them (a scheduler's lookahead is
    // finite too, and this keeps a booking O(1) however long the backlog). The tail is
    // where an access waiting for its activation leaves a gap (booked past the others'
    // columns): the requests the controller holds by then would fill it.
    constexpr int kGapSearch = 96;
    constexpr std::ptrdiff_t kTailSearch = 16;
    int steps = 0;
    bool at_tail = false;
    for (auto it = from; it != slots.end() && it->col <= c + length + span; ++it) {
      if (!at_tail && ++steps > kGapSearch && slots.end() - it > kTailSearch) {
        it = slots.end() - kTailSearch - 1;  // this pass goes on at the tail
        c = std::max(c, it->last_col + gap(it->write, it->group_last, write, group_first));
        at_tail = true;
        continue;
      }
      if (it->col <= c) {
        const Cycle need = it->last_col + gap(it->write, it->group_last, write, group_first);
        if (c < need) c = need;
      } else if (it->col < c + length + gap(write, group_last, it->write, it->group_first)) {
        c = it->last_col + gap(it->write, it->group_last, write, group_first);
      }
    }
    if (c == before && shared_buses) c = column_bus_slot(index, c);
    if (c == before) break;
    if (c > limit) return kNever;
  }
  if (c > limit) return kNever;
  if (!insert) return c;
  const auto at = std::upper_bound(slots.begin(), slots.end(), c, [](Cycle v, const Slot& s) { return v < s.col; });
  slots.insert(at, Slot{c, c + length, group_first, group_last, write});
  return c;
}

FastDram::Booking FastDram::book_access(std::uint32_t index, const DecodedAddress& d, bool write, Cycle arrival,
                                        Cycle queued) {
  Pc& pc = *pcs_[index];
  const DramTimings& t = spec_.timing;
  const DramOrganization& org = spec_.org;
  const ControllerParams& cp = params_.controller;
  const std::uint32_t group = group_of(d, org);
  const std::uint32_t bank_index = bank_of(d, org);
  Bank& b = pc.banks[bank_index];
  // FCFS: the controller looks at the oldest request of its queue only, so an access's
  // commands wait for the column command of the one booked before it (from the next cycle:
  // the controller takes that one off its queue as it issues it).
  if (cp.scheduler == SchedulerKind::Fcfs && !pc.slots.empty()) {
    arrival = std::max(arrival, pc.slots.back().col + 1);
  }

  if (b.epoch != streams_[index].epoch) {
    b.open_row = kClosed;  // a stream went through since this bank was last used
    b.epoch = streams_[index].epoch;
    for (Bank::Past& p : b.past) p.row = kClosed;
  }
  const Bank::Past previous{b.open_row, b.act, b.last_col, 0};
  ++b.bookings;
  const bool shared_buses = contends_for_buses(pc, write);
  bool open = b.open_row != kClosed && cp.page_policy != PagePolicy::Closed;
  if (open && !row_survives(index, bank_index, b.act, arrival)) {
    open = false;  // a refresh closed it
    b.open_row = kClosed;
  }
  if (b.open_row != d.row && cp.page_policy != PagePolicy::Closed && cp.scheduler == SchedulerKind::FrFcfs) {
    // A row the bank has been booked to close, still open for this access (FR-FCFS serves
    // its hits before the precharge), if its column fits before the next ACT's tRP. Before
    // the adaptive close below: the bank's current row stays as it is.
    const PastHit h = past_hit(b, d.row, write, cp.page_policy == PagePolicy::Adaptive, arrival, queued, t);
    const Cycle col = h.fits ? place_slot(index, h.first, 0, write, group, group, shared_buses, h.last) : kNever;
    if (col != kNever && !row_survives(index, bank_index, h.row->act, col)) {
      erase_booking(pc.slots, pc.acts, col, write, kNever);  // a refresh closes the row first
    } else if (col != kNever) {
      h.row->last_col = std::max(h.row->last_col, col);
      (write ? pc.write_cols : pc.read_cols).push(col);
      const Cycle data_end = col + (write ? t.CWL : t.CL) + t.burst_cycles;
      return Booking{data_end + cp.latency, col, kNever, RowOutcome::Hit};
    }
  }
  const auto same_open_row = [&](const DecodedAddress& w) {
    return w.row == b.open_row && w.bank == d.bank && w.bank_group == d.bank_group && w.sid == d.sid;
  };
  const auto queued_for_open_row = [&](const auto& r) {  // a read queued by the row's last column
    return r.request.arrival <= b.last_col && same_open_row(r.where);
  };
  if (open && cp.page_policy == PagePolicy::Adaptive && (queued > b.last_col || b.open_row != d.row) &&
      std::none_of(pc.buffered.begin() + static_cast<std::ptrdiff_t>(pc.drained), pc.buffered.end(),
                   [&](const Buffered& w) { return same_open_row(w.where); }) &&
      std::none_of(pc.held.begin(), pc.held.end(), queued_for_open_row) &&
      std::none_of(pc.again.begin() + static_cast<std::ptrdiff_t>(pc.again_next), pc.again.end(),
                   queued_for_open_row)) {
    // The adaptive policy closes a row with its last queued hit, reads and writes counted
    // (an auto-precharge): an access queued after that column command finds the bank
    // precharged, unless an access of the row queued by then and not booked yet kept it
    // open (a buffered write, a read write mode holds, or one keep_row_open books again
    // after this one); one for another row, queued before it, does not keep it open
    // either. Either is a miss, as in DramController (a conflict there is a row its PRE
    // closes: one a write activated before write mode ended, or one kept open so).
    open = false;
    b.open_row = kClosed;
    b.act_allowed = std::max(b.act + t.RC, b.pre_allowed + t.RP);
  }
  Cycle col_ready = arrival;
  Cycle act = kNever;
  Cycle act_ready = kNever;
  RowOutcome outcome = RowOutcome::Hit;
  if (open && b.open_row == d.row) {
    col_ready = std::max(arrival, b.act + (write ? t.RCDWR : t.RCDRD));
  } else {
    Cycle act_lower = std::max(arrival, b.act_allowed);
    if (open) {
      // A conflict: precharge the open row first.
      const Cycle pre = cp.page_policy == PagePolicy::Adaptive && cp.scheduler == SchedulerKind::FrFcfs
                            ? b.pre_allowed
                            : std::max(arrival, b.pre_allowed);
      act_lower = std::max({act_lower, pre + t.RP, b.act + t.RC});
      outcome = RowOutcome::Conflict;
    } else {
      outcome = RowOutcome::Miss;
    }
    act_ready = act_lower;
    act = place_act(index, act_lower, group, bank_index, b.act, b.pre_allowed + t.RP);
    if (previous.row != kClosed) {
      std::copy_backward(b.past, b.past + Bank::kPast - 1, b.past + Bank::kPast);
      b.past[0] = previous;
      b.past[0].end = act - t.RP;
    }
    b.open_row = d.row;
    b.act = act;
    b.pre_allowed = act + t.RAS;
    b.act_allowed = act + t.RC;
    col_ready = act + (write ? t.RCDWR : t.RCDRD);
  }
  const Cycle col = place_slot(index, col_ready, 0, write, group, group, shared_buses);
  (write ? pc.write_cols : pc.read_cols).push(col);
  b.last_col = std::max(b.last_col, col);
  const Cycle data_end = col + (write ? t.CWL : t.CL) + t.burst_cycles;
  b.pre_allowed = std::max(b.pre_allowed, write ? col + t.CWL + t.burst_cycles + t.WR : col + t.RTP);
  if (cp.page_policy == PagePolicy::Closed) {
    b.open_row = kClosed;  // auto-precharge
    b.act_allowed = std::max(b.act + t.RC, b.pre_allowed + t.RP);
  }
  return Booking{data_end + cp.latency, col, act, outcome, act == kNever ? kNever : act_ready};
}

FastDram::RowOutcome FastDram::commands_only(RowOutcome outcome) {
  return outcome == RowOutcome::Miss       ? RowOutcome::Reopened
         : outcome == RowOutcome::Conflict ? RowOutcome::Reconflict
                                           : RowOutcome::Counted;
}

void FastDram::count_row(std::uint32_t index, RowOutcome outcome) {
  // The access's row outcome, once, then the commands its booking needed: a PRE for a
  // conflict, an ACT for anything but a hit (Reopened / Reconflict: only the commands).
  PcStats& s = pcs_[index]->stats;
  switch (outcome) {
    case RowOutcome::Counted:
      return;
    case RowOutcome::Hit:
      s.row_hits.inc();
      return;
    case RowOutcome::Miss:
      s.row_misses.inc();
      break;
    case RowOutcome::Conflict:
      s.row_conflicts.inc();
      s.pre.inc();
      break;
    case RowOutcome::Reopened:
      break;
    case RowOutcome::Reconflict:
      s.pre.inc();
      break;
  }
  s.act.inc();
}

FastDram::Booking FastDram::book_journalled(std::uint32_t index, const MemRequest& request, const DecodedAddress& d,
                                            bool write, Cycle arrival, std::uint64_t parent) {
  Pc& pc = *pcs_[index];
  auto& own = write ? pc.wjournal : pc.journal;
  // Bookings whose column command has issued can no longer be taken back: they leave the
  // journal from its front (booking order is close to column order). The other
  // direction's can no longer be either, this one being booked after them.
  while (!own.empty() && own.front().col <= now_) own.pop_front();
  (write ? pc.journal : pc.wjournal).clear();
  const std::uint32_t bank = bank_of(d, spec_.org);
  Journalled j{request, d, pc.banks[bank], {}, bank, kNever, 0, next_ticket_++};
  j.parent = parent;
  const Booking b = book_access(index, d, write, arrival, request.arrival);
  j.after = pc.banks[bank];
  j.act = b.act;
  j.col = b.col;
  j.ready = b.ready;
  j.outcome = static_cast<std::uint8_t>(b.outcome);
  own.push_back(j);
  return b;
}

bool FastDram::take_back_for_hit(std::uint32_t index, const DecodedAddress& d, bool write, Cycle arrival,
                                 Cycle queued) {
  const ControllerParams& cp = params_.controller;
  if (cp.page_policy == PagePolicy::Closed || cp.scheduler != SchedulerKind::FrFcfs) return false;
  Pc& pc = *pcs_[index];
  const DramTimings& t = spec_.timing;
  const std::uint32_t group = group_of(d, spec_.org);
  const std::uint32_t bank = bank_of(d, spec_.org);
  Bank& b = pc.banks[bank];
  if (b.epoch != streams_[index].epoch || b.open_row == d.row) return false;
  const PastHit h = past_hit(b, d.row, write, cp.page_policy == PagePolicy::Adaptive, arrival, queued, t);
  if (h.row == nullptr || !row_survives(index, bank, h.row->act, h.first)) return false;
  if (h.fits &&
      place_slot(index, h.first, 0, write, group, group, contends_for_buses(pc, write), h.last, false) != kNever) {
    return false;  // it fits before the precharge: book_access serves it there
  }
  // The bank's bookings since the row closed: every one must be of this direction and
  // still possible to take back (in its journal, its commands not issued).
  const Cycle next_act = h.row->end + t.RP;
  auto& journal = write ? pc.wjournal : pc.journal;
  while (!journal.empty() && journal.front().col <= now_) journal.pop_front();
  std::vector<std::size_t>& mine = pc.mine;  // journal positions, newest first
  mine.clear();
  for (std::size_t i = journal.size(); i-- > 0;) {
    const Journalled& j = *(journal.begin() + static_cast<std::ptrdiff_t>(i));
    if (j.bank != bank) continue;
    const Cycle opened = j.act != kNever ? j.act : j.before.act;
    if (opened < next_act) break;
    mine.push_back(i);
  }
  if (mine.empty()) return false;
  const Journalled& oldest = *(journal.begin() + static_cast<std::ptrdiff_t>(mine.back()));
  const Journalled& newest = *(journal.begin() + static_cast<std::ptrdiff_t>(mine.front()));
  if (oldest.act != next_act || oldest.before.open_row != d.row || oldest.before.act != h.row->act) return false;
  if (b.bookings != newest.after.bookings) return false;  // a later booking of the bank is not in the journal
  for (std::size_t i : mine) {
    const Journalled& j = *(journal.begin() + static_cast<std::ptrdiff_t>(i));
    if (j.col <= arrival || (j.act != kNever && j.act <= arrival)) return false;
  }
  pc.rejoin.clear();
  for (std::size_t i : mine) {  // newest first
    const auto it = journal.begin() + static_cast<std::ptrdiff_t>(i);
    const Journalled j = *it;
    cancel_booking(index, j.col, j.act, j.ticket, write);
    pc.rejoin.push_back(j);
    journal.erase(it);
  }
  std::reverse(pc.rejoin.begin(), pc.rejoin.end());
  pc.banks[bank] = pc.rejoin.front().before;
  return true;
}

Cycle FastDram::book_taken_back(std::uint32_t index, bool write, std::uint32_t row, bool same_row, Cycle arrival) {
  // FR-FCFS serves the row's hits first, in age order: the taken-back accesses of this row
  // (hits booked there after its closing was booked) before the one that took them back,
  // the bank's others after it.
  Cycle last_col = 0;
  for (const Journalled& j : pcs_[index]->rejoin) {
    if ((j.where.row == row) != same_row) continue;
    const bool counted = recounted(static_cast<RowOutcome>(j.outcome));
    if (!write) {
      book_read(index, j.request, j.where, arrival, j.parent, counted);
      continue;
    }
    last_col = std::max(last_col, book_write(index, j.request, j.where, arrival, counted, j.parent));
  }
  return last_col;
}

bool FastDram::can_rebook_from(std::uint32_t index, bool write, std::size_t cut, bool cut_closed) const {
  const Pc& pc = *pcs_[index];
  const auto& journal = write ? pc.wjournal : pc.journal;
  if (cut >= journal.size()) return false;
  std::vector<std::uint8_t>& seen = pc.seen;
  seen.assign(pc.banks.size(), 0);
  const auto first = journal.begin() + static_cast<std::ptrdiff_t>(cut);
  for (auto it = journal.end(); it != first;) {
    --it;
    if (it->col <= now_) return false;  // issued: it cannot move
    if (it->act != kNever && it->act < now_ && !(cut_closed && it == first)) return false;
    // The bank's latest booking in the journal is its latest of all (else one outside the
    // journal came later, and the bank cannot be restored).
    if (!seen[it->bank] && pc.banks[it->bank].bookings != it->after.bookings) return false;
    seen[it->bank] = 1;
  }
  return true;
}

void FastDram::rebook_from(std::uint32_t index, bool write, std::size_t cut, bool cut_closed) {
  Pc& pc = *pcs_[index];
  auto& journal = write ? pc.wjournal : pc.journal;
  const DramTimings& t = spec_.timing;
  // Taken back newest first, each restoring its bank as it found it; booked again in their
  // order.
  pc.again.assign(journal.begin() + static_cast<std::ptrdiff_t>(cut), journal.end());
  while (journal.size() > cut) {
    const Journalled& j = journal.back();
    const bool closed = cut_closed && journal.size() == cut + 1;
    cancel_booking(index, j.col, closed ? kNever : j.act, j.ticket, write);  // an issued ACT stays
    pc.banks[j.bank] = j.before;
    if (closed && j.act != kNever) {
      // The row its ACT opened, which the refresh's PRE closes (row_survives sees the REFpb
      // after the ACT): not before tRAS, nor before the refresh fell due.
      Bank& b = pc.banks[j.bank];
      b.open_row = j.where.row;
      b.act = j.act;
      b.pre_allowed = std::max(j.act + t.RAS, now_);
      b.act_allowed = j.act + t.RC;
      pc.stats.act.inc();  // the rebooking counts its own ACT
    }
    if (closed) pc.stats.pre.inc();
    journal.pop_back();
  }
  rebooking_ = true;
  Cycle last_col = 0;
  for (std::size_t k = 0; k < pc.again.size(); ++k) {
    pc.again_next = k + 1;
    const Journalled& j = pc.again[k];
    const bool counted = recounted(static_cast<RowOutcome>(j.outcome));
    if (write) {
      last_col = std::max(last_col, book_write(index, j.request, j.where, now_, counted, j.parent));
    } else {
      book_read(index, j.request, j.where, now_, j.parent, counted);
    }
  }
  rebooking_ = false;
  pc.again.clear();
  pc.again_next = 0;
  if (write) pc.write_mode_end = std::max(pc.write_mode_end, last_col);  // the write mode ends later
}

std::size_t FastDram::refresh_cut(std::uint32_t index, bool write, std::uint32_t bank, Cycle due, std::size_t cut,
                                  bool& closed) const {
  const Pc& pc = *pcs_[index];
  const auto& journal = write ? pc.wjournal : pc.journal;
  const bool no_postpone = params_.controller.refresh_postpone == 0;
  for (std::size_t i = 0; i < cut; ++i) {
    const Journalled& j = *(journal.begin() + static_cast<std::ptrdiff_t>(i));
    if (j.bank != bank) continue;
    if (j.act != kNever && j.act >= std::max(due, now_) && j.act < due + spec_.timing.RFCpb) {
      closed = false;
      return i;
    }
    if (no_postpone && j.col > now_ && (j.act != kNever ? j.act : j.before.act) < due) {
      closed = true;
      return i;
    }
  }
  return cut;
}

void FastDram::settle_refreshes(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  if (pc.late_refreshes.empty()) return;
  std::size_t cut = pc.journal.size();
  bool cut_closed = false;
  for (const auto& [bank, due] : pc.late_refreshes) cut = refresh_cut(index, false, bank, due, cut, cut_closed);
  pc.late_refreshes.clear();
  // It and every read booked after it: the first now waits for the REFpb, the others for it.
  if (can_rebook_from(index, false, cut, cut_closed)) rebook_from(index, false, cut, cut_closed);
}

void FastDram::settle_write_refresh(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  if (pc.wjournal.empty()) return;
  // The bank the REFpb falling due now refreshes (decide_refreshes has decided it).
  const PerBankRefreshPlan& plan = *pc.plan;
  for (std::uint32_t bank = 0; bank < pc.banks.size(); ++bank) {
    if (plan.latest(bank, now_) != now_) continue;
    bool closed = false;
    const std::size_t cut = refresh_cut(index, true, bank, now_, pc.wjournal.size(), closed);
    if (can_rebook_from(index, true, cut, closed)) rebook_from(index, true, cut, closed);
    return;
  }
}

void FastDram::schedule_refresh_due(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  if (pc.refresh_due != kNever && pc.refresh_due > now_) return;
  pc.refresh_due = (now_ / refresh_step_ + 1) * refresh_step_;
  done_.push(Done{pc.refresh_due, seq_++, MemRequest{}, index, Event::RefreshDue, RowOutcome::Counted, 0});
}

void FastDram::keep_row_open(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  auto& journal = pc.journal;
  if (journal.size() < 2) return;
  const Journalled& x = journal.back();
  // The bank's bookings since the last one of x's row: the first of them, made before x
  // came, took that row as closed by the adaptive policy with its last column, which had
  // not issued when x came.
  std::size_t first = journal.size() - 1;
  for (std::size_t i = journal.size() - 1; i-- > 0;) {
    const Journalled& j = *(journal.begin() + static_cast<std::ptrdiff_t>(i));
    if (j.bank != x.bank) continue;
    if (j.where.row == x.where.row) break;
    first = i;
  }
  if (first == journal.size() - 1) return;
  const Journalled& j = *(journal.begin() + static_cast<std::ptrdiff_t>(first));
  const auto outcome = static_cast<RowOutcome>(j.outcome);
  if ((outcome != RowOutcome::Miss && outcome != RowOutcome::Reopened) || j.before.open_row != x.where.row ||
      j.before.last_col < x.request.arrival) {
    return;
  }
  if (can_rebook_from(index, false, first)) rebook_from(index, false, first);
}

void FastDram::book_read(std::uint32_t index, const MemRequest& request, const DecodedAddress& d, Cycle arrival,
                         std::uint64_t parent, bool counted) {
  Pc& pc = *pcs_[index];
  const bool moved = !rebooking_ && take_back_for_hit(index, d, false, arrival, request.arrival);
  if (moved) {
    rebooking_ = true;
    book_taken_back(index, false, d.row, true, arrival);
  }
  const Booking b = book_journalled(index, request, d, false, arrival, parent);
  pc.last_read_col = std::max(pc.last_read_col, b.col);
  Journalled& j = pc.journal.back();
  j.outcome = static_cast<std::uint8_t>(counted ? commands_only(b.outcome) : b.outcome);
  done_.push(
      Done{b.done, seq_++, request, index, Event::Completion, static_cast<RowOutcome>(j.outcome), j.ticket, parent});
  if (moved) {
    book_taken_back(index, false, d.row, false, arrival);
    pc.rejoin.clear();
    rebooking_ = false;
  }
  if (!rebooking_ && params_.controller.scheduler == SchedulerKind::Fcfs) {
    settle_refreshes(index);
    if (params_.controller.page_policy == PagePolicy::Adaptive) keep_row_open(index);
    if (params_.controller.refresh == RefreshMode::PerBank) schedule_refresh_due(index);
  }
}

Cycle FastDram::book_write(std::uint32_t index, const MemRequest& request, const DecodedAddress& d, Cycle arrival,
                           bool counted, std::uint64_t parent) {
  Pc& pc = *pcs_[index];
  const bool moved = !rebooking_ && take_back_for_hit(index, d, true, arrival, request.arrival);
  Cycle last_col = 0;
  if (moved) {
    rebooking_ = true;
    last_col = book_taken_back(index, true, d.row, true, arrival);
  }
  const Booking b = book_journalled(index, request, d, true, arrival, parent);
  Journalled& j = pc.wjournal.back();
  const RowOutcome outcome = counted ? commands_only(b.outcome) : b.outcome;
  j.outcome = static_cast<std::uint8_t>(outcome);
  done_.push(Done{b.done, seq_++, request, index, Event::Completion, outcome, j.ticket, parent});
  last_col = std::max(last_col, b.col);
  if (moved) {
    last_col = std::max(last_col, book_taken_back(index, true, d.row, false, arrival));
    pc.rejoin.clear();
    rebooking_ = false;
  }
  pc.late_refreshes.clear();  // this booking closed the reads' journal: settle_refreshes has none to move
  if (!rebooking_ && params_.controller.scheduler == SchedulerKind::Fcfs &&
      params_.controller.refresh == RefreshMode::PerBank) {
    schedule_refresh_due(index);  // (settle_write_refresh looks when it falls due)
  }
  return last_col;
}

bool FastDram::take_back_writes(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  auto& wj = pc.wjournal;
  while (!wj.empty() && wj.front().col <= now_) wj.pop_front();
  if (wj.empty()) return false;
  // A read has come: write mode ends once no more than write_low writes are left to issue.
  // The ones past that, newest first, are taken back (each restores its bank as it found
  // it) and wait in the buffer again, in arrival order, for the next read-free moment.
  // Booking order is not column order (a drain books the write whose bank is ready first,
  // a hit may come before an earlier booking's activation), so a write whose column has
  // issued can lie behind one that has not: it stays, and so does a write of its bank
  // booked before it (taking that one back would undo the bank state the issued one left).
  std::size_t unissued = static_cast<std::size_t>(
      std::count_if(wj.begin(), wj.end(), [this](const Journalled& j) { return j.col > now_; }));
  const std::size_t left = unissued + pc.buffered.size();
  const std::size_t low = params_.controller.write_low;
  const std::size_t go = left > low ? left - low : 0;
  std::vector<Buffered> back;
  std::vector<std::uint32_t>& stays = pc.stays;  // banks of issued writes passed on the way
  stays.clear();
  for (auto it = wj.end(); it != wj.begin() && unissued > go;) {
    --it;
    const Journalled& j = *it;
    if (j.col <= now_ || std::find(stays.begin(), stays.end(), j.bank) != stays.end()) {
      stays.push_back(j.bank);
      continue;
    }
    pc.banks[j.bank] = j.before;
    const bool activated = j.act != kNever && j.act <= now_;
    if (activated) {
      // Its activation has issued: the row stays open for it, and the activation and
      // the row outcome are counted now.
      Bank& b = pc.banks[j.bank];
      b.open_row = j.where.row;
      b.act = j.act;
      b.pre_allowed = j.act + spec_.timing.RAS;
      b.act_allowed = j.act + spec_.timing.RC;
      count_row(index, static_cast<RowOutcome>(j.outcome));
    }
    cancel_booking(index, j.col, activated ? kNever : j.act, j.ticket, true);
    back.push_back(Buffered{j.request, j.where, activated || recounted(static_cast<RowOutcome>(j.outcome)), j.parent});
    it = wj.erase(it);
    --unissued;
  }
  pc.buffered.insert(pc.buffered.begin(), back.rbegin(), back.rend());
  return !back.empty();
}

void FastDram::cancel_booking(std::uint32_t index, Cycle col, Cycle act, std::uint64_t ticket, bool write) {
  Pc& pc = *pcs_[index];
  erase_booking(pc.slots, pc.acts, col, write, act);
  cancelled_.insert(ticket);
  (write ? pc.write_cancelled : pc.read_cancelled).push(col);
}

void FastDram::push_done(Cycle at, const MemRequest& r, std::uint32_t pc, std::uint64_t parent) {
  done_.push(Done{at, seq_++, r, pc, Event::Completion, RowOutcome::Counted, 0, parent});
}

void FastDram::enqueue(MemRequest request) {
  check(request.addr, access_bytes());
  request.arrival = now_;
  const DecodedAddress d = mapping_.decode(request.addr);
  const std::uint32_t index = pc_index(d);
  Pc& pc = *pcs_[index];
  if (!has_room(pc, request.write)) {
    throw std::logic_error("FastDram::enqueue: the queue for address " + std::to_string(request.addr) +
                           " is full (call can_accept first)");
  }
  ++pending_;
  enqueue_access(index, request, d, 0);
}

void FastDram::enqueue_access(std::uint32_t index, const MemRequest& request, const DecodedAddress& d,
                              std::uint64_t parent) {
  Pc& pc = *pcs_[index];
  const ControllerParams& cp = params_.controller;
  if (request.write) {
    pc.stats.write_queue.sample(static_cast<double>(pc.queued(true, now_)));
    ++pc.writes;
    pc.stats.busy_cycles.inc(spec_.timing.burst_cycles);
    pc.stats.wr.inc();
    pc.stats.bytes_written.inc(spec_.org.access_bytes());
    if (pc.last_read_col > now_ || !pc.held.empty()) {
      // Reads wait for their column commands: the controller keeps writes queued until
      // the high watermark, or until no read waits any more.
      pc.buffered.push_back(Buffered{request, d, false, parent});
      if (pc.buffered.size() >= cp.write_high || (pc.write_mode_end > now_ && pc.buffered.size() > cp.write_low)) {
        pc.write_mode_end = drain(index, cp.write_low, now_);
      } else if (pc.drain_check == kNever && pc.held.empty()) {  // (held reads: resume_reads looks)
        schedule_drain_check(index, pc.last_read_col);
      }
    } else {
      const std::uint64_t ticket = next_ticket_;
      book_write(index, request, d, now_, false, parent);
      let_ready_act_first(index, ticket, true);
    }
    return;
  }
  pc.stats.read_queue.sample(static_cast<double>(pc.queued(false, now_)));
  ++pc.reads;
  // (With reads held the controller is in write mode with reads waiting already: this one
  // changes nothing until the queue is down to write_low.)
  if (pc.held.empty() && take_back_writes(index) && pc.drain_check == kNever) {
    // They go at the next read-free moment (looked for once this read is booked).
    schedule_drain_check(index, std::max(now_, pc.last_read_col));
  }
  for (const Buffered& w : pc.buffered) {
    if (w.request.addr == request.addr) {
      pc.stats.reads_from_write_queue.inc();
      push_done(now_ + cp.write_forward_latency + cp.latency, request, index, parent);
      return;
    }
  }
  pc.stats.busy_cycles.inc(spec_.timing.burst_cycles);
  pc.stats.rd.inc();
  pc.stats.bytes_read.inc(spec_.org.access_bytes());
  if (!pc.held.empty()) {
    pc.held.push_back(Waiting{request, d, parent});  // behind the reads write mode holds
    return;
  }
  const std::uint64_t ticket = next_ticket_;
  book_read(index, request, d, now_, parent);
  let_ready_act_first(index, ticket, false);
}

void FastDram::let_ready_act_first(std::uint32_t index, std::uint64_t ticket, bool write) {
  if (params_.controller.scheduler != SchedulerKind::FrFcfs) return;  // (FCFS waits for the oldest)
  Pc& pc = *pcs_[index];
  auto& journal = write ? pc.wjournal : pc.journal;
  if (journal.empty() || journal.back().ticket != ticket || next_ticket_ != ticket + 1) return;  // others moved
  const Journalled& x = journal.back();
  if (x.act == kNever || x.act <= x.ready || x.parent != 0) return;
  // Nothing to do unless an ACT within tFAW after x's ready cycle was not ready by then
  // (the pseudo-channel's ACT timeline answers without walking the journal).
  const Cycle faw = faw_;
  const auto& acts = pc.acts;
  auto a = std::upper_bound(acts.begin(), acts.end(), x.ready, [](Cycle v, const Act& y) { return v < y.at; });
  while (a != acts.end() && a->at < x.ready + faw && a->ready <= x.ready) ++a;
  if (a == acts.end() || a->at >= x.ready + faw) return;
  // The ACTs that keep x's from its ready cycle (within tFAW after it) and were booked for
  // accesses whose banks were not ready by then, with their banks' later bookings.
  std::vector<std::uint32_t>& banks = pc.moved;
  banks.clear();
  std::vector<std::size_t>& taken = pc.mine;  // journal positions, oldest first
  taken.clear();
  std::size_t i = 0;
  for (auto it = journal.begin(); it + 1 != journal.end(); ++it, ++i) {
    const Journalled& j = *it;
    const bool follows = std::find(banks.begin(), banks.end(), j.bank) != banks.end();
    const bool blocks = j.act != kNever && j.act > x.ready && j.act < x.ready + faw && j.ready > x.ready;
    if (!follows && (!blocks || j.bank == x.bank)) continue;
    if (j.col <= now_ || (j.act != kNever && j.act <= now_) || j.bank == x.bank || j.parent != 0) return;
    if (!follows) banks.push_back(j.bank);
    taken.push_back(i);
  }
  if (taken.empty()) return;
  for (const std::uint32_t bank : banks) {  // a later booking of the bank outside the journal
    auto last = journal.end() - 1;
    while ((--last)->bank != bank) {
    }
    if (pc.banks[bank].bookings != last->after.bookings) return;
  }
  // Take x and them back, newest first, each restoring its bank as it found it (their
  // copies go to `behind` oldest first), and close the journal over them.
  taken.push_back(journal.size() - 1);
  std::vector<Journalled>& behind = pc.behind;
  behind.clear();
  for (auto p = taken.rbegin(); p != taken.rend(); ++p) {
    const Journalled& j = *(journal.begin() + static_cast<std::ptrdiff_t>(*p));
    cancel_booking(index, j.col, j.act, j.ticket, write);
    pc.banks[j.bank] = j.before;
  }
  auto out = journal.begin() + static_cast<std::ptrdiff_t>(taken.front());
  std::size_t next = 0;
  std::size_t position = taken.front();
  for (auto in = out; in != journal.end(); ++in, ++position) {
    if (next < taken.size() && taken[next] == position) {
      behind.push_back(std::move(*in));
      ++next;
    } else {
      *out++ = std::move(*in);
    }
  }
  for (std::size_t k = 0; k < taken.size(); ++k) journal.pop_back();
  // Booked again in their order, except that x goes before those not ready by the cycle
  // its ACT can now take (a trial placement, undone): the ready ones are older.
  const Journalled& xj = behind.back();
  const Cycle trial = place_act(index, xj.ready, group_of(xj.where, spec_.org), xj.bank, xj.before.act,
                                xj.before.pre_allowed + spec_.timing.RP);
  erase_booking(pc.slots, pc.acts, kNever, write, trial);
  std::vector<std::size_t>& order = pc.order;  // positions in `behind`
  order.clear();
  const std::size_t n = behind.size() - 1;
  for (std::size_t k = 0; k < n; ++k) {
    if (behind[k].ready <= trial) order.push_back(k);
  }
  order.push_back(n);
  for (std::size_t k = 0; k < n; ++k) {
    if (behind[k].ready > trial) order.push_back(k);
  }
  rebooking_ = true;
  for (const std::size_t k : order) {
    const Journalled& j = behind[k];
    const bool counted = recounted(static_cast<RowOutcome>(j.outcome));
    if (write) {
      book_write(index, j.request, j.where, now_, counted, j.parent);
    } else {
      book_read(index, j.request, j.where, now_, j.parent, counted);
    }
  }
  rebooking_ = false;
  behind.clear();
}

void FastDram::schedule_drain_check(std::uint32_t index, Cycle at) {
  pcs_[index]->drain_check = at;
  done_.push(Done{at, seq_++, MemRequest{}, index, Event::DrainCheck, RowOutcome::Counted, 0});
}

void FastDram::schedule_resume(std::uint32_t index, Cycle at) {
  Pc& pc = *pcs_[index];
  at = std::max(at, now_);
  if (pc.resume_at == at) return;
  pc.resume_at = at;  // an earlier one still queued finds itself stale
  done_.push(Done{at, seq_++, MemRequest{}, index, Event::ResumeReads, RowOutcome::Counted, 0});
}

void FastDram::resume_reads(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  std::vector<Waiting> held;
  held.swap(pc.held);
  for (const Waiting& r : held) book_read(index, r.request, r.where, now_, r.parent, r.counted);
  if (params_.controller.scheduler == SchedulerKind::Fcfs && pc.buffered.size() >= params_.controller.write_high) {
    schedule_drain_check(index, starvation_end(index, now_));  // write mode again once no read starves
    return;
  }
  if (!pc.buffered.empty() && pc.drain_check == kNever) schedule_drain_check(index, std::max(now_, pc.last_read_col));
}

void FastDram::admit(std::uint32_t index, const MemRequest& request, const DecodedAddress& d, std::uint64_t parent) {
  Pc& pc = *pcs_[index];
  auto& waiting = pc.waiting[request.write];
  if (waiting.empty() && has_room(pc, request.write)) {
    enqueue_access(index, request, d, parent);
    return;
  }
  waiting.push_back(Waiting{request, d, parent});
  schedule_admit(index);
}

void FastDram::admit_waiting(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  if (pc.admit_check <= now_) pc.admit_check = kNever;
  for (const bool write : {false, true}) {
    auto& waiting = pc.waiting[write];
    while (!waiting.empty() && has_room(pc, write)) {
      Waiting w = waiting.front();
      waiting.pop_front();
      w.request.arrival = now_;  // it enters the controller now
      enqueue_access(index, w.request, w.where, w.parent);
    }
  }
  if (!pc.waiting[0].empty() || !pc.waiting[1].empty()) schedule_admit(index);
}

void FastDram::schedule_admit(std::uint32_t index) {
  Pc& pc = *pcs_[index];
  // An entry frees when a booked column command issues (queued() drops those that have);
  // a write queue full of buffered writes, at their drain.
  Cycle at = kNever;
  for (const bool write : {false, true}) {
    if (pc.waiting[write].empty()) continue;
    pc.queued(write, now_);
    const auto& cols = write ? pc.write_cols : pc.read_cols;
    if (!cols.empty()) at = std::min(at, cols.top());
    if (write && pc.drain_check != kNever) at = std::min(at, pc.drain_check);
    if (!write && !pc.held.empty()) at = std::min(at, pc.resume_at);
  }
  if (at == kNever) at = now_ + 1;  // not expected: look again next cycle rather than never
  at = std::max(at, now_ + 1);
  if (pc.admit_check > now_ && pc.admit_check <= at) return;  // an earlier one will look
  pc.admit_check = at;
  done_.push(Done{at, seq_++, MemRequest{}, index, Event::AdmitCheck, RowOutcome::Counted, 0});
}

Cycle FastDram::starvation_end(std::uint32_t index, Cycle at) const {
  const Pc& pc = *pcs_[index];
  const Cycle starve = params_.controller.read_starvation;
  // The reads booked and not issued, oldest first (FCFS serves them in that order): the
  // controller stays out of write mode until, after one's column, the next is not starving.
  Cycle t = at;
  for (const Journalled& j : pc.journal) {
    if (j.col <= at) continue;
    if (j.request.arrival + starve > t) return t;
    t = j.col + 1;
  }
  return t;
}

Cycle FastDram::drain(std::uint32_t index, std::size_t keep, Cycle at) {
  Pc& pc = *pcs_[index];
  if (pc.buffered.size() <= keep) return at;
  const bool fcfs = params_.controller.scheduler == SchedulerKind::Fcfs;
  if (fcfs && pc.held.empty()) {
    // FCFS: with a read starving (waiting read_starvation cycles), the controller does not
    // enter write mode; it looks again once none is.
    const Cycle end = starvation_end(index, at);
    if (end > at) {
      schedule_drain_check(index, end);
      return std::max(at, pc.write_mode_end);
    }
  }
  // The controller's write mode: from `at` it issues writes only, and the reads still
  // waiting for their column commands go after them. Their bookings are taken back, newest
  // first (each restores its bank as it found it), and held with the reads arriving
  // meanwhile until the writes are done (resume_reads): writes joining the batch before
  // then (enqueue_access) do not move them again.
  auto& journal = pc.journal;
  auto first = journal.begin();
  while (first != journal.end() && first->col <= at) ++first;
  auto& redo = pc.rebook;
  redo.clear();  // newest first
  // A read whose activation has issued keeps it: the row stays open for the read, which
  // goes after the writes (a hit unless a write of the batch closes that row), and the
  // activation and the row outcome are counted now. (An ACT booked for `at` itself has
  // not issued: the controller sees this cycle's writes first.)
  const auto activated = [at](const Journalled& j) { return j.act != kNever && j.act < at; };
  for (auto it = journal.end(); it != first;) {
    --it;
    const Journalled& j = *it;
    pc.banks[j.bank] = j.before;
    if (j.col <= at) continue;  // issued (it filled a gap before `at`): it stays
    cancel_booking(index, j.col, activated(j) ? kNever : j.act, j.ticket, false);
    if (activated(j)) count_row(index, static_cast<RowOutcome>(j.outcome));
    redo.push_back(j);
  }
  for (auto it = first; it != journal.end(); ++it) {
    if (it->col <= at) {
      pc.banks[it->bank] = it->after;  // the issued ones' banks, as they left them
    } else if (activated(*it)) {
      Bank& b = pc.banks[it->bank];
      b = it->after;  // its row open, from its activation; no column issued on it yet
      b.pre_allowed = it->act + spec_.timing.RAS;
    }
  }
  journal.clear();
  // The reads taken back are queued from now on, held until the writes are done: a write
  // booked meanwhile finds them queued (the adaptive policy keeps a row open for a held
  // read that hits it, as the controller does for a queued one).
  std::vector<Waiting> back;
  for (auto it = redo.rbegin(); it != redo.rend(); ++it) {
    back.push_back(
        Waiting{it->request, it->where, it->parent, activated(*it) || recounted(static_cast<RowOutcome>(it->outcome))});
  }
  pc.held.insert(pc.held.begin(), back.begin(), back.end());  // in arrival order, before those held already
  std::size_t n = pc.buffered.size() - keep;
  Cycle last_col = std::max(at, pc.write_mode_end);  // writes joining a batch end no sooner than it
  // FCFS: write mode ends once the oldest read waiting has waited read_starvation cycles;
  // the writes whose columns have not issued by then wait for the next one.
  Cycle starving = kNever;
  if (fcfs) {
    for (const Journalled& j : redo) starving = std::min(starving, j.request.arrival);
    for (const Waiting& r : pc.held) starving = std::min(starving, r.request.arrival);
    if (starving != kNever) starving += params_.controller.read_starvation;
  }
  const DramTimings& t = spec_.timing;
  const DramOrganization& org = spec_.org;
  for (std::size_t i = 0; i < n; ++i) {
    if (keep > 0 && params_.controller.scheduler == SchedulerKind::FrFcfs) {
      // FR-FCFS in write mode: the oldest write whose bank is ready goes first, so the
      // writes left at write_low are those whose banks are busiest.
      std::size_t best = i;
      Cycle best_ready = kNever;
      for (std::size_t k = i; k < pc.buffered.size(); ++k) {
        const DecodedAddress& d = pc.buffered[k].where;
        const Bank& b = pc.banks[bank_of(d, org)];
        Cycle ready;
        if (b.open_row == d.row) {
          ready = b.act + t.RCDWR;
        } else if (b.open_row != kClosed) {
          ready = std::max(b.pre_allowed + t.RP, b.act + t.RC);
        } else {
          ready = b.act_allowed;
        }
        ready = std::max(ready, at);
        // A bank a REFpb holds then is not ready either (the controller blocks its
        // refresh target): its writes stay for the next write mode rather than keep this
        // one going until the refresh ends.
        ready = bank_refresh_end(index, bank_of(d, org), ready, b.act, b.pre_allowed + t.RP);
        if (ready < best_ready) {
          best_ready = ready;
          best = k;
        }
      }
      std::rotate(pc.buffered.begin() + static_cast<std::ptrdiff_t>(i),
                  pc.buffered.begin() + static_cast<std::ptrdiff_t>(best),
                  pc.buffered.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
    const Buffered& w = pc.buffered[i];
    pc.drained = i + 1;  // booked: no longer a queued write that keeps its row open
    const Cycle col = book_write(index, w.request, w.where, at, w.counted, w.parent);
    if (col >= starving) {
      // Its column would come once the read starves: it waits for the next write mode,
      // and the reads go from the cycle the controller leaves this one.
      const Journalled& j = pc.wjournal.back();
      cancel_booking(index, j.col, j.act, j.ticket, true);
      pc.banks[j.bank] = j.before;
      pc.wjournal.pop_back();
      n = i;
      last_col = std::max(last_col, starving);
      break;
    }
    last_col = std::max(last_col, col);
  }
  pc.buffered.erase(pc.buffered.begin(), pc.buffered.begin() + static_cast<std::ptrdiff_t>(n));
  pc.drained = 0;
  if (!redo.empty()) pc.last_read_col = at;
  if (!pc.held.empty()) schedule_resume(index, last_col);
  return last_col;
}

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
    if (d.kind == Event::ResumeReads) {
      Pc& pc = *pcs_[d.pc];
      if (pc.resume_at != d.at) continue;  // superseded
      pc.resume_at = kNever;
      if (pc.held.empty()) continue;
      if (pc.write_mode_end > now_) {
        schedule_resume(d.pc, pc.write_mode_end);  // writes joined the batch meanwhile
      } else {
        resume_reads(d.pc);
      }
      continue;
    }
    if (d.kind == Event::AdmitCheck) {
      admit_waiting(d.pc);
      continue;
    }
    if (d.kind == Event::RefreshDue) {
      Pc& pc = *pcs_[d.pc];
      if (pc.refresh_due != d.at) continue;  // superseded
      pc.refresh_due = kNever;
      decide_refreshes(d.pc, static_cast<std::uint32_t>(pc.banks.size()), now_);  // (no bank is being booked)
      settle_refreshes(d.pc);
      settle_write_refresh(d.pc);
      const auto unissued = [this](const TimeQueue<Journalled>& j) { return !j.empty() && j.back().col > now_; };
      if (unissued(pc.journal) || unissued(pc.wjournal)) schedule_refresh_due(d.pc);
      continue;
    }
    if (d.kind == Event::DrainCheck && d.pc == kNoPc) {
      if (d.at == bulk_check_) bulk_check_ = kNever;
      check_bulk_writes();
      continue;
    }
    if (d.kind == Event::DrainCheck) {
      Pc& pc = *pcs_[d.pc];
      pc.drain_check = kNever;
      if (pc.buffered.empty() || !pc.held.empty()) continue;  // (held reads: resume_reads looks again)
      const std::size_t low = params_.controller.write_low;
      if (params_.controller.scheduler == SchedulerKind::Fcfs && pc.buffered.size() >= params_.controller.write_high) {
        pc.write_mode_end = drain(d.pc, low, now_);  // (it looks for a starving read first)
        // Unless it waits for a starving read or a resume of the reads it holds looks again:
        // the writes left at write_low go once these have issued, if no read came.
        if (pc.drain_check == kNever && pc.held.empty() && !pc.buffered.empty()) {
          schedule_drain_check(d.pc, pc.write_mode_end);
        }
        continue;
      }
      if (pc.last_read_col <= now_ && pc.buffered.size() > low) {
        // No read waits: write mode, which ends at write_low if a read has come meanwhile
        // (looked at once these writes have issued) and otherwise empties the queue.
        pc.write_mode_end = drain(d.pc, low, now_);
        schedule_drain_check(d.pc, pc.write_mode_end);
      } else if (pc.last_read_col <= now_) {
        // No more than write_low wait (or no read came while the others went): they all
        // go, parked writes; a read arriving before their columns takes them back.
        drain(d.pc, 0, now_);
      } else {
        schedule_drain_check(d.pc, pc.last_read_col);
      }
      continue;
    }
    if (d.ticket != 0 && !cancelled_.empty()) {
      const auto cancelled = cancelled_.find(d.ticket);
      if (cancelled != cancelled_.end()) {  // a read re-booked by a drain: its new booking completes it
        cancelled_.erase(cancelled);
        continue;
      }
    }
    if (d.pc != kNoPc) {
      Pc& pc = *pcs_[d.pc];
      if (d.request.write) {
        --pc.writes;
        count_row(d.pc, d.outcome);
      } else {
        --pc.reads;
        count_row(d.pc, d.outcome);
        pc.stats.read_latency.sample(static_cast<double>(d.at - d.request.arrival) * pc.stats.tck_ns);
      }
    }
    MemRequest done = d.request;
    if (d.parent != 0) {  // an access of a bulk request booked access by access
      const auto part = parts_.find(d.parent);
      if (--part->second.accesses > 0) continue;
      done = part->second.request;
      parts_.erase(part);
    }
    --pending_;
    if (d.pc == kNoPc && !d.request.write && bulk_reads_ > 0 && --bulk_reads_ == 0 && !bulk_writes_.empty()) {
      flush_bulk_writes();  // no bulk read left in flight: the gathered writes go now
    }
    complete(done, d.at);
  }
  count_refreshes(cycle);
  now_ = cycle;
  if (wake_ <= now_) wake_ = kNever;  // the owner polls again and is told the next one
  *cycles_ += cycle - start;
}

void FastDram::count_refreshes(Cycle cycle) {
  // Refreshes happen whether or not the memory is busy; counted per interval crossed.
  if (params_.controller.refresh == RefreshMode::Off) return;
  const Cycle before = refreshes_counted_ / refresh_step_;
  const Cycle after = cycle / refresh_step_;
  if (after == before) return;
  registry_->owe(refresh_adds_, after - before);  // every pseudo-channel's count, when next read
  refreshes_counted_ = cycle;
}

Cycle FastDram::next_event() const {
  // Holding no request, nothing is left to do: the checks and RefreshDue events still
  // queued are moot (advance_to passes them when a request comes).
  if (pending_ == 0) return kNever;
  const Cycle done = done_.empty() ? kNever : done_.top().at;
  return wake_ > now_ ? std::min(done, wake_) : done;
}

// ---- bulk ---------------------------------------------------------------------------

std::uint64_t FastDram::stream_activations(std::uint64_t j0, std::uint64_t groups, Cycle start, Cycle window) {
  // Group j = lo + L * (column + C * hi): lo picks a bank (bank group, ...), hi the rest of
  // the bank and the row. A bank needs an ACT unless the hi it is visited with is one that
  // a bulk request booked to start at most `window` cycles before `start` visited at lo:
  // FR-FCFS serves the queued hits of a row together, though requests to other rows of
  // that bank came between them. stream_rows_[lo] remembers the last kRowsSeen of them
  // (the same for every pseudo-channel, since every group touches each of them once).
  if (groups == 0) return 0;
  if (low_has_row_) return groups;
  const std::uint64_t lo_count = low_radix_;
  const std::uint64_t block = low_radix_ * column_radix_;
  std::uint64_t acts = 0;
  const auto see = [&](std::uint64_t lo, std::uint64_t h) {  // true: an activation
    std::array<RowSeen, kRowsSeen>& rows = stream_rows_[lo];
    std::size_t oldest = 0, latest = 0, seen = kRowsSeen;
    const auto older = [&](const RowSeen& a, const RowSeen& b) {  // empty entries first
      return a.hi == kNoRow ? b.hi != kNoRow : b.hi != kNoRow && a.at < b.at;
    };
    for (std::size_t e = 0; e < kRowsSeen; ++e) {
      if (rows[e].hi == h) seen = e;
      if (older(rows[e], rows[oldest])) oldest = e;
      if (rows[e].hi != kNoRow && (rows[latest].hi == kNoRow || rows[e].at > rows[latest].at)) latest = e;
    }
    // Open still (the bank's last row), or queued with an earlier request's hits.
    if (seen != kRowsSeen && (seen == latest || rows[seen].at + window >= start)) {
      rows[seen].at = std::max(rows[seen].at, start);
      return false;
    }
    rows[oldest] = RowSeen{h, start};
    return true;
  };
  const auto visit = [&](std::uint64_t h, std::uint64_t first, std::uint64_t len) {
    const std::uint64_t n = std::min(len, lo_count);
    for (std::uint64_t t = 0; t < n; ++t) acts += see((first + t) % lo_count, h) ? 1 : 0;
  };
  const std::uint64_t h0 = j0 / block;
  const std::uint64_t h1 = (j0 + groups - 1) / block;
  visit(h0, j0, std::min(groups, (h0 + 1) * block - j0));
  if (h1 > h0) {
    if (h1 - h0 > 1) {
      // Whole blocks between: rows no other request can have visited within the window
      // as well (a stream's requests do not overlap); each of their banks opens its row.
      acts += (h1 - h0 - 1) * lo_count;
      for (std::uint64_t lo = 0; lo < lo_count; ++lo) see(lo, h1 - 1);
    }
    visit(h1, h1 * block, j0 + groups - h1 * block);
  }
  return acts;
}

void FastDram::stream_visits(std::uint64_t j0, std::uint64_t groups) {
  visits_.clear();
  if (groups == 0 || low_has_row_) return;
  const DramOrganization& org = spec_.org;
  const std::uint64_t lo_count = low_radix_;
  const std::uint64_t block = low_radix_ * column_radix_;
  const std::uint64_t group_bytes = group_pcs_ * inner_ * org.access_bytes();
  const std::uint64_t j1 = j0 + groups;
  const Cycle per_group = inner_ * stream_gap_;  // a pseudo-channel's cycles per group
  // Each block (one hi: bank and row digits) visits each low digit's bank once, from the
  // first to the last of its groups in the range. Only a bank's first and last visits
  // matter: of a long range, the blocks up to where every bank has been seen at both ends.
  const std::uint64_t h0 = j0 / block, h1 = (j1 - 1) / block;
  const std::uint64_t ends = org.banks_per_pc();  // blocks enough for every bank, at each end
  for (std::uint64_t h = h0; h <= h1; ++h) {
    if (h - h0 >= ends && h1 - h >= ends) h = h1 - ends + 1;
    const std::uint64_t start = std::max(j0, h * block), end = std::min(j1, (h + 1) * block);
    // Without XOR pairs a group's bank and row are its low digit's fields or'ed with its
    // block's (disjoint digits): one decode per block.
    const DecodedAddress hd = mapping_.decode(h * block * group_bytes);
    for (std::uint64_t lo = 0; lo < lo_count; ++lo) {
      // The first and last groups in [start, end) whose low digit is lo.
      const std::uint64_t first = start + (lo + lo_count - start % lo_count) % lo_count;
      if (first >= end) continue;
      const std::uint64_t last = first + (end - 1 - first) / lo_count * lo_count;
      DecodedAddress d;
      if (low_decoded_.empty()) {
        d = mapping_.decode(first * group_bytes);
      } else {
        const DecodedAddress& l = low_decoded_[lo];
        d.sid = hd.sid | l.sid;
        d.bank_group = hd.bank_group | l.bank_group;
        d.bank = hd.bank | l.bank;
        d.row = hd.row;
      }
      const std::uint32_t bank = bank_of(d, org);
      const Cycle first_col = (first - j0) * per_group;
      const Cycle last_col = (last - j0) * per_group + (inner_ - 1) * stream_gap_;
      std::int32_t& slot = visit_of_bank_[bank];
      if (slot < 0) {
        slot = static_cast<std::int32_t>(visits_.size());
        visits_.push_back(Visit{bank, d.row, d.row, first_col, last_col});
      } else {
        Visit& v = visits_[static_cast<std::size_t>(slot)];
        v.last_row = d.row;
        v.last = last_col;
      }
    }
  }
  for (const Visit& v : visits_) visit_of_bank_[v.bank] = -1;
}

Cycle FastDram::book_stream(std::uint32_t index, std::uint64_t accesses, std::uint64_t activations, bool write,
                            Cycle arrival, Cycle bank_ready, bool opens_rows, double act_factor, bool joins) {
  Pc& pc = *pcs_[index];
  StreamState& st = streams_[index];
  const DramTimings& t = spec_.timing;
  const DramOrganization& org = spec_.org;
  const ControllerParams& cp = params_.controller;
  const double per_act = params_.calibration.stream_act_cost;
  Cycle length = accesses * stream_gap_;
  if (per_act != 0.0) length += static_cast<Cycle>(std::llround(per_act * static_cast<double>(activations)));
  const FastDramCalibration& cal = params_.calibration;
  if (activations > 0 && cal.switch_cut_cost > 0.0 && st.booked && !joins) {
    // Back to this direction from the other's run, which came while this one was at work
    // (its last booking ended within a queue's span of the run's start) and was still at
    // work when this request came: the visits the switches cut (the share of visits longer
    // than switch_cut_visit accesses) cost their rows again.
    const Cycle queue_span = std::uint64_t{write ? cp.write_queue : cp.read_queue} * stream_gap_;
    const Cycle mine = st.dir_last[write ? 1 : 0];
    if (st.write != write && mine != 0 && mine + queue_span >= st.run_start && st.last_col > arrival) {
      const double visit = static_cast<double>(accesses) / static_cast<double>(activations);
      const double cut = 1.0 - cal.switch_cut_visit / visit;
      if (cut > 0.0) length += static_cast<Cycle>(std::llround(cut * cal.switch_cut_cost));
    }
  }
  // The pseudo-channel's activations, over its streams rather than per slot (a slot that
  // activates more often waits for them): at most four per tFAW (stream_act_scale x tFAW /
  // 4 each), and no more often than its banks can cycle. A visit holds its bank from the
  // ACT through its columns (tCCD_L apart), tRTP or the write's recovery, and tRP;
  // FR-FCFS keeps stream_busy_banks of the banks busy at once. In 1/256 cycles, the
  // remainder carried to the next booking: a 4 KiB block's two activations cost 12-14
  // cycles, and rounding each booking would move that by 4-8 %.
  double act_spacing = cal.stream_act_scale * static_cast<double>(t.FAW) / 4.0;
  if (activations > 0) {
    const double span = accesses > activations
                            ? static_cast<double>(accesses - activations) / static_cast<double>(activations) * t.CCD_L
                            : 0.0;
    const double held = write ? std::max<double>(t.RAS, t.RCDWR + span + t.CWL + t.burst_cycles + t.WR)
                              : std::max<double>(t.RAS, t.RCDRD + span + t.RTP);
    act_spacing = std::max(act_spacing, (held + t.RP) / (cal.stream_busy_banks * org.banks_per_pc()));
  }
  const std::uint64_t act_cost_fp =
      static_cast<std::uint64_t>(act_factor * act_spacing * static_cast<double>(activations) * 256.0 + 0.5) +
      st.act_frac;
  const Cycle act_cost = act_cost_fp >> 8;
  st.act_frac = static_cast<std::uint32_t>(act_cost_fp & 255);
  st.act_budget = activations_end(std::max(st.act_budget, arrival), act_cost);
  length = length > stream_gap_ ? length - stream_gap_ : 0;  // first to last column command
  Cycle ready = arrival + (activations > 0 ? (write ? t.RCDWR : t.RCDRD) : 0);
  if (st.act_budget > arrival + length) ready = std::max(ready, st.act_budget - length);
  // The controller hides a wait for the banks (bank_ready, see enqueue_bulk) behind the
  // other requests its queue holds, as far as there are any: a request whose accesses fill
  // the queue has nothing to hide it with.
  double exposed = 1.0;
  if (bank_ready != 0) {
    exposed =
        std::min(1.0, static_cast<double>(accesses) / static_cast<double>(write ? cp.write_queue : cp.read_queue));
  }
  const bool had = st.booked, was_write = st.write;
  Cycle col = append_stream(index, ready, length, write, bank_ready, exposed, opens_rows, joins);
  bulk_col_ = std::max(bulk_col_, col);
  // Refresh windows inside the stream stretch it: all-bank ones stop it for their length,
  // per-bank ones cost a calibrated stall each.
  if (cp.refresh == RefreshMode::AllBank) {
    Cycle extended = length;
    for (Cycle k = refi_index(col) + 1; k * t.REFI <= col + extended; ++k) extended += t.RP + t.RFCab;
    if (extended != length) {
      st.last_col = col + extended;  // appended: the stream's booking is the tail
      length = extended;
    }
  } else if (cp.refresh == RefreshMode::PerBank) {
    const double cost = params_.calibration.perbank_stream_cost;
    const Cycle windows = cost != 0.0 ? (col + length) / refresh_step_ - col / refresh_step_ : 0;
    const Cycle extra = windows != 0 ? static_cast<Cycle>(std::llround(cost * static_cast<double>(windows))) : 0;
    if (extra > 0) {
      st.last_col = col + length + extra;
      length += extra;
    }
  }
  bulk_end_ = std::max(bulk_end_, col + length);
  if (!had || st.write != was_write) st.run_start = col;  // (a joining write leaves the direction as it was)
  st.booked = true;
  st.dir_last[write ? 1 : 0] = col + length;
  ++st.epoch;  // closes every row: which rows the stream left open is not tracked
  pc.stats.act.inc(activations);
  pc.stats.row_misses.inc(activations);
  pc.stats.row_hits.inc(accesses - std::min(accesses, activations));
  pc.stats.busy_cycles.inc(accesses * t.burst_cycles);
  if (write) {
    pc.stats.wr.inc(accesses);
    pc.stats.bytes_written.inc(accesses * org.access_bytes());
  } else {
    pc.stats.rd.inc(accesses);
    pc.stats.bytes_read.inc(accesses * org.access_bytes());
  }
  return col + length + (write ? t.CWL : t.CL) + t.burst_cycles + cp.latency;
}

Cycle FastDram::perbank_refresh_hold(bool write) const {
  // A REFpb holds its bank's accesses until its window ends, the others go past (FR-FCFS):
  // the request whose visit to that bank meets the window completes late, the
  // pseudo-channel's stream does not stop (with few requests in flight, nothing is left
  // to go past, which the owner shows by waiting for this one).
  const DramTimings& t = spec_.timing;
  const Cycle banks = spec_.org.banks_per_pc();
  Cycle done = 0;
  for (const Visit& v : visits_) {
    const Cycle from = bulk_col_ + v.first, to = bulk_col_ + v.last;
    Cycle held = refresh_window_end(v.bank, from);
    if (held == from) {
      const Cycle k = from / refresh_step_;  // the next REFpb of this bank after `from`
      const Cycle next = (k + 1 + (v.bank + banks - k % banks) % banks) * refresh_step_;
      if (next > to) continue;
      held = next + t.RFCpb;
    }
    // The bank reopens its row, then the visit's columns go.
    done = std::max(done, held + (write ? t.RCDWR + t.CWL : t.RCDRD + t.CL) + (to - from) + t.burst_cycles +
                              params_.controller.latency);
  }
  return done;
}

bool FastDram::by_access(std::uint64_t addr, std::uint64_t bytes) const {
  if (group_pcs_ == 0 || params_.controller.scheduler == SchedulerKind::Fcfs) return true;
  const std::uint64_t a = access_bytes();
  const std::uint64_t p = group_pcs_ * inner_;  // accesses per group: inner_ to each PC
  const std::uint64_t g0 = (addr / a + p - 1) / p;
  const std::uint64_t g1 = (addr + bytes) / a / p;
  if (g1 <= g0) return true;
  const std::uint64_t per_pc = (g1 - g0) * inner_;  // accesses per pseudo-channel
  return bytes <= params_.calibration.few_in_flight_bytes && per_pc * (pending_ + 1) <= params_.controller.read_queue;
}

void FastDram::enqueue_bulk(std::uint64_t addr, std::uint64_t bytes, bool write, std::uint64_t id) {
  check(addr, bytes);
  if (by_access(addr, bytes)) {
    // Less than one whole group, or a small request among few enough that they all fit
    // one controller queue: its accesses go through the controllers' queues one by one
    // (write buffer, write mode, forwarding), completed together.
    const std::uint64_t a = access_bytes();
    const std::uint64_t parent = next_parent_++;
    parts_.emplace(parent, Part{MemRequest{addr, write, id, now_}, bytes / a});
    ++pending_;
    for (std::uint64_t i = addr / a; i < (addr + bytes) / a; ++i) {
      const DecodedAddress d = mapping_.decode(i * a);
      admit(pc_index(d), MemRequest{i * a, write, id, now_}, d, parent);
    }
    return;
  }
  if (!write) {
    ++bulk_reads_;
    book_bulk(addr, bytes, false, id, now_);
    return;
  }
  // Writes wait while bulk reads are in flight, as in the controller's write queue, until a
  // batch's worth per pseudo-channel has gathered (write_high - write_low), then go
  // together: one read/write turnaround pair per batch, not per request. They may go
  // earlier, once the bulk reads in flight have completed (check_bulk_writes).
  ++pending_;  // until booked
  bulk_writes_.push_back(BulkWrite{addr, bytes, id, now_});
  bulk_write_accesses_ += bytes / access_bytes();
  const ControllerParams& cp = params_.controller;
  const std::uint64_t batch = std::uint64_t{cp.write_high - cp.write_low} * spec_.org.total_pcs();
  if (bulk_write_accesses_ >= batch || no_bulk_read_waits()) {
    flush_bulk_writes();
    return;
  }
  if (joins_write_mode()) {
    flush_bulk_writes(true);
    return;
  }
  schedule_bulk_check(bulk_reads_done_);
}

bool FastDram::no_bulk_read_waits() const {
  return bulk_reads_ == 0 || bulk_reads_done_ <= now_;
}

bool FastDram::joins_write_mode() const {
  if (write_mode_end_ <= now_) return false;
  // The read accesses per pseudo-channel of the bulk reads in flight: the front end stops
  // at one once they fill a read queue and its staging, and what arrives after it waits.
  const std::uint64_t room = std::uint64_t{params_.controller.read_queue} + params_.staging;
  std::uint64_t reads = 0;
  for (const InFlight& r : bulk_in_flight_) {
    if (r.completion.at > now_ && (reads += r.accesses) > room) return false;
  }
  return true;
}

void FastDram::release_bulk_write(const BulkWrite& w, bool joins) {
  bulk_write_accesses_ -= w.bytes / access_bytes();
  --pending_;  // book_bulk counts it again
  book_bulk(w.addr, w.bytes, true, w.id, w.arrival, joins);
}

void FastDram::schedule_bulk_check(Cycle at) {
  if (bulk_check_ > now_ && bulk_check_ <= at) return;  // an earlier one will look
  bulk_check_ = at;
  done_.push(Done{at, seq_++, MemRequest{}, kNoPc, Event::DrainCheck, RowOutcome::Counted, 0});
}

void FastDram::check_bulk_writes() {
  if (bulk_writes_.empty()) return;
  // The controllers drain their writes once their read queues are empty; a gathered write
  // (whole groups: it touches every pseudo-channel) goes once the bulk reads booked have
  // completed (their columns issued and CL + nBL + the controller latency passed: a
  // read-free window long enough to open its rows). Smaller writes go through the
  // controllers' queues one access at a time instead (enqueue_access).
  if (no_bulk_read_waits()) {
    flush_bulk_writes();  // no bulk read in flight: the gathered writes go now
  } else {
    schedule_bulk_check(bulk_reads_done_);
  }
}

void FastDram::flush_bulk_writes(bool join) {
  while (!bulk_writes_.empty()) {
    const BulkWrite w = std::move(bulk_writes_.front());
    bulk_writes_.pop_front();
    release_bulk_write(w, join);
  }
}

void FastDram::book_bulk(std::uint64_t addr, std::uint64_t bytes, bool write, std::uint64_t id, Cycle queued,
                         bool joins) {
  // By groups (by_access() said so when it was enqueued).
  const std::uint64_t a = access_bytes();
  const std::uint64_t i0 = addr / a;
  const std::uint64_t i1 = (addr + bytes) / a;
  Cycle done = now_;
  const std::uint64_t p = group_pcs_ * inner_;  // accesses per group: inner_ to each PC
  const std::uint64_t g0 = (i0 + p - 1) / p;
  const std::uint64_t g1 = i1 / p;
  // Whole groups give every pseudo-channel inner_ accesses each; the partial groups at
  // the two ends add, per pseudo-channel, the accesses whose digit falls in them.
  std::fill(stream_counts_.begin(), stream_counts_.end(), (g1 - g0) * inner_);
  const auto partial = [&](std::uint64_t from, std::uint64_t to) {  // within one group
    const std::uint64_t base = from / p * p;
    const std::uint64_t lo = from - base, hi = to - base;
    for (std::uint64_t digit = lo / inner_; digit * inner_ < hi; ++digit) {
      const std::uint64_t n = std::min(hi, (digit + 1) * inner_) - std::max(lo, digit * inner_);
      const std::uint32_t pc =
          digit_pc_.empty() ? pc_index(mapping_.decode((base + digit * inner_) * a)) : digit_pc_[digit];
      stream_counts_[pc] += n;
    }
  };
  if (i0 < g0 * p) partial(i0, g0 * p);
  if (g1 * p < i1) partial(g1 * p, i1);
  const std::uint64_t first = i0 / p;
  // Its rows: the row window is a queue's span, counted from where the bulk bookings have
  // got to (it starts there, or earlier in a pseudo-channel that is behind).
  const ControllerParams& cp = params_.controller;
  const Cycle window = std::uint64_t{write ? cp.write_queue : cp.read_queue} * stream_gap_;
  std::uint64_t acts = stream_activations(first, (i1 + p - 1) / p - first, std::max(now_, bulk_end_), window);
  stream_visits(first, (i1 + p - 1) / p - first);
  // The pseudo-channels' state and counters lie in many small heap objects: fetch them a
  // few pseudo-channels ahead, so that the bookings do not wait for memory one by one.
  const auto prefetch_pc = [](const Pc& pc) {
    const char* base = reinterpret_cast<const char*>(&pc);
    for (std::size_t offset = 0; offset < sizeof(Pc); offset += 64) __builtin_prefetch(base + offset);
  };
  const auto prefetch_stream_stats = [](const Pc& pc, bool w) {  // what book_stream updates
    const PcStats& s = pc.stats;
    prefetch_object(s.act);
    prefetch_object(s.row_misses);
    prefetch_object(s.row_hits);
    prefetch_object(s.busy_cycles);
    prefetch_object(w ? s.wr : s.rd);
    prefetch_object(w ? s.bytes_written : s.bytes_read);
  };
  // Banks an earlier bulk request left on another row: precharge (tRTP, or write
  // recovery, after its last column there; tRAS after its activation, tRCD before its
  // first column), tRP, then tRCD before this request's first column there. The banks'
  // rows are the same in every pseudo-channel; their cycles are the latest over them.
  const DramTimings& t = spec_.timing;
  Cycle bank_ready = 0;
  bool opens_rows = false;  // some bank it visits holds no row or another one
  const bool adaptive = params_.controller.page_policy == PagePolicy::Adaptive;
  std::size_t opening = 0, after_reads = 0;  // visits that open a row; of them, after bulk reads
  for (const Visit& v : visits_) {
    const BankStream& b = stream_banks_[v.bank];
    // The adaptive policy closed the row with the last column of the earlier visit if
    // this request was not queued by then: the same row needs an ACT again.
    const bool closed = adaptive && b.used && b.row == v.first_row && b.last_col < queued;
    if (closed) ++acts;
    if (!b.used || b.row != v.first_row || closed) {
      opens_rows = true;
      ++opening;
      if (b.used && !b.write) ++after_reads;
    }
    if (!b.used || (b.row == v.first_row && !closed)) continue;
    const Cycle after_col = b.last_col + (b.write ? t.CWL + t.burst_cycles + t.WR : t.RTP);
    const Cycle after_act = b.first_col + t.RAS - std::min<Cycle>(b.first_col + t.RAS, b.write ? t.RCDWR : t.RCDRD);
    const Cycle need = std::max(after_col, after_act) + t.RP + (write ? t.RCDWR : t.RCDRD);
    if (need > v.first) bank_ready = std::max(bank_ready, need - v.first);
  }
  // Writes that reopen banks bulk reads had left (the share of its visits that do) space
  // their activations stream_write_act_scale x more (book_stream).
  double act_factor = 1.0;
  if (write && after_reads > 0) {
    act_factor += (params_.calibration.stream_write_act_scale - 1.0) * static_cast<double>(after_reads) /
                  static_cast<double>(opening);
  }
  bulk_col_ = 0;
  Cycle span = 0;  // a write's: the most it extends a pseudo-channel's bookings by
  const std::size_t n = pcs_.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 4 < n) prefetch_pc(*pcs_[k + 4]);
    if (k + 2 < n) prefetch_stream_stats(*pcs_[k + 2], write);
    if (stream_counts_[k] > 0) {
      const auto index = static_cast<std::uint32_t>(k);
      const Cycle before = write ? std::max(now_, streams_[k].last_col) : 0;
      const Cycle at =
          book_stream(index, stream_counts_[k], acts, write, now_, bank_ready, opens_rows, act_factor, joins);
      if (write) span = std::max(span, streams_[k].last_col - std::min(before, streams_[k].last_col));
      if (!write) bulk_reads_done_ = std::max(bulk_reads_done_, at);
      done = std::max(done, at);
    }
  }
  if (cp.refresh == RefreshMode::PerBank) done = std::max(done, perbank_refresh_hold(write));
  for (const Visit& v : visits_) {
    BankStream& b = stream_banks_[v.bank];
    b.first_col = bulk_col_ + v.first;
    b.last_col = bulk_col_ + v.last;
    b.row = v.last_row;
    b.used = true;
    b.write = write;
  }
  ++pending_;
  const MemRequest request{addr, write, id, now_};
  const std::uint64_t accesses = *std::max_element(stream_counts_.begin(), stream_counts_.end());
  if (!write) {
    // Its completion may move (a write going ahead of it): on the heap with a ticket.
    if (bulk_in_flight_.size() >= bulk_in_flight_prune_) {
      bulk_in_flight_.erase(std::remove_if(bulk_in_flight_.begin(), bulk_in_flight_.end(),
                                           [&](const InFlight& r) { return r.completion.at <= now_; }),
                            bulk_in_flight_.end());
      bulk_in_flight_prune_ = 2 * bulk_in_flight_.size() + 64;
    }
    bulk_in_flight_.push_back(InFlight{Completion{done, next_ticket_++, request}, accesses});
    done_.push(Done{done, seq_++, request, kNoPc, Event::Completion, RowOutcome::Counted,
                    bulk_in_flight_.back().completion.ticket, 0});
    return;
  }
  // Write mode ahead of the bulk reads booked before it (see bulk_in_flight_), from where
  // the last one ended or now. It serves the writes queued, this one last, but for the last
  // write_low accesses per pseudo-channel, which wait for the next write mode (or complete
  // as booked, after the reads, if none comes first). The reads whose last column is after
  // its start complete its length later.
  const Cycle from = std::max(now_, write_mode_end_);
  const Cycle read_tail = t.CL + t.burst_cycles + cp.latency;
  bool ahead = false;
  for (const InFlight& r : bulk_in_flight_) ahead = ahead || r.completion.at > from + read_tail;
  if (!ahead || span == 0) {
    push_done(done, request, kNoPc);
    return;
  }
  // Held writes that have completed as booked meanwhile (no write mode came) are not queued.
  for (auto it = held_writes_.begin(); it != held_writes_.end();) {
    if (it->completion.at <= now_) {
      held_accesses_ -= it->accesses;
      it = held_writes_.erase(it);
    } else {
      ++it;
    }
  }
  // What its booking took beyond its columns: the switch to writes, its banks.
  const Cycle overhead = span > accesses * stream_gap_ ? span - accesses * stream_gap_ : 0;
  held_writes_.push_back(InFlight{Completion{done, next_ticket_++, request}, accesses});
  done_.push(Done{done, seq_++, request, kNoPc, Event::Completion, RowOutcome::Counted,
                  held_writes_.back().completion.ticket, 0});
  held_accesses_ += accesses;
  const std::uint64_t serve = held_accesses_ > cp.write_low ? held_accesses_ - cp.write_low : 0;
  std::uint64_t served = 0;
  while (!held_writes_.empty() && served + held_writes_.front().accesses <= serve) {
    InFlight& w = held_writes_.front();
    served += w.accesses;
    const Cycle at = from + overhead + served * stream_gap_ + t.CWL + t.burst_cycles + cp.latency;
    if (at < w.completion.at) move_completion(w.completion, at);  // (those left are still to complete)
    held_writes_.pop_front();
  }
  if (!held_writes_.empty()) held_writes_.front().accesses -= serve - served;  // served in part
  held_accesses_ -= serve;
  // The write mode's length as the reads see it: the switch to writes and what it serves,
  // and for a new one the switch back (a write joining one in progress extends it).
  const Cycle length = overhead + serve * stream_gap_ + (from == now_ ? stream_gap(true, false) : 0);
  write_mode_end_ = from + length;
  if (length == 0) return;
  std::size_t keep = 0;
  for (InFlight& r : bulk_in_flight_) {
    Completion& c = r.completion;
    if (c.at <= now_) continue;  // completed
    if (c.at > from + read_tail) {
      move_completion(c, c.at + length);
      bulk_reads_done_ = std::max(bulk_reads_done_, c.at);
    }
    bulk_in_flight_[keep++] = r;
  }
  bulk_in_flight_.resize(keep);
}

void FastDram::move_completion(Completion& c, Cycle at) {
  cancelled_.insert(c.ticket);
  c.at = at;
  c.ticket = next_ticket_++;
  done_.push(Done{at, seq_++, c.request, kNoPc, Event::Completion, RowOutcome::Counted, c.ticket, 0});
}

}  // namespace sohusim::memory
