// Which of the callers' gemm() launches a background tuning could have overlapped: per device,
// how many launches started and how many finished launching (host side). A background worker
// takes a mark when no launch is in progress, waits for the device to finish what was queued
// (src/dispatch/quiet_timing.hpp), times, and keeps the timing only if no launch started since.
#pragma once

#include <cstdint>
#include <optional>

namespace tilemm::detail {

// Counts one caller's launch on device `ordinal` while it lives: around the launch call itself,
// never around a tuning (a tuning on the caller's thread would then wait for itself). Cost: two
// atomic increments. Ordinals outside [0, kMaxActivityOrdinals) are not counted.
class CallerLaunch {
 public:
  explicit CallerLaunch(int ordinal);
  ~CallerLaunch();
  CallerLaunch(const CallerLaunch&) = delete;
  CallerLaunch& operator=(const CallerLaunch&) = delete;

 private:
  int ordinal_;
};

inline constexpr int kMaxActivityOrdinals = 256;

// The number of launches started on `ordinal` so far, if every one of them has finished
// launching; nullopt while a launch is in progress (or for an ordinal that is not counted).
std::optional<std::uint64_t> quiet_launch_mark(int ordinal);

// Whether a launch started on `ordinal` since quiet_launch_mark returned `mark`.
bool launched_since(int ordinal, std::uint64_t mark);

}  // namespace tilemm::detail
