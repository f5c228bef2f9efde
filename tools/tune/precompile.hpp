// tilemm-tune --precompile: compiles every variant of the space for the GPUs present (or the
// architectures given) into the cache's CUBIN store, ahead of any tuning, so that later tunings
// on this machine compile nothing (docs/tuning.md, compile once per machine).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace tilemm::cli {

// Compiles, for each architecture of `archs` ("sm_90"; empty: those of the GPUs present), every
// variant that builds for it and is not stored yet, on all host threads, and stores each CUBIN in
// the cache at `path` as it is done. Shows progress on `err` when `progress` is set; prints how
// many variants were compiled, how long it took and what the CUBINs cost on disk. Exit code: 0;
// 1 with one error line when there is neither a GPU nor an architecture given, when the cache is
// shared (its CUBINs are never loaded, so storing them would be in vain), or when a variant fails
// to compile (the others are stored).
int precompile_command(const std::string& path, const std::vector<std::string>& archs,
                       std::ostream& out, std::ostream& err, bool progress);

}  // namespace tilemm::cli
