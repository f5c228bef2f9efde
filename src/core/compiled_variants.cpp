#include "compiled_variants.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace tilemm::detail {
namespace {

struct Slot {
  std::mutex mutex;  // held while the first request compiles
  std::unique_ptr<const CompiledVariant> compiled;
};

std::shared_ptr<Slot> slot_for(const std::string& arch, const std::string& name) {
  // Never destroyed: a background tuning may compile until its worker is stopped at exit, after
  // statics constructed later than the exit handler's registration are gone.
  static auto& mutex = *new std::mutex();
  static auto& slots = *new std::map<std::pair<std::string, std::string>, std::shared_ptr<Slot>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = slots[{arch, name}];
  if (!slot) slot = std::make_shared<Slot>();
  return slot;
}

}  // namespace

CompiledVariant compile_variant_once(const Variant& v, const std::string& arch) {
  const std::shared_ptr<Slot> slot = slot_for(arch, variant_name(v));
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->compiled) {
    CompiledVariant kept = *slot->compiled;
    kept.compile_ms = 0.0;
    return kept;
  }
  CompiledVariant fresh = compile_variant(v, arch);
  slot->compiled = std::make_unique<const CompiledVariant>(fresh);
  return fresh;
}

}  // namespace tilemm::detail
