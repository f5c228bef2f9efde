// Compiles one variant's template to CUBIN for one exact architecture with NVRTC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilemm/variant.hpp"

namespace tilemm::detail {

struct CompiledVariant {
  std::string name;           // variant_name(v), also the kernel symbol in the CUBIN
  std::string arch;           // "sm_90"
  std::string template_hash;  // sha256 of the family's template
  std::vector<char> cubin;
  std::string log;            // NVRTC's program log (ptxas -v lines: registers, spills)
  double compile_ms = 0.0;
  // From ptxas' report in the log; -1 where the report lacks the figure. Registers and stack
  // frame are those of the kernel called `name`; the spills are the most of any kernel of the
  // module (split-K's reduce and padded's copy kernels are in the same CUBIN).
  int registers = -1;
  int stack_frame_bytes = -1;
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
};

struct EmbeddedTemplate;

// Compiles one embedded source with `defines` (-D options) for `arch`; `name` names it in errors
// and logs. The building block of compile_variant, also used for tilemm's support kernels.
CompiledVariant compile_template(const EmbeddedTemplate& tmpl, const std::string& name,
                                 const std::string& arch, std::vector<std::string> defines);

// Compiles `v` for a device of `arch` ("sm_90"): for nvrtc_architecture(v, arch), "sm_90a" for
// an arch_specific family, with the result's arch still `arch`. Thread-safe (NVRTC is). Throws
// CompileError naming the variant and carrying the NVRTC log when compilation fails.
CompiledVariant compile_variant(const Variant& v, const std::string& arch);

// Compiles an empty kernel for `arch` with the options every variant gets. NVRTC loads parts of
// itself on its first compilation (its builtins library, with static objects whose teardown is
// registered with atexit then); a thread that must stop before that teardown at exit warms NVRTC
// up first and registers its exit handler after. Cost: one small compilation. Throws as
// compile_template.
void warm_up_nvrtc(const std::string& arch);

// For the exit path: from now on compile_template throws CompileError ("the process is exiting")
// without calling NVRTC, and this returns once the compilations already running have returned.
// Irreversible. Waits at most as long as one compilation.
void stop_nvrtc_compilations();

// How many NVRTC compilations this process has run: lets tests and benchmarks prove that a
// warm path compiles nothing.
std::uint64_t nvrtc_compile_count();

}  // namespace tilemm::detail
