#include "sohusim/pcie/link_params.hpp"

#include <cmath>
#include <stdexcept>

namespace sohusim::pcie {
namespace {

// Ack limits (PCIe Base Spec 5.0 tables 3-7, 3-8, 3-9) by generation family (Gen1, Gen2,
// Gen3 and later), width (x1, x2, x4, x8, x16) and MPS (128 .. 4096), in bytes of link
// time, as the pcie-bench model tabulates them. For widths x1-x16 the spec's UpdateFC
// guide (tables 2-46, 2-47, 2-48) has the same values.
constexpr std::uint32_t kAckTable[3][5][6] = {
    {{237, 416, 559, 1071, 2095, 4143},
     {128, 217, 289, 545, 1057, 2081},
     {73, 118, 154, 282, 538, 1050},
     {67, 107, 86, 150, 278, 534},
     {48, 72, 86, 150, 278, 534}},
    {{288, 467, 610, 1122, 2146, 4194},
     {179, 268, 340, 596, 1108, 2132},
     {124, 169, 205, 333, 589, 1101},
     {118, 158, 137, 201, 329, 585},
     {99, 123, 137, 201, 329, 585}},
    {{333, 512, 655, 1167, 2191, 4239},
     {224, 313, 385, 641, 1153, 2177},
     {169, 214, 250, 378, 634, 1146},
     {163, 203, 182, 246, 374, 630},
     {144, 168, 182, 246, 374, 630}},
};

constexpr double kDllpBytes = 8.0;
constexpr double kSkpBytes = 4.0;
constexpr double kSkpInterval = 1538.0;
constexpr std::uint32_t kTlpFraming = 8;  // STP/sequence number + LCRC (pcie-bench's DLLP_Hdr)

bool power_of_two_in(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

unsigned log2u(std::uint32_t v) {
  unsigned n = 0;
  while (v > 1) {
    v >>= 1;
    ++n;
  }
  return n;
}

unsigned width_index(unsigned lanes) {
  switch (lanes) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 4:
      return 2;
    case 8:
      return 3;
    default:
      return 4;
  }
}

std::uint64_t ps(double seconds) {
  return static_cast<std::uint64_t>(std::llround(seconds * 1e12));
}

}  // namespace

std::string to_string(DllpPlacement p) {
  switch (p) {
    case DllpPlacement::Data:
      return "data";
    case DllpPlacement::Reverse:
      return "reverse";
    case DllpPlacement::None:
      return "none";
  }
  return "data";
}

LinkParams LinkParams::from_config(const config::Config& c, const std::string& prefix) {
  auto key = [&](const char* name) { return prefix + "." + name; };
  LinkParams p;
  p.generation = static_cast<unsigned>(c.get_uint(key("generation")));
  p.lanes = static_cast<unsigned>(c.get_uint(key("lanes")));
  p.mps = static_cast<std::uint32_t>(c.get_quantity(key("mps")));
  p.mrrs = static_cast<std::uint32_t>(c.get_quantity(key("mrrs")));
  p.rcb = static_cast<std::uint32_t>(c.get_quantity(key("rcb")));
  p.merge_completions = c.get_bool(key("merge_completions"));
  p.header_4dw = c.get_string(key("header")) == "4dw";
  p.ecrc = c.get_bool(key("ecrc"));
  p.tag_bits = static_cast<unsigned>(c.get_uint(key("tag_bits")));
  p.credits.posted_header = static_cast<std::uint32_t>(c.get_uint(key("credits.posted_header")));
  p.credits.posted_data = static_cast<std::uint32_t>(c.get_uint(key("credits.posted_data")));
  p.credits.nonposted_header = static_cast<std::uint32_t>(c.get_uint(key("credits.nonposted_header")));
  p.credits.nonposted_data = static_cast<std::uint32_t>(c.get_uint(key("credits.nonposted_data")));
  p.credits.completion_header = static_cast<std::uint32_t>(c.get_uint(key("credits.completion_header")));
  p.credits.completion_data = static_cast<std::uint32_t>(c.get_uint(key("credits.completion_data")));
  const std::string& placement = c.get_string(key("dllp_placement"));
  p.dllp_placement = placement == "reverse" ? DllpPlacement::Reverse
                     : placement == "none"  ? DllpPlacement::None
                                            : DllpPlacement::Data;
  p.propagation_ps = ps(c.get_quantity(key("propagation")));
  p.update_fc_ps = ps(c.get_quantity(key("update_fc_latency")));
  p.ack_latency_ps = ps(c.get_quantity(key("ack_latency")));
  p.completer_latency_ps = ps(c.get_quantity(key("completer_latency")));
  p.completion_timeout_ps = ps(c.get_quantity(key("completion_timeout")));
  p.ber = c.get_double(key("ber"));
  p.seed = c.get_uint(key("seed"));
  p.aspm_l0s = c.get_bool(key("aspm_l0s"));
  p.aspm_l1 = c.get_bool(key("aspm_l1"));
  p.l0s_idle_ps = ps(c.get_quantity(key("l0s_idle")));
  p.l0s_exit_ps = ps(c.get_quantity(key("l0s_exit")));
  p.l1_idle_ps = ps(c.get_quantity(key("l1_idle")));
  p.l1_exit_ps = ps(c.get_quantity(key("l1_exit")));
  p.training_ps = ps(c.get_quantity(key("training")));
  p.init_fc_ps = ps(c.get_quantity(key("init_fc_latency")));
  return p;
}

void LinkParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("PCIe link: " + what); };
  if (generation < 1 || generation > 6) {
    fail("generation " + std::to_string(generation) + " does not exist (allowed: 1, 2, 3, 4, 5, 6)");
  }
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) {
    fail("width x" + std::to_string(lanes) + " is not supported (allowed: x1, x2, x4, x8, x16)");
  }
  if (!power_of_two_in(mps, 128, 4096)) {
    fail("MPS " + std::to_string(mps) + " B is not a spec value (allowed: 128, 256, 512, 1024, 2048, 4096)");
  }
  if (!power_of_two_in(mrrs, 128, 4096)) {
    fail("MRRS " + std::to_string(mrrs) + " B is not a spec value (allowed: 128, 256, 512, 1024, 2048, 4096)");
  }
  if (rcb != 64 && rcb != 128) fail("RCB " + std::to_string(rcb) + " B is not a spec value (allowed: 64, 128)");
  if (tag_bits != 5 && tag_bits != 8 && tag_bits != 10) {
    fail("tag field of " + std::to_string(tag_bits) + " bits does not exist (allowed: 5, 8, 10)");
  }
  if (!(ber >= 0.0 && ber < 1e-3)) fail("bit error rate must be in [0, 1e-3)");
  auto data_vs_mps = [&](std::uint32_t data, const char* name) {
    if (data != 0 && data * 16ull < mps) {
      fail(std::string("credits.") + name + " (" + std::to_string(data) + " x 16 B) cannot hold one MPS-sized TLP (" +
           std::to_string(mps) + " B)");
    }
  };
  data_vs_mps(credits.posted_data, "posted_data");
  data_vs_mps(credits.completion_data, "completion_data");
  if (completion_timeout_ps == 0) fail("completion_timeout must be non-zero");
}

