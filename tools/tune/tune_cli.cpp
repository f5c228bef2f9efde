#include "tune_cli.hpp"

#include <unistd.h>

#include "isolated_tuning.hpp"
#include "precompile.hpp"

#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "cache_trust.hpp"
#include "kernel_sources.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "private_paths.hpp"
#include "row_split.hpp"
#include "store_open.hpp"
#include "text_fields.hpp"
#include "text_table.hpp"
#include "tflops.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"
#include "tuning_json.hpp"
#include "tuning_store.hpp"

namespace tilemm::cli {
namespace {

using nlohmann::json;

std::int64_t parse_ordinal(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidArgument("--device", "'" + text + "' is not a GPU ordinal (0, 1, ...) or 'all'");
  return std::stoll(text);
}

// One message for every value that is not a dimension, whatever is wrong with it (a sign, a
// letter, too many digits, out of range), so that 99999999999 and 2147483648 read alike.
std::int64_t parse_dimension(const std::string& text, const char* option) {
  const bool digits = !text.empty() && text.size() <= 10 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const long long v = digits ? std::stoll(text) : 0;
  if (v < 1 || v > 2147483647)
    throw InvalidArgument(option, "'" + text + "' is not an integer between 1 and 2147483647");
  return v;
}

constexpr const char* kName = "tilemm-tune";
// Exit codes (docs/cli.md). kDamagedCache: --list or --export found the cache file damaged and
// left it in place, so the output lacks its entries.
constexpr int kOk = tool::kSuccess, kFailure = tool::kFailure, kDamagedCache = 3;


int damaged_cache(std::ostream& err, const std::string& path, const cache::CacheCorrupt& e,
                  const char* consequence) {
  err << tool::error_line(kName, cache::damaged_cache_note(path, e.reason()) + "; " + consequence);
  return kDamagedCache;
}

// The results hash of each precision (dispatch::results_hash): what every entry tuned by this
// build carries as its `template_hash`, so a user can tell which entries it counts as fresh.
std::string results_hashes_text() {
  std::string text;
  for (const Precision p : {Precision::highest, Precision::high, Precision::medium})
    text += std::string(text.empty() ? "" : ", ") + to_string(p) + " " + dispatch::results_hash(p);
  return text;
}

json results_hashes_json() {
  json hashes = json::object();
  for (const Precision p : {Precision::highest, Precision::high, Precision::medium})
    hashes[to_string(p)] = dispatch::results_hash(p);
  return hashes;
}

void warn(std::ostream& err, const std::string& message) {
  err << "tilemm-tune: warning: " << message << "\n";
}

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}


}  // namespace

