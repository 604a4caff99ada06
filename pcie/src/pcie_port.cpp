#include "sohusim/pcie/pcie_port.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "sohusim/pcie/segmentation.hpp"

namespace sohusim::pcie {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t k4G = 1ULL << 32;
constexpr unsigned kBulkReadsInFlight = 4;
}  // namespace

PciePort::PciePort(sc_core::sc_module_name name, const LinkParams& link, const PortParams& params, LinkDirection& tx,
                   LinkDirection& rx, const sim::Instrumentation& inst, const std::string& prefix)
    : sc_core::sc_module(name),
      link_(link),
      params_(params),
      tx_(tx),
      rx_(rx),
      tags_(link.tag_bits),
      tag_table_(1024),
      requests_(inst.registry->counter(prefix + ".requests", "requests", "requests this port started as requester")),
      completions_received_(inst.registry->counter(prefix + ".completions_received", "TLPs",
                                                   "completions received for this port's reads")),
      timeouts_(inst.registry->counter(prefix + ".completion_timeouts", "requests", "reads that timed out")),
      unexpected_(inst.registry->counter(prefix + ".unexpected_completions", "TLPs",
                                         "completions matching no outstanding request")),
      ur_sent_(inst.registry->counter(prefix + ".unsupported_requests", "requests",
                                      "requests answered Unsupported Request (or dropped, posted)")),
      poisoned_received_(inst.registry->counter(prefix + ".poisoned_received", "TLPs", "poisoned TLPs received")),
      outstanding_(inst.registry->gauge(prefix + ".outstanding_reads", "requests",
                                        "read requests with a tag (max: the high-water mark)")),
      read_latency_(inst.registry->distribution(prefix + ".read_latency", "ns",
                                                "from a read's first request to its last completion",
                                                counters::DistributionSpec::log(1.0, 1.0e8, 80))) {
  if (params_.bulk_chunk < 4096 || params_.bulk_chunk > (1ULL << 30) ||
      (params_.bulk_chunk & (params_.bulk_chunk - 1)) != 0) {
    throw std::invalid_argument("PCIe port: bulk_chunk must be a power of two from 4 KiB to 1 GiB");
  }
  rx_.set_receiver([this](Tlp& t) { receive(t); });
  if (inst.tracing("pcie") && !inst.trace_summary) {  // summary: no per-transfer slices
    trace_ = inst.trace;
    transfers_track_ = trace_->async_track(inst.process_track, prefix + " transfers");
  }
}

bool PciePort::use_bulk(const Request& r) const {
  return r.allow_bulk && params_.bulk_threshold != 0 && r.length >= params_.bulk_threshold && link_.ber == 0.0 &&
         (r.type == TlpType::MWr || r.type == TlpType::MRd);
}

Tlp PciePort::make_request_tlp(const Request& r, TlpType type, std::uint64_t address, std::uint32_t length) const {
  Tlp t;
  t.type = type;
  t.requester = r.requester;
  t.completer = r.completer;
  t.address = address;
  t.length = length;
  t.four_dw = link_.header_4dw || address + length > k4G;
  t.poisoned = r.poisoned;
  t.correlation = r.correlation;
  t.want_data = r.data != nullptr;
  return t;
}

void PciePort::post(const Request& r, std::function<void()> on_sent) {
  requests_.inc();
  TxItem item;
  item.kind = r.length > link_.mps ? TxItem::Kind::WriteRun : TxItem::Kind::Single;
  item.tlp =
      make_request_tlp(r, r.type, r.address, static_cast<std::uint32_t>(std::min<std::uint64_t>(r.length, link_.mps)));
  if (r.data != nullptr && r.length > 0)
    item.tlp.data = std::make_shared<std::vector<std::uint8_t>>(r.data, r.data + r.length);
  if (item.kind == TxItem::Kind::WriteRun) {
    item.writes = Segmenter(r.address, r.length, link_.mps);
    item.run_start = r.address;
  }
  item.on_sent = std::move(on_sent);
  tx_.send(std::move(item));
}

