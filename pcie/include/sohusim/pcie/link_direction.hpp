#pragma once
// One direction of a PCIe link: the transmitter's queues, flow-control credits, the
// serialisation of TLPs and DLLPs onto the lanes, the replay buffer, the power state of
// the transmitter, and delivery to the receiver on the far side.
//
// Event-driven: the transmitter runs when something is queued, when the lanes come free,
// when credits return, when a NAK arrives or the link wakes; it is never woken to find
// nothing to do. One activation sends the ready TLPs of the next 64 ns back to back. Time on the lanes is kept in
// femtoseconds (one TLP of 276 bytes at Gen5 x16 is 4.38 ns; per-TLP rounding to 1 ps would bias throughput by up to
// 0.02 %), events are scheduled at the next picosecond.
//
// Arbitration (PCIe ordering, simplified): the oldest queued TLP goes first; when its
// class lacks credits, a posted TLP behind it may pass it (posted requests may pass
// non-posted requests and completions), and a completion may pass a blocked non-posted
// request. Within a class, order is kept.
//
// Errors: with a bit error rate, each transmitted TLP fails its LCRC with probability
// 1 - (1 - ber)^(8 x wire bytes) (seeded). The receiver discards it and every TLP after
// it until the NAK (ack_latency later) makes the transmitter replay from the bad one
// (go-back-N). Four replays of the same TLP without progress roll REPLAY_NUM over: the
// link retrains and the error is reported.
//
// Power: with ASPM L0s, a transmitter idle for l0s_idle enters L0s and pays l0s_exit
// before its next TLP. L1 is entered and left by the link for both directions
// (pcie_link.hpp).
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>

#include <systemc>

#include "sohusim/counters/registry.hpp"
#include "sohusim/pcie/flow_control.hpp"
#include "sohusim/pcie/link_params.hpp"
#include "sohusim/pcie/segmentation.hpp"
#include "sohusim/pcie/tlp.hpp"
#include "sohusim/sim/instrumentation.hpp"

namespace sohusim::pcie {

class TlpCapture;

enum class LinkPowerState : std::uint8_t { L0, L0s, L1, Training };
std::string_view to_string(LinkPowerState s);

/// Errors a direction reports to whoever keeps AER status for its receiver/transmitter.
enum class LinkError : std::uint8_t { BadTlp, ReplayRollover };

/// What the transmitter queues: one TLP, or a run of them cut from one request.
struct TxItem {
  enum class Kind : std::uint8_t { Single, WriteRun, CompletionRun };
  Kind kind = Kind::Single;
  Tlp tlp;                   // the TLP (Single) or the template of the run
  Segmenter writes;          // WriteRun: the MPS cut
  CompletionSegmenter cpls;  // CompletionRun: the RCB/MPS cut
  std::uint64_t run_start = 0;
  std::uint64_t ready_ps = 0;     // not before (a completion waiting for its data)
  std::function<void()> on_sent;  // when its last TLP has left the transmitter
};

class LinkDirection : public sc_core::sc_module {
 public:
  using Receiver = std::function<void(Tlp&)>;
  using ErrorListener = std::function<void(LinkError)>;

  LinkDirection(sc_core::sc_module_name name, const LinkParams& params, const sim::Instrumentation& inst,
                const std::string& stats_prefix);

  void set_receiver(Receiver r) { receiver_ = std::move(r); }
  void set_error_listener(ErrorListener l) { error_listener_ = std::move(l); }
  /// The opposite direction, which carries this one's ACK/UpdateFC DLLPs when
  /// dllp_placement is `reverse`.
  void set_reverse(LinkDirection* reverse) { reverse_ = reverse; }
  void set_capture(TlpCapture* capture, std::string label) {
    capture_ = capture;
    label_ = std::move(label);
  }

  /// Queues an item; callable from any process, at any time.
  void send(TxItem item);
  /// The receiver drains a TLP of `cls` with `data_credits` after `drain_ps`: the
  /// transmitter gets them back the UpdateFC latency later.
  void release_credits(FcClass cls, std::uint32_t data_credits, std::uint64_t drain_ps = 0);

  /// Occupies the lanes for `bytes` of DLLPs or ordered sets sent on behalf of the
  /// opposite direction.
  void charge_overhead(double bytes);

