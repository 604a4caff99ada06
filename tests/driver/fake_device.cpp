#include "driver/fake_device.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sohusim::driver::test {

namespace {

// A field of a register value, or of a command (64-bit fields span two dwords).
#define FAKE_GET(v, F) ((static_cast<std::uint64_t>(v) & static_cast<std::uint64_t>(F##_MASK)) >> F##_SHIFT)
#define FAKE_CMD(c, F) command_field((c), F##_DW, F##_SHIFT, static_cast<std::uint64_t>(F##_MASK))

std::uint64_t command_field(const Command& c, unsigned dw, unsigned shift, std::uint64_t mask) {
  std::uint64_t v = c.dw[dw];
  if (mask > 0xFFFFFFFFull) v |= static_cast<std::uint64_t>(c.dw[dw + 1]) << 32;
  return (v & mask) >> shift;
}

constexpr std::uint16_t kNoQueue = 0xFFFF;
constexpr std::uint32_t kMemorySpace = 1u << 1;  // config Command register
// Config space: a capability list PM -> PCIe -> MSI-X, and AER as the only extended one.
constexpr std::uint16_t kCapPm = 0x40, kCapPcie = 0x50, kCapMsix = 0x70, kExtCapAer = 0x100;
constexpr std::uint64_t kDmaBase = 0x1'0000'0000;  // the first IOVA alloc_dma hands out

std::string hex(std::uint64_t v) {
  std::array<char, 24> b{};
  std::snprintf(b.data(), b.size(), "0x%llX", static_cast<unsigned long long>(v));
  return b.data();
}

std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

std::uint32_t ring_used(std::uint32_t head, std::uint32_t tail, std::uint32_t entries) {
  return (tail + entries - head) % entries;
}

}  // namespace

