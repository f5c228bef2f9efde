// Who holds a tuning lease (TuningStore::try_acquire_lease): one name per process.
#pragma once

#include <string>

namespace tilemm::cache {

// "<host name>:<process id>" of the calling process, so that a lease names the process that
// tunes. Cost: one gethostname() call; a host name that cannot be read is left empty.
std::string process_lease_owner();

}  // namespace tilemm::cache
