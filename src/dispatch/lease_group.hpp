// A tuning lease held in several places at once: the local SQLite store (the processes of one
// machine) and the fleet's Redis store (the machines of a fleet). Taken in all or in none, renewed
// while held, released after: one generalization of the lease, whatever stores hold it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tilemm::dispatch {

// One store's lease on one key, for one owner. `take` is true when the owner holds it afterwards;
// `renew` may be empty (a lease that outlasts any tuning).
struct LeaseHolder {
  std::function<bool()> take;
  std::function<void()> renew;
  std::function<void()> release;
};

class HeldLeases {
 public:
  // Takes the holders' leases in order; when one is refused, releases those taken and returns
  // null. While held, a thread renews them every `renew_every`.
  static std::unique_ptr<HeldLeases> try_take(std::vector<LeaseHolder> holders,
                                              std::chrono::milliseconds renew_every);
  // Stops renewing, then releases in reverse order.
  ~HeldLeases();
  HeldLeases(const HeldLeases&) = delete;
  HeldLeases& operator=(const HeldLeases&) = delete;

 private:
  HeldLeases(std::vector<LeaseHolder> holders, std::chrono::milliseconds renew_every);

  std::vector<LeaseHolder> holders_;
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stop_ = false;
  std::thread renewer_;
};

}  // namespace tilemm::dispatch