FakeDevice::FakeDevice(Options options)
    : opt_(options), pending_(options.msix_vectors, 0), raised_(options.msix_vectors, 0), next_iova_(kDmaBase) {
  bars_[0] = Bar{0x10, 0xFE00'0000ull, SOHU_BAR0_SIZE, 0, false};
  bars_[1] = Bar{0x18, 0x40'0000'0000ull, pow2_at_least(std::max<std::uint64_t>(opt_.hbm_bytes, 1ull << 20)), 0, true};
  for (Bar& b : bars_) b.address = b.placed;  // where enumeration put them
}

// ---- what tests look at ---------------------------------------------------------------------

std::vector<std::uint32_t> FakeDevice::doorbells(std::uint16_t qid, bool sq) const {
  const std::uint32_t offset = sq ? SOHU_SQ_TAIL_DB(qid) : SOHU_CQ_HEAD_DB(qid);
  std::vector<std::uint32_t> out;
  for (const Write& w : writes_) {
    if (w.offset == offset) out.push_back(static_cast<std::uint32_t>(w.value & 0xFFFF));
  }
  return out;
}

const FakeDevice::Sq* FakeDevice::sq(std::uint16_t qid) const {
  const auto it = sqs_.find(qid);
  return it == sqs_.end() ? nullptr : &it->second;
}

const FakeDevice::Cq* FakeDevice::cq(std::uint16_t qid) const {
  const auto it = cqs_.find(qid);
  return it == cqs_.end() ? nullptr : &it->second;
}

FakeDevice::Cqe FakeDevice::cqe(std::uint16_t qid, unsigned index) {
  const Cq& q = cqs_.at(qid);
  std::uint32_t dw[4];
  std::memcpy(dw, dma(q.base + std::uint64_t{SOHU_CQE_SIZE} * index, SOHU_CQE_SIZE, "cqe"), sizeof dw);
  Cqe e;
  e.result = dw[SOHU_CQE_RESULT_DW] | (static_cast<std::uint64_t>(dw[SOHU_CQE_RESULT_DW + 1]) << 32);
  e.sq_head = static_cast<std::uint16_t>(FAKE_GET(dw[SOHU_CQE_SQ_HEAD_DW], SOHU_CQE_SQ_HEAD));
  e.sq_id = static_cast<std::uint16_t>(FAKE_GET(dw[SOHU_CQE_SQ_ID_DW], SOHU_CQE_SQ_ID));
  e.cid = static_cast<std::uint16_t>(FAKE_GET(dw[SOHU_CQE_CID_DW], SOHU_CQE_CID));
  e.status = static_cast<std::uint16_t>(FAKE_GET(dw[SOHU_CQE_STATUS_DW], SOHU_CQE_STATUS));
  e.phase = FAKE_GET(dw[SOHU_CQE_PHASE_DW], SOHU_CQE_PHASE) != 0;
  return e;
}

unsigned FakeDevice::interrupts_raised(unsigned vector) const {
  return vector < raised_.size() ? raised_[vector] : 0;
}

// ---- functions and config space ---------------------------------------------------------------

void FakeDevice::check_function(std::uint16_t rid, const char* call) const {
  if (rid != opt_.rid) {
    throw AccessError(std::string(call) + ": no function " + hex(rid) + " (the fake has one, " + hex(opt_.rid) + ")");
  }
}

std::vector<PciFunction> FakeDevice::functions() {
  PciFunction f;
  f.rid = f.physical_rid = opt_.rid;
  f.vendor_id = static_cast<std::uint16_t>(opt_.id & 0xFFFF);
  f.device_id = static_cast<std::uint16_t>(opt_.id >> 16);
  f.name = "fake0";
  return {f};
}

std::uint32_t FakeDevice::config_read32(std::uint16_t rid, std::uint16_t offset) {
  check_function(rid, "config_read32");
  if (offset % 4 != 0 || offset >= 4096) throw AccessError("config_read32: offset " + hex(offset) + " is not a dword");
  for (const Bar& b : bars_) {  // 64-bit memory BARs: type bits 0b100, prefetchable bit 3
    if (offset == b.reg) return static_cast<std::uint32_t>(b.address & 0xFFFFFFF0u) | 0x4u | (b.prefetchable ? 8u : 0u);
    if (offset == b.reg + 4) return static_cast<std::uint32_t>(b.address >> 32);
  }
  switch (offset) {
    case 0x00:
      return opt_.id;
    case 0x04:
      return command_ | (1u << 20);  // Status.Capabilities List
    case 0x34:
      return kCapPm;
    case kCapPm:
      return 0x01u | (kCapPcie << 8) | (3u << 16);
    case kCapPcie:
      return 0x10u | (kCapMsix << 8) | (2u << 16);
    case kCapMsix:  // Message Control: Table Size N - 1, MSI-X Enable
      return 0x11u | ((opt_.msix_vectors - 1) << 16) | (msix_enabled_ ? 1u << 31 : 0u);
    case kCapMsix + 4:
      return SOHU_PAGE_MSIX_TABLE;  // BIR 0
    case kCapMsix + 8:
      return SOHU_PAGE_MSIX_PBA;
    case kExtCapAer:
      return 0x0001u | (1u << 16);  // AER, version 1, last in the list
    default:
      return 0;
  }
}

void FakeDevice::config_write32(std::uint16_t rid, std::uint16_t offset, std::uint32_t value) {
  check_function(rid, "config_write32");
  if (offset % 4 != 0 || offset >= 4096) throw AccessError("config_write32: offset " + hex(offset) + " is not a dword");
  for (Bar& b : bars_) {  // the address bits a BAR of this size implements
    if (offset == b.reg) b.address = ((b.address & ~0xFFFFFFFFull) | (value & 0xFFFFFFF0u)) & ~(b.size - 1);
    if (offset == b.reg + 4) b.address = ((b.address & 0xFFFFFFFFull) | (std::uint64_t{value} << 32)) & ~(b.size - 1);
  }
  if (offset == 0x04) command_ = value & 0x0406u;  // Memory Space, Bus Master, INTx Disable
  if (offset == kCapMsix) msix_enabled_ = (value >> 31) != 0;
}

BarInfo FakeDevice::bar(std::uint16_t rid, unsigned index) {
  check_function(rid, "bar");
  if (index >= 6) throw AccessError("bar: index " + std::to_string(index) + " (allowed 0..5)");
  if (index != 0 && index != 2) return BarInfo{};
  const Bar& b = bars_[index / 2];
  return BarInfo{b.placed, b.size, true, b.prefetchable};
}

// ---- BAR0 -------------------------------------------------------------------------------------

std::uint32_t FakeDevice::bar0_offset(std::uint64_t address, unsigned size, const char* call) const {
  const bool decoding = (command_ & kMemorySpace) != 0;
  const Bar& r = bars_[0];
  if (decoding && address >= r.address && address - r.address < r.size) {
    const std::uint64_t offset = address - r.address;
    if (offset % size != 0) throw AccessError(std::string(call) + ": BAR0 offset " + hex(offset) + " is misaligned");
    return static_cast<std::uint32_t>(offset);
  }
  if (decoding && address >= bars_[1].address && address - bars_[1].address < bars_[1].size) {
    throw AccessError(std::string(call) + ": " + hex(address) +
                      " is in BAR2 (device memory), which the fake does not model");
  }
  throw AccessError(std::string(call) + ": " + hex(address) + " is outside every BAR of fake0 (BAR0 " + hex(r.address) +
                    " + " + hex(r.size) + (decoding ? ")" : "; memory decoding is off)"));
}

std::uint32_t FakeDevice::reg(std::uint32_t offset) const {
  const ErrLogEntry* e = errlog_.empty() ? nullptr : &errlog_.front();
  switch (offset) {
    case SOHU_ID:
      return opt_.id;
    case SOHU_VERSION:
      return opt_.version;
    case SOHU_CAP0:
      return (opt_.max_queues << SOHU_CAP0_MQP_SHIFT) | ((opt_.max_queue_entries - 1) << SOHU_CAP0_MQES_SHIFT) |
             (12u << SOHU_CAP0_DSTRD_SHIFT);  // doorbell stride 4 KiB, as the register map lays them out
    case SOHU_CAP1:
      return 4u | (2u << 8) | (4u << 16);  // 4 matrix engines, 2 vector engines, 4 DMA channels
    case SOHU_HBM_SIZE:
      return static_cast<std::uint32_t>(opt_.hbm_bytes);
    case SOHU_HBM_SIZE + 4:
      return static_cast<std::uint32_t>(opt_.hbm_bytes >> 32);
    case SOHU_SRAM_SIZE:
      return 64u << 20;
    case SOHU_CLOCK_MHZ:
      return 1500;
    case SOHU_FW_STATUS:
      return SOHU_FW_STATUS_STATE_RUNNING;
    case SOHU_STATUS:
      return (ready_ ? SOHU_STATUS_RDY_MASK : 0u) | (fatal_ ? SOHU_STATUS_CFS_MASK : 0u) |
             (shutdown_ ? SOHU_STATUS_SHST_COMPLETE << SOHU_STATUS_SHST_SHIFT : 0u);
    case SOHU_TIMESTAMP:
      return static_cast<std::uint32_t>(clock_);
    case SOHU_TIMESTAMP + 4:
      return static_cast<std::uint32_t>(clock_ >> 32);
    case SOHU_ERR_COUNT:
      return errors_logged_;
    case SOHU_ERR_CODE:
      return e != nullptr ? e->status : 0u;
    case SOHU_ERR_ADDR:
      return e != nullptr ? static_cast<std::uint32_t>(e->address) : 0u;
    case SOHU_ERR_ADDR + 4:
      return e != nullptr ? static_cast<std::uint32_t>(e->address >> 32) : 0u;
    case SOHU_ERR_INFO:
      return e != nullptr ? e->qid | (static_cast<std::uint32_t>(e->cid) << 16) : 0u;
    default:
      break;
  }
  if (offset >= SOHU_PAGE_DOORBELL) return 0;  // doorbells are write-only
  const auto it = regs_.find(offset);
  return it == regs_.end() ? 0u : it->second;
}

std::uint32_t FakeDevice::mmio_read32(std::uint64_t address) {
  return reg(bar0_offset(address, 4, "mmio_read32"));
}

std::uint64_t FakeDevice::mmio_read64(std::uint64_t address) {
  const std::uint32_t offset = bar0_offset(address, 8, "mmio_read64");
  return reg(offset) | (static_cast<std::uint64_t>(reg(offset + 4)) << 32);
}

void FakeDevice::mmio_write32(std::uint64_t address, std::uint32_t value) {
  const std::uint32_t offset = bar0_offset(address, 4, "mmio_write32");
  writes_.push_back(Write{offset, value});
  write_reg(offset, value);
}

void FakeDevice::mmio_write64(std::uint64_t address, std::uint64_t value) {
  const std::uint32_t offset = bar0_offset(address, 8, "mmio_write64");
  writes_.push_back(Write{offset, value});
  write_reg(offset, static_cast<std::uint32_t>(value));
  write_reg(offset + 4, static_cast<std::uint32_t>(value >> 32));
}

void FakeDevice::write_reg(std::uint32_t offset, std::uint32_t value) {
  if (offset >= SOHU_PAGE_DOORBELL && offset < SOHU_PAGE_DOORBELL + SOHU_PAGE_DOORBELL_SIZE) {
    doorbell(offset, value);
  } else if (offset == SOHU_CTRL) {
    write_ctrl(value);
  } else if (offset == SOHU_ERR_ACK) {
    if ((value & SOHU_ERR_ACK_ACK_MASK) != 0 && !errlog_.empty()) errlog_.pop_front();
  } else if (offset >= SOHU_PAGE_CONTROL && offset != SOHU_STATUS && offset < SOHU_PAGE_MSIX_TABLE &&
             !(offset >= SOHU_PAGE_TIME && offset < SOHU_PAGE_ERRLOG + SOHU_PAGE_ERRLOG_SIZE)) {
    regs_[offset] = value;  // read-only: IDENT, STATUS, TIME, ERRLOG; not registers: MSI-X pages and above
  }
}

void FakeDevice::write_ctrl(std::uint32_t value) {
  if ((value & SOHU_CTRL_RST_MASK) != 0) {  // soft reset: queues, error log, semaphores, registers
    disable();
    regs_.clear();
    errlog_.clear();
    errors_logged_ = 0;
    fatal_ = shutdown_ = false;
    std::fill(sem_.begin(), sem_.end(), 0u);
    return;
  }
  const bool was = enabled_, now = (value & SOHU_CTRL_EN_MASK) != 0;
  regs_[SOHU_CTRL] = value & (SOHU_CTRL_EN_MASK | SOHU_CTRL_SHN_MASK);
  if (FAKE_GET(value, SOHU_CTRL_SHN) != SOHU_CTRL_SHN_NONE) shutdown_ = true;  // nothing to flush
  if (was && !now) disable();
  if (was || !now) return;
  // CTRL.EN 0 -> 1: the admin queue pair from AQA/ASQ/ACQ, RDY options.ready_ns later.
  const std::uint32_t aqa = reg(SOHU_AQA);
  const unsigned sqs = static_cast<unsigned>(FAKE_GET(aqa, SOHU_AQA_ASQS)) + 1;
  const unsigned cqs = static_cast<unsigned>(FAKE_GET(aqa, SOHU_AQA_ACQS)) + 1;
  const std::uint64_t asq = reg(SOHU_ASQ) | (static_cast<std::uint64_t>(reg(SOHU_ASQ + 4)) << 32);
  const std::uint64_t acq = reg(SOHU_ACQ) | (static_cast<std::uint64_t>(reg(SOHU_ACQ + 4)) << 32);
  if (sqs < 2 || cqs < 2 || sqs > opt_.max_queue_entries || cqs > opt_.max_queue_entries || asq == 0 || acq == 0 ||
      asq % 4096 != 0 || acq % 4096 != 0) {
    regs_[SOHU_CTRL] &= ~SOHU_CTRL_EN_MASK;
    fatal_ = true;
    log_error(SOHU_STATUS_INVALID_FIELD, 0, 0, asq);
    return;
  }
  fatal_ = false;
  enabled_ = true;
  ready_at_ = clock_ + opt_.ready_ns;
  Cq& acq_q = cqs_[0] = Cq{};
  acq_q.base = acq;
  acq_q.entries = cqs;
  acq_q.ien = true;
  acq_q.sq_refs = 1;
  Sq& asq_q = sqs_[0] = Sq{};
  asq_q.base = asq;
  asq_q.entries = sqs;
  run_until(clock_);
}

void FakeDevice::disable() {
  // Every queue goes; commands not completed are abandoned without a completion.
  enabled_ = ready_ = false;
  sqs_.clear();
  cqs_.clear();
}

void FakeDevice::doorbell(std::uint32_t offset, std::uint32_t value) {
  const std::uint32_t rel = offset - SOHU_PAGE_DOORBELL;
  const auto qid = static_cast<std::uint16_t>(rel / SOHU_SQ_TAIL_DB_STRIDE);
  const std::uint32_t which = rel % SOHU_SQ_TAIL_DB_STRIDE;
  if (which != SOHU_SQ_TAIL_DB(0) - SOHU_PAGE_DOORBELL && which != SOHU_CQ_HEAD_DB(0) - SOHU_PAGE_DOORBELL) return;
  value = static_cast<std::uint32_t>(FAKE_GET(value, SOHU_SQ_TAIL_DB_TAIL));
  if (!enabled_) {
    log_error(SOHU_STATUS_DEVICE_DISABLED, qid, 0, value);
    return;
  }
  if (which == SOHU_SQ_TAIL_DB(0) - SOHU_PAGE_DOORBELL) {
    const auto it = sqs_.find(qid);
    // A tail beyond the ring, or one that would overwrite entries not yet fetched, is refused.
    if (it == sqs_.end() || value >= it->second.entries ||
        ring_used(it->second.head, value, it->second.entries) <
            ring_used(it->second.head, it->second.tail, it->second.entries)) {
      log_error(SOHU_STATUS_INVALID_DOORBELL, qid, 0, value);
      return;
    }
    Sq& q = it->second;
    if (q.head == q.tail) q.start = std::max(q.start, clock_);  // an idle queue starts now
    q.tail = value;
  } else {
    const auto it = cqs_.find(qid);
    if (it == cqs_.end() || value >= it->second.entries) {
      log_error(SOHU_STATUS_INVALID_DOORBELL, qid, 0, value);
      return;
    }
    hold_blocked(clock_);  // a queue waiting for room in this CQ goes on from now
    it->second.head = value;
  }
  run_until(clock_);
}

// ---- DMA memory ----------------------------------------------------------------------------

DmaBuffer FakeDevice::alloc_dma(std::uint16_t rid, std::uint64_t bytes, std::uint64_t align) {
  check_function(rid, "alloc_dma");
  if (bytes == 0 || align == 0 || (align & (align - 1)) != 0) {
    throw AccessError("alloc_dma: " + std::to_string(bytes) + " bytes aligned to " + std::to_string(align) +
                      " (bytes > 0, align a power of two)");
  }
  const std::uint64_t iova = (next_iova_ + align - 1) & ~(align - 1);
  if (iova + bytes - kDmaBase > opt_.dma_bytes) {
    throw AccessError("alloc_dma: DMA memory exhausted: " + std::to_string(bytes) + " bytes asked, " +
                      std::to_string(opt_.dma_bytes - (next_iova_ - kDmaBase)) + " left");
  }
  dma_[iova].assign(bytes, 0);
  next_iova_ = iova + bytes;
  return DmaBuffer{iova, bytes};
}

std::uint8_t* FakeDevice::dma(std::uint64_t iova, std::size_t bytes, const char* what) {
  auto it = dma_.upper_bound(iova);
  if (it != dma_.begin()) {
    --it;
    const std::uint64_t off = iova - it->first;
    if (off <= it->second.size() && bytes <= it->second.size() - off) return it->second.data() + off;
  }
  throw AccessError(std::string(what) + ": [" + hex(iova) + ", +" + std::to_string(bytes) +
                    ") is not inside one buffer alloc_dma returned");
}

void FakeDevice::host_write(std::uint64_t iova, const void* data, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dma(iova, bytes, "host_write"), data, bytes);
}

