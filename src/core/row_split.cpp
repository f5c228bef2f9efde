#include "row_split.hpp"

#include <string_view>

#include "candidate_provider.hpp"
#include "text_fields.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {
constexpr char kPrefix[] = "rowsplit_h";
constexpr std::size_t kPrefixLength = sizeof kPrefix - 1;
// Below this many rows the problem is at most a few rows of tiles, where split-K serves the SMs.
constexpr std::int64_t kMinRows = 1024;
// The 256- and 128-row tiles are the ones that win where M >= kMinRows (cache/preloaded/).
constexpr std::int64_t kTileHeights[] = {256, 128};
}  // namespace

std::string row_split_name(std::int64_t core_rows) { return kPrefix + std::to_string(core_rows); }

std::optional<std::int64_t> parse_row_split(const std::string& name) {
  if (name.compare(0, kPrefixLength, kPrefix) != 0) return std::nullopt;
  const auto rows = parse_canonical_decimal(std::string_view(name).substr(kPrefixLength), 18);
  if (!rows || *rows == 0) return std::nullopt;  // a plan splits off at least one row
  return rows;
}

bool row_split_fits(std::int64_t core_rows, const Problem& problem) {
  return core_rows > 0 && core_rows < problem.M;
}

std::vector<std::int64_t> row_split_heights(const Problem& problem) {
  std::vector<std::int64_t> heights;
  // Rows that are whole 128-row tiles are not split: 128-row tiles then leave no partial row of
  // tiles, and so no plan's core (a multiple of 128) is ever a plan itself.
  if (problem.M < kMinRows || problem.M % 128 == 0) return heights;
  for (const std::int64_t tile : kTileHeights) {
    const std::int64_t core = problem.M / tile * tile;
    if (!row_split_fits(core, problem)) continue;
    bool known = false;
    for (const std::int64_t h : heights) known = known || h == core;
    if (!known) heights.push_back(core);
  }
  return heights;
}

bool is_tuned_row_split(std::int64_t core_rows, const Problem& problem) {
  for (const std::int64_t h : row_split_heights(problem))
    if (h == core_rows) return true;
  return false;
}

std::string why_not_a_known_name(const std::string& name, const StoredName& where) {
  if (const auto rows = parse_row_split(name)) {
    Problem rows_only;  // the heights depend on M alone
    rows_only.M = where.M;
    if (!is_tuned_row_split(*rows, rows_only))
      return "splits the rows at " + std::to_string(*rows) + ", which is not a plan that tuning makes "
             "for m = " + std::to_string(where.M) + " (m rounded down to a multiple of 256 or 128, "
             "where m is at least " + std::to_string(kMinRows) + " and not a multiple of 128)";
    return "";
  }
  std::optional<Precision> computes;
  if (CandidateProvider* provider = provider_of(name)) {
    if (std::string why = provider->why_not_a_name(name); !why.empty())
      return "is not a " + provider->prefix() + " candidate's name: " + why;
    if (where.own_only && provider->vendor())
      return "is a vendor candidate, in an entry tuned with own kernels only";
    computes = provider->precision_of(name);
  } else {
    try {
      computes = precision_of(parse_variant(name));
    } catch (const InvalidArgument& e) {
      return std::string("is not a variant this build knows: ") + e.what();
    }
  }
  if (where.timed && computes && !serves(*computes, where.precision))
    return std::string("computes at precision ") + to_string(*computes) +
           ", less accurate than the entry's " + to_string(where.precision);
  return "";
}

GemmArgs rows_of(const GemmArgs& args, std::int64_t first, std::int64_t count) {
  GemmArgs part = args;
  part.M = count;
  if (args.A != nullptr) part.A = args.A + first * args.lda;
  part.C = args.C + first * args.ldc;
  return part;
}

Problem rows_of(const Problem& problem, std::int64_t count) {
  Problem part = problem;
  part.M = count;
  return part;
}

void run_row_split(const GemmArgs& args, std::int64_t core_rows,
                   const std::function<void(int part, const GemmArgs& rows)>& run_part) {
  run_part(0, rows_of(args, 0, core_rows));
  run_part(1, rows_of(args, core_rows, args.M - core_rows));
}

std::array<Problem, 2> row_split_parts(const Problem& problem, std::int64_t core_rows) {
  return {rows_of(problem, core_rows), rows_of(problem, problem.M - core_rows)};
}

}  // namespace tilemm::detail