void PciePort::trace_transfer(const Request& r, std::uint64_t start_ps, const Result& res) {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  const std::string_view name = to_string(r.type);
  trace_->complete(transfers_track_, static_cast<counters::TimeNs>(start_ps / 1000),
                   static_cast<counters::TimeNs>((now - start_ps) / 1000), name,
                   {{"address", r.address},
                    {"bytes", r.length},
                    {"requester", format_rid(r.requester)},
                    {"tlps", res.tlps},
                    {"status", to_string(res.timed_out ? CplStatus::CA : res.status)}},
                   {}, r.correlation);
}

PciePort::Result PciePort::transact(const Request& r) {
  Result result;
  const std::uint64_t t_start = sc_core::sc_time_stamp().value();
  const bool posted = r.type == TlpType::MWr || r.type == TlpType::Msg;
  if (posted) {
    bool sent = false;
    sc_core::sc_event done;
    auto finish = [&sent, &done] {
      sent = true;
      done.notify(sc_core::SC_ZERO_TIME);
    };
    if (use_bulk(r)) {
      requests_.inc();
      std::uint64_t addr = r.address;
      std::uint64_t left = r.length;
      const std::uint32_t hdr = link_.tlp_wire_bytes(link_.header_4dw || r.address + r.length > k4G, 0);
      while (left > 0) {
        const std::uint64_t bytes = std::min(left, params_.bulk_chunk - addr % params_.bulk_chunk);
        TxItem item;
        item.tlp = make_request_tlp(r, TlpType::MWr, addr, static_cast<std::uint32_t>(bytes));
        item.tlp.bulk_tlps = segment_count(addr, bytes, link_.mps);
        item.tlp.wire_bytes = static_cast<std::uint32_t>(bytes + item.tlp.bulk_tlps * hdr);
        if (r.data != nullptr) {
          const std::uint8_t* src = r.data + (addr - r.address);
          item.tlp.data = std::make_shared<std::vector<std::uint8_t>>(src, src + bytes);
        }
        // Credit-limited rate: the receiver's posted buffer (headers and data) turns over
        // once per credit loop (transmission, propagation, UpdateFC).
        const double tlp_ps = hdr * 1e12 / link_.tlp_lane_bytes_per_s() +
                              static_cast<double>(bytes) / item.tlp.bulk_tlps * 1e12 / link_.tlp_lane_bytes_per_s();
        const double loop_ps = tlp_ps + static_cast<double>(link_.propagation_ps + link_.update_fc_ps);
        double min_ps = 0;
        if (link_.credits.posted_data != 0) {
          min_ps = std::max(min_ps, static_cast<double>(bytes) / (link_.credits.posted_data * 16.0) * loop_ps);
        }
        if (link_.credits.posted_header != 0) {
          min_ps = std::max(min_ps, static_cast<double>(item.tlp.bulk_tlps) / link_.credits.posted_header * loop_ps);
        }
        item.tlp.bulk_min_ps = static_cast<std::uint64_t>(min_ps);
        result.tlps += item.tlp.bulk_tlps;
        addr += bytes;
        left -= bytes;
        if (left == 0) item.on_sent = finish;
        tx_.send(std::move(item));
      }
    } else {
      result.tlps = std::max<std::uint64_t>(1, segment_count(r.address, r.length, link_.mps));
      post(r, finish);
    }
    while (!sent) sc_core::wait(done);
    if (transfers_track_ != 0) trace_transfer(r, t_start, result);
    return result;
  }

  // Non-posted: reads and configuration requests.
  requests_.inc();
  Txn txn;
  txn.id = next_txn_++;
  txn.type = r.type;
  txn.base = r.address;
  txn.request = r;
  txn.remaining = r.type == TlpType::CfgWr ? 0 : r.length;
  txn.bulk = use_bulk(r);
  const std::uint32_t cut = r.type == TlpType::MRd ? link_.mrrs : 4;
  // Reads cut by MRRS (or, through the bulk path, into bulk_chunk aggregates); a
  // configuration request is one dword.
  txn.reads = txn.bulk ? Segmenter(r.address, r.length, static_cast<std::uint32_t>(params_.bulk_chunk))
                       : Segmenter(r.address, r.type == TlpType::MRd ? r.length : 4, cut);
  const std::uint64_t start = sc_core::sc_time_stamp().value();
  txn.last_progress_ps = start;
  issue_reads(txn);
  const sc_time timeout = sc_time::from_value(link_.completion_timeout_ps);
  while (!txn.finished) {
    sc_core::wait(timeout, txn.done);
    if (txn.finished) break;
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    if (now - txn.last_progress_ps >= link_.completion_timeout_ps) {
      // Completion timeout: the outstanding tags are given up (a late completion is then
      // unexpected), the rest of the request is not issued.
      timeouts_.inc();
      txn.result.timed_out = true;
      txn.result.status = CplStatus::CA;
      for (std::size_t t = 0; t < tag_table_.size(); ++t) {
        if (tag_table_[t].txn == &txn) {
          tag_table_[t] = {};
          tags_.release(static_cast<std::uint16_t>(t));
        }
      }
      outstanding_.add(-static_cast<double>(txn.outstanding));
      tag_waiters_.erase(std::remove(tag_waiters_.begin(), tag_waiters_.end(), &txn), tag_waiters_.end());
      Tlp probe =
          make_request_tlp(r, r.type, r.address, static_cast<std::uint32_t>(std::min<std::uint64_t>(r.length, 4096)));
      if (error_listener_) error_listener_(PortError::CompletionTimeout, probe);
      issue_waiting();
      break;
    }
  }
  read_latency_.sample(static_cast<double>(sc_core::sc_time_stamp().value() - start) / 1000.0);
  if (transfers_track_ != 0) trace_transfer(r, t_start, txn.result);
  return txn.result;
}