void FakeDevice::host_read(std::uint64_t iova, void* data, std::size_t bytes) {
  if (bytes > 0) std::memcpy(data, dma(iova, bytes, "host_read"), bytes);
}

// ---- interrupts and time ----------------------------------------------------------------------

void FakeDevice::enable_msix(std::uint16_t rid, unsigned count) {
  check_function(rid, "enable_msix");
  if (count == 0 || count > opt_.msix_vectors) {
    throw AccessError("enable_msix: " + std::to_string(count) + " vectors requested, the table has " +
                      std::to_string(opt_.msix_vectors));
  }
  msix_count_ = count;
  msix_enabled_ = true;
  command_ |= kMemorySpace;  // the table is in BAR0
}

void FakeDevice::raise(unsigned vector) {
  if (vector >= raised_.size()) return;
  ++raised_[vector];
  if (msix_enabled_ && vector < msix_count_) ++pending_[vector];  // an unrouted vector is lost
}

bool FakeDevice::wait_interrupt(std::uint16_t rid, unsigned vector, std::uint64_t timeout_ns) {
  check_function(rid, "wait_interrupt");
  if (vector >= pending_.size()) {
    throw AccessError("wait_interrupt: vector " + std::to_string(vector) + " (the table has " +
                      std::to_string(pending_.size()) + ")");
  }
  ++interrupt_waits_;
  const std::uint64_t deadline = timeout_ns == 0 ? ~std::uint64_t{0} : clock_ + timeout_ns;
  for (;;) {
    if (pending_[vector] > 0) {
      --pending_[vector];
      return true;
    }
    std::uint64_t finish = 0;  // sleep until the next command completes, if before the deadline
    if (hung || next_queue(finish) == kNoQueue || finish > deadline) break;
    set_clock(std::max(clock_, finish));
  }
  if (timeout_ns == 0) {
    throw std::logic_error("FakeDevice: wait_interrupt(vector " + std::to_string(vector) +
                           ", no timeout) would block forever: nothing left to complete");
  }
  set_clock(deadline);
  return false;
}

