#include "sohusim/sim/memory_manager.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace sohusim::sim {

struct MemoryManager::PooledPayload final : tlm::tlm_generic_payload {
  PooledPayload(tlm::tlm_mm_interface* mm, const MemoryManager* pool) : tlm::tlm_generic_payload(mm), owner(pool) {}

  std::vector<unsigned char> buffer;
  const MemoryManager* owner;  // to recognise our own payloads in free()
  bool pooled = false;         // on the free list: a second return is a double release
};

namespace {

// Takes over payloads that are still referenced when their manager is destroyed: each is
// deleted at its final release(), and the last one takes this object with it.
class OrphanedPayloads final : public tlm::tlm_mm_interface {
 public:
  explicit OrphanedPayloads(std::size_t count) : remaining_(count) {}

  void free(tlm::tlm_generic_payload* gp) override {
    delete gp;  // virtual destructor: frees the buffer and every extension
    if (--remaining_ == 0) {
      delete this;
    }
  }

 private:
  std::size_t remaining_;
};

void reset_attributes(tlm::tlm_generic_payload& gp) {
  gp.set_command(tlm::TLM_IGNORE_COMMAND);
  gp.set_address(0);
  gp.set_data_ptr(nullptr);
  gp.set_data_length(0);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_byte_enable_length(0);
  gp.set_streaming_width(0);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  gp.set_gp_option(tlm::TLM_MIN_PAYLOAD);
}

}  // namespace

MemoryManager::~MemoryManager() {
  std::size_t outstanding = 0;
  for (const PooledPayload* p : all_) {
    outstanding += p->pooled ? 0 : 1;
  }
  OrphanedPayloads* orphanage = outstanding > 0 ? new OrphanedPayloads(outstanding) : nullptr;
  for (PooledPayload* p : all_) {
    if (p->pooled) {
      delete p;
    } else {
      p->set_mm(orphanage);
    }
  }
}

tlm::tlm_generic_payload& MemoryManager::acquire() {
  PooledPayload* p = nullptr;
  if (free_list_.empty()) {
    all_.reserve(all_.size() + 1);  // so that the push_back below cannot throw and leak
    p = new PooledPayload(this, this);
    all_.push_back(p);
    free_list_.reserve(all_.size());  // so that free() never reallocates (and never throws)
  } else {
    p = free_list_.back();
    free_list_.pop_back();
  }
  p->pooled = false;
  reset_attributes(*p);
  // Payloads may be created before every extension type has registered its index (the
  // registration is a static initialiser); sizing here makes every extension usable.
  p->resize_extensions();
  p->acquire();
  ++acquisitions_;
  return *p;
}

tlm::tlm_generic_payload& MemoryManager::acquire(std::size_t data_bytes) {
  if (data_bytes > std::numeric_limits<unsigned int>::max()) {
    throw std::length_error("sohusim::sim::MemoryManager::acquire: " + std::to_string(data_bytes) +
                            " bytes exceed the 32-bit data length of a TLM payload");
  }
  tlm::tlm_generic_payload& gp = acquire();
  auto& p = static_cast<PooledPayload&>(gp);
  p.buffer.assign(data_bytes, 0);
  p.set_data_ptr(data_bytes == 0 ? nullptr : p.buffer.data());
  p.set_data_length(static_cast<unsigned int>(data_bytes));
  p.set_streaming_width(static_cast<unsigned int>(data_bytes));
  return gp;
}

void MemoryManager::free(tlm::tlm_generic_payload* gp) {
  auto* p = dynamic_cast<PooledPayload*>(gp);
  if (p == nullptr || p->owner != this) {
    throw std::invalid_argument("sohusim::sim::MemoryManager::free: payload was not handed out by this manager");
  }
  if (p->pooled) {
    throw std::logic_error(
        "sohusim::sim::MemoryManager::free: payload returned twice (released after its "
        "reference count already reached 0)");
  }
  p->reset();                // the TLM-defined cleanup: auto extensions
  p->free_all_extensions();  // and sticky ones, so that reuse cannot leak stale state
  p->pooled = true;
  free_list_.push_back(p);
  ++returns_;
}

std::size_t MemoryManager::buffer_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const PooledPayload* p : all_) {
    bytes += p->buffer.capacity();
  }
  return bytes;
}

}  // namespace sohusim::sim
