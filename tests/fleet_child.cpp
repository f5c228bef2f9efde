// Child process of test_fleet_dispatch: one "node" of a fleet on the CPU. It has its own local
// cache (in memory) and a tuner that takes TUNE_MS, shares the Redis store at URL with its
// siblings, asks autotune() for the shape MxNxK and prints how many tunings it ran and where
// its answer came from: "tunings=<n> source=<source> winner=<name>".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dispatch_fakes.hpp"
#include "lease_owner.hpp"
#include "redis_remote_store.hpp"

int main(int argc, char** argv) {
  using namespace tilemm;
  if (argc != 4) {
    std::fprintf(stderr, "usage: fleet_child URL MxNxK TUNE_MS\n");
    return 2;
  }
  long long m = 0, n = 0, k = 0;
  if (std::sscanf(argv[2], "%lldx%lldx%lld", &m, &n, &k) != 3) return 2;
  try {
    dispatch::LeaseTimes times;
    times.poll = std::chrono::milliseconds(20);
    times.remote_lease_seconds = 2.0;
    testing::FleetProcess node(
        cache::process_lease_owner(),
        [](const std::string& url) { return dispatch::open_redis_store(url, dispatch::RemoteTimes{}); },
        std::chrono::milliseconds(std::atol(argv[3])), times);
    const AutotuneResult r = node.autotune(Problem::dense(m, n, k, 4), argv[1]);
    std::printf("tunings=%d source=%s winner=%s\n", node.tuner->tunings.load(), to_string(r.source),
                r.winner.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleet_child: %s\n", e.what());
    return 3;
  }
  return 0;
}
