#pragma once
// HostNetwork: the network between the hosts of a system (NIC to NIC, e.g. 400 Gb/s
// Ethernet/InfiniBand), at transfer level: each ordered host pair has a serial channel with
// the system's bandwidth and latency; a message occupies its sender's channel for
// bytes / bandwidth and arrives `latency` after it left. recv() blocks the calling host
// thread until the matching message (same sender, tag) has arrived; messages that arrive
// first wait in a mailbox. Used for pipeline parallelism (activations between stages) and
// for the clock-sync pings between hosts (clock_ping.hpp), whose messages carry their
// timestamps as a payload of 64-bit words.
//
// Stats: net.h<a>_h<b>.bytes / messages / busy_ns.
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <systemc>

#include "sohusim/counters/registry.hpp"

namespace sohusim::platform {

class HostNetwork {
 public:
  HostNetwork(unsigned hosts, double bytes_per_s, double latency_s, counters::Registry& registry);

  /// Host `from` sends `bytes` to host `to` (blocks the sender for the time its NIC is busy).
  void send(unsigned from, unsigned to, std::uint64_t bytes, std::uint32_t tag);
  /// The same with a payload: `words` arrive with the message (its size on the wire stays
  /// `bytes`).
  void send(unsigned from, unsigned to, std::uint64_t bytes, std::uint32_t tag, std::vector<std::uint64_t> words);
  /// Host `to` waits for the message from `from` with `tag`; throws std::invalid_argument if
  /// its size differs from `bytes`. Returns its payload (empty if it was sent without one).
  std::vector<std::uint64_t> recv(unsigned to, unsigned from, std::uint64_t bytes, std::uint32_t tag);

 private:
  struct Channel {
    std::uint64_t free_ps = 0;
    counters::Counter* bytes = nullptr;
    counters::Counter* messages = nullptr;
    counters::Counter* busy_ns = nullptr;
  };
  struct Message {
    std::uint64_t bytes = 0;
    std::uint64_t arrive_ps = 0;
    std::vector<std::uint64_t> words;
  };
  Channel& channel(unsigned from, unsigned to);
  void check(unsigned host, const char* role) const;

  unsigned hosts_;
  double bytes_per_s_;
  std::uint64_t latency_ps_;
  counters::Registry& registry_;
  std::map<std::pair<unsigned, unsigned>, Channel> channels_;
  std::map<std::tuple<unsigned, unsigned, std::uint32_t>, std::vector<Message>> mailbox_;
  sc_core::sc_event arrived_;
};

}  // namespace sohusim::platform
