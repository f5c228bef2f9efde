// The kernels of winners and candidates: loaded in this process, else the store's CUBIN (where
// the store's code may be loaded: cache_trust.hpp), else compiled by NVRTC and stored, so that a
// machine compiles each variant once whatever the shape and the process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collaborators.hpp"
#include "decision.hpp"
#include "guarded_store.hpp"
#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::dispatch {

class BinaryCache {
 public:
  BinaryCache(GuardedStore& store, KernelLoader& loader) : store_(store), loader_(loader) {}

  // `v` loaded for `device`: already in memory, else its stored CUBIN, else NVRTC (and the CUBIN
  // goes into the store for the next process). A stored CUBIN that fails to load is warned
  // about and compiled again.
  const detail::LoadedKernel& load(const DeviceInfo& device, const Variant& v);
  // What gemm() runs for a winner's name: its kernel, loaded, or a row-split plan, whose parts
  // gemm() dispatches as shapes of their own.
  Decision decision_for(const DeviceInfo& device, const std::string& winner);
  // A candidate's CUBIN for a tuning: the store's, else compiled and stored (not with a shared
  // store, whose CUBINs are neither loaded nor written).
  detail::CompiledVariant candidate_binary(const DeviceInfo& device, const Variant& v);
  // Starts compiling a candidate on the process's compilers, unless the store has its CUBIN:
  // candidate_binary then has it at hand.
  detail::BackgroundCompile start_candidate_compile(const DeviceInfo& device, const Variant& v);
  // Puts a compiled variant into the store, unless the store is shared; a failure warns.
  void save(const DeviceInfo& device, const detail::CompiledVariant& compiled);

 private:
  // The store's CUBIN of `v` for `device`: none where the store's code may not be loaded or it
  // holds none; a store failure warns and counts as none.
  std::optional<std::vector<char>> stored(const DeviceInfo& device, const Variant& v);
  // Whether stored(device, v) would find one, without reading it.
  bool has_stored(const DeviceInfo& device, const Variant& v);

  GuardedStore& store_;
  KernelLoader& loader_;
};

}  // namespace tilemm::dispatch
