#pragma once
// Chip-to-chip links: the device-to-device fabric of a multi-chip server (NVLink-, ICI- or
// Infinity-Fabric-class SerDes links; Sohu's is not public, so bandwidth and latency are
// parameters). One C2cChannel is one direction of one link: a serial resource with a
// bandwidth (per direction), a fixed latency (SerDes, flight, receive pipeline) and a
// per-packet overhead. Transfers in one direction are served in order; the two directions
// are independent. Transfer-level: a transfer of n bytes occupies the channel for
// wire_bytes(n) / bandwidth and arrives `latency` after it leaves.
//
// Topologies (ring, mesh, switched) are built by the platform from channels: each device
// port is connected to one peer; a switched fabric gives every device a port to every
// other. A device reaches only peers it has a port to; anything else fails with
// PEER_UNREACHABLE (no multi-hop routing in this model).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sohusim/counters/registry.hpp"

namespace sohusim::device {

struct C2cParams {
  double bytes_per_s = 100e9;  // per direction (assumption)
  std::uint64_t latency_ps = 500'000;
  std::uint64_t packet_bytes = 256;   // payload per packet
  std::uint64_t overhead_bytes = 16;  // header/CRC per packet
  void validate() const {
    if (!(bytes_per_s > 0)) throw std::invalid_argument("device.c2c.bandwidth must be > 0");
    if (packet_bytes == 0) throw std::invalid_argument("device.c2c.packet must be > 0");
  }
  std::uint64_t wire_bytes(std::uint64_t n) const { return n + (n + packet_bytes - 1) / packet_bytes * overhead_bytes; }
};

class C2cChannel {
 public:
  C2cChannel(const C2cParams& p, const counters::Scope& s)
      : p_(p),
        bytes_(s.counter("bytes", "B", "payload bytes sent")),
        wire_bytes_(s.counter("wire_bytes", "B", "bytes on the wire, packet overhead included")),
        transfers_(s.counter("transfers", "count", "transfers sent")),
        busy_ps_(s.counter("busy_ps", "ps", "time the channel was sending")) {
    p_.validate();
  }
  /// Books a transfer of `bytes` that is ready to leave at `now_ps`; returns when its last
  /// byte arrives at the far end.
  std::uint64_t send(std::uint64_t now_ps, std::uint64_t bytes) {
    const std::uint64_t start = std::max(now_ps, free_ps_);
    const std::uint64_t wire = p_.wire_bytes(bytes);
    const auto dur = static_cast<std::uint64_t>(static_cast<double>(wire) / p_.bytes_per_s * 1e12 + 0.5);
    free_ps_ = start + dur;
    bytes_.inc(bytes);
    wire_bytes_.inc(wire);
    transfers_.inc();
    busy_ps_.inc(dur);
    return free_ps_ + p_.latency_ps;
  }
  const C2cParams& params() const noexcept { return p_; }

 private:
  C2cParams p_;
  std::uint64_t free_ps_ = 0;
  counters::Counter& bytes_;
  counters::Counter& wire_bytes_;
  counters::Counter& transfers_;
  counters::Counter& busy_ps_;
};

}  // namespace sohusim::device
