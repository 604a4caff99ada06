#include "sohusim/workloads/kv_block_manager.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace sohusim::workloads {

void KvCacheOptions::validate() const {
  if (block_tokens == 0) throw std::invalid_argument("kv cache: block_tokens must be >= 1");
  if (blocks == 0) throw std::invalid_argument("kv cache: no blocks (the KV cache has no room on the device)");
  if (!(watermark >= 0 && watermark < 1)) throw std::invalid_argument("kv cache: watermark must be in [0, 1)");
}

KvBlockManager::KvBlockManager(const KvCacheOptions& options, const counters::Scope& scope)
    : options_(options),
      used_(scope.gauge("blocks_used", "blocks", "KV-cache blocks held by sequences on the device")),
      allocations_(scope.counter("allocations", "blocks", "KV-cache blocks handed to sequences")),
      preemptions_(scope.counter("preemptions", "sequences", "sequences preempted (recompute or swap)")),
      swapped_out_bytes_(scope.counter("swapped_out_bytes", "B", "KV bytes swapped from the device to the host")),
      swapped_in_bytes_(scope.counter("swapped_in_bytes", "B", "KV bytes swapped back to the device")) {
  options_.validate();
  reserve_ = static_cast<std::uint64_t>(std::floor(options_.watermark * static_cast<double>(options_.blocks)));
}

std::uint64_t KvBlockManager::blocks_for(std::uint64_t tokens) const {
  return (tokens + options_.block_tokens - 1) / options_.block_tokens;
}

bool KvBlockManager::can_admit(std::uint64_t tokens) const {
  return blocks_for(tokens) + reserve_ <= blocks_free();
}

const KvBlockManager::Seq& KvBlockManager::at(std::uint64_t seq, const char* call) const {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end())
    throw std::logic_error(std::string("KvBlockManager::") + call + ": sequence " + std::to_string(seq) +
                           (swapped_.count(seq) ? " is swapped out" : " has no blocks"));
  return it->second;
}

void KvBlockManager::give_back(const std::vector<std::uint64_t>& blocks) {
  for (std::uint64_t b : blocks) returned_.insert(b);
  used_blocks_ -= blocks.size();
}

std::uint64_t KvBlockManager::take() {
  // The lowest free block: a returned one (all below fresh_) or the next never used.
  std::uint64_t b = fresh_;
  if (!returned_.empty()) {
    b = *returned_.begin();
    returned_.erase(returned_.begin());
  } else {
    ++fresh_;
  }
  ++used_blocks_;
  allocations_.inc();
  return b;
}

void KvBlockManager::admit(std::uint64_t seq, std::uint64_t tokens) {
  if (seqs_.count(seq) || swapped_.count(seq))
    throw std::logic_error("KvBlockManager::admit: sequence " + std::to_string(seq) + " is already admitted");
  const std::uint64_t need = blocks_for(tokens);
  if (need > blocks_free())
    throw std::logic_error("KvBlockManager::admit: sequence " + std::to_string(seq) + " needs " + std::to_string(need) +
                           " blocks; free: " + std::to_string(blocks_free()));
  Seq s;
  s.tokens = tokens;
  for (std::uint64_t i = 0; i < need; ++i) s.blocks.push_back(take());
  seqs_.emplace(seq, std::move(s));
  used_.set(static_cast<double>(blocks_used()));
}

bool KvBlockManager::append(std::uint64_t seq) {
  Seq& s = at(seq, "append");
  if (s.tokens % options_.block_tokens == 0 && s.tokens / options_.block_tokens == s.blocks.size()) {
    if (blocks_free() == 0) return false;
    s.blocks.push_back(take());
    used_.set(static_cast<double>(blocks_used()));
  }
  ++s.tokens;
  return true;
}

void KvBlockManager::release(std::uint64_t seq, bool preempted) {
  Seq& s = at(seq, "release");
  give_back(s.blocks);
  seqs_.erase(seq);
  if (preempted) preemptions_.inc();
  used_.set(static_cast<double>(blocks_used()));
}

std::uint64_t KvBlockManager::swap_out(std::uint64_t seq) {
  Seq& s = at(seq, "swap_out");
  const std::uint64_t bytes = s.blocks.size() * options_.block_bytes;
  swapped_.emplace(seq, s.tokens);
  give_back(s.blocks);
  seqs_.erase(seq);
  preemptions_.inc();
  swapped_out_bytes_.inc(bytes);
  used_.set(static_cast<double>(blocks_used()));
  return bytes;
}

bool KvBlockManager::can_swap_in(std::uint64_t seq) const {
  const auto it = swapped_.find(seq);
  return it != swapped_.end() && blocks_for(it->second) <= blocks_free();
}

std::uint64_t KvBlockManager::swap_in(std::uint64_t seq) {
  const auto it = swapped_.find(seq);
  if (it == swapped_.end())
    throw std::logic_error("KvBlockManager::swap_in: sequence " + std::to_string(seq) + " is not swapped out");
  const std::uint64_t tokens = it->second;
  const std::uint64_t need = blocks_for(tokens);
  if (need > blocks_free())
    throw std::logic_error("KvBlockManager::swap_in: sequence " + std::to_string(seq) + " needs " +
                           std::to_string(need) + " blocks; free: " + std::to_string(blocks_free()));
  swapped_.erase(it);
  Seq s;
  s.tokens = tokens;
  for (std::uint64_t i = 0; i < need; ++i) s.blocks.push_back(take());
  const std::uint64_t bytes = need * options_.block_bytes;
  seqs_.emplace(seq, std::move(s));
  swapped_in_bytes_.inc(bytes);
  used_.set(static_cast<double>(blocks_used()));
  return bytes;
}

const std::vector<std::uint64_t>& KvBlockManager::table(std::uint64_t seq) const {
  return at(seq, "table").blocks;
}

std::uint64_t KvBlockManager::tokens(std::uint64_t seq) const {
  const auto it = seqs_.find(seq);
  if (it != seqs_.end()) return it->second.tokens;
  const auto sw = swapped_.find(seq);
  if (sw != swapped_.end()) return sw->second;
  throw std::logic_error("KvBlockManager::tokens: sequence " + std::to_string(seq) + " is unknown");
}

}  // namespace sohusim::workloads
