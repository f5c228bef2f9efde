#include "lease_group.hpp"

#include <utility>

namespace tilemm::dispatch {

std::unique_ptr<HeldLeases> HeldLeases::try_take(std::vector<LeaseHolder> holders,
                                                 std::chrono::milliseconds renew_every) {
  for (std::size_t i = 0; i < holders.size(); ++i) {
    if (holders[i].take()) continue;
    for (std::size_t j = i; j-- > 0;) holders[j].release();
    return nullptr;
  }
  return std::unique_ptr<HeldLeases>(new HeldLeases(std::move(holders), renew_every));
}

HeldLeases::HeldLeases(std::vector<LeaseHolder> holders, std::chrono::milliseconds renew_every)
    : holders_(std::move(holders)) {
  renewer_ = std::thread([this, renew_every] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_signal_.wait_for(lock, renew_every, [this] { return stop_; }))
      for (const auto& h : holders_)
        if (h.renew) h.renew();
  });
}

HeldLeases::~HeldLeases() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_signal_.notify_all();
  renewer_.join();
  for (std::size_t j = holders_.size(); j-- > 0;) holders_[j].release();
}

}  // namespace tilemm::dispatch
