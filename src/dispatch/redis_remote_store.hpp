// The fleet's store on Redis behind the dispatcher's RemoteStore: what a failure costs a call.
// A call waits at most the timeout per operation; after a failure the store is not asked again
// for a back-off that doubles up to a limit, so that a dead Redis does not cost every miss a
// timeout; the first failure warns once per process, and the first success after it says the
// store is back (at info). Values that are not valid entries are refused with one warning each.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "remote_store.hpp"

namespace tilemm::dispatch {

struct RemoteTimes {
  std::chrono::milliseconds timeout{50};  // connect, and each command's wait
  std::chrono::milliseconds first_retry{500};
  std::chrono::milliseconds max_retry{8000};
};

// TILEMM_REMOTE_TIMEOUT_MS when it is a whole number of milliseconds in [1, 60000], else 50
// (another value is reported once as a warning). Read once per process.
std::chrono::milliseconds remote_timeout_from_environment();

// Opens the store `url` names (connecting on first use). Throws InvalidArgument("remote cache
// URL") when the URL cannot be read.
std::unique_ptr<RemoteStore> open_redis_store(const std::string& url, RemoteTimes times);

}  // namespace tilemm::dispatch
