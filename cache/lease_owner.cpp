#include "lease_owner.hpp"

#include <unistd.h>

namespace tilemm::cache {

std::string process_lease_owner() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

}  // namespace tilemm::cache
