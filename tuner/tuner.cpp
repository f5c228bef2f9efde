#include "tuner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

#include "budgeted_search.hpp"
#include "log.hpp"
#include "provider_candidates.hpp"
#include "pruning_rules.hpp"
#include "rotated_finalists.hpp"
#include "row_split.hpp"
#include "search_candidate.hpp"
#include "tilemm/error.hpp"

namespace tilemm::tuner {
namespace {

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

using Pending = SearchCandidate;

double steady_now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The exhaustive search compiles this many candidates per host thread at a time, then verifies
// and times them before it compiles the next chunk: a candidate is announced (on_candidate) and
// progress is reported within seconds of the start, not after the whole space has compiled (a
// few hundred candidates, tens of seconds on a fresh cache), which tilemm-tune's watchdog would
// take for a hang; a few per thread keep the threads busy past the chunk's slowest compile.
constexpr int kCompiledPerThreadAtATime = 4;

// The exhaustive search: every candidate compiled (a chunk at a time, on `threads` host threads),
// verified and timed in full with the bench's plan, in space order.
void time_every_candidate(std::vector<Pending>& pending, CandidateBench& bench,
                          const TuneSettings& settings, const std::string& arch, int threads) {
  double best = std::numeric_limits<double>::infinity();
  int done = 0;
  const int total = static_cast<int>(pending.size());
  if (settings.progress) settings.progress(0, total);
  const auto chunk = static_cast<std::size_t>(kCompiledPerThreadAtATime * std::max(threads, 1));
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (i % chunk == 0) {
      std::vector<SearchCandidate*> next;
      for (std::size_t j = i; j < std::min(i + chunk, pending.size()); ++j)
        next.push_back(&pending[j]);
      compile_candidates(next, arch, settings.compile, threads);
    }
    Pending& p = pending[i];
    struct Report {  // reports this candidate as done however the body below leaves
      const TuneSettings& s;
      int& done;
      int total;
      ~Report() {
        if (s.progress) s.progress(++done, total);
      }
    } report{settings, done, total};
    if (p.result.status != CandidateStatus::ok) continue;
    measure_candidate(
        p.result, settings, best, [&] { return bench.verify(p.variant, *p.binary); },
        [&](double give_up_ms) { return bench.time(p.variant, give_up_ms); });
  }
}

}  // namespace