void FakeDevice::poll_ns(std::uint64_t ns) {
  polled_ns_ += ns;
  advance(ns);
}

void FakeDevice::advance(std::uint64_t ns) {
  set_clock(clock_ + ns);
}

void FakeDevice::set_clock(std::uint64_t t) {
  if (t > opt_.watchdog_ns) {
    throw std::logic_error("FakeDevice: the host clock would pass " + std::to_string(opt_.watchdog_ns) +
                           " ns (watchdog_ns): the driver is waiting for something that does not come");
  }
  clock_ = t;
  run_until(clock_);
}

// ---- the controller ----------------------------------------------------------------------------

Command FakeDevice::fetch(const Sq& q, std::uint32_t index) {
  const std::uint8_t* b = dma(q.base + std::uint64_t{SOHU_SQE_SIZE} * index, SOHU_SQE_SIZE, "SQ entry fetch");
  Command c;
  for (unsigned i = 0; i < 16; ++i) {
    c.dw[i] = static_cast<std::uint32_t>(b[4 * i]) | (static_cast<std::uint32_t>(b[4 * i + 1]) << 8) |
              (static_cast<std::uint32_t>(b[4 * i + 2]) << 16) | (static_cast<std::uint32_t>(b[4 * i + 3]) << 24);
  }
  return c;
}

