// What the tuner needs from a GPU, behind an interface: run a compiled candidate once and check
// its result, and time it. The selection logic is tested on the CPU with a fake bench.
#pragma once

#include <string>

#include "nvrtc_compiler.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm::tuner {

struct CheckResult {
  CandidateStatus status = CandidateStatus::ok;  // ok, wrong_result or launch_error
  std::string reason;
};

struct TimingResult {
  TimingStats stats;
  bool pruned = false;  // the warm-up alone was slower than the give-up time
};

class CandidateBench {
 public:
  virtual ~CandidateBench() = default;
  // Loads `compiled`, runs it on fresh random data and checks every element against the
  // reference.
  virtual CheckResult verify(const Variant& v, const detail::CompiledVariant& compiled) = 0;
  // Times a verified candidate: warm-up, then repetitions until the median is stable. Gives up
  // early (pruned) when the warm-up median exceeds `give_up_ms`.
  virtual TimingResult time(const Variant& v, double give_up_ms) = 0;
};

}  // namespace tilemm::tuner
