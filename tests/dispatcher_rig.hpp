// The dispatcher's collaborators faked for its CPU tests (test_dispatcher*.cpp): the SQLite cache
// as a map with leases, a kernel loader that loads nothing, a tuner scripted by M, and the rig
// that wires a dispatcher over them with a set of preloaded results. tests/dispatch_fakes.hpp has
// leaner fakes for the fleet's and tilemm::Context's tests.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "dispatcher.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tuning_coordinator.hpp"

namespace tilemm::dispatch::rig {

using cache::StoredEntry;

using cache::StoredEntry;

inline DeviceInfo device() {
  DeviceInfo d = testing::synthetic_h200();
  d.nvrtc_version = 13000;
  d.driver_version = 13000;
  d.l2_bytes = 50 << 20;
  return d;
}

inline StoredEntry stored(const Problem& p, const std::string& winner, const std::string& source = "tuned") {
  StoredEntry e;
  e.precision = p.precision;
  e.device_key = device().model_key();
  e.M = p.M;
  e.N = p.N;
  e.K = p.K;
  e.problem_class = class_of(p);
  e.winner = winner;
  e.median_ms = 1.0;
  e.tuned_at = "2026-11-29T00:00:00Z";
  e.tilemm_version = "test";
  e.versions = running_versions(device(), p);
  e.arch = device().arch();
  e.source = source;
  CandidateResult c;
  c.variant = winner;
  c.stats.median_ms = 1.0;
  e.candidates = {c};
  return e;
}

// The SQLite cache, in a map. `fail` makes every call throw; `other_process` runs on each lease
// attempt that finds the lease held by someone else.
class FakeStore : public ResultStore {
 public:
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string, Precision,
                      cache::CandidateSet>,
           StoredEntry>
      entries;
  std::map<std::string, std::vector<char>> cubins;  // by variant
  std::map<std::string, int> cubin_reads;           // find_cubin calls, by variant
  bool shared = false;
  bool fail = false;
  int puts = 0;
  int listings_with_candidates = 0, listings_without = 0;  // list() calls
  std::map<std::int64_t, int> candidate_reads;  // by M: finds that read an entry's candidates
  struct Lease {
    std::string owner;
    double expires_in = 0;  // seconds after it was taken: < 0 is expired
  };
  std::map<std::string, Lease> leases;
  std::function<void(FakeStore&)> other_process;
  std::function<void(FakeStore&)> before_lease;  // runs as a lease is asked for
  std::vector<std::string> lease_log;  // "take <owner>", "release <owner>"
  std::function<void(const FakeStore&)> before_destruction;  // what a test checks after its dispatcher

  ~FakeStore() override {
    if (before_destruction) before_destruction(*this);
  }

  void add(const StoredEntry& e) {
    entries[{e.M, e.N, e.K, e.problem_class, e.precision, e.candidate_set}] = e;
  }
  // The entry of p's key chosen from `set`.
  const StoredEntry* at(const Problem& p, cache::CandidateSet set) const {
    const auto it = entries.find({p.M, p.N, p.K, class_of(p), p.precision, set});
    return it == entries.end() ? nullptr : &it->second;
  }
  // The first entry of p's key a lookup for p asks for (sets_serving).
  const StoredEntry* at(const Problem& p) const {
    for (const cache::CandidateSet set : sets_serving(p))
      if (const StoredEntry* e = at(p, set)) return e;
    return nullptr;
  }

  std::optional<StoredEntry> find(const std::string& device_key, const Problem& p,
                                  const std::string& problem_class, cache::CandidateSet set,
                                  bool with_candidates) override {
    check();
    const auto it = entries.find({p.M, p.N, p.K, problem_class, p.precision, set});
    if (it == entries.end() || it->second.device_key != device_key) return std::nullopt;
    if (with_candidates) ++candidate_reads[p.M];
    StoredEntry e = it->second;
    if (!with_candidates) e.candidates.clear();
    return e;
  }
  std::vector<StoredEntry> list(const std::string& device_key, bool with_candidates) override {
    check();
    ++(with_candidates ? listings_with_candidates : listings_without);
    std::vector<StoredEntry> out;
    for (const auto& [key, e] : entries)
      if (e.device_key == device_key) {
        out.push_back(e);
        if (!with_candidates) out.back().candidates.clear();
      }
    return out;
  }
  void put_all(const std::vector<StoredEntry>& all) override {
    check();
    ++puts;
    for (const auto& e : all) add(e);
  }
  bool loads_stored_code() override {
    check();
    return !shared;
  }
  std::optional<std::vector<char>> find_cubin(const std::string&, int, const std::string&,
                                              const std::string& variant) override {
    check();
    ++cubin_reads[variant];
    const auto it = cubins.find(variant);
    if (it == cubins.end()) return std::nullopt;
    return it->second;
  }
  bool has_cubin(const std::string&, int, const std::string&, const std::string& variant) override {
    check();
    return cubins.count(variant) > 0;
  }
  void put_cubin(const detail::CompiledVariant& compiled, const std::string&, int) override {
    check();
    cubins[compiled.name] = compiled.cubin;
  }
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl) override {
    check();
    if (before_lease) before_lease(*this);
    auto it = leases.find(key);
    if (it == leases.end() || it->second.owner == owner || it->second.expires_in < 0) {
      leases[key] = {owner, ttl};
      lease_log.push_back("take " + owner);
      return true;
    }
    if (other_process) other_process(*this);
    return false;
  }
  void release_lease(const std::string& key, const std::string& owner) override {
    check();
    if (leases.count(key) && leases[key].owner == owner) leases.erase(key);
    lease_log.push_back("release " + owner);
  }
  // The background worker's connection (GuardedStore::WorkerScope); unset: it shares this one.
  std::function<std::unique_ptr<ResultStore>()> another;
  std::unique_ptr<ResultStore> another_connection() override {
    return another ? another() : nullptr;
  }

