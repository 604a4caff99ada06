#include "sohusim/sim/sparse_memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace sohusim::sim {
namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

bool is_power_of_two(std::size_t v) noexcept {
  return v != 0 && (v & (v - 1)) == 0;
}

}  // namespace

// ---- SparseStore ----------------------------------------------------------------------

SparseStore::SparseStore(std::uint64_t size, std::size_t page_size, std::uint8_t fill)
    : size_(size), page_size_(page_size), page_mask_(0), page_shift_(0), fill_(fill) {
  if (!is_power_of_two(page_size) || page_size > (std::size_t{1} << 30)) {
    throw std::invalid_argument("SparseStore: page size " + std::to_string(page_size) +
                                " is not a power of two between 1 B and 1 GiB");
  }
  page_mask_ = page_size - 1;
  while ((std::size_t{1} << page_shift_) != page_size) {
    ++page_shift_;
  }
}

void SparseStore::check_range(const char* op, std::uint64_t addr, std::size_t len) const {
  if (addr > size_ || len > size_ - addr) {
    throw std::out_of_range(std::string("SparseStore: ") + op + " of " + std::to_string(len) + " bytes at " +
                            hex(addr) + " is outside the store of size " + hex(size_) + " (" + std::to_string(size_) +
                            " bytes)");
  }
}

unsigned char* SparseStore::allocate_page(std::uint64_t index) {
  std::unique_ptr<unsigned char[]> page(new unsigned char[page_size_]);
  std::memset(page.get(), fill_, page_size_);
  return pages_.emplace(index, std::move(page)).first->second.get();
}

void SparseStore::read(std::uint64_t addr, void* dst, std::size_t len) const {
  check_range("read", addr, len);
  auto* out = static_cast<unsigned char*>(dst);
  while (len > 0) {
    const std::size_t offset = static_cast<std::size_t>(addr & page_mask_);
    const std::size_t chunk = std::min(len, page_size_ - offset);
    const auto it = pages_.find(addr >> page_shift_);
    if (it == pages_.end()) {
      std::memset(out, fill_, chunk);
    } else {
      std::memcpy(out, it->second.get() + offset, chunk);
    }
    out += chunk;
    addr += chunk;
    len -= chunk;
  }
}

void SparseStore::write(std::uint64_t addr, const void* src, std::size_t len) {
  check_range("write", addr, len);
  const auto* in = static_cast<const unsigned char*>(src);
  while (len > 0) {
    const std::size_t offset = static_cast<std::size_t>(addr & page_mask_);
    const std::size_t chunk = std::min(len, page_size_ - offset);
    const std::uint64_t index = addr >> page_shift_;
    unsigned char* page = nullptr;
    if (const auto it = pages_.find(index); it != pages_.end()) {
      page = it->second.get();
    } else if (std::any_of(in, in + chunk, [this](unsigned char b) { return b != fill_; })) {
      page = allocate_page(index);
    }
    if (page != nullptr) {
      std::memcpy(page + offset, in, chunk);
    }
    in += chunk;
    addr += chunk;
    len -= chunk;
  }
}

unsigned char* SparseStore::page_data(std::uint64_t addr) {
  if (addr >= size_) {
    check_range("page access", addr, 1);
  }
  const std::uint64_t index = addr >> page_shift_;
  const auto it = pages_.find(index);
  unsigned char* page = it == pages_.end() ? allocate_page(index) : it->second.get();
  return page + (addr & page_mask_);
}

bool SparseStore::is_allocated(std::uint64_t addr) const noexcept {
  return pages_.count(addr >> page_shift_) != 0;
}

// ---- SparseMemory ---------------------------------------------------------------------

namespace {

const SparseMemory::Params& validated(const SparseMemory::Params& p, const char* name) {
  ensure_time_resolution();
  if (p.size == 0) {
    throw std::invalid_argument(std::string("SparseMemory '") + name + "': size must not be 0");
  }
  if (!std::isfinite(p.bytes_per_second) || p.bytes_per_second < 0.0) {
    throw std::invalid_argument(std::string("SparseMemory '") + name +
                                "': bytes_per_second must be finite and >= 0 (0: unlimited)");
  }
  return p;
}

}  // namespace

SparseMemory::SparseMemory(sc_core::sc_module_name name, const Params& params)
    : sc_core::sc_module(name),
      socket("socket"),
      params_(validated(params, this->name())),
      store_(params.size, params.page_size, params.fill) {
  socket.register_b_transport(this, &SparseMemory::b_transport);
  socket.register_transport_dbg(this, &SparseMemory::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &SparseMemory::get_direct_mem_ptr);
}

sc_core::sc_time SparseMemory::transfer_time(std::uint64_t bytes) const {
  if (params_.bytes_per_second == 0.0 || bytes == 0) {
    return sc_core::SC_ZERO_TIME;
  }
  // Rounded up: a transfer never takes less than its bandwidth allows.
  const double ps = std::ceil(static_cast<double>(bytes) * 1e12 / params_.bytes_per_second);
  if (!(ps < 1.8e19)) {
    throw std::overflow_error("SparseMemory '" + std::string(name()) + "': transfer of " + std::to_string(bytes) +
                              " bytes exceeds the time range");
  }
  return from_ps(static_cast<std::uint64_t>(ps));
}

