#include "resolution.hpp"

namespace tilemm::dispatch {

bool may_answer(Source source, const Call& call) {
  switch (source) {
    case Source::memory: return !call.wants_result;
    case Source::cache:
    case Source::remote:
    case Source::preloaded: return !call.force;
    case Source::tuning: return call.policy == TunePolicy::tune_on_miss;
    case Source::fallback: return call.policy != TunePolicy::tune_on_miss;
  }
  return false;
}

const char* to_string(Source source) {
  switch (source) {
    case Source::memory: return "memory";
    case Source::cache: return "cache";
    case Source::remote: return "remote";
    case Source::preloaded: return "preloaded";
    case Source::tuning: return "tuning";
    case Source::fallback: return "fallback";
  }
  return "unknown";
}

}  // namespace tilemm::dispatch
