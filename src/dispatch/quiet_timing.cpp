#include "quiet_timing.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include "device_activity.hpp"
#include "tune_hooks.hpp"

namespace tilemm::dispatch {

QuietSampler::QuietSampler(int ordinal, std::function<void()> drain,
                           std::function<bool()> stop_requested, QuietRetry retry)
    : ordinal_(ordinal),
      drain_(std::move(drain)),
      stop_requested_(std::move(stop_requested)),
      retry_(retry) {}

void QuietSampler::wait_or_stop(int attempt) {
  if (stop_requested_ && stop_requested_()) throw detail::TuningStopped();
  if (attempt < retry_.immediate) return;
  const int doublings = std::min(attempt - retry_.immediate, 20);
  const std::chrono::microseconds wait =
      std::min<std::chrono::microseconds>(retry_.first_wait * (1 << doublings), retry_.longest_wait);
  std::this_thread::sleep_for(wait);
  if (stop_requested_ && stop_requested_()) throw detail::TuningStopped();
}

std::vector<float> QuietSampler::operator()(const std::function<std::vector<float>()>& take) {
  if (ordinal_ < 0 || ordinal_ >= detail::kMaxActivityOrdinals) return take();  // not counted
  for (int attempt = 0;; ++attempt) {
    wait_or_stop(attempt);
    const auto mark = detail::quiet_launch_mark(ordinal_);
    if (!mark) continue;  // a caller is launching right now
    if (drain_) drain_();
    std::vector<float> sample = take();
    if (!detail::launched_since(ordinal_, *mark)) return sample;
    ++discarded_;
  }
}

}  // namespace tilemm::dispatch
