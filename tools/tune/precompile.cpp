#include "precompile.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <ostream>
#include <thread>

#include "compiled_variants.hpp"
#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "store_open.hpp"
#include "tilemm/device.hpp"
#include "tilemm/error.hpp"
#include "tool_conventions.hpp"
#include "tune_cli.hpp"

namespace tilemm::cli {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string mib(std::int64_t bytes) { return fixed(double(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

// The architectures of the GPUs present, each once.
std::vector<std::string> present_archs() {
  std::vector<std::string> archs;
  for (int i = 0; i < device_count(); ++i) {
    if (const cudaError_t s = cudaSetDevice(i); s != cudaSuccess)
      throw Error(ErrorKind::cuda, std::string("cudaSetDevice failed: ") + cudaGetErrorString(s));
    const std::string arch = current_device().arch();
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
  }
  return archs;
}

}  // namespace

int precompile_command(const std::string& path, const std::vector<std::string>& given_archs,
                       std::ostream& out, std::ostream& err, bool progress) {
  const std::vector<std::string> archs = given_archs.empty() ? present_archs() : given_archs;
  if (archs.empty())
    return failure(err, tool::no_device("give --arch sm_XY to precompile for one without it"));
  cache::OpenedStore opened = cache::open_store(path);
  if (!opened.warning.empty()) err << "tilemm-tune: note: " << opened.warning << "\n";
  if (!opened.code_trust.loads_stored_code)
    return failure(err, "the cache '" + path + "' is shared (" + opened.code_trust.reason +
                          "): its CUBINs are never loaded, so precompiling into it would be in vain");
  if (!opened.persistent)
    return failure(err, "the cache '" + path + "' could not be opened on disk; nothing would be kept");
  cache::TuningStore& store = *opened.store;
  const int nvrtc = nvrtc_version();
  const auto before = store.cubin_totals();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int compiled = 0, stored_before = 0, failed = 0;
  std::string first_failure;
  for (const std::string& arch : archs) {
    std::vector<Variant> todo;
    for (const Variant& v : variant_space()) {
      if (!detail::variant_builds_for(v, arch)) continue;
      const std::string hash(detail::template_of(v).sha256);
      if (store.find_cubin(arch, nvrtc, hash, variant_name(v))) {
        ++stored_before;
        continue;
      }
      todo.push_back(v);
    }
    std::mutex mutex;  // the store and the counters
    std::atomic<std::size_t> next{0};
    int done = 0;
    auto worker = [&] {
      for (std::size_t i = next++; i < todo.size(); i = next++) {
        std::string why;
        detail::CompiledVariant c;
        try {
          c = detail::compile_variant_once(todo[i], arch);
        } catch (const std::exception& e) {
          why = variant_name(todo[i]) + ": " + first_line(e.what());
        }
        std::lock_guard<std::mutex> lock(mutex);
        if (why.empty()) {
          store.put_cubin(arch, nvrtc, c.template_hash, c.name, c.cubin);
          ++compiled;
        } else {
          ++failed;
          if (first_failure.empty()) first_failure = why;
        }
        ++done;
        if (progress)
          err << "\r\033[Kprecompile " << arch << ": " << done << "/" << todo.size() << " variants, "
              << fixed(elapsed(), 1) << " s" << std::flush;
      }
    };
    const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                             static_cast<unsigned>(todo.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (progress) err << "\r\033[K" << std::flush;
  }
  const auto after = store.cubin_totals();
  // Closed, its -wal folded into the file; the store's own writes keep the record of its last
  // quick_check current (quick_check_record.hpp), so an application's first call skips the check.
  opened.store.reset();
  std::string arch_list;
  for (const auto& a : archs) arch_list += (arch_list.empty() ? "" : ", ") + a;
  out << "precompiled " << compiled << " variants for " << arch_list << " in "
      << fixed(elapsed(), 1) << " s (" << stored_before << " were stored already";
  if (failed > 0) out << ", " << failed << " failed";
  out << "): +" << mib(after.bytes - before.bytes) << "; the cache holds " << after.count
      << " CUBINs, " << mib(after.bytes) << ", in " << path << "\n";
  if (failed > 0)
    return failure(err, std::to_string(failed) + " variants failed to compile, the first: " + first_failure);
  return tool::kSuccess;
}

}  // namespace tilemm::cli
