#include "sohusim/workloads/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>

#include "program_launch.hpp"
#include "sohusim/workloads/compiler.hpp"
#include "sohusim/workloads/reference.hpp"
#include "sohusim/workloads/weights.hpp"

namespace sohusim::workloads {

namespace {

// Pinned staging buffer for the weight upload, per device.
constexpr std::uint64_t kStagingBytes = 64ULL << 20;

std::uint16_t half_bits(float x) {
  // x is already rounded to FP16 (round_to), so this only re-encodes exactly.
  std::uint32_t f = 0;
  std::memcpy(&f, &x, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const float a = std::fabs(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (a >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (a < 6.103515625e-05f) {  // subnormal: multiples of 2^-24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::lround(a * 16777216.0f)));
  }
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const auto mant = static_cast<std::uint16_t>(std::lround((m * 2.0f - 1.0f) * 1024.0f));
  return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>((e - 1 + 15) << 10) | mant);
}

float half_value(std::uint16_t h) {
  const float sign = (h & 0x8000u) != 0 ? -1.0f : 1.0f;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -24);
  if (e == 31) return m == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 1024.0f, e - 15);
}

}  // namespace

void encode_elements(driver::DType t, const float* in, std::size_t n, std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    switch (t) {
      case driver::DType::Fp32:
        std::memcpy(out + 4 * i, in + i, 4);
        break;
      case driver::DType::Bf16: {
        const float r = round_to(t, in[i]);
        std::uint32_t b = 0;
        std::memcpy(&b, &r, 4);
        const auto v = static_cast<std::uint16_t>(b >> 16);
        std::memcpy(out + 2 * i, &v, 2);
        break;
      }
      case driver::DType::Fp16: {
        const std::uint16_t v = half_bits(round_to(t, in[i]));
        std::memcpy(out + 2 * i, &v, 2);
        break;
      }
      default:
        throw std::invalid_argument(std::string("functional data in ") + driver::dtype_name(t) +
                                    " is not supported (fp32, bf16, fp16)");
    }
  }
}

void decode_elements(driver::DType t, const std::uint8_t* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) {
    switch (t) {
      case driver::DType::Fp32:
        std::memcpy(out + i, in + 4 * i, 4);
        break;
      case driver::DType::Bf16: {
        std::uint16_t v = 0;
        std::memcpy(&v, in + 2 * i, 2);
        const std::uint32_t b = static_cast<std::uint32_t>(v) << 16;
        std::memcpy(out + i, &b, 4);
        break;
      }
      case driver::DType::Fp16: {
        std::uint16_t v = 0;
        std::memcpy(&v, in + 2 * i, 2);
        out[i] = half_value(v);
        break;
      }
      default:
        throw std::invalid_argument(std::string("functional data in ") + driver::dtype_name(t) +
                                    " is not supported (fp32, bf16, fp16)");
    }
  }
}

namespace {

struct Rank {
  unsigned device = 0;
  Shard shard;
  MemoryPlan plan;
  driver::Stream stream;
  driver::HostBuffer logits;  // the rank's logits slice, copied back each step
};

class Runner {
 public:
  Runner(driver::Runtime& rt, const ModelConfig& m, const ScenarioOptions& o, const std::vector<unsigned>& c2c,
         const PipelineStage& stage)
      : rt_(rt), m_(m), o_(o), c2c_(c2c), st_(stage), eb_(element_bytes(o.dtype)) {}

  ScenarioResult run() {
    validate();
    setup();
    if (o_.upload_weights || o_.functional) upload();
    const std::uint64_t t_start = rt_.access().now_ns();
    std::uint64_t t_prev = t_start;
    std::vector<std::uint32_t> tokens = prompt_tokens();  // position-major, prompt * batch
    for (unsigned step = 0; step < o_.gen; ++step) {
      const bool prefill = step == 0 && !o_.decode_only;
      const unsigned q_len = prefill ? o_.prompt : 1;
      const unsigned kv_len = o_.prompt + step + (o_.decode_only ? 1 : 0);
      const bool profiled = o_.profile_ops && (prefill || step + 1 == o_.gen);
      std::vector<std::uint32_t> next = run_step(prefill ? Phase::Prefill : Phase::Decode, q_len, kv_len, tokens,
                                                 profiled, prefill ? res_.prefill : res_.decode);
      const std::uint64_t now = rt_.access().now_ns();
      res_.step_start_seconds.push_back(static_cast<double>(t_prev) * 1e-9);
      res_.step_seconds.push_back(static_cast<double>(now - t_prev) * 1e-9);
      res_.step_profiled.push_back(profiled);
      if (prefill) res_.ttft_seconds = static_cast<double>(now - t_start) * 1e-9;
      t_prev = now;
      for (unsigned b = 0; b < o_.batch && o_.functional; ++b) res_.tokens[b].push_back(next[b]);
      tokens = next;
      if (o_.progress) o_.progress(prefill ? "prefill" : "decode", step + 1, o_.gen);
    }
    res_.e2e_seconds = static_cast<double>(t_prev - t_start) * 1e-9;
    finish();
    return res_;
  }