int failure(std::ostream& err, const std::string& message) {
  err << tool::error_line(kName, message);
  return kFailure;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string status_text(const CandidateResult& c) {
  switch (c.status) {
    // A row-split plan's reason names the winners of its parts.
    case CandidateStatus::ok: return c.reason.empty() ? "ok" : "ok: " + c.reason;
    case CandidateStatus::wrong_result: return "wrong result: " + c.reason;
    case CandidateStatus::compile_error: return "compile error: " + c.reason;
    case CandidateStatus::launch_error: return "launch error: " + c.reason;
    case CandidateStatus::cannot_run: return "cannot run: " + c.reason;
    case CandidateStatus::pruned: return "pruned: " + c.reason;
  }
  return "?";
}

namespace {

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

struct Isolation {
  bool enabled = true;
  double watchdog_seconds = 120;
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
    Options options;
    options.policy = TunePolicy::tune_on_miss;  // whatever TILEMM_TUNE says: this run is to tune
    options.force = search.force;
    options.tune_budget_ms = search.budget_ms;
    options.precision = search.precision;
    options.vendor = search.vendor;
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
      Options lookup;  // served from the cache the worker filled: compiles and tunes nothing
      lookup.precision = search.precision;
      lookup.policy = TunePolicy::tune_on_miss;
      AutotuneResult r = autotune(m, n, k, lookup);
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
                {"results_hashes", results_hashes_json()},
                {"cache", cache_path()},
                {"devices", devices}};
    out << doc.dump(2) << "\n";
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

// A row-split plan's parts are entries of their own (tuned as shapes when the plan was tuned):
// they are listed under the plan whose candidate they belong to, as "+ rows A-B, plan hH", not
// as shapes someone asked for.
struct PlanPart {
  std::size_t entry;         // index into the entries
  std::int64_t first, last;  // rows of the planned shape
  std::int64_t core_rows;    // the plan: rowsplit_h<core_rows>
};

std::vector<std::vector<PlanPart>> plan_parts(const std::vector<cache::StoredEntry>& entries) {
  std::vector<std::vector<PlanPart>> parts(entries.size());
  auto find = [&](const cache::StoredEntry& plan, std::int64_t m) -> std::optional<std::size_t> {
    std::optional<std::size_t> any;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (e.device_key != plan.device_key || e.problem_class != plan.problem_class ||
          e.precision != plan.precision || e.M != m || e.N != plan.N || e.K != plan.K)
        continue;
      if (e.source == plan.source) return i;  // parts tuned with the plan share its source
      if (!any) any = i;
    }
    return any;
  };
  for (std::size_t p = 0; p < entries.size(); ++p) {
    const auto& plan = entries[p];
    std::vector<std::int64_t> heights;  // the winning plan first, then the others tried
    if (const auto h = detail::parse_row_split(plan.winner)) heights.push_back(*h);
    for (const auto& c : plan.candidates)
      if (const auto h = detail::parse_row_split(c.variant); h && (heights.empty() || *h != heights[0]))
        heights.push_back(*h);
    for (const auto h : heights) {
      if (h <= 0 || h >= plan.M) continue;
      if (const auto core = find(plan, h)) parts[p].push_back({*core, 0, h - 1, h});
      if (const auto rest = find(plan, plan.M - h)) parts[p].push_back({*rest, h, plan.M - 1, h});
    }
  }
  return parts;
}

void print_entries(std::ostream& out, const std::vector<cache::StoredEntry>& entries) {
  const auto parts = plan_parts(entries);
  std::vector<bool> is_part(entries.size(), false);
  for (const auto& list : parts)
    for (const auto& part : list) is_part[part.entry] = true;
  using Align = TextTable::Align;
  TextTable table({{"device"}, {"shape"}, {"class"}, {"precision"}, {"winner"},
                   {"TFLOP/s", Align::right}, {"source"}, {"tuned at"}, {"state"}});
  auto add = [&](const cache::StoredEntry& e, const std::string& shape) {
    table.add_row({e.device_key, shape, e.problem_class, to_string(e.precision), e.winner,
                   fixed(e.tflops, 2),
                   e.source == "tuned" ? "tuned here" : e.source, e.tuned_at,
                   dispatch::is_fresh(e, dispatch::running_versions_here(e.precision)) ? "fresh" : "stale"});
  };
  bool any_parts = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (is_part[i]) continue;
    const auto& e = entries[i];
    add(e, shape_text(e.M, e.N, e.K));
    for (const auto& part : parts[i]) {
      any_parts = true;
      const std::string rows = part.first == part.last
                                   ? "row " + std::to_string(part.first)
                                   : "rows " + std::to_string(part.first) + "-" + std::to_string(part.last);
      add(entries[part.entry], "  + " + rows + ", plan h" + std::to_string(part.core_rows));
    }
  }
  table.print(out);
  if (any_parts)
    out << "(+ rows A-B, plan hH: rows A to B of the shape above, a part of its row-split plan "
           "rowsplit_hH, tuned and stored as a shape of its own)\n";
}

