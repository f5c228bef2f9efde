#include "tune_command.hpp"

#include <unistd.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.hpp"
#include "json_entry.hpp"
#include "kernel_sources.hpp"
#include "text_table.hpp"
#include "timing_method.hpp"
#include "tflops.hpp"
#include "tilemm/tilemm.hpp"

namespace tilemm::cli {
namespace {

using nlohmann::json;

void print_table(std::ostream& out, const DeviceInfo& device, const AutotuneResult& r) {
  const double peak = device.fp32_peak_tflops();
  const std::string precision = r.problem.precision == Precision::highest
                                    ? std::string()
                                    : std::string(", precision ") + to_string(r.problem.precision);
  out << shape_text(r.problem.M, r.problem.N, r.problem.K) << " (" << r.problem_class << precision
      << ") on "
      << device.name << " [" << device.ordinal << "]: winner " << r.winner << ", "
      << fixed(r.median_ms, 4) << " ms, " << fixed(r.tflops, 2) << " TFLOP/s, margin "
      << fixed(100 * r.margin, 1) << "%, ";
  if (r.source == ResultSource::tuned)
    out << "tuned in " << fixed(r.tuning_seconds, 1) << " s\n";
  else
    out << "from the " << to_string(r.source) << " (tuned " << r.tuned_at << ")\n";
  using Align = TextTable::Align;
  TextTable table({{"variant"}, {"median ms", Align::right}, {"TFLOP/s", Align::right},
                   {"% peak", Align::right}, {"vs winner", Align::right}, {"status"}},
                  "  ");
  for (const auto& c : r.candidates) {
    if (c.status == CandidateStatus::ok) {
      const double tf = detail::tflops(r.problem, c.stats.median_ms);
      table.add_row({c.variant, fixed(c.stats.median_ms, 4), fixed(tf, 2),
                     peak > 0 ? fixed(100 * tf / peak, 1) + "%" : std::string("-"),
                     fixed(c.stats.median_ms / r.median_ms, 2) + "x", status_text(c)});
    } else {
      table.add_row({c.variant, "-", "-", "-", "-", status_text(c)});
    }
  }
  table.print(out);
  out << "\n";
}

// The exchange format's fields plus the TFLOP/s the table shows.
json candidate_json(const CandidateResult& c, const Problem& p) {
  json j = cache::candidate_to_json(c);
  j["tflops"] = c.status == CandidateStatus::ok ? detail::tflops(p, c.stats.median_ms) : 0.0;
  return j;
}

json result_json(const AutotuneResult& r) {
  json candidates = json::array();
  for (const auto& c : r.candidates) candidates.push_back(candidate_json(c, r.problem));
  return {{"m", r.problem.M},
          {"n", r.problem.N},
          {"k", r.problem.K},
          {"problem_class", r.problem_class},
          {"precision", to_string(r.problem.precision)},
          {"winner", r.winner},
          {"median_ms", r.median_ms},
          {"tflops", r.tflops},
          {"margin", r.margin},
          {"source", to_string(r.source)},
          {"tuned_at", r.tuned_at},
          {"tuning_seconds", r.tuning_seconds},
          {"candidates", candidates}};
}

json device_json(const DeviceInfo& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"arch", d.arch()},
          {"model_key", d.model_key()},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.total_memory},
          {"uuid", d.uuid},
          {"driver_version", d.driver_version},
          {"runtime_version", d.runtime_version},
          {"nvrtc_version", d.nvrtc_version},
          {"fp32_peak_tflops", d.fp32_peak_tflops()}};
}

struct DeviceRun {
  DeviceInfo device;
  std::vector<AutotuneResult> results;
  std::vector<std::string> errors;
};

// Draws "[dev] shape: done/total candidates, elapsed" on one terminal line.
class Progress {
 public:
  Progress(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  void show(int device, const std::string& shape, int done, int total, double seconds) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    err_ << "\r\033[K[gpu " << device << "] " << shape << ": " << done << "/" << total
         << " candidates, " << fixed(seconds, 1) << " s" << std::flush;
  }
  void clear() {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    err_ << "\r\033[K" << std::flush;
  }

 private:
  std::ostream& err_;
  bool enabled_;
  std::mutex mutex_;
};

std::string self_path() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw Error(ErrorKind::internal, "cannot find this program's path (/proc/self/exe)");
  return std::string(path, static_cast<std::size_t>(n));
}