 private:
  void check() const {
    if (fail) throw Error(ErrorKind::cache, "tilemm: the fake cache is broken");
  }
};

// Kernels "loaded" into this process; an image whose first byte is 'X' is rejected.
class FakeLoader : public KernelLoader {
 public:
  std::map<std::string, std::unique_ptr<detail::LoadedKernel>> loaded;
  std::vector<std::string> compiled;
  std::vector<std::string> started;  // start_compile calls: compilations handed to the compilers
  std::vector<std::string> loads;    // "<variant> from <first byte of the image>"

  const detail::LoadedKernel* find_loaded(const DeviceInfo&, const Variant& v) override {
    const auto it = loaded.find(variant_name(v));
    return it == loaded.end() ? nullptr : it->second.get();
  }
  const detail::LoadedKernel& load(const DeviceInfo&, const Variant& v,
                                   const std::vector<char>& cubin) override {
    const std::string name = variant_name(v);
    loads.push_back(name + " from " + std::string(1, cubin.empty() ? '?' : cubin[0]));
    if (cubin.empty() || cubin[0] == 'X') throw Error(ErrorKind::cuda, "tilemm: image rejected");
    auto& slot = loaded[name];
    if (!slot) {
      slot = std::make_unique<detail::LoadedKernel>();
      slot->variant = v;
    }
    return *slot;
  }
  detail::BackgroundCompile start_compile(const Variant& v, const std::string&) override {
    started.push_back(variant_name(v));
    return detail::already_compiled();
  }
  detail::CompiledVariant compile(const Variant& v, const std::string& arch) override {
    compiled.push_back(variant_name(v));
    detail::CompiledVariant c;
    c.name = variant_name(v);
    c.arch = arch;
    c.template_hash = "h";
    c.cubin = {'C'};
    return c;
  }
};

// Tuning scripted by M: the winner of each shape (default tiled_t16_p0); a plan winner names its
// parts' winners in `part_winners`.
class FakeTuner : public ShapeTuner {
 public:
  std::map<std::int64_t, std::string> winners;
  std::map<std::int64_t, std::string> part_winners;
  std::vector<std::int64_t> tuned;  // M of each tuning
  std::vector<bool> vendor;         // and its Problem::vendor
  std::vector<std::map<std::int64_t, std::string>> known;  // the known parts of each
  // The FP32 results' winners each was given (TuneRequest::highest_winner, highest_part_winners).
  std::vector<std::string> highest;
  std::vector<std::map<std::int64_t, std::string>> highest_parts;
  // Candidates each tuning hands to the request's start_compile, then gets a CUBIN for through
  // its compiler, as a budgeted search does, and what it got: "<variant> <first byte of the image>".
  std::vector<std::string> candidates;
  std::vector<std::string> binaries;
  // The budget and the measured shapes each tuning was given.
  std::vector<std::pair<double, std::vector<tuner::MeasuredShape>>> searches;
  std::function<void(const TuneRequest&)> during;  // runs in each tuning; may block or throw
  // What each tuning's outcome says the budget left unscreened and still compiling
  // (tuner::TuneOutcome).
  std::size_t unscreened = 0, still_compiling = 0;