bool SparseMemory::in_range(std::uint64_t addr, std::uint64_t len) const noexcept {
  return addr < params_.size && len <= params_.size - addr;
}

void SparseMemory::move_data(tlm::tlm_generic_payload& gp) {
  const std::uint64_t addr = gp.get_address();
  const unsigned int len = gp.get_data_length();
  const unsigned int width = gp.get_streaming_width();
  const unsigned int extent = (width != 0 && width < len) ? width : len;
  unsigned char* data = gp.get_data_ptr();
  const unsigned char* enables = gp.get_byte_enable_ptr();
  const unsigned int enables_len = gp.get_byte_enable_length();
  const bool is_read = gp.is_read();

  if (enables == nullptr && extent == len) {
    if (is_read) {
      store_.read(addr, data, len);
    } else {
      store_.write(addr, data, len);
    }
    return;
  }
  // Byte enables or a streaming burst: byte by byte, which is rare enough not to matter.
  for (unsigned int i = 0; i < len; ++i) {
    if (enables != nullptr && enables[i % enables_len] == TLM_BYTE_DISABLED) {
      continue;
    }
    const std::uint64_t at = addr + (i % extent);
    if (is_read) {
      store_.read(at, data + i, 1);
    } else {
      store_.write(at, data + i, 1);
    }
  }
}

void SparseMemory::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const unsigned int len = gp.get_data_length();
  const unsigned int width = gp.get_streaming_width();
  const unsigned int extent = (width != 0 && width < len) ? width : len;
  if (!in_range(gp.get_address(), extent)) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++address_errors_;
    return;
  }
  if (gp.is_read() || gp.is_write()) {
    if (gp.get_byte_enable_ptr() != nullptr && gp.get_byte_enable_length() == 0) {
      gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
      ++other_errors_;
      return;
    }
    if (params_.functional && len > 0 && gp.get_data_ptr() == nullptr) {
      gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      ++other_errors_;
      return;
    }
    if (params_.functional) {
      move_data(gp);
    }
    if (gp.is_read()) {
      ++reads_;
      bytes_read_ += len;
    } else {
      ++writes_;
      bytes_written_ += len;
    }

    if (params_.bytes_per_second == 0.0) {
      delay += params_.latency;  // no port to queue for
    } else {
      const std::uint64_t now_ps = to_ps(sc_core::sc_time_stamp());
      const std::uint64_t arrival_ps = now_ps + to_ps(delay);
      const std::uint64_t start_ps = std::max(arrival_ps, busy_until_ps_);
      busy_until_ps_ = start_ps + to_ps(transfer_time(len));
      delay = from_ps(busy_until_ps_ + to_ps(params_.latency) - now_ps);
    }
  }
  gp.set_dmi_allowed(params_.functional && params_.allow_dmi);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int SparseMemory::transport_dbg(tlm::tlm_generic_payload& gp) {
  const std::uint64_t addr = gp.get_address();
  if (!params_.functional || addr >= params_.size || gp.get_data_ptr() == nullptr || !(gp.is_read() || gp.is_write())) {
    return 0;
  }
  // Debug accesses are clipped at the end of the memory rather than refused: a debugger
  // reading a window that straddles the end still gets the bytes that exist.
  const auto n = static_cast<unsigned int>(std::min<std::uint64_t>(gp.get_data_length(), params_.size - addr));
  if (gp.is_read()) {
    store_.read(addr, gp.get_data_ptr(), n);
  } else {
    store_.write(addr, gp.get_data_ptr(), n);
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  return n;
}

bool SparseMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = gp.get_address();
  dmi.allow_none();
  if (!params_.functional || !params_.allow_dmi) {
    // Refused for the whole memory, so the initiator does not ask again for every page.
    dmi.set_start_address(0);
    dmi.set_end_address(std::numeric_limits<std::uint64_t>::max());
    return false;
  }
  if (addr >= params_.size) {
    dmi.set_start_address(params_.size);
    dmi.set_end_address(std::numeric_limits<std::uint64_t>::max());
    return false;
  }
  const std::uint64_t base = store_.page_base(addr);
  const std::uint64_t end = base + std::min<std::uint64_t>(store_.page_size() - 1, params_.size - 1 - base);
  dmi.set_dmi_ptr(store_.page_data(base));
  dmi.set_start_address(base);
  dmi.set_end_address(end);
  dmi.allow_read_write();
  dmi.set_read_latency(params_.latency);
  dmi.set_write_latency(params_.latency);
  return true;
}

void SparseMemory::clear() {
  store_.clear();
  if (socket.get_base_port().size() > 0) {
    socket->invalidate_direct_mem_ptr(0, std::numeric_limits<std::uint64_t>::max());
  }
}

}  // namespace sohusim::sim