DeviceRun tune_on_device(int ordinal, const std::vector<Shape>& shapes, const SearchChoice& search,
                         Progress& progress, const Isolation& isolation) {
  DeviceRun run;
  if (cudaSetDevice(ordinal) != cudaSuccess) {
    run.device.ordinal = ordinal;
    run.errors.push_back("cannot select CUDA device " + std::to_string(ordinal));
    return run;
  }
  run.device = current_device();
  for (const auto& [m, n, k] : shapes) {
    const std::string text = shape_text(m, n, k);
    const auto start = std::chrono::steady_clock::now();
    Options options = search.options();
    options.progress = [&](int done, int total) {
      progress.show(ordinal, text, done, total,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    try {
      if (!isolation.enabled) {
        run.results.push_back(autotune(m, n, k, options));
        continue;
      }
      // The GPU work runs in worker processes; the result comes back through the cache.
      const int total = static_cast<int>(variant_space(search.precision).size());
      bool tuned_now = false;  // a worker ran candidates, rather than finding a cached result
      const IsolatedOutcome outcome = tune_in_worker(
          self_path(), ordinal, {m, n, k}, search, isolation.watchdog_seconds, [&](int started) {
            tuned_now = true;
            options.progress(started, total);
          });
      if (!outcome.ok) {
        run.errors.push_back(text + ": " + outcome.error);
        continue;
      }
      // Served from the cache the worker filled, under the worker's precision and candidate set
      // (own kernels only under --no-vendor: a lookup with vendor candidates would miss that
      // entry). Under TunePolicy::off a miss compiles and tunes nothing in this process.
      Options lookup = search.options();
      lookup.policy = TunePolicy::off;
      lookup.force = false;
      AutotuneResult r = autotune(m, n, k, lookup);
      if (r.source == ResultSource::fallback) {
        run.errors.push_back(text + ": the worker finished, but its result is not in the cache");
        continue;
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (tuned_now) {
        r.source = ResultSource::tuned;
        r.tuning_seconds = seconds;
      }
      run.results.push_back(std::move(r));
    } catch (const std::exception& e) {
      run.errors.push_back(text + ": " + tool::without_library_prefix(e.what()));
    }
  }
  progress.clear();
  return run;
}

}  // namespace

int tune_command(const std::vector<Shape>& shapes, const std::string& device_option,
                 const SearchChoice& search,
                 bool as_json, const Isolation& isolation, std::ostream& out, std::ostream& err,
                 bool tty) {
  const int count = device_count();
  if (count == 0) return failure(err, tool::no_device("tuning needs a GPU (--list, --export, --import and --clear do not)"));
  std::vector<int> ordinals;
  if (device_option == "all") {
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
  } else if (device_option.empty()) {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) current = 0;
    ordinals.push_back(current);
  } else {
    const auto d = parse_ordinal(device_option);
    if (d >= count) return failure(err, "--device " + device_option + " does not exist: this machine has " + std::to_string(count) + " GPU(s) (0.." + std::to_string(count - 1) + ")");
    ordinals.push_back(static_cast<int>(d));
  }

  Progress progress(err, tty);
  std::vector<DeviceRun> runs(ordinals.size());
  // One tuning thread per GPU, all writing into the one cache.
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ordinals.size(); ++i)
    threads.emplace_back([&, i] { runs[i] = tune_on_device(ordinals[i], shapes, search, progress, isolation); });
  for (auto& t : threads) t.join();

  bool failed = false;
  if (as_json) {
    json devices = json::array();
    for (const auto& run : runs) {
      json results = json::array();
      for (const auto& r : run.results) results.push_back(result_json(r));
      json d = device_json(run.device);
      d["results"] = results;
      d["errors"] = run.errors;
      devices.push_back(d);
    }
    json doc = {{"tilemm_version", TILEMM_VERSION},
                {"templates_hash", detail::templates_hash()},
                {"timing_method", tuner::kTimingMethodVersion},
                {"cache", cache_path()},
                {"devices", devices}};
    // The cache path and the errors are the system's bytes, which need not be UTF-8.
    out << cache::json_text(doc, 2) << "\n";
  } else {
    for (const auto& run : runs)
      for (const auto& r : run.results) print_table(out, run.device, r);
  }
  for (const auto& run : runs)
    for (const auto& e : run.errors) {
      failed = true;
      failure(err, "GPU " + std::to_string(run.device.ordinal) + ": " + e);
    }
  return failed ? kFailure : kOk;
}

}  // namespace tilemm::cli
