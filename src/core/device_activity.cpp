#include "device_activity.hpp"

#include <atomic>

namespace tilemm::detail {
namespace {

struct Counters {
  std::atomic<std::uint64_t> started{0};
  std::atomic<std::uint64_t> finished{0};
};

// Never destroyed: a caller may launch during static destruction. Each device's counters on a
// cache line of their own, so that callers on different devices do not share one.
struct alignas(64) PaddedCounters {
  Counters c;
};
PaddedCounters* counters() {
  static auto* all = new PaddedCounters[kMaxActivityOrdinals];
  return all;
}

Counters* counters_of(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxActivityOrdinals) return nullptr;
  return &counters()[ordinal].c;
}

}  // namespace

CallerLaunch::CallerLaunch(int ordinal) : ordinal_(ordinal) {
  if (Counters* c = counters_of(ordinal_)) c->started.fetch_add(1);
}

CallerLaunch::~CallerLaunch() {
  if (Counters* c = counters_of(ordinal_)) c->finished.fetch_add(1);
}

// Started is read before finished: a launch that starts after the first read makes the mark
// stale, which launched_since() then reports, so finished == started means every launch counted
// in the mark has been handed to the driver.
std::optional<std::uint64_t> quiet_launch_mark(int ordinal) {
  Counters* c = counters_of(ordinal);
  if (c == nullptr) return std::nullopt;
  const std::uint64_t started = c->started.load();
  if (c->finished.load() != started) return std::nullopt;
  return started;
}

bool launched_since(int ordinal, std::uint64_t mark) {
  const Counters* c = counters_of(ordinal);
  return c == nullptr || c->started.load() != mark;
}

}  // namespace tilemm::detail