 private:
  void validate() {
    if (o_.batch == 0 || o_.prompt == 0 || o_.gen == 0) {
      throw std::invalid_argument("scenario: batch, prompt and gen must be >= 1 (got batch " +
                                  std::to_string(o_.batch) + ", prompt " + std::to_string(o_.prompt) + ", gen " +
                                  std::to_string(o_.gen) + ")");
    }
    if (static_cast<std::uint64_t>(o_.prompt) + o_.gen > m_.max_positions) {
      throw std::invalid_argument("scenario: prompt " + std::to_string(o_.prompt) + " + gen " + std::to_string(o_.gen) +
                                  " positions exceed the model's max_position_embeddings " +
                                  std::to_string(m_.max_positions) + " (" + m_.name + ")");
    }
    if (rt_.device_count() == 0) throw std::invalid_argument("scenario: the host has no device");
    tp_ = o_.tp == 0 ? rt_.device_count() : o_.tp;
    if (tp_ > rt_.device_count()) {
      throw std::invalid_argument("scenario: tensor-parallel degree " + std::to_string(tp_) + " but the host has " +
                                  std::to_string(rt_.device_count()) + " devices");
    }
    if (c2c_.size() < tp_) {
      throw std::invalid_argument("scenario: chip-to-chip indices of " + std::to_string(c2c_.size()) +
                                  " devices given for " + std::to_string(tp_) + " ranks");
    }
    if (st_.stages == 0 || st_.stage >= st_.stages || st_.stages > m_.layers) {
      throw std::invalid_argument("scenario: pipeline stage " + std::to_string(st_.stage) + " of " +
                                  std::to_string(st_.stages) + " (the model has " + std::to_string(m_.layers) +
                                  " layers)");
    }
    if (o_.functional && o_.decode_only) {
      throw std::invalid_argument("scenario: decode_only is a timing study (the KV cache holds no prompt data)");
    }
    if (o_.functional && st_.stages > 1) {
      throw std::invalid_argument("scenario: functional mode runs on one host (pipeline stages move no data)");
    }
    if (o_.functional) {
      const float probe = 1.0f;
      std::uint8_t b[4];
      encode_elements(o_.dtype, &probe, 1, b);  // throws for FP8
    }
    check_shard(m_, Shard{tp_, 0});
    first_layer_ = static_cast<int>(st_.stage * m_.layers / st_.stages);
    last_layer_ = static_cast<int>((st_.stage + 1) * m_.layers / st_.stages) - 1;
  }

  BuildOptions build_options() const {
    BuildOptions b;
    b.kv_capacity = o_.prompt + o_.gen;
    return b;
  }

  void setup() {
    res_.model = m_.name;
    res_.batch = o_.batch;
    res_.prompt = o_.prompt;
    res_.gen = o_.gen;
    res_.tp = tp_;
    res_.stages = st_.stages;
    res_.devices = tp_;
    res_.dtype = o_.dtype;
    res_.tokens.assign(o_.batch, {});
    for (unsigned r = 0; r < tp_; ++r) {
      Rank k;
      k.device = r;
      k.shard = Shard{tp_, r};
      check_weights_fit(m_, k.shard, o_.dtype, rt_.device_info(r).hbm_bytes);
      const Graph g = build_graph(m_, k.shard, Phase::Prefill, o_.batch, o_.prompt, o_.prompt, build_options());
      k.plan = plan_memory(m_, k.shard, o_.dtype, g, rt_.device_info(r).hbm_bytes);
      k.plan.base = rt_.malloc(r, k.plan.total_bytes);
      k.stream = rt_.create_stream(r);
      vocab_local_ = g.vocab_local;
      k.logits =
          rt_.alloc_host(r, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(o_.batch) * g.vocab_local * eb_));
      ranks_.push_back(k);
      group_.push_back(c2c_[r]);
    }
    res_.weight_bytes = ranks_[0].plan.weight_bytes;
    res_.kv_bytes = ranks_[0].plan.kv_bytes;
    res_.activation_bytes = ranks_[0].plan.activation_bytes;
  }