double LinkParams::transfers_per_s() const {
  static constexpr double kGts[] = {0, 2.5, 5, 8, 16, 32, 64};
  return kGts[generation] * 1e9;
}

double LinkParams::encoding_efficiency() const {
  if (generation <= 2) return 0.8;
  if (generation <= 5) return 128.0 / 130.0;
  return 1.0;
}

double LinkParams::raw_bytes_per_s() const {
  return transfers_per_s() * lanes * encoding_efficiency() / 8.0;
}

double LinkParams::tlp_lane_bytes_per_s() const {
  return flit_mode() ? raw_bytes_per_s() * 236.0 / 256.0 : raw_bytes_per_s();
}

std::uint32_t LinkParams::ack_interval() const {
  const unsigned family = generation <= 1 ? 0 : generation == 2 ? 1 : 2;
  const unsigned mps_index = log2u(mps) - 7;
  return kAckTable[family][width_index(lanes)][mps_index > 5 ? 5 : mps_index];
}

std::uint32_t LinkParams::fc_interval() const {
  return ack_interval();
}

double LinkParams::dllp_overhead_fraction() const {
  if (flit_mode() || dllp_placement == DllpPlacement::None) return 0.0;
  return kDllpBytes / ack_interval() + kDllpBytes / fc_interval() + kSkpBytes / kSkpInterval;
}

std::uint32_t LinkParams::tlp_wire_bytes(bool four_dw, std::uint32_t payload) const {
  const std::uint32_t framing = flit_mode() ? 0 : kTlpFraming;
  return framing + header_bytes(four_dw) + payload + (ecrc ? 4u : 0u);
}

std::uint32_t LinkParams::max_tags() const {
  return tag_bits == 5 ? 32 : tag_bits == 8 ? 256 : 768;
}

double LinkParams::posted_write_throughput() const {
  const double tlp_share = dllp_placement == DllpPlacement::Data                  ? 1.0 - dllp_overhead_fraction()
                           : flit_mode() || dllp_placement == DllpPlacement::None ? 1.0
                                                                                  : 1.0 - kSkpBytes / kSkpInterval;
  return tlp_lane_bytes_per_s() * tlp_share * mps / tlp_wire_bytes(header_4dw, mps);
}

double LinkParams::read_completion_throughput() const {
  const double tlp_share = dllp_placement == DllpPlacement::Data                  ? 1.0 - dllp_overhead_fraction()
                           : flit_mode() || dllp_placement == DllpPlacement::None ? 1.0
                                                                                  : 1.0 - kSkpBytes / kSkpInterval;
  // One MRRS read request comes back as completions of `piece` bytes (address-aligned
  // request: every piece is whole).
  const std::uint32_t piece = merge_completions ? (mps < mrrs ? mps : mrrs) : rcb;
  const std::uint32_t pieces = (mrrs + piece - 1) / piece;
  const double wire = static_cast<double>(mrrs) + pieces * tlp_wire_bytes(false, 0);
  return tlp_lane_bytes_per_s() * tlp_share * mrrs / wire;
}

}  // namespace sohusim::pcie