void PciePort::issue_reads(Txn& txn) {
  const Request& r = txn.request;
  if (txn.bulk) {
    // Aggregates of bulk_chunk bytes, up to kBulkReadsInFlight at a time.
    const std::uint32_t hdr = link_.tlp_wire_bytes(link_.header_4dw || r.address + r.length > k4G, 0);
    while (!txn.reads.done() && txn.outstanding < kBulkReadsInFlight && tags_.available()) {
      const Segment s = txn.reads.next();
      const std::uint16_t tag = tags_.allocate();
      tag_table_[tag] = {&txn, s.length};
      ++txn.outstanding;
      outstanding_.add(1);
      TxItem item;
      item.tlp = make_request_tlp(r, TlpType::MRd, s.address, s.length);
      item.tlp.tag = tag;
      item.tlp.txn = txn.id;
      item.tlp.bulk_tlps = segment_count(s.address, s.length, link_.mrrs);
      item.tlp.wire_bytes = static_cast<std::uint32_t>(item.tlp.bulk_tlps * hdr);
      txn.result.tlps += item.tlp.bulk_tlps;
      tx_.send(std::move(item));
    }
  } else {
    const TlpType type = r.type;
    while (!txn.reads.done() && tags_.available()) {
      const Segment s = txn.reads.next();
      const std::uint16_t tag = tags_.allocate();
      tag_table_[tag] = {&txn, type == TlpType::CfgWr ? 0 : s.length};
      ++txn.outstanding;
      outstanding_.add(1);
      TxItem item;
      item.tlp = make_request_tlp(r, type, type == TlpType::MRd ? s.address : r.address, s.length);
      item.tlp.tag = tag;
      item.tlp.txn = txn.id;
      if (type == TlpType::CfgWr && r.data != nullptr) {
        item.tlp.data = std::make_shared<std::vector<std::uint8_t>>(r.data, r.data + 4);
      }
      if (type == TlpType::CfgRd || type == TlpType::CfgWr) item.tlp.four_dw = false;
      ++txn.result.tlps;
      tx_.send(std::move(item));
    }
  }
  const bool more = !txn.reads.done();
  const bool queued = std::find(tag_waiters_.begin(), tag_waiters_.end(), &txn) != tag_waiters_.end();
  if (more && !queued && (!txn.bulk || txn.outstanding == 0)) tag_waiters_.push_back(&txn);
  high_water_ = std::max<std::uint64_t>(high_water_, tags_.in_use());
}