  void upload() {
    const std::uint64_t t0 = rt_.access().now_ns();
    std::optional<Weights> full;
    if (o_.functional) full = make_weights(m_, o_.seed);
    for (Rank& k : ranks_) {
      const driver::HostBuffer staging = rt_.alloc_host(k.device, kStagingBytes);
      if (o_.functional) {
        const Weights mine = shard_weights(*full, m_, k.shard);
        for (const auto& [name, t] : mine.tensors) {
          std::vector<std::uint8_t> bytes(t.data.size() * eb_);
          encode_elements(o_.dtype, t.data.data(), t.data.size(), bytes.data());
          const std::uint64_t dst = k.plan.address(name);
          for (std::uint64_t off = 0; off < bytes.size(); off += kStagingBytes) {
            const std::uint64_t n = std::min<std::uint64_t>(kStagingBytes, bytes.size() - off);
            rt_.synchronize(k.stream);  // the staging buffer is reused
            rt_.write_host(staging, 0, bytes.data() + off, n);
            rt_.memcpy_h2d_async(k.stream, dst + off, staging, 0, n);
          }
        }
      } else {
        // Timing: the same bytes over the same path, without data (the bulk upload).
        const std::uint64_t total = k.plan.weight_bytes;
        const std::uint64_t base = k.plan.base;  // weights come first in the plan
        for (std::uint64_t off = 0; off < total; off += kStagingBytes) {
          rt_.memcpy_h2d_async(k.stream, base + off, staging, 0, std::min(kStagingBytes, total - off));
        }
      }
    }
    rt_.synchronize();
    res_.load_seconds = static_cast<double>(rt_.access().now_ns() - t0) * 1e-9;
    res_.load_start_seconds = static_cast<double>(t0) * 1e-9;
    res_.weight_upload_bytes = ranks_[0].plan.weight_bytes;
  }

  std::vector<std::uint32_t> prompt_tokens() {
    std::vector<std::uint32_t> t(static_cast<std::size_t>(o_.prompt) * o_.batch, 0);
    if (!o_.functional) return t;
    if (!o_.prompts.empty()) {
      if (o_.prompts.size() != o_.batch) {
        throw std::invalid_argument("scenario: " + std::to_string(o_.prompts.size()) + " prompts for batch " +
                                    std::to_string(o_.batch));
      }
      for (unsigned b = 0; b < o_.batch; ++b) {
        if (o_.prompts[b].size() != o_.prompt) {
          throw std::invalid_argument("scenario: prompt " + std::to_string(b) + " has " +
                                      std::to_string(o_.prompts[b].size()) + " tokens, expected " +
                                      std::to_string(o_.prompt));
        }
        for (unsigned p = 0; p < o_.prompt; ++p) {
          if (o_.prompts[b][p] >= m_.vocab) {
            throw std::invalid_argument("scenario: prompt " + std::to_string(b) + " token " + std::to_string(p) +
                                        " = " + std::to_string(o_.prompts[b][p]) + " is outside the vocabulary (" +
                                        std::to_string(m_.vocab) + ")");
          }
          t[static_cast<std::size_t>(p) * o_.batch + b] = o_.prompts[b][p];
        }
      }
      return t;
    }
    std::uint64_t state = o_.seed ^ 0x70726F6D7074ULL;  // "prompt"
    for (unsigned b = 0; b < o_.batch; ++b)
      for (unsigned p = 0; p < o_.prompt; ++p)
        t[static_cast<std::size_t>(p) * o_.batch + b] = static_cast<std::uint32_t>(splitmix64(state) % m_.vocab);
    return t;
  }

