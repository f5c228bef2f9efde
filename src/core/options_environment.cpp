// The defaults of tilemm::Options read from the environment (TILEMM_TUNE, TILEMM_TUNE_BUDGET_MS,
// TILEMM_PRECISION, TILEMM_VENDOR, TILEMM_REMOTE_CACHE). They live in the lowest layer because
// every layer default-constructs Options.
#include <cmath>
#include <cstdlib>
#include <string>

#include "log.hpp"
#include "redis_url.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/error.hpp"

namespace tilemm {

TunePolicy Options::policy_from_environment() {
  // Read once: every gemm() call without Options default-constructs one.
  static const TunePolicy policy = [] {
    const char* value = std::getenv("TILEMM_TUNE");
    const std::string text = value != nullptr ? value : "";
    if (text == "off") return TunePolicy::off;
    if (text == "background") return TunePolicy::background;
    return TunePolicy::tune_on_miss;
  }();
  return policy;
}

double Options::budget_from_environment() {
  static const double budget = [] {
    const char* value = std::getenv("TILEMM_TUNE_BUDGET_MS");
    if (value == nullptr) return kDefaultTuneBudgetMs;
    char* end = nullptr;
    const double ms = std::strtod(value, &end);
    if (end == value || *end != '\0' || !(ms >= 0) || !std::isfinite(ms)) {
      detail::log(detail::LogLevel::warn, std::string("TILEMM_TUNE_BUDGET_MS='") + value +
                                              "' is not a number of milliseconds >= 0; using " +
                                              std::to_string(static_cast<int>(kDefaultTuneBudgetMs)));
      return kDefaultTuneBudgetMs;
    }
    return ms;
  }();
  return budget;
}

Precision Options::precision_from_environment() {
  static const Precision precision = [] {
    const char* value = std::getenv("TILEMM_PRECISION");
    if (value == nullptr) return Precision::highest;
    if (const auto parsed = parse_precision(value)) return *parsed;
    detail::log(detail::LogLevel::warn, std::string("TILEMM_PRECISION='") + value +
                                            "' is not highest, high or medium; using highest");
    return Precision::highest;
  }();
  return precision;
}

bool Options::vendor_from_environment() {
  static const bool vendor = [] {
    const char* value = std::getenv("TILEMM_VENDOR");
    return value == nullptr || std::string(value) != "off";
  }();
  return vendor;
}

const std::string& Options::remote_cache_from_environment() {
  static const std::string url = [] {
    const char* value = std::getenv("TILEMM_REMOTE_CACHE");
    if (value == nullptr || *value == '\0') return std::string();
    try {
      detail::parse_redis_url(value);
    } catch (const InvalidArgument& e) {
      detail::log(detail::LogLevel::warn, std::string("TILEMM_REMOTE_CACHE is ignored: ") + e.what());
      return std::string();
    }
    return std::string(value);
  }();
  return url;
}

}  // namespace tilemm
