#include "redis_connection.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include "tilemm/error.hpp"

namespace tilemm::cache {
namespace {

timeval to_timeval(std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  return tv;
}

// Arguments as hiredis takes them: binary-safe, with their lengths.
struct Argv {
  explicit Argv(const std::vector<std::string>& args) {
    for (const auto& a : args) {
      pointers.push_back(a.data());
      lengths.push_back(a.size());
    }
  }
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
};

}  // namespace

RedisReply::RedisReply(redisReply* reply) : reply_(reply) {}
void RedisReply::Free::operator()(redisReply* r) const { freeReplyObject(r); }
bool RedisReply::is_nil() const { return reply_->type == REDIS_REPLY_NIL; }
bool RedisReply::is_string() const {
  return reply_->type == REDIS_REPLY_STRING || reply_->type == REDIS_REPLY_STATUS;
}
bool RedisReply::is_integer() const { return reply_->type == REDIS_REPLY_INTEGER; }
bool RedisReply::is_array() const { return reply_->type == REDIS_REPLY_ARRAY; }
std::string RedisReply::text() const { return text_of(reply_.get()); }
long long RedisReply::integer() const { return is_integer() ? reply_->integer : 0; }
std::size_t RedisReply::size() const { return is_array() ? reply_->elements : 0; }
const redisReply* RedisReply::element(std::size_t i) const { return reply_->element[i]; }
std::string RedisReply::text_of(const redisReply* r) {
  if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) return {};
  return std::string(r->str, r->len);
}
bool RedisReply::is_nil(const redisReply* r) { return r->type == REDIS_REPLY_NIL; }

RedisConnection::RedisConnection(const RedisUrl& url, std::chrono::milliseconds timeout)
    : address_(url.host + ":" + std::to_string(url.port)) {
  const timeval tv = to_timeval(timeout);
  context_.reset(redisConnectWithTimeout(url.host.c_str(), url.port, tv));
  if (context_ == nullptr)
    throw Error(ErrorKind::cache, "tilemm: redisConnectWithTimeout " + address_ + ": out of memory");
  if (context_->err != 0) {
    const std::string why = context_->errstr;
    throw Error(ErrorKind::cache, "tilemm: redisConnectWithTimeout " + address_ + ": " + why);
  }
  if (redisSetTimeout(context_.get(), tv) != REDIS_OK)
    throw Error(ErrorKind::cache, "tilemm: redisSetTimeout " + address_ + ": failed");
  if (!url.password.empty()) {
    // The password is never part of a message: only the command's name and Redis's answer.
    if (url.user.empty())
      command({"AUTH", url.password});
    else
      command({"AUTH", url.user, url.password});
  }
  if (url.db != 0) command({"SELECT", std::to_string(url.db)});
}

void RedisConnection::Free::operator()(redisContext* c) const { redisFree(c); }

bool RedisConnection::broken() const { return context_ == nullptr || context_->err != 0; }

RedisReply RedisConnection::command(const std::vector<std::string>& args) {
  append(args);
  return reply(args.empty() ? "" : args[0]);
}

void RedisConnection::append(const std::vector<std::string>& args) {
  if (broken()) throw Error(ErrorKind::cache, "tilemm: redis " + address_ + ": connection lost");
  Argv argv(args);
  if (redisAppendCommandArgv(context_.get(), static_cast<int>(args.size()), argv.pointers.data(),
                             argv.lengths.data()) != REDIS_OK)
    throw Error(ErrorKind::cache, "tilemm: redisAppendCommandArgv " + address_ + ": " +
                                      context_->errstr);
}

RedisReply RedisConnection::reply(const std::string& command_name) {
  if (broken()) throw Error(ErrorKind::cache, "tilemm: redis " + address_ + ": connection lost");
  void* raw = nullptr;
  if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr)
    throw Error(ErrorKind::cache, "tilemm: redis " + command_name + " " + address_ + ": " +
                                      (context_->errstr[0] != '\0' ? context_->errstr : "no reply"));
  RedisReply r(static_cast<redisReply*>(raw));
  const auto* rr = static_cast<const redisReply*>(raw);
  if (rr->type == REDIS_REPLY_ERROR) {
    std::string message(rr->str, rr->len);
    throw RedisErrorReply("tilemm: redis " + command_name + " " + address_ + ": " + message,
                          message);
  }
  return r;
}

}  // namespace tilemm::cache
