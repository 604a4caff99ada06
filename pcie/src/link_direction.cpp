#include "sohusim/pcie/link_direction.hpp"

#include <cmath>
#include <iterator>

#include "sohusim/pcie/tlp_capture.hpp"

namespace sohusim::pcie {

using sc_core::SC_PS;
using sc_core::sc_time;

std::string_view to_string(LinkPowerState s) {
  switch (s) {
    case LinkPowerState::L0:
      return "L0";
    case LinkPowerState::L0s:
      return "L0s";
    case LinkPowerState::L1:
      return "L1";
    case LinkPowerState::Training:
      return "Training";
  }
  return "?";
}

LinkDirection::LinkDirection(sc_core::sc_module_name name, const LinkParams& params, const sim::Instrumentation& inst,
                             const std::string& prefix)
    : sc_core::sc_module(name),
      params_(params),
      fs_per_byte_(1e15 / params.tlp_lane_bytes_per_s()),
      fc_(params.credits),
      rng_(params.seed),
      tlps_(inst.registry->counter(prefix + ".tlps", "TLPs", "TLPs transmitted (first transmissions)")),
      tlps_mwr_(inst.registry->counter(prefix + ".tlps_mwr", "TLPs", "memory write TLPs")),
      tlps_mrd_(inst.registry->counter(prefix + ".tlps_mrd", "TLPs", "memory read request TLPs")),
      tlps_cpl_(inst.registry->counter(prefix + ".tlps_cpl", "TLPs", "completion TLPs (with and without data)")),
      tlps_cfg_(inst.registry->counter(prefix + ".tlps_cfg", "TLPs", "configuration request TLPs")),
      tlps_msg_(inst.registry->counter(prefix + ".tlps_msg", "TLPs", "message TLPs")),
      payload_bytes_(inst.registry->counter(prefix + ".payload_bytes", "B", "TLP payload bytes transmitted")),
      wire_bytes_(inst.registry->counter(prefix + ".wire_bytes", "B",
                                         "bytes on the lanes: TLPs, replays, DLLPs and SKP ordered sets")),
      dllps_ack_(inst.registry->counter(prefix + ".dllps_ack", "DLLPs", "ACK/NAK DLLPs charged to this direction")),
      dllps_fc_(inst.registry->counter(prefix + ".dllps_fc", "DLLPs", "UpdateFC DLLPs charged to this direction")),
      skp_bytes_(inst.registry->counter(prefix + ".skp_bytes", "B", "SKP ordered-set bytes")),
      busy_time_(inst.registry->counter(prefix + ".busy_time", "ps", "time the lanes carried something")),
      credit_stall_time_(inst.registry->counter(prefix + ".credit_stall_time", "ps",
                                                "time TLPs waited for flow-control credits on free lanes")),
      bad_tlps_(inst.registry->counter(prefix + ".bad_tlps", "TLPs", "TLPs that failed LCRC (NAKed)")),
      replays_(inst.registry->counter(prefix + ".replays", "TLPs", "TLPs retransmitted from the replay buffer")),
      replay_rollovers_(inst.registry->counter(prefix + ".replay_rollovers", "events",
                                               "REPLAY_NUM rollovers (four replays without progress)")),
      l0_time_(inst.registry->counter(prefix + ".l0_time", "ps", "residency in L0")),
      l0s_time_(inst.registry->counter(prefix + ".l0s_time", "ps", "residency in L0s")),
      l1_time_(inst.registry->counter(prefix + ".l1_time", "ps", "residency in L1")),
      training_time_(inst.registry->counter(prefix + ".training_time", "ps", "time spent training")),
      l0s_entries_(inst.registry->counter(prefix + ".l0s_entries", "events", "entries into L0s")),
      l1_entries_(inst.registry->counter(prefix + ".l1_entries", "events", "entries into L1")) {
  SC_HAS_PROCESS(LinkDirection);
  params_.validate();
  const double o_local =
      params_.dllp_placement == DllpPlacement::Data ? params_.dllp_overhead_fraction() : 4.0 / 1538.0;
  skp_quantum_ = 1538.0 * (1.0 - o_local);
  ack_quantum_ = params_.ack_interval() * (1.0 - o_local);
  fc_quantum_ = params_.fc_interval() * (1.0 - o_local);
  if (inst.tracing("pcie")) {
    trace_ = inst.trace;
    bw_track_ = trace_->counter_track(inst.process_track, prefix + " bandwidth", "GB/s");
    if (inst.trace_summary) bin_ps_ = std::max(bin_ps_, sim::Instrumentation::kSummaryBinPs);
  }
  SC_METHOD(transmit_method);
  sensitive << kick_;
  dont_initialize();
  SC_METHOD(deliver_method);
  sensitive << deliver_event_;
  dont_initialize();
  SC_METHOD(credit_method);
  sensitive << credit_event_;
  dont_initialize();
  SC_METHOD(nak_method);
  sensitive << nak_event_;
  dont_initialize();
  SC_METHOD(idle_method);
  sensitive << idle_event_;
  dont_initialize();
}

std::uint64_t LinkDirection::now_fs() const {
  return sc_core::sc_time_stamp().value() * 1000;
}

void LinkDirection::notify_at_fs(sc_core::sc_event& e, std::uint64_t at_fs) {
  const std::uint64_t now = now_fs();
  const std::uint64_t delta_ps = at_fs > now ? (at_fs - now + 999) / 1000 : 0;
  e.notify(sc_time::from_value(delta_ps));
}

void LinkDirection::send(TxItem item) {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  const std::uint64_t ready = item.ready_ps;
  items_.push_back(std::move(item));
  if (ready > now) {
    if (busy_until_fs_ <= now * 1000) kick_.notify(sc_time::from_value(ready - now));
  } else {
    kick_.notify(sc_core::SC_ZERO_TIME);
  }
}

void LinkDirection::release_credits(FcClass cls, std::uint32_t data_credits, std::uint64_t drain_ps) {
  // Returned lazily: the transmitter applies due returns when it next looks at its
  // credits, and only a stalled transmitter waits for the next return with an event.
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  const CreditReturn r{now + drain_ps + params_.update_fc_ps, cls, data_credits};
  auto it = credit_returns_.end();
  while (it != credit_returns_.begin() && std::prev(it)->at_ps > r.at_ps) --it;  // kept in time order
  const bool new_front = it == credit_returns_.begin();
  credit_returns_.insert(it, r);
  if (stalled_ && new_front) credit_event_.notify(sc_time::from_value(r.at_ps - now));
}

void LinkDirection::apply_credit_returns() {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  while (!credit_returns_.empty() && credit_returns_.front().at_ps <= now) {
    fc_.release(credit_returns_.front().cls, credit_returns_.front().data);
    credit_returns_.pop_front();
  }
}

void LinkDirection::credit_method() {
  kick_.notify(sc_core::SC_ZERO_TIME);
}

void LinkDirection::charge_overhead(double bytes) {
  const std::uint64_t now = now_fs();
  const auto dur = static_cast<std::uint64_t>(std::llround(bytes * fs_per_byte_));
  if (busy_until_fs_ < now) busy_until_fs_ = now;
  busy_until_fs_ += dur;
  busy_time_.inc(dur / 1000);
  wire_bytes_.inc(static_cast<std::uint64_t>(bytes));
}

std::uint32_t LinkDirection::next_data_credits(const TxItem& item) {
  // What the next TLP of the item needs, without copying the item.
  switch (item.kind) {
    case TxItem::Kind::Single:
      return item.tlp.data_credits();
    case TxItem::Kind::WriteRun:
      return (item.writes.peek().length + 15) / 16;
    case TxItem::Kind::CompletionRun: {
      CompletionSegmenter c = item.cpls;
      return (c.next().length + 15) / 16;
    }
  }
  return 0;
}

Tlp LinkDirection::take_next(TxItem& item, bool& last) {
  if (item.kind == TxItem::Kind::Single) {
    last = true;
    return std::move(item.tlp);  // the item is erased next
  }
  Tlp t = item.tlp;
  if (item.kind == TxItem::Kind::WriteRun) {
    const Segment s = item.writes.next();
    t.address = s.address;
    t.length = s.length;
    t.data_offset = item.tlp.data_offset + static_cast<std::uint32_t>(s.address - item.run_start);
    last = item.writes.done();
  } else {
    t.byte_count = static_cast<std::uint32_t>(item.cpls.remaining());
    const Segment s = item.cpls.next();
    t.address = s.address;
    t.length = s.length;
    t.data_offset = item.tlp.data_offset + static_cast<std::uint32_t>(s.address - item.run_start);
    last = item.cpls.done();
  }
  return t;
}

bool LinkDirection::pick(Tlp& out, std::function<void()>& done, std::uint64_t& next_ready_ps) {
  const std::uint64_t now_ps = sc_core::sc_time_stamp().value();
  next_ready_ps = ~0ULL;
  if (!retransmit_.empty()) {
    out = std::move(retransmit_.front());
    retransmit_.pop_front();
    return true;
  }
  // The oldest item first; behind a blocked head, a posted TLP may pass, and a completion
  // may pass a blocked non-posted request. Look a bounded way back.
  bool blocked_np = false, blocked_cpl = false, blocked_p = false;
  std::size_t scanned = 0;
  for (auto it = items_.begin(); it != items_.end() && scanned < 64; ++it, ++scanned) {
    const FcClass cls = it->tlp.fc();
    // Posted may pass blocked non-posted requests and completions; a completion may pass
    // blocked non-posted requests; a non-posted request may pass blocked completions.
    // Nothing passes a blocked TLP of its own class or a blocked posted one.
    const bool may_go = cls == FcClass::Posted       ? !blocked_p
                        : cls == FcClass::Completion ? !(blocked_p || blocked_cpl)
                                                     : !(blocked_p || blocked_np);
    if (!may_go) continue;
    if (it->ready_ps > now_ps) {
      // Its data is not there yet: others may go first (completions of different requests
      // may pass each other), and the transmitter looks again when it is.
      if (it->ready_ps < next_ready_ps) next_ready_ps = it->ready_ps;
      continue;
    }
    if (!fc_.can_send(cls, next_data_credits(*it))) {
      (cls == FcClass::Posted ? blocked_p : cls == FcClass::NonPosted ? blocked_np : blocked_cpl) = true;
      if (blocked_p && blocked_np && blocked_cpl) break;
      continue;
    }
    bool last = false;
    out = take_next(*it, last);
    fc_.consume(cls, out.data_credits());
    if (last) {
      done = std::move(it->on_sent);
      if (it == items_.begin()) {
        items_.pop_front();
      } else {
        items_.erase(it);
      }
    }
    return true;
  }
  return false;
}

void LinkDirection::account_overhead(double tlp_bytes) {
  if (params_.flit_mode() || params_.dllp_placement == DllpPlacement::None) return;
  // Shares of link time: ACK 8/A, UpdateFC 8/F, SKP 4/1538 (A, F the spec-table intervals).
  // Where all of them are charged here, L link bytes hold T = L (1 - o) TLP bytes, so one
  // ACK falls due every A (1 - o) TLP bytes, and so on: exactly pcie-bench's accounting.
  double local = 0;
  skp_acc_ += tlp_bytes;
  const double skp_q = skp_quantum_;
  if (skp_acc_ >= skp_q) {
    const double n = std::floor(skp_acc_ / skp_q);
    skp_acc_ -= n * skp_q;
    local += 4.0 * n;
    skp_bytes_.inc(static_cast<std::uint64_t>(4.0 * n));
  }
  double dllp_bytes = 0;
  ack_acc_ += tlp_bytes;
  fc_acc_ += tlp_bytes;
  const double ack_q = ack_quantum_;
  const double fc_q = fc_quantum_;
  if (ack_acc_ >= ack_q) {
    const double n = std::floor(ack_acc_ / ack_q);
    ack_acc_ -= n * ack_q;
    dllp_bytes += 8.0 * n;
    dllps_ack_.inc(static_cast<std::uint64_t>(n));
  }
  if (fc_acc_ >= fc_q) {
    const double n = std::floor(fc_acc_ / fc_q);
    fc_acc_ -= n * fc_q;
    dllp_bytes += 8.0 * n;
    dllps_fc_.inc(static_cast<std::uint64_t>(n));
  }
  if (params_.dllp_placement == DllpPlacement::Reverse && reverse_ != nullptr) {
    if (dllp_bytes > 0) reverse_->charge_overhead(dllp_bytes);
  } else {
    local += dllp_bytes;
  }
  if (local > 0) {
    busy_until_fs_ += static_cast<std::uint64_t>(std::llround(local * fs_per_byte_));
    wire_bytes_.inc(static_cast<std::uint64_t>(local));
  }
}

void LinkDirection::transmit(Tlp& tlp) {
  const std::uint64_t start = busy_until_fs_;
  const double bytes = static_cast<double>(tlp.wire_bytes);
  const auto dur = static_cast<std::uint64_t>(std::llround(bytes * fs_per_byte_));
  busy_until_fs_ = start + dur;
  wire_bytes_.inc(tlp.wire_bytes);
  if (capture_ != nullptr) capture_->record(start / 1000, label_, tlp);
  if (bw_track_ != 0 && tlp.replays == 0 && carries_data(tlp.type)) sample_bandwidth(start / 1000, tlp.length);
  account_overhead(bytes);
  // An aggregate paced by credits or tags: its DLLPs fit in the gaps it leaves.
  if (busy_until_fs_ < start + tlp.bulk_min_ps * 1000) busy_until_fs_ = start + tlp.bulk_min_ps * 1000;
  busy_time_.inc((busy_until_fs_ - start) / 1000);
  last_activity_fs_ = busy_until_fs_;

  // Error injection: the receiver NAKs a TLP whose LCRC fails; everything sent after it
  // before the NAK arrives is discarded too and replayed.
  if (nak_pending_ && start < nak_at_fs_) {
    ++tlp.replays;
    replay_.push_back(tlp);
    return;
  }
  if (params_.ber > 0.0) {
    const double p_bad = 1.0 - std::pow(1.0 - params_.ber, 8.0 * bytes);
    if (uniform_(rng_) < p_bad) {
      bad_tlps_.inc();
      if (error_listener_) error_listener_(LinkError::BadTlp);
      nak_pending_ = true;
      nak_at_fs_ = busy_until_fs_ + params_.ack_latency_ps * 1000;
      ++tlp.replays;
      replay_.push_back(tlp);
      notify_at_fs(nak_event_, nak_at_fs_);
      return;
    }
  }
  replay_rounds_ = 0;
  const std::uint64_t deliver_ps = (busy_until_fs_ + 999) / 1000 + params_.propagation_ps;
  const bool was_empty = in_flight_.empty();
  in_flight_.push_back({deliver_ps, tlp});
  if (was_empty) deliver_event_.notify(sc_time::from_value(deliver_ps - sc_core::sc_time_stamp().value()));
}

void LinkDirection::nak_method() {
  nak_pending_ = false;
  replays_.inc(replay_.size());
  if (++replay_rounds_ >= 4) {
    // REPLAY_NUM rolled over: the link retrains before it replays.
    replay_rollovers_.inc();
    replay_rounds_ = 0;
    if (error_listener_) error_listener_(LinkError::ReplayRollover);
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    set_state(LinkPowerState::Training);
    wake(now + params_.training_ps);
  }
  while (!replay_.empty()) {
    retransmit_.push_back(std::move(replay_.front()));
    replay_.pop_front();
  }
  kick_.notify(sc_core::SC_ZERO_TIME);
}

void LinkDirection::transmit_method() {
  const std::uint64_t now = now_fs();
  if (busy_until_fs_ > now) {
    kick_.notify(sc_time::from_value((busy_until_fs_ - now + 999) / 1000));
    return;
  }
  if (pending_done_) {
    auto done = std::move(pending_done_);
    pending_done_ = nullptr;
    done();
  }
  if (retransmit_.empty() && items_.empty()) {
    if (stalled_) stalled_ = false;
    if ((params_.aspm_l0s && state_ == LinkPowerState::L0) || idle_listener_) {
      if (params_.aspm_l0s && state_ == LinkPowerState::L0)
        idle_event_.notify(sc_time::from_value(params_.l0s_idle_ps));
      if (idle_listener_) idle_listener_();
    }
    return;
  }
  if (state_ != LinkPowerState::L0 || ready_at_fs_ > now) {
    if (state_ == LinkPowerState::L0s) wake(now / 1000 + params_.l0s_exit_ps);
    if (state_ == LinkPowerState::L1 && wake_listener_) wake_listener_();  // the link wakes both ways
    if (ready_at_fs_ > now) notify_at_fs(kick_, ready_at_fs_);
    return;
  }
  busy_until_fs_ = now;
  apply_credit_returns();
  Tlp tlp;
  std::function<void()> done;
  std::uint64_t next_ready_ps = ~0ULL;
  if (!pick(tlp, done, next_ready_ps)) {
    if (next_ready_ps != ~0ULL) kick_.notify(sc_time::from_value(next_ready_ps - now / 1000));
    if (!has_ready_items(now / 1000)) return;  // only waiting for data: not a credit stall
    if (!stalled_) {
      stalled_ = true;
      stall_since_fs_ = now;
    }
    // Wait for the next credit return (or a new item, which kicks anyway).
    if (!credit_returns_.empty()) {
      credit_event_.notify(sc_time::from_value(credit_returns_.front().at_ps - now / 1000));
    }
    return;
  }
  if (stalled_) {
    stalled_ = false;
    credit_stall_time_.inc((now - stall_since_fs_) / 1000);
  }
  send_one(tlp);
  // Back to back: TLPs already queued, ready and with credits go out in this activation,
  // each starting where the previous one ends, as long as the batch stays within
  // kBatchWindowFs of now (items that become ready meanwhile wait at most that long, which
  // the ordering rules allow) and no TLP has a callback that must fire at its own end. Bit
  // errors need the TLP-by-TLP path (a NAK changes what follows).
  constexpr std::uint64_t kBatchWindowFs = 64'000'000;  // 64 ns
  while (!done && params_.ber == 0.0 && retransmit_.empty() && busy_until_fs_ < now + kBatchWindowFs) {
    std::uint64_t unused = ~0ULL;
    if (!pick(tlp, done, unused)) break;
    send_one(tlp);
  }
  pending_done_ = std::move(done);
  notify_at_fs(kick_, busy_until_fs_);
}

void LinkDirection::send_one(Tlp& tlp) {
  if (tlp.replays == 0) {
    if (tlp.wire_bytes == 0) {
      tlp.wire_bytes = params_.tlp_wire_bytes(tlp.four_dw, carries_data(tlp.type) ? tlp.length : 0);
    }
    tlps_.inc(tlp.bulk_tlps);
    payload_bytes_.inc(carries_data(tlp.type) ? tlp.length : 0);
    switch (tlp.type) {
      case TlpType::MWr:
        tlps_mwr_.inc(tlp.bulk_tlps);
        break;
      case TlpType::MRd:
        tlps_mrd_.inc(tlp.bulk_tlps);
        break;
      case TlpType::Cpl:
      case TlpType::CplD:
        tlps_cpl_.inc(tlp.bulk_tlps);
        break;
      case TlpType::CfgRd:
      case TlpType::CfgWr:
        tlps_cfg_.inc(tlp.bulk_tlps);
        break;
      case TlpType::Msg:
        tlps_msg_.inc(tlp.bulk_tlps);
        break;
    }
  }
  transmit(tlp);
}

void LinkDirection::deliver_method() {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  while (!in_flight_.empty() && in_flight_.front().deliver_ps <= now) {
    Tlp tlp = std::move(in_flight_.front().tlp);
    in_flight_.pop_front();
    if (receiver_) receiver_(tlp);
  }
  if (!in_flight_.empty()) deliver_event_.notify(sc_time::from_value(in_flight_.front().deliver_ps - now));
}

bool LinkDirection::has_ready_items(std::uint64_t now_ps) const noexcept {
  if (!retransmit_.empty()) return true;
  for (const TxItem& i : items_) {
    if (i.ready_ps <= now_ps) return true;
  }
  return false;
}

bool LinkDirection::idle() const noexcept {
  return items_.empty() && retransmit_.empty() && busy_until_fs_ <= now_fs();
}

void LinkDirection::idle_method() {
  if (state_ != LinkPowerState::L0 || !idle()) return;
  const std::uint64_t due = last_activity_fs_ + params_.l0s_idle_ps * 1000;
  if (now_fs() >= due) {
    enter_power_state(LinkPowerState::L0s);
  } else {
    notify_at_fs(idle_event_, due);
  }
}

void LinkDirection::set_state(LinkPowerState s) {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  const std::uint64_t spent = now > state_since_ps_ ? now - state_since_ps_ : 0;
  switch (state_) {
    case LinkPowerState::L0:
      l0_time_.inc(spent);
      break;
    case LinkPowerState::L0s:
      l0s_time_.inc(spent);
      break;
    case LinkPowerState::L1:
      l1_time_.inc(spent);
      break;
    case LinkPowerState::Training:
      training_time_.inc(spent);
      break;
  }
  state_ = s;
  if (now > state_since_ps_) state_since_ps_ = now;
}

void LinkDirection::enter_power_state(LinkPowerState s) {
  if (s == state_) return;
  if (s == LinkPowerState::L0s) l0s_entries_.inc();
  if (s == LinkPowerState::L1) l1_entries_.inc();
  set_state(s);
}

void LinkDirection::wake(std::uint64_t ready_ps) {
  // The exit latency passes in the old state; L0 is counted from ready_ps on.
  if (ready_ps * 1000 > ready_at_fs_) ready_at_fs_ = ready_ps * 1000;
  if (state_ != LinkPowerState::L0) {
    // Residency: the state lasts until the exit completes.
    const LinkPowerState old = state_;
    const std::uint64_t since = state_since_ps_;
    const std::uint64_t spent = ready_ps - since;
    switch (old) {
      case LinkPowerState::L0s:
        l0s_time_.inc(spent);
        break;
      case LinkPowerState::L1:
        l1_time_.inc(spent);
        break;
      case LinkPowerState::Training:
        training_time_.inc(spent);
        break;
      case LinkPowerState::L0:
        break;
    }
    state_ = LinkPowerState::L0;
    state_since_ps_ = ready_ps;
  }
  notify_at_fs(kick_, ready_at_fs_);
}

void LinkDirection::sync_stats() {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  if (now > state_since_ps_) set_state(state_);
  flush_bandwidth();
}

void LinkDirection::sample_bandwidth(std::uint64_t start_ps, std::uint64_t payload) {
  const std::uint64_t bin = start_ps / bin_ps_;
  if (bin_open_ && bin != bin_index_) {
    flush_bandwidth();
    // An idle stretch reads as zero from the bin after the last one with data.
    if (bin > bin_index_ + 1)
      trace_->counter(bw_track_, static_cast<counters::TimeNs>((bin_index_ + 1) * bin_ps_ / 1000), 0.0);
  }
  if (!bin_open_ || bin != bin_index_) {
    bin_index_ = bin;
    bin_bytes_ = 0;
    bin_open_ = true;
  }
  bin_bytes_ += static_cast<double>(payload);
}

void LinkDirection::flush_bandwidth() {
  if (!bin_open_ || trace_ == nullptr) return;
  // bytes per bin / bin length in ns = GB/s
  trace_->counter(bw_track_, static_cast<counters::TimeNs>(bin_index_ * bin_ps_ / 1000),
                  bin_bytes_ / (static_cast<double>(bin_ps_) / 1000.0));
  bin_open_ = false;
}

}  // namespace sohusim::pcie
