#include "remote_commands.hpp"

#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "tuning_coordinator.hpp"
#include "cli_common.hpp"
#include "exchange_file.hpp"
#include "lease_owner.hpp"
#include "provenance.hpp"
#include "redis_store.hpp"
#include "row_split.hpp"
#include "shape_key.hpp"
#include "text_table.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"
#include "tuning_json.hpp"
#include "utc_time.hpp"

namespace tilemm::cli {
namespace {

// Offline tools wait longer than a call path: a listing or an import of a large store is not on
// anyone's critical path, and a slow network should not make it fail.
constexpr std::chrono::milliseconds kToolTimeout{5000};
// The fleet lease a process takes before handing a shape to the tuning (which renews it).
constexpr double kClaimSeconds = 30.0;
constexpr std::chrono::milliseconds kIdlePass{500};

cache::RedisStore open_store(const std::string& url) {
  return cache::RedisStore(cache::parse_redis_url(url), kToolTimeout);
}

std::string shape_name(const Shape& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

void refused_line(std::ostream& err, const std::string& key, const InvalidArgument& why) {
  err << "tilemm-tune: warning: the store's value under '" << key
      << "' is not a valid entry, left out: " << why.what() << "\n";
}

}  // namespace

std::vector<Shape> read_shapes_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error(ErrorKind::cache, "cannot read the shapes file '" + path + "'");
  std::vector<Shape> shapes;
  std::string line;
  for (int number = 1; std::getline(f, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(first, last - first + 1);
    try {
      const auto parsed = parse_shapes(text);
      shapes.insert(shapes.end(), parsed.begin(), parsed.end());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("--shapes-file", path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (shapes.empty()) throw InvalidArgument("--shapes-file", "'" + path + "' names no shape");
  return shapes;
}

int fleet_tune(const std::vector<Shape>& shapes, const std::string& url, Precision precision,
               bool vendor, bool force, const std::string& lease_owner, const std::function<int(const Shape&)>& tune_one,
               std::ostream& out, std::ostream& err) {
  cache::RedisStore store = open_store(url);
  const DeviceInfo device = current_device();
  const std::string started = detail::utc_now_text("%Y-%m-%dT%H:%M:%SZ");
  std::vector<Shape> left = shapes;
  int worst = tool::kSuccess;
  std::size_t tuned_here = 0, tuned_elsewhere = 0;
  while (!left.empty()) {
    std::vector<Shape> later;
    for (const Shape& s : left) {
      Problem p = Problem::dense(s[0], s[1], s[2], 4);
      p.precision = precision;
      p.vendor = vendor;
      const std::optional<cache::StoredEntry> published = dispatch::first_serving_entry(
          p,
          [&](cache::CandidateSet set) -> std::optional<cache::StoredEntry> {
            try {
              return store.find(device.model_key(), p.M, p.N, p.K, dispatch::class_of(p),
                                precision, set, detail::why_not_a_known_name);
            } catch (const InvalidArgument& why) {  // tuned again: its result replaces the value
              refused_line(err, cache::RedisStore::result_key(device.model_key(), p.M, p.N, p.K,
                                                              dispatch::class_of(p), precision,
                                                              set),
                           why);
              return std::nullopt;
            }
          },
          [](const cache::StoredEntry&) { return true; });
      // With --force, a result counts only when tuned since this run began (by another process).
      if (published && dispatch::is_fresh(*published, dispatch::running_versions(device, p)) &&
          (!force || published->tuned_at >= started)) {
        ++tuned_elsewhere;
        continue;
      }
      const std::string key = dispatch::tuning_lease_key(device, p);
      if (!store.try_acquire_lease(key, lease_owner, kClaimSeconds)) {
        later.push_back(s);
        continue;
      }
      out << "tuning " << shape_name(s) << " (fleet lease taken)\n" << std::flush;
      worst = std::max(worst, tune_one(s));
      store.release_lease(key, lease_owner);
      ++tuned_here;
    }
    if (later.size() == left.size()) std::this_thread::sleep_for(kIdlePass);
    left = std::move(later);
  }
  out << "fleet: " << tuned_here << " shapes tuned here, " << tuned_elsewhere
      << " by other processes (" << store.url().redacted() << ")\n";
  return worst;
}

int remote_list(const std::string& url, const std::string& device_key, std::ostream& out,
                std::ostream& err) {
  cache::RedisStore store = open_store(url);
  std::vector<cache::StoredEntry> entries;
  store.for_each(
      detail::why_not_a_known_name,
      [&](cache::StoredEntry&& e) {
        if (device_key.empty() || e.device_key == device_key) {
          e.candidates.clear();
          entries.push_back(std::move(e));
        }
      },
      [&](const std::string& key, const InvalidArgument& why) { refused_line(err, key, why); });
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::tie(a.device_key, a.precision, a.problem_class, a.M, a.N, a.K, a.candidate_set) <
           std::tie(b.device_key, b.precision, b.problem_class, b.M, b.N, b.K, b.candidate_set);
  });
  TextTable table({{"device"}, {"shape"}, {"class"}, {"precision"}, {"candidates"}, {"winner"},
                   {"ms", TextTable::Align::right}, {"TFLOP/s", TextTable::Align::right},
                   {"tuned at"}, {"state"}});
  for (const auto& e : entries) {
    std::ostringstream ms, tf;
    ms.precision(4);
    ms << e.median_ms;
    tf.precision(4);
    tf << e.tflops;
    table.add_row({e.device_key, std::to_string(e.M) + "x" + std::to_string(e.N) + "x" + std::to_string(e.K),
                   e.problem_class, to_string(e.precision), candidate_set_cell(e), e.winner,
                   ms.str(), tf.str(), e.tuned_at,
                   dispatch::is_fresh(e, dispatch::running_versions_here(e)) ? "fresh" : "stale"});
  }
  table.print(out);
  out << entries.size() << " entries (" << store.url().redacted() << ")\n";
  return tool::kSuccess;
}

int remote_export(const std::string& url, const std::string& device_key, const std::string& file,
                  std::ostream& out, std::ostream& err) {
  cache::RedisStore store = open_store(url);
  ExportFile target(file, out);
  cache::JsonEntriesWriter writer(target.stream());
  store.for_each(
      detail::why_not_a_known_name,
      [&](cache::StoredEntry&& e) {
        if (device_key.empty() || e.device_key == device_key) writer.add(e);
      },
      [&](const std::string& key, const InvalidArgument& why) { refused_line(err, key, why); });
  writer.finish();
  if (target.to_stdout()) return tool::kSuccess;
  target.commit();
  out << "exported " << writer.count() << " entries from " << store.url().redacted() << " to "
      << file << "\n";
  return tool::kSuccess;
}

int remote_import(const std::string& url, const std::string& file, std::ostream& out,
                  std::ostream&) {
  validate_import_file(file);
  cache::RedisStore store = open_store(url);
  std::vector<cache::StoredEntry> batch;
  const std::size_t count = read_import_file(file, [&](cache::StoredEntry&& e) {
    batch.push_back(std::move(e));
    if (batch.size() == 1000) {
      store.put_all(batch);
      batch.clear();
    }
  });
  store.put_all(batch);
  out << "imported " << count << " entries from " << file << " into " << store.url().redacted()
      << "\n";
  return tool::kSuccess;
}

int remote_clear(const std::string& url, std::ostream& out) {
  cache::RedisStore store = open_store(url);
  const std::int64_t removed = store.clear();
  out << "removed " << removed << " entries from " << store.url().redacted() << "\n";
  return tool::kSuccess;
}

void add_fleet_options(CLI::App& app, std::string& remote, std::string& shapes_file) {
  app.add_option("--remote", remote,
                 "The fleet's Redis store, redis://[user:password@]host:port[/db]: tuning splits "
                 "the shapes among the processes given the same list; --list, --export, --import "
                 "and --clear act on the store (docs/fleet.md)")
      ->option_text("URL");
  app.add_option("--shapes-file", shapes_file,
                 "Tune the shapes of this file, one MxNxK per line ('#': a comment)")
      ->option_text("FILE");
}

void check_remote_url(const std::string& url) {
  try {
    cache::parse_redis_url(url);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("--remote", tool::without_library_prefix(e.what()));
  }
}

int run_remote(const RemoteRun& run, const std::vector<Shape>& shapes,
               const std::function<int(const Shape&)>& tune_one, std::ostream& out,
               std::ostream& err) {
  if (run.precompile) throw InvalidArgument("--remote", "does not apply to --precompile (no code is shared)");
  if (run.list) return remote_list(run.url, run.device_key, out, err);
  if (!run.export_file.empty()) return remote_export(run.url, run.device_key, run.export_file, out, err);
  if (!run.import_file.empty()) return remote_import(run.url, run.import_file, out, err);
  if (run.clear) return remote_clear(run.url, out);
  if (run.device == "all")
    throw InvalidArgument("--remote", "tunes on one GPU: start one tilemm-tune per GPU (--device N)");
  int ordinal = 0;
  if (run.device.empty()) {
    if (cudaGetDevice(&ordinal) != cudaSuccess) ordinal = 0;
  } else {
    ordinal = std::atoi(run.device.c_str());
  }
  // The owner the tuning's own lease asks under (isolated_tuning.cpp's workers, else this
  // process), so that the fleet lease taken here is the tuning's own.
  const std::string owner =
      cache::process_lease_owner() + (run.isolated ? ":gpu" + std::to_string(ordinal) : "");
  return fleet_tune(shapes, run.url, run.precision, run.vendor, run.force, owner, tune_one, out,
                    err);
}

}  // namespace tilemm::cli