void PciePort::issue_waiting() {
  // Bulk transactions re-issue from their own completions; tag waiters are served in order.
  while (!tag_waiters_.empty() && tags_.available()) {
    Txn* t = tag_waiters_.front();
    tag_waiters_.pop_front();
    issue_reads(*t);
    if (!t->reads.done()) break;  // it queued itself again at the back: keep FIFO order
  }
}

void PciePort::finish_if_done(Txn& txn) {
  if (!txn.finished && txn.outstanding == 0 && txn.reads.done()) {
    txn.finished = true;
    txn.done.notify(sc_core::SC_ZERO_TIME);
  }
}

void PciePort::receive(Tlp& tlp) {
  if (fc_class(tlp.type) != FcClass::Posted || completer_ == nullptr) rx_.release_credits(tlp.fc(), tlp.data_credits());
  if (tlp.poisoned) {
    poisoned_received_.inc();
    if (error_listener_) error_listener_(PortError::PoisonedReceived, tlp);
  }
  if (is_completion(tlp.type)) {
    receive_completion(tlp);
  } else {
    receive_request(tlp);
  }
}

void PciePort::receive_completion(Tlp& tlp) {
  completions_received_.inc(tlp.bulk_tlps);
  TagEntry* entry = tlp.tag < tag_table_.size() ? &tag_table_[tlp.tag] : nullptr;
  if (entry == nullptr || entry->txn == nullptr || entry->txn->id != tlp.txn) {
    unexpected_.inc();
    if (error_listener_) error_listener_(PortError::UnexpectedCompletion, tlp);
    return;
  }
  Txn& txn = *entry->txn;
  txn.last_progress_ps = sc_core::sc_time_stamp().value();
  if (tlp.poisoned) txn.result.poisoned = true;
  bool ends_request = false;
  if (tlp.type == TlpType::Cpl || tlp.status != CplStatus::SC) {
    if (tlp.status != CplStatus::SC) txn.result.status = tlp.status;
    txn.remaining -= std::min(txn.remaining, entry->expected);
    ends_request = true;
  } else {
    if (txn.request.data != nullptr && tlp.data) {
      const std::uint64_t offset = txn.type == TlpType::MRd ? tlp.address - txn.base : 0;
      const std::uint64_t n =
          std::min<std::uint64_t>(tlp.length, txn.request.length - std::min(offset, txn.request.length));
      std::memcpy(txn.request.data + offset, tlp.data->data() + tlp.data_offset, n);
    }
    const std::uint64_t got = std::min<std::uint64_t>(tlp.length, entry->expected);
    entry->expected -= got;
    txn.remaining -= std::min(txn.remaining, got);
    ends_request = entry->expected == 0;
  }
  if (ends_request) {
    *entry = {};
    tags_.release(tlp.tag);
    --txn.outstanding;
    outstanding_.add(-1);
    if (txn.bulk) issue_reads(txn);
    issue_waiting();
    finish_if_done(txn);
  }
}

