// Times lookups in a large fleet store the way a node's dispatcher makes them: GET of the
// shape's key and the validation of its value (redis_remote_store.hpp). The store is filled
// beforehand with the entries of scripts/make-import-file.py:
//   scripts/make-import-file.py 200000 > big.json
//   build/tilemm-tune --import big.json --remote redis://127.0.0.1:PORT
//   build/bench/tilemm-fleet-lookup-bench --remote redis://127.0.0.1:PORT --entries 200000
// Prints the store's size and the lookup time's median, 99th percentile and maximum.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <vector>

#include "redis_connection.hpp"
#include "redis_remote_store.hpp"
#include "redis_url.hpp"
#include "tilemm/error.hpp"
#include "tool_conventions.hpp"

int main(int argc, char** argv) {
  using namespace tilemm;
  tool::ToolCli cli("tilemm-fleet-lookup-bench",
                    "Times lookups in a fleet store filled from scripts/make-import-file.py, as a "
                    "node's dispatcher makes them (GET and validation).\n",
                    std::cout, std::cerr);
  std::string url;
  long long entries = 200000;
  int lookups = 10000;
  cli.app().add_option("--remote", url, "The store, redis://[user:password@]host:port[/db]")
      ->option_text("URL")->required();
  cli.app().add_option("--entries", entries, "How many entries make-import-file.py wrote (default: 200000)")
      ->option_text("N")->check(tool::integer_between(1, 100000000));
  cli.app().add_option("--lookups", lookups, "How many random lookups to time (default: 10000)")
      ->option_text("N")->check(tool::integer_between(1, 10000000));
  cli.set_usage("tilemm-fleet-lookup-bench --remote URL [--entries N] [--lookups N]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-fleet-lookup-bench --remote redis://127.0.0.1:6390 --entries 200000\n"
      "\n"
      "Needs no GPU. Exit 1 also when a lookup found nothing (the store lacks the entries).\n"
      "\n" + tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  try {
    detail::parse_redis_url(url);
  } catch (const InvalidArgument& e) {
    return cli.usage_error("--remote: " + tool::without_library_prefix(e.what()));
  }
  return cli.run([&] {
    cache::RedisConnection admin(detail::parse_redis_url(url), std::chrono::milliseconds(2000));
    const long long size = admin.command({"DBSIZE"}).integer();
    dispatch::RemoteTimes times;  // the call path's: 50 ms per operation
    auto store = dispatch::open_redis_store(url, times);
    std::mt19937_64 random(7);
    std::vector<double> us;
    int found = 0;
    for (int i = 0; i < lookups; ++i) {
      const long long index = static_cast<long long>(random() % static_cast<unsigned long long>(entries));
      const Problem p = Problem::dense(1 + index, 64 + index % 4096, 128, 4);
      const auto start = std::chrono::steady_clock::now();
      // make-import-file.py names every entry a4-dense, whatever its N.
      const auto entry = store->find("NVIDIA H200|sm_90|132sm|143771MiB", p, "a4-dense",
                                     cache::CandidateSet::with_vendor);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      found += entry.has_value();
    }
    std::sort(us.begin(), us.end());
    std::printf("store keys %lld, lookups %d, found %d\n", size, lookups, found);
    std::printf("lookup us: median %.1f, p99 %.1f, max %.1f\n", us[us.size() / 2],
                us[us.size() * 99 / 100], us.back());
    if (found != lookups) return cli.failure(std::to_string(lookups - found) + " lookups found nothing");
    return tool::kSuccess;
  });
}