int list_command(const std::string& path, const std::string& device_key, std::ostream& out,
                 std::ostream& err) {
  std::vector<cache::StoredEntry> entries;
  std::optional<cache::CacheCorrupt> damaged;  // left in place: listing changes nothing
  if (std::filesystem::exists(path)) {
    try {
      cache::TuningStore store(path);
      entries = store.list(device_key);
      if (const cache::CacheTrust trust = cache::cache_trust(path); !trust.loads_stored_code)
        out << "shared cache: " << trust.reason << "; its results are used, but its stored kernels "
            << "are not loaded (each process compiles its own)\n";
    } catch (const cache::CacheCorrupt& e) {
      damaged = e;
    }
  } else {
    out << "no cache at " << path << " (nothing tuned yet)\n";
  }
  for (const auto& e : cache::preloaded_entries(detail::why_not_a_known_name))
    if (device_key.empty() || e.device_key == device_key) entries.push_back(e);
  print_entries(out, entries);
  out << entries.size() << " entries (" << path << " and the preloaded caches)\n";
  if (damaged) return damaged_cache(err, path, *damaged, "only the preloaded entries were listed");
  return kOk;
}

int export_command(const std::string& path, const std::string& device_key, const std::string& file,
                   std::ostream& out, std::ostream& err) {
  std::vector<cache::StoredEntry> entries;
  try {
    if (std::filesystem::exists(path)) entries = cache::TuningStore(path).list(device_key);
  } catch (const cache::CacheCorrupt& e) {
    return damaged_cache(err, path, e, "nothing was exported");  // an earlier FILE stays as it was
  }
  const std::string text = cache::entries_to_json(entries);
  if (file == "-") {
    out << text;
    return kOk;
  }
  // Written beside the target and renamed, so a reader never sees half a file. Errors name the
  // file the user gave, not the temporary one.
  const auto cannot_write = [&](const std::string& why) {
    return Error(ErrorKind::cache, "cannot write '" + file + "': " + why);
  };
  if (std::filesystem::is_directory(file)) throw cannot_write("is a directory");
  const std::string tmp = file + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw cannot_write(std::strerror(errno));
    f << text;
    if (!f.flush()) throw cannot_write(std::strerror(errno));
  }
  std::error_code renamed;
  std::filesystem::rename(tmp, file, renamed);
  if (renamed) {
    std::filesystem::remove(tmp, renamed);
    throw cannot_write(std::strerror(errno));
  }
  out << "exported " << entries.size() << " entries to " << file << "\n";
  return kOk;
}

Error cannot_import(const std::string& file, const std::string& why) {
  return Error(ErrorKind::cache, "cannot import '" + file + "': " + why);
}

std::ifstream open_to_read(const std::string& file) {
  // A folder opens as a stream and fails only on the first read, with the standard library's words.
  if (std::filesystem::is_directory(file)) throw cannot_import(file, "is a directory");
  std::ifstream f(file, std::ios::binary);
  if (!f) throw cannot_import(file, std::strerror(errno));
  return f;
}

// Why a file failed validation, in the reader's words without its "invalid argument" framing:
// "<where>: <why>" for an entry, just "<why>" for the whole document.
std::string why_invalid(const std::exception& e) {
  std::string why = tool::without_library_prefix(e.what());
  const auto* invalid = dynamic_cast<const InvalidArgument*>(&e);
  if (invalid == nullptr) return why;
  const std::string head = "invalid argument '" + invalid->argument() + "': ";
  if (why.compare(0, head.size(), head) != 0) return why;
  why = why.substr(head.size());
  return invalid->argument() == "document" ? why : invalid->argument() + ": " + why;
}

// Two streaming passes, so that memory does not grow with the file: the first validates all of
// it, so that a bad file changes nothing (nor creates the cache); the second stores the entries
// as it reads them, in one transaction that a bad entry (the file changed meanwhile) rolls back.
int import_command(const std::string& path, const std::string& file, std::ostream& out,
                   std::ostream& err) {
  {
    std::ifstream f = open_to_read(file);
    try {
      cache::read_entries_json(f, detail::why_not_a_known_name, [](cache::StoredEntry&&) {});
    } catch (const std::exception& e) {
      throw cannot_import(file, why_invalid(e) + " (nothing was changed)");
    }
  }
  cache::OpenedStore opened = cache::open_persistent_store(path);
  if (!opened.warning.empty()) warn(err, opened.warning);
  cache::TuningStore::Writer writer(*opened.store);
  std::ifstream f = open_to_read(file);
  const std::size_t count = cache::read_entries_json(f, detail::why_not_a_known_name, [&](cache::StoredEntry&& e) {
    e.source = "imported";
    writer.put(e);
  });
  writer.commit();
  out << "imported " << count << " entries from " << file << " into " << path << "\n";
  return kOk;
}