void compile_candidates(const std::vector<SearchCandidate*>& candidates, const std::string& arch,
                        const Compiler& compile, int threads) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < candidates.size(); i = next++) {
      SearchCandidate& p = *candidates[i];
      if (p.result.status != CandidateStatus::ok || p.binary) continue;  // pruned, or compiled
      try {
        p.binary = compile(p.variant, arch);
        p.result.compile_ms = p.binary->compile_ms;
      } catch (const CompileError& e) {
        p.result.status = CandidateStatus::compile_error;
        p.result.reason = first_line(e.log().empty() ? e.what() : e.log());
      } catch (const std::exception& e) {
        p.result.status = CandidateStatus::compile_error;
        p.result.reason = first_line(e.what());
      }
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(candidates.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

void measure_candidate(CandidateResult& result, const TuneSettings& settings, double& best_ms,
                       const std::function<CheckResult()>& verify,
                       const std::function<TimingResult(double give_up_ms)>& time) {
  if (settings.on_candidate) settings.on_candidate(result.variant);
  try {
    const CheckResult check = verify();
    if (check.status != CandidateStatus::ok) {
      result.status = check.status;
      result.reason = check.reason;
      if (check.status == CandidateStatus::launch_error && settings.on_launch_failure)
        settings.on_launch_failure(result.variant, check.reason);
      return;
    }
    const TimingResult timing = time(give_up_ms(settings, best_ms));
    result.stats = timing.stats;
    if (timing.pruned) {
      result.status = CandidateStatus::pruned;
      result.reason = give_up_reason(settings);
      return;
    }
    best_ms = std::min(best_ms, timing.stats.median_ms);
  } catch (const std::exception& e) {
    record_launch_error(result, settings, e.what());
  }
}

bool record_skip(CandidateResult& result, const TuneSettings& settings) {
  const auto skipped = settings.skip.find(result.variant);
  if (skipped == settings.skip.end()) return false;
  result.status = CandidateStatus::launch_error;
  result.reason = skipped->second;
  return true;
}

void record_launch_error(CandidateResult& result, const TuneSettings& settings,
                         const std::string& what) {
  result.status = CandidateStatus::launch_error;
  result.reason = first_line(what);
  if (settings.on_launch_failure) settings.on_launch_failure(result.variant, result.reason);
}

double rank_candidates(std::vector<CandidateResult>& candidates) {
  std::sort(candidates.begin(), candidates.end(),
            [](const CandidateResult& a, const CandidateResult& b) {
              const bool a_ok = a.status == CandidateStatus::ok;
              const bool b_ok = b.status == CandidateStatus::ok;
              if (a_ok != b_ok) return a_ok;
              if (a_ok && a.stats.median_ms != b.stats.median_ms)
                return a.stats.median_ms < b.stats.median_ms;
              return a.variant < b.variant;  // deterministic among ties and failures
            });
  if (candidates.empty() || candidates[0].status != CandidateStatus::ok) {
    std::string why;
    for (const auto& c : candidates) {
      if (why.size() > 600) break;
      why += "\n  " + c.variant + ": " + to_string(c.status) + " " + c.reason;
    }
    throw Error(ErrorKind::internal, "tilemm: tuning found no correct candidate" + why);
  }
  if (candidates.size() < 2 || candidates[1].status != CandidateStatus::ok) return 0.0;
  return candidates[1].stats.median_ms / candidates[0].stats.median_ms - 1.0;
}

TuneOutcome tune(const DeviceInfo& device, const Problem& problem, CandidateBench& bench,
                 const TuneSettings& given) {
  const auto start = std::chrono::steady_clock::now();
  TuneSettings settings = given;
  if (!settings.now_ms) settings.now_ms = steady_now_ms;
  const bool budgeted = settings.budget_ms > 0;
  const double deadline_ms = settings.now_ms() + settings.budget_ms;
  std::vector<Pending> pending;
  std::vector<CandidateResult> rejected;
  const auto admit = [&](const std::vector<Variant>& space) {
    for (const auto& v : space) {
      CandidateResult r;
      r.variant = variant_name(v);
      if (record_skip(r, settings)) {
        rejected.push_back(std::move(r));
      } else if (const Verdict verdict = can_run(v, device, problem); !verdict) {
        r.status = CandidateStatus::cannot_run;
        r.reason = verdict.reason;
        rejected.push_back(std::move(r));
      } else {
        pending.push_back({v, std::move(r), std::nullopt});
      }
    }
  };
  // A precision below highest is served by its own tensor-core kernels and by the FP32 FFMA
  // kernels, which are more accurate, never less; the faster wins, so asking for less precision
  // should not make a call slower (within what the budget finds): where the tensor-core kernels
  // are slow (alignment 1) or cannot run (before sm_80), or miss their bound (3xTF32 at a very
  // small K), an FP32 kernel serves it (docs/tuning.md, precision modes).
  if (!settings.space.empty()) {
    admit(settings.space);
  } else {
    admit(variant_space(problem.precision));
    if (problem.precision != Precision::highest) admit(variant_space(Precision::highest));
  }
  // The FP32 result's winner is a candidate whatever the space (a plan's name is
  // tune_with_plans' to try); it is exempt from the cheap pruning rules below and from the
  // budget's selection (TuneSettings::highest_winner).
  const std::string& highest = settings.highest_winner;
  const bool highest_is_variant =
      !highest.empty() && !detail::parse_row_split(highest) && !detail::provider_of(highest);
  const auto admitted = [&] {
    for (const auto& p : pending)
      if (p.result.variant == highest) return true;
    for (const auto& r : rejected)
      if (r.variant == highest) return true;
    return false;
  };
  if (highest_is_variant && !admitted()) admit({parse_variant(highest)});
  const std::string exempt = highest_is_variant ? highest : std::string();

  const int threads = settings.compile_threads > 0
                          ? settings.compile_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Under a budget the providers' candidates spend the same deadline as the variants (their own
  // screening, then a full timing of the fastest few), timed while the first chunk of variants
  // compiles, so that a first call costs what the budget says whichever candidates a problem
  // draws on. The exhaustive search times them after every variant, against the best of those
  // (the give-up rule's reference).
  const double admitted_ms = settings.now_ms();
  std::vector<CandidateResult> provider_results;
  double selected_ms = admitted_ms, providers_ms = 0.0;
  ScreeningCompileStats compile_stats;  // under a budget
  if (!budgeted) {
    time_every_candidate(pending, bench, settings, device.arch(), threads);
    double variants_best_ms = std::numeric_limits<double>::infinity();
    for (const auto& p : pending)
      if (p.result.status == CandidateStatus::ok)
        variants_best_ms = std::min(variants_best_ms, p.result.stats.median_ms);
    provider_results = measure_provider_candidates(device, problem, bench, settings, variants_best_ms);
  } else {
    // The pruning rules shape only a budgeted search: the exhaustive one times every candidate
    // that can run, so that what it finds is the truth the rules are checked against.
    apply_cheap_pruning(pending, device, problem, exempt);
    select_within_budget(pending, device, problem, settings);
    selected_ms = settings.now_ms();
    // The providers' candidates use the GPU and the compilers the CPUs, less the one that keeps
    // the GPU's launches coming.
    const int compilers = bench.runs_prepared() ? std::max(1, threads - 1) : threads;
    // Compiled as the screening reaches them, so that the budget bounds compilation.
    ScreeningCompiles compiles;
    compiles.at_a_time = compilers;
    compiles.compile_chunk = [&](const std::vector<SearchCandidate*>& chunk) {
      compile_candidates(chunk, device.arch(), settings.compile, compilers);
    };
    if (settings.start_compile) {
      compiles.start = [&](const SearchCandidate& c) {
        return settings.start_compile(c.variant, device.arch());
      };
      compiles.finish = [&](SearchCandidate& c) {
        compile_candidates({&c}, device.arch(), settings.compile, 1);
      };
    }
    compile_stats = time_by_successive_halving(
        pending, bench, settings, deadline_ms, compiles, [&] {
          const double before = settings.now_ms();
          provider_results = measure_provider_candidates(
              device, problem, bench, settings, std::numeric_limits<double>::infinity());
          providers_ms = settings.now_ms() - before;
        });
  }

  // A problem timed on the same buffers: its finalists, own kernels' and providers' alike, are
  // timed on rotated inputs too, and how far each is behind the best of either mode ranks them
  // (rotated_finalists.hpp).
  if (bench.input_mode() == InputMode::same_buffers) {
    const double no_give_up = std::numeric_limits<double>::infinity();
    std::vector<Finalist> contenders;
    for (auto& p : pending) {
      if (p.result.status != CandidateStatus::ok) continue;
      const auto time = [&bench, &p, no_give_up](const TimingPlan& plan, InputMode mode) {
        return bench.time_in_mode(p.variant, plan, no_give_up, mode);
      };
      contenders.push_back({&p.result, "", time});
    }
    for (auto& r : provider_results) {
      detail::CandidateProvider* provider = provider_in_search(problem, settings, r.variant);
      if (provider == nullptr) continue;
      const bool reference = provider->reference() && r.stats.median_ms > 0 &&
                             (r.status == CandidateStatus::ok || r.status == CandidateStatus::pruned);
      if (r.status != CandidateStatus::ok && !reference) continue;
      const auto time = [&, provider](const TimingPlan& plan, InputMode mode) {
        return time_provider_candidate(device, bench, *provider, r.variant, plan, mode);
      };
      contenders.push_back({&r, provider->prefix(), time, -1.0, reference});
    }
    look_at_rotated_inputs(contenders, bench, settings, deadline_ms);
  }

  TuneOutcome out;
  for (auto& p : pending) out.candidates.push_back(p.result);
  for (auto& r : provider_results) out.candidates.push_back(std::move(r));
  for (auto& r : rejected) out.candidates.push_back(std::move(r));
  out.margin = rank_candidates(out.candidates);
  out.winner = out.candidates.front().variant;
  out.median_ms = out.candidates.front().stats.median_ms;
  for (auto& p : pending)
    if (p.result.variant == out.winner) out.winner_binary = std::move(*p.binary);
  out.unscreened = compile_stats.unscreened;
  out.still_compiling = compile_stats.still_compiling;
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (budgeted && detail::log_enabled(detail::LogLevel::debug)) {
    // Where a tuning's time went, for a user who asks why a first call took as long as it did.
    char line[400];
    std::snprintf(line, sizeof line,
                  "tuning phases of %lldx%lldx%lld (budget %.0f ms): listing %.0f ms, selection "
                  "%.0f ms, waiting for compilations %.0f ms (%zu variants handed over), "
                  "providers %.0f ms (%zu candidates, while the first compiled), screening and "
                  "rounds %.0f ms, total %.0f ms",
                  static_cast<long long>(problem.M), static_cast<long long>(problem.N),
                  static_cast<long long>(problem.K), settings.budget_ms,
                  admitted_ms - (deadline_ms - settings.budget_ms), selected_ms - admitted_ms,
                  compile_stats.waited_ms, compile_stats.handed, providers_ms,
                  provider_results.size(), settings.now_ms() - selected_ms - compile_stats.waited_ms -
                      (settings.start_compile ? providers_ms : 0.0),
                  1000.0 * out.seconds);
    detail::log(detail::LogLevel::debug, line);
  }
  return out;
}

}  // namespace tilemm::tuner
