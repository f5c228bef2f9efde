// Trial families for the benchmarks that compile their contenders (tilemm-sustained-bench): a
// library family's rules (parameters, checks, geometry, launches) compiled from a template file
// on disk instead of the embedded one, under the family's name plus "trial". A kernel under work
// is then timed in the library's own NVRTC build beside the shipped one, in one run:
//
//   tilemm-sustained-bench --trial multistage=my/multistage.cu
//       --contenders multistage_bm128_bn256_bk8_st4_v4,multistagetrial_bm128_bn256_bk8_st4_v4
//
// NVRTC's code for a template is not quite nvcc's, so a kernel timed in a program of its own
// (nvcc) may rank otherwise in the library (docs/kernels.md). A trial never reaches a cache: the
// benchmark compiles it (detail::kernel_for), and its template hash is a placeholder.
#pragma once

#include <deque>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "family_registry.hpp"
#include "kernel_sources.hpp"

namespace tilemm::bench {

// Registers the trial family that `spec` ("FAMILY=FILE") asks for and returns its name
// (FAMILY + "trial"). Throws std::invalid_argument, naming the option, when the spec is malformed,
// the family unknown or the file unreadable or empty, and when it was registered already.
inline std::string register_trial_family(const std::string& spec, const std::string& option = "--trial") {
  const auto equals = spec.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size())
    throw std::invalid_argument(option + ": '" + spec + "' is not FAMILY=FILE");
  const std::string family = spec.substr(0, equals), path = spec.substr(equals + 1);
  detail::Family trial;
  try {
    trial = detail::find_family(family);
  } catch (const std::exception&) {
    throw std::invalid_argument(option + ": no kernel family called '" + family + "'");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(option + ": cannot read '" + path + "'");
  std::string source{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (source.empty()) throw std::invalid_argument(option + ": '" + path + "' is empty");
  trial.name = family + "trial";
  for (const auto& f : detail::families())
    if (f.name == trial.name) throw std::invalid_argument(option + ": '" + family + "' is given twice");
  // Kept for the process, like the registry itself: the registered template refers to these bytes.
  static auto& kept = *new std::deque<std::string>;
  const std::string& file = kept.emplace_back("trial-" + family + ".cu");
  const std::string& bytes = kept.emplace_back(std::move(source));
  trial.template_file = file;
  detail::register_extra_family(trial, detail::EmbeddedTemplate{file, bytes, "trial, not hashed"});
  return trial.name;
}

}  // namespace tilemm::bench
