#pragma once
// Host-to-host clock pings: NTP's four-timestamp exchange over the host network, each stamp
// read on the clock of the host that takes it (DeviceAccess::host_clock_ns), the messages
// crossing the modelled network with its bandwidth and latency.
//
//   initiator (ping_host)                         responder (answer_ping)
//   t1 = own clock; send request (48 B)   --->    receive; t2 = own clock
//                                                 t3 = own clock; send reply (t1, t2, t3)
//   receive reply; t4 = own clock         <---
//
// profiler::ClockSync::add_ping(t1, t2, t3, t4) turns the result into an alignment point
// of the responder's clock against the initiator's. The exchanges use the network tags
// kPingRequestTag and kPingReplyTag (reserved: other traffic must not use them); pings
// between one pair of hosts must be answered in order, one answer_ping per ping_host.
#include <cstdint>

#include "sohusim/driver/device_access.hpp"

namespace sohusim::platform {

class HostNetwork;

/// One ping's timestamps: t1 and t4 on the initiator's clock, t2 and t3 on the responder's.
struct PingStamps {
  std::uint64_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
};

constexpr std::uint32_t kPingRequestTag = 0xC10C'5E01u;
constexpr std::uint32_t kPingReplyTag = 0xC10C'5E02u;
constexpr std::uint64_t kPingBytes = 48;  // an NTP packet

/// Host `self` pings host `peer` (which must call answer_ping(..., peer, self)); blocks the
/// calling host thread for the round trip. `clock` is `self`'s DeviceAccess.
PingStamps ping_host(HostNetwork& net, driver::DeviceAccess& clock, unsigned self, unsigned peer);
/// Host `self` answers one ping from host `peer`: blocks until the request arrives.
void answer_ping(HostNetwork& net, driver::DeviceAccess& clock, unsigned self, unsigned peer);

}  // namespace sohusim::platform