bool FakeDevice::runnable(std::uint16_t qid, const Sq& q) {
  if (q.head == q.tail) return false;
  const Cq& c = cqs_.at(q.cqid);
  if ((c.tail + 1) % c.entries == c.head) return false;  // CQ full: waits for the host to consume
  const Command cmd = fetch(q, q.head);
  return !(qid != 0 && cmd.opcode() == SOHU_IO_OP_SEM_WAIT &&
           sem_[FAKE_CMD(cmd, SOHU_IO_SEM_WAIT_SEM)] < FAKE_CMD(cmd, SOHU_IO_SEM_WAIT_VALUE));
}

void FakeDevice::hold_blocked(std::uint64_t t) {
  // Called before something happens at t that may unblock a queue: the entry it is stuck on
  // cannot have started before t.
  for (auto& [qid, q] : sqs_) {
    if (q.head != q.tail && !runnable(qid, q)) q.start = std::max(q.start, t);
  }
}

std::uint16_t FakeDevice::next_queue(std::uint64_t& finish) {
  std::uint16_t best = kNoQueue;
  if (!enabled_) return best;
  for (auto& [qid, q] : sqs_) {
    if (!runnable(qid, q)) continue;
    const std::uint64_t f = std::max(q.start, ready_at_) + opt_.command_ns;
    if (best == kNoQueue || f < finish) {
      best = qid;
      finish = f;
    }
  }
  return best;
}

