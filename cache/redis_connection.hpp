// RAII over one hiredis connection: connect, AUTH and SELECT under a timeout, and commands whose
// every failure is a tilemm::Error naming the command and Redis's or hiredis's message.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis_url.hpp"
#include "tilemm/error.hpp"

struct redisContext;
struct redisReply;

namespace tilemm::cache {

// The URL is parsed in the lowest layer (redis_url.hpp); the client names it as its own.
using detail::parse_redis_url;
using detail::RedisUrl;

// One reply, freed with it. Only the kinds tilemm reads are exposed.
class RedisReply {
 public:
  explicit RedisReply(redisReply* reply);
  bool is_nil() const;
  bool is_string() const;   // a bulk or status string
  bool is_integer() const;
  bool is_array() const;
  std::string text() const;  // a string reply's bytes
  long long integer() const;
  std::size_t size() const;  // an array's elements
  // Element `i` of an array, owned by this reply.
  const redisReply* element(std::size_t i) const;
  static std::string text_of(const redisReply* element);
  static bool is_nil(const redisReply* element);

 private:
  struct Free {
    void operator()(redisReply* r) const;
  };
  std::unique_ptr<redisReply, Free> reply_;
};

// An error reply from the server: the command was read and refused (WRONGTYPE, NOAUTH, ...),
// and the connection stays usable. reply() is Redis's message.
class RedisErrorReply : public Error {
 public:
  RedisErrorReply(const std::string& what, std::string reply)
      : Error(ErrorKind::cache, what), reply_(std::move(reply)) {}
  const std::string& reply() const { return reply_; }

 private:
  std::string reply_;
};

class RedisConnection {
 public:
  // Connects to `url` within `timeout`, which then bounds every command's wait too; sends AUTH
  // (when the URL has a password) and SELECT (db != 0). Throws tilemm::Error (kind cache):
  // "redisConnectWithTimeout <host:port>: <why>", or the AUTH/SELECT reply's error.
  RedisConnection(const RedisUrl& url, std::chrono::milliseconds timeout);
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command and waits for its reply (at most the timeout). Throws tilemm::Error on an
  // I/O error or timeout (the connection is unusable afterwards: broken() is true), and
  // RedisErrorReply on an error reply ("<COMMAND>: <Redis's message>").
  RedisReply command(const std::vector<std::string>& args);
  // Pipelining: queue commands, then read their replies in order (each checked as above).
  void append(const std::vector<std::string>& args);
  RedisReply reply(const std::string& command_name);

  bool broken() const;

 private:
  struct Free {
    void operator()(redisContext* c) const;
  };
  // Owned from the connect on, so that a constructor that throws after it (AUTH refused, SELECT
  // failed) frees it too.
  std::unique_ptr<redisContext, Free> context_;
  std::string address_;
};

}  // namespace tilemm::cache
