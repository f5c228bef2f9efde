// The address of a fleet's Redis store: redis://[user:password@]host:port[/db]. String work only,
// in the lowest layer because Options' default (TILEMM_REMOTE_CACHE) is checked with it; the
// cache layer's Redis client (cache/redis_connection.hpp) connects to what it names.
#pragma once

#include <string>

namespace tilemm::detail {

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

}  // namespace tilemm::detail