void FakeDevice::run_until(std::uint64_t t) {
  if (hung) return;
  if (enabled_ && t >= ready_at_) ready_ = true;
  for (;;) {
    std::uint64_t finish = 0;
    const std::uint16_t qid = next_queue(finish);
    if (qid == kNoQueue || finish > t) return;
    execute(qid, finish);
  }
}

void FakeDevice::execute(std::uint16_t qid, std::uint64_t t) {
  hold_blocked(t);
  Sq& q = sqs_.at(qid);
  const Command c = fetch(q, q.head);
  q.head = (q.head + 1) % q.entries;
  q.start = t;
  const std::uint16_t cqid = q.cqid;
  const auto sq_head = static_cast<std::uint16_t>(q.head);  // `q` may not outlive admin()
  Outcome o = on_command ? on_command(qid, c) : Outcome{};
  if (o.status == SOHU_STATUS_SUCCESS) o = qid == 0 ? admin(c) : io(c);
  executed_.push_back(Executed{qid, c, o.status, t});
  if (o.status != SOHU_STATUS_SUCCESS) log_error(o.status, qid, c.cid(), o.address);
  // The completion entry, with the CQ's current phase; the phase flips when the tail wraps.
  Cq& cq = cqs_.at(cqid);
  std::uint32_t dw[4] = {0, 0, sq_head | (static_cast<std::uint32_t>(qid) << SOHU_CQE_SQ_ID_SHIFT),
                         c.cid() | (cq.phase ? SOHU_CQE_PHASE_MASK : 0u) |
                             (static_cast<std::uint32_t>(o.status) << SOHU_CQE_STATUS_SHIFT)};
  std::memcpy(dma(cq.base + std::uint64_t{SOHU_CQE_SIZE} * cq.tail, SOHU_CQE_SIZE, "completion write"), dw, sizeof dw);
  cq.tail = (cq.tail + 1) % cq.entries;
  if (cq.tail == 0) cq.phase = !cq.phase;
  if (cq.ien && FAKE_CMD(c, SOHU_SQE_NO_COMPLETION_IRQ) == 0) raise(cq.vector);
}

