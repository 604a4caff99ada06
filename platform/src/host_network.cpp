#include "sohusim/platform/host_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace sohusim::platform {

namespace {
std::uint64_t now_ps() {
  return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value());
}
// sc_time's resolution is 1 ps (sim::ensure_time_resolution), so value() is picoseconds.
void wait_ps(std::uint64_t ps) {
  if (ps > 0) sc_core::wait(sc_core::sc_time::from_value(ps));
}
}  // namespace

HostNetwork::HostNetwork(unsigned hosts, double bytes_per_s, double latency_s, counters::Registry& registry)
    : hosts_(hosts),
      bytes_per_s_(bytes_per_s),
      latency_ps_(static_cast<std::uint64_t>(std::llround(latency_s * 1e12))),
      registry_(registry) {
  if (!(bytes_per_s > 0)) throw std::invalid_argument("network.bandwidth must be > 0");
}

void HostNetwork::check(unsigned host, const char* role) const {
  if (host >= hosts_) {
    throw std::invalid_argument(std::string("host network: ") + role + " host " + std::to_string(host) +
                                " does not exist (the system has " + std::to_string(hosts_) + ")");
  }
}

HostNetwork::Channel& HostNetwork::channel(unsigned from, unsigned to) {
  auto it = channels_.find({from, to});
  if (it != channels_.end()) return it->second;
  Channel& c = channels_[{from, to}];
  counters::Scope s(registry_, "net.h" + std::to_string(from) + "_h" + std::to_string(to));
  c.bytes = &s.counter("bytes", "B", "bytes sent from the first host to the second");
  c.messages = &s.counter("messages", "count", "messages sent");
  c.busy_ns = &s.counter("busy_ns", "ns", "time the sender's NIC was transmitting");
  return c;
}

void HostNetwork::send(unsigned from, unsigned to, std::uint64_t bytes, std::uint32_t tag) {
  send(from, to, bytes, tag, {});
}

void HostNetwork::send(unsigned from, unsigned to, std::uint64_t bytes, std::uint32_t tag,
                       std::vector<std::uint64_t> words) {
  check(from, "sending");
  check(to, "receiving");
  if (from == to) throw std::invalid_argument("host network: host " + std::to_string(from) + " sends to itself");
  Channel& c = channel(from, to);
  const std::uint64_t start = std::max(now_ps(), c.free_ps);
  const auto dur = static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) / bytes_per_s_ * 1e12));
  c.free_ps = start + dur;
  c.bytes->inc(bytes);
  c.messages->inc();
  c.busy_ns->inc(dur / 1000);
  mailbox_[{from, to, tag}].push_back(Message{bytes, c.free_ps + latency_ps_, std::move(words)});
  arrived_.notify(sc_core::SC_ZERO_TIME);
  wait_ps(c.free_ps - now_ps());
}

std::vector<std::uint64_t> HostNetwork::recv(unsigned to, unsigned from, std::uint64_t bytes, std::uint32_t tag) {
  check(from, "sending");
  check(to, "receiving");
  const auto key = std::make_tuple(from, to, tag);
  for (;;) {
    auto it = mailbox_.find(key);
    if (it != mailbox_.end() && !it->second.empty()) {
      Message m = std::move(it->second.front());
      it->second.erase(it->second.begin());
      if (m.bytes != bytes) {
        throw std::invalid_argument("host network: host " + std::to_string(to) + " expected " + std::to_string(bytes) +
                                    " bytes from host " + std::to_string(from) + " (tag " + std::to_string(tag) +
                                    ") and got " + std::to_string(m.bytes));
      }
      if (m.arrive_ps > now_ps()) wait_ps(m.arrive_ps - now_ps());
      return std::move(m.words);
    }
    sc_core::wait(arrived_);
  }
}

}  // namespace sohusim::platform
