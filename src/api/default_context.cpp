// The default context of the free functions (tilemm/context.hpp), and where the cache lives
// when nothing names it.
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "tilemm/context.hpp"
#include "tilemm/error.hpp"

namespace tilemm {

namespace {

struct DefaultContext {
  std::mutex mutex;
  std::optional<ContextSettings> configured;
  Context* made = nullptr;  // never destroyed: used until the very end of the process
};

DefaultContext& state() {
  static auto* s = new DefaultContext();
  return *s;
}

}  // namespace

Context& default_context() {
  DefaultContext& s = state();
  // A lock per call would cost every gemm(): once made, the pointer never changes.
  static Context* const made = [&s] {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto settings = std::make_unique<ContextSettings>();  // the environment's, unless configured
    if (s.configured) *settings = std::move(*s.configured);
    s.made = new Context(std::move(*settings));
    return s.made;
  }();
  return *made;
}

void configure_default_context(ContextSettings settings) {
  DefaultContext& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.made != nullptr)
    throw InvalidArgument("configure_default_context",
                          "the default context is in use already; configure it before the first "
                          "call into the library");
  s.configured = std::move(settings);
}

std::string cache_path() {
  DefaultContext& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.made != nullptr) return s.made->cache_path();
  if (s.configured && !s.configured->cache_path.empty()) return s.configured->cache_path;
  return cache_path_from_environment();
}

std::string cache_path_from_environment() {
  if (const char* explicit_path = std::getenv("TILEMM_CACHE"); explicit_path && *explicit_path)
    return explicit_path;
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = std::string(home) + "/.cache";
  else
    base = ".cache";
  return base + "/tilemm/tuning.db";
}

}  // namespace tilemm