  std::vector<std::uint32_t> run_step(Phase phase, unsigned q_len, unsigned kv_len,
                                      const std::vector<std::uint32_t>& tokens, bool profiled, Breakdown& bd) {
    const std::uint64_t rows = static_cast<std::uint64_t>(q_len) * o_.batch;
    const std::uint64_t hidden_bytes = rows * m_.hidden * eb_;
    const bool first = st_.stage == 0, last = st_.stage + 1 == st_.stages;
    // Network tags between stages count the steps, the same on every host; the collectives'
    // tags (tag_) depend on each stage's own layers and may differ between hosts.
    const std::uint32_t net_tag = kStageTagBase + 2 * steps_;
    ++steps_;
    if (!first) {
      // Activations from the previous stage: network, then into every rank's `hidden`.
      st_.recv(st_.stage - 1, hidden_bytes, net_tag);
      for (Rank& k : ranks_) rt_.memcpy_h2d_async(k.stream, k.plan.address("hidden"), staging_for(k), 0, hidden_bytes);
    }
    Graph g0;
    std::vector<std::size_t> stamped;
    driver::HostBuffer stamps;
    std::uint32_t next_tag = tag_;
    std::vector<OpCommands> programs;
    for (Rank& k : ranks_) {
      const Graph g = build_graph(m_, k.shard, phase, o_.batch, q_len, kv_len, build_options());
      CompileOptions co;
      co.dtype = o_.dtype;
      co.functional = o_.functional;
      co.group_devices = group_;
      co.tag_base = tag_;
      co.allreduce = o_.allreduce;
      co.tokens = tokens;
      co.first_layer = first_layer_;
      co.last_layer = last_layer_;
      co.with_embedding = first;
      co.with_head = last;
      const CompiledProgram cp = compile(g, k.plan, co);
      next_tag = cp.next_tag;
      res_.commands += cp.program.commands.size();
      if (k.device == 0) res_.step_totals.push_back(totals(g));
      if (profiled && k.device == 0) {
        stamps = rt_.alloc_host(0, 8ULL * (g.ops.size() + 1));
        programs.push_back(per_op(cp, &stamps, stamped));
        g0 = g;
      } else {
        programs.push_back(per_op(cp, nullptr, stamped));
      }
    }
    std::vector<driver::Stream> streams;
    for (const Rank& k : ranks_) streams.push_back(k.stream);
    launch_sliced(rt_, streams, programs, std::string(to_string(phase)) + " step");
    tag_ = next_tag + 1;
    std::vector<std::uint32_t> next(o_.batch, 0);
    if (!last) {
      // Hand the activations to the next stage: device -> host -> network.
      Rank& k = ranks_[0];
      rt_.memcpy_d2h_async(k.stream, staging_for(k), 0, k.plan.address("hidden"), hidden_bytes);
      rt_.synchronize();
      st_.send(st_.stage + 1, hidden_bytes, net_tag);
    } else {
      for (Rank& k : ranks_) {
        rt_.memcpy_d2h_async(k.stream, k.logits, 0, k.plan.address("logits"),
                             static_cast<std::uint64_t>(o_.batch) * vocab_local_ * eb_);
      }
      rt_.synchronize();
      rt_.access().spend_ns(static_cast<std::uint64_t>(kArgmaxNsPerLogit * static_cast<double>(o_.batch) * m_.vocab));
      if (o_.functional) next = sample();
      if (st_.stages > 1) st_.send(0, 4ULL * o_.batch, net_tag + 1);
    }
    if (first && st_.stages > 1) st_.recv(st_.stages - 1, 4ULL * o_.batch, net_tag + 1);
    tag_ += 2;
    if (profiled && !stamped.empty()) record(g0, stamped, stamps, bd);
    return next;
  }

  std::uint64_t prefill_hidden_bytes() const {
    return static_cast<std::uint64_t>(o_.prompt) * o_.batch * m_.hidden * eb_;
  }
  driver::HostBuffer staging_for(const Rank& k) {
    auto it = pp_buffers_.find(k.device);
    if (it == pp_buffers_.end())
      it = pp_buffers_.emplace(k.device, rt_.alloc_host(k.device, prefill_hidden_bytes())).first;
    return it->second;
  }