int clear_command(const std::string& path, std::ostream& out, std::ostream& err) {
  if (!std::filesystem::exists(path)) {
    out << "no cache at " << path << "; nothing to clear\n";
    return kOk;
  }
  cache::OpenedStore opened = cache::open_persistent_store(path);  // a damaged file: moved aside
  if (!opened.warning.empty()) warn(err, opened.warning);
  cache::TuningStore& store = *opened.store;
  const auto entries = store.list();
  out << "removing " << entries.size() << " tuning entries and all cached CUBINs from " << path
      << "\n";
  store.clear();
  out << "cleared\n";
  return kOk;
}

}  // namespace

std::vector<Shape> parse_sizes(const std::string& text) {
  if (text.empty()) throw InvalidArgument("--sizes", "needs at least one size");
  std::vector<Shape> shapes;
  for (const auto& part : detail::split(text, ',')) {
    const auto n = parse_dimension(part, "--sizes");
    shapes.push_back({n, n, n});
  }
  return shapes;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  if (text.empty()) throw InvalidArgument("--shapes", "needs at least one shape");
  std::vector<Shape> shapes;
  for (const auto& part : detail::split(text, ',')) {
    const auto dims = detail::split(part, 'x');
    if (dims.size() != 3)
      throw InvalidArgument("--shapes", "'" + part + "' is not of the form MxNxK");
    shapes.push_back({parse_dimension(dims[0], "--shapes"), parse_dimension(dims[1], "--shapes"),
                      parse_dimension(dims[2], "--shapes")});
  }
  return shapes;
}

