// The variants this process has compiled, kept by (architecture, variant name): a tuning of a
// second shape reuses the CUBINs of the first instead of running NVRTC again for every candidate.
// The template hash and the NVRTC version cannot change within a process, so the two names are
// the whole key. Failed compilations are not kept (each request retries and rethrows).
#pragma once

#include <string>

#include "nvrtc_compiler.hpp"

namespace tilemm::detail {

// compile_variant(v, arch) the first time in this process, the kept result (compile_ms 0: no
// compilation ran) every later time. Thread-safe; concurrent first requests of one variant
// compile it once. Holds every CUBIN it returned for the life of the process (one per variant
// and architecture, a bounded set).
CompiledVariant compile_variant_once(const Variant& v, const std::string& arch);

}  // namespace tilemm::detail