  std::vector<std::uint32_t> sample() {
    std::vector<std::vector<float>> logits(o_.batch, std::vector<float>(m_.vocab, 0.0f));
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(o_.batch) * vocab_local_ * eb_);
    std::vector<float> vals(static_cast<std::size_t>(o_.batch) * vocab_local_);
    for (const Rank& k : ranks_) {
      rt_.read_host(k.logits, 0, bytes.data(), bytes.size());
      decode_elements(o_.dtype, bytes.data(), vals.size(), vals.data());
      for (unsigned b = 0; b < o_.batch; ++b) {
        for (std::uint64_t c = 0; c < vocab_local_; ++c) {
          const std::uint64_t v = k.shard.tp_rank * vocab_local_ + c;
          if (v < m_.vocab) logits[b][v] = vals[b * vocab_local_ + c];
        }
      }
    }
    res_.logits.push_back(logits);
    return greedy(logits);
  }

  void record(const Graph& g, const std::vector<std::size_t>& ops, const driver::HostBuffer& stamps, Breakdown& bd) {
    std::vector<std::uint64_t> t(ops.size() + 1);
    rt_.read_host(stamps, 0, t.data(), 8 * t.size());
    bd = Breakdown{};
    bd.per_layer.assign(static_cast<std::size_t>(last_layer_ - first_layer_ + 1), 0.0);
    std::map<std::string, std::size_t> writer;  // tensor -> the last recorded op that wrote it
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = g.ops[ops[i]];
      const double s = static_cast<double>(t[i + 1] - t[i]) * 1e-9;
      OpTime ot{op.name, op.kind, op.layer, s, t[i], t[i + 1], {}, {}};
      ot.cost.ops = 1;
      ot.cost.flops = op.flops;
      ot.cost.weight_elems = op.weight_elems;
      ot.cost.act_elems = op.act_elems;
      ot.cost.kv_read_elems = op.kv_read_elems;
      ot.cost.kv_write_elems = op.kv_write_elems;
      ot.cost.comm_elems = op.comm_elems;
      for (const std::string& in : op.inputs) {
        const auto w = writer.find(in);
        if (w != writer.end() && std::find(ot.deps.begin(), ot.deps.end(), w->second) == ot.deps.end())
          ot.deps.push_back(w->second);
      }
      std::sort(ot.deps.begin(), ot.deps.end());
      for (const std::string& out : op.outputs) writer[out] = bd.ops.size();
      bd.ops.push_back(std::move(ot));
      bd.per_kind[to_string(op.kind)] += s;
      if (op.layer >= first_layer_ && op.layer <= last_layer_) {
        bd.per_layer[static_cast<std::size_t>(op.layer - first_layer_)] += s;
      } else {
        bd.other_seconds += s;
      }
    }
  }

  void finish() {
    const double in = static_cast<double>(o_.batch) * (o_.prompt + o_.gen);
    const double out = static_cast<double>(o_.batch) * o_.gen;
    if (res_.e2e_seconds > 0) {
      res_.tokens_per_second = in / res_.e2e_seconds;
      res_.output_tokens_per_second = out / res_.e2e_seconds;
    }
    // TPOT: the decode steps, without the profiled one when there are others.
    double sum = 0;
    unsigned n = 0;
    for (std::size_t i = o_.decode_only ? 0 : 1; i < res_.step_seconds.size(); ++i) {
      const bool profiled = o_.profile_ops && i + 1 == res_.step_seconds.size();
      if (profiled && res_.step_seconds.size() > 2) continue;
      sum += res_.step_seconds[i];
      ++n;
    }
    res_.tpot_seconds = n > 0 ? sum / n : 0;
    for (unsigned r = 0; r < tp_; ++r) res_.hbm_used_bytes = std::max(res_.hbm_used_bytes, rt_.hbm_peak(r));
    // The request is over: its device memory goes back to the runtime (a caller may run
    // another request on the same devices).
    for (const Rank& k : ranks_) rt_.free(k.device, k.plan.base);
  }

  driver::Runtime& rt_;
  const ModelConfig& m_;
  const ScenarioOptions& o_;
  const std::vector<unsigned>& c2c_;
  const PipelineStage& st_;
  unsigned eb_;
  unsigned tp_ = 1;
  int first_layer_ = 0, last_layer_ = 0;
  std::uint64_t vocab_local_ = 0;
  std::uint32_t tag_ = 1;
  // Host-network tags of the stage-to-stage messages: 0x5CE00000 + 2 x step (activations)
  // and + 1 (sampled tokens); below the clock pings' 0xC10C5E01/02.
  static constexpr std::uint32_t kStageTagBase = 0x5CE00000u;
  std::uint32_t steps_ = 0;
  std::vector<Rank> ranks_;
  std::vector<unsigned> group_;
  std::map<unsigned, driver::HostBuffer> pp_buffers_;
  ScenarioResult res_;
};

}  // namespace

ScenarioResult run_scenario(driver::Runtime& rt, const ModelConfig& m, const ScenarioOptions& o,
                            const std::vector<unsigned>& c2c_index, const PipelineStage& stage) {
  return Runner(rt, m, o, c2c_index, stage).run();
}

}  // namespace sohusim::workloads
