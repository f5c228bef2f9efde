// The fleet's shared store of results as the dispatcher reaches it (docs/fleet.md): an interface,
// so that the fleet's logic is tested on the CPU with fakes (tests/dispatch_fakes.hpp); the real one
// is Redis (redis_remote_store.hpp). Results only, never code.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilemm/autotune.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

// Never throws: a store that cannot be reached answers as one that holds nothing and says so once
// per process; a value that is not a valid entry of its key is refused with a warning and never
// returned.
class RemoteStore {
 public:
  virtual ~RemoteStore() = default;
  // The entry of this key and candidate set with its candidates, validated; nullopt when there
  // is none.
  virtual std::optional<cache::StoredEntry> find(const std::string& device_key, const Problem& p,
                                                 const std::string& problem_class,
                                                 cache::CandidateSet set) = 0;
  virtual void publish(const std::vector<cache::StoredEntry>& entries) = 0;
  // True when `owner` holds the fleet's lease on `key` afterwards, and when the store cannot be
  // reached (then the local lease alone decides who tunes).
  virtual bool try_acquire_lease(const std::string& key, const std::string& owner,
                                 double ttl_seconds) = 0;
  virtual void renew_lease(const std::string& key, const std::string& owner, double ttl_seconds) = 0;
  virtual void release_lease(const std::string& key, const std::string& owner) = 0;
};

// Opens the store a URL names (Options::remote_cache); throws InvalidArgument for a URL it
// cannot use.
using RemoteOpener = std::function<std::unique_ptr<RemoteStore>(const std::string& url)>;

}  // namespace tilemm::dispatch
