// The preloaded files cut to what the tuning history reads of them
// (src/dispatch/tuning_history.hpp): each entry's candidates that were timed. The history reads
// every shipped entry of a class on a process's first budgeted tuning; the full files hold every
// candidate's record, timed or not, and reading them costs that tuning several times as much.
// The build cuts each shipped file (cmake/preloaded_copy.cpp) and embeds the result beside the
// full files and the headers.
#pragma once

#include <string>
#include <string_view>

namespace tilemm::cache {

// `document` (a tuning JSON document) with each entry's candidates cut to those timed at least
// once ("samples" above 0) and its winner's; every other value unchanged, written without
// whitespace. Throws nlohmann::json::exception where `document` is not JSON, and
// std::runtime_error where its entries are not where a tuning document has them.
std::string with_timed_candidates_only(std::string_view document);

}  // namespace tilemm::cache
