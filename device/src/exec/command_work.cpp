#include "sohusim/device/exec/command_work.hpp"

#include <bitset>
#include <cstdio>
#include <string>

#include "sohusim/device/compute/dtype.hpp"
#include "sohusim/device/compute/ops.hpp"
#include "sohusim/device/units/memory_port.hpp"
#include "sohusim/regmap/sohu_regs.h"

namespace sohusim::device {

const std::vector<WorkClass>& work_classes() {
  static const std::vector<WorkClass> classes{{SOHU_IO_OP_DMA_COPY, "dma_copy", "DMA_COPY"},
                                              {SOHU_IO_OP_GEMM, "gemm", "GEMM"},
                                              {SOHU_IO_OP_ATTENTION, "attention", "ATTENTION"},
                                              {SOHU_IO_OP_VECTOR, "vector", "VECTOR"},
                                              {SOHU_IO_OP_COLLECTIVE, "collective", "COLLECTIVE"}};
  return classes;
}

const WorkClass* work_class(std::uint8_t opcode) {
  for (const WorkClass& c : work_classes()) {
    if (c.opcode == opcode) return &c;
  }
  return nullptr;
}

namespace {

std::uint64_t pow2_ceil(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v && p < (1ULL << 63)) p <<= 1;
  return p;
}

std::string bytes_text(std::uint64_t b) {
  if (b >= (1ULL << 30) && b % (1ULL << 30) == 0) return std::to_string(b >> 30) + " GiB";
  if (b >= (1ULL << 20) && b % (1ULL << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= (1ULL << 10) && b % (1ULL << 10) == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

const char* collective_name(std::uint64_t op) {
  static const char* const names[] = {"send", "recv", "reduce_step", "gather_step", "all_reduce"};
  return op < 5 ? names[op] : "?";
}

const char* dtype_name(std::uint64_t t) {
  return t < kNumDataTypes ? to_string(static_cast<DataType>(t)) : "?";
}

}  // namespace

WorkShape work_shape(const Sqe& sqe) {
  WorkShape s;
  s.opcode = sqe.opcode();
  auto& f = s.fields;
  switch (sqe.opcode()) {
    case SOHU_IO_OP_GEMM: {
      GemmCmd g{};
      if (!decode(sqe, g).ok()) break;
      f = {g.m,
           g.k,
           g.n,
           static_cast<std::uint64_t>(g.in),
           static_cast<std::uint64_t>(g.out),
           static_cast<std::uint64_t>(g.act),
           (g.trans_a ? 1u : 0u) | (g.trans_b ? 2u : 0u) | (g.bias ? 4u : 0u) | (g.residual ? 8u : 0u)};
      break;
    }
    case SOHU_IO_OP_ATTENTION: {
      AttentionCmd a{};
      if (!decode(sqe, a).ok()) break;
      f = {a.batch,
           a.q_len,
           pow2_ceil(a.kv_len),
           a.q_heads,
           a.kv_heads,
           a.head_dim,
           static_cast<std::uint64_t>(a.dtype) | (a.causal ? 0x100u : 0u)};
      break;
    }
    case SOHU_IO_OP_VECTOR: {
      VectorCmd v{};
      if (!decode(sqe, v).ok()) break;
      f = {static_cast<std::uint64_t>(v.op),       v.rows, v.cols, static_cast<std::uint64_t>(v.in),
           static_cast<std::uint64_t>(v.out_type), 0,      0};
      break;
    }
    case SOHU_IO_OP_DMA_COPY: {
      DmaCopyCmd d{};
      if (!decode(sqe, d).ok()) break;
      f = {static_cast<std::uint64_t>(d.src_space),
           static_cast<std::uint64_t>(d.dst_space),
           pow2_ceil(d.length),
           0,
           0,
           0,
           0};
      break;
    }
    case SOHU_IO_OP_COLLECTIVE: {
      CollectiveCmd c{};
      if (!decode(sqe, c).ok()) break;
      const std::uint64_t peers = c.op == CollectiveOp::AllReduce ? std::bitset<32>(c.peers).count() : 1;
      f = {static_cast<std::uint64_t>(c.op), pow2_ceil(c.length), static_cast<std::uint64_t>(c.dtype), peers, 0, 0, 0};
      break;
    }
    default:
      break;
  }
  return s;
}

std::size_t WorkShapeHash::operator()(const WorkShape& s) const noexcept {
  std::uint64_t h = 1469598103934665603ULL ^ s.opcode;  // FNV-1a over the fields
  for (std::uint64_t v : s.fields) {
    h ^= v;
    h *= 1099511628211ULL;
  }
  return static_cast<std::size_t>(h);
}

std::string WorkShape::describe() const {
  const WorkClass* c = work_class(opcode);
  std::string out = c != nullptr ? c->command : "opcode " + std::to_string(opcode);
  const auto& f = fields;
  char b[160];
  switch (opcode) {
    case SOHU_IO_OP_GEMM:
      std::snprintf(b, sizeof b, " %llux%llux%llu %s", static_cast<unsigned long long>(f[0]),
                    static_cast<unsigned long long>(f[1]), static_cast<unsigned long long>(f[2]), dtype_name(f[3]));
      out += b;
      if (f[4] != f[3]) out += std::string("->") + dtype_name(f[4]);
      if (f[5] != 0 && f[5] < kNumActivations) out += std::string(" ") + to_string(static_cast<Activation>(f[5]));
      if (f[6] & 1u) out += " A^T";
      if (f[6] & 2u) out += " B^T";
      if (f[6] & 4u) out += " +bias";
      if (f[6] & 8u) out += " +residual";
      break;
    case SOHU_IO_OP_ATTENTION:
      std::snprintf(b, sizeof b, " b%llu q%llu kv<=%llu h%llu/%llu d%llu %s%s", static_cast<unsigned long long>(f[0]),
                    static_cast<unsigned long long>(f[1]), static_cast<unsigned long long>(f[2]),
                    static_cast<unsigned long long>(f[3]), static_cast<unsigned long long>(f[4]),
                    static_cast<unsigned long long>(f[5]), dtype_name(f[6] & 0xFFu), (f[6] & 0x100u) ? " causal" : "");
      out += b;
      break;
    case SOHU_IO_OP_VECTOR:
      std::snprintf(b, sizeof b, " %s %llux%llu %s", to_string(static_cast<VectorOp>(f[0])),
                    static_cast<unsigned long long>(f[1]), static_cast<unsigned long long>(f[2]), dtype_name(f[3]));
      out += b;
      if (f[4] != f[3]) out += std::string("->") + dtype_name(f[4]);
      break;
    case SOHU_IO_OP_DMA_COPY:
      out += std::string(" ") + (f[0] < kNumSpaces ? to_string(static_cast<Space>(f[0])) : "?") + "->" +
             (f[1] < kNumSpaces ? to_string(static_cast<Space>(f[1])) : "?") + " <=" + bytes_text(f[2]);
      break;
    case SOHU_IO_OP_COLLECTIVE:
      out += std::string(" ") + collective_name(f[0]) + " <=" + bytes_text(f[1]) + " " + dtype_name(f[2]);
      if (f[0] == static_cast<std::uint64_t>(CollectiveOp::AllReduce)) out += " " + std::to_string(f[3]) + " peers";
      break;
    default:
      break;
  }
  return out;
}

namespace {

counters::Counter& field(const counters::Scope& s, const char* leaf, const char* unit, const std::string& what,
                         const WorkClass& c) {
  return s.counter(leaf, unit, what + " by " + c.command + " commands");
}

}  // namespace

WorkCounters::WorkCounters(const counters::Scope& device_scope, const WorkClass& c)
    : WorkCounters(device_scope.sub(std::string("exec.") + c.name), c, 0) {}

WorkCounters::WorkCounters(const counters::Scope& s, const WorkClass& c, int)
    : duration_(s.distribution("duration", "ns", std::string("execution time of one ") + c.command + " command",
                               counters::DistributionSpec::log(10, 1e10, 80))),
      matrix_flops_(field(s, "matrix_flops", "FLOP", "FLOP on the matrix engines", c)),
      vector_flops_(field(s, "vector_flops", "FLOP", "FLOP on the vector engines", c)),
      hbm_bytes_(field(s, "hbm_bytes", "B", "HBM bytes read and written", c)),
      sram_bytes_(field(s, "sram_bytes", "B", "SRAM bytes read and written", c)),
      host_read_bytes_(field(s, "host_read_bytes", "B", "host-memory bytes read (PCIe host to device)", c)),
      host_write_bytes_(field(s, "host_write_bytes", "B", "host-memory bytes written (PCIe device to host)", c)),
      link_bytes_(field(s, "link_bytes", "B", "bytes moved over chip-to-chip ports in the command's time", c)) {}

void WorkCounters::add(const CommandWork& w, std::uint64_t duration_ps) {
  sample_duration(duration_ps);
  if (w.matrix_flops > 0) matrix_flops_.inc(w.matrix_flops);
  if (w.vector_flops > 0) vector_flops_.inc(w.vector_flops);
  if (w.hbm_bytes > 0) hbm_bytes_.inc(w.hbm_bytes);
  if (w.sram_bytes > 0) sram_bytes_.inc(w.sram_bytes);
  if (w.host_read_bytes > 0) host_read_bytes_.inc(w.host_read_bytes);
  if (w.host_write_bytes > 0) host_write_bytes_.inc(w.host_write_bytes);
  if (w.link_bytes > 0) link_bytes_.inc(w.link_bytes);
}

void WorkCounters::sample_duration(std::uint64_t duration_ps) {
  duration_.sample(static_cast<double>(duration_ps) * 1e-3);
}

}  // namespace sohusim::device