  // Power management, driven by the link.
  LinkPowerState power_state() const noexcept { return state_; }
  /// ASPM L0s on or off from now on (software's Link Control setting).
  void set_aspm_l0s(bool on) noexcept { params_.aspm_l0s = on; }
  void enter_power_state(LinkPowerState s);
  /// Leaves L0s/L1/Training: the transmitter may send from `ready_ps` on.
  void wake(std::uint64_t ready_ps);
  /// Picoseconds since the transmitter last had work (0 when busy or queued).
  bool idle() const noexcept;
  std::uint64_t last_activity_ps() const noexcept { return last_activity_fs_ / 1000; }
  /// Called when the transmitter goes idle (the link starts its L1 timer).
  void set_idle_listener(std::function<void()> l) { idle_listener_ = std::move(l); }
  /// Called when the transmitter has work while the link is in L1 (the link wakes both ways).
  void set_wake_listener(std::function<void()> l) { wake_listener_ = std::move(l); }

  /// Brings residency counters up to now.
  void sync_stats();

  const LinkParams& params() const noexcept { return params_; }
  const FlowControl& flow_control() const noexcept { return fc_; }
  std::uint64_t queued_items() const noexcept { return items_.size() + retransmit_.size(); }

 private:
  struct InFlight {
    std::uint64_t deliver_ps;
    Tlp tlp;
  };
  struct CreditReturn {
    std::uint64_t at_ps;
    FcClass cls;
    std::uint32_t data;
  };

  void transmit_method();
  void deliver_method();
  void credit_method();
  void apply_credit_returns();
  bool has_ready_items(std::uint64_t now_ps) const noexcept;
  void nak_method();
  void idle_method();

  bool pick(Tlp& out, std::function<void()>& done, std::uint64_t& next_ready_ps);
  static std::uint32_t next_data_credits(const TxItem& item);
  static Tlp take_next(TxItem& item, bool& last);
  void transmit(Tlp& tlp);
  void send_one(Tlp& tlp);
  std::uint64_t now_fs() const;
  void notify_at_fs(sc_core::sc_event& e, std::uint64_t at_fs);
  void account_overhead(double tlp_bytes);
  void set_state(LinkPowerState s);

  LinkParams params_;
  double fs_per_byte_;
  FlowControl fc_;
  std::deque<TxItem> items_;
  std::deque<Tlp> retransmit_;  // replays go before anything new
  std::deque<Tlp> replay_;      // sent while a NAK is on its way: discarded by the receiver
  std::deque<InFlight> in_flight_;
  std::deque<CreditReturn> credit_returns_;
  Receiver receiver_;
  ErrorListener error_listener_;
  std::function<void()> idle_listener_;
  std::function<void()> wake_listener_;
  LinkDirection* reverse_ = nullptr;
  TlpCapture* capture_ = nullptr;
  std::string label_;

  std::uint64_t busy_until_fs_ = 0;
  std::uint64_t ready_at_fs_ = 0;  // power-state exit or retraining
  std::uint64_t last_activity_fs_ = 0;
  std::function<void()> pending_done_;
  bool stalled_ = false;
  std::uint64_t stall_since_fs_ = 0;
  bool nak_pending_ = false;
  std::uint64_t nak_at_fs_ = 0;
  unsigned replay_rounds_ = 0;
  double ack_acc_ = 0, fc_acc_ = 0, skp_acc_ = 0;
  double ack_quantum_ = 0, fc_quantum_ = 0, skp_quantum_ = 0;
  LinkPowerState state_ = LinkPowerState::L0;
  std::uint64_t state_since_ps_ = 0;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};

  sc_core::sc_event kick_, deliver_event_, credit_event_, nak_event_, idle_event_;

  // Trace: a bandwidth counter track (payload GB/s per bin of bandwidth_bin_ps), emitted
  // as bins close, without a periodic process.
  void sample_bandwidth(std::uint64_t start_ps, std::uint64_t payload);
  void flush_bandwidth();
  counters::TraceRecorder* trace_ = nullptr;
  counters::TrackId bw_track_ = 0;
  std::uint64_t bin_ps_ = 1'000'000;
  std::uint64_t bin_index_ = 0;
  double bin_bytes_ = 0;
  bool bin_open_ = false;

  counters::Counter& tlps_;
  counters::Counter& tlps_mwr_;
  counters::Counter& tlps_mrd_;
  counters::Counter& tlps_cpl_;
  counters::Counter& tlps_cfg_;
  counters::Counter& tlps_msg_;
  counters::Counter& payload_bytes_;
  counters::Counter& wire_bytes_;
  counters::Counter& dllps_ack_;
  counters::Counter& dllps_fc_;
  counters::Counter& skp_bytes_;
  counters::Counter& busy_time_;
  counters::Counter& credit_stall_time_;
  counters::Counter& bad_tlps_;
  counters::Counter& replays_;
  counters::Counter& replay_rollovers_;
  counters::Counter& l0_time_;
  counters::Counter& l0s_time_;
  counters::Counter& l1_time_;
  counters::Counter& training_time_;
  counters::Counter& l0s_entries_;
  counters::Counter& l1_entries_;
};

}  // namespace sohusim::pcie
