#include "redis_url.hpp"

#include <cctype>

#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

constexpr const char* kArgument = "remote cache URL";
constexpr const char* kForm = " (expected redis://[user:password@]host:port[/db])";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(const std::string& text, const char* what) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || hex_digit(text[i + 1]) < 0 || hex_digit(text[i + 2]) < 0)
      throw InvalidArgument(kArgument, std::string("has a bad percent escape in its ") + what + kForm);
    const int hi = hex_digit(text[i + 1]);
    out += static_cast<char>(hi * 16 + hex_digit(text[i + 2]));
    i += 2;
  }
  return out;
}

int number(const std::string& text, int lo, int hi, const char* what) {
  if (text.empty() || text.size() > 5 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoi(text) < lo ||
      std::stoi(text) > hi)
    throw InvalidArgument(kArgument, std::string("has a bad ") + what + " '" + text + "'" + kForm);
  return std::stoi(text);
}

}  // namespace

std::string RedisUrl::redacted() const {
  std::string auth;
  if (!user.empty() || !password.empty()) auth = user + (password.empty() ? "" : ":***") + "@";
  return "redis://" + auth + host + ":" + std::to_string(port) + "/" + std::to_string(db);
}

RedisUrl parse_redis_url(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0)
    throw InvalidArgument(kArgument, "must start with redis://" + std::string(kForm));
  std::string rest = url.substr(scheme.size());
  RedisUrl parsed;
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = auth.find(':');
    parsed.user = percent_decoded(auth.substr(0, colon), "user");
    if (colon != std::string::npos) parsed.password = percent_decoded(auth.substr(colon + 1), "password");
  }
  std::string address = rest;
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    address = rest.substr(0, slash);
    const std::string db = rest.substr(slash + 1);
    if (!db.empty()) parsed.db = number(db, 0, 65535, "database number");
  }
  const auto colon = address.rfind(':');
  if (colon == std::string::npos)
    throw InvalidArgument(kArgument, "must name a port" + std::string(kForm));
  parsed.host = address.substr(0, colon);
  if (parsed.host.empty()) throw InvalidArgument(kArgument, "must name a host" + std::string(kForm));
  for (const char c : parsed.host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      throw InvalidArgument(kArgument, "has a bad host '" + parsed.host + "'" + kForm);
  parsed.port = number(address.substr(colon + 1), 1, 65535, "port");
  return parsed;
}

}  // namespace tilemm::detail