void PciePort::receive_request(Tlp& tlp) {
  const std::uint8_t* data = tlp.data ? tlp.data->data() + tlp.data_offset : nullptr;
  if (fc_class(tlp.type) == FcClass::Posted) {
    if (completer_ != nullptr) {
      rx_.release_credits(tlp.fc(), tlp.data_credits(), completer_->posted(tlp, data));
    } else {
      ur_sent_.inc();
    }
    return;
  }
  // Non-posted: answer with completions once the data is ready.
  DataBuffer buffer;
  const bool has_data = tlp.type == TlpType::CfgRd || tlp.type == TlpType::MRd;
  if (has_data && (tlp.want_data || tlp.type == TlpType::CfgRd)) {
    buffer = std::make_shared<std::vector<std::uint8_t>>(tlp.length, 0);
  }
  Completer::Answer ans;
  if (completer_ != nullptr) {
    ans = completer_->nonposted(tlp, buffer ? buffer->data() : nullptr, data);
  } else {
    ans.status = CplStatus::UR;
  }
  if (ans.status == CplStatus::UR) ur_sent_.inc();
  TxItem item;
  Tlp& c = item.tlp;
  c.requester = tlp.requester;
  c.completer = tlp.completer;
  c.tag = tlp.tag;
  c.txn = tlp.txn;
  c.correlation = tlp.correlation;
  c.address = tlp.address;
  c.status = ans.status;
  c.poisoned = ans.poisoned;
  c.byte_count = tlp.length;
  c.data = buffer;
  std::uint64_t min_ps = 0;
  if (ans.status != CplStatus::SC || tlp.type == TlpType::CfgWr) {
    c.type = TlpType::Cpl;
    c.length = 0;
    c.data = nullptr;
  } else if (tlp.type == TlpType::CfgRd) {
    c.type = TlpType::CplD;
    c.length = 4;
  } else if (tlp.bulk_tlps > 1) {
    // An aggregate read: its completions as one aggregate, at least as long as the tag
    // pool allows (tags x MRRS per round trip).
    c.type = TlpType::CplD;
    c.length = tlp.length;
    std::uint64_t pieces = 0;
    Segmenter reqs(tlp.address, tlp.length, link_.mrrs);
    while (!reqs.done()) {
      const Segment s = reqs.next();
      pieces += completion_count(s.address, s.length, link_.rcb, link_.mps, link_.merge_completions);
    }
    c.bulk_tlps = pieces;
    c.wire_bytes = static_cast<std::uint32_t>(tlp.length + pieces * link_.tlp_wire_bytes(false, 0));
    const double link_bps = link_.tlp_lane_bytes_per_s() / 1e12;  // bytes per ps
    // The tag limit binds a stream by the latency of one request in an unloaded system: the
    // least any aggregate's first request has seen (queueing behind this stream's own
    // earlier chunks is already in their answer times).
    const std::uint64_t unit = ans.unit_latency_ps != 0 ? ans.unit_latency_ps : ans.latency_ps;
    if (unit < min_unit_latency_ps_) min_unit_latency_ps_ = unit;
    const std::uint64_t unloaded = min_unit_latency_ps_;
    const double rtt_ps = static_cast<double>(2 * link_.propagation_ps + link_.completer_latency_ps + unloaded) +
                          (link_.mrrs + 2.0 * link_.tlp_wire_bytes(false, 0)) / link_bps;
    const double tag_rate = tags_.capacity() * static_cast<double>(link_.mrrs) / rtt_ps;
    min_ps = static_cast<std::uint64_t>(tlp.length / tag_rate);
    c.bulk_min_ps = min_ps;
  } else {
    c.type = TlpType::CplD;
    c.length = tlp.length;
    if (tlp.length > link_.rcb) {
      item.kind = TxItem::Kind::CompletionRun;
      item.cpls = CompletionSegmenter(tlp.address, tlp.length, link_.rcb, link_.mps, link_.merge_completions);
      item.run_start = tlp.address;
    }
  }
  schedule(sc_core::sc_time_stamp().value() + ans.latency_ps + link_.completer_latency_ps, std::move(item));
}

void PciePort::schedule(std::uint64_t at_ps, TxItem item) {
  // The transmitter holds it until its data is ready.
  item.ready_ps = at_ps;
  tx_.send(std::move(item));
}

}  // namespace sohusim::pcie
