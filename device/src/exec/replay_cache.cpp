#include "sohusim/device/exec/replay_cache.hpp"

#include "sohusim/device/sohu_device.hpp"

namespace sohusim::device {

void ReplayCache::evict_oldest() {
  const std::vector<std::uint32_t> oldest = std::move(order_.front());
  order_.pop_front();
  const auto it = records_.find(oldest);
  if (it == records_.end()) return;
  increments_ -= it->second.increments.size();
  records_.erase(it);
}

void share_replays(const std::vector<SohuDevice*>& devices) {
  std::map<std::string, std::shared_ptr<ReplayCache>> by_config;
  for (SohuDevice* d : devices) {
    std::shared_ptr<ReplayCache>& cache = by_config[d->config_key()];
    if (!cache) cache = std::make_shared<ReplayCache>();
    d->executor().share_replays(cache);
  }
}

}  // namespace sohusim::device
