#include "binary_cache.hpp"

#include <utility>

#include "candidate_provider.hpp"
#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "log.hpp"
#include "row_split.hpp"

namespace tilemm::dispatch {
namespace {

// The SHA-256 of the template `v` is compiled from: part of the key of its stored CUBIN.
std::string template_hash_of(const Variant& v) {
  return std::string(detail::template_of(v).sha256);
}

std::string unusable_cubin_warning(const Variant& v) {
  return "cached CUBIN of " + variant_name(v) + " unusable, recompiling";
}

}  // namespace

Decision BinaryCache::decision_for(const DeviceInfo& device, const std::string& winner) {
  if (const auto rows = detail::parse_row_split(winner)) return {nullptr, false, *rows};
  if (detail::CandidateProvider* provider = detail::provider_of(winner))
    return {nullptr, false, 0, false, &provider->prepare(winner, device)};
  return {&load(device, parse_variant(winner)), false};
}

const detail::LoadedKernel& BinaryCache::load(const DeviceInfo& device, const Variant& v) {
  if (const auto* loaded = loader_.find_loaded(device, v)) return *loaded;
  if (const auto image = stored(device, v)) {
    try {
      return loader_.load(device, v, *image);
    } catch (const Error& e) {  // a damaged or swapped image: compiled and replaced below
      detail::log(detail::LogLevel::warn, unusable_cubin_warning(v) + ": " + e.what());
    }
  }
  const auto compiled = loader_.compile(v, device.arch());
  save(device, compiled);
  return loader_.load(device, v, compiled.cubin);
}

detail::CompiledVariant BinaryCache::candidate_binary(const DeviceInfo& device, const Variant& v) {
  if (auto image = stored(device, v)) {
    detail::CompiledVariant from_store;  // compile_ms 0: nothing compiled
    from_store.name = variant_name(v);
    from_store.arch = device.arch();
    from_store.template_hash = template_hash_of(v);
    from_store.cubin = std::move(*image);
    return from_store;
  }
  detail::CompiledVariant compiled = loader_.compile(v, device.arch());
  save(device, compiled);
  return compiled;
}

detail::BackgroundCompile BinaryCache::start_candidate_compile(const DeviceInfo& device,
                                                              const Variant& v) {
  if (has_stored(device, v)) return detail::already_compiled();
  return loader_.start_compile(v, device.arch());
}

std::optional<std::vector<char>> BinaryCache::stored(const DeviceInfo& device, const Variant& v) {
  return store_.with(unusable_cubin_warning(v), std::optional<std::vector<char>>{},
                     [&](ResultStore& store) -> std::optional<std::vector<char>> {
                       // A shared cache's CUBIN may be anyone's code (cache_trust.hpp).
                       if (!store.loads_stored_code()) return std::nullopt;
                       return store.find_cubin(device.arch(), device.nvrtc_version,
                                               template_hash_of(v), variant_name(v));
                     });
}

bool BinaryCache::has_stored(const DeviceInfo& device, const Variant& v) {
  return store_.with(unusable_cubin_warning(v), false, [&](ResultStore& store) {
    return store.loads_stored_code() &&
           store.has_cubin(device.arch(), device.nvrtc_version, template_hash_of(v), variant_name(v));
  });
}

void BinaryCache::save(const DeviceInfo& device, const detail::CompiledVariant& compiled) {
  store_.with("could not store a CUBIN", false, [&](ResultStore& store) {
    // A shared cache gets no CUBINs: no process loads them from it.
    if (store.loads_stored_code()) store.put_cubin(compiled, device.arch(), device.nvrtc_version);
    return true;
  });
}

}  // namespace tilemm::dispatch
