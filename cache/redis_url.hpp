// The address of a fleet's Redis store: redis://[user:password@]host:port[/db].
#pragma once

#include <string>

namespace tilemm::cache {

struct RedisUrl {
  std::string host;
  int port = 6379;
  std::string user;      // empty: AUTH with the password alone (Redis before ACLs), or no AUTH
  std::string password;  // empty: no AUTH
  int db = 0;

  // The URL without its password ("redis://user:***@host:port/db"), for messages and logs.
  std::string redacted() const;
};

// Parses `url`. User and password may be percent-encoded (%40 for '@'). Throws
// tilemm::InvalidArgument("remote cache URL") saying what is wrong, without the password.
// Cost: string work only.
RedisUrl parse_redis_url(const std::string& url);

}  // namespace tilemm::cache
