// Row-split plans: a tuning result may say "run rows [0, h) as one GEMM and rows [h, M) as
// another", each part dispatched to its own tuned winner. Where M is not a multiple of the best
// tile height, the last row of tiles starts a nearly empty wave over the SMs; a core of whole
// waves plus a thin rest is then faster (the measurements: docs/kernels.md).
//
// A plan is named like a variant, `rowsplit_h<h>`, and competes in the tuning table as one
// candidate: that name is the winner stored in the cache and in JSON, and a build that does not
// know plans treats such an entry as a variant it does not know (a miss).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tilemm/gemm.hpp"
#include "tilemm/precision.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

std::string row_split_name(std::int64_t core_rows);
// The core height of a plan name; nullopt for any other name (a variant's, or a malformed
// plan's: "rowsplit_h0", "rowsplit_h012", "rowsplit_h12x").
std::optional<std::int64_t> parse_row_split(const std::string& name);
// Whether `core_rows` splits `problem` into two non-empty parts.
bool row_split_fits(std::int64_t core_rows, const Problem& problem);

// The core heights worth trying for `problem`: M rounded down to the tile heights of the large
// tiles (256 and 128 rows), for problems tall enough that a row of tiles is a fraction of a wave
// and whose M is not a multiple of 128. Empty otherwise: smaller problems are split along K
// instead. So a core (a multiple of 128) and a rest (under 256 rows) are never split again.
std::vector<std::int64_t> row_split_heights(const Problem& problem);

// Whether a plan of core height `core_rows` is one that tuning makes for `problem`: one of
// row_split_heights(problem). Then neither part is ever a plan itself. A stored plan of any other
// height is refused: one read from a file or a fleet's store could otherwise split M rows at
// M - 1, its core's entry at M - 2, and so on, a chain of nested calls as deep as M.
bool is_tuned_row_split(std::int64_t core_rows, const Problem& problem);

// Where a stored tuning entry names a kernel: the entry's rows, precision and candidate set, and
// whether the name is its winner or a candidate timed in full. The defaults other than M ask
// only whether the build knows the name.
struct StoredName {
  std::int64_t M = 1;
  Precision precision = Precision::medium;  // every kernel serves medium
  bool own_only = false;                    // the entry's set: own kernels only
  bool timed = false;                       // the winner, or a candidate of status ok
};

// Why `name`, standing in a tuning entry as `where` says, is not a name this build can serve
// there, empty when it is: a variant it knows, or a plan that tuning makes for M rows
// (is_tuned_row_split); then, for the winner and a candidate timed in full, not less accurate
// than the entry's precision (tilemm/precision.hpp, serves), where the name says its precision
// (a plan's parts are entries of their own; a provider may not say); and no vendor candidate in
// an entry tuned with own kernels only. The check the cache's readers are given
// (cache/json_entry.hpp, NameCheck).
std::string why_not_a_known_name(const std::string& name, const StoredName& where);

// Rows [first, first + count) of `args` (or `problem`) as a GEMM of their own: A and C advance by
// whole rows, B is shared, and the leading dimensions, hence the alignment class, are kept.
GemmArgs rows_of(const GemmArgs& args, std::int64_t first, std::int64_t count);
Problem rows_of(const Problem& problem, std::int64_t count);

// The one plan runner: gemm(), the tuner's bench and the benchmarks all run a plan of core height
// `core_rows` through it. Calls run_part(0, rows [0, core_rows)), then run_part(1, rows
// [core_rows, M)) of `args`; what runs each part is the caller's (gemm()'s dispatch of the part's
// own winner, the bench's launch of the part's kernel).
void run_row_split(const GemmArgs& args, std::int64_t core_rows,
                   const std::function<void(int part, const GemmArgs& rows)>& run_part);
// The problems of a plan's two parts, in the order run_row_split runs them: what is tuned and
// resolved for the plan.
std::array<Problem, 2> row_split_parts(const Problem& problem, std::int64_t core_rows);

}  // namespace tilemm::detail
