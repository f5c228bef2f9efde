// The dispatcher's side of the fleet's store (docs/fleet.md): which store a call names (opened
// once per URL), a fresh and usable entry of it copied into the local cache, and the publication
// of what this process tuned. The store's own failures are its own (redis_remote_store.hpp):
// they never reach this part.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "guarded_store.hpp"
#include "remote_store.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/device.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

class FleetResults {
 public:
  // `open` empty: no fleet store, whatever a call names.
  FleetResults(GuardedStore& store, RemoteOpener open) : store_(store), open_(std::move(open)) {}

  // The store `url` names, opened on first use; null for "" (none). A URL that cannot be used
  // throws InvalidArgument on every lookup that names it: a caller's mistake.
  RemoteStore* remote_for(const std::string& url);
  // A fresh entry of the fleet's store, of a candidate set that serves `problem` (asked for in
  // the order of sets_serving, provenance.hpp), whose winner can serve it here, copied into the
  // local cache (its source "imported": another machine's measurement); nullopt for none.
  std::optional<cache::StoredEntry> usable_entry(const DeviceInfo& device, const Problem& problem,
                                                 const Options& options);
  // Publishes a tuning's entries to the store the call names, if any.
  void publish(const Options& options, const std::vector<cache::StoredEntry>& entries);

 private:
  GuardedStore& store_;
  RemoteOpener open_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<RemoteStore>> remotes_;
};

}  // namespace tilemm::dispatch
