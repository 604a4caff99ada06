#include "sohusim/platform/profiling/clock_ping.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "sohusim/platform/host_network.hpp"

namespace sohusim::platform {

PingStamps ping_host(HostNetwork& net, driver::DeviceAccess& clock, unsigned self, unsigned peer) {
  PingStamps p;
  p.t1 = clock.host_clock_ns();
  net.send(self, peer, kPingBytes, kPingRequestTag, {p.t1});
  const std::vector<std::uint64_t> reply = net.recv(self, peer, kPingBytes, kPingReplyTag);
  p.t4 = clock.host_clock_ns();
  if (reply.size() != 3 || reply[0] != p.t1) {
    throw std::invalid_argument(
        "clock ping: host " + std::to_string(self) + " got a reply from host " + std::to_string(peer) +
        " that does not answer its request (pings between two hosts must be answered in order)");
  }
  p.t2 = reply[1];
  p.t3 = reply[2];
  return p;
}

void answer_ping(HostNetwork& net, driver::DeviceAccess& clock, unsigned self, unsigned peer) {
  const std::vector<std::uint64_t> request = net.recv(self, peer, kPingBytes, kPingRequestTag);
  const std::uint64_t t2 = clock.host_clock_ns();
  if (request.size() != 1) {
    throw std::invalid_argument("clock ping: host " + std::to_string(self) + " got a request from host " +
                                std::to_string(peer) + " without its timestamp");
  }
  const std::uint64_t t3 = clock.host_clock_ns();
  net.send(self, peer, kPingBytes, kPingReplyTag, {request[0], t2, t3});
}

}  // namespace sohusim::platform