  tuner::ShapeTuning tune(const DeviceInfo&, const Problem& problem,
                          const TuneRequest& request) override {
    tuned.push_back(problem.M);
    vendor.push_back(problem.vendor);
    if (during) during(request);
    for (const auto& name : candidates)
      if (request.start_compile) request.start_compile(parse_variant(name), "sm_90");
    for (const auto& name : candidates) {
      const auto binary = request.compile(parse_variant(name), "sm_90");
      binaries.push_back(name + " " + std::string(1, binary.cubin.empty() ? '?' : binary.cubin[0]));
    }
    known.push_back(request.known_part_winners);
    highest.push_back(request.highest_winner);
    highest_parts.push_back(request.highest_part_winners);
    searches.push_back({request.budget_ms, request.history});
    tuner::ShapeTuning t;
    t.outcome = outcome(winners.count(problem.M) ? winners.at(problem.M) : "tiled_t16_p0");
    t.outcome.unscreened = unscreened;
    t.outcome.still_compiling = still_compiling;
    if (const auto rows = detail::parse_row_split(t.outcome.winner))
      for (const std::int64_t part : {*rows, problem.M - *rows})
        if (!request.known_part_winners.count(part))
          t.parts.push_back({detail::rows_of(problem, part), outcome(part_winners.at(part))});
    return t;
  }

 private:
  static tuner::TuneOutcome outcome(const std::string& winner) {
    tuner::TuneOutcome o;
    o.winner = winner;
    o.median_ms = 2.0;
    CandidateResult c;
    c.variant = winner;
    c.stats.median_ms = 2.0;
    o.candidates = {c};
    o.winner_binary.name = winner;
    o.winner_binary.cubin = {'T'};
    o.seconds = 0.5;
    return o;
  }
};

inline const std::vector<StoredEntry> kNoPreloaded;

struct Rig {
  FakeStore* store;
  FakeLoader* loader;
  FakeTuner* tuner;
  std::vector<StoredEntry> preloaded;
  std::vector<StoredEntry> preloaded_headers;  // the same without candidates
  int preloaded_reads = 0;  // how often the dispatcher asked for a preloaded entry with candidates
  int header_reads = 0;     // and for them without candidates
  int timed_reads = 0;      // and for them with their timed candidates only (the same here)
  // The shapes (M) whose provider candidate the dispatcher ran once before a caller, and on which
  // thread (Collaborators::warm_up).
  std::vector<std::pair<std::int64_t, std::thread::id>> warm_ups;
  std::unique_ptr<Dispatcher> dispatcher;

  explicit Rig(std::vector<StoredEntry> shipped = {}, LeaseTimes lease = {}) : preloaded(std::move(shipped)) {
    for (StoredEntry e : preloaded) {
      e.candidates.clear();
      preloaded_headers.push_back(std::move(e));
    }
    Collaborators parts;
    auto s = std::make_unique<FakeStore>();
    auto l = std::make_unique<FakeLoader>();
    auto t = std::make_unique<FakeTuner>();
    store = s.get();
    loader = l.get();
    tuner = t.get();
    parts.store = std::move(s);
    parts.loader = std::move(l);
    parts.tuner = std::move(t);
    parts.preloaded_with_candidates = [this](const StoredEntry& header) {
      ++preloaded_reads;
      std::optional<StoredEntry> found;
      for (const auto& e : preloaded)
        if (e.device_key == header.device_key && e.M == header.M && e.N == header.N &&
            e.K == header.K && e.problem_class == header.problem_class &&
            e.precision == header.precision && e.candidate_set == header.candidate_set)
          found = e;
      return found;
    };
    parts.preloaded_headers = [this]() -> const std::vector<StoredEntry>& {
      ++header_reads;
      return preloaded_headers;
    };
    parts.preloaded_timed = [this]() -> const std::vector<StoredEntry>& {
      ++timed_reads;
      return preloaded;
    };
    parts.warm_up = [this](const DeviceInfo&, const Problem& p, const detail::PreparedCandidate&) {
      warm_ups.emplace_back(p.M, std::this_thread::get_id());
    };
    parts.lease_owner = "host:1";
    parts.lease = lease;
    dispatcher = std::make_unique<Dispatcher>(std::move(parts));
  }

  // gemm()'s path: the memo, else resolve.
  Decision gemm(const Problem& p, TunePolicy policy = TunePolicy::tune_on_miss) {
    Options options;
    options.policy = policy;
    const ShapeKey key = key_of(device().ordinal, p);
    auto d = dispatcher->find(key);
    if (!d || resolves_again(*d, policy)) d = dispatcher->resolve(device(), p, key, options);
    return *d;
  }
  AutotuneResult autotune(const Problem& p, TunePolicy policy = TunePolicy::tune_on_miss,
                          bool force = false) {
    Options options;
    options.policy = policy;
    options.force = force;
    return dispatcher->autotune(device(), p, options);
  }
};

inline std::string kernel_of(const Decision& d) {
  return d.kernel == nullptr ? "(none)" : variant_name(d.kernel->variant);
}

inline const Problem kShape = Problem::dense(512, 512, 512, 4);

}  // namespace tilemm::dispatch::rig