FakeDevice::Outcome FakeDevice::admin(const Command& c) {
  const auto fail = [](std::uint16_t status, std::uint64_t address = 0) { return Outcome{status, address}; };
  switch (c.opcode()) {
    case SOHU_ADMIN_OP_CREATE_CQ: {
      const auto qid = static_cast<std::uint16_t>(FAKE_CMD(c, SOHU_ADMIN_CREATE_CQ_QID));
      Cq q;
      q.base = FAKE_CMD(c, SOHU_ADMIN_CREATE_CQ_BASE);
      q.entries = static_cast<unsigned>(FAKE_CMD(c, SOHU_ADMIN_CREATE_CQ_QSIZE)) + 1;
      q.vector = static_cast<unsigned>(FAKE_CMD(c, SOHU_ADMIN_CREATE_CQ_VECTOR));
      q.ien = FAKE_CMD(c, SOHU_ADMIN_CREATE_CQ_IEN) != 0;
      if (qid == 0 || qid > opt_.max_queues) return fail(SOHU_STATUS_INVALID_QUEUE_ID);
      if (cqs_.count(qid) != 0) return fail(SOHU_STATUS_QUEUE_EXISTS);
      if (q.entries < 2 || q.entries > opt_.max_queue_entries) return fail(SOHU_STATUS_INVALID_QUEUE_SIZE);
      if (q.base == 0 || q.base % 4096 != 0) return fail(SOHU_STATUS_MISALIGNED, q.base);
      if (q.vector >= opt_.msix_vectors) return fail(SOHU_STATUS_INVALID_FIELD);
      cqs_[qid] = q;
      return {};
    }
    case SOHU_ADMIN_OP_CREATE_SQ: {
      const auto qid = static_cast<std::uint16_t>(FAKE_CMD(c, SOHU_ADMIN_CREATE_SQ_QID));
      Sq q;
      q.base = FAKE_CMD(c, SOHU_ADMIN_CREATE_SQ_BASE);
      q.entries = static_cast<unsigned>(FAKE_CMD(c, SOHU_ADMIN_CREATE_SQ_QSIZE)) + 1;
      q.cqid = static_cast<std::uint16_t>(FAKE_CMD(c, SOHU_ADMIN_CREATE_SQ_CQID));
      if (qid == 0 || qid > opt_.max_queues) return fail(SOHU_STATUS_INVALID_QUEUE_ID);
      if (sqs_.count(qid) != 0) return fail(SOHU_STATUS_QUEUE_EXISTS);
      if (q.cqid == 0 || cqs_.count(q.cqid) == 0) return fail(SOHU_STATUS_INVALID_QUEUE_ID);
      if (q.entries < 2 || q.entries > opt_.max_queue_entries) return fail(SOHU_STATUS_INVALID_QUEUE_SIZE);
      if (q.base == 0 || q.base % 4096 != 0) return fail(SOHU_STATUS_MISALIGNED, q.base);
      ++cqs_[q.cqid].sq_refs;
      sqs_[qid] = q;
      return {};
    }
    case SOHU_ADMIN_OP_DELETE_SQ: {  // entries not yet run go with the queue
      const auto qid = static_cast<std::uint16_t>(FAKE_CMD(c, SOHU_ADMIN_DELETE_SQ_QID));
      if (qid == 0 || sqs_.count(qid) == 0) return fail(SOHU_STATUS_INVALID_QUEUE_ID);
      --cqs_[sqs_[qid].cqid].sq_refs;
      sqs_.erase(qid);
      return {};
    }
    case SOHU_ADMIN_OP_DELETE_CQ: {
      const auto qid = static_cast<std::uint16_t>(FAKE_CMD(c, SOHU_ADMIN_DELETE_CQ_QID));
      if (qid == 0 || cqs_.count(qid) == 0) return fail(SOHU_STATUS_INVALID_QUEUE_ID);
      if (cqs_[qid].sq_refs > 0) return fail(SOHU_STATUS_QUEUE_IN_USE);
      cqs_.erase(qid);
      return {};
    }
    default:  // IDENTIFY, features, PMU, trace, contexts: accepted, no effect
      return c.opcode() <= SOHU_ADMIN_OP_VF_CONTEXT && c.opcode() != 0 ? Outcome{} : fail(SOHU_STATUS_INVALID_OPCODE);
  }
}

