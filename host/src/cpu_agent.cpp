#include "sohusim/host/cpu_agent.hpp"

#include <stdexcept>
#include <string>

namespace sohusim::host {

CpuAgent::CpuAgent(sc_core::sc_module_name name, std::uint64_t ecam_base, std::uint64_t memory_access_ps)
    : sc_core::sc_module(name),
      mmio("mmio"),
      memory("memory"),
      ecam_base_(ecam_base),
      memory_access_ps_(memory_access_ps) {}

tlm::tlm_response_status CpuAgent::mmio_access(bool write, std::uint64_t addr, void* data, unsigned len) {
  tlm::tlm_generic_payload gp;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(addr);
  gp.set_data_ptr(static_cast<unsigned char*>(data));
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  mmio->b_transport(gp, delay);
  if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
  return gp.get_response_status();
}

std::uint32_t CpuAgent::read32(std::uint64_t addr, tlm::tlm_response_status* status) {
  std::uint32_t v = 0;
  const auto st = mmio_access(false, addr, &v, 4);
  if (status != nullptr) *status = st;
  return v;
}

std::uint64_t CpuAgent::read64(std::uint64_t addr, tlm::tlm_response_status* status) {
  std::uint64_t v = 0;
  const auto st = mmio_access(false, addr, &v, 8);
  if (status != nullptr) *status = st;
  return v;
}

void CpuAgent::write32(std::uint64_t addr, std::uint32_t v, tlm::tlm_response_status* status) {
  const auto st = mmio_access(true, addr, &v, 4);
  if (status != nullptr) *status = st;
}

void CpuAgent::write64(std::uint64_t addr, std::uint64_t v, tlm::tlm_response_status* status) {
  const auto st = mmio_access(true, addr, &v, 8);
  if (status != nullptr) *status = st;
}

std::uint32_t CpuAgent::cfg_read(std::uint16_t rid, unsigned reg) {
  return read32(ecam_base_ + (static_cast<std::uint64_t>(rid) << 12) + reg);
}

void CpuAgent::cfg_write(std::uint16_t rid, unsigned reg, std::uint32_t v) {
  write32(ecam_base_ + (static_cast<std::uint64_t>(rid) << 12) + reg, v);
}

namespace {
void debug_access(tlm_utils::simple_initiator_socket<CpuAgent>& s, bool write, std::uint64_t addr, void* data,
                  std::uint64_t bytes) {
  tlm::tlm_generic_payload gp;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(addr);
  gp.set_data_ptr(static_cast<unsigned char*>(data));
  gp.set_data_length(static_cast<unsigned>(bytes));
  gp.set_streaming_width(static_cast<unsigned>(bytes));
  const unsigned n = s->transport_dbg(gp);
  if (n != bytes) {
    throw std::runtime_error("host memory access at " + std::to_string(addr) + " (" + std::to_string(bytes) +
                             " bytes) is outside host DRAM or DRAM holds no data");
  }
}
}  // namespace

void CpuAgent::mem_write(std::uint64_t addr, const void* data, std::uint64_t bytes) {
  debug_access(memory, true, addr, const_cast<void*>(data), bytes);
  if (memory_access_ps_ > 0) sc_core::wait(sc_core::sc_time::from_value(memory_access_ps_));
}

void CpuAgent::mem_read(std::uint64_t addr, void* data, std::uint64_t bytes) {
  debug_access(memory, false, addr, data, bytes);
  if (memory_access_ps_ > 0) sc_core::wait(sc_core::sc_time::from_value(memory_access_ps_));
}

}  // namespace sohusim::host
