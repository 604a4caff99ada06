#include "sohusim/device/units/energy_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace sohusim::device {
namespace {

constexpr double kPico = 1e-12;

void check(const std::string& name, double v, double max) {
  if (!(v >= 0.0) || !std::isfinite(v) || v > max)
    throw std::invalid_argument("energy model: " + name + " must be finite and in [0, " + std::to_string(max) +
                                "] (got " + std::to_string(v) + ")");
}

double pj(std::uint64_t count, double pj_each) {
  return static_cast<double>(count) * pj_each * kPico;
}

}  // namespace

void validate(const EnergyParams& p) {
  constexpr double kMaxPj = 1e6, kMaxW = 1e5;
  for (unsigned t = 0; t < kNumDataTypes; ++t)
    check(std::string("pj_per_mac[") + to_string(static_cast<DataType>(t)) + "]", p.pj_per_mac[t], kMaxPj);
  check("pj_per_sram_byte", p.pj_per_sram_byte, kMaxPj);
  check("pj_per_hbm_activate", p.pj_per_hbm_activate, kMaxPj);
  check("pj_per_hbm_byte_read", p.pj_per_hbm_byte_read, kMaxPj);
  check("pj_per_hbm_byte_written", p.pj_per_hbm_byte_written, kMaxPj);
  check("pj_per_pcie_byte", p.pj_per_pcie_byte, kMaxPj);
  check("pj_per_c2c_byte", p.pj_per_c2c_byte, kMaxPj);
  check("pj_per_vector_op", p.pj_per_vector_op, kMaxPj);
  check("static_w_matrix", p.static_w_matrix, kMaxW);
  check("static_w_vector", p.static_w_vector, kMaxW);
  check("static_w_sram", p.static_w_sram, kMaxW);
  check("static_w_hbm", p.static_w_hbm, kMaxW);
  check("static_w_pcie", p.static_w_pcie, kMaxW);
  check("static_w_c2c", p.static_w_c2c, kMaxW);
  check("static_w_other", p.static_w_other, kMaxW);
}

EnergyReport energy(const EnergyParams& p, const EnergyActivity& a, double seconds) {
  validate(p);
  if (!(seconds >= 0.0) || !std::isfinite(seconds))
    throw std::invalid_argument("energy model: seconds must be finite and >= 0 (got " + std::to_string(seconds) + ")");
  EnergyReport r;
  for (unsigned t = 0; t < kNumDataTypes; ++t) r.matrix.dynamic_j += pj(a.macs[t], p.pj_per_mac[t]);
  r.vector.dynamic_j = pj(a.vector_ops, p.pj_per_vector_op);
  r.sram.dynamic_j = pj(a.sram_bytes, p.pj_per_sram_byte);
  r.hbm.dynamic_j = pj(a.hbm_activates, p.pj_per_hbm_activate) + pj(a.hbm_bytes_read, p.pj_per_hbm_byte_read) +
                    pj(a.hbm_bytes_written, p.pj_per_hbm_byte_written);
  r.pcie.dynamic_j = pj(a.pcie_bytes, p.pj_per_pcie_byte);
  r.c2c.dynamic_j = pj(a.c2c_bytes, p.pj_per_c2c_byte);
  r.matrix.static_j = p.static_w_matrix * seconds;
  r.vector.static_j = p.static_w_vector * seconds;
  r.sram.static_j = p.static_w_sram * seconds;
  r.hbm.static_j = p.static_w_hbm * seconds;
  r.pcie.static_j = p.static_w_pcie * seconds;
  r.c2c.static_j = p.static_w_c2c * seconds;
  r.other.static_j = p.static_w_other * seconds;
  for (const EnergyComponent* c : {&r.matrix, &r.vector, &r.sram, &r.hbm, &r.pcie, &r.c2c, &r.other})
    r.total_j += c->total_j();
  r.average_w = seconds > 0.0 ? r.total_j / seconds : 0.0;
  return r;
}

}  // namespace sohusim::device