FakeDevice::Outcome FakeDevice::io(const Command& c) {
  if (c.opcode() == SOHU_IO_OP_SEM_SIGNAL) {
    if (FAKE_CMD(c, SOHU_IO_SEM_SIGNAL_DEVICE) != SOHU_IO_SEM_SIGNAL_DEVICE_LOCAL) {
      return Outcome{SOHU_STATUS_PEER_UNREACHABLE, 0};
    }
    sem_[FAKE_CMD(c, SOHU_IO_SEM_SIGNAL_SEM)] += static_cast<std::uint32_t>(FAKE_CMD(c, SOHU_IO_SEM_SIGNAL_VALUE));
  }
  // SEM_WAIT ran only once its semaphore was reached (runnable); the rest moves no data.
  return c.opcode() <= SOHU_IO_OP_EXEC_PROGRAM ? Outcome{} : Outcome{SOHU_STATUS_INVALID_OPCODE, 0};
}

void FakeDevice::log_error(std::uint16_t status, std::uint16_t qid, std::uint16_t cid, std::uint64_t address) {
  errlog_.push_back(ErrLogEntry{status, qid, cid, address});
  ++errors_logged_;
  if (enabled_) raise(static_cast<unsigned>(FAKE_GET(reg(SOHU_ERR_VECTOR), SOHU_ERR_VECTOR_VECTOR)));
}

}  // namespace sohusim::driver::test