int run_tune_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                 bool err_is_terminal) {
  tool::ToolCli cli(kName,
                    "Tune tilemm's SGEMM kernels for this machine's GPUs, and manage the tuning "
                    "cache.\nExactly one action per run: tuning (--sizes and/or --shapes), --list, "
                    "--export, --import, --clear or --precompile.\n",
                    out, err);
  CLI::App& app = cli.app();
  std::vector<std::string> size_lists, shape_lists, archs;
  std::string device, cache, export_file, import_file, device_key;
  bool force = false, as_json = false, list = false, clear = false, precompile = false;
  app.add_option("--sizes", size_lists, "Tune square shapes N x N x N, e.g. 512,1024,4096 (repeatable)")
      ->option_text("LIST")->allow_extra_args(false);
  app.add_option("--shapes", shape_lists, "Tune M x N x K shapes, e.g. 1024x512x256,4096x4096x64 (repeatable; after --sizes)")
      ->option_text("LIST")->allow_extra_args(false);
  app.add_option("--device", device, "Tuning: GPU ordinal, or 'all' (one thread per GPU); default: the current one")
      ->option_text("N|all");
  app.add_flag("--force", force, "Tuning: re-tune shapes that have a fresh result (cached or preloaded)");
  SearchChoice search;
  search.budget_ms = Options::budget_from_environment();
  bool exhaustive = false;
  app.add_option("--budget-ms", search.budget_ms,
                 "Tuning: milliseconds each shape's search may take; 0 is --exhaustive (default: $TILEMM_TUNE_BUDGET_MS, else 2000)")
      ->option_text("MS")
      ->check(tool::number_between(0, 86400000));
  app.add_flag("--exhaustive", exhaustive,
               "Tuning: time every candidate in full instead of a budgeted search (tens of seconds per shape)");
  bool no_vendor = false;
  app.add_flag("--no-vendor", no_vendor,
               "Tuning: tilemm's own kernels only, no cuBLASLt candidates (as TILEMM_VENDOR=off)");
  std::string precision = to_string(Options::precision_from_environment());
  app.add_option("--precision", precision,
                 "Tuning: highest (FP32), high (3xTF32 tensor cores) or medium (one TF32 pass) "
                 "(default: $TILEMM_PRECISION, else highest)")
      ->option_text("MODE")
      ->check(CLI::Validator(
          [](std::string& p) -> std::string {
            return parse_precision(p) ? "" : "'" + p + "' is not highest, high or medium";
          },
          "MODE"));
  app.add_flag("--json", as_json, "Tuning: print the results as JSON on stdout");
  app.add_flag("--list", list, "List the cache's entries (and the preloaded ones) with source and freshness");
  app.add_option("--export", export_file, "Write the cache's entries to this JSON file ('-': stdout)")
      ->option_text("FILE|-");
  app.add_option("--import", import_file, "Validate this JSON file and add its entries, all or nothing")
      ->option_text("FILE");
  app.add_flag("--clear", clear, "Remove every entry and CUBIN from the cache");
  app.add_flag("--precompile", precompile,
               "Compile every variant for the GPUs present into the cache, so tunings compile nothing");
  app.add_option("--arch", archs, "With --precompile: these architectures (sm_XY) instead of the GPUs'")
      ->option_text("SM_XY")
      ->check(CLI::Validator(
          [](std::string& a) -> std::string {
            const bool ok = a.size() >= 5 && a.size() <= 6 && a.rfind("sm_", 0) == 0 &&
                            std::all_of(a.begin() + 3, a.end(), [](char c) { return c >= '0' && c <= '9'; });
            return ok ? "" : "'" + a + "' is not an architecture such as sm_90";
          },
          "SM_XY"));
  app.add_option("--device-key", device_key, "With --list or --export: only this device model's entries")
      ->option_text("KEY");
  app.add_option("--cache", cache, "SQLite cache file (default: see Cache below)")->option_text("PATH");
  Isolation isolation;
  bool in_process = false, worker = false;
  std::vector<std::string> skips;
  std::string lease_owner;
  app.add_option("--watchdog-seconds", isolation.watchdog_seconds,
                 "Tuning: kill a worker process that shows no progress for this long (1 to 86400; default 120)")
      ->option_text("SECONDS")
      ->check(tool::number_between(1, 86400));
  app.add_flag("--in-process", in_process,
               "Tuning: no worker processes (a crashing or hanging candidate then takes tilemm-tune "
               "down)");
  // The worker side of the isolation protocol (tools/tune/isolated_tuning.hpp); not for users.
  app.add_flag("--worker", worker)->group("");
  app.add_option("--skip", skips)->group("");
  app.add_option("--lease-owner", lease_owner)->group("");
  cli.set_version(std::string(kName) + " " + TILEMM_VERSION + " (kernel templates " +
                  detail::templates_hash() + "; results " + results_hashes_text() + ")");
  cli.set_usage(
      "tilemm-tune (--sizes LIST | --shapes LIST)... [--device N|all] [--force] [--json]\n"
      "            [--budget-ms MS | --exhaustive] [--precision highest|high|medium] [--no-vendor]\n"
      "            [--watchdog-seconds SECONDS | --in-process] [--cache PATH]\n"
      "tilemm-tune --list [--device-key KEY] [--cache PATH]\n"
      "tilemm-tune --export FILE|- [--device-key KEY] [--cache PATH]\n"
      "tilemm-tune --import FILE [--cache PATH]\n"
      "tilemm-tune --clear [--cache PATH]\n"
      "tilemm-tune --precompile [--arch SM_XY]... [--cache PATH]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-tune --sizes 512,1024,4096     tune three squares on the current GPU\n"
      "  tilemm-tune --shapes 4096x4096x64 --device all --json > result.json\n"
      "  tilemm-tune --force --exhaustive --sizes 3000   re-measure every candidate of 3000^3\n"
      "  tilemm-tune --precision high --sizes 4096   tune 3xTF32 (tensor-core) kernels for 4096^3\n"
      "  tilemm-tune --list                    what is cached and preloaded, fresh or stale\n"
      "\n"
      "A shape with a fresh result (in the cache, or preloaded for this GPU model) is printed, not\n"
      "tuned again; --force measures it anew. Tuning needs a GPU; the other actions do not.\n"
      "\n"
      "Cache: --cache PATH, else $TILEMM_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/tilemm/tuning.db\n"
      "  (now: " + cache_path() + ")\n"
      "\n" + tool::exit_codes_help() + "\n"
      "  3  --list or --export found the cache file damaged and left it in place: the output\n"
      "     lacks its entries (the next tuning, gemm() call, --import or --clear replaces it)\n");
  if (const auto done = cli.parse(argc, argv)) return *done;

  // Repeated --sizes/--shapes add up, sizes first.
  std::string sizes, shapes;
  for (const auto& part : size_lists) sizes += (sizes.empty() ? "" : ",") + part;
  for (const auto& part : shape_lists) shapes += (shapes.empty() ? "" : ",") + part;
  const bool tune = !size_lists.empty() || !shape_lists.empty();
  const int actions = int(tune) + int(list) + int(!export_file.empty()) + int(!import_file.empty()) + int(clear) + int(precompile);
  if (actions == 0) return cli.usage_error("nothing to do: give --sizes or --shapes to tune, or one of --list, --export, --import, --clear, --precompile");
  if (actions > 1) return cli.usage_error("give only one of tuning (--sizes/--shapes), --list, --export, --import, --clear, --precompile");
  if (!archs.empty() && !precompile) return cli.usage_error("--arch only applies to --precompile");
  if (!device_key.empty() && !list && export_file.empty()) return cli.usage_error("--device-key only applies to --list and --export");
  const bool budget_given = app.count("--budget-ms") > 0;
  const bool precision_given = app.count("--precision") > 0;
  if ((force || as_json || !device.empty() || in_process || budget_given || exhaustive ||
       precision_given) &&
      !tune)
    return cli.usage_error("--force, --json, --device, --budget-ms, --exhaustive, --precision and --in-process only apply to tuning (--sizes/--shapes)");
  if (budget_given && exhaustive) return cli.usage_error("give --budget-ms or --exhaustive, not both");
  if (exhaustive) search.budget_ms = 0.0;
  search.force = force;
  search.precision = *parse_precision(precision);  // checked by the option's validator
  search.vendor = !no_vendor && Options::vendor_from_environment();

  try {
    std::vector<Shape> todo;
    if (!size_lists.empty()) todo = parse_sizes(sizes);
    if (!shape_lists.empty()) {
      const auto more = parse_shapes(shapes);
      todo.insert(todo.end(), more.begin(), more.end());
    }
    if (tune && device != "all" && !device.empty()) parse_ordinal(device);
    if (!cache.empty()) configure_default_context({cache, {}, ContextSettings::effort_from_environment(), {}});
    const std::string path = cache_path();
    if (worker) {
      if (todo.size() != 1 || device.empty()) return cli.usage_error("--worker needs one shape and --device");
      std::map<std::string, std::string> skip;
      for (const auto& s : skips) {
        const auto eq = s.find('=');
        skip[s.substr(0, eq)] = eq == std::string::npos ? "failed in an earlier worker" : s.substr(eq + 1);
      }
      return run_worker(static_cast<int>(parse_ordinal(device)), todo[0], search, skip, lease_owner);
    }
    isolation.enabled = !in_process;
    if (tune) return tune_command(todo, device, search, as_json, isolation, out, err, err_is_terminal);
    if (list) return list_command(path, device_key, out, err);
    if (!export_file.empty()) return export_command(path, device_key, export_file, out, err);
    if (!import_file.empty()) return import_command(path, import_file, out, err);
    if (precompile) return precompile_command(path, archs, out, err, err_is_terminal);
    return clear_command(path, out, err);
  } catch (const InvalidArgument& e) {
    if (tool::is_option_error(e)) return cli.usage_error(tool::describe(e));
    return failure(err, tool::describe(e) + " (nothing was changed)");
  } catch (const std::exception& e) {
    return failure(err, tool::describe(e));
  }
}

}  // namespace tilemm::cli
