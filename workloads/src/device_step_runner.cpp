#include "sohusim/workloads/device_step_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "program_launch.hpp"
#include "sohusim/workloads/graph.hpp"

namespace sohusim::workloads {

namespace {

// A shape is simulated this many times before its cost is reused, and the last cost is
// kept: the first run of a shape meets colder state (translations, open rows, queues) than
// the steady state its later repeats see.
constexpr unsigned kSamplesPerShape = 2;

// Pinned staging buffer of the swaps, per device (the copies go through it in chunks).
constexpr std::uint64_t kSwapStagingBytes = 64ULL << 20;

// Reuse buckets: exact up to 32, then 32 steps per power of two, to the nearest (at most
// 1/64 = 1.6 % off, as often above as below).
std::uint64_t bucket(std::uint64_t x) {
  if (x <= 32) return x;
  unsigned log2 = 0;
  while ((x >> (log2 + 1)) != 0) ++log2;
  const std::uint64_t grid = std::uint64_t{1} << (log2 - 5);
  return (x + grid / 2) / grid * grid;
}

std::string gib(std::uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return b;
}

}  // namespace

struct DeviceStepRunner::Shape {
  std::vector<StepGroup> groups;
  unsigned sampled = 0;
  std::vector<std::uint64_t> key() const {
    std::vector<std::uint64_t> k{sampled};
    for (const StepGroup& g : groups) k.insert(k.end(), {g.batch, g.q_len, g.kv_len});
    return k;
  }
};

void DeviceServingOptions::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument("serving: " + what); };
  if (max_batch == 0) bad("max_batch = 0 (allowed >= 1)");
  if (max_tokens == 0) bad("max_tokens = 0 (allowed >= 1)");
  if (block_tokens == 0) bad("block_tokens = 0 (allowed >= 1)");
  if (!(memory_utilization > 0 && memory_utilization <= 1))
    bad("memory_utilization = " + std::to_string(memory_utilization) + " (allowed (0, 1])");
  if (!(kv_watermark >= 0 && kv_watermark < 1))
    bad("kv_watermark = " + std::to_string(kv_watermark) + " (allowed [0, 1))");
}

namespace {

// The largest step the buffers must hold: max_batch decodes plus max_tokens prompt rows (in
// chunks of at most the model's positions); `rows` gets its row count.
std::vector<StepGroup> largest_step(const ModelConfig& m, const DeviceServingOptions& o, std::uint64_t& rows) {
  std::vector<StepGroup> largest{StepGroup{o.max_batch, 1, 1, 0}};
  rows = o.max_batch;
  for (std::uint64_t left = o.max_tokens; left > 0;) {
    const unsigned q = static_cast<unsigned>(std::min<std::uint64_t>(left, m.max_positions));
    largest.push_back(StepGroup{1, q, q, rows});
    rows += q;
    left -= q;
  }
  return largest;
}

}  // namespace

