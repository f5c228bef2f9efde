// The resolution order, written once: the sources that may answer "what runs this shape?", in
// the order they are asked. gemm() (a Decision) and autotune() (an AutotuneResult) walk the
// same list; the first source that may answer a call and has an answer serves it.
#pragma once

#include <array>

#include "tilemm/autotune.hpp"
#include "tune_hooks.hpp"

namespace tilemm::dispatch {

enum class Source {
  memory,     // this process's decision for the shape (gemm() only: it holds no candidates)
  cache,      // a fresh, usable entry of the SQLite cache (tuned here or imported)
  remote,     // a fresh, usable entry of the fleet's Redis store, copied into the SQLite cache
  preloaded,  // a usable preloaded entry of this device model, else architecture
  tuning,     // tune now (under the cross-process lease)
  fallback,   // nearest tuned shape's winner, else the default variant (background: queued too)
};

inline constexpr std::array<Source, 6> kResolutionOrder = {
    Source::memory,    Source::cache,  Source::remote,
    Source::preloaded, Source::tuning, Source::fallback};

// What a call asks for.
struct Call {
  TunePolicy policy = TunePolicy::tune_on_miss;
  bool force = false;         // autotune(): re-tune even when a fresh result exists
  bool wants_result = false;  // autotune(): a result with its candidates, not just a decision
  const detail::TuneHooks* hooks = nullptr;  // go with a tuning the call starts; may be null
};

// Which sources may answer `call` (the provenance part of the policy; freshness and usability of
// what a source holds are provenance.hpp's): memory only for gemm(); the cache, the fleet's
// store (where the call names one) and the preloaded results unless forced; tuning only under tune_on_miss, the fallback under off and background
// (which also queues the shape for its worker). The memory holds a fallback only until a call
// may tune or queue a tuning (resolves_again in dispatcher.hpp).
bool may_answer(Source source, const Call& call);

const char* to_string(Source source);

}  // namespace tilemm::dispatch