DeviceStepRunner::PoolPlan DeviceStepRunner::plan_pool(const ModelConfig& m, const DeviceServingOptions& o,
                                                       const std::vector<std::uint64_t>& hbm_bytes) {
  o.validate();
  const auto tp = static_cast<unsigned>(hbm_bytes.size());
  if (tp == 0) throw std::invalid_argument("serving: no device to serve on");
  check_shard(m, Shard{tp, 0});
  for (unsigned r = 0; r < tp; ++r) check_weights_fit(m, Shard{tp, r}, o.dtype, hbm_bytes[r]);
  std::uint64_t rows = 0;
  const std::vector<StepGroup> largest = largest_step(m, o, rows);
  const std::uint64_t probe_rows = (rows + o.block_tokens - 1) / o.block_tokens * o.block_tokens;
  PoolPlan plan;
  for (unsigned r = 0; r < tp; ++r) {
    const Shard s{tp, r};
    const std::uint64_t hbm = hbm_bytes[r];
    const Graph probe = build_step_graph(m, s, largest, o.max_batch, probe_rows);
    const MemoryPlan p0 = plan_memory(m, s, o.dtype, probe, hbm);
    plan.row_bytes = p0.kv_bytes / probe_rows;
    const std::uint64_t fixed = p0.total_bytes - p0.kv_bytes;
    const auto budget = static_cast<std::uint64_t>(static_cast<double>(hbm) * o.memory_utilization);
    const std::uint64_t rows_fit = budget > fixed ? (budget - fixed) / plan.row_bytes : 0;
    std::uint64_t pool = std::min<std::uint64_t>(rows_fit, 0xFFFF'FFFFULL) / o.block_tokens * o.block_tokens;
    if (o.kv_blocks != 0 && pool >= probe_rows) {
      // A smaller cache on request, never below what the largest step writes.
      pool = std::max(probe_rows, std::min(pool, o.kv_blocks * o.block_tokens));
    }
    if (pool < probe_rows) {
      throw std::invalid_argument("serving: " + m.name + " on device " + std::to_string(r) + ": weights " +
                                  gib(p0.weight_bytes) + " and activations " + gib(p0.activation_bytes) + " leave " +
                                  std::to_string(pool) + " KV positions in " +
                                  std::to_string(static_cast<int>(o.memory_utilization * 100)) + " % of " + gib(hbm) +
                                  "; a step of max_batch " + std::to_string(o.max_batch) + " and max_tokens " +
                                  std::to_string(o.max_tokens) + " needs " + std::to_string(probe_rows));
    }
    plan.rows = r == 0 ? pool : std::min(plan.rows, pool);
  }
  return plan;
}

DeviceStepRunner::DeviceStepRunner(driver::Runtime& rt, const ModelConfig& m, const DeviceServingOptions& o)
    : rt_(rt), m_(m), o_(o), eb_(element_bytes(o.dtype)) {
  o_.validate();
  if (rt_.device_count() == 0) throw std::invalid_argument("serving: the host has no device");
  tp_ = o_.tp == 0 ? rt_.device_count() : o_.tp;
  if (tp_ > rt_.device_count()) {
    throw std::invalid_argument("serving: tensor-parallel degree " + std::to_string(tp_) + " but the host has " +
                                std::to_string(rt_.device_count()) + " devices");
  }
  if (o_.c2c_index.empty())
    for (unsigned i = 0; i < tp_; ++i) o_.c2c_index.push_back(i);
  if (o_.c2c_index.size() < tp_) {
    throw std::invalid_argument("serving: chip-to-chip indices of " + std::to_string(o_.c2c_index.size()) +
                                " devices given for " + std::to_string(tp_) + " ranks");
  }
  std::vector<std::uint64_t> hbm;
  for (unsigned r = 0; r < tp_; ++r) hbm.push_back(rt_.device_info(r).hbm_bytes);
  const PoolPlan pool = plan_pool(m_, o_, hbm);
  pool_rows_ = pool.rows;
  row_bytes_ = pool.row_bytes;
  std::uint64_t rows = 0;
  const std::vector<StepGroup> largest = largest_step(m_, o_, rows);
  for (unsigned r = 0; r < tp_; ++r) {
    const Shard s{tp_, r};
    const Graph g = build_step_graph(m_, s, largest, o_.max_batch, pool_rows_);
    MemoryPlan p = plan_memory(m_, s, o_.dtype, g, hbm[r]);
    p.base = rt_.malloc(r, p.total_bytes);
    plans_.push_back(std::move(p));
    streams_.push_back(rt_.create_stream(r));
    logits_.push_back(rt_.alloc_host(r, std::max<std::uint64_t>(1, std::uint64_t{o_.max_batch} * g.vocab_local * eb_)));
  }
  origin_ns_ = rt_.access().now_ns();
}

DeviceStepRunner::~DeviceStepRunner() {
  try {
    for (unsigned r = 0; r < plans_.size(); ++r) rt_.free(r, plans_[r].base);
  } catch (...) {  // a failed run: the runtime may be gone with its devices
  }
}

KvCacheOptions DeviceStepRunner::kv_cache() const {
  KvCacheOptions k;
  k.block_tokens = o_.block_tokens;
  k.blocks = pool_rows_ / o_.block_tokens;
  k.block_bytes = row_bytes_ * o_.block_tokens;
  k.watermark = o_.kv_watermark;
  return k;
}

DeviceStepRunner::Shape DeviceStepRunner::shape_of(const StepPlan& plan) const {
  auto round = [&](std::uint64_t x) { return o_.reuse ? bucket(x) : x; };
  const auto positions = static_cast<std::uint64_t>(m_.max_positions);
  Shape s;
  s.sampled = plan.sampled();
  std::uint64_t decodes = 0, context = 0;
  std::vector<StepGroup> chunks;
  for (const StepItem& it : plan.items) {
    if (!it.prefill) {
      ++decodes;
      context += it.context;
      continue;
    }
    const auto q = static_cast<unsigned>(std::min(round(it.tokens), positions));
    const auto kv = static_cast<unsigned>(std::min(std::max<std::uint64_t>(round(it.context), q), positions));
    chunks.push_back(StepGroup{1, q, kv, 0});
  }
  if (decodes > 0) {
    // Decode attention reads each sequence's whole context once: one group over the mean
    // context reads what they read together.
    const std::uint64_t mean = (context + decodes - 1) / decodes;
    s.groups.push_back(StepGroup{static_cast<unsigned>(decodes), 1,
                                 static_cast<unsigned>(std::min(std::max<std::uint64_t>(round(mean), 1), positions)),
                                 0});
  }
  if (o_.reuse) {
    std::sort(chunks.begin(), chunks.end(), [](const StepGroup& a, const StepGroup& b) {
      return a.q_len != b.q_len ? a.q_len > b.q_len : a.kv_len > b.kv_len;
    });
  }
  s.groups.insert(s.groups.end(), chunks.begin(), chunks.end());
  // Cache rows: the groups one after another in the pool, as far as they fit.
  std::uint64_t row = 0;
  for (StepGroup& g : s.groups) {
    g.kv_len = static_cast<unsigned>(std::min<std::uint64_t>(g.kv_len, pool_rows_ / g.batch));
    g.q_len = std::min(g.q_len, g.kv_len);
    const std::uint64_t used = std::uint64_t{g.batch} * g.kv_len;
    if (row + used > pool_rows_) row = 0;
    g.cache_row = row;
    row += used;
  }
  return s;
}

double DeviceStepRunner::simulate(const Shape& s) {
  const std::uint64_t t0 = rt_.access().now_ns();
  std::vector<OpCommands> programs;
  std::uint32_t next_tag = tag_;
  std::uint64_t vocab_local = 0;
  for (unsigned r = 0; r < tp_; ++r) {
    const Graph g = build_step_graph(m_, Shard{tp_, r}, s.groups, s.sampled, pool_rows_);
    CompileOptions co;
    co.dtype = o_.dtype;
    co.group_devices.assign(o_.c2c_index.begin(), o_.c2c_index.begin() + tp_);
    co.tag_base = tag_;
    co.allreduce = o_.allreduce;
    const CompiledProgram cp = compile(g, plans_[r], co);
    next_tag = cp.next_tag;
    commands_ += cp.program.commands.size();
    vocab_local = g.vocab_local;
    std::vector<std::size_t> unused;
    programs.push_back(per_op(cp, nullptr, unused));
  }
  launch_sliced(rt_, streams_, programs, "serving step");
  tag_ = next_tag + 1;
  if (s.sampled > 0) {
    for (unsigned r = 0; r < tp_; ++r) {
      rt_.memcpy_d2h_async(streams_[r], logits_[r], 0, plans_[r].address("logits"),
                           std::uint64_t{s.sampled} * vocab_local * eb_);
    }
  }
  rt_.synchronize();
  rt_.access().spend_ns(static_cast<std::uint64_t>(kArgmaxNsPerLogit * s.sampled * static_cast<double>(m_.vocab)));
  ++simulated_;
  return static_cast<double>(rt_.access().now_ns() - t0) * 1e-9;
}

void DeviceStepRunner::swap(std::uint64_t out_bytes, std::uint64_t in_bytes) {
  if (out_bytes == 0 && in_bytes == 0) return;
  if (staging_.empty())
    for (unsigned r = 0; r < tp_; ++r) staging_.push_back(rt_.alloc_host(r, kSwapStagingBytes));
  // Timing: the bytes over the DMA path through the staging buffer, from and to the pool.
  for (unsigned r = 0; r < tp_; ++r) {
    const std::uint64_t pool = plans_[r].address("L0.k_cache");
    for (std::uint64_t off = 0; off < out_bytes; off += kSwapStagingBytes)
      rt_.memcpy_d2h_async(streams_[r], staging_[r], 0, pool, std::min(kSwapStagingBytes, out_bytes - off));
    for (std::uint64_t off = 0; off < in_bytes; off += kSwapStagingBytes)
      rt_.memcpy_h2d_async(streams_[r], pool, staging_[r], 0, std::min(kSwapStagingBytes, in_bytes - off));
  }
  rt_.synchronize();
}

double DeviceStepRunner::run(const StepPlan& plan, double start_s) {
  driver::DeviceAccess& host = rt_.access();
  const auto start_ns = origin_ns_ + static_cast<std::uint64_t>(std::llround(start_s * 1e9));
  const std::uint64_t now = host.now_ns();
  if (now < start_ns) host.poll_ns(start_ns - now);  // no work until then
  swap(plan.swap_out_bytes, plan.swap_in_bytes);
  if (!plan.items.empty()) {
    const Shape s = shape_of(plan);
    const std::vector<std::uint64_t> key = s.key();
    Cost* known = nullptr;
    if (o_.reuse) known = &costs_[key];
    if (known != nullptr && known->samples >= kSamplesPerShape) {
      host.poll_ns(static_cast<std::uint64_t>(std::llround(known->seconds * 1e9)));
      step_seconds_ += known->seconds;
      ++reused_;
    } else {
      const double cost = simulate(s);
      step_seconds_ += cost;
      simulated_seconds_ += cost;
      if (known != nullptr) {
        known->seconds = cost;
        ++known->samples;
      }
    }
  }
  return static_cast<double>(host.now_ns() - origin_ns_) * 1e-9;
}

}  // namespace sohusim::workloads
